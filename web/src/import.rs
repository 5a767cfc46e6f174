//! A trace dropped on the page, imported as `sim-cli import --replay` does:
//! its text streamed line by line into the core's `Importer` (chunks as the
//! worker reads and gunzips the file; a line may span two chunks), the
//! scenario it builds, a replay of that scenario, and the import report.
//! The page then loads the scenario as an edited text, so the explorer's
//! controls act on the user's own workload. Plain Rust, tested natively;
//! `lib.rs` binds it for JS.

use serde_json::{Value, json};
use sim_core::{ImportOptions, Importer, Scenario, Simulation, import_report};

/// The longest line read, as `sim-cli import`'s `LINE_MAX`: sched lines are
/// ~200 bytes; a text without line breaks is no trace.
pub const LINE_MAX: usize = 64 << 10;

/// A trace import in progress: the importer and the unfinished last line
/// of the chunks pushed so far.
pub struct TraceImport {
    importer: Importer,
    name: String,
    partial: String,
    started: bool,
}

impl TraceImport {
    /// `name`: the file's name (messages, the scenario's source); `victim`:
    /// the thread the report explains (`--victim`), else the importer's choice.
    pub fn new(name: &str, victim: Option<String>) -> TraceImport {
        let victim = victim.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let opts = ImportOptions { source: name.to_string(), victim, ..ImportOptions::default() };
        TraceImport { importer: Importer::new(opts), name: name.to_string(), partial: String::new(), started: false }
    }

    /// The next piece of the trace's text; every line it completes goes to
    /// the importer. The error names the line, as the CLI's does.
    pub fn push(&mut self, chunk: &str) -> Result<(), String> {
        if !self.started && !chunk.is_empty() {
            self.started = true;
            if chunk.starts_with("PERFILE2") {
                return Err(format!(
                    "{} is a perf.data file, which the page cannot read: run `perf sched script -F comm,pid,tid,cpu,time,event,trace --ns --header -i {} > trace.txt` where perf is installed, then import trace.txt",
                    self.name, self.name
                ));
            }
        }
        let mut rest = chunk;
        while let Some(i) = rest.find('\n') {
            let (line, tail) = rest.split_at(i + 1);
            rest = tail;
            if self.partial.is_empty() {
                self.line(line)?;
            } else {
                self.partial.push_str(line);
                let whole = std::mem::take(&mut self.partial);
                self.line(&whole)?;
            }
        }
        self.partial.push_str(rest);
        if self.partial.len() > LINE_MAX {
            return Err(format!(
                "{}: the trace's line {} is larger than {LINE_MAX} bytes (reading stopped there): not scheduler trace text",
                self.name,
                self.importer.lines() + 1
            ));
        }
        Ok(())
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        if line.len() > LINE_MAX + 1 {
            return Err(format!(
                "{}: the trace's line {} is larger than {LINE_MAX} bytes (reading stopped there): not scheduler trace text",
                self.name,
                self.importer.lines() + 1
            ));
        }
        self.importer.push_line(line).map_err(|e| e.to_string())
    }

    /// Lines read so far.
    pub fn lines(&self) -> usize {
        self.importer.lines()
    }

    /// The last line, the scenario, its replay and the import report:
    /// `{toml, import, report, report_text}` (`import` and `report` as
    /// `sim-cli import --replay --json` prints them), or why not.
    pub fn finish(mut self) -> Result<Value, String> {
        if !self.partial.is_empty() {
            let last = std::mem::take(&mut self.partial);
            self.line(&last)?;
        }
        let import = self.importer.finish().map_err(|e| e.to_string())?;
        let scenario = Scenario::from_toml(&self.name, &import.toml)
            .map_err(|e| format!("the imported scenario does not load (a bug in the importer): {e}"))?;
        let mut sim = Simulation::new(&scenario);
        // Bounded by the scenario's events_max, as every run.
        sim.run_to_end();
        let report = import_report(&import, &sim.report());
        Ok(json!({ "toml": import.toml, "report_text": report.text(), "import": import, "report": report }))
    }
}

/// A whole trace text at once (the determinism test; the page streams).
pub fn import_trace(text: &str, name: &str, victim: Option<String>) -> Result<Value, String> {
    let mut t = TraceImport::new(name, victim);
    t.push(text)?;
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = "\
            bash-11190   [000] d..2. 70079.181659: sched_switch: prev_comm=bash prev_pid=11190 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.s3. 70079.182751: sched_waking: comm=bash pid=11190 prio=120 target_cpu=000
          <idle>-0       [000] d..2. 70079.182767: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=11190 next_prio=120
            bash-11190   [000] d..2. 70079.183767: sched_switch: prev_comm=bash prev_pid=11190 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

    #[test]
    fn chunks_split_anywhere_give_the_whole_texts_import() {
        let whole = import_trace(LINES, "t.txt", None).unwrap();
        assert!(whole["toml"].as_str().unwrap().contains("[[tasks]]"), "{whole}");
        assert_eq!(whole["import"]["lines"], 4);
        assert_eq!(whole["import"]["records"], 4);
        assert!(whole["report_text"].as_str().unwrap().starts_with("Import report"), "{whole}");
        // The same text in pieces of 7 bytes (lines cut mid-way), and without its last newline.
        for text in [LINES, LINES.trim_end()] {
            let mut t = TraceImport::new("t.txt", None);
            for piece in text.as_bytes().chunks(7) {
                t.push(std::str::from_utf8(piece).unwrap()).unwrap();
            }
            assert_eq!(t.finish().unwrap(), whole);
        }
        // The scenario loads, as the page then runs it.
        assert!(Scenario::from_toml("t.txt", whole["toml"].as_str().unwrap()).is_ok());
    }

    #[test]
    fn bad_traces_are_refused_naming_the_line() {
        let e = import_trace("{\"traceEvents\": []}\n", "x.json", None).unwrap_err();
        assert!(e.starts_with("x.json line 1: "), "{e}");
        let e = import_trace(&format!("{LINES}garbage line here\n"), "t.txt", None).unwrap_err();
        assert!(e.contains("t.txt line 5"), "{e}");
        let e = import_trace("# nothing\n", "e.txt", None).unwrap_err();
        assert!(e.contains("no scheduler events"), "{e}");
        let e = import_trace("PERFILE2\u{0}\u{0}", "perf.data", None).unwrap_err();
        assert!(e.contains("perf.data file") && e.contains("perf sched script"), "{e}");
        let mut t = TraceImport::new("big.bin", None);
        let e = t.push(&"x".repeat(LINE_MAX + 10)).unwrap_err();
        assert!(e.contains("big.bin") && e.contains("line 1 is larger"), "{e}");
    }

    #[test]
    fn the_tick_rate_control_carries_an_imported_tick_phase_along() {
        // As an import writes it: HZ 250 and the tick grid's phase (2.5 ms).
        let toml = "schema = 1\nseed = 1\nduration = \"50ms\"\n[machine]\ncpus = 1\nhz = 250\ntick_offset = \"2.5ms\"\n[[tasks]]\nname = \"a\"\nprogram = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n";
        let s = Scenario::from_toml("i.toml", toml).unwrap();
        let d = crate::controls::describe(&s, &s);
        let hz = d["controls"].as_array().unwrap().iter().find(|c| c["key"] == "machine.hz").unwrap();
        let mut seen = 0;
        for o in hz["options"].as_array().unwrap() {
            let rate = o["value"].as_str().unwrap();
            let also = &o["also"][0];
            assert_eq!(also[0], "machine.tick_offset");
            let want = match rate {
                "250" => Value::Null,
                // 1 ms ticks: 2.5 ms mod 1 ms; 100 and 300 Hz ticks are longer than 2.5 ms.
                "1000" => json!("\"500000ns\""),
                _ => json!("\"2500000ns\""),
            };
            assert_eq!(also[1], want, "{rate}");
            // Without it, 1000 Hz is refused (the offset is not below one tick).
            if rate == "1000" {
                assert!(s.with_overrides(&[("machine.hz", rate)]).is_err());
            }
            let mut pairs = vec![("machine.hz", rate)];
            let offset = also[1].as_str().map(str::to_string);
            if let Some(v) = &offset {
                pairs.push(("machine.tick_offset", v));
            }
            assert!(s.with_overrides(&pairs).is_ok(), "{rate}");
            seen += 1;
        }
        assert_eq!(seen, 4);
        // A scenario without a phase keeps plain options.
        let plain = Scenario::from_toml("p.toml", &toml.replace("tick_offset = \"2.5ms\"\n", "")).unwrap();
        let d = crate::controls::describe(&plain, &plain);
        let hz = d["controls"].as_array().unwrap().iter().find(|c| c["key"] == "machine.hz").unwrap();
        assert!(hz["options"][0].get("also").is_none());
    }
}
