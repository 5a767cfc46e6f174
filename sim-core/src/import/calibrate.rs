//! The machine's own noise, read from scheduler traces of the calibration
//! runs (`sim-cli calibrate`, scenarios/calibration/): a probe thread that
//! sleeps on a timer and runs a known amount of work, alone on its CPU or
//! beside a hog it always preempts. From each trace:
//!
//! - every wake-up of the probe, classified by what its CPU was doing when the
//!   `sched_waking` fired: idle (the line's task is the idle task, pid 0: the
//!   wake-up pays the idle exit), running a thread of the calibration's own
//!   workload (the hog: a wake-up that preempts), or running a foreign thread
//!   (kept apart: the host background covers that time). Its delay runs from
//!   that `sched_waking` to the `sched_switch` that runs the probe;
//! - the probe's time on the CPU per activation (switch-in after a wake-up to
//!   the switch-out that blocks it), whose excess over the declared work is
//!   the kernel's time per activation charged to the task;
//! - the foreign threads, pooled per CPU by the importer's own background
//!   fitting (`build::background_pools`).
//!
//! `fit_machine_noise` turns the traces into a `[machine.noise]` section:
//! quantile tables (`empirical(…)`) of the whole distributions, not two numbers.

use std::collections::{BTreeMap, BTreeSet};

use super::build::{BackgroundPool, background_pools};
use super::sched_text::{SchedEvent, SchedLine, parse_line_kind};
use super::sketch::Sketch;
use super::{ImportError, ImportOptions, Importer};
use crate::workload::dist::Dist;

/// Activations kept per trace (memory stays bounded on a long trace).
pub const ON_CPU_SAMPLES_MAX: usize = 1 << 20;

/// What the probe's CPU was doing when a wake-up of the probe fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeOnto {
    Idle,
    /// A thread of the calibration's workload (the hog).
    Workload,
    /// Any other thread (kernel threads, other processes).
    Foreign,
}

/// The samples of one calibration trace.
#[derive(Clone, Debug, Default)]
pub struct CalibrationSamples {
    /// Wake-up delays (`sched_waking` → switch-in) of the probe, by what its CPU ran.
    pub onto_idle: Sketch,
    pub onto_workload: Sketch,
    pub onto_foreign: Sketch,
    /// The probe's time on the CPU per activation, exact (the first
    /// `ON_CPU_SAMPLES_MAX`; a calibration run has about ten thousand).
    pub on_cpu: Vec<u64>,
    /// Foreign threads pooled per CPU (the importer's background pools).
    pub background: BTreeMap<u16, BackgroundPool>,
    /// The CPUs the probe ran on.
    pub probe_cpus: BTreeSet<u16>,
    pub window_ns: u64,
    /// The trace's name, for the notes.
    pub source: String,
}

impl CalibrationSamples {
    /// The foreign threads' share of the probe's busiest-foreign CPU.
    pub fn foreign_share(&self) -> f64 {
        self.background
            .iter()
            .filter(|(c, _)| self.probe_cpus.contains(c))
            .map(|(_, p)| p.runtime_ns as f64 / self.window_ns.max(1) as f64)
            .fold(0.0, f64::max)
    }
}

/// A calibration run whose probe CPU was more than this busy with foreign
/// threads was not quiet (a build, another measurement): it is left out.
pub const FOREIGN_SHARE_MAX: f64 = 0.01;

#[derive(Default)]
struct ProbeState {
    /// The first `sched_waking` since it blocked, and what its CPU ran then.
    woken: Option<(u64, WakeOnto)>,
    /// Switched in after a wake-up at this time (its activation is open).
    running_since: Option<u64>,
    /// Time on the CPU so far in the open activation.
    on_cpu: u64,
    in_activation: bool,
}

/// Streams one calibration trace (a `perf sched script` text).
pub struct CalibrationTrace {
    importer: Importer,
    source: String,
    probe: String,
    workload: BTreeSet<String>,
    /// Per CPU, the comm and pid running there (from `sched_switch`).
    curr: BTreeMap<u16, (u32, String)>,
    probes: BTreeMap<u32, ProbeState>,
    out: CalibrationSamples,
}

impl CalibrationTrace {
    /// `probe`: the comm of the probe thread; `workload`: the comms of the
    /// calibration's other threads (never counted as background).
    pub fn new(source: &str, probe: &str, workload: &[&str]) -> CalibrationTrace {
        let opts = ImportOptions { source: source.to_string(), ..ImportOptions::default() };
        CalibrationTrace {
            importer: Importer::new(opts),
            source: source.to_string(),
            probe: probe.to_string(),
            workload: workload.iter().map(|s| s.to_string()).collect(),
            curr: BTreeMap::new(),
            probes: BTreeMap::new(),
            out: CalibrationSamples::default(),
        }
    }

    fn onto(&self, cpu: u16, header_tid: u32, header_comm: &str) -> WakeOnto {
        let (tid, comm) = match self.curr.get(&cpu) {
            Some((t, c)) => (*t, c.as_str()),
            None => (header_tid, header_comm),
        };
        if tid == 0 {
            WakeOnto::Idle
        } else if comm == self.probe || self.workload.contains(comm) {
            WakeOnto::Workload
        } else {
            WakeOnto::Foreign
        }
    }

    /// One line of the trace.
    pub fn push_line(&mut self, raw: &str) -> Result<(), ImportError> {
        self.importer.push_line(raw)?;
        // The importer accepted the line, so it parses.
        let Ok(SchedLine::Record(r)) = parse_line_kind(raw) else { return Ok(()) };
        match &r.event {
            SchedEvent::Waking { comm, pid, target_cpu, .. } if *comm == self.probe => {
                // A timer wake-up fires on the probe's own CPU: the line's
                // task is what that CPU ran (the idle task when idle).
                let onto = if r.cpu == *target_cpu {
                    self.onto(r.cpu, r.tid, &r.comm)
                } else {
                    self.onto(*target_cpu, u32::MAX, "")
                };
                let p = self.probes.entry(*pid).or_default();
                if p.woken.is_none() && p.running_since.is_none() {
                    p.woken = Some((r.time_ns, onto));
                }
            }
            SchedEvent::Switch { prev_comm, prev_pid, prev_state, next_comm, next_pid, .. } => {
                let t = r.time_ns;
                if *prev_comm == self.probe
                    && let Some(p) = self.probes.get_mut(prev_pid)
                    && let Some(since) = p.running_since.take()
                {
                    p.on_cpu += t.saturating_sub(since);
                    // Blocked (not preempted): the activation ends.
                    if !prev_state.starts_with('R') && p.in_activation {
                        if self.out.on_cpu.len() < ON_CPU_SAMPLES_MAX {
                            self.out.on_cpu.push(p.on_cpu);
                        }
                        p.in_activation = false;
                    }
                }
                if *next_comm == self.probe {
                    let p = self.probes.entry(*next_pid).or_default();
                    if let Some((at, onto)) = p.woken.take() {
                        let d = t.saturating_sub(at);
                        match onto {
                            WakeOnto::Idle => self.out.onto_idle.add(d),
                            WakeOnto::Workload => self.out.onto_workload.add(d),
                            WakeOnto::Foreign => self.out.onto_foreign.add(d),
                        }
                        p.in_activation = true;
                        p.on_cpu = 0;
                    }
                    p.running_since = Some(t);
                    self.out.probe_cpus.insert(r.cpu);
                }
                self.curr.insert(r.cpu, (*next_pid, next_comm.clone()));
            }
            _ => {}
        }
        Ok(())
    }

    /// The samples, or why the trace holds none.
    pub fn finish(self) -> Result<CalibrationSamples, ImportError> {
        let CalibrationTrace { mut importer, source, probe, workload, mut out, .. } = self;
        let (tracker, window) = importer.finish_tracker()?;
        let own: BTreeSet<u32> =
            tracker.threads.values().filter(|t| t.comm == probe || workload.contains(&t.comm)).map(|t| t.tid).collect();
        out.background = background_pools(&tracker, window, &own);
        out.window_ns = window;
        out.source = source.clone();
        if out.onto_idle.count() + out.onto_workload.count() + out.onto_foreign.count() == 0 {
            return Err(ImportError {
                source,
                line: None,
                text: String::new(),
                why: format!("no wake-up of the probe `{probe}` in the trace: not a calibration run's recording"),
            });
        }
        Ok(out)
    }
}

/// The `[machine.noise]` a set of calibration traces gives.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineNoiseFit {
    /// Wake-ups onto an idle CPU (the idle runs' probe, CPU idle at the wake-up).
    pub wakeup_idle: Option<Dist>,
    /// Wake-ups that preempt a running task (the busy runs' probe, its CPU running the hog).
    pub wakeup_busy: Option<Dist>,
    /// The probe's time on the CPU per activation beyond its declared work.
    pub kernel_per_activation: Option<Dist>,
    /// Per CPU the probe ran on in the busy runs: the foreign threads as one background task
    /// (gap between activations, CPU time per activation).
    pub background: Vec<(u16, Dist, Dist, String)>,
    /// The evidence, one sentence each.
    pub notes: Vec<String>,
}

/// Fits the machine's noise: `idle` traces are the probe alone, `busy` ones
/// beside a hog; `work_ns` is the probe's declared work per activation.
pub fn fit_machine_noise(idle: &[CalibrationSamples], busy: &[CalibrationSamples], work_ns: u64) -> MachineNoiseFit {
    let mut notes = Vec::new();
    let quiet = |runs: &[CalibrationSamples], notes: &mut Vec<String>| -> Vec<CalibrationSamples> {
        let mut kept = Vec::new();
        for r in runs {
            let share = r.foreign_share();
            if share > FOREIGN_SHARE_MAX {
                notes.push(format!(
                    "left out {}: foreign threads took {:.1} % of the probe's CPU (more than {:.0} %: the machine was not quiet)",
                    r.source,
                    share * 100.0,
                    FOREIGN_SHARE_MAX * 100.0
                ));
            } else {
                kept.push(r.clone());
            }
        }
        kept
    };
    let idle = &quiet(idle, &mut notes)[..];
    let busy = &quiet(busy, &mut notes)[..];
    let merged = |runs: &[CalibrationSamples], f: fn(&CalibrationSamples) -> &Sketch| {
        let mut s = Sketch::default();
        for r in runs {
            s.merge(f(r));
        }
        s
    };
    let dur = crate::time::format_duration;
    let describe = |what: &str, s: &Sketch| {
        format!(
            "{what}: {} wake-ups, p50 {}, p99 {}, p99.9 {}, max {}",
            s.count(),
            dur(s.quantile(0.5)),
            dur(s.quantile(0.99)),
            dur(s.quantile(0.999)),
            dur(s.max())
        )
    };
    let idle_s = merged(idle, |r| &r.onto_idle);
    let busy_s = merged(busy, |r| &r.onto_workload);
    if idle_s.count() > 0 {
        notes.push(describe("wakeup_idle (idle runs, CPU idle at the wake-up)", &idle_s));
    }
    if busy_s.count() > 0 {
        notes.push(describe("wakeup_busy (busy runs, the probe preempting the hog)", &busy_s));
    }
    let foreign = merged(idle, |r| &r.onto_foreign).count() + merged(busy, |r| &r.onto_foreign).count();
    if foreign > 0 {
        notes.push(format!(
            "{foreign} wake-ups found a foreign thread on the CPU: left out of both tables (the background below covers that time)"
        ));
    }
    // Kernel time per activation: from the idle runs, where nothing preempts the probe.
    let mut excess = Sketch::default();
    for v in idle.iter().flat_map(|r| r.on_cpu.iter()) {
        excess.add(v.saturating_sub(work_ns));
    }
    if excess.count() > 0 {
        notes.push(format!(
            "kernel_per_activation: the probe's time on the CPU per activation (idle runs, {} activations) minus its {} of work: mean {}, p50 {}, p99 {}",
            excess.count(),
            dur(work_ns),
            dur(excess.mean().round() as u64),
            dur(excess.quantile(0.5)),
            dur(excess.quantile(0.99))
        ));
    }
    // Host background on the CPUs the probe ran on, over the busy runs: what
    // a workload that keeps its CPU busy competes with. On an idle CPU more
    // foreign work lands (an unpinned thread's wake-up is placed on an idle
    // CPU: select_idle_sibling, 6.18 fair.c), about twice as much on
    // the development VM, which a busy CPU sends elsewhere.
    let probe_cpus: BTreeSet<u16> = busy.iter().flat_map(|r| r.probe_cpus.iter().copied()).collect();
    let mut pools: BTreeMap<u16, BackgroundPool> = BTreeMap::new();
    let window: u64 = busy.iter().map(|r| r.window_ns).sum();
    for r in busy {
        for (&cpu, p) in r.background.iter().filter(|(c, _)| probe_cpus.contains(c)) {
            pools.entry(cpu).or_default().merge(p);
        }
    }
    let idle_share: f64 = idle.iter().map(|r| r.foreign_share()).sum::<f64>() / idle.len().max(1) as f64;
    if !idle.is_empty() {
        notes.push(format!(
            "foreign threads took {:.2} % of the probe's CPU in the idle runs (not used: the background is the busy runs')",
            idle_share * 100.0
        ));
    }
    let mut background = Vec::new();
    for (cpu, mut p) in pools {
        // A CPU with no foreign thread in one run still spent that run's window.
        p.window_ns = window;
        let (gap, burst) = p.gap_and_burst();
        let note = p.note(cpu);
        notes.push(note.clone());
        background.push((cpu, gap, burst, note));
    }
    MachineNoiseFit {
        wakeup_idle: (idle_s.count() > 0).then(|| idle_s.dist()),
        wakeup_busy: (busy_s.count() > 0).then(|| busy_s.dist()),
        kernel_per_activation: (excess.count() > 0).then(|| excess.dist()),
        background,
        notes,
    }
}

impl MachineNoiseFit {
    /// The `[machine.noise]` section as TOML, its evidence as comments after `header` (comment lines).
    pub fn to_toml(&self, header: &[String]) -> String {
        let mut out = String::new();
        for h in header {
            out.push_str(&format!("# {h}\n"));
        }
        for n in &self.notes {
            out.push_str(&format!("# {n}\n"));
        }
        out.push_str("\n[machine.noise]\n");
        let mut key = |k: &str, d: &Option<Dist>| {
            if let Some(d) = d {
                out.push_str(&format!("{k} = \"{d}\"\n"));
            }
        };
        key("wakeup_idle", &self.wakeup_idle);
        key("wakeup_busy", &self.wakeup_busy);
        key("kernel_per_activation", &self.kernel_per_activation);
        for (cpu, every, run, _) in &self.background {
            out.push_str(&format!(
                "\n[[machine.noise.background]]\nname = \"host-bg-c{cpu}\"\ncpu = {cpu}\nevery = \"{every}\"\nrun = \"{run}\"\n"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf sched script lines (`--ns`, pid/tid form).
    fn line(comm: &str, tid: u32, cpu: u16, t_ns: u64, payload: &str) -> String {
        format!("{comm:>16} {tid:>6}/{tid:<6} [{cpu:03}] {}.{:09}: {payload}", t_ns / 1_000_000_000, t_ns % 1_000_000_000)
    }
    fn switch(prev: (&str, u32), state: &str, next: (&str, u32)) -> String {
        format!(
            "sched:sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
            prev.0, prev.1, next.0, next.1
        )
    }
    fn waking(comm: &str, pid: u32) -> String {
        format!("sched:sched_waking: comm={comm} pid={pid} prio=120 target_cpu=000")
    }

    /// A probe (pid 10) waking every 2 ms for 30 us of work (plus `extra` ns),
    /// onto an idle CPU or, with a hog (pid 11), onto the hog; a kworker (pid 20)
    /// runs 5 us once every 4th cycle, and once holds the CPU at a wake-up.
    fn trace(hog: bool, extra: u64, cycles: u64) -> Vec<String> {
        let mut v = Vec::new();
        let base = 1_000_000_000u64;
        let other: (&str, u32) = if hog { ("hog", 11) } else { ("swapper/0", 0) };
        v.push(line(other.0, other.1, 0, base, &switch(("probe", 10), "S", other)));
        for k in 0..cycles {
            let t = base + 2_000_000 * (k + 1);
            let lat = if hog { 8_000 } else { 14_000 } + (k % 10) * 1_000;
            if k == 5 {
                // A kworker holds the CPU when the probe's timer fires.
                v.push(line(other.0, other.1, 0, t - 4_000, &waking("kworker/0:1", 20)));
                v.push(line(other.0, other.1, 0, t - 3_000, &switch(other, "R", ("kworker/0:1", 20))));
                v.push(line("kworker/0:1", 20, 0, t, &waking("probe", 10)));
                v.push(line("kworker/0:1", 20, 0, t + 50_000, &switch(("kworker/0:1", 20), "I", ("probe", 10))));
            } else {
                v.push(line(other.0, other.1, 0, t, &waking("probe", 10)));
                v.push(line(other.0, other.1, 0, t + lat, &switch(other, "R", ("probe", 10))));
            }
            let start = if k == 5 { t + 50_000 } else { t + lat };
            let end = start + 30_000 + extra;
            if k % 4 == 3 {
                v.push(line("probe", 10, 0, end - 1_000, &waking("kworker/0:1", 20)));
                v.push(line("probe", 10, 0, end, &switch(("probe", 10), "S", ("kworker/0:1", 20))));
                v.push(line("kworker/0:1", 20, 0, end + 5_000, &switch(("kworker/0:1", 20), "I", other)));
            } else {
                v.push(line("probe", 10, 0, end, &switch(("probe", 10), "S", other)));
            }
        }
        v
    }

    fn samples(hog: bool, extra: u64) -> CalibrationSamples {
        let mut c = CalibrationTrace::new("t", "probe", &["hog"]);
        for l in trace(hog, extra, 400) {
            c.push_line(&l).expect("line");
        }
        c.finish().expect("samples")
    }

    #[test]
    fn wake_ups_are_split_by_what_the_cpu_ran() {
        let idle = samples(false, 6_000);
        assert_eq!((idle.onto_idle.count(), idle.onto_workload.count(), idle.onto_foreign.count()), (399, 0, 1));
        assert_eq!(idle.onto_idle.min(), 14_000);
        assert_eq!(idle.onto_foreign.max(), 50_000);
        let busy = samples(true, 6_000);
        assert_eq!((busy.onto_idle.count(), busy.onto_workload.count()), (0, 399));
        assert_eq!(busy.onto_workload.min(), 8_000);
        // 400 activations of 36 us each on the CPU.
        assert_eq!(idle.on_cpu.len(), 400);
        assert!(idle.on_cpu.iter().all(|&v| v == 36_000));
        // The kworker is background, on CPU 0; the hog and the probe are not.
        let pool = &idle.background[&0];
        assert_eq!(pool.threads, 1);
        assert!(!busy.background.values().any(|p| p.threads > 1), "the hog is the workload's");
    }

    #[test]
    fn the_fit_gives_two_components_the_kernel_time_and_the_background() {
        let fit = fit_machine_noise(&[samples(false, 6_000)], &[samples(true, 6_000)], 30_000);
        let idle = fit.wakeup_idle.as_ref().expect("idle");
        let busy = fit.wakeup_busy.as_ref().expect("busy");
        assert!((idle.mean_ns() - 18_500.0).abs() < 100.0, "{idle}");
        assert!((busy.mean_ns() - 12_500.0).abs() < 100.0, "{busy}");
        assert_eq!(fit.kernel_per_activation, Some(Dist::Const(6_000)));
        assert_eq!(fit.background.len(), 1);
        let (cpu, every, run, _) = &fit.background[0];
        assert_eq!(*cpu, 0);
        // About 100 kworker activations of 5 us (plus one of 3 us + 50 us) in ~0.8 s.
        assert!(run.mean_ns() > 4_000.0 && run.mean_ns() < 7_000.0, "{run}");
        assert!(every.mean_ns() > 6e6 && every.mean_ns() < 9e6, "{every}");
        // A run whose CPU a foreign thread kept busy is left out.
        let mut noisy = samples(true, 6_000);
        noisy.background.get_mut(&0).expect("pool").runtime_ns = noisy.window_ns / 20;
        let fit2 = fit_machine_noise(&[samples(false, 6_000)], &[samples(true, 6_000), noisy], 30_000);
        assert_eq!(fit2.wakeup_busy, fit.wakeup_busy);
        assert!(fit2.notes.iter().any(|n| n.starts_with("left out t: foreign threads took 5.0 %")), "{:?}", fit2.notes);
        let toml = fit.to_toml(&["calibrated".into()]);
        assert!(toml.contains("[machine.noise]\nwakeup_idle = \"empirical("), "{toml}");
        assert!(toml.contains("kernel_per_activation = \"6us\""), "{toml}");
        assert!(toml.contains("[[machine.noise.background]]\nname = \"host-bg-c0\"\ncpu = 0\n"), "{toml}");
        // What is written parses as distributions.
        let v: toml::Value = toml::from_str(&toml).expect("toml");
        let n = &v["machine"]["noise"];
        for k in ["wakeup_idle", "wakeup_busy", "kernel_per_activation"] {
            Dist::parse(n[k].as_str().expect(k)).expect(k);
        }
        // And a scenario takes it as its machine model (`--noise`).
        let base = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 1\n[[tasks]]\nname = \"a\"\n\
                    program = [{ sleep = \"1ms\" }, { run = \"50us\" }]\n";
        let s = crate::Scenario::from_toml("t.toml", base).expect("base").with_noise("noise.toml", &toml).expect("noise");
        let m = s.spec.machine.noise.as_ref().expect("section");
        assert_eq!((m.background.len(), m.background[0].cpu), (1, 0));
    }

    #[test]
    fn a_trace_without_the_probe_is_refused() {
        let mut c = CalibrationTrace::new("t", "nobody", &[]);
        for l in trace(false, 0, 10) {
            c.push_line(&l).expect("line");
        }
        let e = c.finish().expect_err("no probe");
        assert!(e.to_string().contains("no wake-up of the probe `nobody`"), "{e}");
    }
}
