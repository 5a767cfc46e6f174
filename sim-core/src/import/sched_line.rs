//! One line of scheduler trace text to a record: the line forms of `perf
//! script` / `perf sched script`, the ftrace `trace` file (4.4 and 6.18) and
//! `trace-cmd report` (its sched plugin's short payloads included).
//!
//! A line is anchored on its `[CPU]` field and the timestamp after it, and a
//! `sched_switch` payload on its `==>`, because a comm may hold spaces, `-`,
//! `:` and `[`. Every `key=` field that follows a comm is found from the
//! right, so no comm can fool it. The hot path allocates only the Strings of a
//! record it returns; every scan is linear in the line's length.

/// One scheduler event of the trace, with the line header's task.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedRecord {
    pub time_ns: u64,
    pub cpu: u16,
    /// The task that was running on `cpu` when the event fired.
    pub tid: u32,
    /// Its process (tgid) when the line carries one (`pid/tid`, ftrace's `( tgid)` column).
    pub pid: Option<u32>,
    pub comm: String,
    /// ftrace's context flags say the event fired in an interrupt (hard, soft
    /// or NMI: `h`, `s`, `H`, `z`, `Z`): the task in the header did not cause it.
    pub in_irq: bool,
    pub event: SchedEvent,
}

/// What one line of trace text holds (see [`parse_line_kind`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SchedLine {
    Record(SchedRecord),
    /// A header fact (perf's `--header`, ftrace's `#P:`, trace-cmd's `cpus=`).
    Header(TraceHeader),
    /// Events the tracer dropped: ftrace's `CPU:1 [LOST 5 EVENTS]`, trace-cmd's
    /// `CPU:1 [5 EVENTS DROPPED]`, perf script's `PERF_RECORD_LOST lost 5`.
    /// 0 when the tracer did not say how many (`[LOST EVENTS]`, `[EVENTS DROPPED]`).
    Lost(u64),
    /// Blank, a comment, a call-chain line or an event this parser does not read.
    Skipped,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TraceHeader {
    /// `# os release : 6.18.44-…`
    OsRelease(String),
    /// `# nrcpus online : 2`, ftrace's `#P:2`, trace-cmd's `cpus=2`.
    CpusOnline(u16),
}

#[derive(Clone, Debug, PartialEq)]
pub enum SchedEvent {
    Switch {
        prev_comm: String,
        prev_pid: u32,
        prev_prio: i32,
        /// As printed: the kernel's letters (`S`, `D`, `R`, `R+`, `S|D`, 6.x `I`…),
        /// or trace-cmd's plugin letters (`write_state`: bits in order `SDTtZXxW`,
        /// so on 6.x its `Z` is EXIT_DEAD, `X` EXIT_ZOMBIE, `x` parked, `W` idle;
        /// `R` for running or preempted, never `R+`).
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
    /// sched_stat_runtime: the kernel charged `pid` with `runtime_ns` of CPU
    /// time, the slice that ends at the record's time (6.18 fair.c update_se(),
    /// from update_curr() for fair tasks and update_curr_common() for the
    /// other classes; 4.4 fair.c update_curr(), fair tasks only). The payload's
    /// task may not be the header's (an update_curr() of another CPU's queue).
    StatRuntime {
        comm: String,
        pid: u32,
        runtime_ns: u64,
    },
}

/// The events `parse_script` (measure) reads; `parse_line_kind` reads fork and exit too.
const EVENTS: [&str; 6] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_stat_runtime",
];

/// One line of trace text, for streaming readers (`sim-cli import`): the
/// same rules as [`parse_script`](super::parse_script), plus header facts,
/// lost-event marks, and sched_process_fork/exit records.
/// Err is the reason, without the line number (the caller counts lines).
pub fn parse_line_kind(raw: &str) -> Result<SchedLine, String> {
    let line = raw.trim_end_matches(['\r', '\n']);
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Ok(SchedLine::Skipped);
    }
    if let Some(h) = trimmed.strip_prefix('#') {
        // ftrace's `##### CPU 1 buffer started ####` (6.18 trace.c
        // test_cpu_buff_start) has no fact: skipped with the comments.
        return Ok(header(h.trim()).map_or(SchedLine::Skipped, SchedLine::Header));
    }
    parse_body(line, true)
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

/// A line that is neither blank nor a `#` comment. `process_events`: read
/// sched_process_fork/exit too (`parse_script` skips them, as it always did).
pub(super) fn parse_body(line: &str, process_events: bool) -> Result<SchedLine, String> {
    let anchor = match find_anchor(line) {
        Found::Anchor(a) => a,
        Found::Counter(stamp) => {
            // 6.18 trace.c trace_clocks[]: counter, uptime (jiffies) and
            // x86-tsc are not in ns (in_ns = 0).
            return Err(format!(
                "timestamp `{stamp}` is a raw count, not SECS.FRAC: the trace was recorded with a counter \
                 trace_clock (counter, uptime, x86-tsc); record with a time clock (trace_clock local, global, \
                 mono or boot)"
            ));
        }
        Found::Nothing => return no_anchor(line),
    };
    let rest = anchor.rest.trim_start();
    // perf script --show-lost-events: `comm tid [CPU] TIME: PERF_RECORD_LOST lost N`
    // (6.18 tools/perf/util/event.c perf_event__fprintf_lost).
    if let Some(n) = rest.strip_prefix("PERF_RECORD_LOST lost ") {
        return n.trim().parse().map(SchedLine::Lost).map_err(|_| format!("lost count `{}` not a number", n.trim()));
    }
    let task = parse_task(line[..anchor.bracket].trim())?;
    // The event name ends at the first `: ` (the name itself holds a `:`,
    // as in `sched:sched_switch`), or at a final `:` when there is no payload.
    let (name, payload) = match find_colon_space(rest) {
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
            let comm = comm.to_string();
            match name {
                "sched_waking" => SchedEvent::Waking { comm, pid, prio, target_cpu },
                "sched_wakeup" => SchedEvent::Wakeup { comm, pid, prio, target_cpu },
                _ => SchedEvent::WakeupNew { comm, pid, prio, target_cpu },
            }
        }
        "sched_migrate_task" => parse_migrate(payload)?,
        "sched_stat_runtime" => parse_stat_runtime(payload)?,
        "sched_process_fork" if process_events => parse_fork(payload)?,
        "sched_process_exit" if process_events => parse_exit(payload)?,
        _ => return Ok(SchedLine::Skipped),
    };
    // perf prints tid -1 for a thread it no longer knows (one that exited:
    // `:-1 -1`, `:-1 19409/-1`). A sched_switch fires in __schedule() on
    // its prev task, so the payload names it; for other events it stays unknown (0).
    let (tid, comm) = match (task.tid, &event) {
        (Some(tid), _) => (tid, task.comm),
        (None, SchedEvent::Switch { prev_pid, prev_comm, .. }) => (*prev_pid, prev_comm.as_str()),
        (None, _) => (0, task.comm),
    };
    Ok(SchedLine::Record(SchedRecord {
        time_ns: anchor.time_ns,
        cpu: anchor.cpu,
        tid,
        pid: task.pid,
        comm: comm.to_string(),
        in_irq: anchor.in_irq,
        event,
    }))
}

/// A line with no `[CPU] TIME:` anchor: a call chain, a lost-events mark,
/// trace-cmd's `cpus=N`, or an error saying why it cannot be read.
fn no_anchor(line: &str) -> Result<SchedLine, String> {
    let trimmed = line.trim();
    if is_callchain(trimmed) {
        return Ok(SchedLine::Skipped);
    }
    if let Some(n) = lost_mark(trimmed) {
        return Ok(SchedLine::Lost(n));
    }
    // trace-cmd report's first line (trace-cmd 3.x trace-read.c: `printf("cpus=%d\n", cpus)`).
    if let Some(n) = trimmed.strip_prefix("cpus=").and_then(|n| n.parse().ok()) {
        return Ok(SchedLine::Header(TraceHeader::CpusOnline(n)));
    }
    let first = trimmed.split_whitespace().next().unwrap_or("");
    let mid_line = first.contains('=') || trimmed.contains("==>");
    Err(match EVENTS.iter().find(|e| line.contains(**e)) {
        Some(e) => format!("{e} line without its `[CPU] TIME:` header: it starts mid-line (cut?)"),
        None if mid_line => {
            "starts mid-line: a cut event payload with no `comm tid [CPU] TIME: event:` before it".to_string()
        }
        None => "not an event line (no `[CPU] TIME:` anchor; truncated?)".to_string(),
    })
}

/// ftrace's `CPU:1 [LOST 5 EVENTS]` / `CPU:1 [LOST EVENTS]` (6.18 trace.c
/// print_trace_line; 4.4 the same) and trace-cmd's `CPU:1 [5 EVENTS DROPPED]` /
/// `CPU:1 [EVENTS DROPPED]` (trace-cmd 3.x trace-read.c trace_show_data).
/// Unknown counts are 0.
fn lost_mark(s: &str) -> Option<u64> {
    let s = match s.strip_prefix("CPU:") {
        Some(r) => r.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start(),
        None => s,
    };
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    if let Some(n) = inner.strip_prefix("LOST").and_then(|r| r.strip_suffix("EVENTS")) {
        let n = n.trim();
        return if n.is_empty() { Some(0) } else { n.parse().ok() };
    }
    let n = inner.strip_suffix("EVENTS DROPPED")?.trim();
    if n.is_empty() { Some(0) } else { n.parse().ok() }
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
    /// The ftrace flags' hard/soft-irq column says interrupt context.
    in_irq: bool,
    /// Text after the timestamp's `:`.
    rest: &'a str,
}

enum Found<'a> {
    Anchor(Anchor<'a>),
    /// `[CPU]` then a stamp with no `.`: a counter trace clock.
    Counter(&'a str),
    Nothing,
}

/// The first `[digits]` followed by a `SECS.FRAC:` timestamp (an ftrace
/// flags field such as `d..3` may sit between them). Linear in the line:
/// each `[` is followed only over its digits.
fn find_anchor(line: &str) -> Found<'_> {
    let bytes = line.as_bytes();
    let mut counter = None;
    for (bracket, _) in line.match_indices('[') {
        let digits = bytes[bracket + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let close = bracket + 1 + digits;
        if digits == 0 || bytes.get(close) != Some(&b']') {
            continue;
        }
        let Ok(cpu) = line[bracket + 1..close].parse::<u16>() else { continue };
        let tail = &line[close + 1..];
        if !tail.starts_with(char::is_whitespace) {
            continue;
        }
        let (first, after_first) = next_token(tail);
        let second = next_token(after_first).0;
        let found = match parse_stamp(first) {
            Some(t) => Some(("", t)),
            None => parse_stamp(second).map(|t| (first, t)),
        };
        if let Some((flags, time_ns)) = found {
            // Neither an ftrace flags field nor the stamp holds a `:` before
            // the one that ends the stamp, so the event starts after the first.
            let stamp_end = tail.find(':').map_or(tail.len(), |p| p + 1);
            // 6.18 trace_output.c trace_print_lat_fmt: the third flag is the
            // hardsoft_irq char, 'Z' NMI in hardirq, 'z' NMI, 'H' hardirq in
            // softirq, 'h' hardirq, 's' softirq, '.' none (4.4: H, h, s, .).
            let in_irq = matches!(flags.as_bytes().get(2), Some(b'h' | b's' | b'H' | b'z' | b'Z'));
            return Found::Anchor(Anchor { bracket, cpu, time_ns, in_irq, rest: &tail[stamp_end..] });
        }
        // 6.18 trace_output.c trace_print_time: `" %12llu"` when the clock
        // is a counter (no TRACE_FILE_TIME_IN_NS), right after `[CPU]` or the flags.
        if counter.is_none() {
            counter = [first, second].into_iter().find(|t| t.strip_suffix(':').is_some_and(is_num));
        }
    }
    counter.map_or(Found::Nothing, Found::Counter)
}

/// The first whitespace-separated token of `s` and the text after it.
fn next_token(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], &s[end..])
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

/// The line header's task.
struct Task<'a> {
    comm: &'a str,
    /// None: perf printed `-1` (see `parse_body`).
    tid: Option<u32>,
    pid: Option<u32>,
}

fn is_num(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A pid, tid or tgid of the line header.
fn id(s: &str, what: &str) -> Result<u32, String> {
    s.parse().map_err(|_| format!("{what} `{s}` out of range"))
}

/// The header before `[CPU]`: `comm tid`, `comm pid/tid`, or ftrace's
/// `comm-tid`, the last maybe followed by its `( tgid)` column (6.18
/// trace_output.c trace_print_context with options/record-tgid: `"(%7d) "`,
/// `"(-------) "` when the tgid is unknown).
fn parse_task(head: &str) -> Result<Task<'_>, String> {
    if let Some(inner_start) = head.strip_suffix(')').and_then(|h| h.rfind('(')) {
        let inner = head[inner_start + 1..head.len() - 1].trim();
        let before = head[..inner_start].trim_end();
        if let Some((comm, tid)) = before.rsplit_once('-')
            && is_num(tid)
            && (is_num(inner) || (!inner.is_empty() && inner.bytes().all(|b| b == b'-')))
        {
            let pid = if is_num(inner) { Some(id(inner, "tgid")?) } else { None };
            return Ok(Task { comm: comm.trim(), tid: Some(id(tid, "tid")?), pid });
        }
    }
    if let Some(p) = head.rfind(char::is_whitespace) {
        let last = &head[p + 1..];
        // 6.18 tools/perf/builtin-script.c perf_sample__fprintf_start:
        // `"%7d/%-7d "` pid/tid, or `"%7d "` tid; -1 when perf lost the thread.
        let is_tid = |t: &str| is_num(t) || t == "-1";
        let ids = match last.split_once('/') {
            Some((pid, tid)) if is_num(pid) && is_tid(tid) => Some((Some(pid), tid)),
            None if is_tid(last) => Some((None, last)),
            _ => None,
        };
        if let Some((pid, tid)) = ids {
            let pid = match pid {
                Some(p) => Some(id(p, "pid")?),
                None => None,
            };
            let tid = if tid == "-1" { None } else { Some(id(tid, "tid")?) };
            return Ok(Task { comm: head[..p].trim(), tid, pid });
        }
    }
    if let Some((comm, tid)) = head.rsplit_once('-')
        && is_num(tid)
    {
        return Ok(Task { comm: comm.trim(), tid: Some(id(tid, "tid")?), pid: None });
    }
    if is_num(head) {
        return Ok(Task { comm: "", tid: Some(id(head, "tid")?), pid: None });
    }
    Err(format!("no tid before `[CPU]` in `{head}` (expected `comm tid`, `comm pid/tid` or `comm-tid`)"))
}

/// Splits `…<pat>value` at the LAST `pat` (a ` key=` constant), or at a
/// `key=` that starts `s`, so a comm before it may hold anything.
fn last_field<'a>(s: &'a str, pat: &'static str, event: &str) -> Result<(&'a str, &'a str), String> {
    if let Some(p) = rfind_key(s, pat) {
        return Ok((&s[..p], s[p + pat.len()..].trim()));
    }
    let key = &pat[1..];
    match s.strip_prefix(key) {
        Some(v) => Ok(("", v.trim())),
        None => Err(format!("truncated {event} (no `{key}`)")),
    }
}

/// `s.rfind(pat)` for a ` key=` pattern, without building a substring
/// searcher per call: each `=` from the right is checked for ` key` before it.
fn rfind_key(s: &str, pat: &'static str) -> Option<usize> {
    let (b, key) = (s.as_bytes(), &pat.as_bytes()[..pat.len() - 1]);
    let mut end = b.len();
    while let Some(eq) = b[..end].iter().rposition(|&c| c == b'=') {
        if b[..eq].ends_with(key) {
            return Some(eq - key.len());
        }
        end = eq;
    }
    None
}

/// The first `: ` in `s` (a byte scan: the event name is short).
fn find_colon_space(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(1)).find(|&i| b[i] == b':' && b[i + 1] == b' ')
}

fn num<T: std::str::FromStr>(v: &str, key: &str, event: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{event}: `{key}={v}` is not a number in range"))
}

/// The value of the `key=` (`key` given with its `=`) that starts `s`.
fn comm_field<'a>(s: &'a str, key: &'static str, event: &str) -> Result<&'a str, String> {
    s.strip_prefix(key).ok_or_else(|| format!("{event}: expected `{key}` first"))
}

fn parse_switch(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_switch";
    let (left, right) = match payload.as_bytes().windows(3).position(|w| w == b"==>") {
        Some(arrow) => (payload[..arrow].trim(), payload[arrow + 3..].trim()),
        // `trace-cmd report -R`: every field as `name=value`, no `==>`.
        None => match rfind_key(payload, " next_comm=") {
            Some(p) if payload.starts_with("prev_comm=") => (payload[..p].trim(), payload[p + 1..].trim()),
            _ => return Err(format!("truncated {EV} (no `==>`)")),
        },
    };
    if !left.starts_with("prev_comm=") && !right.starts_with("next_comm=") {
        return plugin_switch(left, right);
    }
    let (left, prev_state) = last_field(left, " prev_state=", EV)?;
    let (left, prev_prio) = last_field(left, " prev_prio=", EV)?;
    let (left, prev_pid) = last_field(left, " prev_pid=", EV)?;
    let prev_comm = comm_field(left.trim_start(), "prev_comm=", EV)?;
    let (r, next_prio) = last_field(right, " next_prio=", EV)?;
    let (r, next_pid) = last_field(r, " next_pid=", EV)?;
    let next_comm = comm_field(r.trim_start(), "next_comm=", EV)?;
    if prev_state.is_empty() {
        return Err(format!("{EV}: empty prev_state"));
    }
    Ok(SchedEvent::Switch {
        prev_pid: num(prev_pid, "prev_pid", EV)?,
        prev_prio: num(prev_prio, "prev_prio", EV)?,
        next_pid: num(next_pid, "next_pid", EV)?,
        next_prio: num(next_prio, "next_prio", EV)?,
        prev_comm: prev_comm.to_string(),
        prev_state: raw_state(prev_state).to_string(),
        next_comm: next_comm.to_string(),
    })
}

/// `prev_state` as the kernel's TP_printk letters would show it when a raw
/// reader (`trace-cmd report -R`) printed the number: 0 is `R`, the
/// preemption bit alone is `R+` (6.18 sched.h __trace_sched_switch_state:
/// TASK_REPORT_MAX = 0x100; 4.4: TASK_RUNNING | TASK_STATE_MAX = 2048).
/// Other numbers (their bits differ between versions) stay as printed.
fn raw_state(state: &str) -> &str {
    match state {
        "0" => "R",
        "256" | "2048" => "R+",
        s => s,
    }
}

/// `comm=X pid=N prio=P [success=1] target_cpu=C`, or trace-cmd's plugin form.
fn parse_wake<'a>(payload: &'a str, ev: &str) -> Result<(&'a str, u32, i32, u16), String> {
    if !payload.starts_with("comm=") && payload.rsplit(' ').next().is_some_and(|t| t.starts_with("CPU:")) {
        return plugin_wake(payload, ev);
    }
    let (s, target_cpu) = last_field(payload, " target_cpu=", ev)?;
    // Very old kernels print `success=1` before target_cpu.
    let s = strip_success(s);
    let (s, prio) = last_field(s, " prio=", ev)?;
    let (s, pid) = last_field(s, " pid=", ev)?;
    let comm = comm_field(s.trim_start(), "comm=", ev)?;
    Ok((comm, num(pid, "pid", ev)?, num(prio, "prio", ev)?, num(target_cpu, "target_cpu", ev)?))
}

/// `s` without a final ` success=N`.
fn strip_success(s: &str) -> &str {
    match rfind_key(s, " success=") {
        Some(p) if s[p + 9..].bytes().all(|b| b.is_ascii_digit()) => &s[..p],
        _ => s,
    }
}

fn parse_migrate(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_migrate_task";
    let (s, dest_cpu) = last_field(payload, " dest_cpu=", EV)?;
    let (s, orig_cpu) = last_field(s, " orig_cpu=", EV)?;
    let (s, prio) = last_field(s, " prio=", EV)?;
    let (s, pid) = last_field(s, " pid=", EV)?;
    let comm = comm_field(s.trim_start(), "comm=", EV)?;
    Ok(SchedEvent::Migrate {
        comm: comm.to_string(),
        pid: num(pid, "pid", EV)?,
        prio: num(prio, "prio", EV)?,
        orig_cpu: num(orig_cpu, "orig_cpu", EV)?,
        dest_cpu: num(dest_cpu, "dest_cpu", EV)?,
    })
}

/// `comm=X pid=N runtime=R [ns]` (6.18 sched.h sched_stat_runtime
/// TP_printk); before 6.8 ` vruntime=V [ns]` follows (4.4, 6.6). A raw
/// reader (`trace-cmd report -R`) prints the numbers without ` [ns]`.
fn parse_stat_runtime(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_stat_runtime";
    fn unit(s: &str) -> &str {
        s.strip_suffix(" [ns]").unwrap_or(s).trim_end()
    }
    let mut s = unit(payload);
    if let Some(p) = rfind_key(s, " vruntime=") {
        num::<u64>(s[p + 10..].trim(), "vruntime", EV)?;
        s = unit(&s[..p]);
    }
    let (s, runtime) = last_field(s, " runtime=", EV)?;
    let (s, pid) = last_field(s, " pid=", EV)?;
    let comm = comm_field(s.trim_start(), "comm=", EV)?;
    Ok(SchedEvent::StatRuntime {
        comm: comm.to_string(),
        pid: num(pid, "pid", EV)?,
        runtime_ns: num(runtime, "runtime", EV)?,
    })
}

/// `comm=P pid=N child_comm=C child_pid=M` (4.4 and 6.18 sched.h
/// sched_process_fork TP_printk, the same four fields). The parent is the
/// line header's task; only the child is kept.
fn parse_fork(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_process_fork";
    let (s, child_pid) = last_field(payload, " child_pid=", EV)?;
    let (s, child_comm) = last_field(s, " child_comm=", EV)?;
    let (s, pid) = last_field(s, " pid=", EV)?;
    comm_field(s.trim_start(), "comm=", EV)?;
    num::<u32>(pid, "pid", EV)?;
    Ok(SchedEvent::Fork { child_comm: child_comm.to_string(), child_pid: num(child_pid, "child_pid", EV)? })
}

/// `comm=X pid=N prio=P`, 6.18 adds ` group_dead=true|false` (6.18 sched.h
/// sched_process_exit TP_printk; 4.4 sched_process_template).
fn parse_exit(payload: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_process_exit";
    let s = match rfind_key(payload, " group_dead=") {
        Some(p) if matches!(&payload[p + 12..], "true" | "false") => &payload[..p],
        _ => payload,
    };
    let (s, prio) = last_field(s, " prio=", EV)?;
    let (s, pid) = last_field(s, " pid=", EV)?;
    let comm = comm_field(s.trim_start(), "comm=", EV)?;
    Ok(SchedEvent::Exit { comm: comm.to_string(), pid: num(pid, "pid", EV)?, prio: num(prio, "prio", EV)? })
}

/// trace-cmd's `comm:pid [prio]`: the comm may hold `:`, so the pid follows
/// the last one. `[prio]` is printed whenever the event has the field (all
/// kernels), so it is required.
fn plugin_task<'a>(s: &'a str, ev: &str) -> Result<(&'a str, u32, i32), String> {
    let s = s.trim();
    let (task, prio) = match s.strip_suffix(']').and_then(|b| b.rsplit_once(" [")) {
        Some((task, prio)) => (task, prio),
        None => return Err(format!("{ev}: no `[prio]` after `{s}` (trace-cmd form `comm:pid [prio]`)")),
    };
    let Some((comm, pid)) = task.rsplit_once(':') else {
        return Err(format!("{ev}: no `comm:pid` in `{task}`"));
    };
    Ok((comm, num(pid, "pid", ev)?, num(prio, "prio", ev)?))
}

/// trace-cmd report's sched plugin form (libtraceevent plugins/
/// plugin_sched_switch.c sched_switch_handler): `prev:pid [prio] STATE ==> next:pid [prio]`.
fn plugin_switch(left: &str, right: &str) -> Result<SchedEvent, String> {
    const EV: &str = "sched_switch";
    let Some((prev, prev_state)) = left.rsplit_once(' ') else {
        return Err(format!("truncated {EV} (no `comm:pid [prio] STATE` before `==>`)"));
    };
    let (prev_comm, prev_pid, prev_prio) = plugin_task(prev, EV)?;
    let (next_comm, next_pid, next_prio) = plugin_task(right, EV)?;
    Ok(SchedEvent::Switch {
        prev_comm: prev_comm.to_string(),
        prev_pid,
        prev_prio,
        prev_state: prev_state.to_string(),
        next_comm: next_comm.to_string(),
        next_pid,
        next_prio,
    })
}

/// trace-cmd report's sched plugin form of sched_wakeup and sched_wakeup_new
/// (plugin_sched_switch.c sched_wakeup_handler): `comm:pid [prio] [success=N] CPU:ccc`.
fn plugin_wake<'a>(payload: &'a str, ev: &str) -> Result<(&'a str, u32, i32, u16), String> {
    let Some(p) = payload.rfind(" CPU:") else {
        return Err(format!("truncated {ev} (no `CPU:`)"));
    };
    let target_cpu = num(payload[p + 5..].trim(), "CPU", ev)?;
    let (comm, pid, prio) = plugin_task(strip_success(&payload[..p]), ev)?;
    Ok((comm, pid, prio, target_cpu))
}
