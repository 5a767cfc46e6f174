//! proptest invariants over generated scenarios (swarm style: random CPU
//! counts, tunables, features, policies (per-CPU stop tasks among them), affinities and programs), checked
//! after every single event.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sim_core::{Scenario, Simulation};

fn dur(max_us: u64) -> impl Strategy<Value = String> {
    prop_oneof![
        (0..=max_us).prop_map(|u| format!("\"{u}us\"")),
        (1..=max_us.max(1)).prop_map(|u| format!("\"exp({u}us)\"")),
        (0..=max_us, 0..=max_us).prop_map(|(a, b)| format!("\"uniform({}us, {}us)\"", a.min(b), a.max(b))),
        (1..=max_us.max(1)).prop_map(|u| format!("\"lognormal({u}us, 0.5)\"")),
        (1..=max_us.max(1)).prop_map(|u| format!("\"pareto({u}us, 2.5)\"")),
        (1..=max_us.max(1), 0..=max_us).prop_map(|(m, s)| format!("\"normal({m}us, {s}us)\"")),
    ]
}

fn step(ntasks: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => dur(3000).prop_map(|d| format!("{{ run = {d} }}")),
        1 => (dur(3000), 5..300u64).prop_map(|(d, e)| format!("{{ run = {d}, enter_kernel_every = \"{e}us\" }}")),
        3 => dur(5000).prop_map(|d| format!("{{ sleep = {d} }}")),
        1 => (1..20_000u64, 0..1000u64).prop_map(|(p, o)| format!("{{ sleep_until = \"{p}us\", offset = \"{}us\" }}", o % p)),
        1 => Just("\"wait\"".to_string()),
        2 => (0..ntasks).prop_map(|t| format!("{{ wake = \"t{t}\" }}")),
        1 => Just("\"serve\"".to_string()),
        1 => Just("\"yield\"".to_string()),
    ]
}

#[derive(Debug, Clone)]
struct TaskGen {
    count: u32,
    nice: i32,
    policy: &'static str,
    cpus: Option<Vec<bool>>,
    start_us: u64,
    iterations: Option<u32>,
    steps: Vec<String>,
    /// Index into the generated groups (0 = root, not written).
    group: usize,
    session: Option<u8>,
}

fn task(ncpus: usize, ntasks: usize) -> impl Strategy<Value = TaskGen> {
    (
        1..=3u32,
        -20..=19i32,
        prop_oneof![
            6 => Just("normal"),
            1 => Just("batch"),
            1 => Just("idle"),
            1 => Just("fifo"),
            1 => Just("rr"),
            1 => Just("deadline")
        ],
        proptest::option::of(proptest::collection::vec(any::<bool>(), ncpus)),
        0..10_000u64,
        proptest::option::of(1..5u32),
        proptest::collection::vec(step(ntasks), 1..5),
        0..6usize,
        proptest::option::of(0..3u8),
    )
        .prop_map(|(count, nice, policy, cpus, start_us, iterations, steps, group, session)| TaskGen {
            count,
            nice,
            policy,
            cpus,
            start_us,
            iterations,
            steps,
            group,
            session,
        })
}

/// Machine shapes for the swarm: (sockets, cores per socket, threads per
/// core, NUMA nodes). Flat machines of 1–4 CPUs, SMT pairs, two sockets with
/// and without NUMA.
const SHAPES: [(u16, u16, u16, u16); 8] =
    [(1, 1, 1, 1), (1, 2, 1, 1), (1, 3, 1, 1), (1, 4, 1, 1), (1, 2, 2, 1), (2, 2, 1, 1), (2, 1, 2, 2), (2, 2, 2, 2)];

prop_compose! {
    pub(crate) fn scenario()(shape in 0..SHAPES.len(), ntasks in 1..=5usize)(
        shape in Just(SHAPES[shape]),
        ncpus in Just((SHAPES[shape].0 * SHAPES[shape].1 * SHAPES[shape].2) as usize),
        isolcpus in proptest::collection::vec(prop_oneof![5 => Just(false), 1 => Just(true)], (SHAPES[shape].0 * SHAPES[shape].1 * SHAPES[shape].2) as usize),
        nohz in prop_oneof![3 => Just(true), 1 => Just(false)],
        tasks in proptest::collection::vec(task((SHAPES[shape].0 * SHAPES[shape].1 * SHAPES[shape].2) as usize, ntasks), ntasks),
        hz in prop_oneof![Just(100), Just(250), Just(300), Just(1000)],
        seed in any::<u32>(),
        duration_ms in 20..300u64,
        tunables in proptest::option::of((100..30_000u64, 100..5_000u64, 0..10_000u64)),
        features in proptest::collection::vec(any::<bool>(), 7),
        cs_us in prop_oneof![3 => Just(0u64), 1 => 0..20u64],
        rate in 100..20_000u32,
        // Up to 5 groups; group i's parent is the root or an earlier group.
        parents in proptest::collection::vec(any::<prop::sample::Index>(), 0..=5),
        shares in proptest::collection::vec(prop_oneof![Just(2u64), Just(1024), 2..300_000u64], 5),
        autogroup in any::<bool>(),
        instantaneous in any::<bool>(),
        // The kernel model, and for EEVDF its knobs: features, base slice,
        // per-task slices (6.12+), the tick phase and machine noise.
        kernel in 0..4usize,
        eevdf_features in proptest::collection::vec(any::<bool>(), 11),
        base_slice_us in proptest::option::of(100..5_000u64),
        slices_us in proptest::collection::vec(proptest::option::of(100..20_000u64), 5),
        tick_offset_permille in 0..1000u64,
        noise_us in proptest::option::of(1..100u64),
        // CPU quotas (cpu.max: quota, period in ms; burst share) on some
        // groups, and the bandwidth rules for the 4.4 fair class.
        quotas in proptest::collection::vec(proptest::option::of((1..60u64, 2..100u64, 0..3u64)), 5),
        bw_rules in 0..4usize,
        bw_slice_us in prop_oneof![3 => Just(5000u64), 1 => 500..10_000u64],
        // Per-CPU stop tasks (migration/N): mean sleep in ms, mean run in µs.
        stop in proptest::option::of((1..100u64, 1..500u64)),
    ) -> String {
        let version = ["4.4", "6.6", "6.12", "6.18"][kernel];
        let eevdf = kernel > 0;
        let rules = if eevdf { "6.6" } else { ["4.4", "4.18", "5.4", "5.14"][bw_rules] };
        let burst_ok = eevdf || bw_rules == 3;
        let bw_kernel = if eevdf { String::new() } else { format!("cfs_bandwidth = \"{rules}\"\n") };
        let tick_us = 1_000_000 / hz;
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"{duration_ms}ms\"\n[limits]\nevents_max = 40000\n[kernel]\nversion = \"{version}\"\n{bw_kernel}[machine]\ncpus = {ncpus}\nhz = {hz}\ncontext_switch = \"{cs_us}us\"\n"
        );
        if eevdf {
            t += &format!("tick_offset = \"{}us\"\n", tick_us * tick_offset_permille / 1000);
            if let Some(n) = noise_us {
                t += &format!("wakeup_latency = \"exp({n}us)\"\n");
            }
        }
        let (sockets, cores, threads, nodes) = shape;
        t += &format!("sockets = {sockets}\ncores_per_socket = {cores}\nthreads_per_core = {threads}\nnuma_nodes = {nodes}\nnohz = {nohz}\n");
        // isolcpus may not cover every CPU: keep CPU 0 out of it then.
        let mut isolated: Vec<usize> = isolcpus.iter().enumerate().filter(|(_, b)| **b).map(|(c, _)| c).collect();
        if isolated.len() == ncpus {
            isolated.remove(0);
        }
        if !isolated.is_empty() {
            let list: Vec<String> = isolated.iter().map(|c| c.to_string()).collect();
            t += &format!("isolcpus = \"{}\"\n", list.join(","));
        }
        t += &format!("[cfs]\ngroup_load = \"{}\"\nsched_cfs_bandwidth_slice_us = {bw_slice_us}\n", if instantaneous { "instantaneous" } else { "pelt" });
        if eevdf {
            if let Some(b) = base_slice_us {
                t += &format!("base_slice_ns = \"{b}us\"\n");
            }
        } else if let Some((lat, gran, wake)) = tunables {
            t += &format!(
                "sched_latency_ns = \"{lat}us\"\nsched_min_granularity_ns = \"{gran}us\"\nsched_wakeup_granularity_ns = \"{wake}us\"\n"
            );
        }
        t += &format!("[autogroup]\nenabled = {autogroup}\n");
        let mut paths = vec!["/".to_string()];
        for (i, p) in parents.iter().enumerate() {
            let parent = &paths[p.index(i + 1)];
            let path = if parent == "/" { format!("/g{i}") } else { format!("{parent}/g{i}") };
            t += &format!("[groups.\"{path}\"]\nshares = {}\n", shares[i]);
            if let Some((q, p, b)) = quotas[i] {
                // v2 `cpu.max`: a child may exceed its parent (v1 refuses that).
                t += &format!("\"cpu.max\" = \"{} {}\"\n", q * 1000, p * 1000);
                if burst_ok && b > 0 {
                    t += &format!("\"cpu.max.burst\" = {}\n", q * 1000 / b);
                }
            }
            paths.push(path);
        }
        t += "[features]\n";
        if eevdf {
            let model = sim_core::sched::model::KernelModel::parse(version).expect("a modelled version");
            for (name, on) in sim_core::sched::tunables::EevdfFeatures::names(model).iter().zip(&eevdf_features) {
                t += &format!("{name} = {on}\n");
            }
        } else {
            for (name, on) in ["GENTLE_FAIR_SLEEPERS", "START_DEBIT", "NEXT_BUDDY", "LAST_BUDDY", "WAKEUP_PREEMPTION", "HRTICK", "DOUBLE_TICK"].iter().zip(&features) {
                t += &format!("{name} = {on}\n");
            }
        }
        let mut sources = String::new();
        for (i, g) in tasks.iter().enumerate() {
            let mut steps = g.steps.clone();
            // A zero-length run or sleep (`0us`, `uniform(0us, 0us)`) does not
            // take time; make sure something does.
            let zero = |s: &str| s.contains("\"0us\"") || s.contains("(0us, 0us)");
            if !steps.iter().any(|s| {
                s.contains("sleep_until") || s.contains("wait") || s.contains("serve") || (s.contains("sleep") && !zero(s))
            }) {
                steps.push("{ run = \"100us\" }".into());
            }
            t += &format!("[[tasks]]\nname = \"t{i}\"\ncount = {}\nnice = {}\npolicy = \"{}\"\nstart = \"{}us\"\n", g.count, g.nice, g.policy, g.start_us);
            match g.policy {
                "fifo" | "rr" => t += &format!("rt_priority = {}\n", 1 + (g.nice + 20) * 98 / 39),
                // 0.02 each: a full swarm stays within admission.
                "deadline" => t += "dl_runtime = \"200us\"\ndl_deadline = \"5ms\"\ndl_period = \"10ms\"\n",
                _ => {}
            }
            // A deadline task's affinity must cover its root domain (EPERM).
            if let Some(mask) = g.cpus.as_ref().filter(|_| g.policy != "deadline") {
                let list: Vec<String> = mask.iter().enumerate().filter(|(_, b)| **b).map(|(c, _)| c.to_string()).collect();
                if !list.is_empty() {
                    t += &format!("cpus = \"{}\"\n", list.join(","));
                }
            }
            if let Some(n) = g.iterations {
                t += &format!("iterations = {n}\n");
            }
            let fair = matches!(g.policy, "normal" | "batch" | "idle");
            if kernel >= 2 && fair && let Some(us) = slices_us[i % slices_us.len()] {
                t += &format!("slice = \"{us}us\"\n");
            }
            let group = g.group % paths.len();
            if group > 0 {
                t += &format!("group = \"{}\"\n", paths[group]);
            }
            if let Some(session) = g.session {
                t += &format!("session = \"s{session}\"\n");
            }
            t += &format!("program = [{}]\n", steps.join(", "));
            if steps.iter().any(|s| s.contains("serve")) {
                sources += &format!("[[sources]]\nname = \"s{i}\"\ntarget = \"t{i}\"\nrate_per_s = {rate}\nwork = \"exp(100us)\"\nburst = {}\n", 1 + i % 3);
            }
        }
        if let Some((sleep_ms, run_us)) = stop {
            // One stop task per CPU (rq->stop), isolated CPUs included.
            let cpus: Vec<String> = (0..ncpus).map(|c| c.to_string()).collect();
            t += &format!(
                "[[tasks]]\nname = \"migration\"\ncount = {ncpus}\ncpus = \"{}\"\npin_each = true\npolicy = \"stop\"\nprogram = [{{ sleep = \"exp({sleep_ms}ms)\" }}, {{ run = \"exp({run_us}us)\" }}]\n",
                cpus.join(",")
            );
        }
        t + &sources
    }
}

fn run_checked(text: &str) -> Result<Simulation, TestCaseError> {
    let s = Scenario::from_toml("generated.toml", text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let mut sim = Simulation::new(&s);
    sim.run_to_end_checked().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    Ok(sim)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// After every event, under every kernel model (4.4 CFS, EEVDF 6.6,
    /// 6.12, 6.18 with random feature bits, base and per-task slices, tick
    /// phase, machine noise and kernel entries), with random task-group hierarchies (up to 5 groups,
    /// any nesting, shares from MIN_SHARES to past MAX_SHARES, autogroup on or
    /// off, either group-load model): time and min_vruntime of every run
    /// queue (group queues included) never go backwards; no CPU idles while
    /// its queue holds a runnable task; no task runs on two CPUs, runs while
    /// blocked, or sits outside its affinity; every queue's load, count and
    /// timeline match its queued entities; a group entity is queued iff its
    /// own queue has entities; group entity weights lie in [MIN_SHARES,
    /// shares]; `tg->load_avg` is the sum of the published contributions;
    /// CPU time is conserved. Under EEVDF also (`eevdf_invariants`): the
    /// queues' V sums match their trees, Σ w·(V − v) lies in (−W, 0], some
    /// queued entity is eligible, every pick was eligible or allowed by a
    /// rule (the single-entity shortcut, 6.6's fallback), lags off the
    /// queues stay within their clamp.
    #[test]
    fn invariants_hold_after_every_event(text in scenario()) {
        let sim = run_checked(&text)?;
        let r = sim.report();
        // Busy + idle = CPUs × duration, and delays are ordered statistics.
        let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
        prop_assert!(busy <= u64::from(r.settings.cpus) * r.sim_time_ns);
        for t in &r.tasks {
            let d = t.delay;
            prop_assert!(d.p50_ns <= d.p90_ns && d.p90_ns <= d.p99_ns && d.p99_ns <= d.p999_ns && d.p999_ns <= d.max_ns);
            prop_assert!(d.max_at_ns <= r.sim_time_ns);
            let throttled = t.throttled_delay.map_or(0, |d| d.count);
            prop_assert_eq!(d.count, t.wakeup_delay.count + t.preempt_delay.count + throttled);
            prop_assert!(t.runtime_ns <= r.sim_time_ns);
        }
    }

    /// Always-runnable tasks on one CPU share it in proportion to their
    /// weights, within 2 percentage points over 3 s at HZ=1000.
    #[test]
    fn long_run_shares_follow_weights(nices in proptest::collection::vec(-5..=5i32, 2..=4)) {
        let mut text = "schema = 1\nseed = 1\nduration = \"3s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 1000\n".to_string();
        for (i, n) in nices.iter().enumerate() {
            text += &format!("[[tasks]]\nname = \"h{i}\"\nnice = {n}\nprogram = [{{ run = \"10s\" }}]\n");
        }
        let s = Scenario::from_toml("hogs.toml", &text).unwrap();
        let r = sim_core::run(&s);
        const W: [f64; 11] = [3121.0, 2501.0, 1991.0, 1586.0, 1277.0, 1024.0, 820.0, 655.0, 526.0, 423.0, 335.0];
        let total: f64 = nices.iter().map(|&n| W[(n + 5) as usize]).sum();
        for (t, &n) in r.tasks.iter().zip(&nices) {
            let share = t.runtime_ns as f64 / r.sim_time_ns as f64;
            let want = W[(n + 5) as usize] / total;
            prop_assert!((share - want).abs() < 0.02, "nices {:?}: task nice {} share {:.4} want {:.4}", nices, n, share, want);
        }
    }
}

fn io_step(ndev: usize, ntasks: usize) -> impl Strategy<Value = String> {
    let size = prop_oneof![
        Just("\"4KiB\"".to_string()),
        Just("\"128KiB\"".to_string()),
        Just("\"2MiB\"".to_string()),
        (1..64u64, 64..3000u64).prop_map(|(a, b)| format!("\"uniform({a}KiB, {b}KiB)\"")),
    ];
    prop_oneof![
        3 => (0..ndev, size.clone(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(d, s, rand, meta, prio)| {
            let pattern = if rand { "random" } else { "sequential" };
            format!("{{ read = {s}, device = \"d{d}\", pattern = \"{pattern}\", meta = {meta}, prio = {prio}, span = \"64MiB\" }}")
        }),
        3 => (0..ndev, size, any::<bool>(), any::<bool>(), 0..3u32, any::<bool>()).prop_map(|(d, s, sync, wait, depth, rand)| {
            let pattern = if rand { "random" } else { "sequential" };
            let depth = if wait || depth == 0 { String::new() } else { format!(", depth = {}", depth * 4) };
            format!("{{ write = {s}, device = \"d{d}\", sync = {sync}, wait = {wait}{depth}, pattern = \"{pattern}\", span = \"64MiB\" }}")
        }),
        1 => Just("\"fdatasync\"".to_string()),
        1 => (0..ntasks).prop_map(|t| format!("{{ wait_io = \"t{t}\" }}")),
        2 => dur(2000).prop_map(|d| format!("{{ run = {d} }}")),
        2 => dur(5000).prop_map(|d| format!("{{ sleep = {d} }}")),
    ]
}

prop_compose! {
    pub(crate) fn io_scenario()(ndev in 1..=2usize, ntasks in 1..=4usize)(
        ndev in Just(ndev),
        programs in proptest::collection::vec(proptest::collection::vec(io_step(ndev, ntasks), 1..5), ntasks),
        nices in proptest::collection::vec(-20..=19i32, ntasks),
        idle in proptest::collection::vec(prop_oneof![5 => Just(false), 1 => Just(true)], ntasks),
        kinds in proptest::collection::vec(any::<bool>(), ndev),
        elevators in proptest::collection::vec(prop_oneof![Just("noop"), Just("deadline"), Just("cfq")], ndev),
        depths in proptest::collection::vec(prop_oneof![Just(1u32), Just(4), Just(32)], ndev),
        behaviours in proptest::collection::vec(any::<bool>(), ndev),
        cfq_tun in proptest::collection::vec((0..20u64, 1..200u64, 1..300u64, 1..16u64, any::<bool>(), 1..9u64), ndev),
        dl_tun in proptest::collection::vec((1..600u64, 1..6000u64, 0..4u64, 0..20u64, any::<bool>()), ndev),
        hz in prop_oneof![Just(100), Just(250), Just(1000)],
        seed in any::<u32>(),
        duration_ms in 50..400u64,
    ) -> String {
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"{duration_ms}ms\"\n[limits]\nevents_max = 30000\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 2\nhz = {hz}\n"
        );
        for d in 0..ndev {
            let kind = if kinds[d] { "hdd" } else { "ssd" };
            t += &format!("[devices.d{d}]\nkind = \"{kind}\"\nelevator = \"{}\"\nqueue_depth = {}\ncapacity = \"1GiB\"\n", elevators[d], depths[d]);
            t += &format!("cfq_behaviour = \"{}\"\n", if behaviours[d] { "4.4" } else { "fixed" });
            let (idle_ms, sync_ms, async_ms, quantum, lowlat, rq) = cfq_tun[d];
            t += &format!("[devices.d{d}.cfq]\nslice_idle = {idle_ms}\nslice_sync = {sync_ms}\nfifo_expire_async = {async_ms}\nquantum = {quantum}\nlow_latency = {}\nslice_async_rq = {rq}\n", u8::from(lowlat));
            let (re, we, ws, fb, fm) = dl_tun[d];
            t += &format!("[devices.d{d}.deadline]\nread_expire = {re}\nwrite_expire = {we}\nwrites_starved = {ws}\nfifo_batch = {fb}\nfront_merges = {}\n", u8::from(fm));
        }
        for (i, steps) in programs.iter().enumerate() {
            let mut steps = steps.clone();
            steps.push("{ sleep = \"1ms\" }".into());
            let policy = if idle[i] { "idle" } else { "normal" };
            t += &format!("[[tasks]]\nname = \"t{i}\"\nnice = {}\npolicy = \"{policy}\"\nprogram = [{}]\n", nices[i], steps.join(", "));
        }
        t
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Block I/O, after every event, over random devices (SSD or disk, queue
    /// depth 1 to 32), elevators and their tunables (CFQ 4.4 and fixed), and
    /// programs mixing sync and async reads and writes, AIO depths,
    /// fdatasync and waits on other tasks' I/O: the device never holds more
    /// than its queue depth; every live request is in the elevator or the
    /// device; Q ≤ I ≤ D ≤ C; a request's sectors are its bios'; bytes queued
    /// = bytes completed + bytes live (merges conserve bytes); every bio
    /// completes exactly once (submitted − completed = live, per task too);
    /// CFQ's busy-queue and in-flight counters match its queues; deadline
    /// dispatches an expired FIFO head within the batches bound.
    #[test]
    fn io_invariants_hold_after_every_event(text in io_scenario()) {
        let sim = run_checked(&text)?;
        let r = sim.report();
        let io = r.io.as_ref().expect("devices declared");
        for d in &io.devices {
            prop_assert!(d.completed[0] <= d.dispatched[0] && d.completed[1] <= d.dispatched[1]);
            prop_assert!(d.q2d.max_ns <= d.q2c.max_ns || d.q2c.count == 0 || d.q2d.count > d.q2c.count);
            prop_assert_eq!(d.dispatched[0] + d.dispatched[1] - d.completed[0] - d.completed[1] + d.pending - (d.dispatched[0] + d.dispatched[1] - d.completed[0] - d.completed[1]), d.pending);
        }
    }
}

prop_compose! {
    /// One CPU-limited group `/pod` (and maybe a limited child `/pod/c`)
    /// with random tasks, plus unlimited neighbours, under a random model.
    pub(crate) fn quota_scenario()(ntasks in 1..=5usize)(
        kernel in 0..4usize,
        bw_rules in 0..4usize,
        ncpus in 1..=4usize,
        hz in prop_oneof![Just(100), Just(250), Just(1000)],
        seed in any::<u32>(),
        duration_ms in 200..800u64,
        quota_ms in 1..60u64,
        period_ms in 2..100u64,
        burst_div in 0..3u64,
        child in proptest::option::of((1..40u64, 2..100u64)),
        slice_us in prop_oneof![3 => Just(5000u64), 1 => 500..10_000u64],
        programs in proptest::collection::vec(proptest::collection::vec(step(ntasks), 1..4), ntasks),
        placement in proptest::collection::vec(0..3usize, ntasks),
        counts in proptest::collection::vec(1..=3u32, ntasks),
    ) -> String {
        let version = ["4.4", "6.6", "6.12", "6.18"][kernel];
        let eevdf = kernel > 0;
        let rules = ["4.4", "4.18", "5.4", "5.14"][bw_rules];
        let burst_ok = eevdf || bw_rules == 3;
        let bw_kernel = if eevdf { String::new() } else { format!("cfs_bandwidth = \"{rules}\"\n") };
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"{duration_ms}ms\"\n[limits]\nevents_max = 60000\n[kernel]\nversion = \"{version}\"\n{bw_kernel}[machine]\ncpus = {ncpus}\nhz = {hz}\n[cfs]\nsched_cfs_bandwidth_slice_us = {slice_us}\n"
        );
        t += &format!("[groups.\"/pod\"]\n\"cpu.max\" = \"{} {}\"\n", quota_ms * 1000, period_ms * 1000);
        if burst_ok && burst_div > 0 {
            t += &format!("\"cpu.max.burst\" = {}\n", quota_ms * 1000 / burst_div);
        }
        if let Some((q, p)) = child {
            t += &format!("[groups.\"/pod/c\"]\n\"cpu.max\" = \"{} {}\"\n", q * 1000, p * 1000);
        }
        for (i, steps) in programs.iter().enumerate() {
            let mut steps = steps.clone();
            steps.push("{ run = \"3ms\" }".into());
            steps.push("{ sleep = \"exp(2ms)\" }".into());
            let group = ["/pod", "/pod/c", "/"][placement[i]];
            let group = if group == "/pod/c" && child.is_none() { "/pod" } else { group };
            t += &format!("[[tasks]]\nname = \"t{i}\"\ncount = {}\ngroup = \"{group}\"\nprogram = [{}]\n", counts[i], steps.join(", "));
        }
        t
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// CFS bandwidth control, checked after every event (the invariants
    /// above: no task of a throttled queue runs or is counted in its CPU's
    /// nr_running, a throttled queue's entity is off its parent, throttle
    /// counts match the hierarchy, no CPU idles while it has runnable work)
    /// and per period: between two refills (`phase + k × period`) a limited
    /// group's tasks run at most
    ///   quota + burst + CPUs × (sched_cfs_bandwidth_slice + one tick).
    /// From the code: a period can use the pool it starts with (≤ quota +
    /// burst; slack returned within it was handed out first), what each CPU
    /// held at its start (`assign_cfs_rq_runtime` tops a queue up to one
    /// slice, never more), and the overshoot of a queue that ran past zero
    /// before the next charge noticed it (≤ the time since the last
    /// `update_curr`, one tick), which is repaid from the next pool.
    #[test]
    fn a_limited_group_uses_at_most_its_quota_per_period(text in quota_scenario()) {
        let s = Scenario::from_toml("quota.toml", &text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let mut sim = Simulation::new(&s);
        sim.enable_trace(sim_core::metrics::recorder::TraceWindow::all(2_000_000)).expect("traced from the start");
        sim.run_to_end_checked().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let spec = sim.spec().clone();
        let tick = sim.tick_ns();
        let end = sim.now().ns();
        for (gi, g) in spec.groups.groups.iter().enumerate().skip(1) {
            let Some(b) = g.bandwidth else { continue };
            let quota = b.quota_ns.expect("limited");
            let gid = sim_core::ids::GroupId(gi as u32);
            let phase = sim.cfs().period_phase(gid).expect("limited");
            // Run intervals of the tasks under the group.
            let under = |t: sim_core::ids::TaskId| {
                let path = &spec.groups.groups[spec.tasks[spec.declaration_of(t).expect("task").0].group].path;
                path == &g.path || path.starts_with(&format!("{}/", g.path))
            };
            let mut runs = Vec::new();
            let mut open = vec![None; spec.cpus as usize];
            for r in sim.trace() {
                if let sim_core::metrics::history::RecordKind::Switch { prev, prev_sched_in, next, .. } = r.kind {
                    if let Some(p) = prev && under(p) {
                        runs.push((prev_sched_in.ns(), r.at.ns()));
                    }
                    open[r.cpu.index()] = next.filter(|&n| under(n)).map(|_| r.at.ns());
                }
            }
            runs.extend(open.iter().flatten().map(|&from| (from, end)));
            let cpus = g.cpus.len() as u64;
            let bound = quota + b.burst_ns + cpus * (spec.bandwidth_slice_us * 1000 + tick);
            let mut from = 0;
            let mut to = if phase == 0 { b.period_ns } else { phase };
            while from < end {
                let used: u64 = runs.iter().map(|&(s, e)| e.min(to).saturating_sub(s.max(from))).sum();
                prop_assert!(used <= bound, "{}: {} ns used in [{from}, {to}), bound {bound}\n{text}", g.path, used);
                from = to;
                to += b.period_ns;
            }
        }
    }
}

/// Found by the quota proptest: on 6.12 an unthrottle on an idle CPU whose
/// root queue then holds only a delayed-dequeue entity (no runnable task
/// counted in `nr_running`) must still reschedule it, as
/// `unthrottle_cfs_rq` tests `rq->cfs.nr_running`; the pick then finishes
/// the delayed dequeue. Before the fix CPU 1 stayed idle with an entity
/// queued at 672.776 ms.
#[test]
fn an_unthrottle_leaving_only_a_delayed_entity_reschedules_the_idle_cpu() {
    let text = r#"schema = 1
seed = 25074409
duration = "768ms"
[limits]
events_max = 60000
[kernel]
version = "6.12"
[machine]
cpus = 2
hz = 100
[cfs]
sched_cfs_bandwidth_slice_us = 5000
[groups."/pod"]
"cpu.max" = "3000 2000"
[groups."/pod/c"]
"cpu.max" = "13000 2000"
[[tasks]]
name = "t0"
count = 2
group = "/pod"
program = [{ run = "lognormal(1us, 0.5)" }, { run = "3ms" }, { sleep = "exp(2ms)" }]
[[tasks]]
name = "t1"
count = 1
group = "/pod/c"
program = [{ run = "75us" }, { run = "3ms" }, { sleep = "exp(2ms)" }]
"#;
    let s = Scenario::from_toml("quota.toml", text).expect("valid");
    let mut sim = Simulation::new(&s);
    sim.run_to_end_checked().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sim.now().ns(), 768_000_000);
}

/// Found by `invariants_hold_after_every_event` (6.6, four CPUs, NO_HZ):
/// active balancing's stopper preempts a fair task of a `cpu.max` group,
/// and the put (`put_prev_entity` → `check_cfs_rq_runtime`) throttles the
/// group, leaving CPU 1 with nothing queued at 133.893807 ms. The switch
/// to the stopper (6.6 fair.c `active_load_balance_cpu_stop`, run by
/// `cpu_stopper_thread`) is not an idle entry; the model took it for one
/// and called the SMP policy (`nohz_balance_enter_idle`) from inside the
/// policy's own call, which panicked. The CPU now enters NO_HZ idle at the
/// `__schedule` after the stopper (6.6 idle.c `do_idle`).
#[test]
fn a_throttle_under_the_active_balance_stopper_does_not_reenter_the_policy() {
    let text = r#"schema = 1
seed = 734410269
duration = "152ms"
[limits]
events_max = 40000
[kernel]
version = "6.6"
[machine]
cpus = 4
hz = 100
context_switch = "0us"
tick_offset = "2040us"
sockets = 2
cores_per_socket = 2
threads_per_core = 1
numa_nodes = 1
nohz = true
[cfs]
group_load = "pelt"
sched_cfs_bandwidth_slice_us = 894
base_slice_ns = "2731us"
[autogroup]
enabled = false
[groups."/g0"]
shares = 2
"cpu.max" = "12000 43000"
[features]
PLACE_LAG = false
PLACE_DEADLINE_INITIAL = false
RUN_TO_PARITY = false
NEXT_BUDDY = false
WAKEUP_PREEMPTION = false
HRTICK = true
[[tasks]]
name = "t0"
count = 3
nice = 0
policy = "normal"
start = "722us"
group = "/g0"
program = [{ sleep_until = "6050us", offset = "722us" }, "serve"]
[[tasks]]
name = "t1"
count = 2
nice = -3
policy = "normal"
start = "5168us"
cpus = "2"
program = [{ wake = "t0" }, { run = "100us" }]
[[tasks]]
name = "t2"
count = 2
nice = 0
policy = "normal"
start = "0us"
cpus = "0"
program = [{ sleep = "12us" }]
[[tasks]]
name = "t3"
count = 2
nice = 0
policy = "fifo"
start = "2100us"
rt_priority = 51
program = [{ run = "normal(1503us, 1326us)" }, { run = "lognormal(1943us, 0.5)" }, { sleep_until = "13916us", offset = "662us" }]
[[sources]]
name = "s0"
target = "t0"
rate_per_s = 6471
work = "exp(100us)"
burst = 1
"#;
    let s = Scenario::from_toml("stopper.toml", text).expect("valid");
    let mut sim = Simulation::new(&s);
    sim.run_to_end_checked().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sim.now().ns(), 152_000_000);
}
