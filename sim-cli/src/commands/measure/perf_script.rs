//! Parses the text of `perf sched script` (and `perf script`) for the five
//! scheduler tracepoints `sim-cli measure` needs, and turns the records into
//! the per-thread and per-CPU statistics the simulator reports: wakeup delay,
//! preemption delay, runtime, switches, migrations and CPU busy time.
//!
//! Pure: text in, values out, no I/O. The parser follows the rules in
//! formats.md §1 "Import format (perf script)": a line is anchored on its
//! `[CPU]` field and the timestamp after it, and a `sched_switch` payload on
//! its `==>`, because a comm may hold spaces, `-` and `:`. Every `key=` field
//! that follows a comm is found from the right, so no comm can fool it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct SchedRecord {
    pub time_ns: u64,
    pub cpu: u16,
    /// The task that was running on `cpu` when the event fired.
    pub tid: u32,
    pub comm: String,
    pub event: SchedEvent,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SchedEvent {
    Switch {
        prev_comm: String,
        prev_pid: u32,
        prev_prio: i32,
        prev_state: String,
        next_comm: String,
        next_pid: u32,
        next_prio: i32,
    },
    Waking {
        comm: String,
        pid: u32,
        prio: i32,
        target_cpu: u16,
    },
    Wakeup {
        comm: String,
        pid: u32,
        prio: i32,
        target_cpu: u16,
    },
    WakeupNew {
        comm: String,
        pid: u32,
        prio: i32,
        target_cpu: u16,
    },
    Migrate {
        comm: String,
        pid: u32,
        prio: i32,
        orig_cpu: u16,
        dest_cpu: u16,
    },
}

/// A line of `perf sched script` text that names one of the five events
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

/// The events [`parse_script`] reads; every other event name is skipped.
const EVENTS: [&str; 5] = ["sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task"];

/// Lines of other events (sched_stat_*, sched_process_*, …), blank lines and `#` comments are skipped.
/// A line of one of the five events above that cannot be parsed is an error (truncated lines included).
///
/// Accepted line forms (the header before the event name):
/// `comm tid [CPU] SECS.FRAC:` (perf script default fields, also `-F comm,tid,cpu,time,event,trace`),
/// `comm pid/tid [CPU] SECS.FRAC:` (with `-F …,pid,tid,…`), and the raw ftrace
/// `comm-tid [CPU] flags SECS.FRAC:`. The fraction has 9 digits with `--ns`,
/// 6 without; both are read exactly. A line with text but no `[CPU] TIME:`
/// anchor is an error too: in this output it can only be a truncated line.
pub fn parse_script(text: &str) -> Result<Vec<SchedRecord>, ParseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let err = |why: String| ParseError { line: i + 1, text: trimmed.to_string(), why };
        if let Some(rec) = parse_line(line).map_err(err)? {
            out.push(rec);
        }
    }
    Ok(out)
}

/// One non-blank line: `Ok(None)` for an event this parser does not read.
fn parse_line(line: &str) -> Result<Option<SchedRecord>, String> {
    let Some(anchor) = find_anchor(line) else {
        if is_callchain(line) {
            return Ok(None);
        }
        return Err(match EVENTS.iter().find(|e| line.contains(**e)) {
            Some(e) => format!("{e} line without its `[CPU] TIME:` header"),
            None => "not an event line (no `[CPU] TIME:` anchor; truncated?)".to_string(),
        });
    };
    let (comm, tid) = parse_task(line[..anchor.bracket].trim())?;
    let rest = anchor.rest.trim_start();
    // The event name ends at the first `: ` (the name itself holds a `:`,
    // as in `sched:sched_switch`), or at a final `:` when there is no payload.
    let (name, payload) = match rest.find(": ") {
        Some(p) => (&rest[..p], rest[p + 2..].trim()),
        None => match rest.strip_suffix(':') {
            Some(n) => (n, ""),
            None if rest.is_empty() => return Err("truncated line (no event name)".to_string()),
            None => {
                return Err(match EVENTS.iter().find(|e| rest.contains(**e)) {
                    Some(e) => format!("truncated {e} (no `:` after the event name)"),
                    None => "truncated line (no `:` after the event name)".to_string(),
                });
            }
        },
    };
    let name = name.trim();
    let name = name.rsplit(':').next().unwrap_or(name);
    let event = match name {
        "sched_switch" => parse_switch(payload)?,
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let (comm, pid, prio, target_cpu) = parse_wake(payload, name)?;
            match name {
                "sched_waking" => SchedEvent::Waking { comm, pid, prio, target_cpu },
                "sched_wakeup" => SchedEvent::Wakeup { comm, pid, prio, target_cpu },
                _ => SchedEvent::WakeupNew { comm, pid, prio, target_cpu },
            }
        }
        "sched_migrate_task" => parse_migrate(payload)?,
        _ => return Ok(None),
    };
    Ok(Some(SchedRecord { time_ns: anchor.time_ns, cpu: anchor.cpu, tid, comm, event }))
}

/// A call-chain line (`perf script` with `-g` data): an address of at least
/// 8 hex digits, then a symbol.
fn is_callchain(line: &str) -> bool {
    let mut tokens = line.split_whitespace();
    let addr = tokens.next().unwrap_or("");
    addr.len() >= 8 && addr.bytes().all(|b| b.is_ascii_hexdigit()) && tokens.next().is_some()
}

struct Anchor<'a> {
    /// Byte offset of the `[` of the CPU field.
    bracket: usize,
    cpu: u16,
    time_ns: u64,
    /// Text after the timestamp's `:`.
    rest: &'a str,
}

/// The first `[digits]` followed by a `SECS.FRAC:` timestamp (an ftrace
/// flags field such as `d..3` may sit between them).
fn find_anchor(line: &str) -> Option<Anchor<'_>> {
    for (bracket, _) in line.match_indices('[') {
        let after = &line[bracket + 1..];
        let Some(close) = after.find(']') else { continue };
        let digits = &after[..close];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cpu) = digits.parse::<u16>() else { continue };
        let tail = &after[close + 1..];
        if !tail.starts_with(char::is_whitespace) {
            continue;
        }
        let mut tokens = tail.split_whitespace();
        let found = tokens.next().and_then(|first| parse_stamp(first).or_else(|| tokens.next().and_then(parse_stamp)));
        if let Some(time_ns) = found {
            // Neither an ftrace flags field nor the stamp holds a `:` before
            // the one that ends the stamp, so the event starts after the first.
            let stamp_end = tail.find(':')? + 1;
            return Some(Anchor { bracket, cpu, time_ns, rest: &tail[stamp_end..] });
        }
    }
    None
}

/// `SECS.FRAC:` (FRAC of 1 to 9 digits) to nanoseconds.
fn parse_stamp(token: &str) -> Option<u64> {
    let body = token.strip_suffix(':')?;
    let (secs, frac) = body.split_once('.')?;
    if secs.is_empty() || frac.is_empty() || frac.len() > 9 {
        return None;
    }
    if !secs.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// The header before `[CPU]`: `comm tid`, `comm pid/tid`, or ftrace's `comm-tid`.
fn parse_task(head: &str) -> Result<(String, u32), String> {
    let is_num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(p) = head.rfind(char::is_whitespace) {
        let last = &head[p + 1..];
        let tid = match last.split_once('/') {
            Some((pid, tid)) if is_num(pid) && is_num(tid) => Some(tid),
            None if is_num(last) => Some(last),
            _ => None,
        };
        if let Some(tid) = tid {
            let tid = tid.parse().map_err(|_| format!("tid `{tid}` out of range"))?;
            return Ok((head[..p].trim().to_string(), tid));
        }
    }
    if let Some((comm, tid)) = head.rsplit_once('-')
        && is_num(tid)
    {
        let tid = tid.parse().map_err(|_| format!("tid `{tid}` out of range"))?;
        return Ok((comm.trim().to_string(), tid));
    }
    if is_num(head) {
        let tid = head.parse().map_err(|_| format!("tid `{head}` out of range"))?;
        return Ok((String::new(), tid));
    }
    Err(format!("no tid before `[CPU]` in `{head}` (expected `comm tid`, `comm pid/tid` or `comm-tid`)"))
}

/// Splits `…<key>value` at the LAST ` key=`, so a comm before it may hold anything.
fn last_field<'a>(s: &'a str, key: &str, event: &str) -> Result<(&'a str, &'a str), String> {
    let pat = format!(" {key}=");
    match s.rfind(&pat) {
        Some(p) => Ok((&s[..p], s[p + pat.len()..].trim())),
        None => Err(format!("truncated {event} (no `{key}=`)")),
    }
}

fn num<T: std::str::FromStr>(v: &str, key: &str, event: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{event}: `{key}={v}` is not a number in range"))
}

fn comm_field(s: &str, key: &str, event: &str) -> Result<String, String> {
    match s.strip_prefix(key).and_then(|r| r.strip_prefix('=')) {
        Some(c) => Ok(c.to_string()),
        None => Err(format!("{event}: expected `{key}=` first")),
    }
}

fn parse_switch(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_switch";
    let Some((left, right)) = payload.split_once("==>") else {
        return Err(format!("truncated {EV} (no `==>`)"));
    };
    // ` ==> ` normally; keep a space before the first key so `last_field` finds it.
    let left = format!(" {}", left.trim());
    let right = format!(" {}", right.trim());
    let (left, prev_state) = last_field(&left, "prev_state", EV)?;
    let (left, prev_prio) = last_field(left, "prev_prio", EV)?;
    let (left, prev_pid) = last_field(left, "prev_pid", EV)?;
    let prev_comm = comm_field(left.trim_start(), "prev_comm", EV)?;
    let (r, next_prio) = last_field(&right, "next_prio", EV)?;
    let (r, next_pid) = last_field(r, "next_pid", EV)?;
    let next_comm = comm_field(r.trim_start(), "next_comm", EV)?;
    if prev_state.is_empty() {
        return Err(format!("{EV}: empty prev_state"));
    }
    Ok(SchedEvent::Switch {
        prev_comm,
        prev_pid: num(prev_pid, "prev_pid", EV)?,
        prev_prio: num(prev_prio, "prev_prio", EV)?,
        prev_state: prev_state.to_string(),
        next_comm,
        next_pid: num(next_pid, "next_pid", EV)?,
        next_prio: num(next_prio, "next_prio", EV)?,
    })
}

/// `comm=X pid=N prio=P [success=1] target_cpu=C`.
fn parse_wake(payload: &str, ev: &str) -> Result<(String, u32, i32, u16), String> {
    let s = format!(" {payload}");
    let (s, target_cpu) = last_field(&s, "target_cpu", ev)?;
    // Very old kernels print `success=1` before target_cpu.
    let s = match s.rfind(" success=") {
        Some(p) if s[p + 9..].bytes().all(|b| b.is_ascii_digit()) => &s[..p],
        _ => s,
    };
    let (s, prio) = last_field(s, "prio", ev)?;
    let (s, pid) = last_field(s, "pid", ev)?;
    let comm = comm_field(s.trim_start(), "comm", ev)?;
    Ok((comm, num(pid, "pid", ev)?, num(prio, "prio", ev)?, num(target_cpu, "target_cpu", ev)?))
}

fn parse_migrate(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_migrate_task";
    let s = format!(" {payload}");
    let (s, dest_cpu) = last_field(&s, "dest_cpu", EV)?;
    let (s, orig_cpu) = last_field(s, "orig_cpu", EV)?;
    let (s, prio) = last_field(s, "prio", EV)?;
    let (s, pid) = last_field(s, "pid", EV)?;
    let comm = comm_field(s.trim_start(), "comm", EV)?;
    Ok(SchedEvent::Migrate {
        comm,
        pid: num(pid, "pid", EV)?,
        prio: num(prio, "prio", EV)?,
        orig_cpu: num(orig_cpu, "orig_cpu", EV)?,
        dest_cpu: num(dest_cpu, "dest_cpu", EV)?,
    })
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
    pub runtime_ns: u64,
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
}

/// Statistics over `[from_ns, to_ns)`: delays that END in the window, runtime/busy time clipped to it.
/// `tids`: only these threads (None: all, idle/pid 0 excluded). Records must be in time order
/// (perf script output is); do not assume the window's start finds every task in a known state.
///
/// Records before `from_ns` only establish state (who runs, who waits since
/// when); records at or after `to_ns` are not read. A thread appears in
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
pub fn summarize(records: &[SchedRecord], from_ns: u64, to_ns: u64, tids: Option<&BTreeSet<u32>>) -> SchedSummary {
    let selected = |tid: u32| tid != 0 && tids.is_none_or(|s| s.contains(&tid));
    let in_window = |t: u64| t >= from_ns && t < to_ns;
    let clip = |a: u64, b: u64| b.min(to_ns).saturating_sub(a.max(from_ns));

    let max_cpu = records
        .iter()
        .map(|r| match r.event {
            SchedEvent::Waking { target_cpu, .. }
            | SchedEvent::Wakeup { target_cpu, .. }
            | SchedEvent::WakeupNew { target_cpu, .. } => r.cpu.max(target_cpu),
            SchedEvent::Migrate { orig_cpu, dest_cpu, .. } => r.cpu.max(orig_cpu).max(dest_cpu),
            SchedEvent::Switch { .. } => r.cpu,
        })
        .max();
    let mut cpus: Vec<CpuSched> = match max_cpu {
        Some(m) => (0..=m).map(|cpu| CpuSched { cpu, ..CpuSched::default() }).collect(),
        None => Vec::new(),
    };
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
            break;
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
                    let th = threads.entry(prev).or_default();
                    prev_comm.clone_into(&mut th.out.comm);
                    th.touched |= window;
                    if window && selected(prev) {
                        th.out.switches += 1;
                    }
                    let runnable = matches!(prev_state.as_str(), "R" | "R+");
                    th.clear_wakes();
                    if runnable {
                        th.state = State::Preempted(t);
                    } else {
                        th.state = State::Blocked;
                        th.waking_before_block = th.waking_in_run;
                    }
                    th.waking_in_run = None;
                }
                if next != 0 {
                    let th = threads.entry(next).or_default();
                    next_comm.clone_into(&mut th.out.comm);
                    th.touched |= window;
                    match th.state {
                        State::Preempted(since) if window => th.out.preempt_delays.push((t, t.saturating_sub(since))),
                        State::Blocked | State::Unknown if window => {
                            if let Some(w) = th.wake_instant(true) {
                                th.out.wakeup_delays.push((t, t.saturating_sub(w)));
                            }
                        }
                        _ => {}
                    }
                    th.state = State::Running;
                    th.clear_wakes();
                    th.waking_in_run = None;
                }
            }
            SchedEvent::Waking { comm, pid, .. } | SchedEvent::Wakeup { comm, pid, .. } => {
                if *pid == 0 {
                    continue;
                }
                let th = threads.entry(*pid).or_default();
                comm.clone_into(&mut th.out.comm);
                th.touched |= window;
                let waking = matches!(r.event, SchedEvent::Waking { .. });
                match th.state {
                    State::Running if waking => th.waking_in_run = Some(t),
                    State::Blocked | State::Unknown if waking => {
                        th.waking.get_or_insert(t);
                    }
                    State::Blocked | State::Unknown => {
                        th.wakeup.get_or_insert(t);
                    }
                    _ => {}
                }
            }
            SchedEvent::WakeupNew { comm, pid, .. } => {
                if *pid == 0 {
                    continue;
                }
                // A new task (or a new task reusing a tid): start afresh.
                let th = threads.entry(*pid).or_default();
                comm.clone_into(&mut th.out.comm);
                th.touched |= window;
                th.state = State::Blocked;
                th.clear_wakes();
                th.waking_in_run = None;
                th.waking = Some(t);
            }
            SchedEvent::Migrate { comm, pid, orig_cpu, dest_cpu, .. } => {
                if *pid == 0 {
                    continue;
                }
                let th = threads.entry(*pid).or_default();
                comm.clone_into(&mut th.out.comm);
                th.touched |= window;
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
    let mut out = SchedSummary { threads: BTreeMap::new(), cpus };
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
        if th.touched || th.out.runtime_ns > 0 || open_since.is_some() {
            th.out.tid = tid;
            out.threads.insert(tid, th.out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const REAL: &str = include_str!("fixtures/real_sched_script.txt");
    const HAND: &str = include_str!("fixtures/hand_made_sched_script.txt");

    fn switch(t: u64, cpu: u16, prev: u32, state: &str, next: u32) -> SchedRecord {
        let name = |p: u32| if p == 0 { format!("swapper/{cpu}") } else { format!("t{p}") };
        SchedRecord {
            time_ns: t,
            cpu,
            tid: prev,
            comm: name(prev),
            event: SchedEvent::Switch {
                prev_comm: name(prev),
                prev_pid: prev,
                prev_prio: 120,
                prev_state: state.to_string(),
                next_comm: name(next),
                next_pid: next,
                next_prio: 120,
            },
        }
    }

    fn wake(t: u64, cpu: u16, by: u32, pid: u32, waking: bool) -> SchedRecord {
        let (comm, prio, target_cpu) = (format!("t{pid}"), 120, cpu);
        let event = if waking {
            SchedEvent::Waking { comm, pid, prio, target_cpu }
        } else {
            SchedEvent::Wakeup { comm, pid, prio, target_cpu }
        };
        SchedRecord { time_ns: t, cpu, tid: by, comm: format!("t{by}"), event }
    }

    fn migrate(t: u64, cpu: u16, pid: u32, orig_cpu: u16, dest_cpu: u16) -> SchedRecord {
        let event = SchedEvent::Migrate { comm: format!("t{pid}"), pid, prio: 120, orig_cpu, dest_cpu };
        SchedRecord { time_ns: t, cpu, tid: 0, comm: "swapper".to_string(), event }
    }

    #[test]
    fn real_lines_from_this_machine_parse() {
        let recs = parse_script(REAL).expect("the captured fixture parses");
        // 154 switches, 50 wakings, 7 wakeup_new, 4 migrations; stat_runtime and process_fork skipped.
        let count = |f: fn(&SchedEvent) -> bool| recs.iter().filter(|r| f(&r.event)).count();
        assert_eq!(count(|e| matches!(e, SchedEvent::Switch { .. })), 154);
        assert_eq!(count(|e| matches!(e, SchedEvent::Waking { .. })), 50);
        assert_eq!(count(|e| matches!(e, SchedEvent::WakeupNew { .. })), 7);
        assert_eq!(count(|e| matches!(e, SchedEvent::Migrate { .. })), 4);
        assert_eq!(recs.len(), 215);
        assert!(recs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "perf script output is in time order");
        // Line 426: the one preempted switch, with a `:` in the next comm.
        let line426 = REAL.lines().nth(425).expect("fixture has 484 lines");
        let one = parse_script(line426).expect("line 426 parses");
        assert_eq!(
            one,
            vec![SchedRecord {
                time_ns: 21_188_934_654_704,
                cpu: 1,
                tid: 32649,
                comm: "sh".to_string(),
                event: SchedEvent::Switch {
                    prev_comm: "sh".to_string(),
                    prev_pid: 32649,
                    prev_prio: 120,
                    prev_state: "R+".to_string(),
                    next_comm: "memfd:sealed-91".to_string(),
                    next_pid: 28259,
                    next_prio: 120,
                },
            }]
        );
        // The whole capture summarized: every CPU is busy at most the window's length,
        // and with no filter, thread runtimes add up to the CPUs' busy time.
        let (from, to) = (recs[0].time_ns, recs[recs.len() - 1].time_ns + 1);
        let s = summarize(&recs, from, to, None);
        assert_eq!(s.cpus.len(), 2);
        assert!(s.cpus.iter().all(|c| c.busy_ns <= to - from), "{:?}", s.cpus);
        let runtime: u64 = s.threads.values().map(|t| t.runtime_ns).sum();
        assert_eq!(runtime, s.cpus.iter().map(|c| c.busy_ns).sum::<u64>());
        assert!(!s.threads.contains_key(&0));
        let switches: u64 = s.cpus.iter().map(|c| c.switches).sum();
        assert_eq!(switches, 154);
        let preempts: usize = s.threads.values().map(|t| t.preempt_delays.len()).sum();
        let wakeups: usize = s.threads.values().map(|t| t.wakeup_delays.len()).sum();
        assert!(preempts >= 1 && wakeups >= 40, "preempts {preempts}, wakeups {wakeups}");
        let worst = s.threads.values().flat_map(|t| t.wakeup_delays.iter().chain(&t.preempt_delays)).map(|d| d.1).max();
        // Three shell spinners shared 2 CPUs with a compiler: each was preempted often,
        // and no wait was longer than a few 4 ms ticks (CONFIG_HZ=250).
        for spinner in [32646, 32648, 32649] {
            assert!(s.threads[&spinner].preempt_delays.len() >= 10, "{:?}", s.threads[&spinner]);
        }
        assert!(worst.is_some_and(|w| w < 50_000_000), "worst delay {worst:?}");
    }

    #[test]
    fn hand_made_lines_parse() {
        let recs = parse_script(HAND).expect("the hand-made fixture parses");
        let s = |x: &str| x.to_string();
        assert_eq!(recs.len(), 7, "stat_runtime, call chains, comments and blank lines are skipped");
        assert_eq!(
            recs[0],
            SchedRecord {
                time_ns: 100_000_001_000,
                cpu: 1,
                tid: 4242,
                comm: s("Web Content"),
                event: SchedEvent::Switch {
                    prev_comm: s("Web Content"),
                    prev_pid: 4242,
                    prev_prio: 120,
                    prev_state: s("R+"),
                    next_comm: s("kworker/u16:1-events"),
                    next_pid: 77,
                    next_prio: 120,
                },
            }
        );
        assert_eq!((recs[1].tid, recs[1].comm.as_str()), (77, "kworker/u16:1-events"));
        assert!(matches!(&recs[1].event, SchedEvent::Switch { prev_state, .. } if prev_state == "S|D"));
        // pid/tid header, microsecond stamp.
        assert_eq!((recs[2].time_ns, recs[2].tid, recs[2].comm.as_str()), (100_000_003_000, 4242, "Web Content"));
        assert_eq!(
            recs[2].event,
            SchedEvent::Waking { comm: s("memfd:sealed-91"), pid: 28259, prio: 120, target_cpu: 0 }
        );
        assert_eq!(recs[3].event, SchedEvent::Wakeup { comm: s("a b:c-d"), pid: 5, prio: -1, target_cpu: 1 });
        assert_eq!(
            recs[4].event,
            SchedEvent::Migrate { comm: s("Web Content"), pid: 4242, prio: 120, orig_cpu: 1, dest_cpu: 0 }
        );
        assert_eq!(recs[5].event, SchedEvent::WakeupNew { comm: s("perf-exec"), pid: 9, prio: 120, target_cpu: 1 });
        // Raw ftrace form: `comm-tid [CPU] flags stamp: event:`.
        assert_eq!(
            (recs[6].time_ns, recs[6].cpu, recs[6].tid, recs[6].comm.as_str()),
            (5_075_958_079_000, 2, 1234, "bash")
        );
        assert!(matches!(&recs[6].event, SchedEvent::Switch { prev_state, next_pid: 0, .. } if prev_state == "T"));
    }

    #[test]
    fn truncated_lines_are_errors_naming_the_line() {
        let good = "  perf 1 [000] 1.000000001: sched:sched_waking: comm=a pid=2 prio=120 target_cpu=000\n";
        let cases = [
            (
                "  perf 1 [000] 1.000000002: sched:sched_switch: prev_comm=perf prev_pid=1 prev_prio=120 prev_state=S",
                "truncated sched_switch (no `==>`)",
            ),
            (
                "  perf 1 [000] 1.000000002: sched:sched_switch: prev_comm=perf prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=x next_pid=3 next_pr",
                "truncated sched_switch (no `next_prio=`)",
            ),
            (
                "  perf 1 [000] 1.000000002: sched:sched_waking: comm=a pid=2 prio=120 target_c",
                "truncated sched_waking (no `target_cpu=`)",
            ),
            (
                "  perf 1 [000] 1.000000002: sched:sched_migrate_task: comm=a pid=2 prio=120 orig_cpu=1",
                "truncated sched_migrate_task (no `dest_cpu=`)",
            ),
            (
                "  perf 1 [000] 1.000000002: sched:sched_wakeup_ne",
                "truncated sched_wakeup (no `:` after the event name)",
            ),
            ("  perf 1 [000] 1.00000", "not an event line (no `[CPU] TIME:` anchor; truncated?)"),
            ("  perf 29", "not an event line (no `[CPU] TIME:` anchor; truncated?)"),
        ];
        for (bad, why) in cases {
            let text = format!("{REAL}{good}\n# comment\n{bad}\n{good}");
            let err = parse_script(&text).expect_err(bad);
            assert_eq!(err.line, REAL.lines().count() + 4, "{bad}");
            assert!(err.why.starts_with(why), "{bad}: {}", err.why);
        }
        let err = parse_script(&format!("{good}{}", &HAND.lines().nth(3).expect("line 4")[..120]))
            .expect_err("cut before `==>`");
        let shown: String = err.text.chars().take(80).collect();
        assert_eq!(err.to_string(), format!("perf sched script line 2: truncated sched_switch (no `==>`): `{shown}…`"));
        assert_eq!(err.line, 2);
        assert!(parse_script("  perf 1 [000] 1.000000002: sched:sched_switch: prev_comm=a prev_pid=x prev_prio=120 prev_state=S ==> next_comm=b next_pid=1 next_prio=120")
            .is_err_and(|e| e.why.contains("prev_pid=x")));
    }

    /// A hand-made sequence on two CPUs, window [1000, 10000): every figure is worked out by hand.
    fn sequence() -> Vec<SchedRecord> {
        const A: u32 = 10;
        const B: u32 = 11;
        const C: u32 = 12;
        const D: u32 = 13;
        const E: u32 = 14;
        vec![
            // E runs and sleeps before the window: nothing of it is reported.
            wake(100, 1, 0, E, true),
            switch(200, 1, 0, "R", E),
            switch(300, 1, E, "S", 0),
            // A runs on CPU 0 from 500 (state unknown before: no delay).
            switch(500, 0, 0, "R", A),
            // B: waking at 800, a later sched_wakeup is ignored, runs at 1200: delay 400.
            wake(800, 1, 0, B, true),
            wake(900, 1, 0, B, false),
            switch(1200, 1, 0, "R", B),
            // A preempted by C (whose earlier state is unknown: no delay).
            switch(2000, 0, A, "R+", C),
            migrate(2500, 0, A, 0, 1),
            // B blocks, A runs again on CPU 1: preemption delay 1000.
            switch(3000, 1, B, "S", A),
            // B woken by a sched_wakeup only: delay from it.
            wake(3500, 0, C, B, false),
            // A is woken while still on its CPU, then switches out asleep; no
            // wake-up follows, so that waking (4000) is A's wake-up instant.
            wake(4000, 0, C, A, true),
            switch(4100, 1, A, "S", B),
            switch(5000, 0, C, "S", A),
            // B preempted at 6000, runs again only after the window: open wait 4000.
            switch(6000, 1, B, "R", 0),
            // D woken inside the window, never run in it: open wait 1000.
            wake(9000, 1, 0, D, true),
            switch(11000, 1, 0, "R", B),
        ]
    }

    #[test]
    fn summarize_hand_made_sequence() {
        let recs = sequence();
        let s = summarize(&recs, 1000, 10_000, None);
        let th = |tid: u32| s.threads.get(&tid).unwrap_or_else(|| panic!("thread {tid} reported"));
        assert_eq!(s.threads.keys().copied().collect::<Vec<_>>(), vec![10, 11, 12, 13], "E (14) is outside the window");
        let a = th(10);
        assert_eq!(a.comm, "t10");
        assert_eq!(a.wakeup_delays, vec![(5000, 1000)]);
        assert_eq!(a.preempt_delays, vec![(3000, 1000)]);
        // [1000,2000) + [3000,4100) + [5000,10000): clipped at both ends.
        assert_eq!((a.runtime_ns, a.switches, a.migrations, a.open_wait_ns), (7100, 2, 1, None));
        let b = th(11);
        assert_eq!(b.wakeup_delays, vec![(1200, 400), (4100, 600)]);
        assert_eq!(b.preempt_delays, vec![]);
        assert_eq!((b.runtime_ns, b.switches, b.migrations, b.open_wait_ns), (1800 + 1900, 2, 0, Some(4000)));
        let c = th(12);
        assert_eq!((c.wakeup_delays.len(), c.preempt_delays.len()), (0, 0));
        assert_eq!((c.runtime_ns, c.switches, c.open_wait_ns), (3000, 1, None));
        let d = th(13);
        assert_eq!((d.runtime_ns, d.switches, d.open_wait_ns), (0, 0, Some(1000)));
        assert_eq!(
            s.cpus,
            vec![
                CpuSched { cpu: 0, busy_ns: 1000 + 3000 + 5000, switches: 2, migrations_in: 0, migrations_out: 1 },
                CpuSched { cpu: 1, busy_ns: 1800 + 1100 + 1900, switches: 4, migrations_in: 1, migrations_out: 0 },
            ]
        );
    }

    #[test]
    fn summarize_filters_threads_and_their_cpu_figures() {
        let recs = sequence();
        let only_a = BTreeSet::from([10]);
        let s = summarize(&recs, 1000, 10_000, Some(&only_a));
        assert_eq!(s.threads.keys().copied().collect::<Vec<_>>(), vec![10]);
        assert_eq!(s.threads[&10].runtime_ns, 7100);
        assert_eq!(
            s.cpus.iter().map(|c| (c.busy_ns, c.switches, c.migrations_in, c.migrations_out)).collect::<Vec<_>>(),
            vec![(1000 + 5000, 2, 0, 1), (1100, 2, 1, 0)]
        );
        // A window that starts mid-wait still counts the delays ending in it, whole.
        let late = summarize(&recs, 4500, 10_000, None);
        assert_eq!(late.threads[&10].wakeup_delays, vec![(5000, 1000)]);
        assert_eq!(late.threads[&10].preempt_delays, vec![]);
        assert_eq!(late.threads[&12].runtime_ns, 500);
        // A window that ends mid-run: the run is cut, the open wait measured to its end.
        let early = summarize(&recs, 0, 3600, None);
        assert_eq!(early.threads[&10].runtime_ns, 1500 + 600);
        assert_eq!(early.threads[&11].open_wait_ns, Some(100), "woken at 3500 by sched_wakeup");
        assert_eq!(early.threads[&14].wakeup_delays, vec![(200, 100)]);
        assert_eq!(early.threads[&10].wakeup_delays, vec![], "A's first switch-in had no known start");
    }
}
