//! BFQ under generated load: random devices, BFQ tunables, blkcg groups
//! with `io.bfq.weight` / `blkio.bfq.weight`, nice levels and SCHED_IDLE
//! tasks (BE levels and the IDLE class), and programs mixing sync and async
//! reads and writes, AIO depths, fdatasync and waits on other tasks' I/O.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sim_core::{Scenario, Simulation};

fn io_step(ntasks: usize) -> impl Strategy<Value = String> {
    let size = prop_oneof![
        Just("\"4KiB\"".to_string()),
        Just("\"128KiB\"".to_string()),
        Just("\"2MiB\"".to_string()),
        (1..64u64, 64..3000u64).prop_map(|(a, b)| format!("\"uniform({a}KiB, {b}KiB)\"")),
    ];
    prop_oneof![
        3 => (size.clone(), any::<bool>()).prop_map(|(s, rand)| {
            let pattern = if rand { "random" } else { "sequential" };
            format!("{{ read = {s}, pattern = \"{pattern}\", span = \"64MiB\" }}")
        }),
        3 => (size, any::<bool>(), any::<bool>(), 0..3u32, any::<bool>()).prop_map(|(s, sync, wait, depth, rand)| {
            let pattern = if rand { "random" } else { "sequential" };
            let depth = if wait || depth == 0 { String::new() } else { format!(", depth = {}", depth * 4) };
            format!("{{ write = {s}, sync = {sync}, wait = {wait}{depth}, pattern = \"{pattern}\", span = \"64MiB\" }}")
        }),
        1 => Just("\"fdatasync\"".to_string()),
        1 => (0..ntasks).prop_map(|t| format!("{{ wait_io = \"t{t}\" }}")),
        2 => (0..2000u64).prop_map(|u| format!("{{ run = \"{u}us\" }}")),
        2 => (0..8000u64).prop_map(|u| format!("{{ sleep = \"{u}us\" }}")),
    ]
}

prop_compose! {
    fn bfq_scenario()(ntasks in 1..=5usize)(
        programs in proptest::collection::vec(proptest::collection::vec(io_step(ntasks), 1..5), ntasks),
        nices in proptest::collection::vec(-20..=19i32, ntasks),
        idle in proptest::collection::vec(prop_oneof![4 => Just(false), 1 => Just(true)], ntasks),
        placement in proptest::collection::vec(0..4usize, ntasks),
        weights in proptest::collection::vec(1..=1000u32, 3),
        v1 in any::<bool>(),
        hdd in any::<bool>(),
        rotational in any::<bool>(),
        depth in prop_oneof![Just(1u32), Just(4), Just(32)],
        tun in (0..20u64, 1..300u64, 0..2u64, 0..2u64, prop_oneof![Just(0u64), 64..40_000u64], 1..300u64),
        hz in prop_oneof![Just(100), Just(250), Just(1000)],
        seed in any::<u32>(),
        duration_ms in 50..600u64,
    ) -> String {
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"{duration_ms}ms\"\n[limits]\nevents_max = 30000\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 2\nhz = {hz}\n"
        );
        let kind = if hdd { "hdd" } else { "ssd" };
        t += &format!("[devices.d]\nkind = \"{kind}\"\nrotational = {rotational}\nelevator = \"bfq\"\nqueue_depth = {depth}\ncapacity = \"1GiB\"\n");
        let (idle_ms, timeout_ms, low_latency, strict, max_budget, fifo_ms) = tun;
        t += &format!(
            "[devices.d.bfq]\nslice_idle = {idle_ms}\ntimeout_sync = {timeout_ms}\nlow_latency = {low_latency}\nstrict_guarantees = {strict}\nmax_budget = {max_budget}\nfifo_expire_sync = {fifo_ms}\n"
        );
        let key = if v1 { "blkio.bfq.weight" } else { "io.bfq.weight" };
        t += &format!("[groups.\"/a\"]\n\"{key}\" = {}\n[groups.\"/b\"]\n\"{key}\" = {}\n[groups.\"/a/c\"]\n\"{key}\" = {}\n", weights[0], weights[1], weights[2]);
        for (i, steps) in programs.iter().enumerate() {
            let mut steps = steps.clone();
            steps.push("{ sleep = \"1ms\" }".into());
            let policy = if idle[i] { "idle" } else { "normal" };
            let group = ["", "group = \"/a\"\n", "group = \"/b\"\n", "group = \"/a/c\"\n"][placement[i]];
            t += &format!("[[tasks]]\nname = \"t{i}\"\nnice = {}\npolicy = \"{policy}\"\n{group}program = [{}]\n", nices[i], steps.join(", "));
        }
        t
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

    /// After every event: the block layer's invariants (depth, every live
    /// request in the elevator or the device, Q ≤ I ≤ D ≤ C, merges conserve
    /// bytes, every bio completes once) and BFQ's own (`Bfq::check`: busy
    /// queues per class, queued = sort lists = FIFOs, dispatched = requests
    /// in the driver, the in-service queue busy, each service tree's weight
    /// sum = the weights of its entities, tree keys = finish stamps). At the
    /// end nothing was completed that was not dispatched.
    #[test]
    fn bfq_invariants_hold_after_every_event(text in bfq_scenario()) {
        let sim = run_checked(&text)?;
        let r = sim.report();
        let io = r.io.as_ref().expect("a device is declared");
        for d in &io.devices {
            prop_assert_eq!(d.elevator, "bfq");
            prop_assert!(d.completed[0] <= d.dispatched[0] && d.completed[1] <= d.dispatched[1]);
        }
    }
}
