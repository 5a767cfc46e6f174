//! `sim-cli calibrate`: the machine's own noise, measured, as a
//! `[machine.noise]` section that `run --noise`/`validate --noise` pass on.
//!
//! It measures two fixed calibration scenarios (scenarios/calibration/,
//! compiled in) with `measure`'s harness and perf, K times each, keeps each
//! recording's `sched.txt`, and reads them with the core's calibration reader
//! (`sim_core::CalibrationTrace`): the probe's wake-ups onto an idle CPU
//! (`idle.toml`, the probe alone) and onto a busy one (`busy.toml`, beside a
//! nice-19 hog it always preempts), its CPU time per activation beyond its
//! work, and the foreign threads on its CPU (the importer's background
//! fitting). Neither scenario is a configuration `validate` judges, and nothing
//! is fitted per configuration. `--from DIR` re-reads a kept set of recordings.

use super::Options;
use anyhow::{Context, Result, anyhow, bail};
use sim_core::{CalibrationSamples, CalibrationTrace, MachineNoiseFit, fit_machine_noise, format_duration};
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// The calibration runs: (name, scenario text).
pub const RUNS: [(&str, &str); 2] = [
    ("idle", include_str!("../../../../scenarios/calibration/idle.toml")),
    ("busy", include_str!("../../../../scenarios/calibration/busy.toml")),
];

/// The probe's comm and its work per activation (both scenarios).
const PROBE: &str = "probe";
const PROBE_WORK_NS: u64 = 30_000;
/// The calibration's other thread (busy.toml).
const WORKLOAD: [&str; 1] = ["hog"];

/// The most repeats accepted (each run is 20 s unless `--duration`).
pub const REPEAT_MAX: u32 = 20;

pub struct Args {
    pub repeat: u32,
    pub duration: Option<String>,
    pub cpus: Option<String>,
    /// Where the recordings go (`DIR/idle-1/sched.txt`, …); a temporary directory when None.
    pub keep: Option<PathBuf>,
    /// Read kept recordings instead of measuring.
    pub from: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub progress: bool,
}

/// `DIR/NAME-K`: where run K (from 1) of calibration NAME keeps its recording.
fn run_dir(dir: &Path, name: &str, k: u32) -> PathBuf {
    dir.join(format!("{name}-{k}"))
}

/// Reads one kept `sched.txt`.
fn read_trace(path: &Path) -> Result<CalibrationSamples> {
    let mut c = CalibrationTrace::new(&path.display().to_string(), PROBE, &WORKLOAD);
    let mut r = BufReader::with_capacity(1 << 16, crate::commands::import::open(path)?);
    let bar = crate::progress::bar(0, "lines", false);
    crate::commands::import::feed(&mut r, path, &bar, |l| c.push_line(l))?;
    c.finish().map_err(|e| anyhow!("{e}"))
}

/// The recordings of `DIR` (`idle-K/sched.txt`, `busy-K/sched.txt`, K from 1 while present).
fn read_dir(dir: &Path) -> Result<(Vec<CalibrationSamples>, Vec<CalibrationSamples>, u32)> {
    let mut sets = [Vec::new(), Vec::new()];
    for (i, (name, _)) in RUNS.iter().enumerate() {
        for k in 1..=REPEAT_MAX {
            let p = run_dir(dir, name, k).join("sched.txt");
            if !p.exists() {
                break;
            }
            sets[i].push(read_trace(&p)?);
        }
        if sets[i].is_empty() {
            bail!(
                "--from {}: no `{name}-1/sched.txt` there (a directory `calibrate --keep DIR` wrote holds idle-K/ and busy-K/)",
                dir.display()
            );
        }
    }
    let [idle, busy] = sets;
    let n = idle.len().min(busy.len()) as u32;
    Ok((idle, busy, n))
}

/// Measures the calibration runs into `dir`.
fn measure_into(dir: &Path, a: &Args) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in RUNS {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
        for k in 1..=a.repeat {
            if a.progress {
                eprintln!("calibrate: {name} run {k} of {}", a.repeat);
            }
            let opts = Options {
                variant: None,
                sets: Vec::new(),
                duration: a.duration.clone(),
                cpus: a.cpus.clone(),
                apply_sysctls: false,
                ignore_limiters: false,
                io_dir: None,
                no_perf: false,
                perf_data: Some(run_dir(dir, name, k)),
                progress: a.progress,
            };
            let (report, _) = super::measure(&file, &opts)?;
            super::warn_foreign(&report);
        }
    }
    Ok(())
}

/// Runs (or re-reads) the calibration and returns the `[machine.noise]` file's text.
pub fn calibrate(a: &Args) -> Result<String> {
    if a.repeat == 0 || a.repeat > REPEAT_MAX {
        bail!("--repeat {}: must be 1 to {REPEAT_MAX}", a.repeat);
    }
    let mut header = Vec::new();
    let (idle, busy, n) = match &a.from {
        Some(dir) => {
            let got = read_dir(dir)?;
            header.push(format!(
                "machine noise calibrated by `sim-cli calibrate` from the recordings in {}",
                dir.display()
            ));
            got
        }
        None => {
            let tmp;
            let dir = match &a.keep {
                Some(d) => d.clone(),
                None => {
                    tmp = tempfile_dir()?;
                    tmp.clone()
                }
            };
            measure_into(&dir, a)?;
            let got = read_dir(&dir)?;
            if a.keep.is_none() {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let host = super::host::probe().context("reading the host's kernel")?;
            header.push(format!(
                "machine noise calibrated by `sim-cli calibrate` on Linux {} ({} CPUs online{})",
                host.kernel_release,
                host.cpus_online.len(),
                if host.sched_cmdline_non_upstream.is_empty() {
                    String::new()
                } else {
                    format!("; non-upstream scheduler options: {}", host.sched_cmdline_non_upstream.join(" "))
                }
            ));
            got
        }
    };
    header.push(format!(
        "{n} run(s) each of scenarios/calibration/idle.toml (the probe alone) and busy.toml (beside a nice-19 hog); probe: a 2ms timer, {} of work",
        format_duration(PROBE_WORK_NS)
    ));
    header.push("pass it on with `sim-cli validate FILE --noise THIS` or `sim-cli run FILE --noise THIS`".into());
    let fit: MachineNoiseFit = fit_machine_noise(&idle, &busy, PROBE_WORK_NS);
    if fit.wakeup_idle.is_none() || fit.wakeup_busy.is_none() {
        bail!(
            "calibration: no quiet run of {} left to fit ({}); measure again on a quiet machine",
            if fit.wakeup_idle.is_none() { "idle.toml" } else { "busy.toml" },
            fit.notes.join("; ")
        );
    }
    let text = fit.to_toml(&header);
    if let Some(out) = &a.output {
        std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(text)
}

/// A fresh private directory under the system's temporary directory.
fn tempfile_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir().join(format!("schedlab-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_in_runs_are_the_shipped_files_and_load() {
        for (name, text) in RUNS {
            let s = sim_core::Scenario::from_toml(&format!("{name}.toml"), text).expect("loads");
            assert_eq!(s.spec.tasks[0].name, PROBE);
            assert_eq!(s.spec.cpus, 1);
        }
        assert!(RUNS[1].1.contains("name = \"hog\"") && RUNS[1].1.contains("nice = 19"));
    }

    #[test]
    fn bad_arguments_are_refused() {
        let a = |repeat: u32, from: Option<&str>| Args {
            repeat,
            duration: None,
            cpus: None,
            keep: None,
            from: from.map(PathBuf::from),
            output: None,
            progress: false,
        };
        let e = calibrate(&a(0, None)).expect_err("0 repeats");
        assert!(e.to_string().contains("--repeat 0: must be 1 to 20"), "{e}");
        let e = calibrate(&a(21, None)).expect_err("21 repeats");
        assert!(e.to_string().contains("--repeat 21"), "{e}");
        let dir = std::env::temp_dir().join(format!("schedlab-cal-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let e = calibrate(&a(3, Some(dir.to_str().expect("utf8")))).expect_err("empty dir");
        assert!(e.to_string().contains("no `idle-1/sched.txt` there"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
