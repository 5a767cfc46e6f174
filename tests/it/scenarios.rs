//! The shipped scenarios: they parse, run, keep the JSON contract, reproduce
//! the behaviour they document, and match their golden digests.

use serde_json::Value;
use sim_core::{StopReason, report_json, runs_json};
use sim_tests::{digest, load, run, scenario_files};

#[test]
fn every_scenario_and_variant_runs_to_its_time_limit() {
    let files = scenario_files();
    assert!(files.len() >= 3, "ship at least three scenarios");
    for path in files {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let base = load(&name).with_overrides(&[("duration", "300ms")]).unwrap();
        let mut names = vec![None];
        names.extend(base.variant_names().into_iter().map(|v| Some(v.to_string())));
        for v in names {
            let s = match &v {
                Some(v) => base.with_variant(v).unwrap(),
                None => base.clone(),
            };
            let r = run(&s);
            assert_eq!(r.stop, StopReason::TimeLimit, "{name} {v:?}");
            assert_eq!(r.sim_time_ns, 300_000_000);
            let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
            let runtime: u64 = r.tasks.iter().map(|t| t.runtime_ns).sum();
            assert_eq!(busy, runtime, "{name} {v:?}: CPU time is conserved");
        }
    }
}

/// The `--json` contract: names and types scripts rely on.
/// The benchmarks' 256-CPU scenario (`sim-core/benches/large-machine.toml`,
/// not shipped in `scenarios/`) stays valid as the format evolves.
#[test]
fn the_benchmarks_large_machine_scenario_runs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim-core/benches/large-machine.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = sim_core::Scenario::from_toml("sim-core/benches/large-machine.toml", &text)
        .and_then(|s| s.with_overrides(&[("duration", "20ms")]))
        .unwrap_or_else(|e| panic!("{e}"));
    let r = run(&s);
    assert_eq!(r.stop, StopReason::TimeLimit);
    assert_eq!((r.cpus.len(), r.tasks.len()), (256, 1000));
    assert!(r.cpus.iter().all(|c| c.busy_ns > 0), "every CPU has work");
}

#[test]
fn json_report_keeps_the_documented_fields() {
    let s = load("jmx").with_overrides(&[("duration", "200ms")]).unwrap();
    let v: Value = serde_json::from_str(&report_json(&run(&s))).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["scenario"], "jmx");
    assert!(v["variant"].is_null());
    assert_eq!(v["seed"], 42);
    assert_eq!(v["sim_time_ns"], 200_000_000u64);
    assert!(v["events"].as_u64().unwrap() > 1000);
    assert_eq!(v["settings"]["sched_latency_ns"], 24_000_000u64);
    assert_eq!(v["settings"]["features"]["GENTLE_FAIR_SLEEPERS"], true);
    let tasks = v["tasks"].as_array().unwrap();
    let reactor = tasks.iter().find(|t| t["comm"] == "reactor/3").unwrap();
    assert_eq!(reactor["name"], "reactor");
    assert_eq!(reactor["group"], "/autogroup-scylla");
    assert!(reactor["tid"].as_u64().unwrap() > 0);
    for key in ["delay", "wakeup_delay", "preempt_delay", "response"] {
        for field in ["count", "avg_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "max_at_ns"] {
            assert!(reactor[key][field].is_u64(), "{key}.{field}");
        }
    }
    for field in ["runtime_ns", "switches"] {
        assert!(reactor[field].is_u64(), "{field}");
    }
    let gc = tasks.iter().find(|t| t["name"] == "jvm-gc").unwrap();
    assert!(gc["response"].is_null(), "a task that neither serves nor runs periodic jobs has response null");
    assert!(gc.get("overruns").is_none(), "only periodic tasks count overruns");
    // jmx-poller runs a periodic job (`sleep_until`): release to completion.
    let poller = tasks.iter().find(|t| t["name"] == "jmx-poller").unwrap();
    assert!(poller["response"]["p99_ns"].is_u64() && poller["overruns"].is_u64(), "{poller}");
    let cpus = v["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 32);
    assert!(cpus.iter().all(|c| c["cpu"].is_u64() && c["busy_ns"].is_u64() && c["switches"].is_u64()));
    assert_eq!(v["settings"]["autogroup"], true);
    assert_eq!(v["settings"]["group_load"], "pelt");
    let groups = v["groups"].as_array().unwrap();
    let paths: Vec<&str> = groups.iter().map(|g| g["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/autogroup-scylla", "/autogroup-jmx"]);
    assert_eq!(groups[0]["session"], "scylla");
    assert_eq!(groups[0]["shares"], 1024);
    assert_eq!(groups[0]["tasks"], 32);
    for field in ["samples", "avg", "min", "max"] {
        assert!(groups[0]["weight_at_wakeup"][field].is_u64(), "{field}");
    }
    assert!(groups[0]["load_avg"].is_i64());

    let both = runs_json(&[run(&s), run(&s.with_variant("tuned").unwrap())]);
    let both: Value = serde_json::from_str(&both).unwrap();
    let runs = both["runs"].as_array().unwrap();
    assert!(runs[0]["variant"].is_null());
    assert_eq!(runs[1]["variant"], "tuned");
}

/// The incident, reproduced: with the defaults a reactor waits 10+ ms behind
/// the JVM in either placement. The tuned sysctls fix it only when both
/// services share the root group: there the worst wakeup delay stays under
/// the analytic bound sched_latency/2 + 2 ticks for one hog and one sleeper.
/// In separate autogroups the reactors' group, spread over 32 CPUs, gets a
/// per-CPU entity weight of about a tenth of the JVM group's, so the tuned
/// reactors still wait several milliseconds and requests queue behind the JVM.
#[test]
fn jmx_placement_decides_whether_the_tuned_sysctls_help() {
    let base = load("jmx");
    let bound = 1_000_000 / 2 + 2 * 1_000_000;
    let defaults = run(&base.with_variant("defaults").unwrap());
    let same = run(&base.with_variant("same-group").unwrap());
    for r in [&defaults, &same] {
        assert!(r.victim.wakeup_delay.max_ns >= 10_000_000, "{:?}", r.victim.wakeup_delay);
        // The culprit of the worst delays is the JVM, not the kernel threads.
        let worst = r.victim.histogram.last().unwrap();
        assert!(worst.culprits[0].0.starts_with("j"), "{:?}", worst.culprits);
    }
    let tuned_same = run(&base.with_variant("tuned-same-group").unwrap());
    assert_eq!(tuned_same.victim.one_hog_bound_ns, bound);
    assert!(tuned_same.victim.wakeup_delay.max_ns < bound, "{:?}", tuned_same.victim.wakeup_delay);
    let tuned = run(&base.with_variant("tuned").unwrap());
    assert!(tuned.victim.wakeup_delay.max_ns > 2 * tuned_same.victim.wakeup_delay.max_ns);
    let response = |r: &sim_core::RunReport| r.victim.response.expect("reactors serve").max_ns;
    // JVM unpinned: 13-18 ms vs 1.9-2.4 ms over seeds 1-7 and 42.
    assert!(response(&tuned) > 5 * response(&tuned_same), "{} vs {}", response(&tuned), response(&tuned_same));
    // Why: the group entities' weights when their tasks woke.
    let weight = |path: &str| tuned.groups.iter().find(|g| g.path == path).expect(path).weight_avg;
    assert!(weight("/autogroup-scylla") * 4 < weight("/autogroup-jmx"), "{:?}", tuned.groups);
    println!(
        "jmx: reactor max wakeup delay defaults {} / same-group {} / tuned {} / tuned-same-group {} ns (bound {bound}); \
         max response tuned {} vs tuned-same-group {} ns",
        defaults.victim.wakeup_delay.max_ns,
        same.victim.wakeup_delay.max_ns,
        tuned.victim.wakeup_delay.max_ns,
        tuned_same.victim.wakeup_delay.max_ns,
        response(&tuned),
        response(&tuned_same)
    );
}

#[test]
fn two_hogs_split_the_cpu_by_weight() {
    let s = load("two-hogs");
    let share = |r: &sim_core::RunReport| r.tasks[0].runtime_ns as f64 / r.sim_time_ns as f64;
    assert!((share(&run(&s)) - 0.5).abs() < 0.01);
    let unequal = run(&s.with_variant("unequal-nice").unwrap());
    assert!((share(&unequal) - 1024.0 / 1359.0).abs() < 0.01, "{}", share(&unequal));
}

/// Golden digests of the full JSON reports: any change to the model's
/// behaviour shows up here. Update with `UPDATE_EXPECT=1` after checking why.
#[test]
fn golden_digests() {
    let mut lines = String::new();
    for path in scenario_files() {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let s = load(&name).with_overrides(&[("duration", "1s")]).unwrap();
        lines.push_str(&format!("{name}: {}\n", digest(&report_json(&run(&s)))));
        // The same file under the newest model (EEVDF 6.18), where its keys allow it.
        if let Ok(e) = s.with_overrides(&[("kernel.version", "6.18")]) {
            lines.push_str(&format!("{name}@6.18: {}\n", digest(&report_json(&run(&e)))));
        }
    }
    expect_test::expect_file!["golden_digests.txt"].assert_eq(&lines);
}

/// autogroup-desktop.toml: with autogroup the player's own group entity
/// (1024 on its CPU) beats the build's (~1024/4 per CPU) at every frame; with
/// autogroup off, or with the player in the build's session, it is one of
/// nine equal tasks and its frames wait tens of milliseconds.
#[test]
fn autogroup_keeps_the_player_responsive_during_a_build() {
    let base = load("autogroup-desktop");
    let on = run(&base);
    let off = run(&base.with_variant("autogroup-off").unwrap());
    let same = run(&base.with_variant("same-session").unwrap());
    assert!(on.victim.delay.max_ns < 1_000_000, "{:?}", on.victim.delay);
    for r in [&off, &same] {
        assert!(r.victim.delay.max_ns > 10_000_000, "{:?}", r.victim.delay);
    }
    let build = on.groups.iter().find(|g| g.path == "/autogroup-build").unwrap();
    assert!((200..=320).contains(&build.weight_avg), "{build:?}");
    println!(
        "autogroup-desktop: render max delay on {} / off {} / same session {} ns",
        on.victim.delay.max_ns, off.victim.delay.max_ns, same.victim.delay.max_ns
    );
}

/// isolcpus.toml: a thread pinned to CPU 3 beside make -j32 on 4 cores x 2
/// threads. Pinning the build away (taskset) sends every other unpinned
/// wake-up to the only idle core, CPUs 3/7 (4.4 fair.c:select_idle_sibling),
/// where a daemon with full sleeper credit delays the thread by milliseconds.
/// With isolcpus=3,7 the CPUs are in no sched domain and sched_init_smp
/// gives unbound tasks the other CPUs: nothing migrates to or from them and
/// the thread waits only behind its own CPU's kthreads (migration/N among
/// them: a stop task per CPU).
#[test]
fn isolcpus_keeps_unbound_work_off_the_critical_core() {
    let base = load("isolcpus");
    let pinned = run(&base.with_variant("pinned").unwrap());
    let iso = run(&base.with_variant("isolcpus").unwrap());
    assert!(pinned.victim.wakeup_delay.max_ns > 1_000_000, "{:?}", pinned.victim.wakeup_delay);
    let worst = pinned.victim.histogram.last().unwrap();
    assert!(worst.culprits[0].0.starts_with("daemon"), "{:?}", worst.culprits);
    assert!(iso.victim.wakeup_delay.max_ns < 200_000, "{:?}", iso.victim.wakeup_delay);
    for c in [3, 7] {
        let cpu = &iso.cpus[c];
        assert_eq!((cpu.migrations_in, cpu.migrations_out, cpu.balance_gap_ns), (0, 0, 0), "cpu{c}: {cpu:?}");
    }
    for t in iso.tasks.iter().filter(|t| t.comm.starts_with("cc1") || t.comm.starts_with("daemon")) {
        assert_eq!(t.cpus_allowed, "0-2,4-6", "{}", t.comm);
    }
    // migration/N: one stop task per CPU, isolated ones included, each
    // bound to its CPU (sched_set_stop_task), running a little on each.
    let stoppers: Vec<_> = iso.tasks.iter().filter(|t| t.name == "migration").collect();
    assert_eq!(stoppers.len(), 8);
    for (c, t) in stoppers.iter().enumerate() {
        assert_eq!(
            (t.comm.as_str(), t.policy, t.cpus_allowed.as_str()),
            (&*format!("migration/{c}"), "stop", &*c.to_string())
        );
        assert_eq!(t.above_fair.map(|a| a.describe()), Some("(prio 0)".to_string()));
        assert!(t.runtime_ns > 0 && t.runtime_ns < 1_000_000, "{}: {}", t.comm, t.runtime_ns);
    }
    println!(
        "isolcpus: md-feed max wakeup delay pinned {} / isolcpus {} ns",
        pinned.victim.wakeup_delay.max_ns, iso.victim.wakeup_delay.max_ns
    );
}

/// threadpool.toml: 24 workers woken at once on 8 CPUs. The first wakees
/// take the idle CPUs, the rest queue on their previous CPU (once every CPU
/// has a queued task select_idle_sibling finds none idle), and newidle
/// balancing (fair.c:idle_balance) spreads them: newidle is the main cause of
/// migration. With 32 CPUs (more CPUs than workers) each worker keeps an
/// idle CPU of its own and hardly moves.
#[test]
fn threadpool_bursts_are_spread_by_newidle_pulls() {
    let base = load("threadpool");
    let causes = |r: &sim_core::RunReport| {
        let mut m = std::collections::BTreeMap::<&str, u64>::new();
        for t in r.tasks.iter().filter(|t| t.comm.starts_with("worker")) {
            for (c, n) in &t.migrations {
                *m.entry(*c).or_default() += n;
            }
        }
        m
    };
    let r = run(&base);
    let m = causes(&r);
    let total: u64 = m.values().sum();
    assert!(m["newidle"] * 2 > total, "{m:?}");
    assert!(m["wake_affine"] > 0 && m["idle_sibling"] > 0, "{m:?}");
    let wide = run(&base.with_variant("wide").unwrap());
    let w = causes(&wide);
    assert!(w.values().sum::<u64>() * 20 < total, "{w:?} vs {m:?}");
    assert!(wide.victim.delay.max_ns < r.victim.delay.max_ns, "{:?} vs {:?}", wide.victim.delay, r.victim.delay);
    println!("threadpool: worker migrations {m:?}; wide {w:?}");
}

/// The seed-003 scenarios: xfsaild's worst dispatch wait for its metadata
/// write, counting one still undispatched at the end.
fn flusher_wait(r: &sim_core::RunReport) -> u64 {
    let io = r.io.as_ref().expect("an I/O scenario");
    let p = io.processes.iter().find(|p| p.comm == "xfsaild").expect("xfsaild submits");
    p.dispatch_wait_max_ns.max(p.pending_q2d_ns.unwrap_or(0))
}

/// `open`'s worst I/O wait, counting one still open at the end.
fn blocked(r: &sim_core::RunReport) -> u64 {
    let t = r.tasks.iter().find(|t| t.comm == "open").expect("an open task");
    t.io_wait.map_or(0, |w| w.max_ns).max(t.io_wait_open_ns.unwrap_or(0))
}

/// cfq-starvation.toml, the incident behind commit 3932a86b4b9d: under 4.4's
/// CFQ the flusher's async metadata write is never dispatched while the
/// commit log keeps sync writes in flight, so the thread waiting for that
/// buffer is still blocked when the run ends; with the fix the write waits
/// about `fifo_expire_async` (248 ms at HZ=250); deadline and noop dispatch it
/// within milliseconds.
#[test]
fn cfq_starves_the_metadata_write_only_without_the_fix() {
    let base = load("cfq-starvation");
    let old = run(&base.with_variant("cfq-4.4").unwrap());
    let fixed = run(&base.with_variant("cfq-fixed").unwrap());
    let deadline = run(&base.with_variant("deadline").unwrap());
    let noop = run(&base.with_variant("noop").unwrap());
    // 4.4: still queued after 19.9 of the 20 simulated seconds.
    assert!(flusher_wait(&old) > 19_000_000_000, "{}", flusher_wait(&old));
    assert!(old.tasks.iter().find(|t| t.comm == "open").unwrap().io_wait_open_ns.unwrap() > 19_000_000_000);
    let worst = old.io.as_ref().unwrap().devices[0].worst.as_ref().unwrap();
    assert!(worst.open && worst.comm == "xfsaild" && worst.rwbs == "WM", "{worst:?}");
    assert_eq!(worst.meanwhile[0].0, "commitlog");
    // Fixed: bounded by the FIFO expiry (62 jiffies) plus a jiffy of truncation and a dispatch.
    let expire = 62 * 4_000_000;
    assert!((expire..expire + 8_000_000).contains(&flusher_wait(&fixed)), "{}", flusher_wait(&fixed));
    assert!(blocked(&fixed) < expire + 20_000_000, "{}", blocked(&fixed));
    for r in [&deadline, &noop] {
        assert!(flusher_wait(r) < 1_000_000, "{}", flusher_wait(r));
        assert!(blocked(r) < 20_000_000, "{}", blocked(r));
    }
    println!(
        "cfq-starvation: metadata write dispatch wait cfq-4.4 {} / cfq-fixed {} / deadline {} / noop {} ns; \
         blocked thread's worst wait {} / {} / {} / {} ns",
        flusher_wait(&old),
        flusher_wait(&fixed),
        flusher_wait(&deadline),
        flusher_wait(&noop),
        blocked(&old),
        blocked(&fixed),
        blocked(&deadline),
        blocked(&noop)
    );
}

/// mq-starvation.toml, seed 003 on 6.18 blk-mq (`sata-ssd`, 32 driver tags, 64
/// scheduler tags): the commit log's 4 × 2 MiB writes are 8 requests (1280 + 768
/// KiB each), so no tag runs out and no elevator holds the metadata write: it is
/// dispatched when inserted (BFQ once lets one more commit-log request go first)
/// and waits in the device behind the commit log's transfers. Worst case: (8 MiB +
/// 4 KiB) / 520 MB/s = 16.140 ms after the push; `open` blocks 1 ms later, so at
/// most 15.140 ms (+ at most the 40 µs QD1 write latency).
#[test]
fn blk_mq_does_not_starve_the_metadata_write() {
    let base = load("mq-starvation");
    let bound = (8 * 1024 * 1024 + 4096) * 1_000_000_000 / 520_000_000 - 1_000_000;
    for v in ["base", "bfq", "kyber", "none"] {
        let r = if v == "base" { run(&base) } else { run(&base.with_variant(v).unwrap()) };
        let (f, b) = (flusher_wait(&r), blocked(&r));
        if v == "bfq" {
            assert!(f < 1_000_000, "{v}: {f}");
        } else {
            assert_eq!(f, 0, "{v}");
        }
        assert!((bound - 100_000..=bound + 40_000).contains(&b), "{v}: {b} vs {bound}");
        println!("mq-starvation {v}: metadata write dispatch wait {f} ns, open's worst wait {b} ns");
    }
    // NCQ off (2 scheduler tags): mq-deadline keeps dispatching the commit log's next request in
    // sector order from latest_pos, so the write (far above it) leaves only once the next push,
    // 100 ms later, holds the other scheduler tag; that push's own tag wait is a few 2.5 ms
    // transfers of the commit log (1280 KiB / 520 MB/s), well under 10 ms.
    let f = flusher_wait(&run(&base.with_variant("ncq-off").unwrap()));
    assert!((100_000_000..110_000_000).contains(&f), "ncq-off: {f}");
    println!("mq-starvation ncq-off: metadata write dispatch wait {f} ns");
}

/// The `--json` contract for waits still open at the end: every latency
/// object carries `open_count` and `open_max_ns`, so a consumer reading
/// cfq-4.4's `max_ns` of 0 for Q2D cannot miss the metadata write that has
/// waited 19.9 s (queued at 0.1 s, never dispatched, run stops at 20 s).
#[test]
fn json_latency_objects_count_the_waits_still_open_at_the_end() {
    let old = run(&load("cfq-starvation").with_variant("cfq-4.4").unwrap());
    let v: Value = serde_json::from_str(&report_json(&old)).unwrap();
    let dev = &v["io"]["devices"][0];
    let xfsaild = v["io"]["processes"].as_array().unwrap().iter().find(|p| p["name"] == "xfsaild").unwrap();
    // None of the flusher's bios was dispatched: all of them are open Q2Ds.
    assert_eq!(xfsaild["q2d"]["count"], 0);
    assert_eq!(xfsaild["q2d"]["open_count"], xfsaild["bios"]);
    assert_eq!(xfsaild["q2d"]["open_max_ns"], 19_900_000_000u64);
    assert_eq!(xfsaild["q2c"]["open_max_ns"], 19_900_000_000u64);
    // The device: its finished Q2Ds are the commit log's 0 ns; the open ones are the flusher's.
    assert_eq!(dev["q2d"]["max_ns"], 0);
    assert_eq!(dev["q2d"]["open_count"], xfsaild["bios"]);
    assert_eq!(dev["q2d"]["open_max_ns"], 19_900_000_000u64);
    assert_eq!(dev["q2d"]["open_max_ns"], dev["oldest_pending_ns"]);
    // Q2C: every bio not completed (the flusher's and the commit log's in flight).
    assert!(dev["q2c"]["open_count"].as_u64().unwrap() > dev["q2d"]["open_count"].as_u64().unwrap());
    assert!(dev["d2c"]["open_count"].as_u64().unwrap() > 0 && dev["d2c"]["open_max_ns"].as_u64().unwrap() < 20_000_000);
    // The blocked thread: its I/O wait and stall are objects now, with the open wait.
    let open = v["tasks"].as_array().unwrap().iter().find(|t| t["name"] == "open").unwrap();
    for key in ["io_wait", "io_stall"] {
        assert_eq!(open[key]["count"], 0, "{key}");
        assert_eq!(open[key]["open_count"], 1, "{key}");
        assert_eq!(open[key]["open_max_ns"], open["io_wait_open_ns"], "{key}");
    }
    assert!(open["io_wait_open_ns"].as_u64().unwrap() > 19_890_000_000);
    // A run whose waits ended: the fields are there, at zero, on every latency object.
    let ended: Value =
        serde_json::from_str(&report_json(&run(&load("cfq-starvation").with_variant("deadline").unwrap()))).unwrap();
    for l in [&ended["victim"]["delay"], &ended["tasks"][0]["wakeup_delay"], &ended["io"]["processes"][1]["q2d"]] {
        assert_eq!((l["open_count"].as_u64(), l["open_max_ns"].as_u64()), (Some(0), Some(0)), "{l}");
    }
}

/// mixed-rw.toml: one 4 KiB read at a time against 64 random 128 KiB writes
/// in flight on a disk with 8 tags. noop queues the read behind every write
/// in its FIFO; deadline prefers reads between batches; CFQ gives the reader
/// its own queue and slices.
#[test]
fn mixed_rw_reads_wait_least_under_deadline() {
    let base = load("mixed-rw");
    let read_wait = |r: &sim_core::RunReport| {
        let io = r.io.as_ref().unwrap();
        io.processes.iter().find(|p| p.comm == "reader").unwrap().q2d
    };
    let noop = run(&base.with_variant("noop").unwrap());
    let deadline = run(&base.with_variant("deadline").unwrap());
    let cfq = run(&base.with_variant("cfq").unwrap());
    let (n, d, c) = (read_wait(&noop), read_wait(&deadline), read_wait(&cfq));
    assert!(d.max_ns * 2 < n.max_ns, "deadline {} vs noop {}", d.max_ns, n.max_ns);
    assert!(d.p99_ns < n.p99_ns && c.p99_ns < n.p99_ns, "p99 noop {} deadline {} cfq {}", n.p99_ns, d.p99_ns, c.p99_ns);
    println!(
        "mixed-rw: reader Q2D p99/max noop {}/{} deadline {}/{} cfq {}/{} ns",
        n.p99_ns, n.max_ns, d.p99_ns, d.max_ns, c.p99_ns, c.max_ns
    );
}

/// The `io` object of `--json`: per device `name`, `elevator` and latency
/// objects shaped like the CPU ones; per process `name`, `q2d`, `q2c`,
/// `dispatch_wait_max_ns`.
#[test]
fn json_io_object_keeps_the_documented_fields() {
    let s = load("cfq-starvation").with_overrides(&[("duration", "500ms")]).unwrap();
    let v: Value = serde_json::from_str(&report_json(&run(&s))).unwrap();
    let dev = &v["io"]["devices"][0];
    assert_eq!(dev["name"], "nvme0");
    assert_eq!(dev["elevator"], "cfq");
    assert_eq!(dev["cfq_behaviour"], "fixed");
    assert_eq!(dev["tunables"]["slice_idle"], 0, "cfq_registered_queue: non-rotational");
    for key in ["q2d", "d2c", "q2c"] {
        for field in ["count", "min_ns", "avg_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "max_at_ns"] {
            assert!(dev[key][field].is_u64(), "{key}.{field}");
        }
    }
    let procs = v["io"]["processes"].as_array().unwrap();
    let flusher = procs.iter().find(|p| p["name"] == "xfsaild").unwrap();
    assert!(flusher["dispatch_wait_max_ns"].is_u64() && flusher["q2d"]["max_ns"].is_u64());
    assert!(flusher["q2c"]["count"].is_u64());
    assert!(dev["worst_q2d"]["log"].as_array().unwrap().iter().any(|l| l["action"] == "Q"));
    let jmx: Value =
        serde_json::from_str(&report_json(&run(&load("jmx").with_overrides(&[("duration", "50ms")]).unwrap())))
            .unwrap();
    assert!(jmx.get("io").is_none(), "scenarios without devices carry no io object");
}

/// k8s-cpu-limit.toml: the 2-CPU limit throttles the pod once the parallel
/// collector spends the period's budget, and the workers' waits show up as
/// throttled delays; burst (5.14+) carries enough unused quota to absorb the
/// collector; without a limit nothing is throttled; 4.18's rules expire the
/// slices CPUs hold, 5.4's never do.
#[test]
fn k8s_cpu_limit_throttles_and_burst_absorbs_the_gc() {
    let base = load("k8s-cpu-limit");
    let stat = |r: &sim_core::RunReport| r.groups.iter().find_map(|g| g.cpu_stat);
    let workers_throttled = |r: &sim_core::RunReport| -> u64 {
        r.tasks.iter().filter(|t| t.name == "worker").filter_map(|t| t.throttled_delay).map(|d| d.count).sum()
    };
    let limited = run(&base);
    let s = stat(&limited).expect("the pod is limited");
    assert!(s.nr_throttled >= 4 && s.throttled_time_ns > 100_000_000, "{s:?}");
    assert!(workers_throttled(&limited) > 10);
    let p99 = |r: &sim_core::RunReport| r.victim.response.expect("workers serve").p99_ns;

    let free = run(&base.with_variant("no-limit").unwrap());
    assert!(stat(&free).is_none() && workers_throttled(&free) == 0);
    assert!(p99(&limited) > 3 * p99(&free), "the limit sets the request tail: {} vs {}", p99(&limited), p99(&free));

    let burst = run(&base.with_variant("burst").unwrap());
    let b = stat(&burst).expect("limited");
    assert_eq!(b.nr_throttled, 0, "{b:?}");
    assert!(b.nr_bursts > 0 && b.burst_time_ns > 0, "{b:?}");

    let expiring = stat(&run(&base.with_variant("linux418").unwrap())).expect("limited");
    let kept = stat(&run(&base.with_variant("linux54").unwrap())).expect("limited");
    assert!(expiring.runtime_expired_ns > 10_000_000, "{expiring:?}");
    assert_eq!(kept.runtime_expired_ns, 0);
}

/// elastic-backup.toml, the seed's claims: an unlimited backup inflates the
/// p99 request latency far more than the p99 scheduling delay; the elastic
/// limiter keeps the foreground's scheduling p99 near its 1 ms target while
/// the backup still gets a sizeable share of the machine.
#[test]
fn elastic_limiter_holds_the_foreground_p99_while_the_backup_progresses() {
    let base = load("elastic-backup").with_overrides(&[("duration", "12s")]).unwrap();
    let backup_cpu =
        |r: &sim_core::RunReport| -> u64 { r.tasks.iter().filter(|t| t.name == "backup").map(|t| t.runtime_ns).sum() };
    let req = |r: &sim_core::RunReport| r.requests[0].latency.p99_ns;
    let sched = |r: &sim_core::RunReport| r.requests[0].sched_delay_p99_ns;
    let alone = run(&base.with_variant("no-backup").unwrap());
    let unlimited = run(&base.with_variant("unlimited").unwrap());
    let elastic = run(&base);
    // Unlimited: the request p99 grows more than the scheduling p99 does
    // (each of the five hops pays a scheduling delay). Under 6.18 with the
    // 6.x balancer the seed measures +7.2 ms against +3.8 ms (20 s); with
    // 4.4's placement under 6.18 the pools saturated (+515 ms, 133x).
    let d_req = req(&unlimited) - req(&alone);
    let d_sched = sched(&unlimited) - sched(&alone);
    assert!(d_req > d_sched, "request p99 +{d_req} ns, sched p99 +{d_sched} ns");
    // Elastic: scheduling p99 under 1.5 x the 1 ms target, the backup above
    // 20 % of the 8 CPUs.
    assert!(sched(&elastic) < 1_500_000, "sched p99 {}", sched(&elastic));
    let machine = 8 * elastic.sim_time_ns;
    assert!(backup_cpu(&elastic) * 5 > machine, "backup {} of {machine}", backup_cpu(&elastic));
    assert!(backup_cpu(&unlimited) > backup_cpu(&elastic), "the limit costs the backup CPU");
}
