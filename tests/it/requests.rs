//! Requests across thread hops (`forward`, `hop_work`): generated chains of
//! thread pools checked after every event (request conservation is part of
//! `check_invariants`), each request completing at most once; the shipped
//! `request-hops.toml` and its JSON `requests` section.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use sim_core::{Scenario, Simulation, report_json};
use sim_tests::{load, run};
use std::collections::BTreeSet;

/// One pool of a generated chain: instances and the work of its hop.
#[derive(Debug, Clone)]
struct Pool {
    count: u32,
    work: String,
    iterations: Option<u32>,
}

fn work() -> impl Strategy<Value = String> {
    prop_oneof![
        (1..500u64).prop_map(|u| format!("\"{u}us\"")),
        (1..500u64).prop_map(|u| format!("\"exp({u}us)\"")),
        (1..300u64).prop_map(|u| format!("\"lognormal({u}us, 0.8)\"")),
    ]
}

fn pool() -> impl Strategy<Value = Pool> {
    (1..=3u32, work(), proptest::option::of(1..50u32)).prop_map(|(count, work, iterations)| Pool {
        count,
        work,
        // Rarely: a pool that exits after a few passes, so items are dropped.
        iterations: iterations.filter(|&n| n < 5),
    })
}

prop_compose! {
    fn chain_scenario()(
        cpus in 1..=4u32,
        kernel in prop_oneof![Just("4.4"), Just("6.6"), Just("6.12"), Just("6.18")],
        pools in proptest::collection::vec(pool(), 1..=4),
        rate in 200..20_000u32,
        burst in 1..=3u32,
        second_source in any::<bool>(),
        hog in any::<bool>(),
        seed in 0..1000u64,
    ) -> String {
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"50ms\"\n[kernel]\nversion = \"{kernel}\"\n[machine]\ncpus = {cpus}\n"
        );
        for (i, p) in pools.iter().enumerate() {
            t += &format!("[[tasks]]\nname = \"p{i}\"\ncount = {}\nprogram = [\"serve\"]\n", p.count);
            if let Some(n) = p.iterations {
                t += &format!("iterations = {n}\n");
            }
            if i + 1 < pools.len() {
                t += &format!("forward = \"p{}\"\n", i + 1);
            }
            if i > 0 {
                t += &format!("hop_work = {}\n", p.work);
            }
        }
        if hog {
            t += "[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"3ms\" }, { sleep = \"1ms\" }]\n";
        }
        t += &format!(
            "[[sources]]\nname = \"s0\"\ntarget = \"p0\"\nrate_per_s = {rate}.0\nburst = {burst}\nwork = {}\n",
            pools[0].work
        );
        if second_source && pools.len() > 1 {
            // A second stream joining the chain at its second pool.
            t += &format!("[[sources]]\nname = \"s1\"\ntarget = \"p1\"\nrate_per_s = {}.0\nwork = \"20us\"\n", rate / 2 + 1);
        }
        t
    }
}

fn run_checked(text: &str) -> Result<Simulation, TestCaseError> {
    let s = Scenario::from_toml("chain.toml", text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let mut sim = Simulation::new(&s);
    sim.enable_request_log();
    sim.run_to_end_checked().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    Ok(sim)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Over generated chains (1-4 pools of 1-3 threads, a CPU hog or not, a
    /// second source joining mid-chain, pools that exit, every kernel model),
    /// after every event: each tracked source's requests are conserved
    /// (arrived = completed + dropped + in flight). At the end: every
    /// request completed at most once, took at least the sum of its hops'
    /// work, and the report's counts match the log.
    #[test]
    fn every_request_completes_at_most_once(text in chain_scenario()) {
        let sim = run_checked(&text)?;
        let log = sim.request_log();
        let mut seen = BTreeSet::new();
        for d in log {
            prop_assert!(seen.insert((d.source, d.request)), "request {:?} completed twice\n{}", d, text);
            prop_assert!(d.latency_ns >= d.work_ns, "request {:?} took less than its work\n{}", d, text);
        }
        let r = sim.report();
        for q in &r.requests {
            let s = r.requests.iter().position(|o| o.source == q.source).unwrap() as u32;
            let logged = log.iter().filter(|d| d.source == s).count() as u64;
            prop_assert_eq!(q.completed, logged);
            prop_assert_eq!(q.arrived, q.completed + q.dropped + q.in_flight);
            prop_assert_eq!(q.latency.count, q.completed);
            prop_assert_eq!(q.latency.open_count, q.in_flight);
            prop_assert_eq!(q.route.len(), q.hop_delay_p99_ns.len());
        }
    }
}

/// The shipped scenario: about half the machine busy, every request through
/// five pools, and the JSON `requests` section with its route.
#[test]
fn request_hops_scenario_reports_its_requests() {
    let s = load("request-hops").with_overrides(&[("duration", "500ms")]).unwrap();
    let r = run(&s);
    let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
    let util = busy as f64 / (8.0 * r.sim_time_ns as f64);
    assert!((0.42..0.58).contains(&util), "utilisation {util}");
    let v: Value = serde_json::from_str(&report_json(&r)).unwrap();
    let q = &v["requests"][0];
    assert_eq!(q["source"], "requests");
    let route: Vec<&str> = q["route"].as_array().unwrap().iter().map(|h| h["task"].as_str().unwrap()).collect();
    assert_eq!(route, ["rpc", "plan", "worker", "wal", "respond"]);
    let (arrived, completed) = (q["arrived"].as_u64().unwrap(), q["completed"].as_u64().unwrap());
    assert!(completed > 4000 && completed <= arrived, "{q}");
    assert_eq!(arrived, completed + q["dropped"].as_u64().unwrap() + q["in_flight"].as_u64().unwrap());
    // The end-to-end p99 is well above the route's p99 scheduling delay.
    let p99 = q["latency"]["p99_ns"].as_u64().unwrap();
    let sched = q["sched_delay_p99_ns"].as_u64().unwrap();
    assert!(p99 > 3 * sched && sched > 0, "{q}");
    assert_eq!(q["amplification_x100"].as_u64().unwrap(), p99 * 100 / sched);
    // Shipped scenarios without hops have no `requests` key at all.
    let jmx: Value =
        serde_json::from_str(&report_json(&run(&load("jmx").with_overrides(&[("duration", "50ms")]).unwrap())))
            .unwrap();
    assert!(jmx.get("requests").is_none());
}

/// Two `run` bursts back to back in one run segment, the second cut by a
/// tick preemption: the task still gets all 4 ms of its work. (Before the
/// fix, `start_burst` kept `progress_from` at the segment's start, so the
/// switch-out charged the first burst's 2 ms to the second too and the task
/// exited after 3 ms of CPU.)
#[test]
fn a_second_burst_in_one_run_segment_keeps_its_work_when_preempted() {
    let toml = "schema = 1\nseed = 1\nduration = \"100ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 1000\n\
                [[tasks]]\nname = \"two\"\niterations = 1\nprogram = [{ run = \"2ms\" }, { run = \"2ms\" }]\n\
                [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n";
    let r = run(&Scenario::from_toml("two.toml", toml).unwrap());
    assert_eq!(r.tasks[0].runtime_ns, 4_000_000);
}
