//! Tests of the `perf sched script` parser and the per-thread delays,
//! runtime, migrations and CPU busy time it summarizes.

use super::*;

const REAL: &str = include_str!("fixtures/real_sched_script.txt");
const HAND: &str = include_str!("fixtures/hand_made_sched_script.txt");

fn switch(t: u64, cpu: u16, prev: u32, state: &str, next: u32) -> SchedRecord {
    let name = |p: u32| if p == 0 { format!("swapper/{cpu}") } else { format!("t{p}") };
    SchedRecord {
        time_ns: t,
        cpu,
        tid: prev,
        pid: None,
        comm: name(prev),
        in_irq: false,
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
    SchedRecord { time_ns: t, cpu, tid: by, pid: None, comm: format!("t{by}"), in_irq: false, event }
}

fn migrate(t: u64, cpu: u16, pid: u32, orig_cpu: u16, dest_cpu: u16) -> SchedRecord {
    let event = SchedEvent::Migrate { comm: format!("t{pid}"), pid, prio: 120, orig_cpu, dest_cpu };
    SchedRecord { time_ns: t, cpu, tid: 0, pid: None, comm: "swapper".to_string(), in_irq: false, event }
}

#[test]
fn real_lines_from_this_machine_parse() {
    let recs = parse_script(REAL).expect("the captured fixture parses");
    // 154 switches, 50 wakings, 7 wakeup_new, 4 migrations, 262 stat_runtime
    // (read since measure takes run times from them); process_fork skipped.
    let count = |f: fn(&SchedEvent) -> bool| recs.iter().filter(|r| f(&r.event)).count();
    assert_eq!(count(|e| matches!(e, SchedEvent::Switch { .. })), 154);
    assert_eq!(count(|e| matches!(e, SchedEvent::Waking { .. })), 50);
    assert_eq!(count(|e| matches!(e, SchedEvent::WakeupNew { .. })), 7);
    assert_eq!(count(|e| matches!(e, SchedEvent::Migrate { .. })), 4);
    assert_eq!(count(|e| matches!(e, SchedEvent::StatRuntime { .. })), 262);
    assert_eq!(recs.len(), 215 + 262);
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
            pid: None,
            comm: "sh".to_string(),
            in_irq: false,
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
    assert_eq!(recs.len(), 8, "call chains, comments and blank lines are skipped");
    assert_eq!(
        recs[0],
        SchedRecord {
            time_ns: 100_000_001_000,
            cpu: 1,
            tid: 4242,
            pid: None,
            comm: s("Web Content"),
            in_irq: false,
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
    assert_eq!(recs[2].event, SchedEvent::Waking { comm: s("memfd:sealed-91"), pid: 28259, prio: 120, target_cpu: 0 });
    assert_eq!(recs[3].event, SchedEvent::Wakeup { comm: s("a b:c-d"), pid: 5, prio: -1, target_cpu: 1 });
    assert_eq!(
        recs[4].event,
        SchedEvent::Migrate { comm: s("Web Content"), pid: 4242, prio: 120, orig_cpu: 1, dest_cpu: 0 }
    );
    // Before 6.8 sched_stat_runtime has a vruntime too, not kept.
    assert_eq!(recs[5].event, SchedEvent::StatRuntime { comm: s("perf"), pid: 1, runtime_ns: 4050 });
    assert_eq!(recs[6].event, SchedEvent::WakeupNew { comm: s("perf-exec"), pid: 9, prio: 120, target_cpu: 1 });
    // Raw ftrace form: `comm-tid [CPU] flags stamp: event:`.
    assert_eq!(
        (recs[7].time_ns, recs[7].cpu, recs[7].tid, recs[7].comm.as_str()),
        (5_075_958_079_000, 2, 1234, "bash")
    );
    assert!(matches!(&recs[7].event, SchedEvent::Switch { prev_state, next_pid: 0, .. } if prev_state == "T"));
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
        ("  perf 1 [000] 1.000000002: sched:sched_wakeup_ne", "truncated sched_wakeup (no `:` after the event name)"),
        ("  perf 1 [000] 1.00000", "not an event line (no `[CPU] TIME:` anchor; truncated?)"),
        ("  perf 29", "not an event line (no `[CPU] TIME:` anchor; truncated?)"),
    ];
    for (bad, why) in cases {
        let text = format!("{REAL}{good}\n# comment\n{bad}\n{good}");
        let err = parse_script(&text).expect_err(bad);
        assert_eq!(err.line, REAL.lines().count() + 4, "{bad}");
        assert!(err.why.starts_with(why), "{bad}: {}", err.why);
    }
    let err =
        parse_script(&format!("{good}{}", &HAND.lines().nth(3).expect("line 4")[..120])).expect_err("cut before `==>`");
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
    // No sched_stat_runtime: nothing charged, and the switches' figures stand alone.
    assert!(s.threads.values().all(|t| t.accounted_ns.is_none()), "{:?}", s.threads);
    assert_eq!(
        s.cpus,
        vec![
            CpuSched {
                cpu: 0,
                busy_ns: 1000 + 3000 + 5000,
                switches: 2,
                migrations_in: 0,
                migrations_out: 1,
                accounted_busy_ns: 0,
                accounted_all_ns: 0,
                idle_exits: 1,
            },
            CpuSched {
                cpu: 1,
                busy_ns: 1800 + 1100 + 1900,
                switches: 4,
                migrations_in: 1,
                migrations_out: 0,
                accounted_busy_ns: 0,
                accounted_all_ns: 0,
                // At 200 (before the window: still read) and 1200; not 11000 (after it).
                idle_exits: 2,
            },
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

const FORMS: &str = include_str!("fixtures/sched_forms.txt");

/// A record with the line header's task; `pid`/`in_irq` left as the plain perf form gives them.
fn rec(time_ns: u64, cpu: u16, comm: &str, tid: u32, event: SchedEvent) -> SchedRecord {
    SchedRecord { time_ns, cpu, tid, pid: None, comm: comm.to_string(), in_irq: false, event }
}

fn sw(prev: (&str, u32, i32), state: &str, next: (&str, u32, i32)) -> SchedEvent {
    SchedEvent::Switch {
        prev_comm: prev.0.to_string(),
        prev_pid: prev.1,
        prev_prio: prev.2,
        prev_state: state.to_string(),
        next_comm: next.0.to_string(),
        next_pid: next.1,
        next_prio: next.2,
    }
}

/// Line `n` (from 1) of the forms fixture, read by the streaming parser.
fn form(n: usize) -> SchedLine {
    let line = FORMS.lines().nth(n - 1).expect("fixture line");
    parse_line_kind(line).unwrap_or_else(|e| panic!("line {n}: {e}"))
}

fn form_rec(n: usize) -> SchedRecord {
    match form(n) {
        SchedLine::Record(r) => r,
        other => panic!("line {n}: {other:?}"),
    }
}

#[test]
fn perf_forms_fill_pid_fork_and_exit() {
    let s = |x: &str| x.to_string();
    assert_eq!(
        form_rec(3),
        rec(70_030_395_035_000, 0, "perf", 11024, sw(("perf", 11024, 120), "D", ("migration/0", 18, 0)))
    );
    assert_eq!(form_rec(5).event, SchedEvent::Migrate { comm: s("perf"), pid: 11024, prio: 120, orig_cpu: 0, dest_cpu: 1 });
    // sched_process_fork: the header's task is the parent; the child is kept.
    assert_eq!(
        form_rec(6),
        rec(21_188_774_626_332, 0, "sh", 32641, SchedEvent::Fork { child_comm: s("sh"), child_pid: 32643 })
    );
    // `-F comm,pid,tid,…`: `pid/tid` fills both.
    let r = form_rec(8);
    assert_eq!((r.pid, r.tid, r.comm.as_str(), r.time_ns), (Some(18), 18, "migration/0", 70_030_395_054_298));
    // 6.18's sched_process_exit adds `group_dead=`, not kept.
    assert_eq!(form_rec(9).event, SchedEvent::Exit { comm: s("sleep"), pid: 11048, prio: 120 });
    // The hand fixture's `4200/4242` header.
    let hand = parse_script(HAND).expect("hand fixture");
    assert_eq!((hand[2].pid, hand[2].tid), (Some(4200), 4242));
    assert!(hand.iter().filter(|r| r.tid != 4242 || r.time_ns != 100_000_003_000).all(|r| r.pid.is_none()));
    // parse_script (measure) still skips fork and exit: the real capture's counts hold.
    let forks = REAL.lines().filter(|l| l.contains("sched_process_fork")).count();
    assert!(forks > 0);
    assert_eq!(REAL.lines().filter_map(|l| parse_line_kind(l).ok()).filter(|l| matches!(l, SchedLine::Record(_))).count(), 215 + 262 + forks);
}

#[test]
fn ftrace_forms_flags_tgid_and_marks() {
    let s = |x: &str| x.to_string();
    assert_eq!(form(11), SchedLine::Header(TraceHeader::CpusOnline(2)));
    assert_eq!(form_rec(12), rec(70_079_181_659_000, 0, "bash", 11190, sw(("bash", 11190, 120), "S", ("swapper/0", 0, 120))));
    // `d.s3.`: a timer softirq woke rcu_preempt, not the idle task in the header.
    // 6.18 trace_output.c trace_print_lat_fmt: the third flag is hardsoft_irq.
    let waking = form_rec(13);
    assert_eq!((waking.tid, waking.comm.as_str(), waking.in_irq), (0, "<idle>", true));
    assert_eq!(waking.event, SchedEvent::Waking { comm: s("rcu_preempt"), pid: 15, prio: 120, target_cpu: 1 });
    assert!(form_rec(14).in_irq, "dNs4.");
    let r = form_rec(15);
    assert!(!r.in_irq, "d..2.");
    assert!(matches!(r.event, SchedEvent::Switch { ref prev_state, next_pid: 0, .. } if prev_state == "I"));
    assert_eq!(form_rec(16).event, SchedEvent::Exit { comm: s("sleep"), pid: 11193, prio: 120 });
    assert_eq!(form(17), SchedLine::Skipped, "##### CPU 1 buffer started ####");
    // options/record-tgid: `comm-tid (  tgid) [CPU]`.
    let r = form_rec(18);
    assert_eq!((r.comm.as_str(), r.tid, r.pid, r.cpu, r.time_ns), ("sleep", 11198, Some(11198), 0, 70_079_693_175_000));
    assert!(matches!(r.event, SchedEvent::Switch { ref prev_state, next_pid: 11190, .. } if prev_state == "Z"));
    assert_eq!(form(19), SchedLine::Lost(5));
    // 4.4: four flag chars, `%-5d` tid.
    assert_eq!(form_rec(21), rec(5_075_958_079_000, 2, "bash", 1234, sw(("bash", 1234, 120), "S", ("swapper/2", 0, 120))));
    // Unknown tgid, unknown lost counts, and the other hardsoft_irq chars.
    let line = "   kworker/0:1-9   (-------) [000] dNH2. 1.000001: sched_waking: comm=a pid=2 prio=120 target_cpu=000";
    assert!(matches!(parse_line_kind(line), Ok(SchedLine::Record(SchedRecord { tid: 9, pid: None, in_irq: true, .. }))));
    for (flags, irq) in [("d.h2.", true), ("d.z2.", true), ("d.Z2.", true), ("dN.2.", false), ("d..3", false), ("..s.", true)] {
        let line = format!("  a b-7   [001] {flags} 2.5: sched_wakeup: comm=x pid=8 prio=120 target_cpu=001");
        let Ok(SchedLine::Record(r)) = parse_line_kind(&line) else { panic!("{line}") };
        assert_eq!((r.in_irq, r.comm.as_str(), r.tid, r.time_ns), (irq, "a b", 7, 2_500_000_000), "{flags}");
    }
    assert_eq!(parse_line_kind("CPU:3 [LOST EVENTS]"), Ok(SchedLine::Lost(0)));
    assert_eq!(parse_line_kind("[LOST 12 EVENTS]"), Ok(SchedLine::Lost(12)));
    // perf script --show-lost-events (perf_event__fprintf_lost), with perf's `:-1 -1` task.
    assert_eq!(parse_line_kind("             :-1    -1 [000]     0.000000: PERF_RECORD_LOST lost 44"), Ok(SchedLine::Lost(44)));
}

#[test]
fn trace_cmd_plugin_forms() {
    let s = |x: &str| x.to_string();
    assert_eq!(form(24), SchedLine::Header(TraceHeader::CpusOnline(2)));
    assert_eq!(form_rec(25), rec(5_075_958_079_000, 2, "bash", 1234, sw(("bash", 1234, 120), "S", ("swapper/2", 0, 120))));
    let r = form_rec(26);
    assert_eq!((r.tid, r.in_irq), (0, true));
    assert_eq!(r.event, SchedEvent::Wakeup { comm: s("rcu_preempt"), pid: 15, prio: 120, target_cpu: 1 });
    // A comm with spaces and `:`: the pid follows the last `:`; `success=` (4.4) dropped.
    assert_eq!(form_rec(27).event, SchedEvent::WakeupNew { comm: s("a b:c"), pid: 4321, prio: -1, target_cpu: 2 });
    assert_eq!(form(28), SchedLine::Lost(7));
    assert_eq!(parse_line_kind("  x-1 [000] 1.000001: sched_wakeup: y:2 [120] CPU:000").map(|_| ()), Ok(()));
    // Multi-letter plugin states and a comm with `:` on both sides of `==>`.
    let line = "  memfd:x-5 [001] d..2. 3.000000: sched_switch: memfd:x:5 [120] S|D ==> kworker/u16:1:77 [100]";
    let Ok(SchedLine::Record(r)) = parse_line_kind(line) else { panic!("{line}") };
    assert_eq!(r.event, sw(("memfd:x", 5, 120), "S|D", ("kworker/u16:1", 77, 100)));
    for (bad, why) in [
        ("  x-1 [000] 1.0: sched_switch: bash:12 S ==> y:3 [120]", "no `[prio]`"),
        ("  x-1 [000] 1.0: sched_switch: bash:12 [120] S ==> y3 [120]", "no `comm:pid`"),
        ("  x-1 [000] 1.0: sched_wakeup: bash:x [120] CPU:001", "`pid=x`"),
    ] {
        assert!(parse_line_kind(bad).is_err_and(|e| e.contains(why)), "{bad}: {:?}", parse_line_kind(bad));
    }
}

#[test]
fn counter_clock_and_cut_first_line_are_refused() {
    let counter = "            bash-11190   [000] d..2. 70079181659123: sched_switch: prev_comm=bash prev_pid=11190 prev_prio=120 prev_state=S ==> next_comm=x next_pid=0 next_prio=120";
    let why = parse_line_kind(counter).expect_err("counter clock");
    assert!(why.contains("trace_clock") && why.contains("time clock") && why.contains("70079181659123:"), "{why}");
    let why = parse_line_kind("   x-1 [001]  12345678901: sched_waking: comm=a pid=2 prio=1 target_cpu=001").expect_err("no flags");
    assert!(why.contains("trace_clock"), "{why}");
    // A file whose first line was cut mid-line.
    let cut = "_prio=120 prev_state=S ==> next_comm=x next_pid=1 next_prio=120";
    assert!(parse_line_kind(cut).is_err_and(|e| e.starts_with("starts mid-line")));
    let err = parse_script(&format!("{cut}\n{REAL}")).expect_err("cut first line");
    assert_eq!((err.line, err.why.starts_with("starts mid-line")), (1, true), "{err}");
    let cut = "4.395035:       sched:sched_switch: prev_comm=perf prev_pid=11024 prev_prio=120 prev_state=D ==> next_comm=m next_pid=18 next_prio=0";
    assert!(parse_line_kind(cut).is_err_and(|e| e.contains("starts mid-line")), "{:?}", parse_line_kind(cut));
    assert!(parse_line_kind("pid=3 prio=120 target_cpu=001").is_err_and(|e| e.starts_with("starts mid-line")));
}

#[test]
fn long_lines_are_read_in_linear_time() {
    // 64 KiB of `[1] ` (a candidate anchor each) and of `=`: every scan is linear,
    // so a few hundred such lines take milliseconds, not minutes.
    let brackets = "[1] ".repeat(16 * 1024);
    let equals = format!("  a 1 [000] 1.0: sched_switch: prev_comm={} ==> next_comm=b next_pid=2 next_prio=1", "=".repeat(65_536));
    let comm = format!("  {}-5 [000] 1.0: sched_waking: comm=a pid=2 prio=1 target_cpu=0", "x-[9]".repeat(13_000));
    for _ in 0..100 {
        assert!(parse_line_kind(&brackets).is_err());
        assert!(parse_line_kind(&equals).is_err_and(|e| e.contains("prev_state")));
        assert!(matches!(parse_line_kind(&comm), Ok(SchedLine::Record(SchedRecord { tid: 5, .. }))));
    }
}

#[test]
fn captured_lines_of_each_tool_parse() {
    let s = |x: &str| x.to_string();
    // ftrace 6.18: fork (parent in the header), a two-word comm, exit with group_dead.
    assert_eq!(form_rec(31).event, SchedEvent::Fork { child_comm: s("bash"), child_pid: 19873 });
    let r = form_rec(32);
    assert_eq!((r.comm.as_str(), r.tid), ("lto d5evg6xjc87", 19861));
    assert!(matches!(r.event, SchedEvent::Switch { ref prev_comm, ref prev_state, .. } if prev_comm == "lto d5evg6xjc87" && prev_state == "R"));
    assert_eq!(form_rec(33).event, SchedEvent::Exit { comm: s("sleep"), pid: 19874, prio: 120 });
    // record-tgid: the idle task's `(-------)`; a thread of process 19409 in a hardirq.
    let r = form_rec(34);
    assert_eq!((r.tid, r.pid, r.in_irq), (0, None, true));
    let r = form_rec(35);
    assert_eq!((r.comm.as_str(), r.tid, r.pid, r.in_irq), ("coordinator", 19886, Some(19409), true));
    assert_eq!(r.event, SchedEvent::Migrate { comm: s("memfd:sealed-91"), pid: 18103, prio: 120, orig_cpu: 0, dest_cpu: 1 });
    // trace-cmd report: plugin switch, kernel-form sched_waking, a `:` in the next comm.
    assert_eq!(form_rec(36), rec(75_335_293_824_000, 1, "bash", 20364, sw(("bash", 20364, 120), "S", ("bash", 20367, 120))));
    assert_eq!(form_rec(37).event, SchedEvent::Waking { comm: s("rcu_preempt"), pid: 15, prio: 120, target_cpu: 1 });
    let plugin = form_rec(38);
    assert_eq!(plugin.event, sw(("swapper/0", 0, 120), "R", ("memfd:sealed-91", 18103, 120)));
    // trace-cmd report -R: no `==>`, prev_state a number (1 = S kept as printed, 0 = R).
    assert_eq!(form_rec(39).event, sw(("bash", 20364, 120), "1", ("bash", 20367, 120)));
    assert_eq!(form_rec(40), plugin, "the raw form of line 38 reads the same");
    // perf sched script -F comm,pid,tid,…: two-word comms in a fork; `R+`.
    assert_eq!(form_rec(41).event, SchedEvent::Fork { child_comm: s("web content"), child_pid: 19088 });
    let r = form_rec(42);
    assert_eq!((r.pid, r.tid, r.time_ns), (Some(19084), 19084, 75_234_844_206_486));
    assert!(matches!(r.event, SchedEvent::Switch { ref prev_state, .. } if prev_state == "R+"));
    let preempted = "  x-1 [000] 1.0: sched_switch:  prev_comm=a prev_pid=2 prev_prio=120 prev_state=256 next_comm=b next_pid=3 next_prio=120";
    assert!(matches!(parse_line_kind(preempted), Ok(SchedLine::Record(SchedRecord { event: SchedEvent::Switch { ref prev_state, .. }, .. })) if prev_state == "R+"));
}

#[test]
fn perf_unknown_thread_is_not_a_tid() {
    // perf prints `:-1 -1` (`:-1 PID/-1` with pid fields) for a thread it no
    // longer knows: the first two lines are from the cyclictest capture of
    // this host (an exiting LLVM thread of rustc), the third is made by hand.
    let default = "             :-1    -1 [000] 75271.304469:       sched:sched_switch: prev_comm=opt c0ovf0lxclv prev_pid=19434 prev_prio=120 prev_state=X ==> next_comm=coordinator next_pid=19433 next_prio=120";
    let Ok(SchedLine::Record(r)) = parse_line_kind(default) else { panic!("{default}") };
    assert_eq!((r.tid, r.pid, r.comm.as_str()), (19434, None, "opt c0ovf0lxclv"), "the switch's prev task");
    let with_pid = "             :-1 19409/-1    [000] 75271.304469777:       sched:sched_switch: prev_comm=opt c0ovf0lxclv prev_pid=19434 prev_prio=120 prev_state=X ==> next_comm=coordinator next_pid=19433 next_prio=120";
    let Ok(SchedLine::Record(r)) = parse_line_kind(with_pid) else { panic!("{with_pid}") };
    assert_eq!((r.tid, r.pid, r.time_ns), (19434, Some(19409), 75_271_304_469_777));
    let waking = "             :-1 19409/-1    [001] 75284.699995861:       sched:sched_waking: comm=cyclictest pid=19420 prio=120 target_cpu=001";
    let Ok(SchedLine::Record(r)) = parse_line_kind(waking) else { panic!("{waking}") };
    assert_eq!((r.tid, r.pid, r.comm.as_str()), (0, Some(19409), ":-1"), "unknown waker");
}

#[test]
fn stat_runtime_with_and_without_vruntime() {
    let s = |x: &str| x.to_string();
    let ev = |line: &str| match parse_line_kind(line) {
        Ok(SchedLine::Record(r)) => (r.tid, r.event),
        other => panic!("{line}: {other:?}"),
    };
    // 6.8+ (6.18 sched.h TP_printk): no vruntime.
    let six = "            perf 32623 [000] 21188.772936212: sched:sched_stat_runtime: comm=perf pid=32623 runtime=78235 [ns]";
    assert_eq!(ev(six), (32623, SchedEvent::StatRuntime { comm: s("perf"), pid: 32623, runtime_ns: 78235 }));
    // 4.4/6.6: `vruntime=V [ns]` follows; the payload's task may differ from the header's, and a comm may hold ` pid=`.
    let four = "  sh 1 [001] 5.000000001: sched:sched_stat_runtime: comm=a pid=2 b pid=7 runtime=10 [ns] vruntime=18446744073709551615 [ns]";
    assert_eq!(ev(four), (1, SchedEvent::StatRuntime { comm: s("a pid=2 b"), pid: 7, runtime_ns: 10 }));
    // ftrace and `trace-cmd report -R` (numbers without the unit).
    let ftrace = "          <idle>-0     [001] d.h2. 70079.182767: sched_stat_runtime: comm=rcu_preempt pid=15 runtime=8743 [ns]";
    assert_eq!(ev(ftrace).1, SchedEvent::StatRuntime { comm: s("rcu_preempt"), pid: 15, runtime_ns: 8743 });
    let raw = "  x-3 [000] 1.000001: sched_stat_runtime: comm=x pid=3 runtime=5 vruntime=9";
    assert_eq!(ev(raw).1, SchedEvent::StatRuntime { comm: s("x"), pid: 3, runtime_ns: 5 });
    // Malformed: refused as the other events' lines are, naming the event and the field.
    let head = "  perf 1 [000] 1.000000002: sched:sched_stat_runtime:";
    for (payload, why) in [
        ("comm=a pid=2 runtime=x [ns]", "sched_stat_runtime: `runtime=x` is not a number in range"),
        ("comm=a pid=2 runtime=-5 [ns]", "sched_stat_runtime: `runtime=-5` is not a number in range"),
        ("comm=a pid=99999999999 runtime=5 [ns]", "sched_stat_runtime: `pid=99999999999` is not a number in range"),
        ("comm=a pid=2 runtime=5 [ns] vruntime=z [ns]", "sched_stat_runtime: `vruntime=z` is not a number in range"),
        ("comm=a pid=2 runt", "truncated sched_stat_runtime (no `runtime=`)"),
        ("comm=a runtime=5 [ns]", "truncated sched_stat_runtime (no `pid=`)"),
        ("a pid=2 runtime=5 [ns]", "sched_stat_runtime: expected `comm=` first"),
    ] {
        let line = format!("{head} {payload}");
        assert_eq!(parse_line_kind(&line), Err(why.to_string()), "{line}");
        let err = parse_script(&format!("{six}\n{line}\n")).expect_err(&line);
        assert_eq!((err.line, err.why.as_str()), (2, why));
    }
    assert!(parse_line_kind("  perf 1 [000] 1.0: sched:sched_stat_runti").is_err_and(|e| e.contains("no `:` after")));
}

fn stat(t: u64, cpu: u16, by: u32, pid: u32, runtime_ns: u64) -> SchedRecord {
    let event = SchedEvent::StatRuntime { comm: format!("t{pid}"), pid, runtime_ns };
    SchedRecord { time_ns: t, cpu, tid: by, pid: None, comm: format!("t{by}"), in_irq: false, event }
}

/// Window [1000, 10000) on three CPUs. CPU 1 lost its idle task's events:
/// W (20) starts there from idle at 3000 with no switch-in recorded.
fn charged_sequence() -> Vec<SchedRecord> {
    const A: u32 = 10;
    const C: u32 = 12;
    const E: u32 = 14;
    const W: u32 = 20;
    vec![
        switch(500, 0, 0, "R", A),
        // Before the window: not charged, and not a reason for Some.
        stat(800, 1, E, E, 600),
        switch(1200, 2, 0, "R", C),
        // [800, 1500): 500 in the window.
        stat(1500, 1, E, E, 700),
        switch(1500, 1, E, "S", 0),
        // [500, 2000): 1000.
        stat(2000, 0, A, A, 1500),
        // Fired on CPU 0 for C, which the switches show on CPU 2: charged there. [1200, 3000): 1800.
        stat(3000, 0, A, C, 1800),
        stat(4000, 1, W, W, 1000),
        stat(5000, 1, W, W, 1000),
        // CPU 1 runs the idle task by the switches: W's run is not credited by them.
        switch(5000, 1, W, "S", 0),
        // After the window: only the part of its slice before 10000, [2000, 10500): 8000.
        stat(10_500, 0, A, A, 8500),
        switch(10_500, 0, A, "S", 0),
    ]
}

#[test]
fn summarize_charged_runtime_beside_the_switches() {
    let recs = charged_sequence();
    let s = summarize(&recs, 1000, 10_000, None);
    let th = |tid: u32| s.threads.get(&tid).unwrap_or_else(|| panic!("thread {tid} reported"));
    assert_eq!(s.threads.keys().copied().collect::<Vec<_>>(), vec![10, 12, 14, 20]);
    let figures = |tid: u32| (th(tid).runtime_ns, th(tid).accounted_ns);
    assert_eq!(figures(10), (9000, Some(1000 + 8000)));
    // C's charges stop at 3000 in this trace: each view as recorded.
    assert_eq!(figures(12), (8800, Some(1800)));
    assert_eq!(figures(14), (500, Some(500)));
    // W: the switches saw nothing of its run; the kernel charged 2000.
    assert_eq!(figures(20), (0, Some(2000)));
    assert_eq!(th(20).comm, "t20");
    let cpus = |s: &SchedSummary| s.cpus.iter().map(|c| (c.busy_ns, c.accounted_busy_ns, c.accounted_all_ns, c.idle_exits)).collect::<Vec<_>>();
    assert_eq!(cpus(&s), vec![(9000, 9000, 9000, 1), (500, 2500, 2500, 0), (8800, 1800, 1800, 1)]);
    // Only W: its own figures, and every task's charges per CPU still.
    let only_w = summarize(&recs, 1000, 10_000, Some(&BTreeSet::from([20])));
    assert_eq!(only_w.threads.keys().copied().collect::<Vec<_>>(), vec![20]);
    assert_eq!(only_w.threads[&20].accounted_ns, Some(2000));
    assert_eq!(cpus(&only_w), vec![(0, 0, 9000, 1), (0, 2000, 2500, 0), (0, 0, 1800, 1)]);
    // A window that ends at 4500 cuts W's slice ending at 5000 [4000, 5000) to 500, read after the window.
    let early = summarize(&recs, 1000, 4500, None);
    assert_eq!(early.threads[&20].accounted_ns, Some(1000 + 500));
    // A window after E's last charge: E has none there.
    let late = summarize(&recs, 2000, 10_000, None);
    assert_eq!(late.threads.get(&14).map(|t| t.accounted_ns), None);
    assert_eq!(late.threads[&10].accounted_ns, Some(8000));
}

#[test]
fn real_capture_charges_agree_with_its_switches() {
    let recs = parse_script(REAL).expect("the captured fixture parses");
    let (from, to) = (recs[0].time_ns, recs[recs.len() - 1].time_ns + 1);
    let s = summarize(&recs, from, to, None);
    let charged: u64 = s.threads.values().filter_map(|t| t.accounted_ns).sum();
    assert_eq!(charged, s.cpus.iter().map(|c| c.accounted_all_ns).sum::<u64>());
    assert_eq!(charged, s.cpus.iter().map(|c| c.accounted_busy_ns).sum::<u64>());
    // Busy all along: neither CPU ran its idle task, and the charges say so
    // (measure's note on a CPU without idle-task switches needs one less than 99 % busy).
    assert!(s.cpus.iter().all(|c| c.idle_exits == 0 && c.accounted_all_ns * 100 >= (to - from) * 99), "{:?}", s.cpus);
    // The three shell spinners: the kernel charged about what the switches show.
    for spinner in [32646, 32648, 32649] {
        let t = &s.threads[&spinner];
        let a = t.accounted_ns.expect("charged");
        assert!(a.abs_diff(t.runtime_ns) * 10 < t.runtime_ns, "{spinner}: {a} charged, {} by switches", t.runtime_ns);
    }
}
