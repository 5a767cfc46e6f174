//! kyber (6.18 block/kyber-iosched.c) pinned against hand-derived figures:
//! the latency buckets, `calculate_percentile`, `kyber_timer_fn`'s depth
//! scaling, the batch order across domains, the domain tokens, and a whole
//! queue where a write stream pushes read latency past 2 ms until the timer
//! has shrunk the write domain.

use super::*;
use crate::block::device::{Device, DeviceKind, DeviceSpec};
use crate::block::queue::RequestQueue;
use crate::block::request::{Request, Requests};
use crate::block::{Elevator, ElevatorSpec, IoClass, IoPrio};
use crate::event::{Event, EventQueue};
use crate::ids::{DeviceId, TaskId};
use crate::rng::SimRng;
use crate::sched::tunables::tick_nsec;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;
const HZ: u32 = 1000;
const READ: ReqFlags = ReqFlags { op: Op::Read, sync: true, meta: false, prio: false };
const WRITE: ReqFlags = ReqFlags { op: Op::Write, sync: false, meta: false, prio: false };

fn kyber() -> Kyber {
    Kyber::new(KyberTunables::default(), DEFAULT_NR_REQUESTS, HZ, tick_nsec(HZ))
}

fn rq(rqs: &mut Requests, flags: ReqFlags, sector: u64, at: u64) -> RequestId {
    RequestId(rqs.insert(Request {
        flags,
        task: TaskId(0),
        sector,
        nr_sectors: 8,
        bios: Vec::new(),
        i_at: SimTime(at),
        d_at: None,
        fifo_time: SimTime(at),
        sort_key: 0,
        fifo_key: 0,
        nomerge: false,
        cfqq: None,
    }))
}

fn ctx(rqs: &mut Requests, now: u64) -> ElvCtx<'_> {
    ElvCtx { now: SimTime(now), rqs, jiffy_ns: tick_nsec(HZ), nonrot: true }
}

/// Completes `n` requests of `flags`, each inserted and dispatched at `at`
/// and completed `lat` later (total and I/O latency both `lat`).
fn complete_n(k: &mut Kyber, rqs: &mut Requests, flags: ReqFlags, n: u32, at: u64, lat: u64) {
    for _ in 0..n {
        let id = rq(rqs, flags, 0, at);
        k.insert_request(rqs, id);
        let mut c = ctx(rqs, at);
        assert_eq!(k.dispatch_request(&mut c), Some(id));
        rqs.rq_mut(id).d_at = Some(SimTime(at));
        let mut c = ctx(rqs, at + lat);
        k.completed_request(&mut c, id);
        rqs.remove(id.0);
    }
}

fn fire(k: &mut Kyber, rqs: &mut Requests) -> u64 {
    let at = k.timer_at().expect("timer armed").ns();
    let mut c = ctx(rqs, at);
    k.timer(&mut c);
    at
}

#[test]
fn latency_buckets_are_quarters_of_the_target() {
    // add_latency_sample: bucket = min((lat - 1) / (target >> 2), 7).
    let t = 2 * MS; // divisor 500 µs
    assert_eq!(latency_bucket(t, 0), 0);
    assert_eq!(latency_bucket(t, 500 * US), 0, "1/4 of the target is bucket 0");
    assert_eq!(latency_bucket(t, 500 * US + 1), 1);
    assert_eq!(latency_bucket(t, 2 * MS), 3, "the target itself is the last good bucket");
    assert_eq!(latency_bucket(t, 2 * MS + 1), 4);
    assert_eq!(latency_bucket(t, 1000 * MS), 7);
    // A 0 target: divisor max(0, 1) = 1, so any latency over 7 ns is bucket 7.
    assert_eq!(latency_bucket(0, 1), 0);
    assert_eq!(latency_bucket(0, 8), 7);
    assert_eq!(async_depth(256), 192);
    assert_eq!(async_depth(64), 48);
}

/// 500 reads at 3 ms (I/O p90 bucket (3 ms − 1)/500 µs = 5: congested) and
/// 500 writes at 4 ms (bucket (4 ms − 1)/2.5 ms = 1, good): the timer halves
/// WRITE, `128 · (1 + 1) >> 2 = 64`; READ's p99 bucket 5 would scale it to
/// `256 · 6 >> 2 = 384`, clamped to its 256: unchanged. Repeated windows
/// halve WRITE down to 1 and no lower (`kyber_resize_domain` clamps to 1).
#[test]
fn congestion_shrinks_the_domain_that_meets_its_target() {
    let mut k = kyber();
    let mut rqs = Requests::default();
    let mut expect = vec![];
    let mut depth = 128;
    for w in 0..9u64 {
        let t0 = w * 200 * MS;
        complete_n(&mut k, &mut rqs, READ, 500, t0, 3 * MS);
        complete_n(&mut k, &mut rqs, WRITE, 500, t0, 4 * MS);
        // timer_reduce(jiffies + HZ/10) at the first completion, t0 + 3 ms.
        let at = fire(&mut k, &mut rqs);
        assert_eq!(at, t0 + 3 * MS + 100 * MS);
        if depth > 1 {
            depth /= 2;
            expect.push((at / MS, KYBER_WRITE, depth));
        }
        assert_eq!(k.depths(), [256, depth, 64, 16], "window {w}");
        k.check().unwrap();
    }
    assert_eq!(k.adjustments, expect);
    assert_eq!(expect.iter().map(|a| a.2).collect::<Vec<_>>(), [64, 32, 16, 8, 4, 2, 1]);
}

/// Both domains under target: nothing is throttled, and nothing grows past
/// `kyber_depth`.
#[test]
fn nothing_is_throttled_when_targets_are_met() {
    let mut k = kyber();
    let mut rqs = Requests::default();
    for w in 0..5u64 {
        complete_n(&mut k, &mut rqs, READ, 600, w * 200 * MS, MS); // bucket 1 of 2 ms
        complete_n(&mut k, &mut rqs, WRITE, 600, w * 200 * MS, 9 * MS); // bucket 3 of 10 ms
        fire(&mut k, &mut rqs);
    }
    assert_eq!(k.depths(), KYBER_DEPTH);
    assert!(k.adjustments.is_empty());
}

/// p99 with 500 samples is the 495th (`DIV_ROUND_UP(500 · 99, 100)`): 495
/// writes in bucket 1 and 5 in bucket 3 give bucket 1 (WRITE halves to 64);
/// 494 and 6 give bucket 3, `128 · 4 >> 2 = 128`: unchanged although
/// congested.
#[test]
fn p99_is_the_495th_of_500_samples() {
    for (fast, slow, depth) in [(495, 5, 64), (494, 6, 128)] {
        let mut k = kyber();
        let mut rqs = Requests::default();
        complete_n(&mut k, &mut rqs, READ, 500, 0, 3 * MS);
        complete_n(&mut k, &mut rqs, WRITE, fast, 0, 4 * MS);
        complete_n(&mut k, &mut rqs, WRITE, slow, 0, 9 * MS);
        fire(&mut k, &mut rqs);
        assert_eq!(k.depths()[KYBER_WRITE], depth, "{fast} + {slow}");
    }
}

/// Under 500 samples `calculate_percentile` waits until a second after its
/// first try (`latency_timeout = jiffies + HZ`); and a domain without a fresh
/// p99 uses the one remembered from its last good window.
#[test]
fn few_samples_wait_a_second_and_the_remembered_p99_is_used() {
    let mut k = kyber();
    let mut rqs = Requests::default();
    // Window 1: 500 good writes (p99 bucket 1 remembered), 10 slow reads.
    complete_n(&mut k, &mut rqs, WRITE, 500, 0, 4 * MS);
    complete_n(&mut k, &mut rqs, READ, 10, 0, 3 * MS);
    assert_eq!(fire(&mut k, &mut rqs), 103 * MS, "earliest completion (a read) at 3 ms + 100 jiffies");
    assert_eq!(k.depths(), KYBER_DEPTH, "reads: 10 samples, the timeout starts: jiffy 1103");
    // 10 more slow reads at 500 ms: timer at 603 ms, before jiffy 1103: still waiting.
    complete_n(&mut k, &mut rqs, READ, 10, 500 * MS, 3 * MS);
    assert_eq!(fire(&mut k, &mut rqs), 603 * MS);
    assert_eq!(k.depths(), KYBER_DEPTH);
    // 10 more at 1010 ms: timer at 1113 ms >= 1103: 30 reads, p90 bucket 5,
    // congested. WRITE has no samples: the remembered bucket 1 gives 64.
    complete_n(&mut k, &mut rqs, READ, 10, 1010 * MS, 3 * MS);
    assert_eq!(fire(&mut k, &mut rqs), 1113 * MS);
    assert_eq!(k.depths(), [256, 64, 64, 16]);
    // The remembered p99 was used up (reset to -1): another congested window
    // without write samples leaves WRITE alone.
    complete_n(&mut k, &mut rqs, READ, 500, 1200 * MS, 3 * MS);
    fire(&mut k, &mut rqs);
    assert_eq!(k.depths(), [256, 64, 64, 16]);
}

/// 20 reads and 20 writes queued: READ batches 16, WRITE 8, READ its last 4
/// (the list empties inside the batch), then WRITE 8 and, past its batch
/// size, round-robin through the empty DISCARD, OTHER and READ back to WRITE
/// for the last 4.
#[test]
fn batches_round_robin_over_domains() {
    let mut k = kyber();
    let mut rqs = Requests::default();
    for i in 0..20 {
        let r = rq(&mut rqs, READ, i * 8, 0);
        k.insert_request(&rqs, r);
        let w = rq(&mut rqs, WRITE, 1_000_000 + i * 8, 0);
        k.insert_request(&rqs, w);
    }
    let mut order = String::new();
    let mut c = ctx(&mut rqs, 0);
    while let Some(id) = k.dispatch_request(&mut c) {
        order.push(if c.rqs.rq(id).flags.op == Op::Read { 'R' } else { 'W' });
        k.check().unwrap();
    }
    let expect = format!("{}{}{}{}", "R".repeat(16), "W".repeat(8), "R".repeat(4), "W".repeat(12));
    assert_eq!(order, expect);
    assert_eq!(k.tokens_in_use(), [20, 20, 0, 0]);
}

/// Tokens: WRITE shrunk to 2 lets 2 writes out, reads still flow; a shrink
/// below what is in use is allowed by `check` until those complete, and no
/// new token is granted meanwhile.
#[test]
fn tokens_never_exceed_the_domain_depth() {
    let mut k = kyber();
    let mut rqs = Requests::default();
    // Put 10 writes in flight at full depth.
    let mut flying = vec![];
    for i in 0..10 {
        let w = rq(&mut rqs, WRITE, i * 8, 0);
        k.insert_request(&rqs, w);
        flying.push(k.dispatch_request(&mut ctx(&mut rqs, 0)).unwrap());
    }
    // Three congested windows: 128 -> 64 -> 32 -> 16 -> (fourth) 8.
    for w in 0..4u64 {
        complete_n(&mut k, &mut rqs, READ, 500, w * 200 * MS, 3 * MS);
        complete_n(&mut k, &mut rqs, WRITE, 500, w * 200 * MS, 4 * MS);
        fire(&mut k, &mut rqs);
    }
    assert_eq!(k.depths()[KYBER_WRITE], 8);
    assert_eq!(k.tokens_in_use()[KYBER_WRITE], 10, "held over the new depth");
    k.check().unwrap();
    let w = rq(&mut rqs, WRITE, 9000, SECOND);
    k.insert_request(&rqs, w);
    let r = rq(&mut rqs, READ, 9100, SECOND);
    k.insert_request(&rqs, r);
    assert_eq!(k.dispatch_request(&mut ctx(&mut rqs, SECOND)), Some(r), "the write waits for a token");
    assert_eq!(k.dispatch_request(&mut ctx(&mut rqs, SECOND)), None);
    // Two writes complete: 8 in use, still no token (8 < 8 is false).
    for id in flying.drain(..2) {
        rqs.rq_mut(id).d_at = Some(SimTime::ZERO);
        k.completed_request(&mut ctx(&mut rqs, SECOND), id);
    }
    assert_eq!(k.dispatch_request(&mut ctx(&mut rqs, SECOND)), None);
    let id = flying.remove(0);
    rqs.rq_mut(id).d_at = Some(SimTime::ZERO);
    k.completed_request(&mut ctx(&mut rqs, SECOND), id);
    assert_eq!(k.dispatch_request(&mut ctx(&mut rqs, SECOND)), Some(w));
    assert_eq!(k.tokens_in_use()[KYBER_WRITE], 8);
    k.check().unwrap();
}

const SECOND: u64 = 1_000 * MS;

/// The whole queue: an SSD whose only cost is a shared transfer channel
/// (write 64 KiB in 250 µs at 262.144 MB/s; read latency 100 µs, 4 KiB in
/// 1 µs), 16 closed-loop writers (one 64 KiB write outstanding each) and one
/// closed-loop 4 KiB reader, 32 tags. kyber at its defaults.
///
/// Writes keep the channel busy: 4000 writes/s, 16 in flight, so a write
/// takes 16 · 250 µs = 4 ms: bucket 1 of its 10 ms target. A read waits
/// behind every write in flight: the reader resubmits at its completion,
/// 1 µs after a write's transfer ended, when that writer's next write is
/// queued for the channel too, so a read takes exactly N · 250 µs + 1 µs
/// with N writes in flight: 4.001 ms at N = 16, bucket 7 of 2 ms: congested.
///
/// Timing: 250 reads/s never reach 500 samples in a 100 ms window, so READ
/// gets a percentile only a second after its first try (jiffy 100, first
/// result at 1100, then every 1000 jiffies from the next try). WRITE
/// (400 samples per window) gets one every other window; a congested
/// window uses WRITE's fresh p99, else the one remembered from its last
/// good window, and then forgets it (`domain_p99 = -1`), so WRITE halves
/// (`128 · (1 + 1) >> 2`...) at 1100, 3100, 5100 and 7100 ms, every other
/// READ result. At N = 8 reads take 2.001 ms (bucket 4, still congested)
/// and come 500/s, so the next READ result comes with WRITE's fresh one at
/// 8200 ms; N = 4 gives reads of 1.001 ms: good, and the depths stay. Writes keep their 4000/s
/// (the channel never idles) while read latency falls from 4 ms to 1 ms.
#[test]
fn a_write_stream_is_throttled_until_reads_meet_their_target() {
    let spec = |writers| DeviceSpec {
        name: "nvme".into(),
        kind: DeviceKind::Ssd {
            read_latency_ns: 100 * US,
            write_latency_ns: 0,
            read_bytes_per_s: 4_096_000_000,
            write_bytes_per_s: 262_144_000,
        },
        queue_depth: 32,
        capacity_sectors: 1 << 31,
        rotational: false,
        max_sectors: 2560,
        elevator: ElevatorSpec::Kyber(KyberTunables::default()),
        dev_t: (259, writers),
    };
    let run = |writers: u32, until: u64| {
        let spec = spec(writers);
        let prio = vec![IoPrio { class: IoClass::Be, prio: 4 }; writers as usize + 1];
        let elevator = Elevator::new(&spec.elevator, prio, HZ, tick_nsec(HZ));
        let device = Device::new(spec, SimRng::new(1).stream("d"));
        let mut q = RequestQueue::new(DeviceId(0), device, elevator, writers as usize + 1, tick_nsec(HZ));
        q.enable_mq(crate::block::BlkMqSettings { nr_hw_queues: 1, nr_requests: Some(2048) }, 1);
        let mut events = EventQueue::new();
        let comm = |t: TaskId| format!("t{}", t.0);
        let mut seq = 0;
        let mut next = [0u64; 64];
        let mut submit = |q: &mut RequestQueue, now: SimTime, task: u32| {
            seq += 1;
            let (flags, nr) = if task == 0 { (READ, 8) } else { (WRITE, 128) };
            // Scattered sectors: no merges.
            let sector = (u64::from(task) << 24) + next[task as usize] * 4096;
            next[task as usize] += 1;
            q.submit_mq(now, TaskId(task), 0, seq, flags, sector, nr as u64);
        };
        for task in 0..=writers {
            submit(&mut q, SimTime::ZERO, task);
        }
        q.run(SimTime::ZERO, &mut events, &comm);
        // Read I/O latencies (D to C) and completion times.
        let mut reads: Vec<(u64, u64)> = vec![];
        let mut writes = 0u64;
        while let Some(at) = events.peek_time() {
            if at.ns() > until {
                break;
            }
            let (now, ev) = events.pop().unwrap();
            match ev {
                Event::IoComplete { request, .. } => {
                    let r = q.rqs.rq(request);
                    let (task, d) = (r.task.0, r.d_at.unwrap());
                    if task == 0 {
                        reads.push((now.ns(), now.since(d)));
                    } else {
                        writes += 1;
                    }
                    q.complete(now, request, &mut events);
                    submit(&mut q, now, task);
                    q.run(now, &mut events, &comm);
                }
                Event::IoTimer { generation, .. } => {
                    if q.timer(now, generation) {
                        q.run(now, &mut events, &comm);
                    }
                }
                other => panic!("unexpected {other:?}"),
            }
            q.check(now).unwrap();
        }
        let Elevator::Kyber(k) = &q.elevator else { unreachable!() };
        (k.depths(), k.adjustments.clone(), reads, writes)
    };
    let mean = |r: &[(u64, u64)], from: u64, to: u64| {
        let v: Vec<u64> = r.iter().filter(|x| x.0 >= from && x.0 < to).map(|x| x.1).collect();
        v.iter().sum::<u64>() / v.len() as u64
    };
    let max = |r: &[(u64, u64)], from: u64| r.iter().filter(|x| x.0 >= from).map(|x| x.1).max().unwrap();

    let (depths, adj, reads, writes) = run(16, 11 * SECOND);
    assert_eq!(depths, [256, 4, 64, 16]);
    let w = KYBER_WRITE;
    assert_eq!(adj, [(1100, w, 64), (3100, w, 32), (5100, w, 16), (7100, w, 8), (8200, w, 4)]);
    // Before the first shrink every read but the first (101 µs, channel idle)
    // takes 16 · 250 µs + 1 µs.
    assert_eq!(mean(&reads, 10 * MS, SECOND), 4_001 * US);
    assert_eq!(
        reads.iter().filter(|r| (7_200 * MS..8_200 * MS).contains(&r.0)).map(|r| r.1).max().unwrap(),
        2_001 * US,
        "depth 8: 8 · 250 µs + 1 µs"
    );
    assert_eq!(max(&reads, 8_300 * MS), 1_001 * US, "depth 4: 4 · 250 µs + 1 µs");
    assert_eq!(mean(&reads, 8_300 * MS, 11 * SECOND), 1_001 * US);
    // 4000 writes/s throughout: the channel never idles and only loses 1 µs
    // per read: 11 s less `reads` µs, in 250 µs writes (±1 cut by the end).
    let expect = (11 * SECOND - reads.len() as u64 * US) / (250 * US);
    assert!(writes.abs_diff(expect) <= 1, "{writes} writes, {expect} expected");

    // Two writers: a read waits at most 2 · 250 µs + 1 µs: good; nothing throttled.
    let (depths, adj, reads, _) = run(2, 4 * SECOND);
    assert_eq!(depths, KYBER_DEPTH);
    assert!(adj.is_empty(), "{adj:?}");
    assert!(max(&reads, 0) <= 501 * US, "{}", max(&reads, 0));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Random reads and writes (sizes, sectors, arrival gaps) through a queue
    /// with kyber and a shrunk read target, so the timer resizes domains:
    /// the queue's and kyber's invariants hold after every event (tokens
    /// within depth, nothing dispatched before it was queued, bytes
    /// conserved), every bio completes exactly once, and all tokens return.
    #[test]
    fn kyber_invariants_hold_on_random_traffic(
        seed in 0u64..1_000_000,
        n in 50usize..400,
        depth in 1u32..40,
        read_lat_us in 1u64..3000,
    ) {
        let spec = DeviceSpec {
            name: "d".into(),
            kind: DeviceKind::Ssd {
                read_latency_ns: 80 * US,
                write_latency_ns: 20 * US,
                read_bytes_per_s: 1_000_000_000,
                write_bytes_per_s: 300_000_000,
            },
            queue_depth: depth,
            capacity_sectors: 1 << 24,
            rotational: false,
            max_sectors: 256,
            elevator: ElevatorSpec::Kyber(KyberTunables { read_lat_nsec: read_lat_us * US, write_lat_nsec: 10 * MS }),
            dev_t: (8, 0),
        };
        let prio = vec![IoPrio { class: IoClass::Be, prio: 4 }; 4];
        let elevator = Elevator::new(&spec.elevator, prio, HZ, tick_nsec(HZ));
        let mut q = RequestQueue::new(DeviceId(0), Device::new(spec, SimRng::new(seed).stream("d")), elevator, 4, tick_nsec(HZ));
        q.enable_mq(crate::block::BlkMqSettings { nr_hw_queues: 1, nr_requests: None }, 1);
        let mut rng = SimRng::new(seed).stream("traffic");
        let mut events = EventQueue::new();
        let comm = |t: TaskId| format!("t{}", t.0);
        let mut arrivals = Vec::with_capacity(n);
        let mut t = 0;
        for _ in 0..n {
            t += rng.range_inclusive(0, 400) * US;
            arrivals.push(t);
        }
        let mut next = 0;
        let mut completed = 0u64;
        for _ in 0..(10 * n + 10_000) {
            let ev = events.peek_time().map(SimTime::ns);
            let arrival = arrivals.get(next).copied();
            let now = match (ev, arrival) {
                (None, None) => break,
                (Some(e), Some(a)) if a < e => a,
                (None, Some(a)) => a,
                (Some(e), _) => e,
            };
            let now_t = SimTime(now);
            if arrival == Some(now) && ev.is_none_or(|e| now < e) {
                next += 1;
                let task = rng.range_inclusive(0, 3) as u32;
                let flags = if rng.range_inclusive(0, 2) == 0 { WRITE } else { READ };
                let nr = 8 * rng.range_inclusive(1, 32) as u32;
                // Sectors on a coarse grid so some bios merge.
                let sector = rng.range_inclusive(0, 4000) * 64;
                q.submit_mq(now_t, TaskId(task), 0, next as u64, flags, sector, u64::from(nr));
                q.run(now_t, &mut events, &comm);
            } else {
                let (at, e) = events.pop().expect("peeked");
                match e {
                    Event::IoComplete { request, .. } => {
                        completed += q.complete(at, request, &mut events).len() as u64;
                        q.run(at, &mut events, &comm);
                    }
                    Event::IoTimer { generation, .. } => {
                        if q.timer(at, generation) {
                            q.run(at, &mut events, &comm);
                        }
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            q.check(now_t).map_err(proptest::test_runner::TestCaseError::fail)?;
        }
        proptest::prop_assert_eq!(next, n);
        proptest::prop_assert_eq!(q.elevator.queued(), 0);
        proptest::prop_assert_eq!(q.device.in_flight, 0);
        proptest::prop_assert_eq!(completed, n as u64);
        proptest::prop_assert_eq!(q.bios_completed, q.bios_submitted);
        let Elevator::Kyber(k) = &q.elevator else { unreachable!() };
        proptest::prop_assert_eq!(k.tokens_in_use(), [0; KYBER_NUM_DOMAINS]);
    }
}
