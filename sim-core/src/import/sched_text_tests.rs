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
    assert_eq!(recs.len(), 7, "stat_runtime, call chains, comments and blank lines are skipped");
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
