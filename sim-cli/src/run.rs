//! Carries out a command: reads the file, builds scenarios through the core's
//! one API, runs them, and returns the text to print.

use crate::args::{Cli, Command, Common, Export};
use crate::{charts, hgrm, output, progress};
use anyhow::{Context, Result, bail};
use sim_core::export::{Trace, chrome, timehist};
use sim_core::metrics::recorder::TraceWindow;
use sim_core::report::run::ReportSections;
use sim_core::time::SimTime;
use sim_core::{RunReport, Scenario, Simulation, report_json, runs_json};

pub mod input;

/// The most records `--trace-max` may ask for (about 80 bytes each in
/// memory, a few hundred in the JSON file).
const TRACE_RECORDS_MAX: usize = 20_000_000;

pub fn execute(cli: Cli) -> Result<String> {
    match cli.command {
        Command::Measure(m) => {
            let opts = measure_options(&m);
            let report = crate::measure::measure(&m.common.file, &opts)?;
            if m.common.json {
                return Ok(report_json(&report) + "\n");
            }
            Ok(output::run_text(&report, m.per_task, None))
        }
        Command::Validate { measure, repeat, also_kernel } => crate::measure::validate::validate(
            &measure.common.file,
            &measure_options(&measure),
            repeat,
            also_kernel.as_deref(),
            measure.common.json,
        ),
        Command::MeasureWorker => bail!("`__measure-worker` is started by `measure`, not by hand"),
        Command::Run { common, variant, per_task, blkparse, debug_no_elision, export } => {
            let base = load(&common, &common.set)?;
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
                Some(f) => Some(
                    std::fs::File::create(f)
                        .with_context(|| format!("--trace {}: cannot create the file", f.display()))?,
                ),
                None => None,
            };
            if let Some(dir) = &export.plot {
                charts::make_dir(dir)?;
            }
            let mut sim = Simulation::new(&scenario);
            sim.set_elision(!debug_no_elision);
            if let Some(w) = window {
                sim.enable_trace(w);
            }
            progress::run_to_end(&mut sim, variant.as_deref().unwrap_or("base"), !quiet);
            let report = sim.report_with(report_sections(export.plot.is_some() || export.hgrm.is_some()));
            if let Some(dir) = &export.plot {
                let files = charts::run_charts(dir, &report)?;
                eprintln!("wrote {} charts to {}", files.len(), dir.display());
            }
            let trace = Trace::from_sim(&mut sim);
            if let (Some(file), Some(out), Some(t)) = (&export.trace, trace_file, &trace) {
                let settings =
                    sim_core::plot::data::caption(&[(variant.as_deref().unwrap_or("base"), &report)]).join(" | ");
                write_trace(file, out, t, &settings)?;
                eprintln!("wrote {}: {}", file.display(), t.bound_text());
            }
            if let (true, Some(t)) = (export.timehist, &trace) {
                return Ok(timehist::render(t));
            }
            if let Some(task) = &export.hgrm {
                return hgrm::hgrm(&report, task);
            }
            if common.json {
                warn_partial(&report, None);
                return Ok(report_json(&report) + "\n");
            }
            // Without --trace/--timehist, --cpus picks the CPUs listed one per line.
            let selected: Option<Vec<u16>> = match (&export.cpus, export.trace.is_none() && !export.timehist) {
                (Some(list), true) => Some(
                    sim_core::cpuset::CpuSet::parse(list, scenario.spec.cpus)
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
                text.push_str(&crate::io_output::blkparse_text(&report));
            }
            Ok(text)
        }
        Command::Compare { common, plot, kernels, jobs } => {
            // With --kernels the file is validated under the first kernel
            // listed (its default may not be one of them).
            let base = match kernels.as_deref() {
                Some(list) => {
                    check_kernels_sets(list, &common.set)?;
                    let first = list.split(',').next().unwrap_or_default().trim();
                    let mut sets = common.set.clone();
                    sets.push(format!("kernel.version=\"{first}\""));
                    load(&common, &sets).with_context(|| format!("--kernels {list}: kernel {first}"))?
                }
                None => load(&common, &common.set)?,
            };
            let planned = match &kernels {
                Some(list) => {
                    let variants = base.variant_names();
                    if !variants.is_empty() {
                        eprintln!(
                            "note: --kernels runs the base scenario only; the variants of {} ({}) are not run (one variant \
                             under one kernel: sim-cli run {} --variant NAME --set kernel.version=X)",
                            common.file.display(),
                            variants.join(", "),
                            common.file.display()
                        );
                    }
                    kernel_scenarios(&base, list, &common.set)?
                }
                None => variant_scenarios(&base)?,
            };
            if let Some(dir) = &plot {
                charts::make_dir(dir)?;
            }
            let jobs = crate::compare::jobs(jobs, planned.len());
            let runs = crate::compare::run_all(&planned, jobs, !common.json, report_sections(plot.is_some()));
            let labels: Vec<String> = planned.into_iter().map(|(label, _)| label).collect();
            if let Some(dir) = &plot {
                let files = charts::compare_charts_labelled(dir, &runs, &labels)?;
                eprintln!("wrote {} charts to {}", files.len(), dir.display());
            }
            if common.json {
                for (r, label) in runs.iter().zip(&labels) {
                    warn_partial(r, Some(label));
                }
                return Ok(runs_json(&runs) + "\n");
            }
            Ok(output::compare_text_named(&runs, &labels))
        }
        Command::Sweep(args) => crate::sweep::sweep(args),
        Command::Merge { files, budget, json, plot } => {
            crate::sweep::merge(&files, budget.as_deref(), json, plot.as_deref())
        }
        Command::Completions { shell } => Ok(crate::docs::completions(shell)),
        Command::Man { out_dir: None } => Ok(crate::docs::man_page()),
        Command::Man { out_dir: Some(dir) } => {
            let files = crate::docs::write_man_pages(&dir)?;
            eprintln!("wrote {} man pages to {}", files.len(), dir.display());
            Ok(String::new())
        }
        Command::Schema { what } => Ok(crate::docs::schema(what)),
        Command::Serve { dir, port } => crate::serve::serve(&dir, port).map(|()| String::new()),
        Command::FitDevice { files, name } => crate::fit_device::command(&files, &name),
        Command::Export { file, rt_app: _, variant, set, output } => {
            crate::rtapp::command(&file, variant.as_deref(), &set, output.as_deref())
        }
    }
}

/// The report sections a command reads: every one for charts (`--plot`)
/// and `--hgrm` (CDFs, occupancy), else those the JSON and text print.
fn report_sections(charts: bool) -> ReportSections {
    if charts { ReportSections::ALL } else { ReportSections::PRINTED }
}

/// With `--json`, stdout is the JSON document alone: a partial report's
/// warning (the text report's `warning:` line) goes to stderr instead. The
/// exit status stays 0, as for any report: `stop_reason` says it is partial.
fn warn_partial(r: &RunReport, run: Option<&str>) {
    if let Some(w) = sim_core::partial_warning(r) {
        match run {
            Some(name) => eprintln!("warning: {name}: {w}"),
            None => eprintln!("warning: {w}"),
        }
    }
}

/// Streams the trace JSON into `file` (memory stays that of the records).
fn write_trace(file: &std::path::Path, out: std::fs::File, t: &Trace, settings: &str) -> Result<()> {
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
    if chrome::write_json(t, settings, &mut sink).is_err() {
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
        Some(list) => Some(
            sim_core::cpuset::CpuSet::parse(list, scenario.spec.cpus)
                .map_err(|e| anyhow::anyhow!("--cpus {list}: {e}"))?,
        ),
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
        sim_core::workload::dist::parse_duration(s.trim()).map_err(|e| bad(&e))
    };
    let (from, to) = (parse(a, 0)?, parse(b, u64::MAX)?);
    if from > to {
        return Err(bad("FROM is after TO"));
    }
    let duration = scenario.spec.duration_ns;
    if from >= duration {
        return Err(bad(&format!("the run ends at {}", sim_core::time::format_duration(duration))));
    }
    Ok(Some(TraceWindow { from: SimTime(from), to: SimTime(to), ..all }))
}

fn measure_options(m: &crate::args::MeasureArgs) -> crate::measure::Options {
    crate::measure::Options {
        variant: m.variant.clone(),
        sets: m.common.set.clone(),
        duration: m.duration.clone(),
        cpus: m.cpus.clone(),
        apply_sysctls: m.apply_sysctls,
        ignore_limiters: m.ignore_limiters,
        io_dir: m.io_dir.clone(),
        no_perf: m.no_perf,
        progress: !m.common.json,
    }
}

fn load(common: &Common, sets: &[String]) -> Result<Scenario> {
    load_text(&common.file, sets).map(|(_, s)| s)
}

/// Reads and parses a scenario file with the `--set` overrides applied
/// before anything is validated (`Scenario::from_toml_with`), so every
/// command loads a file the same way; also returns its text (`sweep`
/// fingerprints it, `measure` hands it to its workers).
pub fn load_text(path: &std::path::Path, sets: &[String]) -> Result<(String, Scenario)> {
    let text = input::read_text_bounded(path, sim_core::scenario::FILE_SIZE_MAX as u64, "scenario file")?;
    let scenario = Scenario::from_toml_with(&path.display().to_string(), &text, &set_pairs(sets)?)?;
    Ok((text, scenario))
}

/// `compare`: the base and every variant, each with the `--set` overrides
/// `base` was loaded with, named `base` and by the variant. Every run is
/// built before any starts, so a bad variant fails at once.
fn variant_scenarios(base: &Scenario) -> Result<Vec<(String, Scenario)>> {
    let mut out = vec![("base".to_string(), base.clone())];
    for v in base.variant_names() {
        // An error the --set causes in one variant names that variant.
        let s = base.with_variant(v).with_context(|| format!("compare runs every variant; variant `{v}` with the --set"))?;
        out.push((v.to_string(), s));
    }
    Ok(out)
}

/// `--set kernel.version=…` and `--kernels` both choose the kernel.
fn check_kernels_sets(list: &str, sets: &[String]) -> Result<()> {
    if let Some(kv) = sets.iter().find(|kv| kv.split_once('=').is_some_and(|(k, _)| k.trim() == "kernel.version")) {
        bail!(
            "--set {kv} and --kernels {list} both choose the kernel; give one (--kernels runs the base under each version listed)"
        );
    }
    Ok(())
}

/// `compare --kernels 4.4,6.18`: the base scenario with `--set` and then
/// `kernel.version=X` (the same override), once per listed version, each
/// named by its model (`linux-6.18-eevdf`). A version this build does not
/// model is the scenario's own error, naming the versions it has; so is a
/// setting the model lacks (`cfs.sched_latency_ns` on 6.x, naming file and
/// key). Every run is built before any starts.
pub fn kernel_scenarios(base: &Scenario, list: &str, sets: &[String]) -> Result<Vec<(String, Scenario)>> {
    let allowed = sim_core::sched::model::KernelModel::allowed();
    check_kernels_sets(list, sets)?;
    let versions: Vec<&str> = list.split(',').map(str::trim).collect();
    if versions.iter().any(|v| v.is_empty()) {
        bail!("--kernels {list}: expected versions separated by commas, e.g. 4.4,6.18; this build models {allowed}");
    }
    let mut out: Vec<(String, Scenario)> = Vec::with_capacity(versions.len());
    for v in versions {
        let mut all = sets.to_vec();
        all.push(format!("kernel.version=\"{v}\""));
        let s = with_sets(base, &all).with_context(|| format!("--kernels {list}: kernel {v}"))?;
        let label = s.spec.kernel.label();
        if out.iter().any(|(l, _)| *l == label) {
            bail!("--kernels {list}: {v} is listed twice");
        }
        out.push((label, s));
    }
    Ok(out)
}

/// `s` with one more batch of `KEY=VALUE` overrides (a later batch may set
/// a key an earlier one set; one batch may not set a key twice).
pub fn with_sets(s: &Scenario, sets: &[String]) -> Result<Scenario> {
    if sets.is_empty() {
        return Ok(s.clone());
    }
    Ok(s.with_overrides(&set_pairs(sets)?)?)
}

/// `--set KEY=VALUE` texts split at the first `=`.
pub fn set_pairs(sets: &[String]) -> Result<Vec<(&str, &str)>> {
    sets.iter()
        .map(|kv| {
            kv.split_once('=').ok_or_else(|| {
                anyhow::anyhow!(
                    "--set {}: expected KEY=VALUE, e.g. --set cfs.sched_latency_ns=1ms",
                    sim_core::scenario::error::echo(kv)
                )
            })
        })
        .collect()
}

/// The text of an error as `main` prints it: every control character but
/// the line break shown escaped (a path from argv, a name from a file), so
/// an error cannot drive the terminal.
pub fn error_text(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    text.split('\n').map(sim_core::scenario::error::escape_controls).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One CPU, a hog and a sleeper, 4.4, with a variant that moves it to 6.18.
    const TOML: &str = "schema = 1\nseed = 3\nduration = \"100ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n[[tasks]]\nname = \"s\"\nprogram = [{ sleep = \"exp(5ms)\" }, { run = \"50us\" }]\n[variants.new]\n\"kernel.version\" = \"6.18\"\n";

    fn scenario(text: &str) -> Scenario {
        Scenario::from_toml("t.toml", text).unwrap()
    }

    #[test]
    fn kernels_run_the_base_once_per_model_named_by_it() {
        let sets = vec!["seed=9".to_string()];
        let planned = kernel_scenarios(&scenario(TOML), "4.4, 6.6,6.12,6.18", &sets).unwrap();
        let labels: Vec<&str> = planned.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["linux-4.4-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf", "linux-6.18-eevdf"]);
        for (label, s) in &planned {
            assert_eq!(&s.spec.kernel.label(), label);
            assert_eq!(s.spec.seed, 9, "--set applies to every kernel");
            assert_eq!(s.variant(), None, "the base, not a variant");
        }
        // The same scenario as `--set kernel.version=6.18`.
        let by_set = with_sets(&scenario(TOML), &["seed=9".into(), "kernel.version=6.18".into()]).unwrap();
        assert_eq!(planned[3].1.spec, by_set.spec);
        // The table names each column by its model and shows which knobs it has.
        let runs: Vec<RunReport> = [&planned[0].1, &planned[3].1].into_iter().map(sim_core::run).collect();
        let labels = vec![planned[0].0.clone(), planned[3].0.clone()];
        let text = output::compare_text_named(&runs, &labels);
        let row = |name: &str| text.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_default().to_string();
        let head = text.lines().nth(2).unwrap_or_default();
        assert!(
            head.contains("linux-4.4-cfs") && head.contains("linux-6.18-eevdf") && !head.contains("base"),
            "{text}"
        );
        assert!(row("kernel").ends_with("linux-4.4-cfs  linux-6.18-eevdf"), "{text}");
        // The CFS knob is in the 4.4 column only (1 CPU: the 6 ms default).
        let cells: Vec<String> = row("sched_latency_ns").split_whitespace().skip(1).map(String::from).collect();
        assert_eq!(cells, ["6ms", "-"], "{text}");
    }

    #[test]
    fn kernels_refuse_an_unknown_version_naming_the_allowed_ones() {
        let e = format!("{:#}", kernel_scenarios(&scenario(TOML), "4.4,6.10", &[]).unwrap_err());
        assert!(e.contains("--kernels 4.4,6.10: kernel 6.10: t.toml"), "{e}");
        assert!(e.contains("kernel.version") && e.contains("\"6.10\""), "{e}");
        assert!(e.contains("\"4.4\", \"6.6\", \"6.12\", \"6.18\""), "{e}");
        for (list, sets, needle) in [
            ("6.18,6.18", vec![], "6.18 is listed twice"),
            ("4.4,,6.6", vec![], "separated by commas"),
            ("6.6", vec!["kernel.version=4.4".to_string()], "both choose the kernel"),
        ] {
            let e = format!("{:#}", kernel_scenarios(&scenario(TOML), list, &sets).unwrap_err());
            assert!(e.contains(needle), "{list}: {e}");
        }
    }

    /// A scenario with CFS tunables runs under 4.4 only: on 6.x validation
    /// refuses it, naming the file, the key and what the model has instead.
    #[test]
    fn kernels_refuse_cfs_tunables_on_eevdf_naming_file_and_key() {
        // (Without the variant: it would move these tunables to 6.18 too.)
        let base = TOML.split("[variants.").next().unwrap_or_default();
        let text = base.replace("[machine]", "[cfs]\nsched_latency_ns = \"6ms\"\n[machine]");
        assert!(kernel_scenarios(&scenario(&text), "4.4", &[]).is_ok());
        let e = format!("{:#}", kernel_scenarios(&scenario(&text), "4.4,6.18", &[]).unwrap_err());
        assert!(e.contains("kernel 6.18: t.toml") && e.contains("cfs.sched_latency_ns"), "{e}");
        assert!(e.contains("base_slice_ns"), "{e}");
        // The same for a tunable given with --set.
        let e = format!(
            "{:#}",
            kernel_scenarios(&scenario(TOML), "6.6", &["cfs.sched_min_granularity_ns=1ms".into()]).unwrap_err()
        );
        assert!(e.contains("cfs.sched_min_granularity_ns") && e.contains("6.6"), "{e}");
    }

    /// A variant may choose the kernel: `compare` runs it under that model
    /// end to end (the report's settings and the table's kernel row).
    #[test]
    fn a_variant_setting_kernel_version_runs_under_that_model() {
        let planned = variant_scenarios(&scenario(TOML)).unwrap();
        let labels: Vec<String> = planned.iter().map(|(l, _)| l.clone()).collect();
        assert_eq!(labels, ["base", "new"]);
        let runs: Vec<RunReport> = planned.iter().map(|(_, s)| sim_core::run(s)).collect();
        assert_eq!(runs[0].settings.kernel.version(), "4.4");
        assert_eq!(runs[1].settings.kernel.version(), "6.18");
        let json: serde_json::Value = serde_json::from_str(&runs_json(&runs)).unwrap();
        assert_eq!(json["runs"][1]["settings"]["kernel"], "6.18");
        assert_eq!(json["runs"][1]["settings"]["fair_class"], "eevdf");
        assert_eq!(json["runs"][1]["variant"], "new");
        assert_eq!(json["runs"][0]["settings"]["kernel"], "4.4");
        let text = output::compare_text_named(&runs, &labels);
        let kernel = text.lines().find(|l| l.trim_start().starts_with("kernel")).unwrap_or_default();
        assert!(kernel.ends_with("linux-4.4-cfs  linux-6.18-eevdf"), "{text}");
    }
}
