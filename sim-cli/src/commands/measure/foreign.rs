//! Foreign CPU time: how long tasks the measurement did not start ran on the
//! host CPUs the workload ran on, over the measured window, from `perf
//! sched`'s switch records. On a shared machine (2 vCPUs here) another
//! process's load changes where the balancer puts the workload's threads, so
//! multi-CPU figures can only be trusted when this is small; above
//! `FOREIGN_CPU_WARN_PCT` the report carries a warning naming the commands.
//!
//! Each task on those CPUs is one of: idle (pid 0, not counted), the
//! workload's threads (not counted), the measuring tools (the tasks of this
//! process and of every process it started: worker processes' other
//! threads, `timeout` and perf; counted apart), or foreign (everything else,
//! kernel threads included). Time in interrupts is not in the switch records:
//! it is charged to whichever task it interrupted.

use sim_core::{ForeignCpu, ForeignOnCpu};
use sim_core::{SchedEvent, SchedTextRecord as SchedRecord};
use std::collections::{BTreeMap, BTreeSet};

/// Foreign CPU time above this share of (window × the workload's CPUs), in
/// percent, makes the report warn that its multi-CPU results are not
/// trustworthy: a few percent of another load already moves the balancer.
pub const FOREIGN_CPU_WARN_PCT: f64 = 3.0;

/// How many foreign commands the report names.
const TOP_MAX: usize = 5;

/// The tasks the measurement knows as its own.
pub struct Own<'a> {
    /// The workload's threads.
    pub workload: &'a BTreeSet<u32>,
    /// The measuring tools' tasks (`own_tids`).
    pub tools: &'a BTreeSet<u32>,
}

/// Time on the counted CPUs, by whose it was.
#[derive(Default)]
struct Tally {
    by_cpu: BTreeMap<u16, ForeignOnCpu>,
    by_comm: BTreeMap<String, u64>,
}

impl Tally {
    /// Credits `tid` (named `comm`) with its run on `cpu` during `[since, until)`
    /// clipped to the window `[from, to)`.
    fn credit(
        &mut self,
        own: &Own<'_>,
        cpu: u16,
        (tid, comm): (u32, &str),
        since: u64,
        until: u64,
        window: (u64, u64),
    ) {
        let ns = until.min(window.1).saturating_sub(since.max(window.0));
        let Some(on) = self.by_cpu.get_mut(&cpu) else { return };
        if ns == 0 || tid == 0 || own.workload.contains(&tid) {
            return;
        }
        if own.tools.contains(&tid) {
            on.tools_ns += ns;
        } else {
            on.foreign_ns += ns;
            *self.by_comm.entry(comm.to_string()).or_insert(0) += ns;
        }
    }
}

/// The foreign CPU time on `cpus` (host CPUs) over `[from, to)`. `records`
/// are in time order, as `perf sched script` prints them. As in
/// `sim_core::summarize_sched_text`, a CPU's run before its first switch is credited
/// to the task its first record shows there, from the first record on; a
/// switch whose previous task is not the one known to run (lost events)
/// credits nothing.
pub fn foreign_cpu(records: &[SchedRecord], from: u64, to: u64, cpus: &[u16], own: &Own<'_>) -> ForeignCpu {
    let window = (from, to);
    let mut tally = Tally::default();
    for &cpu in cpus {
        tally.by_cpu.insert(cpu, ForeignOnCpu { host_cpu: cpu, ..ForeignOnCpu::default() });
    }
    let trace_start = records.first().map_or(from, |r| r.time_ns);
    // Per counted CPU: the running task, its comm, and since when.
    let mut current: BTreeMap<u16, (u32, String, u64)> = BTreeMap::new();
    for r in records {
        if r.time_ns >= to {
            break;
        }
        if !tally.by_cpu.contains_key(&r.cpu) {
            continue;
        }
        let running = current.entry(r.cpu).or_insert_with(|| (r.tid, r.comm.clone(), trace_start));
        if let SchedEvent::Switch { prev_pid, next_pid, next_comm, .. } = &r.event {
            if running.0 == *prev_pid {
                let (tid, comm, since) = std::mem::take(running);
                tally.credit(own, r.cpu, (tid, &comm), since, r.time_ns, window);
            }
            *running = (*next_pid, next_comm.clone(), r.time_ns);
        }
    }
    for (cpu, (tid, comm, since)) in &current {
        tally.credit(own, *cpu, (*tid, comm), *since, to, window);
    }
    let mut top: Vec<(String, u64)> = tally.by_comm.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(TOP_MAX);
    let mut foreign = ForeignCpu {
        window_ns: to.saturating_sub(from),
        cpus: tally.by_cpu.into_values().collect(),
        top,
        warning: None,
    };
    foreign.warning = warning(&foreign);
    foreign
}

/// The warning when the foreign share is above `FOREIGN_CPU_WARN_PCT`.
fn warning(f: &ForeignCpu) -> Option<String> {
    let share = f.share_pct();
    if share <= FOREIGN_CPU_WARN_PCT {
        return None;
    }
    let cpus: Vec<String> = f.cpus.iter().map(|c| c.host_cpu.to_string()).collect();
    let top: Vec<String> = f.top.iter().map(|(comm, ns)| format!("{comm} {}", ms(*ns))).collect();
    Some(format!(
        "tasks this measurement did not start ran {share:.1}% of the time on the workload's host CPUs ({}) \
         (above {FOREIGN_CPU_WARN_PCT}%): multi-CPU results (placement, migrations, balancing, delays) are not \
         trustworthy; top foreign commands: {}. Measure again on a quiet machine",
        cpus.join(","),
        top.join(", ")
    ))
}

/// `ns` in milliseconds with one decimal (`12.3 ms`), as the report prints
/// foreign time.
pub fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// The tasks of this process and of every process it started, read from
/// /proc: the measuring tools (and the workload's threads, which the
/// workload set tells apart). A process that is gone, or a /proc entry that
/// cannot be read, is skipped.
pub fn own_tids() -> BTreeSet<u32> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if let Some(ppid) = parse_stat_ppid(&stat) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut tids = BTreeSet::new();
    let mut pending = vec![std::process::id()];
    let mut seen = BTreeSet::new();
    while let Some(pid) = pending.pop() {
        if !seen.insert(pid) {
            continue;
        }
        tids.insert(pid);
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
        tids.extend(tasks.filter_map(|t| t.file_name().to_str().and_then(|n| n.parse::<u32>().ok())));
        pending.extend(children.get(&pid).into_iter().flatten());
    }
    tids
}

/// The parent pid in /proc/PID/stat: `pid (comm) state ppid …`, where the
/// comm may hold spaces and `)`, so the fields are read after the last `)`.
fn parse_stat_ppid(stat: &str) -> Option<u32> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::parse_sched_text as parse_script;

    const REAL: &str = include_str!("../../../../sim-core/src/import/fixtures/real_sched_script.txt");

    fn owns(workload: &[u32], tools: &[u32]) -> (BTreeSet<u32>, BTreeSet<u32>) {
        (workload.iter().copied().collect(), tools.iter().copied().collect())
    }

    /// The captured fixture: three shell spinners (`sh` 32646, 32648, 32649)
    /// as the workload beside a compiler, with perf and its `perf-exec` child
    /// as the tools. The compiler's `rustc` threads took most of both CPUs.
    #[test]
    fn a_compiler_beside_the_workload_is_foreign_and_warned_about() {
        let recs = parse_script(REAL).expect("fixture");
        let (from, to) = (recs[0].time_ns, recs[recs.len() - 1].time_ns + 1);
        let (workload, tools) = owns(&[32646, 32648, 32649], &[32623, 32641]);
        let f = foreign_cpu(&recs, from, to, &[0, 1], &Own { workload: &workload, tools: &tools });
        assert_eq!(f.window_ns, to - from);
        assert_eq!(f.cpus.iter().map(|c| c.host_cpu).collect::<Vec<_>>(), vec![0, 1]);
        assert!(f.cpus.iter().all(|c| c.foreign_ns + c.tools_ns <= f.window_ns), "{f:?}");
        assert!(f.share_pct() > FOREIGN_CPU_WARN_PCT, "{f:?}");
        assert_eq!(f.top[0].0, "rustc", "{:?}", f.top);
        assert!(f.top.len() <= TOP_MAX && f.top.windows(2).all(|w| w[0].1 >= w[1].1), "{:?}", f.top);
        assert!(f.tools_ns() > 0, "perf ran: {f:?}");
        let w = f.warning.as_deref().expect("a warning above the threshold");
        assert!(w.contains("not trustworthy") && w.contains("rustc"), "{w}");
        // Every non-idle task's time on the CPUs is someone's: with nothing
        // foreign, the foreign time is zero and there is no warning.
        let everyone: Vec<u32> = recs
            .iter()
            .flat_map(|r| match &r.event {
                SchedEvent::Switch { prev_pid, next_pid, .. } => vec![r.tid, *prev_pid, *next_pid],
                _ => vec![r.tid],
            })
            .collect();
        let (workload, none) = owns(&everyone, &[]);
        let quiet = foreign_cpu(&recs, from, to, &[0, 1], &Own { workload: &workload, tools: &none });
        assert_eq!((quiet.foreign_ns(), quiet.warning.as_deref()), (0, None), "{quiet:?}");
    }

    fn switch(t: u64, cpu: u16, prev: (u32, &str), next: (u32, &str)) -> String {
        format!(
            "{} {} [{cpu:03}] {}.{:09}: sched:sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state=S ==> next_comm={} next_pid={} next_prio=120\n",
            prev.1,
            prev.0,
            t / 1_000_000_000,
            t % 1_000_000_000,
            prev.1,
            prev.0,
            next.1,
            next.0
        )
    }

    /// A hand-made second on two CPUs: the workload (tid 10 on CPU 0, 11 on
    /// CPU 1) runs, a kworker takes 20 ms of CPU 0 and perf 5 ms of CPU 1:
    /// 1% foreign, below the threshold, so no warning; CPU 2 is not counted.
    /// With a 100 ms `rustc` on CPU 1 too, 6% is above it and named.
    #[test]
    fn a_quiet_second_is_below_the_threshold_and_a_busy_one_above() {
        let ms = 1_000_000u64;
        let base = 100_000 * ms;
        let mut text = String::new();
        text += &switch(base, 0, (0, "swapper/0"), (10, "worker"));
        text += &switch(base, 1, (0, "swapper/1"), (11, "worker"));
        text += &switch(base + 300 * ms, 0, (10, "worker"), (77, "kworker/0:1"));
        text += &switch(base + 320 * ms, 0, (77, "kworker/0:1"), (10, "worker"));
        text += &switch(base + 500 * ms, 1, (11, "worker"), (900, "perf"));
        text += &switch(base + 505 * ms, 1, (900, "perf"), (11, "worker"));
        text += &switch(base + 600 * ms, 2, (0, "swapper/2"), (555, "apt"));
        let busy = text.clone()
            + &switch(base + 700 * ms, 1, (11, "worker"), (4242, "rustc"))
            + &switch(base + 800 * ms, 1, (4242, "rustc"), (11, "worker"));
        let (workload, tools) = owns(&[10, 11], &[900]);
        let own = Own { workload: &workload, tools: &tools };
        let quiet = foreign_cpu(&parse_script(&text).expect("parses"), base, base + 1000 * ms, &[0, 1], &own);
        assert_eq!(
            quiet.cpus,
            vec![
                ForeignOnCpu { host_cpu: 0, foreign_ns: 20 * ms, tools_ns: 0 },
                ForeignOnCpu { host_cpu: 1, foreign_ns: 0, tools_ns: 5 * ms },
            ]
        );
        assert!((quiet.share_pct() - 1.0).abs() < 1e-9, "{}", quiet.share_pct());
        assert_eq!(quiet.top, vec![("kworker/0:1".to_string(), 20 * ms)]);
        assert_eq!(quiet.warning, None);
        let busy = foreign_cpu(&parse_script(&busy).expect("parses"), base, base + 1000 * ms, &[0, 1], &own);
        assert!((busy.share_pct() - 6.0).abs() < 1e-9, "{}", busy.share_pct());
        assert_eq!(busy.top[0], ("rustc".to_string(), 100 * ms));
        let w = busy.warning.expect("6% is above 3%");
        assert!(w.contains("6.0%") && w.contains("rustc 100.0 ms") && w.contains("kworker/0:1 20.0 ms"), "{w}");
        // Clipped to the window: a window of the first 310 ms holds 10 ms of the kworker.
        let clipped = foreign_cpu(&parse_script(&text).expect("parses"), base, base + 310 * ms, &[0, 1], &own);
        assert_eq!(clipped.foreign_ns(), 10 * ms);
        // No records, an empty window: nothing, and no division by zero.
        let empty = foreign_cpu(&[], base, base, &[0], &own);
        assert_eq!((empty.foreign_ns(), empty.share_pct(), empty.warning), (0, 0.0, None));
    }

    #[test]
    fn stat_lines_give_the_parent() {
        assert_eq!(parse_stat_ppid("4242 (sim-cli) S 4200 4242 4200 0 -1"), Some(4200));
        assert_eq!(parse_stat_ppid("77 (a) b) (c) R 1 77 77"), Some(1));
        assert_eq!(parse_stat_ppid("garbage"), None);
        assert_eq!(parse_stat_ppid(""), None);
        // This process is its own, with its threads.
        let own = own_tids();
        assert!(own.contains(&std::process::id()), "{own:?}");
    }
}
