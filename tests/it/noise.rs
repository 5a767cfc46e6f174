//! `[machine.noise]`: the measured machine model. Wake-up latency per CPU
//! state (idle exit vs preemption), each from its own stream; kernel time
//! charged per activation; host background threads as pinned tasks after
//! the scenario's own; the per-component split in the report; bad input.

use sim_core::{Scenario, report_json};

/// A 2 ms periodic probe with 30 us of work, alone on CPU 0 (every wake-up
/// finds the CPU idle), or beside a nice-19 hog (every wake-up preempts it).
const PROBE: &str = r#"
schema = 1
seed = 3
duration = "400ms"
[kernel]
version = "6.18"
[machine]
cpus = 2
hz = 250
[report]
victim = "probe"
[[tasks]]
name = "probe"
cpus = "0"
program = [{ sleep_until = "2ms" }, { run = "30us" }]
"#;

const HOG: &str = r#"
[[tasks]]
name = "hog"
cpus = "0"
nice = 19
program = [{ run = "1s" }]
"#;

fn scenario(extra: &str) -> Scenario {
    Scenario::from_toml("probe.toml", &format!("{PROBE}{extra}")).unwrap()
}

fn noised(extra: &str, noise: &str) -> Scenario {
    scenario(extra).with_noise("noise.toml", noise).unwrap()
}

fn probe(r: &sim_core::RunReport) -> &sim_core::TaskReport {
    r.tasks.iter().find(|t| t.name == "probe").unwrap()
}

const SPLIT: &str = "[machine.noise]\nwakeup_idle = \"14us\"\nwakeup_busy = \"8us\"\n";

#[test]
fn a_lone_task_draws_idle_latencies_and_one_preempting_a_hog_busy_ones() {
    let r = sim_core::run(&noised("", SPLIT));
    let n = probe(&r).noise.expect("split");
    assert_eq!(n.wakeup_busy.count, 0, "{n:?}");
    assert!(n.wakeup_idle.count >= 199 && n.wakeup_idle.max_ns == 14_000 && n.wakeup_idle.p50_ns == 14_000, "{n:?}");
    assert_eq!(probe(&r).wakeup_delay.max_ns, 14_000);

    let r = sim_core::run(&noised(HOG, SPLIT));
    let p = probe(&r);
    let n = p.noise.expect("split");
    // The probe's first activation may find the CPU idle (both start at 0);
    // every later wake-up preempts the hog after the busy latency.
    assert!(n.wakeup_idle.count <= 1, "{n:?}");
    assert!(n.wakeup_busy.count >= 198 && n.wakeup_busy.p50_ns == 8_000 && n.wakeup_busy.max_ns == 8_000, "{n:?}");
    assert_eq!(p.wakeup_delay.p50_ns, 8_000);
    // The existing field stays for `machine.wakeup_latency` alone.
    assert!(p.wakeup_noise.is_none());
}

#[test]
fn components_draw_from_their_own_streams_and_no_section_draws_nothing() {
    let idle_only = "[machine.noise]\nwakeup_idle = \"exp(14us)\"\n";
    let both = "[machine.noise]\nwakeup_idle = \"exp(14us)\"\nwakeup_busy = \"exp(8us)\"\n";
    let a = sim_core::run(&noised("", idle_only));
    let b = sim_core::run(&noised("", both));
    let (na, nb) = (probe(&a).noise.unwrap(), probe(&b).noise.unwrap());
    assert!(na.wakeup_idle.max_ns > na.wakeup_idle.p50_ns, "random draws: {na:?}");
    assert_eq!(na.wakeup_idle, nb.wakeup_idle, "adding wakeup_busy shifted the idle draws");
    // kernel_per_activation has a stream of its own too: the latencies drawn stay.
    let c = sim_core::run(&noised("", &format!("{both}kernel_per_activation = \"exp(5us)\"\n")));
    assert_eq!(probe(&c).noise.unwrap().wakeup_idle, na.wakeup_idle);

    // An empty section adds nothing: the same delays as without one.
    let plain = sim_core::run(&scenario(HOG));
    let empty = sim_core::run(&noised(HOG, "[machine.noise]\n"));
    assert_eq!(probe(&plain).delay, probe(&empty).delay);
    assert_eq!(probe(&plain).runtime_ns, probe(&empty).runtime_ns);
    assert!(probe(&plain).noise.is_none() && probe(&empty).noise.is_some());
}

#[test]
fn kernel_per_activation_raises_runtime_by_count_times_value() {
    for extra in ["", HOG] {
        let plain = sim_core::run(&scenario(extra));
        let k = sim_core::run(&noised(extra, "[machine.noise]\nkernel_per_activation = \"7us\"\n"));
        let (p, q) = (probe(&plain), probe(&k));
        let activations = q.wakeup_delay.count;
        assert_eq!(q.runtime_ns - p.runtime_ns, activations * 7_000, "{extra}");
        assert_eq!(q.noise.unwrap().kernel_per_activation_ns, activations * 7_000);
        // Still the same jobs: the kernel time does not replace work.
        assert_eq!(p.response.unwrap().count, q.response.unwrap().count);
    }
}

#[test]
fn background_threads_run_pinned_at_their_rate_after_the_declared_tasks() {
    let bg =
        "[machine.noise]\n[[machine.noise.background]]\nname = \"kworker\"\ncpu = 1\nevery = \"9ms\"\nrun = \"1ms\"\n";
    let s = noised(HOG, bg);
    let names: Vec<&str> = s.spec.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["probe", "hog", "kworker"], "background threads come last");
    assert!(s.spec.tasks[2].machine_background && !s.spec.tasks[0].machine_background);
    assert_eq!(s.spec.victim, 0);
    let r = sim_core::run(&s);
    let k = r.tasks.iter().find(|t| t.name == "kworker").unwrap();
    assert!(k.background && k.cpus_allowed == "1");
    // 400 ms of [sleep 9ms, run 1ms]: 40 activations of 1 ms.
    assert_eq!(k.runtime_ns, 40_000_000);
    let v: serde_json::Value = serde_json::from_str(&report_json(&r)).unwrap();
    let rows = v["tasks"].as_array().unwrap();
    assert_eq!(rows.iter().filter(|t| t["background"] == true).count(), 1);
    assert!(rows.iter().find(|t| t["name"] == "probe").unwrap().get("background").is_none());
}

#[test]
fn a_background_thread_delays_the_victim_and_the_split_says_so() {
    let bg = "[machine.noise]\n[[machine.noise.background]]\nname = \"kdamond\"\ncpu = 0\nevery = \"exp(3ms)\"\nrun = \
              \"exp(400us)\"\nnice = -20\n";
    let plain = sim_core::run(&scenario(""));
    let r = sim_core::run(&noised("", bg));
    let (p, q) = (probe(&plain), probe(&r));
    assert!(q.wakeup_delay.max_ns > p.wakeup_delay.max_ns + 50_000, "{:?} vs {:?}", q.wakeup_delay, p.wakeup_delay);
    let n = q.noise.unwrap();
    assert!(n.background.max_ns > 50_000 && n.background.max_ns <= q.wakeup_delay.max_ns, "{n:?}");
    // Same seed, same report.
    assert_eq!(report_json(&r), report_json(&sim_core::run(&noised("", bg))));
}

#[test]
fn bad_noise_input_names_the_key_and_what_is_allowed() {
    let s = scenario("");
    let cases: &[(&str, &[&str])] = &[
        (
            "[machine.noise]\nwakeup_idle = \"empirical(0%: 10us, 50%: 5us, 100%: 20us)\"",
            &["noise.toml", "machine.noise.wakeup_idle", "must not decrease"],
        ),
        ("[machine.noise]\nwakeup_busy = \"-5us\"", &["machine.noise.wakeup_busy", "cannot be negative"]),
        ("[machine.noise]\nwakeup_busy = \"50ms\"", &["machine.noise.wakeup_busy", "at most 10ms"]),
        (
            "[machine.noise]\n[[machine.noise.background]]\nname = \"k\"\nevery = \"1ms\"\nrun = \"1ms\"",
            &["machine.noise.background[0].cpu", "required"],
        ),
        (
            "[machine.noise]\n[[machine.noise.background]]\nname = \"k\"\ncpu = 2\nevery = \"1ms\"\nrun = \"1ms\"",
            &["machine.noise.background[0].cpu", "0 to 1"],
        ),
        (
            "[machine.noise]\n[[machine.noise.background]]\nname = \"probe\"\ncpu = 0\nevery = \"1ms\"\nrun = \"1ms\"",
            &["machine.noise.background[0].name", "tasks.probe"],
        ),
        (
            "[machine.noise]\n[[machine.noise.background]]\nname = \"k\"\ncpu = 0\nevery = 0\nrun = \"1ms\"",
            &["machine.noise.background[0].every", "mean above 0"],
        ),
        ("[machine.noise]\nwakeup_idel = \"1us\"", &["noise.toml", "machine.noise", "wakeup_idel", "wakeup_idle"]),
        ("[machine.noise]\n[kernel]\nversion = \"4.4\"", &["noise.toml", "kernel", "only the [machine.noise]"]),
        ("[machine]\ncpus = 4\n[machine.noise]", &["noise.toml", "machine.cpus", "only the [machine.noise]"]),
    ];
    for (noise, wants) in cases {
        let e = s.with_noise("noise.toml", noise).map(|_| ()).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        for w in *wants {
            assert!(e.contains(w), "error for {noise:?} lacks `{w}`: {e}");
        }
    }
    // Both latency models at once: say which to keep.
    let both = Scenario::from_toml(
        "both.toml",
        &PROBE.replace("hz = 250\n", "hz = 250\nwakeup_latency = \"10us\"\n[machine.noise]\nwakeup_idle = \"5us\"\n"),
    )
    .unwrap_err()
    .to_string();
    assert!(both.contains("machine.noise.wakeup_idle") && both.contains("keep one"), "{both}");
    // Duplicate background names, written in the scenario itself.
    let dup = "[[machine.noise.background]]\nname = \"k\"\ncpu = 0\nevery = \"1ms\"\nrun = \"1ms\"\n";
    let e = Scenario::from_toml("dup.toml", &format!("{PROBE}{dup}{dup}")).unwrap_err().to_string();
    assert!(e.contains("machine.noise.background[1].name") && e.contains("duplicate"), "{e}");
    // The noise file replaces the scenario's own section.
    let own = Scenario::from_toml("own.toml", &format!("{PROBE}{dup}")).unwrap();
    assert_eq!(own.spec.tasks.len(), 2);
    let replaced = own.with_noise("noise.toml", SPLIT).unwrap();
    assert_eq!(replaced.spec.tasks.len(), 1);
    assert!(replaced.spec.machine.noise.as_ref().unwrap().wakeup_idle.is_some());
}
