//! `sim-cli import` against known ground truth: traces of shipped scenarios
//! from the simulator's own ftrace export (`run --trace X.txt`), imported,
//! then replayed. The importer must recover the programs (periods, bursts,
//! who wakes whom, hogs) and the replay the original's victim delays.

use sim_core::export::{Trace, chrome};
use sim_core::metrics::recorder::TraceWindow;
use sim_core::{Dist, Import, ImportOptions, Importer, RunReport, Scenario, Simulation, import_report};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The scenario's run and its ftrace text.
fn traced(path: &str, overrides: &[(&str, &str)]) -> (RunReport, String) {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let s = Scenario::from_toml(path, &text).unwrap().with_overrides(overrides).unwrap();
    let mut sim = Simulation::new(&s);
    sim.enable_trace(TraceWindow::all(50_000_000)).expect("traced from the start");
    sim.run_to_end();
    let t = Trace::from_sim(&mut sim).unwrap();
    (sim.report(), chrome::systrace(&t))
}

fn import(text: &str, victim: Option<&str>, kernel: &str) -> Import {
    let opts = ImportOptions {
        source: "trace.txt".into(),
        victim: victim.map(str::to_string),
        kernel: Some(kernel.to_string()),
        ..ImportOptions::default()
    };
    Importer::import_text(opts, text).unwrap_or_else(|e| panic!("{e}"))
}

fn replay(im: &Import) -> RunReport {
    let s = Scenario::from_toml("imported.toml", &im.toml).unwrap_or_else(|e| panic!("{e}\n{}", im.toml));
    let mut sim = Simulation::new(&s);
    sim.run_to_end();
    sim.report()
}

/// The declaration `name` of an imported scenario, as TOML.
fn task<'a>(doc: &'a toml::Value, name: &str) -> &'a toml::Value {
    let tasks = doc.get("tasks").and_then(|t| t.as_array()).expect("tasks");
    tasks
        .iter()
        .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
        .unwrap_or_else(|| panic!("no task `{name}`"))
}

fn steps(t: &toml::Value) -> Vec<toml::Value> {
    t.get("program").and_then(|p| p.as_array()).cloned().unwrap_or_default()
}

/// The mean of the task's `run` step (or its `hop_work`).
fn burst_mean(t: &toml::Value) -> f64 {
    let text = steps(t)
        .iter()
        .find_map(|s| s.get("run").and_then(|r| r.as_str()).map(str::to_string))
        .or_else(|| t.get("hop_work").and_then(|h| h.as_str()).map(str::to_string))
        .expect("a run step or hop_work");
    Dist::parse(&text).unwrap().mean_ns()
}

fn str_of<'a>(v: &'a toml::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(|x| x.as_str())
}

struct Case {
    im: Import,
    doc: toml::Value,
    original: RunReport,
    replay: RunReport,
}

fn case(path: &str, victim: &str) -> Case {
    let (original, text) = traced(path, &[]);
    let im = import(&text, Some(victim), original.settings.kernel.version());
    let doc: toml::Value = toml::from_str(&im.toml).unwrap();
    let replay = replay(&im);
    Case { im, doc, original, replay }
}

fn within(got: u64, want: u64, tol: f64) -> bool {
    (got as f64 - want as f64).abs() <= tol * want as f64
}

/// Periods, bursts and hogs of single-CPU scenarios come back exactly, and
/// the replay gives the original's victim delays.
#[test]
fn timers_bursts_and_hogs_are_recovered_and_replay_the_victim() {
    // (scenario, victim, period of the victim, its burst, the hog if any, other periodic task)
    let cases = [
        ("scenarios/validation/01-alone.toml", "1ms", 50_000.0, None, None),
        ("scenarios/validation/07-poller-5ms-20ms.toml", "1ms", 50_000.0, None, Some(("poller", "20ms", 5_000_000.0))),
        ("scenarios/validation/09-reactor-10ms.toml", "10ms", 50_000.0, Some("hog"), None),
        ("scenarios/validation/02-hog-same-group.toml", "1ms", 50_000.0, Some("hog"), None),
    ];
    for (path, period, burst, hog, other) in cases {
        let c = case(path, "reactor");
        let r = task(&c.doc, "reactor");
        let first = &steps(r)[0];
        assert_eq!(str_of(first, "sleep_until"), Some(period), "{path}: the reactor's period\n{}", c.im.toml);
        assert!((burst_mean(r) - burst).abs() / burst < 0.05, "{path}: burst mean {} vs {burst}", burst_mean(r));
        if let Some(h) = hog {
            let hs = steps(task(&c.doc, h));
            let run = str_of(&hs[0], "run").unwrap();
            assert!(sim_core::parse_duration(run).unwrap() > 10_000_000_000, "{path}: `{h}` runs forever: {run}");
        }
        if let Some((name, p, b)) = other {
            let t = task(&c.doc, name);
            assert_eq!(str_of(&steps(t)[0], "sleep_until"), Some(p), "{path}: `{name}`'s period");
            assert!((burst_mean(t) - b).abs() / b < 0.05, "{path}: `{name}` burst mean {}", burst_mean(t));
        }
        let o = c.original.task_delays.iter().find(|d| d.name == "reactor").unwrap().delay;
        let v = c.replay.task_delays.iter().find(|d| d.name == "reactor").unwrap().delay;
        assert!(within(v.count, o.count, 0.01), "{path}: {} delays vs {}", v.count, o.count);
        assert!(within(v.p50_ns, o.p50_ns, 0.1) && within(v.p99_ns, o.p99_ns, 0.1), "{path}: p50/p99 {v:?} vs {o:?}");
        // 02's one 3.5 ms wait is the first wake-up behind the hog until a
        // tick whose phase (tick_offset 500us) a trace with one tick-driven
        // preemption cannot give: the only miss, asserted as such.
        if path.contains("02-") {
            assert!(o.max_ns == 3_500_000 && c.im.toml.contains("HZ not inferred"), "{o:?}");
        } else {
            assert!(within(v.max_ns, o.max_ns, 0.1), "{path}: max {} vs {}", v.max_ns, o.max_ns);
        }
    }
}

/// Two hogs on one CPU: HZ and the tick's phase from the tick-driven preemptions.
#[test]
fn the_tick_is_inferred_from_tick_preemptions() {
    let c = case("scenarios/two-hogs.toml", "hog-a");
    assert!(c.im.hz_inferred && c.im.hz == 250, "{}", c.im.toml);
    let m = c.doc.get("machine").unwrap();
    assert_eq!(str_of(m, "tick_offset"), Some("0ns"));
    for name in ["hog-a", "hog-b"] {
        let o = c.original.task_delays.iter().find(|d| d.name == name).unwrap().delay;
        let v = c.replay.task_delays.iter().find(|d| d.name == name).unwrap().delay;
        assert!(within(v.p50_ns, o.p50_ns, 0.1) && within(v.max_ns, o.max_ns, 0.1), "{name}: {v:?} vs {o:?}");
    }
}

/// Who wakes whom: a dispatcher waking each of 24 workers, and a request
/// crossing five pools (serve + forward), with burst means within 5 %.
#[test]
fn the_wake_graph_is_recovered() {
    let c = case("scenarios/threadpool.toml", "worker");
    let w = task(&c.doc, "worker");
    assert_eq!(w.get("count").and_then(|n| n.as_integer()), Some(24));
    assert_eq!(steps(w)[0].as_str(), Some("wait"));
    assert!((burst_mean(w) - 300_000.0).abs() / 300_000.0 < 0.05, "worker burst {}", burst_mean(w));
    let d = task(&c.doc, "dispatcher");
    let woken: Vec<String> = steps(d).iter().filter_map(|s| str_of(s, "wake").map(str::to_string)).collect();
    assert_eq!(woken, (0..24).map(|i| format!("worker/{i}")).collect::<Vec<_>>());
    assert_eq!(str_of(&steps(d)[0], "sleep_until"), Some("5ms"));

    let c = case("scenarios/request-hops.toml", "worker");
    let chain = [("rpc", "plan"), ("plan", "worker"), ("worker", "wal"), ("wal", "respond")];
    for (from, to) in chain {
        assert_eq!(str_of(task(&c.doc, from), "forward"), Some(to), "{from} forwards to {to}\n{}", c.im.toml);
    }
    assert_eq!(str_of(task(&c.doc, "respond"), "forward"), None);
    for (name, mean) in
        [("plan", 50e3 * (0.125f64).exp()), ("worker", 150e3 * (0.32f64).exp()), ("wal", 25e3 * (0.125f64).exp())]
    {
        let got = burst_mean(task(&c.doc, name));
        assert!((got - mean).abs() / mean < 0.05, "{name}: hop work mean {got} vs {mean}");
    }
    let sources = c.doc.get("sources").and_then(|s| s.as_array()).unwrap();
    assert_eq!(sources.len(), 1);
    assert_eq!(str_of(&sources[0], "target"), Some("rpc"));
}

/// The victim's delay figures of a scenario run with `overrides`.
fn victim_of(path: &str, overrides: &[(&str, &str)], victim: &str) -> sim_core::LatencySummary {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let s = Scenario::from_toml(path, &text).unwrap().with_overrides(overrides).unwrap();
    let mut sim = Simulation::new(&s);
    sim.run_to_end();
    sim.report().task_delays.iter().find(|d| d.name == victim).unwrap().delay
}

/// The victims of multi-CPU pools, random runs both: the replay's p50, p99
/// and max each within the spread of the original's own figure over seeds
/// 1-5, widened by 10 % (a random run's p99 and max move with the seed).
#[test]
fn pool_replays_match_the_original_victims() {
    for (path, victim) in [("scenarios/threadpool.toml", "worker"), ("scenarios/request-hops.toml", "worker")] {
        let c = case(path, victim);
        let o = c.original.task_delays.iter().find(|d| d.name == victim).unwrap().delay;
        let mut v = c.replay.task_delays.iter().find(|d| d.name == victim).unwrap().delay;
        if path.contains("threadpool") {
            // Two things no sched trace of it shows: the SMT topology (4 cores x
            // 2 threads; the import has 8 flat CPUs) and HZ 1000 (no tick-driven
            // preemption to infer it from; 250 assumed). Given both, the max holds
            // too (without: 1.9 ms, from where newidle and periodic balancing run).
            let s = Scenario::from_toml("imported.toml", &c.im.toml).unwrap();
            let s = s
                .with_overrides(&[
                    ("machine.sockets", "1"),
                    ("machine.cores_per_socket", "4"),
                    ("machine.threads_per_core", "2"),
                    ("machine.hz", "1000"),
                ])
                .unwrap();
            let mut sim = Simulation::new(&s);
            sim.run_to_end();
            v = sim.report().task_delays.iter().find(|d| d.name == victim).unwrap().delay;
        }
        let runs: Vec<sim_core::LatencySummary> =
            (1..=5).map(|s| victim_of(path, &[("seed", &s.to_string())], victim)).collect();
        println!("{path}\n{}original {victim}: {o:?}\nreplay: {v:?}", import_report(&c.im, &c.replay).text());
        assert!(within(v.count, o.count, 0.1), "{path}: {} delays vs {}", v.count, o.count);
        for (what, f) in [
            ("p50", (|d: &sim_core::LatencySummary| d.p50_ns) as fn(&sim_core::LatencySummary) -> u64),
            ("p99", |d| d.p99_ns),
            ("max", |d| d.max_ns),
        ] {
            let (lo, hi) = (runs.iter().map(f).min().unwrap(), runs.iter().map(f).max().unwrap());
            println!("{what}: replay {} original seeds 1-5 {lo}..{hi}", f(&v));
            assert!(
                f(&v) as f64 >= 0.9 * lo as f64 && f(&v) as f64 <= 1.1 * hi as f64,
                "{path}: {what} {} outside the original's seed spread {lo}..{hi} (±10 %)",
                f(&v)
            );
        }
    }
}
