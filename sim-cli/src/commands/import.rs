//! `sim-cli import TRACE`: streams a scheduler trace (plain text, gzip, or a
//! perf.data file run through `perf sched script`) line by line into the
//! core's `Importer`, writes the scenario it builds, and with `--replay`
//! runs it and prints the import report. The reading is bounded per line
//! (a trace's lines are short; a file without line breaks is refused), so
//! memory follows the trace's threads, not its length.

use anyhow::{Context, Result, anyhow, bail};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sim_core::{ImportOptions, Importer, Scenario, Simulation, import_report};

/// The longest line read: sched lines are ~200 bytes; 64 KiB is no trace's.
pub const LINE_MAX: usize = 64 << 10;
/// The most lines read (about 100 s of a busy 64-CPU machine).
pub const LINES_MAX: u64 = 2_000_000_000;

pub struct Args {
    pub trace: PathBuf,
    pub output: Option<PathBuf>,
    pub victim: Option<String>,
    pub kernel: Option<String>,
    pub hz: Option<u32>,
    pub window: Option<String>,
    pub replay: bool,
    pub set: Vec<String>,
    pub json: bool,
}

impl Args {
    /// Defaults for `trace` (tests).
    #[cfg(test)]
    pub fn of(trace: &Path) -> Args {
        Args {
            trace: trace.to_path_buf(),
            output: None,
            victim: None,
            kernel: None,
            hz: None,
            window: None,
            replay: false,
            set: Vec::new(),
            json: false,
        }
    }
}

/// `A..B` as two durations.
fn window(text: &str) -> Result<(u64, u64)> {
    let (a, b) = text.split_once("..").ok_or_else(|| {
        anyhow!("--window `{text}`: expected `A..B`, two durations after the trace's start (`2s..5s`)")
    })?;
    let a = sim_core::parse_duration(a).map_err(|e| anyhow!("--window `{text}`: {e}"))?;
    let b = sim_core::parse_duration(b).map_err(|e| anyhow!("--window `{text}`: {e}"))?;
    if b <= a {
        bail!("--window `{text}`: empty window (the end must come after the start)");
    }
    Ok((a, b))
}

/// The trace's bytes: stdin, a gzip stream, or `perf sched script` of a perf.data file.
pub fn open(path: &Path) -> Result<Box<dyn Read>> {
    let p = path.display();
    if path == Path::new("-") {
        return sniff(Box::new(std::io::stdin()), path);
    }
    let file = std::fs::File::open(path).map_err(|e| anyhow!("cannot read {p}: {e}"))?;
    sniff(Box::new(file), path)
}

fn sniff(r: Box<dyn Read>, path: &Path) -> Result<Box<dyn Read>> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    let head = r.fill_buf().map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r))));
    }
    if head.starts_with(b"PERFILE2") {
        if path == Path::new("-") {
            bail!(
                "-: perf.data on stdin cannot be read; give the file's path, or run `perf sched script -i FILE` yourself"
            );
        }
        return perf_script(path);
    }
    Ok(Box::new(r))
}

/// `perf sched script` over a perf.data file, streamed.
fn perf_script(path: &Path) -> Result<Box<dyn Read>> {
    let p = path.display();
    let by_hand = format!(
        "run `perf sched script -F comm,pid,tid,cpu,time,event,trace --ns --header -i {p} > trace.txt` where perf is installed, then `sim-cli import trace.txt`"
    );
    let mut child = Command::new("perf")
        .args(["sched", "script", "-F", "comm,pid,tid,cpu,time,event,trace", "--ns", "--header", "-i"])
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| anyhow!("{p} is a perf.data file and perf cannot be started ({e}): {by_hand}"))?;
    let out = child.stdout.take().ok_or_else(|| anyhow!("{p}: perf's output could not be read: {by_hand}"))?;
    Ok(Box::new(out))
}

/// Feeds every line of `r` to `push` (the importer, or `calibrate`'s
/// trace reader), at most LINE_MAX bytes each and LINES_MAX lines.
pub fn feed<R: BufRead>(
    r: &mut R,
    path: &Path,
    bar: &indicatif::ProgressBar,
    mut push: impl FnMut(&str) -> Result<(), sim_core::ImportError>,
) -> Result<()> {
    let p = path.display();
    let mut buf: Vec<u8> = Vec::with_capacity(512);
    let mut lines: u64 = 0;
    loop {
        buf.clear();
        let n = (&mut *r)
            .take(LINE_MAX as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| anyhow!("{p}: reading line {}: {e} (a corrupt or truncated gzip stream?)", lines + 1))?;
        if n == 0 {
            return Ok(());
        }
        if buf.len() > LINE_MAX && !buf.ends_with(b"\n") {
            bail!(
                "{p}: the trace's line {} is larger than {LINE_MAX} bytes (reading stopped there): not scheduler trace text",
                lines + 1
            );
        }
        if lines >= LINES_MAX {
            bail!("{p}: more than {LINES_MAX} lines: import a part with --window, or a shorter recording");
        }
        lines += 1;
        // Comms are bytes, not always UTF-8 (perf prints them raw).
        let line = String::from_utf8_lossy(&buf);
        push(&line).map_err(|e| anyhow!("{e}"))?;
        if lines.is_multiple_of(65_536) {
            bar.inc(65_536);
        }
    }
}

pub fn command(a: &Args) -> Result<String> {
    let window = a.window.as_deref().map(window).transpose()?;
    let source = a.trace.display().to_string();
    let opts =
        ImportOptions { source: source.clone(), window, kernel: a.kernel.clone(), hz: a.hz, victim: a.victim.clone() };
    let mut im = Importer::new(opts);
    let mut reader = BufReader::with_capacity(1 << 16, open(&a.trace)?);
    let bar = crate::progress::bar(0, "lines", !a.json);
    bar.set_message("import");
    feed(&mut reader, &a.trace, &bar, |l| im.push_line(l))?;
    bar.finish_and_clear();
    let import = im.finish().map_err(|e| anyhow!("{e}"))?;
    if let Some(out) = &a.output {
        std::fs::write(out, &import.toml).with_context(|| format!("writing the scenario to {}", out.display()))?;
    }
    let mut text = String::new();
    if !a.replay {
        if a.json {
            return Ok(serde_json::to_string_pretty(&import)? + "\n");
        }
        if a.output.is_none() {
            return Ok(import.toml);
        }
        for n in &import.notes {
            text.push_str(&format!("note: {n}\n"));
        }
        return Ok(text);
    }
    let scenario = Scenario::from_toml(&source, &import.toml)
        .map_err(|e| anyhow!("the imported scenario does not load (a bug in the importer): {e}"))?;
    let scenario = crate::input::with_sets(&scenario, &a.set)?;
    let mut sim = Simulation::new(&scenario);
    crate::progress::run_to_end(&mut sim, "replay", !a.json);
    let report = import_report(&import, &sim.report());
    if a.json {
        let v = serde_json::json!({ "import": import, "report": report });
        return Ok(serde_json::to_string_pretty(&v)? + "\n");
    }
    if a.output.is_none() {
        text.push_str(&import.toml);
        text.push('\n');
    }
    text.push_str(&report.text());
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sim-cli-import-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const LINES: &str = "\
            bash-11190   [000] d..2. 70079.181659: sched_switch: prev_comm=bash prev_pid=11190 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.s3. 70079.182751: sched_waking: comm=bash pid=11190 prio=120 target_cpu=000
          <idle>-0       [000] d..2. 70079.182767: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=11190 next_prio=120
            bash-11190   [000] d..2. 70079.183767: sched_switch: prev_comm=bash prev_pid=11190 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

    #[test]
    fn gzip_is_read_and_a_corrupt_gzip_is_refused() {
        let d = scratch("gz");
        let good = d.join("t.txt.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(LINES.as_bytes()).unwrap();
        let bytes = enc.finish().unwrap();
        std::fs::write(&good, &bytes).unwrap();
        let out = command(&Args::of(&good)).unwrap();
        assert!(out.contains("[[tasks]]") && out.contains("4 lines, 4 scheduler records"), "{out}");
        let bad = d.join("bad.txt.gz");
        let mut corrupt = bytes.clone();
        let mid = corrupt.len() / 2;
        corrupt[mid] ^= 0xff;
        corrupt.truncate(corrupt.len() - 4);
        std::fs::write(&bad, &corrupt).unwrap();
        let e = format!("{:#}", command(&Args::of(&bad)).unwrap_err());
        assert!(e.contains("bad.txt.gz") && (e.contains("gzip") || e.contains("line")), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn bad_traces_and_windows_are_refused_with_the_line() {
        let d = scratch("bad");
        let cases = [
            ("notsched.txt", "{\"traceEvents\": []}\n", "line 1"),
            (
                "noswitch.txt",
                "          <idle>-0       [000] d.s3. 70079.182751: sched_waking: comm=bash pid=11190 prio=120 target_cpu=000\n",
                "no sched_switch",
            ),
            ("midline.txt", "_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n", "line 1"),
            ("empty.txt", "# nothing\n", "no scheduler events"),
        ];
        for (name, text, want) in cases {
            let f = d.join(name);
            std::fs::write(&f, text).unwrap();
            let e = format!("{:#}", command(&Args::of(&f)).unwrap_err());
            assert!(e.contains(name) && e.contains(want), "{name}: {e}");
        }
        let f = d.join("ok.txt");
        std::fs::write(&f, LINES).unwrap();
        let mut a = Args::of(&f);
        a.window = Some("10s..20s".into());
        let e = format!("{:#}", command(&a).unwrap_err());
        assert!(e.contains("window") && e.contains("holds no event"), "{e}");
        a.window = Some("2s..1s".into());
        assert!(format!("{:#}", command(&a).unwrap_err()).contains("empty window"));
        let mut a = Args::of(&f);
        a.hz = Some(0);
        let e = format!("{:#}", command(&a).unwrap_err());
        assert!(e.contains("--hz 0") && e.contains("100, 250, 300, 1000"), "{e}");
        let mut a = Args::of(&f);
        a.victim = Some("bsah".into());
        let e = format!("{:#}", command(&a).unwrap_err());
        assert!(e.contains("--victim `bsah`") && e.contains("no thread"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    /// The real traces of tests/import (see its README).
    fn real(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/import").join(name)
    }

    fn text_of(name: &str) -> String {
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(real(name)).unwrap()).read_to_string(&mut s).unwrap();
        s
    }

    /// perf sched script of this machine: a two-word comm, `pid/tid`, `R+`,
    /// migrations and other tracepoints (sched_stat_runtime, fork) in it; read
    /// gzipped; the cut copy is refused at its cut line. sched_stat_runtime is
    /// parsed (`measure` reads run times from it) but the import leaves it out.
    #[test]
    fn a_real_perf_trace_parses_and_its_cut_copy_is_refused_at_the_line() {
        let text = text_of("small.txt.gz");
        let recs: Vec<sim_core::SchedTextRecord> = text
            .lines()
            .filter_map(|l| match sim_core::parse_sched_line(l) {
                Ok(sim_core::SchedLine::Record(r)) => Some(r),
                Ok(_) => None,
                Err(e) => panic!("{e}: {l}"),
            })
            .collect();
        assert!(recs.iter().any(|r| r.comm == "web content" && r.pid == Some(r.tid)), "two-word comm with pid/tid");
        let plus = recs
            .iter()
            .filter(|r| matches!(&r.event, sim_core::SchedEvent::Switch { prev_state, .. } if prev_state == "R+"))
            .count();
        let migrations = recs.iter().filter(|r| matches!(r.event, sim_core::SchedEvent::Migrate { .. })).count();
        let migrate_lines = text.lines().filter(|l| l.contains("sched:sched_migrate_task:")).count();
        assert_eq!((plus, migrations), (3, migrate_lines));
        assert!(migrations >= 10);
        assert!(text.contains("sched:sched_stat_runtime"));
        let charged = recs.iter().filter(|r| matches!(r.event, sim_core::SchedEvent::StatRuntime { .. })).count();
        assert_eq!(
            charged,
            text.lines().filter(|l| l.contains("sched:sched_stat_runtime:")).count(),
            "each is a record"
        );
        let out = command(&Args::of(&real("small.txt.gz"))).unwrap();
        assert!(out.contains("`web content`") && out.contains("name = \"web_content\""), "{out}");
        assert!(out.contains("# 2 CPUs online (trace header)") && out.contains("6.18.44-fc-v669"), "{out}");
        let e = format!("{:#}", command(&Args::of(&real("small.truncated.txt.gz"))).unwrap_err());
        assert!(e.contains("line 631") && e.contains("truncated sched_switch"), "{e}");
    }

    fn import_json(a: &Args) -> serde_json::Value {
        serde_json::from_str(&command(a).unwrap()).unwrap()
    }

    fn row<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
        v["report"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
    }

    /// cyclictest beside a CPU hog on CPU 1: the measuring thread is found as
    /// a 1 ms timer pinned with the hog, and the replay gives its delays' tail.
    #[test]
    fn cyclictest_beside_stress_ng_imports_and_replays() {
        let mut a = Args::of(&real("cyclictest.txt.gz"));
        (a.victim, a.replay, a.json) = (Some("cyclictest".into()), true, true);
        let v = import_json(&a);
        let toml = v["import"]["toml"].as_str().unwrap();
        let victim = v["import"]["victim"].as_str().unwrap();
        assert_eq!(v["report"]["rows"][0]["name"], victim, "the victim's row comes first");
        let doc: toml::Value = toml::from_str(toml).unwrap();
        let tasks = doc["tasks"].as_array().unwrap();
        let t = tasks.iter().find(|t| t["name"].as_str() == Some(victim)).unwrap();
        let period = sim_core::parse_duration(t["program"][0]["sleep_until"].as_str().unwrap()).unwrap();
        assert!(period.abs_diff(1_000_000) < 1_000, "1 ms period, got {period}");
        assert_eq!(t["cpus"].as_str(), Some("1"), "pinned with the hog");
        let hog = tasks.iter().find(|t| t["name"].as_str() == Some("stress-ng-cpu")).unwrap();
        assert_eq!(hog["cpus"].as_str(), Some("1"));
        let r = row(&v, victim);
        let (tn, rn) = (r["trace"]["count"].as_u64().unwrap(), r["replay"]["count"].as_u64().unwrap());
        assert!(tn.abs_diff(rn) * 100 <= tn * 2, "{tn} trace delays vs {rn} replayed");
        println!("{}", serde_json::to_string_pretty(&v["report"]).unwrap());
    }

    /// perf bench sched pipe beside a hog: the two pipe threads wait for
    /// each other (one starts the ping-pong), the hog is found.
    #[test]
    fn a_pipe_pair_is_a_wait_wake_cycle() {
        let mut a = Args::of(&real("pipe.txt.gz"));
        (a.victim, a.replay, a.json) = (Some("sched-pipe".into()), true, true);
        let v = import_json(&a);
        let doc: toml::Value = toml::from_str(v["import"]["toml"].as_str().unwrap()).unwrap();
        let tasks = doc["tasks"].as_array().unwrap();
        let pipes: Vec<&toml::Value> =
            tasks.iter().filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("sched-pipe"))).collect();
        assert_eq!(pipes.len(), 2);
        let wakes = |t: &toml::Value| -> Vec<String> {
            t["program"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|s| s.get("wake").and_then(|w| w.as_str()).map(str::to_string))
                .collect()
        };
        assert_eq!(wakes(pipes[0]), vec![pipes[1]["name"].as_str().unwrap().to_string()]);
        assert_eq!(wakes(pipes[1]), vec![pipes[0]["name"].as_str().unwrap().to_string()]);
        let waits = pipes
            .iter()
            .filter(|t| t["program"].as_array().unwrap().iter().any(|s| s.as_str() == Some("wait")))
            .count();
        assert_eq!(waits, 2);
        assert!(tasks.iter().any(|t| t["name"].as_str() == Some("stress-ng-cpu")), "the hog");
        println!("{}", serde_json::to_string_pretty(&v["report"]).unwrap());
    }
}
