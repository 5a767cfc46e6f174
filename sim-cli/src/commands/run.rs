//! `sim-cli run`: one scenario (its base, or one `--variant`) run to its end
//! and reported as text, JSON, an HdrHistogram listing or `perf sched
//! timehist` lines; besides the report it can write charts (`--plot`) and a
//! Chrome/Perfetto trace (`--trace`) of a window of the run (`--window`).

use crate::args::{Export, RunArgs};
use crate::input::load;
use crate::output::{self, hgrm};
use crate::{charts, progress};
use anyhow::{Context, Result, bail};
use sim_core::{Scenario, SimTime, Simulation, Trace, TraceWindow, report_json};

/// The most records `--trace-max` may ask for (about 80 bytes each in
/// memory, a few hundred in the JSON file).
const TRACE_RECORDS_MAX: usize = 20_000_000;

/// Runs `a`'s scenario and returns the text to print.
pub fn run(a: RunArgs) -> Result<String> {
    let RunArgs { common, noise, variant, per_task, blkparse, debug_no_elision, export, bands, jobs } = a;
    let plan = crate::bands::plan(&bands)?;
    let base = crate::input::with_noise(load(&common, &common.set)?, noise.as_deref())?;
    let scenario = match &variant {
        Some(v) => base.with_variant(v)?,
        None => base,
    };
    let quiet = common.json;
    let window = trace_window(&export, &scenario, quiet)?;
    if let Some(task) = &export.hgrm {
        hgrm::check(task, scenario.spec.tasks.iter().map(|t| t.name.as_str()))?;
    }
    // Open what will be written before the run, so a bad path fails at once.
    let trace_file = match &export.trace {
        Some(f) => {
            Some(std::fs::File::create(f).with_context(|| format!("--trace {}: cannot create the file", f.display()))?)
        }
        None => None,
    };
    if let Some(dir) = &export.plot {
        charts::make_dir(dir)?;
    }
    // What the report will print, recorded and no more.
    let sections = output::report_sections(export.plot.is_some() || export.hgrm.is_some());
    let mut sim = Simulation::recording(&scenario, crate::bands::sections(sections, plan.as_ref()));
    sim.set_elision(!debug_no_elision);
    if let Some(w) = window {
        sim.enable_trace(w).map_err(|e| anyhow::anyhow!(e))?;
    }
    progress::run_to_end(&mut sim, variant.as_deref().unwrap_or("base"), !quiet);
    let report = sim.report();
    // The other points of --phases/--seeds; this run is point 0.
    let band = match &plan {
        Some(p) => {
            let label = variant.as_deref().unwrap_or("base");
            Some(crate::bands::rest_of_band(&scenario, label, p, &report, jobs, !quiet)?)
        }
        None => None,
    };
    if let Some(dir) = &export.plot {
        let files = charts::run_charts(dir, &report)?;
        eprintln!("wrote {} charts to {}", files.len(), dir.display());
    }
    let trace = Trace::from_sim(&mut sim);
    if let (Some(file), Some(out), Some(t)) = (&export.trace, trace_file, &trace) {
        let settings = sim_core::caption(&[(variant.as_deref().unwrap_or("base"), &report)]).join(" | ");
        let header = format!(
            "# os release : {} (schedlab model {})\n# nrcpus online : {}\n",
            report.settings.kernel.version(),
            report.settings.kernel.label(),
            t.cpus
        );
        write_trace(file, out, t, &settings, &header)?;
        eprintln!("wrote {}: {}", file.display(), t.bound_text());
    }
    if let (true, Some(t)) = (export.timehist, &trace) {
        return Ok(sim_core::timehist_text(t));
    }
    if let Some(task) = &export.hgrm {
        return hgrm::hgrm(&report, task);
    }
    if common.json {
        output::warn_partial(&report, None);
        return Ok(match &band {
            Some(b) => sim_core::report_json_with_bands(&report, b),
            None => report_json(&report),
        } + "\n");
    }
    // Without --trace/--timehist, --cpus picks the CPUs listed one per line.
    let selected: Option<Vec<u16>> = match (&export.cpus, export.trace.is_none() && !export.timehist) {
        (Some(list), true) => Some(
            sim_core::CpuSet::parse(list, scenario.spec.cpus)
                .map_err(|e| anyhow::anyhow!("--cpus {list}: {e}"))?
                .iter()
                .map(|c| c.0)
                .collect(),
        ),
        _ => None,
    };
    let mut text = output::run_text(&report, per_task, selected.as_deref());
    if blkparse {
        text.push('\n');
        text.push_str(&output::io::blkparse_text(&report));
    }
    if let Some(b) = &band {
        text.push('\n');
        text.push_str(&output::bands::table(b, &report.victim.name, report.settings.tick_ns));
    }
    Ok(text)
}

/// Streams the trace into `file` (memory stays that of the records): ftrace
/// text after `header` (perf's `--header` lines, which `sim-cli import`
/// reads) for a `.txt` file, Chrome/Perfetto JSON otherwise.
fn write_trace(file: &std::path::Path, out: std::fs::File, t: &Trace, settings: &str, header: &str) -> Result<()> {
    use std::io::Write as _;
    /// `fmt::Write` onto a buffered file, keeping the first I/O error.
    struct Sink(std::io::BufWriter<std::fs::File>, Option<std::io::Error>);
    impl std::fmt::Write for Sink {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write_all(s.as_bytes()).map_err(|e| {
                self.1 = Some(e);
                std::fmt::Error
            })
        }
    }
    let what = || format!("--trace {}: cannot write the file", file.display());
    let mut sink = Sink(std::io::BufWriter::new(out), None);
    let text = file.extension().is_some_and(|e| e == "txt");
    let written = if text {
        std::fmt::Write::write_str(&mut sink, header).and_then(|()| sim_core::write_ftrace_text(t, &mut sink))
    } else {
        sim_core::write_chrome_json(t, settings, &mut sink)
    };
    if written.is_err() {
        return Err(sink.1.map_or_else(|| anyhow::anyhow!("formatting failed"), anyhow::Error::from))
            .with_context(what);
    }
    sink.0.flush().with_context(what)
}

/// The window `--trace`/`--timehist` record, if either is asked for.
/// `quiet` is `--json`.
fn trace_window(export: &Export, scenario: &Scenario, quiet: bool) -> Result<Option<TraceWindow>> {
    if export.trace.is_none() && !export.timehist {
        if let Some(w) = &export.window {
            bail!("--window {w}: it bounds --trace and --timehist; give one of them");
        }
        if let (Some(c), true) = (&export.cpus, quiet) {
            bail!("--cpus {c}: it selects CPUs for --trace, --timehist and the text report's CPU table, not --json");
        }
        return Ok(None);
    }
    if export.trace_max == 0 || export.trace_max > TRACE_RECORDS_MAX {
        bail!("--trace-max {}: allowed are 1 to {TRACE_RECORDS_MAX} records", export.trace_max);
    }
    let cpus = match &export.cpus {
        Some(list) => {
            Some(sim_core::CpuSet::parse(list, scenario.spec.cpus).map_err(|e| anyhow::anyhow!("--cpus {list}: {e}"))?)
        }
        None => None,
    };
    let all = TraceWindow { cpus, ..TraceWindow::all(export.trace_max) };
    let Some(text) = export.window.as_deref() else { return Ok(Some(all)) };
    if text == "worst" {
        // The worst delay is only known after a run: run once to find it,
        // then the caller replays the same seed with the window set.
        let mut sim = Simulation::new(scenario);
        progress::run_to_end(&mut sim, "finding the worst delay", !quiet);
        let r = sim.report();
        let Some(w) = r.victim.worst.as_ref().filter(|w| w.end_ns > w.start_ns) else {
            bail!(
                "--window worst: {} was never delayed in this run, so there is no worst delay to centre on",
                r.victim.name
            );
        };
        // The scenario's history window either side, else one sched_latency.
        let margin = match scenario.spec.history_window_ns {
            0 => scenario.spec.tunables.sched_latency_ns,
            m => m,
        };
        return Ok(Some(TraceWindow {
            from: SimTime(w.start_ns.saturating_sub(margin)),
            to: SimTime(w.end_ns.saturating_add(margin)),
            ..all
        }));
    }
    let bad = |why: &str| {
        anyhow::anyhow!(
            "--window {text}: {why}; expected FROM..TO with durations (e.g. 9.2s..9.3s, either end optional) or `worst`"
        )
    };
    let (a, b) = text.split_once("..").ok_or_else(|| bad("no `..`"))?;
    let parse = |s: &str, default: u64| -> Result<u64> {
        match s.trim() {
            "" => return Ok(default),
            "0" => return Ok(0),
            _ => {}
        }
        sim_core::parse_duration(s.trim()).map_err(|e| bad(&e))
    };
    let (from, to) = (parse(a, 0)?, parse(b, u64::MAX)?);
    if from > to {
        return Err(bad("FROM is after TO"));
    }
    let duration = scenario.spec.duration_ns;
    if from >= duration {
        return Err(bad(&format!("the run ends at {}", sim_core::format_duration(duration))));
    }
    Ok(Some(TraceWindow { from: SimTime(from), to: SimTime(to), ..all }))
}
