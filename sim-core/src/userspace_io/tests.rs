//! The userspace I/O scheduler's rules against hand-computed figures: share
//! fairness, the Little's-law limits for 4 KiB and 128 KiB requests, the
//! fixed `max-io-requests` count, an idle class rejoining, and the layer in
//! the engine.

use super::fair_queue::{CostRule, FairQueue, FairQueueConfig, TAU_US};
use super::io_queue::{InflightPolicy, IoProperties, IoQueueConfig, READ_REQUEST_BASE_COUNT};
use super::{IoClassSpec, IoQueue, IoQueueSpec, PendingIo};
use crate::block::{Op, ReqFlags};
use crate::ids::{DeviceId, TaskId};
use crate::time::SimTime;

/// The disk of 97cc0de6e's commit message: 95k IOPS and 512 MB/s (MiB, as
/// Seastar's `parse_memory_size` reads "512M"), reads and writes alike.
fn commit_example() -> IoProperties {
    IoProperties {
        read_iops: 95_000,
        write_iops: 95_000,
        read_bytes_per_s: 512 << 20,
        write_bytes_per_s: 512 << 20,
        task_quota_ns: 500_000,
        latency_factor: 1.5,
    }
}

fn queue(policy: InflightPolicy, shares: &[u32]) -> IoQueue {
    let classes = shares.iter().enumerate().map(|(i, &s)| IoClassSpec { name: format!("c{i}"), shares: s }).collect();
    IoQueue::new(IoQueueSpec { name: "q".into(), device: DeviceId(0), policy, classes })
}

fn pending(task: u32, seq: u64, op: Op, bytes: u64) -> PendingIo {
    PendingIo {
        task: TaskId(task),
        seq,
        flags: ReqFlags { op, sync: true, meta: false, prio: false },
        sector: 0,
        sectors: bytes.div_ceil(512),
        bytes,
        queued_at: SimTime::ZERO,
    }
}

#[test]
fn capacity_config_follows_littles_law() {
    // goal = 0.5 ms × 1.5 = 0.75 ms.
    // max_req_count = 128 × trunc(95000 × 0.00075 = 71.25) = 128 × 71 = 9088.
    // max_bytes_count = 128 × trunc(536870912 × 0.00075 = 402653.184) = 51539584.
    let c = IoQueueConfig::generate(&InflightPolicy::Capacity { props: commit_example(), max_io_requests: None });
    assert_eq!(c.max_req_count, 9088);
    assert_eq!(c.max_bytes_count, 128 * 402_653);
    assert_eq!(c.disk_req_write_to_read_multiplier, READ_REQUEST_BASE_COUNT);
    assert_eq!(c.capacity, u64::from(u32::MAX));
    // The io-properties-file.md example: 95k/85k IOPS, 545M/510M.
    // Write weight = 128 × 95000 / 85000 = 143 (143.05 truncated); write
    // size factor = 128 × 545 / 510 = 136 (136.78 truncated).
    let mut p = commit_example();
    p.write_iops = 85_000;
    p.read_bytes_per_s = 545 << 20;
    p.write_bytes_per_s = 510 << 20;
    let c = IoQueueConfig::generate(&InflightPolicy::Capacity { props: p, max_io_requests: None });
    assert_eq!(c.disk_req_write_to_read_multiplier, 143);
    assert_eq!(c.disk_bytes_write_to_read_multiplier, 136);
    let w = c.request(true, 4096);
    assert_eq!((w.weight, w.size), (143, 136 * 4096));
}

#[test]
fn capacity_admits_71_small_but_4_large_requests() {
    // 4 KiB reads: weight 128, size 128 × 4096 = 524288. `can_dispatch`
    // admits while 128·k < 9088 (k < 71: N = 71) and 524288·k < 51539584
    // (k < 98.3): the IOPS limit binds, N = 71 (the commit's "70").
    let mut q = queue(InflightPolicy::Capacity { props: commit_example(), max_io_requests: None }, &[100]);
    for s in 0..200 {
        q.queue(0, pending(1, s, Op::Read, 4096));
    }
    assert_eq!(q.dispatch(SimTime(1000)).len(), 71);
    // 128 KiB reads: weight 128, size 128 × 131072 = 16777216. Bytes bind:
    // 16777216·k < 51539584 ⟺ k < 3.07, so k = 0..=3 are admitted: M = 4
    // (the commit's "~3": 402 kB / 128 kB, and `<` lets one more through).
    let mut q = queue(InflightPolicy::Capacity { props: commit_example(), max_io_requests: None }, &[100]);
    for s in 0..20 {
        q.queue(0, pending(1, s, Op::Read, 128 << 10));
    }
    assert_eq!(q.dispatch(SimTime(1000)).len(), 4);
    // One completes: 3 × 16777216 = 50331648 < 51539584, one more admitted.
    assert!(q.complete(SimTime(2000), TaskId(1), 0));
    assert_eq!(q.dispatch(SimTime(2000)).len(), 1);
    assert!(!q.complete(SimTime(2000), TaskId(1), 0), "completes once");
    q.check().expect("invariants");
    // An extra `max_io_requests` caps the count as `capacity` does.
    let mut q = queue(InflightPolicy::Capacity { props: commit_example(), max_io_requests: Some(10) }, &[100]);
    for s in 0..200 {
        q.queue(0, pending(1, s, Op::Read, 4096));
    }
    assert_eq!(q.dispatch(SimTime(1000)).len(), 10);
}

#[test]
fn max_io_requests_admits_exactly_that_many() {
    let mut q = queue(InflightPolicy::MaxIoRequests(32), &[10, 100]);
    for s in 0..100 {
        q.queue(0, pending(1, s, Op::Write, 128 << 10));
    }
    assert_eq!(q.dispatch(SimTime(0)).len(), 32, "size does not matter: 32 × 128 KiB");
    q.queue(1, pending(2, 0, Op::Read, 4096));
    assert_eq!(q.dispatch(SimTime(0)).len(), 0);
    // A completion frees one slot; the read's class (100 shares, nothing
    // charged yet: accumulated 0, the writes' 32 × 9/10) goes first.
    assert!(q.complete(SimTime(1000), TaskId(1), 5));
    let next = q.dispatch(SimTime(1000));
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].task, TaskId(2));
    q.check().expect("invariants");
}

/// Two classes always backlogged, one request in flight at a time, each
/// completing 100 µs after admission: 1100 admissions at 100 and 1000
/// shares. Each admission charges cost/shares × exp(t/τ); the least-charged
/// class goes next, so the two sums stay within one charge of each other.
/// As both classes are served all along the run, the growing factor
/// exp(t/τ) weighs them alike and the counts split 1:10 up to that one
/// request: 100 ± 1 and 1000 ± 1 (the tolerance is the one charge by which
/// a class may lead, at the end of the run).
#[test]
fn shares_100_and_1000_split_the_device_1_to_10() {
    let cfg = FairQueueConfig {
        capacity: 1,
        tau_us: TAU_US,
        max_req_count: u64::from(u32::MAX),
        max_bytes_count: u64::from(u32::MAX),
        cost: CostRule::Capacity { max_req_count: 9088, max_bytes_count: 51_539_584 },
    };
    let mut fq: FairQueue<u32> = FairQueue::new(cfg, &[100, 1000]);
    let desc = super::fair_queue::FairQueueRequest { weight: 128, size: 128 * 4096 };
    let mut served = [0u32; 2];
    for _ in 0..1200 {
        fq.queue(0, desc, 4096, 0);
        fq.queue(1, desc, 4096, 1);
    }
    for i in 0..1100u64 {
        let (class, d, _) = fq.dispatch_one(SimTime(i * 100_000)).expect("backlogged");
        served[class] += 1;
        assert!(fq.dispatch_one(SimTime(i * 100_000)).is_none(), "capacity 1");
        fq.notify_requests_finished(d);
    }
    assert!((99..=101).contains(&served[0]), "{served:?}");
    assert_eq!(served[0] + served[1], 1100);
}

/// The old rule (before 2be664d20): a 128 KiB request weighs 1 + 128/16 = 9,
/// a 4 KiB one 1. At equal shares and one in flight, the class of small
/// requests is served 9 times per large one.
#[test]
fn old_fairness_weight_counts_16k_units() {
    let cfg = FairQueueConfig {
        capacity: 1,
        tau_us: TAU_US,
        max_req_count: u64::MAX,
        max_bytes_count: u64::MAX,
        cost: CostRule::FairnessWeight,
    };
    let mut fq: FairQueue<u32> = FairQueue::new(cfg, &[100, 100]);
    let desc = super::fair_queue::FairQueueRequest { weight: 128, size: 0 };
    for _ in 0..200 {
        fq.queue(0, desc, 128 << 10, 0);
        fq.queue(1, desc, 4096, 1);
    }
    let mut served = [0u32; 2];
    // All at t = 0: exp(0) = 1, so charges are exactly 9/100 and 1/100.
    // Order: c0 (0 → 0.09), then c1 nine times (0.01 … 0.09; at the tie
    // 0.09 = 0.09 the lower index, c0, goes): 100 admissions = 10 × (1 + 9).
    for _ in 0..100 {
        let (c, d, _) = fq.dispatch_one(SimTime::ZERO).expect("backlogged");
        served[c] += 1;
        fq.notify_requests_finished(d);
    }
    assert_eq!(served, [10, 90]);
}

/// An idle class keeps its old sum (97cc0de6e has no reset); the busy
/// class's charges kept growing as exp(t/τ), so on rejoining the idle class
/// is served first until it catches up.
#[test]
fn an_idle_class_rejoins_with_its_old_sum_and_goes_first() {
    let mut q = queue(InflightPolicy::MaxIoRequests(1), &[100, 100]);
    // Both served once at t = 0 (class 0 first: equal sums, lower index).
    q.queue(0, pending(1, 0, Op::Read, 4096));
    q.queue(1, pending(2, 0, Op::Read, 4096));
    let a = q.dispatch(SimTime::ZERO);
    assert_eq!(a[0].task, TaskId(1));
    q.complete(SimTime(10), TaskId(1), 0);
    q.dispatch(SimTime(10));
    q.complete(SimTime(20), TaskId(2), 0);
    // Class 1 alone for 50 ms: 500 more requests.
    for s in 1..=500u64 {
        q.queue(1, pending(2, s, Op::Read, 4096));
        let d = q.dispatch(SimTime(s * 100_000));
        assert_eq!(d.len(), 1);
        q.complete(SimTime(s * 100_000 + 50_000), TaskId(2), s);
    }
    // Class 0 rejoins with its 0.01 from t = 0; it is served before class
    // 1 for as long as its sum is the smaller: each charge now is
    // 0.01 × exp(50.1 ms / 100 ms) ≈ 0.0165, so it wins many in a row.
    for s in 1..=20u64 {
        q.queue(0, pending(1, s, Op::Read, 4096));
    }
    q.queue(1, pending(2, 501, Op::Read, 4096));
    let mut first_five = Vec::new();
    for i in 0..5u64 {
        let t = SimTime(50_100_000 + i * 1000);
        let d = q.dispatch(t);
        first_five.push(d[0].task);
        q.complete(t, d[0].task, d[0].seq);
    }
    assert_eq!(first_five, vec![TaskId(1); 5]);
    q.check().expect("invariants");
}

/// Past ~8.7 s the charges overflow `float` and every sum is scaled by
/// FLT_MIN (`normalize_stats`): the queue keeps serving, sums stay finite.
#[test]
fn sums_are_renormalised_before_they_overflow() {
    let mut q = queue(InflightPolicy::MaxIoRequests(1), &[100, 1000]);
    for s in 0..40u64 {
        q.queue((s % 2) as usize, pending(1, s, Op::Read, 4096));
        let t = SimTime(s * 1_000_000_000);
        let d = q.dispatch(t);
        assert_eq!(d.len(), 1);
        q.complete(t, TaskId(1), d[0].seq);
    }
    assert!(q.fair_queue().classes().iter().all(|c| c.accumulated().is_finite()));
}

/// The layer in the engine: two tasks keep 32 reads each outstanding
/// through one queue of `max_io_requests = 1` at 100 and 1000 shares, on an
/// SSD with 100 µs reads (one at a time, so a read takes 100 µs + 4096 B at
/// 2 GB/s ≈ 102 µs). Over 1 s about 9800 reads complete, split 1:10 up to a
/// few requests (the one-charge lead, and the last requests in flight).
#[test]
fn engine_two_classes_backlogged_split_1_to_10() {
    let toml = r#"
schema = 1
seed = 7
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[devices.ssd]
kind = "ssd"
elevator = "noop"
queue_depth = 32
read_latency = "100us"
[io_queues.disk]
device = "ssd"
policy = "max-io-requests"
max_io_requests = 1
[io_queues.disk.classes.low]
shares = 100
[io_queues.disk.classes.high]
shares = 1000
[[tasks]]
name = "a"
program = [{ read = "4KiB", wait = false, depth = 32, pattern = "random", io_class = "disk.low" }]
[[tasks]]
name = "b"
program = [{ read = "4KiB", wait = false, depth = 32, pattern = "random", io_class = "disk.high" }]
"#;
    let s = crate::Scenario::from_toml("t.toml", toml).expect("valid");
    let mut sim = crate::Simulation::new(&s);
    sim.run_to_end_checked().expect("invariants");
    let q = &sim.io_queues()[0];
    let (high, low) = (q.stats[0].completed, q.stats[1].completed);
    // Class index order is name order: high (1000) is 0, low (100) is 1.
    assert!(high + low > 9000, "{high} + {low}");
    let ratio = high as f64 / low as f64;
    assert!((9.8..=10.2).contains(&ratio), "{high}:{low}");
    assert_eq!(q.high_water.requests, 1);
}
