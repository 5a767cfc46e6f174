//! The Seastar-style userspace I/O scheduler (`[io_queues.NAME]`, issue 21):
//! a proptest of its invariants under random policies, limits, classes,
//! elevators (4.4 and blk-mq) and programs, and scylla-io.toml's old → new improvement.

use proptest::prelude::*;
use sim_core::Scenario;
use sim_core::engine::Simulation;
use sim_core::userspace_io::io_queue::UNLIMITED;

fn run_checked(text: &str) -> Result<Simulation, TestCaseError> {
    let s = Scenario::from_toml("generated.toml", text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let mut sim = Simulation::new(&s);
    sim.run_to_end_checked().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    Ok(sim)
}

fn policy() -> impl Strategy<Value = String> {
    prop_oneof![
        (1..=64u32).prop_map(|n| format!("policy = \"max-io-requests\"\nmax_io_requests = {n}\n")),
        Just("policy = \"none\"\n".to_string()),
        (
            1_000..200_000u32,
            1_000..200_000u32,
            1..2_000u32,
            1..2_000u32,
            prop_oneof![Just("50us"), Just("500us"), Just("2ms")],
            prop_oneof![Just(None), (1..=16u32).prop_map(Some)],
        )
            .prop_map(|(ri, wi, rb, wb, quota, cap)| {
                let cap = cap.map_or(String::new(), |n| format!("max_io_requests = {n}\n"));
                format!(
                    "policy = \"capacity\"\nread_iops = {ri}\nwrite_iops = {wi}\nread_bandwidth = \"{rb}MiB/s\"\n\
                     write_bandwidth = \"{wb}MiB/s\"\ntask_quota = \"{quota}\"\n{cap}"
                )
            }),
    ]
}

fn step(nclasses: usize) -> impl Strategy<Value = String> {
    let size = prop_oneof![Just("\"4KiB\""), Just("\"128KiB\""), Just("\"2MiB\""), Just("\"uniform(4KiB, 256KiB)\"")];
    prop_oneof![
        4 => (size, any::<bool>(), any::<bool>(), 0..=nclasses, 0..4u32, any::<bool>()).prop_map(
            move |(s, write, wait, class, depth, random)| {
                let op = if write { "write" } else { "read" };
                let class = if class == nclasses { String::new() } else { format!(", io_class = \"q.c{class}\"") };
                let depth = if wait || depth == 0 { String::new() } else { format!(", depth = {}", depth * 8) };
                let pattern = if random { "random" } else { "sequential" };
                format!("{{ {op} = {s}, wait = {wait}{depth}, pattern = \"{pattern}\", span = \"64MiB\"{class} }}")
            }
        ),
        1 => Just("\"fdatasync\"".to_string()),
        2 => (1..500u32).prop_map(|us| format!("{{ run = \"{us}us\" }}")),
        2 => (1..2000u32).prop_map(|us| format!("{{ sleep = \"{us}us\" }}")),
    ]
}

prop_compose! {
    fn scenario()(nclasses in 1..=3usize, ntasks in 1..=4usize)(
        programs in proptest::collection::vec(proptest::collection::vec(step(nclasses), 1..5), ntasks),
        shares in proptest::collection::vec(1..=1000u32, nclasses),
        policy in policy(),
        elevator in prop_oneof![Just("noop"), Just("deadline"), Just("cfq"), Just("none"), Just("mq-deadline"), Just("kyber"), Just("bfq")],
        hdd in any::<bool>(),
        depth in prop_oneof![Just(1u32), Just(4), Just(32)],
        seed in any::<u32>(),
        duration_ms in 50..300u64,
    ) -> String {
        let kind = if hdd { "hdd" } else { "ssd" };
        // The legacy elevators exist only in the 4.4 model (KernelModel::elevators).
        let kernel = if ["noop", "deadline", "cfq"].contains(&elevator) { "4.4" } else { "6.18" };
        let mut t = format!(
            "schema = 1\nseed = {seed}\nduration = \"{duration_ms}ms\"\n[limits]\nevents_max = 30000\n[kernel]\nversion = \"{kernel}\"\n[machine]\ncpus = 2\n\
             [devices.d]\nkind = \"{kind}\"\nelevator = \"{elevator}\"\nqueue_depth = {depth}\ncapacity = \"1GiB\"\n\
             [io_queues.q]\ndevice = \"d\"\n{policy}"
        );
        for (i, s) in shares.iter().enumerate() {
            t += &format!("[io_queues.q.classes.c{i}]\nshares = {s}\n");
        }
        for (i, steps) in programs.iter().enumerate() {
            let mut steps = steps.clone();
            steps.push("{ sleep = \"1ms\" }".into());
            t += &format!("[[tasks]]\nname = \"t{i}\"\nprogram = [{}]\n", steps.join(", "));
        }
        t
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// After every event (`check_invariants` → `IoQueue::check`): the
    /// in-flight totals are the sums over the submissions in flight, and
    /// without the latest one admitted each is below its limit (Seastar's
    /// `can_dispatch` checks before adding); per class submitted = waiting +
    /// in flight + completed and admitted = in flight + completed, so each
    /// submission completes once (a second completion of the same one finds
    /// nothing in flight); a task's outstanding bios are in the block layer
    /// or still to come from the layer. At the end: the high-water marks
    /// respect the same bound, and the report's counts add up.
    #[test]
    fn the_layer_never_exceeds_its_limit_and_completes_each_submission_once(text in scenario()) {
        let sim = run_checked(&text)?;
        for q in sim.io_queues() {
            let fq = q.fair_queue();
            prop_assert!(q.high_water.requests <= fq.config.capacity.max(1));
            let (mut submitted, mut completed) = (0, 0);
            for s in &q.stats {
                submitted += s.submitted;
                completed += s.completed;
            }
            prop_assert_eq!(submitted, completed + q.in_flight() as u64 + q.waiting());
            if q.config.max_req_count < UNLIMITED {
                // The largest single weight is a write's or 128.
                let w = q.config.disk_req_write_to_read_multiplier.max(128);
                prop_assert!(q.high_water.req_count < q.config.max_req_count + w, "{:?}", q.high_water);
            }
        }
        let r = sim.report();
        for q in &r.userspace_io {
            for c in &q.classes {
                prop_assert!(c.completed <= c.submitted);
                prop_assert_eq!(c.latency.count, c.completed);
            }
        }
    }
}

/// scylla-io.toml, seed 004's experiment: the capacity policy keeps the
/// writes' throughput (within 2%) and cuts the reads' average latency more
/// than fourfold against max-io-requests = 32 (the commit: 8.1 → 1.5 ms);
/// without the layer (all 100 writes merged inside the device) reads wait
/// longest.
#[test]
fn scylla_io_capacity_cuts_read_latency_at_the_same_throughput() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/scylla-io.toml")).unwrap();
    let base = Scenario::from_toml("scylla-io.toml", &text).unwrap().with_overrides(&[("duration", "2s")]).unwrap();
    let figures = |variant: &str| {
        let r = sim_core::run(&base.with_variant(variant).unwrap());
        let q = &r.userspace_io[0];
        let class = |n: &str| q.classes.iter().find(|c| c.name == n).unwrap().clone();
        (class("big_write").bytes_per_s as f64, class("latency_reads").latency)
    };
    let (new_w, new_r) = figures("new");
    let (old_w, old_r) = figures("old");
    let (_, kernel_r) = figures("kernel");
    println!(
        "scylla-io: writes {:.1} → {:.1} MB/s; reads avg {} → {} ns, p99 {} → {} ns; kernel-only avg {} ns",
        old_w / 1e6,
        new_w / 1e6,
        old_r.avg_ns,
        new_r.avg_ns,
        old_r.p99_ns,
        new_r.p99_ns,
        kernel_r.avg_ns
    );
    // The JSON section: per queue its policy and limits, per class figures.
    let v: serde_json::Value =
        serde_json::from_str(&sim_core::report_json(&sim_core::run(&base.with_variant("new").unwrap()))).unwrap();
    let q = &v["userspace_io"][0];
    assert_eq!((q["name"].as_str(), q["policy"].as_str()), (Some("disk"), Some("capacity")));
    // 128 × trunc(520 MB/s × 0.75 ms) = 128 × 390000; a write counts 126 × 131072 = 16.5 M (126 =
    // 128 × 512/520): 3 writes = 49.5 M < 49.92 M admit a 4th; after one completes, 3 writes and the
    // 4 KiB read (49.5 M + 0.5 M) block the next write, so at most 4 requests are in flight.
    assert_eq!(q["max_bytes_count"].as_u64(), Some(128 * 390_000));
    assert_eq!(q["high_water_requests"].as_u64(), Some(4), "4 writes, or 3 and the read");
    assert!(q["classes"][1]["queue_wait"]["p99_ns"].is_u64() && q["classes"][1]["latency"]["avg_ns"].is_u64());
    assert!((new_w - old_w).abs() < 0.02 * old_w, "{new_w} vs {old_w}");
    assert!(new_r.avg_ns * 4 < old_r.avg_ns, "{} vs {}", new_r.avg_ns, old_r.avg_ns);
    assert!(new_r.p99_ns < old_r.p99_ns && old_r.avg_ns < kernel_r.avg_ns);
}
