//! `sim-cli compare`: the base and every variant, or the base under each
//! kernel of `--kernels`, run side by side and printed as one table (or JSON,
//! or charts). The runs go on worker threads (`parallel::map_in_order`, as
//! `sweep` runs its points): reports come back in the runs' order, so the
//! output is the same bytes for any `--jobs`.

use crate::args::CompareArgs;
use crate::input::{load, with_sets};
use crate::{charts, output, progress};
use anyhow::{Context, Result, bail};
use sim_core::{ReportSections, RunReport, Scenario, Simulation, runs_json};

/// Runs `a`'s scenarios and returns the table (or JSON) to print.
pub fn compare(a: CompareArgs) -> Result<String> {
    let CompareArgs { common, noise, plot, kernels, jobs, bands } = a;
    let plan = crate::bands::plan(&bands)?;
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
    let base = crate::input::with_noise(base, noise.as_deref())?;
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
    let sections = output::report_sections(plot.is_some());
    let (runs, bands) = match &plan {
        None => (run_all(&planned, self::jobs(jobs, planned.len()), !common.json, sections), Vec::new()),
        Some(p) => banded(&planned, p, jobs, !common.json, sections)?,
    };
    let labels: Vec<String> = planned.into_iter().map(|(label, _)| label).collect();
    if let Some(dir) = &plot {
        let files = charts::compare_charts_labelled(dir, &runs, &labels)?;
        eprintln!("wrote {} charts to {}", files.len(), dir.display());
    }
    if common.json {
        for (r, label) in runs.iter().zip(&labels) {
            output::warn_partial(r, Some(label));
        }
        if plan.is_some() {
            return Ok(sim_core::runs_json_with_bands(&runs, &bands) + "\n");
        }
        return Ok(runs_json(&runs) + "\n");
    }
    if plan.is_some() {
        return Ok(output::compare_text_banded(&runs, &labels, &bands));
    }
    Ok(output::compare_text_named(&runs, &labels))
}

/// `compare`: the base and every variant, each with the `--set` overrides
/// `base` was loaded with, named `base` and by the variant. Every run is
/// built before any starts, so a bad variant fails at once.
fn variant_scenarios(base: &Scenario) -> Result<Vec<(String, Scenario)>> {
    let mut out = vec![("base".to_string(), base.clone())];
    for v in base.variant_names() {
        // An error the --set causes in one variant names that variant.
        let s = base
            .with_variant(v)
            .with_context(|| format!("compare runs every variant; variant `{v}` with the --set"))?;
        out.push((v.to_string(), s));
    }
    Ok(out)
}

/// `compare --phases/--seeds`: every point of every planned run on one pool
/// of threads; each run's point 0 is its report, and its points fold into
/// its band.
fn banded(
    planned: &[(String, Scenario)],
    plan: &sim_core::BandPlan,
    jobs: Option<u16>,
    show: bool,
    sections: ReportSections,
) -> Result<(Vec<RunReport>, Vec<sim_core::Bands>)> {
    let per = crate::bands::point_scenarios(planned, plan)?;
    let all: Vec<(String, Scenario)> = per.iter().flat_map(|(_, runs)| runs.iter().cloned()).collect();
    let mut reports =
        crate::bands::run_all(&all, self::jobs(jobs, all.len()), show, crate::bands::sections(sections, Some(plan)))
            .into_iter();
    let mut runs = Vec::with_capacity(planned.len());
    let mut bands = Vec::with_capacity(planned.len());
    for (points, _) in &per {
        let mine: Vec<RunReport> = reports.by_ref().take(points.len()).collect();
        bands.push(sim_core::bands(points, &mine, plan));
        runs.extend(mine.into_iter().next());
    }
    Ok((runs, bands))
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
    let allowed = sim_core::KernelModel::allowed();
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

/// Worker threads for `runs` runs: `--jobs` if given (clap keeps it within
/// 1..=256), else the available CPUs; never more than the runs, never none.
pub fn jobs(asked: Option<u16>, runs: usize) -> usize {
    let wanted = match asked {
        Some(j) => usize::from(j),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    wanted.min(runs).max(1)
}

/// Runs every planned scenario to its end on `jobs` threads, each taking the
/// next run from a shared counter, and returns the reports in `planned`
/// order, each built with `sections`. With `progress`, each run in progress
/// has its own bar on stderr.
pub fn run_all(
    planned: &[(String, Scenario)],
    jobs: usize,
    progress: bool,
    sections: ReportSections,
) -> Vec<RunReport> {
    let bars = progress::runs(progress);
    crate::parallel::map_in_order(planned, jobs, "compare", |(label, scenario)| {
        let mut sim = Simulation::recording(scenario, sections);
        progress::run_to_end_in(&bars, &mut sim, label);
        sim.report()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One CPU, a hog and a sleeper; `long` runs 20 times as long as the base.
    const TOML: &str = "schema = 1\nseed = 3\nduration = \"50ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"10s\" }]\n[[tasks]]\nname = \"s\"\nprogram = [{ sleep = \"exp(5ms)\" }, { run = \"50us\" }]\n[variants.long]\nduration = \"1s\"\n[variants.new]\n\"kernel.version\" = \"6.18\"\n";

    fn planned() -> Vec<(String, Scenario)> {
        let base = Scenario::from_toml("t.toml", TOML).unwrap();
        let mut out = vec![("base".to_string(), base.clone())];
        for v in ["long", "new"] {
            out.push((v.to_string(), base.with_variant(v).unwrap()));
        }
        out
    }

    #[test]
    fn jobs_default_to_the_cpus_capped_by_the_runs() {
        assert_eq!(jobs(Some(4), 8), 4);
        // Never more threads than runs, and at least one.
        assert_eq!(jobs(Some(256), 3), 3);
        assert_eq!(jobs(Some(4), 0), 1);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(jobs(None, 1000), cpus.min(1000));
        assert_eq!(jobs(None, 1), 1);
    }

    /// Two threads: usually one takes `base` then `new` (both 50 ms
    /// simulated) while the other is still on `long` (1 s), so `new` ends
    /// before `long`; the reports still come back in planned order, and the
    /// JSON is the same bytes as a one-thread run's.
    #[test]
    fn reports_come_back_in_planned_order_whatever_the_jobs() {
        let planned = planned();
        let one = run_all(&planned, 1, false, ReportSections::ALL);
        let two = run_all(&planned, 2, false, ReportSections::ALL);
        let names: Vec<Option<&str>> = two.iter().map(|r| r.variant.as_deref()).collect();
        assert_eq!(names, [None, Some("long"), Some("new")]);
        assert_eq!(two[1].sim_time_ns, 1_000_000_000);
        assert_eq!(runs_json(&one), runs_json(&two));
        assert_eq!(runs_json(&run_all(&planned, 8, false, ReportSections::ALL)), runs_json(&one));
    }

    /// One CPU, a hog and a sleeper, 4.4, with a variant that moves it to 6.18.
    const KERNELS_TOML: &str = "schema = 1\nseed = 3\nduration = \"100ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n[[tasks]]\nname = \"s\"\nprogram = [{ sleep = \"exp(5ms)\" }, { run = \"50us\" }]\n[variants.new]\n\"kernel.version\" = \"6.18\"\n";

    fn scenario(text: &str) -> Scenario {
        Scenario::from_toml("t.toml", text).unwrap()
    }

    #[test]
    fn kernels_run_the_base_once_per_model_named_by_it() {
        let sets = vec!["seed=9".to_string()];
        let planned = kernel_scenarios(&scenario(KERNELS_TOML), "4.4, 6.6,6.12,6.18", &sets).unwrap();
        let labels: Vec<&str> = planned.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["linux-4.4-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf", "linux-6.18-eevdf"]);
        for (label, s) in &planned {
            assert_eq!(&s.spec.kernel.label(), label);
            assert_eq!(s.spec.seed, 9, "--set applies to every kernel");
            assert_eq!(s.variant(), None, "the base, not a variant");
        }
        // The same scenario as `--set kernel.version=6.18`.
        let by_set = with_sets(&scenario(KERNELS_TOML), &["seed=9".into(), "kernel.version=6.18".into()]).unwrap();
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
        let e = format!("{:#}", kernel_scenarios(&scenario(KERNELS_TOML), "4.4,6.10", &[]).unwrap_err());
        assert!(e.contains("--kernels 4.4,6.10: kernel 6.10: t.toml"), "{e}");
        assert!(e.contains("kernel.version") && e.contains("\"6.10\""), "{e}");
        assert!(e.contains("\"4.4\", \"6.6\", \"6.12\", \"6.18\""), "{e}");
        for (list, sets, needle) in [
            ("6.18,6.18", vec![], "6.18 is listed twice"),
            ("4.4,,6.6", vec![], "separated by commas"),
            ("6.6", vec!["kernel.version=4.4".to_string()], "both choose the kernel"),
        ] {
            let e = format!("{:#}", kernel_scenarios(&scenario(KERNELS_TOML), list, &sets).unwrap_err());
            assert!(e.contains(needle), "{list}: {e}");
        }
    }

    /// A scenario with CFS tunables runs under 4.4 only: on 6.x validation
    /// refuses it, naming the file, the key and what the model has instead.
    #[test]
    fn kernels_refuse_cfs_tunables_on_eevdf_naming_file_and_key() {
        // (Without the variant: it would move these tunables to 6.18 too.)
        let base = KERNELS_TOML.split("[variants.").next().unwrap_or_default();
        let text = base.replace("[machine]", "[cfs]\nsched_latency_ns = \"6ms\"\n[machine]");
        assert!(kernel_scenarios(&scenario(&text), "4.4", &[]).is_ok());
        let e = format!("{:#}", kernel_scenarios(&scenario(&text), "4.4,6.18", &[]).unwrap_err());
        assert!(e.contains("kernel 6.18: t.toml") && e.contains("cfs.sched_latency_ns"), "{e}");
        assert!(e.contains("base_slice_ns"), "{e}");
        // The same for a tunable given with --set.
        let e = format!(
            "{:#}",
            kernel_scenarios(&scenario(KERNELS_TOML), "6.6", &["cfs.sched_min_granularity_ns=1ms".into()]).unwrap_err()
        );
        assert!(e.contains("cfs.sched_min_granularity_ns") && e.contains("6.6"), "{e}");
    }

    /// A variant may choose the kernel: `compare` runs it under that model
    /// end to end (the report's settings and the table's kernel row).
    #[test]
    fn a_variant_setting_kernel_version_runs_under_that_model() {
        let planned = variant_scenarios(&scenario(KERNELS_TOML)).unwrap();
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
