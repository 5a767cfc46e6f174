//! `sim-cli compare`'s runs (the base and each variant, or each kernel) on
//! worker threads (`parallel::map_in_order`, as `sweep` runs its points):
//! reports come back in the runs' order, so the output is the same bytes for
//! any `--jobs`.

use crate::progress;
use sim_core::report::run::ReportSections;
use sim_core::{RunReport, Scenario, Simulation};

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
        let mut sim = Simulation::new(scenario);
        progress::run_to_end_in(&bars, &mut sim, label);
        sim.report_with(sections)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::runs_json;

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
}
