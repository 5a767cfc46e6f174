//! Parses the text of `perf sched script` (and `perf script`, ftrace,
//! `trace-cmd report`) for the scheduler tracepoints `sim-cli measure` and
//! `sim-cli import` need, and turns the records into the per-thread and
//! per-CPU statistics the simulator reports: wakeup delay, preemption delay,
//! runtime (from the switches, and as the kernel charged it through
//! sched_stat_runtime), switches, migrations and CPU busy time.
//!
//! Pure: text in, values out, no I/O. The line parser (sched_line.rs, its
//! names re-exported here) follows the rules in formats.md §1 "Import format
//! (perf script)": a line is anchored on its `[CPU]` field and the timestamp
//! after it, and a `sched_switch` payload on its `==>`, because a comm may
//! hold spaces, `-` and `:`. Every `key=` field that follows a comm is found
//! from the right, so no comm can fool it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

#[path = "sched_line.rs"]
mod line;
pub use line::{SchedEvent, SchedLine, SchedRecord, TraceHeader, parse_line_kind};

/// A line of `perf sched script` text that names one of the six events
/// [`parse_script`] reads but cannot be read. `line` counts from 1.
#[derive(Debug)]
pub struct ParseError {
    pub line: usize,
    pub text: String,
    pub why: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: String = self.text.chars().take(80).collect();
        let more = if self.text.chars().count() > 80 { "…" } else { "" };
        write!(f, "perf sched script line {}: {}: `{shown}{more}`", self.line, self.why)
    }
}

impl std::error::Error for ParseError {}

/// Lines of other events (sched_stat_wait/sleep/iowait, sched_process_*, …),
/// blank lines, `#` comments and lost-event marks are skipped. A line of one
/// of the six events [`parse_line_kind`] reads (the five scheduling events
/// and sched_stat_runtime) that cannot be parsed is an error
/// (truncated lines included).
///
/// Accepted line forms (the header before the event name):
/// `comm tid [CPU] SECS.FRAC:` (perf script default fields, also `-F comm,tid,cpu,time,event,trace`),
/// `comm pid/tid [CPU] SECS.FRAC:` (with `-F …,pid,tid,…`), and the raw ftrace
/// `comm-tid [CPU] flags SECS.FRAC:` (`comm-tid (tgid) [CPU] …` with
/// record-tgid); trace-cmd report's plugin payloads too. The fraction has 9
/// digits with `--ns`, 6 without; both are read exactly. A line with text but
/// no `[CPU] TIME:` anchor is an error too: in this output it can only be a
/// truncated line.
pub fn parse_script(text: &str) -> Result<Vec<SchedRecord>, ParseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let err = |why: String| ParseError { line: i + 1, text: trimmed.to_string(), why };
        if let SchedLine::Record(rec) = line::parse_body(line, false).map_err(err)? {
            out.push(rec);
        }
    }
    Ok(out)
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadSched {
    pub tid: u32,
    pub comm: String,
    /// (end_ns, delay_ns): wake-up → the switch that runs it. The wake-up instant is the first
    /// sched_waking since the task last blocked (sched_wakeup when no sched_waking was recorded for it).
    pub wakeup_delays: Vec<(u64, u64)>,
    /// (end_ns, delay_ns): switched out runnable (prev_state R or R+) → next switch in.
    pub preempt_delays: Vec<(u64, u64)>,
    /// Time on a CPU by the switches: switched in → switched out.
    pub runtime_ns: u64,
    /// Time on a CPU as the kernel charged it: the thread's sched_stat_runtime
    /// records, each the slice `[time − runtime, time)` clipped to the window.
    /// None when the recording has no such record of it from the window's
    /// start on (tracepoint off, or a class that does not emit it: see
    /// [`SchedEvent::StatRuntime`]). Unlike `runtime_ns` it does not need the
    /// switch that put the thread on its CPU.
    pub accounted_ns: Option<u64>,
    pub switches: u64,
    pub migrations: u64,
    /// A wait still open at the window's end: its length so far.
    pub open_wait_ns: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuSched {
    pub cpu: u16,
    pub busy_ns: u64,
    pub switches: u64,
    pub migrations_in: u64,
    pub migrations_out: u64,
    /// `busy_ns` as the kernel charged it (sched_stat_runtime, the same threads).
    pub accounted_busy_ns: u64,
    /// Every non-idle task's charged time here, whatever `tids` selects: how
    /// busy the CPU was.
    pub accounted_all_ns: u64,
    /// Switches away from the idle task (pid 0) here, in every record read
    /// (before the window too). None while the CPU was not always busy
    /// means the recording lost them, and with them the switches that put
    /// tasks on the CPU from idle.
    pub idle_exits: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SchedSummary {
    pub threads: BTreeMap<u32, ThreadSched>,
    pub cpus: Vec<CpuSched>,
}

/// What is known of a thread at one point of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum State {
    /// Not seen on or off a CPU yet (the trace or window began mid-life).
    #[default]
    Unknown,
    Running,
    /// Switched out runnable (`R`/`R+`) at this instant.
    Preempted(u64),
    /// Switched out in any other state (asleep, or dead).
    Blocked,
}

#[derive(Default)]
struct Track {
    state: State,
    /// First sched_waking (or sched_wakeup_new) since it blocked.
    waking: Option<u64>,
    /// First sched_wakeup since it blocked.
    wakeup: Option<u64>,
    /// Last sched_waking seen while it was still on the CPU in this run.
    waking_in_run: Option<u64>,
    /// `waking_in_run` of the run that ended by blocking (see `wake_instant`).
    waking_before_block: Option<u64>,
    touched: bool,
    out: ThreadSched,
}

impl Track {
    /// When the blocked thread was woken. A sched_waking can carry an earlier
    /// timestamp than the sched_switch that blocks the thread: try_to_wake_up()
    /// on another CPU traces it while the thread is still on its way out of
    /// __schedule() (the thread had set its sleep state, which is when it really
    /// blocked). Such a wake-up is the last one seen during the run, and only
    /// counts when no wake-up followed the switch.
    fn wake_instant(&self, at_switch_in: bool) -> Option<u64> {
        let late = if at_switch_in { self.waking_before_block } else { None };
        self.waking.or(late).or(self.wakeup)
    }

    fn clear_wakes(&mut self) {
        self.waking = None;
        self.wakeup = None;
        self.waking_before_block = None;
    }

    /// Switched out at `t`: preempted (`R`/`R+`) or blocked.
    fn switched_out(&mut self, t: u64, runnable: bool) {
        self.clear_wakes();
        if runnable {
            self.state = State::Preempted(t);
        } else {
            self.state = State::Blocked;
            self.waking_before_block = self.waking_in_run;
        }
        self.waking_in_run = None;
    }

    /// Switched in at `t`: a wait that ends here is a delay when `window`.
    fn switched_in(&mut self, t: u64, window: bool) {
        match self.state {
            State::Preempted(since) if window => self.out.preempt_delays.push((t, t.saturating_sub(since))),
            State::Blocked | State::Unknown if window => {
                if let Some(w) = self.wake_instant(true) {
                    self.out.wakeup_delays.push((t, t.saturating_sub(w)));
                }
            }
            _ => {}
        }
        self.state = State::Running;
        self.clear_wakes();
        self.waking_in_run = None;
    }

    /// A sched_waking (`waking`) or sched_wakeup at `t`.
    fn woken(&mut self, t: u64, waking: bool) {
        match self.state {
            State::Running if waking => self.waking_in_run = Some(t),
            State::Blocked | State::Unknown if waking => {
                self.waking.get_or_insert(t);
            }
            State::Blocked | State::Unknown => {
                self.wakeup.get_or_insert(t);
            }
            _ => {}
        }
    }

    /// sched_wakeup_new at `t`: a new task (or one reusing a tid) starts afresh.
    fn forked(&mut self, t: u64) {
        self.state = State::Blocked;
        self.clear_wakes();
        self.waking_in_run = None;
        self.waking = Some(t);
    }

    /// The entry for a task a record names, its comm and whether the window saw it.
    fn named<'a>(threads: &'a mut BTreeMap<u32, Track>, tid: u32, comm: &str, window: bool) -> &'a mut Track {
        let th = threads.entry(tid).or_default();
        comm.clone_into(&mut th.out.comm);
        th.touched |= window;
        th
    }
}

/// One `CpuSched` per CPU number up to the highest the records name.
fn cpu_slots(records: &[SchedRecord]) -> Vec<CpuSched> {
    let max_cpu = records
        .iter()
        .map(|r| match r.event {
            SchedEvent::Waking { target_cpu, .. }
            | SchedEvent::Wakeup { target_cpu, .. }
            | SchedEvent::WakeupNew { target_cpu, .. } => r.cpu.max(target_cpu),
            SchedEvent::Migrate { orig_cpu, dest_cpu, .. } => r.cpu.max(orig_cpu).max(dest_cpu),
            SchedEvent::Switch { .. }
            | SchedEvent::Fork { .. }
            | SchedEvent::Exit { .. }
            | SchedEvent::StatRuntime { .. } => r.cpu,
        })
        .max();
    match max_cpu {
        Some(m) => (0..=m).map(|cpu| CpuSched { cpu, ..CpuSched::default() }).collect(),
        None => Vec::new(),
    }
}

/// The threads of the summary: the selected ones the window saw, with the
/// wait still open at `to_ns`.
fn finish(threads: BTreeMap<u32, Track>, to_ns: u64, selected: impl Fn(u32) -> bool) -> BTreeMap<u32, ThreadSched> {
    let mut out = BTreeMap::new();
    for (tid, mut th) in threads {
        if !selected(tid) {
            continue;
        }
        let open_since = match th.state {
            State::Preempted(since) => Some(since),
            State::Blocked | State::Unknown => th.wake_instant(false),
            State::Running => None,
        };
        th.out.open_wait_ns = open_since.map(|s| to_ns.saturating_sub(s));
        if th.touched || th.out.runtime_ns > 0 || th.out.accounted_ns.is_some_and(|a| a > 0) || open_since.is_some() {
            th.out.tid = tid;
            out.insert(tid, th.out);
        }
    }
    out
}

/// Statistics over `[from_ns, to_ns)`: delays that END in the window, runtime/busy time clipped to it.
/// `tids`: only these threads (None: all, idle/pid 0 excluded). Records must be in time order
/// (perf script output is); do not assume the window's start finds every task in a known state.
///
/// Records before `from_ns` only establish state (who runs, who waits since
/// when); of the records at or after `to_ns` only sched_stat_runtime is read,
/// for the part of its slice before `to_ns`. A thread appears in
/// `threads` when a record in the window names it (as the running task, the
/// switched task, the woken or migrated one), or it ran or waited during the
/// window. Delays need a known start: a thread first seen being switched in
/// has no delay for that switch. A CPU's run before its first recorded switch
/// is credited to the task the records show on it, from the first record.
///
/// `cpus` has one entry per CPU number up to the highest one in `records`.
/// With `tids`, its figures count the selected threads only: busy time is time
/// running one of them, switches are those with one of them as prev or next,
/// migrations move one of them; with None, every non-idle task.
///
/// Charged time (sched_stat_runtime) goes to the CPU the record fired on when
/// it names the header's task, else to the CPU the switches show the task
/// running on (the kernel updated another CPU's queue), else the record's.
pub fn summarize(records: &[SchedRecord], from_ns: u64, to_ns: u64, tids: Option<&BTreeSet<u32>>) -> SchedSummary {
    let selected = |tid: u32| tid != 0 && tids.is_none_or(|s| s.contains(&tid));
    let in_window = |t: u64| t >= from_ns && t < to_ns;
    let clip = |a: u64, b: u64| b.min(to_ns).saturating_sub(a.max(from_ns));

    let mut cpus = cpu_slots(records);
    // Per CPU: the running task and since when.
    let mut current: Vec<Option<(u32, u64)>> = vec![None; cpus.len()];
    let trace_start = records.first().map_or(from_ns, |r| r.time_ns);
    let mut threads: BTreeMap<u32, Track> = BTreeMap::new();

    // Credits a finished run on a CPU to the task and to the CPU.
    let credit =
        |threads: &mut BTreeMap<u32, Track>, cpus: &mut Vec<CpuSched>, cpu: usize, tid: u32, since: u64, until: u64| {
            if !selected(tid) {
                return;
            }
            let ran = clip(since, until);
            threads.entry(tid).or_default().out.runtime_ns += ran;
            cpus[cpu].busy_ns += ran;
        };

    for r in records {
        let t = r.time_ns;
        if t >= to_ns {
            charge(&mut threads, &mut cpus, &current, r, (from_ns, to_ns), selected);
            continue;
        }
        let c = usize::from(r.cpu);
        let window = in_window(t);
        // The header names the task on the CPU; before the CPU's first switch
        // that is all there is to know who ran there.
        if current[c].is_none() {
            current[c] = Some((r.tid, trace_start));
        }
        if selected(r.tid) {
            let th = threads.entry(r.tid).or_default();
            th.touched |= window;
            r.comm.clone_into(&mut th.out.comm);
        }
        match &r.event {
            SchedEvent::Switch { prev_comm, prev_pid, prev_state, next_comm, next_pid, .. } => {
                let (prev, next) = (*prev_pid, *next_pid);
                if prev == 0 {
                    cpus[c].idle_exits += 1;
                }
                if let Some((tid, since)) = current[c] {
                    // A header/prev mismatch means lost events: credit nothing.
                    let since = if tid == prev { since } else { t };
                    credit(&mut threads, &mut cpus, c, prev, since, t);
                }
                current[c] = Some((next, t));
                if window && (selected(prev) || selected(next)) {
                    cpus[c].switches += 1;
                }
                if prev != 0 {
                    let th = Track::named(&mut threads, prev, prev_comm, window);
                    if window && selected(prev) {
                        th.out.switches += 1;
                    }
                    th.switched_out(t, matches!(prev_state.as_str(), "R" | "R+"));
                }
                if next != 0 {
                    Track::named(&mut threads, next, next_comm, window).switched_in(t, window);
                }
            }
            SchedEvent::Waking { comm, pid, .. } | SchedEvent::Wakeup { comm, pid, .. } => {
                if *pid == 0 {
                    continue;
                }
                let waking = matches!(r.event, SchedEvent::Waking { .. });
                Track::named(&mut threads, *pid, comm, window).woken(t, waking);
            }
            SchedEvent::WakeupNew { comm, pid, .. } => {
                if *pid == 0 {
                    continue;
                }
                Track::named(&mut threads, *pid, comm, window).forked(t);
            }
            SchedEvent::Fork { .. } | SchedEvent::Exit { .. } => {}
            SchedEvent::StatRuntime { .. } => charge(&mut threads, &mut cpus, &current, r, (from_ns, to_ns), selected),
            SchedEvent::Migrate { comm, pid, orig_cpu, dest_cpu, .. } => {
                if *pid == 0 {
                    continue;
                }
                let th = Track::named(&mut threads, *pid, comm, window);
                if window && selected(*pid) {
                    th.out.migrations += 1;
                    cpus[usize::from(*orig_cpu)].migrations_out += 1;
                    cpus[usize::from(*dest_cpu)].migrations_in += 1;
                }
            }
        }
    }

    // Close the window: runs in progress, waits still open.
    for (c, cur) in current.iter().enumerate() {
        if let Some((tid, since)) = *cur {
            credit(&mut threads, &mut cpus, c, tid, since, to_ns);
        }
    }
    SchedSummary { threads: finish(threads, to_ns, selected), cpus }
}

/// A sched_stat_runtime record: the kernel's charge of the slice that ends at
/// its time, clipped to the window (see `ThreadSched::accounted_ns`), to the
/// CPU `summarize` says. Any other record is not a charge.
fn charge(
    threads: &mut BTreeMap<u32, Track>,
    cpus: &mut [CpuSched],
    current: &[Option<(u32, u64)>],
    r: &SchedRecord,
    (from_ns, to_ns): (u64, u64),
    selected: impl Fn(u32) -> bool,
) {
    let SchedEvent::StatRuntime { comm, pid, runtime_ns } = &r.event else { return };
    let (t, pid) = (r.time_ns, *pid);
    if pid == 0 || t < from_ns {
        return;
    }
    let ran = t.min(to_ns).saturating_sub(t.saturating_sub(*runtime_ns).max(from_ns));
    let cpu = if r.tid == pid {
        usize::from(r.cpu)
    } else {
        current.iter().position(|c| c.is_some_and(|c| c.0 == pid)).unwrap_or(usize::from(r.cpu))
    };
    cpus[cpu].accounted_all_ns += ran;
    if selected(pid) {
        let th = Track::named(threads, pid, comm, t < to_ns && ran > 0);
        let acc = th.out.accounted_ns.get_or_insert(0);
        *acc = acc.saturating_add(ran);
        cpus[cpu].accounted_busy_ns += ran;
    }
}

#[cfg(test)]
#[path = "sched_text_tests.rs"]
mod tests;
