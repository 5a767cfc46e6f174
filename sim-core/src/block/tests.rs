//! The I/O elevators pinned against dispatch orders and times derived by hand
//! from Linux 4.4 (block/elevator.c, noop-iosched.c, deadline-iosched.c,
//! cfq-iosched.c; `/work/cfq-spec.md` for CFQ).
//!
//! Most tests drive one `RequestQueue` directly, as the engine does (submit,
//! run the queue; on a completion complete and run again, then let the
//! submitter react). The device is an SSD whose 4 KiB request takes exactly
//! 1 ms at queue depth 1 (999 µs of latency and 1 µs of transfer), and HZ is
//! 1000, so one request is one jiffy and every time below is a whole number
//! of milliseconds. CFQ reads only the `rotational` flag, so the same disk is
//! declared rotational where idling is wanted. The last test runs whole
//! scenarios through the public API.

use super::cfq::{IoClass, IoPrio};
use super::cfq_tunables::{CfqBehaviour, CfqTunables};
use super::deadline::DeadlineTunables;
use super::device::{Device, DeviceKind, DeviceSpec};
use super::queue::RequestQueue;
use super::request::{Op, ReqFlags};
use super::{Elevator, ElevatorSpec};
use crate::engine::Simulation;
use crate::event::{Event, EventQueue};
use crate::ids::{DeviceId, TaskId};
use crate::report::RunReport;
use crate::rng::SimRng;
use crate::scenario::Scenario;
use crate::sched::tunables::tick_nsec;
use crate::time::SimTime;

const MS: u64 = 1_000_000;
const HZ: u32 = 1000;

const READ: ReqFlags = ReqFlags { op: Op::Read, sync: true, meta: false, prio: false };
/// Buffered writeback: a plain `WRITE`, async to CFQ.
const WRITE: ReqFlags = ReqFlags { op: Op::Write, sync: false, meta: false, prio: false };

/// The test disk: 8 sectors take 999 µs + 4096 B at 4.096 GB/s = 1 ms.
fn disk(depth: u32, rotational: bool, max_sectors: u32, elevator: ElevatorSpec) -> DeviceSpec {
    DeviceSpec {
        name: "d".into(),
        kind: DeviceKind::Ssd {
            read_latency_ns: 999_000,
            write_latency_ns: 999_000,
            read_bytes_per_s: 4_096_000_000,
            write_bytes_per_s: 4_096_000_000,
        },
        queue_depth: depth,
        capacity_sectors: 1 << 31,
        rotational,
        max_sectors,
        elevator,
        dev_t: (8, 0),
    }
}

/// A request as the device served it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Served {
    task: u32,
    op: Op,
    sector: u64,
    nr: u32,
    /// Dispatched (`D`) and completed (`C`), ns.
    d: u64,
    c: u64,
}

/// A synchronous reader: one request outstanding; the next is submitted
/// `think_ns` after the previous completes.
struct Reader {
    task: u32,
    think_ns: u64,
    next: std::vec::IntoIter<u64>,
}

/// One device's request queue driven like the engine drives it.
struct Rig {
    q: RequestQueue,
    events: EventQueue,
    now: SimTime,
    seq: u64,
    /// Completions in order (with depth 1 and equal latencies, dispatch order).
    served: Vec<Served>,
    readers: Vec<Reader>,
    /// Submissions due later: (time, task, flags, sector, sectors).
    later: Vec<(u64, u32, ReqFlags, u64, u32)>,
}

impl Rig {
    fn new(spec: DeviceSpec, prios: Vec<IoPrio>) -> Rig {
        let elevator = Elevator::new(&spec.elevator, prios.clone(), HZ, tick_nsec(HZ));
        let device = Device::new(spec, SimRng::new(1).stream("d"));
        let q = RequestQueue::new(DeviceId(0), device, elevator, prios.len(), tick_nsec(HZ));
        Rig {
            q,
            events: EventQueue::new(),
            now: SimTime::ZERO,
            seq: 0,
            served: Vec::new(),
            readers: Vec::new(),
            later: Vec::new(),
        }
    }

    /// Every task best effort, level 4 (nice 0).
    fn be4(spec: DeviceSpec, ntasks: usize) -> Rig {
        Rig::new(spec, vec![IoPrio { class: IoClass::Be, prio: 4 }; ntasks])
    }

    fn run(&mut self) {
        self.q.run(self.now, &mut self.events, &|t| format!("t{}", t.0));
        self.q.check(self.now).unwrap_or_else(|e| panic!("at {} ns: {e}", self.now.ns()));
    }

    /// Queues one bio without running the queue (as under a plug).
    fn queue(&mut self, task: u32, flags: ReqFlags, sector: u64, nr: u32) {
        self.seq += 1;
        self.q.submit_bio(self.now, TaskId(task), self.seq, flags, sector, nr);
    }

    /// Submits one 4 KiB bio and runs the queue (`blk_queue_bio`, no plug).
    fn submit(&mut self, task: u32, flags: ReqFlags, sector: u64) {
        self.queue(task, flags, sector, 8);
        self.run();
    }

    /// Starts a synchronous reader: its first read now, the rest one at a time.
    fn reader(&mut self, task: u32, think_ns: u64, sectors: Vec<u64>) {
        let mut next = sectors.into_iter();
        let first = next.next().expect("a reader reads");
        self.readers.push(Reader { task, think_ns, next });
        self.submit(task, READ, first);
    }

    fn submit_at(&mut self, at_ns: u64, task: u32, flags: ReqFlags, sector: u64) {
        self.later.push((at_ns, task, flags, sector, 8));
    }

    /// Processes everything due up to `limit_ns`: device completions and
    /// elevator timers first, then submissions due at the same instant.
    fn run_until(&mut self, limit_ns: u64) {
        loop {
            let ev = self.events.peek_time().map(SimTime::ns);
            let sub = self.later.iter().map(|s| s.0).min();
            let (at, is_event) = match (ev, sub) {
                (Some(e), Some(s)) if e <= s => (e, true),
                (_, Some(s)) => (s, false),
                (Some(e), None) => (e, true),
                (None, None) => break,
            };
            if at > limit_ns {
                break;
            }
            self.now = SimTime(at);
            if !is_event {
                let i = self.later.iter().position(|s| s.0 == at).expect("due");
                let (_, task, flags, sector, nr) = self.later.remove(i);
                self.queue(task, flags, sector, nr);
                self.run();
                continue;
            }
            let (_, event) = self.events.pop().expect("peeked");
            match event {
                Event::IoComplete { request, .. } => {
                    let r = self.q.rqs.rq(request);
                    let s = Served {
                        task: r.task.0,
                        op: r.flags.op,
                        sector: r.sector,
                        nr: r.nr_sectors,
                        d: r.d_at.expect("dispatched").ns(),
                        c: at,
                    };
                    self.served.push(s);
                    self.q.complete(self.now, request, &mut self.events);
                    self.run();
                    if let Some(rd) = self.readers.iter_mut().find(|rd| rd.task == s.task)
                        && let Some(sector) = rd.next.next()
                    {
                        let (task, at) = (rd.task, at + rd.think_ns);
                        self.later.push((at, task, READ, sector, 8));
                    }
                }
                Event::IoTimer { generation, .. } => {
                    if self.q.timer(self.now, generation) {
                        self.run();
                    }
                }
                other => panic!("unexpected event {other:?}"),
            }
        }
        self.now = SimTime(self.now.ns().max(limit_ns.min(u64::MAX / 2)));
    }

    fn drain(&mut self) {
        self.run_until(u64::MAX / 2);
        assert_eq!(self.q.elevator.queued(), 0, "requests left in the elevator");
        assert_eq!(self.q.device.in_flight, 0);
    }

    /// (start sector, sectors) of each request in dispatch order.
    fn extents(&self) -> Vec<(u64, u32)> {
        self.served.iter().map(|s| (s.sector, s.nr)).collect()
    }

    /// Start sectors in dispatch order.
    fn sectors(&self) -> Vec<u64> {
        self.served.iter().map(|s| s.sector).collect()
    }

    /// (sector, dispatch ms) in dispatch order.
    fn dispatch_ms(&self) -> Vec<(u64, u64)> {
        self.served.iter().map(|s| (s.sector, ms(s.d))).collect()
    }

    /// Dispatch ms of one task's requests.
    fn times_of(&self, task: u32) -> Vec<u64> {
        self.served.iter().filter(|s| s.task == task).map(|s| ms(s.d)).collect()
    }

    /// Runs of consecutive dispatches by one task: (task, first ms, last ms, count).
    fn turns(&self) -> Vec<(u32, u64, u64, usize)> {
        let mut out: Vec<(u32, u64, u64, usize)> = Vec::new();
        for s in &self.served {
            match out.last_mut() {
                Some(t) if t.0 == s.task => {
                    t.2 = ms(s.d);
                    t.3 += 1;
                }
                _ => out.push((s.task, ms(s.d), ms(s.d), 1)),
            }
        }
        out
    }
}

/// A time that must be a whole number of milliseconds here.
fn ms(ns: u64) -> u64 {
    assert_eq!(ns % MS, 0, "{ns} ns is not on a millisecond");
    ns / MS
}

// ------------------------------------------------------------------ device

/// Queue depth 2 with noop: two requests go out at once, the third when the
/// first tag frees. SSD timing (device.rs): the latencies overlap, the 1 µs
/// transfers share one channel.
///   r0: 0 + 999 µs latency, channel free → done 1000 µs.
///   r1: ready 999 µs, channel busy until 1000 µs → done 1001 µs.
///   r2: dispatched at 1000 µs (r0's tag), ready 1999 µs → done 2000 µs.
/// r2 leaves noop at t=0: `scsi_request_fn` peeks it before finding the
/// device full, and it waits at the head of the dispatch list.
#[test]
fn device_depth_bounds_in_flight_and_overlaps_latency() {
    let mut rig = Rig::be4(disk(2, false, 2560, ElevatorSpec::Noop), 1);
    for s in [0, 100, 200] {
        rig.queue(0, READ, s, 8);
    }
    rig.run();
    assert_eq!(rig.q.device.in_flight, 2);
    assert_eq!(rig.q.elevator.queued(), 0);
    assert!(rig.q.peeked.is_some());
    rig.drain();
    let got: Vec<(u64, u64, u64)> = rig.served.iter().map(|s| (s.sector, s.d / 1000, s.c / 1000)).collect();
    assert_eq!(got, [(0, 0, 1000), (100, 0, 1001), (200, 1000, 2000)]);
}

// ------------------------------------------------------------------ noop

/// noop: one FIFO; merging is the core's `elv_merge` only: the one-hit
/// `last_merge` cache (back or front, `blk_try_merge`), then the back-merge
/// hash (requests by end sector). noop has no `elevator_merge_fn`, so a bio
/// that ends where a request starts is front-merged only if that request is
/// `last_merge`. `last_merge` is set on insert only while empty
/// (`__elv_add_request`) and to the target of every merge (`elv_merged_request`).
///
/// Bios (8 sectors each), all queued before the queue runs:
///   A 1000 → new rq1, last_merge = rq1
///   B 5000 → new rq2 (last_merge stays rq1)
///   C 1008 → back merge into rq1 via last_merge: rq1 = [1000, +16)
///   D 3000 → new rq3
///   E 5008 → last_merge (rq1) misses; the hash finds rq2 ending at 5008:
///            back merge, rq2 = [5000, +16), last_merge = rq2
///   F 2992 → ends at rq3's start, but rq3 is not last_merge and no request
///            ends at 2992: a new rq4 (noop has no front-merge lookup)
///   G 4992 → ends at rq2's start and rq2 is last_merge: front merge,
///            rq2 = [4992, +24)
/// Dispatch is arrival order, not sector order: rq1, rq2, rq3, rq4.
#[test]
fn noop_dispatches_in_arrival_order_and_front_merges_only_through_last_merge() {
    let mut rig = Rig::be4(disk(1, false, 2560, ElevatorSpec::Noop), 1);
    for s in [1000, 5000, 1008, 3000, 5008, 2992, 4992] {
        rig.queue(0, READ, s, 8);
    }
    assert_eq!(rig.q.rec.merged, [3, 0], "C, E and G merged");
    rig.run();
    rig.drain();
    assert_eq!(rig.extents(), [(1000, 16), (4992, 24), (3000, 8), (2992, 8)]);
    // One bio completes per merged bio too: 7 bios, 4 requests.
    assert_eq!((rig.q.bios_submitted, rig.q.bios_completed, rig.q.rec.completed[0]), (7, 7, 4));
}

/// A merge that would pass `max_sectors` (16 here) fails in
/// `ll_back_merge_fn`, which marks the request `REQ_NOMERGE` and clears
/// `last_merge`; the new request then becomes `last_merge` and takes the
/// next contiguous bio.
///   A 1000 → rq1;  B 1008 → rq1 = [1000, +16) (full)
///   C 1016 → rq1 would be 24 > 16: rq1 NOMERGE, rq2 = [1016, +8), last_merge = rq2
///   D 1024 → back merge into rq2 = [1016, +16)
/// Reads and writes never merge (`elv_bio_merge_ok` → `blk_rq_merge_ok`:
/// same data direction), however contiguous, and arrival order holds across
/// directions:
///   W 2000 (write) → rq1, last_merge
///   R 2008 → back-contiguous with rq1 (last_merge and hash): rq2
///   R 1992 → front-contiguous with rq1 (last_merge): rq3
///   W 2016 → back-contiguous with rq2 (hash): rq4
#[test]
fn noop_size_limit_marks_nomerge_and_directions_do_not_merge() {
    let mut rig = Rig::be4(disk(1, false, 16, ElevatorSpec::Noop), 1);
    for s in [1000, 1008, 1016, 1024] {
        rig.queue(0, READ, s, 8);
    }
    assert_eq!(rig.q.rec.merged, [2, 0]);
    rig.run();
    rig.drain();
    assert_eq!(rig.extents(), [(1000, 16), (1016, 16)]);

    let mut rig = Rig::be4(disk(1, false, 2560, ElevatorSpec::Noop), 1);
    rig.queue(0, WRITE, 2000, 8);
    rig.queue(0, READ, 2008, 8);
    rig.queue(0, READ, 1992, 8);
    rig.queue(0, WRITE, 2016, 8);
    assert_eq!(rig.q.rec.merged, [0, 0]);
    rig.run();
    rig.drain();
    let got: Vec<(Op, u64, u32)> = rig.served.iter().map(|s| (s.op, s.sector, s.nr)).collect();
    assert_eq!(got, [(Op::Write, 2000, 8), (Op::Read, 2008, 8), (Op::Read, 1992, 8), (Op::Write, 2016, 8)]);
}

// ------------------------------------------------------------------ deadline

fn deadline(f: impl FnOnce(&mut DeadlineTunables)) -> ElevatorSpec {
    let mut t = DeadlineTunables::defaults(HZ);
    f(&mut t);
    ElevatorSpec::Deadline(t)
}

/// The same bios as the noop test. deadline has a front-merge hook
/// (`deadline_merge`: the request in the bio's direction starting where the
/// bio ends), so F joins rq3 = [2992, +16) and last_merge becomes rq3; G then
/// misses last_merge and the hash, and `deadline_merge` finds rq2:
/// [4992, +24). Four merges; three requests, served in sector order from the
/// FIFO head rq1 (1000 → 2992 → 4992).
/// With `front_merges = 0` F stays a request of its own, while G is still
/// front-merged through last_merge (`blk_try_merge` ignores the tunable).
#[test]
fn deadline_front_merges_by_sector_and_dispatches_in_sector_order() {
    let bios = [1000, 5000, 1008, 3000, 5008, 2992, 4992];
    let mut rig = Rig::be4(disk(1, false, 2560, deadline(|_| {})), 1);
    for s in bios {
        rig.queue(0, READ, s, 8);
    }
    assert_eq!(rig.q.rec.merged, [4, 0]);
    rig.run();
    rig.drain();
    assert_eq!(rig.extents(), [(1000, 16), (2992, 16), (4992, 24)]);

    let mut rig = Rig::be4(disk(1, false, 2560, deadline(|t| t.front_merges = false)), 1);
    for s in bios {
        rig.queue(0, READ, s, 8);
    }
    assert_eq!(rig.q.rec.merged, [3, 0]);
    rig.run();
    rig.drain();
    assert_eq!(rig.extents(), [(1000, 16), (2992, 8), (3000, 8), (4992, 24)]);
}

/// A batch follows sector successors (`deadline_latter_request`, which does
/// not wrap); when there is none, the next batch starts at the FIFO head.
/// Reads queued in the order 500, 300, 100, 400, 200:
///   500 (FIFO head) → no successor above 500 → new batch at the FIFO head
///   300 → 400 → none above 400 → FIFO head 100 → 200.
/// A wrapping successor would have given 500, 100, 200, 300, 400.
#[test]
fn deadline_successor_does_not_wrap_and_restarts_at_the_fifo_head() {
    let mut rig = Rig::be4(disk(1, false, 2560, deadline(|_| {})), 1);
    for s in [500, 300, 100, 400, 200] {
        rig.queue(0, READ, s, 8);
    }
    rig.run();
    rig.drain();
    assert_eq!(rig.sectors(), [500, 300, 400, 100, 200]);
}

/// `fifo_batch = 2`, `writes_starved = 2`; reads 100..800 and writes
/// 1000, 1100, 1200 all queued at t=0, none expired. At each new batch
/// reads win while `starved++ < writes_starved` (`starved` counts read
/// batches passed over waiting writes), then a write batch resets it:
///   batch 1: starved 0→1, reads from the FIFO head: 100, 200
///   batch 2: starved 1→2, reads continue in sector order: 300, 400
///   batch 3: starved 2 ≥ 2 → writes, starved = 0: FIFO head 1000, 1100
///   batch 4: starved 0→1; `next_rq[READ]` was cleared by the write batch,
///            so the read FIFO head: 500, 600
///   batch 5: starved 1→2: 700, 800
///   batch 6: reads empty → writes: 1200
#[test]
fn deadline_batches_reads_and_serves_writes_after_writes_starved_batches() {
    let mut rig = Rig::be4(
        disk(
            1,
            false,
            2560,
            deadline(|t| {
                t.fifo_batch = 2;
                t.writes_starved = 2;
            }),
        ),
        1,
    );
    for s in [100, 200, 300, 400, 500, 600, 700, 800] {
        rig.queue(0, READ, s, 8);
    }
    for s in [1000, 1100, 1200] {
        rig.queue(0, WRITE, s, 8);
    }
    rig.run();
    rig.drain();
    assert_eq!(rig.sectors(), [100, 200, 300, 400, 1000, 1100, 500, 600, 700, 800, 1200]);
    let ops: Vec<Op> = rig.served.iter().map(|s| s.op).collect();
    assert_eq!(ops[4..6], [Op::Write, Op::Write]);
}

/// `if (writes && (dd->starved++ >= dd->writes_starved))`: the counter only
/// moves when writes are waiting, so read batches served while no write was
/// queued do not count. `fifo_batch = 1` (a batch per request), 1 ms each.
/// deadline chooses one request ahead of the disk: `scsi_request_fn` peeks
/// the next request when it starts one, so the choice made at a completion
/// (or at t=0) is dispatched at the next completion.
/// Reads 100..800 queued at t=0; 100 and 200 are chosen at 0, 300 at 1 ms,
/// 400 at 2 ms, with no write queued (starved stays 0). A write arrives at
/// 2.5 ms (400 already chosen):
///   chosen at 3 ms: starved 0→1, read 500;  at 4 ms: 1→2, read 600;
///   at 5 ms: 2 ≥ 2 → the write;  then 700, 800.
/// Dispatched one ms after being chosen: 400 at 3, 500 at 4, 600 at 5,
/// the write at 6, 700 and 800 at 7 and 8.
#[test]
fn deadline_counts_starvation_only_while_writes_wait() {
    let mut rig = Rig::be4(disk(1, false, 2560, deadline(|t| t.fifo_batch = 1)), 1);
    for s in [100, 200, 300, 400, 500, 600, 700, 800] {
        rig.queue(0, READ, s, 8);
    }
    rig.run();
    rig.submit_at(2 * MS + MS / 2, 0, WRITE, 5000);
    rig.drain();
    assert_eq!(
        rig.dispatch_ms(),
        [(100, 0), (200, 1), (300, 2), (400, 3), (500, 4), (600, 5), (5000, 6), (700, 7), (800, 8)]
    );
}

/// Expiry is only checked when a batch starts. `read_expire = 10` ms,
/// `fifo_batch = 4`. deadline chooses one request ahead of the disk (the
/// request `scsi_request_fn` peeks while the disk is busy), so a request
/// chosen at t is dispatched at the next completion. Reads 1000, 1100, 1150
/// queued at t=0 (1000 dispatched, 1100 chosen, successor 1150); at 0.5 ms
/// read 10 (FIFO head from now on, fifo_time 0 + 10 jiffies) and then
/// 1200..2400 arrive, all above the head position.
///   chosen at 0–2 ms: 1000, 1100, 1150, 1200 (batch 1, sector order)
///   at 3 ms: new batch, head (10) not expired (3 < 10): 1300..1600
///   at 7 ms: new batch, 7 < 10: 1700, 1800, 1900, 2000 — at 10 ms the head
///            has expired but the batch goes on
///   at 11 ms: new batch, 11 ≥ 10: the expired head 10, then its
///            successors 2100, 2200, 2300 in the same batch
///   at 15 ms: new batch: the FIFO head 2400.
/// Each is dispatched at the next ms: 1000..1150 at 0..2, 1200..2000 at
/// 3..11, 10 at 12, 2100..2400 at 13..16.
#[test]
fn deadline_serves_an_expired_fifo_head_only_at_the_next_batch() {
    let mut t = DeadlineTunables::defaults(HZ);
    t.set("read_expire", 10, HZ).unwrap();
    t.fifo_batch = 4;
    let mut rig = Rig::be4(disk(1, false, 2560, ElevatorSpec::Deadline(t)), 1);
    rig.queue(0, READ, 1000, 8);
    rig.queue(0, READ, 1100, 8);
    rig.queue(0, READ, 1150, 8);
    rig.run();
    rig.run_until(MS / 2);
    rig.queue(0, READ, 10, 8);
    for s in (1200..=2400).step_by(100) {
        rig.queue(0, READ, s, 8);
    }
    rig.run();
    rig.drain();
    let mut want = vec![(1000, 0), (1100, 1), (1150, 2)];
    want.extend((0..9).map(|i| (1200 + 100 * i, 3 + i)));
    want.extend([(10, 12), (2100, 13), (2200, 14), (2300, 15), (2400, 16)]);
    assert_eq!(rig.dispatch_ms(), want);
}

// ------------------------------------------------------------------ CFQ

fn cfq(nonrot: bool, f: impl FnOnce(&mut CfqTunables)) -> ElevatorSpec {
    let mut t = CfqTunables::defaults(HZ, nonrot);
    f(&mut t);
    ElevatorSpec::Cfq(t)
}

/// `n` sectors 16 apart from `base`: 4 KiB reads that never merge and never
/// seek (distance 8 ≤ CFQQ_SEEK_THR).
fn stride(base: u64, n: u64) -> Vec<u64> {
    (0..n).map(|i| base + 16 * i).collect()
}

/// Two synchronous readers (think time 0) on a rotating disk, HZ=1000:
/// slice_sync 100, slice_idle 8, target_latency 300, low_latency on.
/// A's queue becomes busy first: rb_key = jiffies + (nr_cfqq − 1)·Δ with
/// nr_cfqq not yet counting it (−80 for A, 0 for B), so A is served first.
/// A slice starts at the queue's first completion (`cfq_set_prio_slice` from
/// `cfq_completed_request`), 1 ms: `cfq_scaled_cfqq_slice` averages the busy
/// queues to (3·2 + 0 + 2)/4 = 2, expected latency 2·100 = 200 ≤ 300, so the
/// slice stays 100 jiffies: it ends at 101. Between A's reads its queue is
/// empty and CFQ idles (timer 8 jiffies), so B never gets a turn early; A's
/// next read cancels the idle (busy_queues > 1). A is served at 0..=100 ms.
/// The completion at 101 finds the slice used and expires A (the workload
/// slice, 300, has time left and is kept). B's slice starts at its first
/// completion, 102, ends 202: B is served 101..=201; then A 202..=302
/// (slice 203..303), then B from 303.
#[test]
fn cfq_sync_readers_take_turns_in_slice_sync_slices() {
    let mut rig = Rig::be4(disk(1, true, 2560, cfq(false, |_| {})), 2);
    rig.reader(0, 0, stride(0, 1000));
    rig.reader(1, 0, stride(1 << 24, 1000));
    rig.run_until(310 * MS);
    let turns = rig.turns();
    assert_eq!(turns[..3], [(0, 0, 100, 101), (1, 101, 201, 101), (0, 202, 302, 101)]);
    assert_eq!((turns[3].0, turns[3].1), (1, 303));
}

/// The slice scales with the I/O priority (`cfq_prio_slice`: base +
/// base/5·(4 − prio)); with low_latency off it is exactly that. A at nice
/// −20 (prio 0): 100 + 20·4 = 180 jiffies; B at nice 15 (prio 7):
/// 100 − 20·3 = 40. Both rb_keys are jiffies + 0 (A: (0 − 1)·(180 − 180);
/// B: (1 − 1)·(180 − 40)), and ties go after, so A first.
///   A: slice 1..181, served 0..=180 (181 reads)
///   B: slice 182..222, served 181..=221 (41 reads)
///   A: slice 223..403, served 222..=402;  B from 403.
#[test]
fn cfq_slice_scales_with_io_priority_without_low_latency() {
    let prios = vec![IoPrio { class: IoClass::Be, prio: 0 }, IoPrio { class: IoClass::Be, prio: 7 }];
    let mut rig = Rig::new(disk(1, true, 2560, cfq(false, |t| t.low_latency = false)), prios);
    rig.reader(0, 0, stride(0, 1000));
    rig.reader(1, 0, stride(1 << 24, 1000));
    rig.run_until(410 * MS);
    let turns = rig.turns();
    assert_eq!(turns[..3], [(0, 0, 180, 181), (1, 181, 221, 41), (0, 222, 402, 181)]);
    assert_eq!((turns[3].0, turns[3].1), (1, 403));
}

/// `low_latency` shares `target_latency` (300 jiffies) among the busy
/// queues. Four sync readers (think time 0, rotating disk), busy in the
/// order A, B, C, D: rb_keys −80, 0, 80, 160 ((k − 1)·80 with k queues
/// already busy). `cfq_scaled_cfqq_slice` at each slice start (first
/// completion), busy_queues_avg ← (3·max + min + 2)/4 with busy = 4:
///   A at 1 ms:   avg (3·4 + 0 + 2)/4 = 3; 3·100 = 300, not > 300: 100 → ends 101
///   B at 102 ms: avg (3·4 + 3 + 2)/4 = 4; 400 > 300: max(100·300/400,
///                low_slice min(100, 2·8·100/100) = 16) = 75 → ends 177
///   C, D:        avg stays 4: 75 each.
/// A re-queues as soon as it is expired (key 101 + (3 − 1)·80 = 261), after
/// C (80) and D (160), so the round is A, B, C, D and A again at 329.
#[test]
fn cfq_low_latency_shares_target_latency_among_busy_queues() {
    let mut rig = Rig::be4(disk(1, true, 2560, cfq(false, |_| {})), 4);
    for task in 0..4 {
        rig.reader(task, 0, stride(u64::from(task) << 24, 1000));
    }
    rig.run_until(340 * MS);
    let turns = rig.turns();
    assert_eq!(turns[..4], [(0, 0, 100, 101), (1, 101, 176, 76), (2, 177, 252, 76), (3, 253, 328, 76)]);
    assert_eq!((turns[4].0, turns[4].1), (0, 329));
}

/// Idling. Reader A reads 3 times with 3 ms of think time; B has one read
/// queued from t=0. A's queue is served first (rb_key −80 vs 0).
/// Rotating disk: after each of A's reads completes (1, 5, 9 ms), its queue
/// is empty and `cfq_arm_slice_timer` arms the idle timer for slice_idle =
/// 8 jiffies; A's next read (at 4, 8 ms) cancels it. After the last, nothing
/// comes: the timer fires at 9 + 8 = 17 ms, expires A, and B is dispatched
/// then. A: 0, 4, 8; B: 17.
/// Non-rotational: `cfq_registered_queue` sets slice_idle to 0, and
/// `cfq_arm_slice_timer` returns on a nonrot queue with `hw_tag` ≠ 0 (−1
/// counts): at A's first completion (1 ms) the queue expires and B goes at
/// once. A's later reads find the disk idle: A: 0, 4, 8; B: 1.
#[test]
fn cfq_idles_slice_idle_on_a_rotating_disk_only() {
    for (rotational, b_at) in [(true, 17), (false, 1)] {
        let mut rig = Rig::be4(disk(1, rotational, 2560, cfq(!rotational, |_| {})), 2);
        rig.reader(0, 3 * MS, stride(0, 3));
        rig.submit(1, READ, 1 << 24);
        rig.drain();
        assert_eq!(rig.times_of(0), [0, 4, 8], "rotational {rotational}");
        assert_eq!(rig.times_of(1), [b_at], "rotational {rotational}");
    }
}

/// A sync request preempts an async active queue (`cfq_should_preempt`:
/// `rq_is_sync(rq) && !cfq_cfqq_sync(cfqq)`; the fix adds
/// `&& !must_dispatch`, which is clear here, so both behaviours agree).
/// Non-rotational disk (no idling). Ten async writes queued at t=0 form the
/// shared async queue, served one per ms (its slice: 40 jiffies from 1 ms;
/// the async depth (jiffies − last_delayed_sync)/slice_sync = 10 allows it).
/// A read arrives at 2.5 ms while write 2 is on the disk and write 3 waits
/// at the head of the dispatch list (`scsi_request_fn` peeked it at 2 ms):
/// the read preempts the async queue (the reader's queue goes to the front
/// of its tree, key 2 − HZ), is taken from CFQ when write 3 starts at 3 ms
/// and dispatched at 4 ms — not after the async slice. After it completes
/// (5 ms) its queue is empty and, with no idling, expires; the writes resume.
#[test]
fn cfq_sync_request_preempts_an_async_active_queue() {
    for behaviour in [CfqBehaviour::V4_4, CfqBehaviour::Fixed] {
        let mut rig = Rig::be4(disk(1, false, 2560, cfq(true, |t| t.behaviour = behaviour)), 2);
        for s in stride(0, 10) {
            rig.submit(0, WRITE, s);
        }
        rig.submit_at(2 * MS + MS / 2, 1, READ, 1 << 24);
        rig.drain();
        assert_eq!(rig.times_of(1), [4], "{behaviour:?}");
        assert_eq!(rig.times_of(0), [0, 1, 2, 3, 5, 6, 7, 8, 9, 10], "{behaviour:?}");
    }
}

// ------------------------------------------------------------------ whole scenarios

fn run_scenario(toml: &str) -> RunReport {
    let scenario = Scenario::from_toml("test.toml", toml).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scenario);
    sim.run_to_end();
    sim.report()
}

/// The starvation behind commit 3932a86b4b9d, at HZ=1000 (fifo_expire_async
/// 250 jiffies = 250 ms): a constant stream of 2 MiB sync O_DIRECT writes,
/// four in flight (each split by max_sectors_kb 1280 into two requests,
/// 2.1 ms of transfer at 1 GB/s), on an SSD of depth 32; one 4 KiB async
/// write queued at exactly 100 ms (fifo_time jiffy 350), and a task that
/// waits for it from 101 ms (`wait_io`, like `xfs_buf_lock`).
/// The device takes every sync request at once, so the sync queue empties at
/// each submission; slice_idle is 0 (nonrot) and two queues are busy, so
/// `cfq_select_queue` expires it and activates the async queue, the only
/// other busy one, after every submission (every ~2.1 ms). The next sync
/// request preempts it again (`cfq_should_preempt` rule 4).
/// 4.4: at each activation `cfq_may_dispatch` refuses (sync requests in
/// flight) before the FIFO is looked at: the write is never dispatched. At
/// the end (3 s) its Q2D is still open at 2900 ms (> 10 × 250 ms) and the
/// waiter has been blocked 2899 ms.
/// Fixed: `cfq_dispatch_request` checks the FIFO first; an expired head sets
/// `must_dispatch`, which passes `cfq_may_dispatch`. The write goes at the
/// first activation at or after 350 ms: Q2D in [250, 250 + 2.1 + a little]
/// ms; the waiter is woken at its completion.
#[test]
fn cfq_4_4_starves_an_async_write_behind_a_sync_stream_and_the_fix_bounds_it() {
    let scenario = |behaviour: &str| {
        format!(
            r#"
            schema = 1
            seed = 1
            duration = "3s"
            [kernel]
            version = "4.4"
            [machine]
            cpus = 3
            hz = 1000
            [devices.d]
            kind = "ssd"
            elevator = "cfq"
            cfq_behaviour = "{behaviour}"
            queue_depth = 32
            write_latency = "30us"
            write_bandwidth = "1GB/s"
            [[tasks]]
            name = "stream"
            cpus = "0"
            program = [{{ write = "2MiB", sync = true, wait = false, depth = 4 }}, {{ run = "20us" }}]
            [[tasks]]
            name = "flusher"
            cpus = "1"
            program = [
                {{ sleep_until = "100ms" }},
                {{ write = "4KiB", sync = false, wait = false, pattern = "random", offset = "100GiB", span = "1GiB" }},
                {{ sleep = "10s" }},
            ]
            [[tasks]]
            name = "waiter"
            cpus = "2"
            program = [{{ sleep = "101ms" }}, {{ wait_io = "flusher" }}, {{ sleep = "10s" }}]
            "#
        )
    };
    let flusher = |r: &RunReport| {
        r.io.as_ref()
            .expect("io report")
            .processes
            .iter()
            .find(|p| p.comm == "flusher")
            .expect("flusher did I/O")
            .clone()
    };
    let waiter = |r: &RunReport| r.tasks.iter().find(|t| t.name == "waiter").expect("waiter").clone();

    let old = run_scenario(&scenario("4.4"));
    let p = flusher(&old);
    assert_eq!(p.q2d.count, 0, "4.4 never dispatches the async write");
    assert_eq!(p.pending_q2d_ns, Some(2900 * MS));
    let w = waiter(&old);
    assert_eq!((w.io_wait.map(|l| l.count), w.io_wait_open_ns), (Some(0), Some(2899 * MS)));
    // The open wait is in the summaries, for every maximum that reads them.
    assert_eq!(w.io_wait.map(|l| (l.open_count, l.worst_ns())), Some((1, 2899 * MS)));
    assert_eq!((p.q2d.open_count, p.q2d.worst_ns()), (1, 2900 * MS));

    let fixed = run_scenario(&scenario("fixed"));
    let p = flusher(&fixed);
    assert_eq!((p.q2d.count, p.pending_q2d_ns), (1, None));
    assert!((250 * MS..=253 * MS).contains(&p.q2d.max_ns), "dispatched soon after its expiry: {}", p.q2d.max_ns);
    assert_eq!(p.dispatch_wait_max_ns, p.q2d.max_ns);
    assert!(2900 * MS > 10 * p.q2d.max_ns);
    let w = waiter(&fixed);
    let wait = w.io_wait.expect("the waiter was woken");
    assert_eq!(w.io_wait_open_ns, None);
    assert_eq!(wait.count, 1);
    // Woken when the write completes. Its transfer queues on the SSD's one
    // channel behind the sync requests already in flight, at most four 2 MiB
    // writes (8 MiB, 8.39 ms at 1 GB/s): D2C ≤ 8.39 ms + 34 µs.
    assert_eq!(wait.max_ns, p.q2c.max_ns - MS);
    let d2c = p.q2c.max_ns - p.q2d.max_ns;
    assert!(d2c <= 8_388_608 + 30_000 + 4096, "D2C {d2c}");
}
