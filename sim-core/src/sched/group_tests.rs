//! Group scheduling pinned against outcomes derived by hand from Linux 4.4
//! fair.c (`calc_cfs_shares`, hierarchical `sched_slice`, `entity_tick` at
//! every level). Comments give the derivation.

use crate::engine::Simulation;
use crate::ids::{EntityId, GroupId, TaskId};
use crate::report::RunReport;
use crate::sched::group::calc_cfs_shares;
use crate::sched::tests::{switch_ins, traced as run};

const MS: u64 = 1_000_000;

fn header(cpus: u16, duration: &str, extra: &str) -> String {
    format!("schema = 1\nseed = 1\nduration = \"{duration}\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = {cpus}\nhz = 1000\n{extra}\n")
}

fn hog(name: &str, group: &str, extra: &str) -> String {
    format!("[[tasks]]\nname = \"{name}\"\ngroup = \"{group}\"\nprogram = [{{ run = \"100s\" }}]\n{extra}\n")
}

/// /spread: a hog pinned to each of 4 CPUs; /local: one hog on CPU 0.
fn spread_vs_local(duration: &str, extra: &str) -> String {
    header(4, duration, &format!("{extra}[groups.\"/spread\"]\n[groups.\"/local\"]\n"))
        + &hog("spread", "/spread", "count = 4\ncpus = \"0-3\"\npin_each = true")
        + &hog("local", "/local", "cpus = \"0\"")
}

fn share(r: &RunReport, name: &str) -> f64 {
    let ns: u64 = r.tasks.iter().filter(|t| t.name == name).map(|t| t.runtime_ns).sum();
    ns as f64 / r.sim_time_ns as f64
}

fn group_id(sim: &Simulation, path: &str) -> GroupId {
    GroupId(sim.cfs().groups.iter().position(|g| g.path == path).expect(path) as u32)
}

/// The weight of `path`'s entity on `cpu`.
fn entity_weight(sim: &Simulation, path: &str, cpu: u16) -> u64 {
    let g = &sim.cfs().groups[group_id(sim, path).index()];
    sim.cfs().se(g.se[usize::from(cpu)].expect("group on that CPU")).load.weight
}

/// On one CPU a group's load is all on that CPU, so `calc_cfs_shares` gives
/// `shares · L / L = shares` whenever the group has something queued: every
/// wakeup sees the entity at exactly its shares.
#[test]
fn on_one_cpu_a_group_entity_weighs_its_shares() {
    let toml = header(1, "500ms", "[groups.\"/big\"]\nshares = 3000\n[groups.\"/small\"]\nshares = 100\n")
        + &hog("hog", "/big", "")
        + "[[tasks]]\nname = \"sleeper\"\ngroup = \"/small\"\nprogram = [{ sleep = \"3ms\" }, { run = \"200us\" }]\n";
    let sim = run(&toml);
    assert_eq!(entity_weight(&sim, "/big", 0), 3000);
    let r = sim.report();
    for (path, shares) in [("/big", 3000), ("/small", 100)] {
        let g = r.groups.iter().find(|g| g.path == path).unwrap();
        assert!(g.weight_samples > 0, "{path}");
        assert_eq!((g.weight_min, g.weight_max), (shares, shares), "{path}");
    }
}

/// Two groups with shares 2048 and 1024, one hog each, one CPU (factor 1:
/// sched_latency 6 ms). At the root the two group entities weigh 2048 and
/// 1024: sched_slice gives /a 6 ms · 2/3 = 4 ms and /b 2 ms (each a few ns
/// short after `__calc_delta` truncation), so the 1000 Hz tick switches at
/// 4 ms, 6 ms, 10 ms, 12 ms, … Both entities start at vruntime 0, so /b
/// (forked second, not behind) cannot preempt /a at its wakeup; after /a's
/// 4 ms (2 ms of vruntime at weight 2048) and /b's 2 ms both sit at 2 ms and
/// /a, queued first, is leftmost.
#[test]
fn groups_with_shares_2048_and_1024_split_one_cpu_2_to_1() {
    let toml = header(1, "3s", "[groups.\"/a\"]\nshares = 2048\n[groups.\"/b\"]\nshares = 1024\n")
        + &hog("a", "/a", "")
        + &hog("b", "/b", "");
    let sim = run(&toml);
    let ins: Vec<(u64, String)> = switch_ins(&sim).into_iter().take(6).collect();
    let want: Vec<(u64, String)> = [(0, "a"), (4, "b"), (6, "a"), (10, "b"), (12, "a"), (16, "b")]
        .iter()
        .map(|&(t, c)| (t * MS, c.into()))
        .collect();
    assert_eq!(ins, want);
    let r = sim.report();
    assert!((share(&r, "a") - 2.0 / 3.0).abs() < 0.005, "{}", share(&r, "a"));
    assert!((share(&r, "b") - 1.0 / 3.0).abs() < 0.005, "{}", share(&r, "b"));
}

/// A group with four hogs against a group with one, equal shares: the CPU is
/// split by group (1/2 each), then inside the group by task (1/8 each).
#[test]
fn four_hogs_in_one_group_get_what_one_hog_in_another_gets() {
    let toml = header(1, "3s", "[groups.\"/four\"]\n[groups.\"/one\"]\n")
        + &hog("many", "/four", "count = 4")
        + &hog("single", "/one", "");
    let r = run(&toml).report();
    assert!((share(&r, "single") - 0.5).abs() < 0.01, "{}", share(&r, "single"));
    assert!((share(&r, "many") - 0.5).abs() < 0.01, "{}", share(&r, "many"));
    for t in r.tasks.iter().filter(|t| t.name == "many") {
        let s = t.runtime_ns as f64 / r.sim_time_ns as f64;
        assert!((s - 0.125).abs() < 0.01, "{}: {s}", t.comm);
    }
}

/// Nested groups: /a (1024) and /d (1024) under the root, /a/b (3072) and
/// /a/c (1024) under /a, one hog in each leaf. /a gets 1/2, of which b 3/4
/// and c 1/4: b 3/8, c 1/8, d 1/2, the product of each level's share.
#[test]
fn nested_groups_split_by_the_product_of_each_levels_shares() {
    let groups = "[groups.\"/a\"]\n[groups.\"/a/b\"]\nshares = 3072\n[groups.\"/a/c\"]\n[groups.\"/d\"]\n";
    let toml = header(1, "4s", groups) + &hog("b", "/a/b", "") + &hog("c", "/a/c", "") + &hog("d", "/d", "");
    let sim = run(&toml);
    let r = sim.report();
    for (name, want) in [("b", 3.0 / 8.0), ("c", 1.0 / 8.0), ("d", 0.5)] {
        assert!((share(&r, name) - want).abs() < 0.01, "{name}: {} want {want}", share(&r, name));
    }
    // Depths as the kernel numbers them: a group entity under the root is at 0.
    let se_b = sim.cfs().se(EntityId(TaskId(0).0)); // task entities come first
    assert_eq!(se_b.depth, 2);
}

/// Many CPUs: /spread has a hog on each of 4 CPUs, /local one hog on CPU 0.
/// /local's load is all on CPU 0, so its entity there weighs its full 1024.
/// /spread's load is spread: on CPU 0 its entity weighs
/// `1024 · L0 / (tg->load_avg − contrib0 + L0)` ≈ 1024 / 4 once the PELT
/// averages on the other CPUs have converged near 1024 each. The hog of
/// /spread on CPU 0 therefore gets ~20% of that CPU instead of 50%, and waits
/// ~4× longer for it, while its siblings on CPUs 1-3 run alone.
#[test]
fn a_group_spread_over_all_cpus_weighs_less_per_cpu_than_a_concentrated_one() {
    let sim = run(&spread_vs_local("2s", ""));
    let spread = group_id(&sim, "/spread");
    let g = &sim.cfs().groups[spread.index()];
    let q0 = sim.cfs().rq(g.cfs_rq[0].unwrap());
    let w_spread = entity_weight(&sim, "/spread", 0);
    let w_local = entity_weight(&sim, "/local", 0);
    // The weight is exactly what calc_cfs_shares gives from the group's state.
    let tg_weight = g.load_avg - q0.tg_load_avg_contrib as i64 + q0.load.weight as i64;
    assert_eq!(w_spread, calc_cfs_shares(1024, q0.load.weight, tg_weight));
    assert_eq!(w_local, 1024);
    assert!((240..=270).contains(&w_spread), "spread entity weight on CPU 0: {w_spread}");
    // CPU 0 is split by the entity weights; the other CPUs are the hogs' alone.
    let r = sim.report();
    let runtime =
        |comm: &str| r.tasks.iter().find(|t| t.comm == comm).unwrap().runtime_ns as f64 / r.sim_time_ns as f64;
    let expect = w_spread as f64 / (w_spread + w_local) as f64;
    assert!((runtime("spread/0") - expect).abs() < 0.03, "spread/0 got {} want {expect}", runtime("spread/0"));
    assert!(runtime("spread/1") > 0.99);
    let max_delay = |comm: &str| r.tasks.iter().find(|t| t.comm == comm).unwrap().delay.max_ns;
    assert!(max_delay("spread/0") > 3 * max_delay("local"), "{} vs {}", max_delay("spread/0"), max_delay("local"));

    // The instantaneous variant divides by the current weights: exactly 1/4.
    let inst = run(&spread_vs_local("200ms", "[cfs]\ngroup_load = \"instantaneous\"\n"));
    assert_eq!(entity_weight(&inst, "/spread", 0), 256);
}

/// Autogroup: tasks with a session and no cgroup run in their session's
/// autogroup; with autogroup off they share the root group. A task placed in
/// a cgroup stays there either way.
#[test]
fn autogroup_puts_each_session_in_its_own_group() {
    let tasks = "[[tasks]]\nname = \"build\"\ncount = 4\nsession = \"make\"\nprogram = [{ run = \"100s\" }]\n\
                 [[tasks]]\nname = \"shell\"\nsession = \"tty\"\nprogram = [{ run = \"100s\" }]\n\
                 [[tasks]]\nname = \"daemon\"\nsession = \"svc\"\ngroup = \"/sys\"\nprogram = [{ run = \"100s\" }]\n";
    let on = run(&(header(1, "2s", "[groups.\"/sys\"]\n[autogroup]\nnice = { tty = 0 }\n") + tasks)).report();
    let group = |r: &RunReport, name: &str| r.tasks.iter().find(|t| t.name == name).unwrap().group.clone();
    assert_eq!(group(&on, "build"), "/autogroup-make");
    assert_eq!(group(&on, "shell"), "/autogroup-tty");
    assert_eq!(group(&on, "daemon"), "/sys");
    // Three groups of equal shares: a third each, however many tasks.
    for name in ["build", "shell", "daemon"] {
        assert!((share(&on, name) - 1.0 / 3.0).abs() < 0.01, "{name}: {}", share(&on, name));
    }
    let off = run(&(header(1, "2s", "[groups.\"/sys\"]\n[autogroup]\nenabled = false\n") + tasks)).report();
    assert_eq!(group(&off, "shell"), "/");
    // Root: build ×4 and shell (weight 1024 each) against /sys's entity (1024).
    assert!((share(&off, "shell") - 1.0 / 6.0).abs() < 0.01, "{}", share(&off, "shell"));
    // An autogroup's nice value sets its shares (prio_to_weight).
    let niced = run(
        &(header(1, "2s", "[autogroup]\nnice = { make = 5 }\n") + tasks.replace("group = \"/sys\"\n", "").as_str())
    );
    let make = niced.report().groups.into_iter().find(|g| g.path == "/autogroup-make").unwrap();
    assert_eq!(make.shares, 335);
}

/// 6.18 `update_cfs_group` keeps an empty group's weight (6.18.0 fair.c:3957:
/// "When a group becomes empty, preserve its weight. This matters for
/// DELAY_DEQUEUE"); 6.12 (fair.c:4054) recomputes it at the dequeue, from
/// the queue's `load_avg` instead of the running task's 1024. Group /g: `a`
/// on CPU 0 runs 2 ms and sleeps 2 ms (running at 1.0015 s, asleep from
/// 1.002 s), `b` on CPU 1 runs throughout, so /g's CPU 0 share is below
/// 1024 and moves with the load there.
#[test]
fn an_empty_group_keeps_its_weight_from_6_18() {
    for (version, keeps) in [("6.12", false), ("6.18", true)] {
        let weight_at = |duration: &str| {
            let toml = format!(
                "schema = 1\nseed = 1\nduration = \"{duration}\"\n[kernel]\nversion = \"{version}\"\n[machine]\ncpus = 2\nhz = 1000\n[groups.\"/g\"]\n"
            ) + "[[tasks]]\nname = \"a\"\ngroup = \"/g\"\ncpus = \"0\"\nprogram = [{ run = \"2ms\" }, { sleep = \"2ms\" }]\n"
                + &hog("b", "/g", "cpus = \"1\"");
            let scenario = crate::scenario::Scenario::from_toml("empty-group.toml", &toml).unwrap();
            let mut sim = Simulation::new(&scenario);
            sim.run_to_end();
            let se = sim.cfs().groups[group_id(&sim, "/g").index()].se[0].expect("/g has an entity on CPU 0");
            let gq = sim.cfs().se(se).my_q.expect("a group entity owns a queue");
            (sim.cfs().rq(gq).load.weight, sim.cfs().se(se).load.weight)
        };
        let (queued, running) = weight_at("1001500us");
        let (empty, asleep) = weight_at("1003ms");
        assert_eq!((queued, empty), (1024, 0), "{version}: a runs at 1.0015 s, sleeps at 1.003 s");
        assert!(running < 1024, "{version}: /g's load is split over two CPUs ({running})");
        assert_eq!(asleep == running, keeps, "{version}: weight {running} running, {asleep} asleep");
    }
}

/// 6.18.2 `cfs_rq_is_decayed` (fair.c:4062, a stable fix not in 6.18.0 or
/// 6.12) also asks that the queue no longer contribute to `tg->load_avg`:
/// `b` runs 2 ms on CPU 1 and sleeps; its emptied /g queue, its sums then
/// zeroed and its `tg_load_avg_contrib` set to 5, stays on the leaf list
/// under 6.18 only.
#[test]
fn a_queue_still_in_the_groups_load_is_not_decayed_from_6_18_2() {
    for (version, decayed) in [("6.12", true), ("6.18", false)] {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"10ms\"\n[kernel]\nversion = \"{version}\"\n[machine]\ncpus = 2\nhz = 1000\n[groups.\"/g\"]\n"
        ) + "[[tasks]]\nname = \"b\"\ngroup = \"/g\"\ncpus = \"1\"\nprogram = [{ run = \"2ms\" }, { sleep = \"100s\" }]\n";
        let scenario = crate::scenario::Scenario::from_toml("decayed.toml", &toml).unwrap();
        let mut sim = Simulation::new(&scenario);
        sim.run_to_end();
        let mut cfs = sim.cfs().clone();
        let se = cfs.groups[group_id(&sim, "/g").index()].se[1].expect("/g has an entity on CPU 1");
        let gq = cfs.se(se).my_q.expect("a group entity owns a queue");
        let rq = cfs.rq_mut(gq);
        rq.avg = Default::default();
        rq.tg_load_avg_contrib = 5;
        assert_eq!(rq.load.weight, 0, "b sleeps");
        assert_eq!(cfs.cfs_rq_is_decayed(gq), decayed, "{version}");
        cfs.rq_mut(gq).tg_load_avg_contrib = 0;
        assert!(cfs.cfs_rq_is_decayed(gq), "{version}: decayed once the contribution is gone");
    }
}
