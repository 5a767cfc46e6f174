//! `advise`: the search finds a combination when no single knob meets every
//! target, its fixes re-run and meet them at every point of the band, the
//! commands follow the model's files, the budget bounds the runs, and the
//! same search twice gives the same answer.

use sim_core::advise::apply::commands;
use sim_core::advise::knobs::{Catalogue, Family, Roles, catalogue};
use sim_core::{AdviseOptions, BandPlan, Scenario, Stopped, Target, advise};

fn load(path: &str, sets: &[(&str, &str)]) -> Scenario {
    let text = std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).expect("scenario file");
    Scenario::from_toml(path, &text).expect("valid").with_overrides(sets).expect("overrides")
}

fn opts(targets: &[&str], families: &[Family], budget: u64, phases: u32, seeds: u32) -> AdviseOptions {
    AdviseOptions {
        targets: targets.iter().map(|t| Target::parse(t).expect("target")).collect(),
        families: families.to_vec(),
        budget_runs: budget,
        band: BandPlan::new(phases, seeds).expect("plan"),
    }
}

/// Three hogs beside a 1 ms reactor on one CPU (6.18): a short base slice
/// alone still lets a hog wait past 1 ms, and no single knob brings both
/// the reactor under 500 µs and the hogs under 1 ms. Forward selection finds
/// a pair, and the pair holds at every tick phase and seed it was judged on.
#[test]
fn a_pair_is_found_when_no_single_knob_meets_both_targets_and_it_reruns_as_claimed() {
    let s = load("scenarios/validation/06-three-hogs.toml", &[("duration", "1s")]);
    let targets = ["reactor max <= 500us", "hog max <= 1ms"];
    let a = advise(&s, opts(&targets, &Family::DEFAULT, 600, 2, 2)).expect("advice");
    assert!(!a.baseline.met);
    assert!(!a.sensitivity.is_empty() && a.sensitivity.iter().all(|r| !r.met), "{:#?}", a.sensitivity);
    assert_eq!(a.stopped, Stopped::Met);
    let best = a.fixes.first().expect("a fix");
    assert!(best.eval.met && best.changes.len() == 2, "{best:#?}");
    assert!(a.runs <= 600);
    // Fewest changes first: no listed fix has more changes than a later one.
    assert!(a.fixes.windows(2).all(|w| w[0].changes.len() <= w[1].changes.len()));
    // The set list, verbatim as `--set KEY=VALUE`, at every point of the band.
    let pairs: Vec<(String, String)> = best
        .set()
        .iter()
        .map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).expect("k=v"))
        .collect();
    let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let fixed = s.with_overrides(&refs).expect("the set list applies");
    let plan = BandPlan::new(2, 2).expect("plan");
    for p in plan.points(&fixed) {
        let r = sim_core::run(&plan.scenario(&fixed, &p).expect("point"));
        let max = |n: &str| r.task_delays.iter().find(|d| d.name == n).expect("task").delay.max_ns;
        assert!(max("reactor") <= 500_000 && max("hog") <= 1_000_000, "{:?} at {p:?}", best.set());
    }
    // 6.x: the tunables and features are debugfs files.
    for c in &best.changes {
        if c.family == Family::Tunables {
            assert!(c.apply.iter().all(|l| l.contains("/sys/kernel/debug/sched/")), "{c:#?}");
        }
    }
    let why = a.why.as_ref().expect("why");
    let (before, after) = (why.before.as_ref().expect("before"), why.after.as_ref().expect("after"));
    assert!(after.delay_ns < before.delay_ns, "{why:#?}");
    assert_eq!(before.held_by.first().map(|(n, _)| n.as_str()), Some("hog"));
    // The same search again: the same answer.
    assert_eq!(advise(&s, opts(&targets, &Family::DEFAULT, 600, 2, 2)).expect("advice"), a);
}

fn built(s: &Scenario, victim: &str, culprits: &[&str], families: &[Family]) -> Catalogue {
    catalogue(s, &Roles { victim, culprits: culprits.to_vec(), activation: Some((50_000, 1_000_000)) }, families)
}

/// 4.4 keeps its tunables in /proc/sys/kernel and its features in
/// /sys/kernel/debug/sched_features; 6.18 in /sys/kernel/debug/sched/. Each
/// model gets only the knobs it has: no base slice on 4.4, no
/// sched_latency_ns on 6.18, custom slices only on 6.12+.
#[test]
fn each_model_gets_its_own_knobs_and_files() {
    let s44 = load("scenarios/validation/06-three-hogs.toml", &[("kernel.version", "4.4")]);
    let c44 = built(&s44, "reactor", &["hog"], &Family::ALL);
    let line = |c: &Catalogue, s: &Scenario, name: &str| {
        let k = c.knobs.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("knob {name}"));
        commands(s, &k.apply, &k.settings[0]).join("\n")
    };
    assert!(line(&c44, &s44, "sched_latency_ns").starts_with("sysctl -w kernel.sched_latency_ns=1000000"));
    assert!(
        line(&c44, &s44, "feature GENTLE_FAIR_SLEEPERS")
            .contains("NO_GENTLE_FAIR_SLEEPERS > /sys/kernel/debug/sched_features")
    );
    assert!(!c44.knobs.iter().any(|k| k.name == "base_slice_ns" || k.name.starts_with("slice of")));
    let s618 = load("scenarios/validation/06-three-hogs.toml", &[]);
    let c618 = built(&s618, "reactor", &["hog"], &Family::ALL);
    assert!(line(&c618, &s618, "base_slice_ns").starts_with("echo 100000 > /sys/kernel/debug/sched/base_slice_ns"));
    assert!(line(&c618, &s618, "slice of reactor").contains("sched_setattr"));
    // SCHED_DEADLINE from the victim's activations: 50 µs every 1 ms, ×1.25.
    assert_eq!(
        line(&c618, &s618, "deadline of reactor"),
        "chrt --deadline --sched-runtime 70000 --sched-deadline 1000000 --sched-period 1000000 -p 0 <tid of reactor>"
    );
    assert!(!c618.knobs.iter().any(|k| k.name == "sched_latency_ns"));
    // HZ and the kernel are knobs only when asked; every other model is offered.
    let kernel = c618.knobs.iter().find(|k| k.name == "kernel").expect("kernel knob");
    assert_eq!(kernel.settings.len(), 3);
    assert!(
        !built(&s618, "reactor", &["hog"], &Family::DEFAULT).knobs.iter().any(|k| k.name == "kernel" || k.name == "HZ")
    );
    // Every setting the catalogue keeps loads.
    for k in c44.knobs.iter().chain(&c618.knobs) {
        assert!(!k.settings.is_empty(), "{}", k.name);
    }
}

/// A CPU-limited pod: the quota knobs carry cgroup v2 and v1 writes and
/// the Kubernetes limit; the burst its file.
#[test]
fn quota_fixes_carry_cgroup_and_kubernetes_commands() {
    let s = load("scenarios/k8s-cpu-limit.toml", &[("duration", "2s")]);
    let c = built(&s, "worker", &["gc"], &[Family::Quota]);
    let quota = c.knobs.iter().find(|k| k.name == "cpu.max of /kubepods/pod-api").expect("quota knob");
    let twice = quota.settings.iter().find(|st| st.label == "cpu.max 400000 100000").expect("2x quota");
    let lines = commands(&s, &quota.apply, twice);
    assert!(lines[0].starts_with("echo \"400000 100000\" > /sys/fs/cgroup/kubepods/pod-api/cpu.max"), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("cpu: \"4000m\"")), "{lines:?}");
    assert!(c.knobs.iter().any(|k| k.name == "cpu.max.burst of /kubepods/pod-api"));
    let a = advise(&s, opts(&["worker max <= 20ms"], &[Family::Quota], 100, 1, 2)).expect("advice");
    assert!(a.fixes.first().is_some_and(|f| f.eval.met), "{:#?}", a.fixes);
}

/// The budget bounds the runs: a search that cannot finish its screening
/// stops at the budget and says so (three hogs on one CPU always wait for
/// each other, so `hog max <= 1ns` holds under no setting).
#[test]
fn the_budget_bounds_the_runs() {
    let s = load("scenarios/validation/06-three-hogs.toml", &[("duration", "500ms")]);
    let a = advise(&s, opts(&["hog max <= 1ns"], &Family::DEFAULT, 20, 2, 2)).expect("advice");
    assert_eq!(a.stopped, Stopped::Budget);
    assert!(a.runs <= 20 && a.runs >= 16, "{}", a.runs);
    let e = advise(&s, opts(&["reactor max <= 1ms"], &Family::DEFAULT, 0, 1, 1)).expect_err("budget 0");
    assert!(e.starts_with("--budget 0: allowed 1 to"), "{e}");
}

/// An I/O target (`io TASK STAT <= D`: block I/O to running again): CFQ
/// starves a sync read behind a streaming writer; one change fixes it, and
/// the I/O knobs (ionice, the elevator) are in the catalogue.
#[test]
fn an_io_target_is_searched_with_the_io_knobs() {
    let s = load("scenarios/cfq-starvation.toml", &[("duration", "3s")]);
    let a = advise(&s, opts(&["io open max <= 100ms"], &Family::DEFAULT, 200, 1, 1)).expect("advice");
    assert!(!a.baseline.met, "{:?}", a.baseline.targets);
    let best = a.fixes.first().expect("a fix");
    assert!(best.eval.met && best.changes.len() == 1, "{best:#?}");
    assert!(a.sensitivity.iter().any(|r| r.knob.starts_with("ionice of") && r.family == Family::Io));
    assert!(a.sensitivity.iter().any(|r| r.knob.starts_with("elevator of")));
    assert!(best.changes[0].apply.iter().all(|l| !l.is_empty()));
}
