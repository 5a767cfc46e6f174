//! Parses the text of `perf sched script` (and `perf script`) for the five
//! scheduler tracepoints `sim-cli measure` (and, next, `sim-cli import`)
//! needs, and turns the records into
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
    /// Its process (tgid) when the line carries one (`pid/tid`, ftrace's `( tgid)` column).
    pub pid: Option<u32>,
    pub comm: String,
    /// ftrace's context flags say the event fired in a hard or soft interrupt
    /// (`h`/`s`): the task in the header did not cause it.
    pub in_irq: bool,
    pub event: SchedEvent,
}

/// What one line of trace text holds (see [`parse_line_kind`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SchedLine {
    Record(SchedRecord),
    /// A header fact (perf's `--header`, ftrace's `#P:`).
    Header(TraceHeader),
    /// Events the tracer dropped (`[LOST n EVENTS]`, perf's `LOST` records).
    Lost(u64),
    /// Blank, a comment, a call-chain line or an event this parser does not read.
    Skipped,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TraceHeader {
    /// `# os release : 6.18.44-…`
    OsRelease(String),
    /// `# nrcpus online : 2`, ftrace's `#P:2`.
    CpusOnline(u16),
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
    /// sched_process_fork: the header's task made `child_pid`.
    Fork {
        child_comm: String,
        child_pid: u32,
    },
    /// sched_process_exit (6.18 adds `group_dead=`, not kept).
    Exit {
        comm: String,
        pid: u32,
        prio: i32,
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

/// One line of trace text, for streaming readers (`sim-cli import`): the
/// same rules as [`parse_script`], plus header facts and lost-event marks.
/// Err is the reason, without the line number (the caller counts lines).
pub fn parse_line_kind(raw: &str) -> Result<SchedLine, String> {
    let line = raw.trim_end_matches(['\r', '\n']);
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Ok(SchedLine::Skipped);
    }
    if let Some(h) = trimmed.strip_prefix('#') {
        return Ok(header(h.trim()).map_or(SchedLine::Skipped, SchedLine::Header));
    }
    Ok(parse_line(line)?.map_or(SchedLine::Skipped, SchedLine::Record))
}

/// A `#` line's fact: perf `--header` (`os release : X`, `nrcpus online : N`)
/// or ftrace's `entries-in-buffer/entries-written: a/b   #P:N`.
fn header(h: &str) -> Option<TraceHeader> {
    if let Some(v) = h.strip_prefix("os release") {
        let v = v.trim_start().strip_prefix(':')?.trim();
        return (!v.is_empty()).then(|| TraceHeader::OsRelease(v.to_string()));
    }
    if let Some(v) = h.strip_prefix("nrcpus online") {
        return v.trim_start().strip_prefix(':')?.trim().parse().ok().map(TraceHeader::CpusOnline);
    }
    let p = h.rfind("#P:")?;
    h[p + 3..].trim().parse().ok().map(TraceHeader::CpusOnline)
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
    Ok(Some(SchedRecord { time_ns: anchor.time_ns, cpu: anchor.cpu, tid, pid: None, comm, in_irq: false, event }))
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
            SchedEvent::Switch { .. } | SchedEvent::Fork { .. } | SchedEvent::Exit { .. } => r.cpu,
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
        if th.touched || th.out.runtime_ns > 0 || open_since.is_some() {
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

#[cfg(test)]
#[path = "sched_text_tests.rs"]
mod tests;
