//! The trace's ftrace text (`systemTraceEvents`) as Perfetto imports it: the
//! thread-state table it builds must show each wait for a CPU as a Runnable
//! span (`R` after a `sched_waking`, `R+` after a preemption) as long as the
//! scheduling delay the simulator reports for that wait.
//!
//! Perfetto's trace processor cannot be run here (the `perfetto` Python
//! package downloads its `trace_processor_shell` from a host the build
//! machines cannot reach), so the table is derived by `thread_states` below,
//! a small independent reading of the ftrace text that follows Perfetto's
//! own importer, as of google/perfetto `ec5d16b14b` (2026):
//!
//! - `src/trace_processor/importers/systrace/systrace_line_tokenizer.cc`
//!   (`SystraceLineTokenizer::Tokenize`): the line prefix
//!   `comm-pid [cpu] flags secs.frac: event:`; the timestamp is
//!   `static_cast<int64_t>(secs * 1e9)` of the parsed double.
//! - `src/trace_processor/importers/systrace/systrace_line_parser.cc`
//!   (`SystraceLineParser::ParseLine`): `sched_switch` goes to
//!   `FtraceSchedEventTracker::PushSchedSwitch`; `sched_waking` to
//!   `ThreadStateTracker::PushWakingEvent` (wakee `pid=`, waker the line's
//!   pid); `sched_wakeup` and `sched_wakeup_new` have no branch: they do not
//!   touch thread states.
//! - `src/trace_processor/types/task_state.cc`: `prev_state` text →
//!   `TaskState::FromSystrace` → raw 4.4 bits → `ToString`: `R`, `R+`, `S`,
//!   `X` come back unchanged.
//! - `src/trace_processor/importers/common/thread_state_tracker.cc`:
//!   `PushSchedSwitchEvent` closes prev's open state (its duration is left
//!   unknown, -1, if prev was not Running: data loss) and opens one in
//!   `prev_state`, then closes next's and opens `Running`;
//!   `PushWakingEvent` opens `R` for a thread with no state yet, ignores a
//!   thread that is `R` or `Running`, and otherwise (any other state,
//!   `R+` included) closes it and opens `R`; the swapper (pid 0) gets no
//!   rows; a state still open at the end keeps `dur = -1`.
//!
//! The same comparison runs against the real trace processor through
//! `tests/perfetto/check_thread_state.py` when it can (`$PERFETTO_PYTHON`,
//! default `python3`, with the `perfetto` package, and a
//! `$TRACE_PROCESSOR_SHELL` binary or the package able to fetch one);
//! otherwise that test prints `SKIPPED: …` and passes.

use sim_core::export::{Trace, chrome};
use sim_core::metrics::recorder::TraceWindow;
use sim_core::time::SimTime;
use sim_core::{Scenario, Simulation};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of Perfetto's `thread_state` table.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Row {
    ts: i64,
    /// -1 while the state is still open (Perfetto's convention).
    dur: i64,
    tid: u32,
    state: String,
    /// The tid of the line that woke it (`waker_utid`), for `R` rows.
    waker: Option<u32>,
}

/// One ftrace text line as `SystraceLineTokenizer` splits it.
struct Line<'a> {
    pid: u32,
    task: &'a str,
    ts: i64,
    event: &'a str,
    args: BTreeMap<&'a str, &'a str>,
}

fn tokenize(line: &str) -> Line<'_> {
    // `-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):`
    // on the lines this exporter writes: `comm-pid [cpu] flags ts: event: args`.
    let open = line.find(" [").unwrap_or_else(|| panic!("no [cpu] in {line:?}"));
    let (task, pid) = line[..open].trim().rsplit_once('-').unwrap_or_else(|| panic!("no -pid in {line:?}"));
    let rest = &line[open + 2..];
    let (cpu, rest) = rest.split_once(']').unwrap();
    assert!(cpu.parse::<u32>().is_ok(), "{line:?}");
    let mut words = rest.split_whitespace();
    let flags = words.next().unwrap();
    assert!(flags.len() == 4 && flags[..3].chars().all(|c| c.is_ascii_alphabetic() || c == '.'), "{line:?}");
    let ts = words.next().unwrap().strip_suffix(':').unwrap_or_else(|| panic!("{line:?}"));
    let secs: f64 = ts.parse().unwrap();
    let event = words.next().unwrap().strip_suffix(':').unwrap_or_else(|| panic!("{line:?}"));
    let args_str = rest.split_once(&format!(" {event}: ")).map_or("", |(_, a)| a.trim());
    // ParseLine: tokens split on ' '; `key=value` (the key is the first piece
    // split on '=', the value the last), a token without '=' is `name`.
    let mut args = BTreeMap::new();
    for tok in args_str.split(' ').filter(|t| !t.is_empty()) {
        if tok.contains('=') {
            let mut pieces = tok.split('=').filter(|p| !p.is_empty());
            let key = pieces.next().unwrap_or("");
            let value = pieces.next_back().unwrap_or("");
            args.insert(key, value);
        } else {
            args.insert("name", tok);
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    let ts = (secs * 1e9) as i64;
    Line { pid: pid.parse().unwrap(), task, ts, event, args }
}

/// `TaskState::FromSystrace` → `ToRawStateOnlyForSystraceConversions` →
/// `FromRawPrevState` (4.4 layout: no kernel version in a JSON trace) →
/// `ToString`, for the states this exporter writes.
fn prev_state(s: &str) -> String {
    match s {
        "R" | "R+" | "S" | "D" | "X" => s.to_string(),
        other => panic!("prev_state {other} is not one the exporter writes"),
    }
}

/// Thread names (tid → comm, the last name seen wins) and the
/// `thread_state` rows, in insertion order.
fn thread_states(text: &str) -> (BTreeMap<u32, String>, Vec<Row>) {
    let mut names = BTreeMap::new();
    let mut rows: Vec<Row> = Vec::new();
    // Per thread, its last row (`prev_row_numbers_for_thread_[utid].last_row`).
    let mut last: BTreeMap<u32, usize> = BTreeMap::new();
    let is_running = |s: &str| s == "Running";
    let is_blocked = |s: &str| !(s == "R" || s == "Running");
    let add_open =
        |rows: &mut Vec<Row>, last: &mut BTreeMap<u32, usize>, ts: i64, tid: u32, state: &str, waker: Option<u32>| {
            if tid == 0 {
                return; // the swapper gets no rows
            }
            rows.push(Row { ts, dur: -1, tid, state: state.to_string(), waker });
            last.insert(tid, rows.len() - 1);
        };
    let close = |rows: &mut Vec<Row>, last: &BTreeMap<u32, usize>, ts: i64, tid: u32, data_loss: bool| {
        if let Some(&i) = last.get(&tid)
            && !data_loss
        {
            rows[i].dur = ts - rows[i].ts;
        }
    };
    for raw in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let line = tokenize(raw);
        if line.task != "<...>" {
            names.insert(line.pid, line.task.to_string());
        }
        match line.event {
            "sched_switch" => {
                let prev: u32 = line.args["prev_pid"].parse().unwrap();
                let next: u32 = line.args["next_pid"].parse().unwrap();
                names.insert(prev, line.args["prev_comm"].to_string());
                names.insert(next, line.args["next_comm"].to_string());
                let state = prev_state(line.args["prev_state"]);
                let data_loss = last.get(&prev).is_some_and(|&i| !is_running(&rows[i].state));
                close(&mut rows, &last, line.ts, prev, data_loss);
                add_open(&mut rows, &mut last, line.ts, prev, &state, None);
                close(&mut rows, &last, line.ts, next, false);
                add_open(&mut rows, &mut last, line.ts, next, "Running", None);
            }
            "sched_waking" => {
                let wakee: u32 = line.args["pid"].parse().unwrap();
                names.insert(wakee, line.args["comm"].to_string());
                match last.get(&wakee) {
                    None => add_open(&mut rows, &mut last, line.ts, wakee, "R", Some(line.pid)),
                    Some(&i) if !is_blocked(&rows[i].state) => {} // spurious: already R or Running
                    Some(_) => {
                        close(&mut rows, &last, line.ts, wakee, false);
                        add_open(&mut rows, &mut last, line.ts, wakee, "R", Some(line.pid));
                    }
                }
            }
            // No branch in ParseLine: not used for thread states
            // (sched_migrate_task has none either: it is skipped).
            "sched_wakeup" | "sched_wakeup_new" | "sched_migrate_task" => {}
            other => panic!("the exporter writes no {other} lines"),
        }
    }
    (names, rows)
}

/// The table as `check_thread_state.py` prints it from the real trace
/// processor: `ts dur tid thread state waker`, ordered by tid, ts, row id.
fn render(names: &BTreeMap<u32, String>, rows: &[Row]) -> String {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| (r.tid, r.ts)); // stable: row id breaks ties
    let mut out = String::from("# ts_ns\tdur_ns\ttid\tthread\tstate\twaker_tid\n");
    for r in sorted {
        let waker = r.waker.map_or(String::new(), |w| w.to_string());
        out.push_str(&format!("{}\t{}\t{}\t{}\t{}\t{}\n", r.ts, r.dur, r.tid, names[&r.tid], r.state, waker));
    }
    out
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn traced(path: &str, window: TraceWindow) -> Trace {
    traced_with(path, &[], window)
}

fn traced_with(path: &str, overrides: &[(&str, &str)], window: TraceWindow) -> Trace {
    let file = root().join(path);
    let text = std::fs::read_to_string(&file).unwrap();
    let s = Scenario::from_toml(path, &text).unwrap().with_overrides(overrides).unwrap();
    let mut sim = Simulation::new(&s);
    sim.enable_trace(window).expect("traced from the start");
    sim.run_to_end();
    Trace::from_sim(&mut sim).unwrap()
}

const SMALL: &str = "tests/perfetto/runnable.toml";
const EXPECTED: &str = "tests/perfetto/runnable.thread_state.tsv";

/// The table for the small scenario, checked by hand (see the comments in
/// the expected file). On the exporter without `sched_waking` it has no `R`
/// rows at all: woken tasks go from `S` straight to `Running`.
#[test]
fn perfetto_thread_states_of_the_small_scenario_match_the_checked_in_table() {
    let t = traced(SMALL, TraceWindow::all(1_000_000));
    let (names, rows) = thread_states(&chrome::systrace(&t));
    let expected = std::fs::read_to_string(root().join(EXPECTED)).unwrap();
    let expected: String = expected.lines().filter(|l| !l.starts_with("##")).map(|l| format!("{l}\n")).collect();
    let got = render(&names, &rows);
    assert!(got == expected, "thread states differ from {EXPECTED}:\n--- got\n{got}--- expected\n{expected}");
}

/// Run slices per tid, in order: `(start_ns, sch_delay_ns)` from the JSON
/// `traceEvents` (a run that ended inside the trace carries the simulator's
/// own `sch_delay_ns`: wakeup or preemption to run; the run still going at
/// the end has none).
fn run_slices(json: &serde_json::Value) -> BTreeMap<u32, Vec<(u64, Option<u64>)>> {
    let us = |v: &serde_json::Value| {
        let s = v.to_string();
        let (a, b) = s.split_once('.').unwrap_or((&s, "0"));
        a.parse::<u64>().unwrap() * 1000 + format!("{b:0<3}")[..3].parse::<u64>().unwrap()
    };
    let mut runs: BTreeMap<u32, Vec<(u64, Option<u64>)>> = BTreeMap::new();
    for e in json["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X") {
        let tid = u32::try_from(e["args"]["tid"].as_u64().unwrap()).unwrap();
        runs.entry(tid).or_default().push((us(&e["ts"]), e["args"]["sch_delay_ns"].as_u64()));
    }
    for r in runs.values_mut() {
        r.sort_by_key(|x| x.0); // stable: a task's 0 ns runs keep their order
    }
    runs
}

/// Every run in the trace, seen through Perfetto's rules: the thread is
/// `Running` from the run's start, and the wait before it is a runnable row
/// (`R` after a wakeup, `R+` after a preemption) ending there and as long
/// as the scheduling delay the simulator reports for that run. The only
/// runs without one are first runs (a fork: `sched_wakeup_new` only, which
/// Perfetto does not turn into a state), and runs whose wait began before
/// the window. Timestamps are the text's microseconds (truncated: < 1 µs)
/// read by Perfetto as `(int64)(secs * 1e9)` (1 ns less at times), so a
/// time or a duration may differ from the exact one by up to 1 µs. Returns the runs checked
/// and the waits among them.
fn check_runnable_spans(t: &Trace) -> (usize, usize, usize) {
    let json: serde_json::Value = serde_json::from_str(&chrome::to_json(t, "test")).unwrap();
    let text = json["systemTraceEvents"].as_str().unwrap();
    let (_, rows) = thread_states(text);
    let mut by_tid: BTreeMap<u32, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        by_tid.entry(r.tid).or_default().push(r);
    }
    let from = t.from_ns();
    let forked: Vec<u32> = text
        .lines()
        .filter_map(|l| {
            l.split_once(": sched_wakeup_new: ")?.1.split(' ').find_map(|a| a.strip_prefix("pid=")?.parse().ok())
        })
        .collect();
    let (mut checked, mut waits, mut long_waits, mut firsts) = (0, 0, 0, 0);
    for (tid, runs) in run_slices(&json) {
        // A run clipped at the window's start was switched in before it: no
        // Running row in the text.
        let runs: Vec<_> = runs.into_iter().filter(|r| !(r.0 == from && from > 0)).collect();
        let thread = &by_tid[&tid];
        let running: Vec<usize> = (0..thread.len()).filter(|&i| thread[i].state == "Running").collect();
        assert_eq!(runs.len(), running.len(), "tid {tid}: runs in the JSON vs Running rows");
        for (&(start, sch_delay), &at) in runs.iter().zip(&running) {
            assert!(
                (start as i64 - thread[at].ts).abs() <= 1000,
                "tid {tid}: run at {start} ns, Running row at {}",
                thread[at].ts
            );
            checked += 1;
            let Some(sch_delay) = sch_delay else { continue };
            if at == 0 {
                // The thread's first row: no state before it in Perfetto. In a
                // trace from the start of the run, only a task's first run (its
                // fork, traced by a `sched_wakeup_new` only) looks like this.
                if from == 0 {
                    assert!(forked.contains(&tid), "tid {tid}: no runnable row before its run at {start} ns");
                }
                firsts += 1;
                continue;
            }
            let before = thread[at - 1];
            assert!(
                before.state == "R" || before.state == "R+",
                "tid {tid}: the wait before the run at {start} ns is {:?}, not runnable (rows {:?})",
                before.state,
                &thread[at.saturating_sub(2)..(at + 1).min(thread.len())]
            );
            assert_eq!(before.ts + before.dur, thread[at].ts, "tid {tid}: the runnable row ends where the run starts");
            assert!(
                (before.dur - sch_delay as i64).abs() <= 1000,
                "tid {tid}: runnable for {} ns before the run at {start} ns, the simulator reports {sch_delay} ns",
                before.dur
            );
            waits += 1;
            if sch_delay >= 1000 {
                long_waits += 1;
            }
        }
    }
    // Conversely, no runnable row ends in anything but a run.
    for thread in by_tid.values() {
        for w in thread.windows(2) {
            if w[0].state == "R" || w[0].state == "R+" {
                assert_eq!(w[1].state, "Running", "{:?} then {:?}", w[0], w[1]);
            }
        }
    }
    if from == 0 {
        assert_eq!(firsts, forked.len(), "one run without a runnable row per task started");
    }
    (checked, waits, long_waits)
}

#[test]
fn each_runnable_span_lasts_the_scheduling_delay_the_simulator_reports() {
    let (checked, waits, long) = check_runnable_spans(&traced(SMALL, TraceWindow::all(1_000_000)));
    assert!(checked >= 19 && waits >= 12 && long >= 5, "{checked} runs, {waits} waits, {long} of 1 µs or more");
    // A shipped scenario, in a window: many CPUs, tasks and wait lengths.
    let window =
        TraceWindow { from: SimTime(1_000_000_000), to: SimTime(1_100_000_000), cpus: None, records_max: 1_000_000 };
    let (checked, waits, long) =
        check_runnable_spans(&traced_with("scenarios/jmx.toml", &[("duration", "1100ms")], window));
    eprintln!("jmx: {checked} runs, {waits} waits, {long} of 1 µs or more");
    assert!(checked > 10_000 && waits > 10_000 && long > 100, "{checked} runs, {waits} waits, {long} of 1 µs or more");
}

/// The real trace processor, where it can run: the same table from
/// `thread_state`, compared with the checked-in one by the script.
#[test]
fn perfetto_trace_processor_agrees_where_it_can_run() {
    let t = traced(SMALL, TraceWindow::all(1_000_000));
    let dir = std::env::temp_dir().join(format!("schedlab-perfetto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("runnable.json");
    std::fs::write(&json, chrome::to_json(&t, "test")).unwrap();
    let script = root().join("tests/perfetto/check_thread_state.py");
    // PERFETTO_PYTHON: an interpreter with the `perfetto` package (a venv).
    let python = std::env::var("PERFETTO_PYTHON").unwrap_or_else(|_| "python3".to_string());
    // Output goes to files, not pipes: a child that writes more than a pipe
    // holds would block, time out and pass as a skip.
    let (out_path, err_path) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let child = std::process::Command::new(&python)
        .arg(&script)
        .arg(&json)
        .arg(root().join(EXPECTED))
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn();
    let Ok(mut child) = child else {
        let _ = std::fs::remove_dir_all(&dir);
        println!("SKIPPED: trace_processor_shell not available ({python} cannot be run)");
        return;
    };
    // The package may try to download the shell: give it two minutes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&dir);
            println!("SKIPPED: trace_processor_shell not available (no answer within 120 s)");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    match status.code() {
        Some(77) => println!("{}", stdout.trim()),
        Some(0) => println!("{}", stdout.trim()),
        _ => panic!("Perfetto's trace processor disagrees with {EXPECTED}:\n{stdout}\n{stderr}"),
    }
}
