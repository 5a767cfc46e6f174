//! mq-deadline (6.18) and the blk-mq core pinned against dispatch orders
//! derived by hand from block/mq-deadline.c, blk-mq.c and blk-merge.c.
//!
//! The disk serves a 4 KiB request in exactly 1 ms at queue depth 1 (999 µs
//! of latency, 1 µs of transfer) and HZ is 1000, so dispatch `k` of a busy
//! queue happens at `k` ms and `jiffies == k`. Every submission is one
//! `submit_mq` (one plug), made at the instant given, from CPU 0.

use super::*;
use crate::block::blk_mq::BlkMqSettings;
use crate::block::device::{Device, DeviceKind, DeviceSpec};
use crate::block::queue::RequestQueue;
use crate::block::request::ReqFlags;
use crate::block::{Elevator, ElevatorSpec};
use crate::event::{Event, EventQueue};
use crate::ids::{DeviceId, TaskId};
use crate::block::io_recorder::BlkAction;
use crate::rng::SimRng;
use crate::sched::tunables::tick_nsec;
use crate::time::SimTime;

const MS: u64 = 1_000_000;
const HZ: u32 = 1000;
const READ: ReqFlags = ReqFlags { op: Op::Read, sync: true, meta: false, prio: false };
const WRITE: ReqFlags = ReqFlags { op: Op::Write, sync: false, meta: false, prio: false };
const BE4: Ioprio = Ioprio { class: IoprioClass::Be, level: 4 };

fn disk(depth: u32, max_sectors: u32, elevator: ElevatorSpec) -> DeviceSpec {
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
        rotational: false,
        max_sectors,
        elevator,
        dev_t: (8, 0),
    }
}

struct MqRig {
    q: RequestQueue,
    events: EventQueue,
    now: SimTime,
    seq: u64,
    /// (task, sector, dispatch ms) in completion order.
    served: Vec<(u32, u64, u64)>,
}

impl MqRig {
    fn new(spec: DeviceSpec, prios: Vec<Ioprio>, settings: BlkMqSettings) -> MqRig {
        let mut elevator = Elevator::new(&spec.elevator, Vec::new(), HZ, tick_nsec(HZ));
        elevator.set_task_ioprio(prios.clone());
        let device = Device::new(spec, SimRng::new(1).stream("d"));
        let mut q = RequestQueue::new(DeviceId(0), device, elevator, prios.len(), tick_nsec(HZ));
        q.enable_mq(settings, 1);
        MqRig { q, events: EventQueue::new(), now: SimTime::ZERO, seq: 0, served: Vec::new() }
    }

    fn dd(t: MqDeadlineTunables, depth: u32, prios: Vec<Ioprio>) -> MqRig {
        let settings = BlkMqSettings { nr_hw_queues: 1, nr_requests: Some(64) };
        MqRig::new(disk(depth, 2560, ElevatorSpec::MqDeadline(t)), prios, settings)
    }

    fn run(&mut self) {
        self.q.run(self.now, &mut self.events, &|t| format!("t{}", t.0));
        self.q.check(self.now).unwrap_or_else(|e| panic!("at {} ns: {e}", self.now.ns()));
    }

    /// One submission of `sectors` (one plug); true if it sleeps for a tag.
    fn submit(&mut self, task: u32, flags: ReqFlags, sector: u64, sectors: u64) -> bool {
        self.seq += 1;
        let slept = self.q.submit_mq(self.now, TaskId(task), 0, self.seq, flags, sector, sectors);
        self.run();
        slept
    }

    fn drain(&mut self) {
        for _ in 0..10_000 {
            let Some((at, ev)) = self.events.pop() else { break };
            self.now = at;
            let Event::IoComplete { request, .. } = ev else { panic!("unexpected {ev:?}") };
            let r = self.q.rqs.rq(request);
            self.served.push((r.task.0, r.sector, r.d_at.expect("dispatched").ns() / MS));
            self.q.complete(self.now, request, &mut self.events);
            self.run();
        }
        assert_eq!(self.q.elevator.queued(), 0);
        assert_eq!(self.q.device.in_flight, 0);
    }

    fn order(&self) -> Vec<(u64, u64)> {
        self.served.iter().map(|&(_, s, d)| (s, d)).collect()
    }
}

fn tunables(f: impl FnOnce(&mut MqDeadlineTunables)) -> MqDeadlineTunables {
    let mut t = MqDeadlineTunables::defaults(HZ);
    f(&mut t);
    t
}

#[test]
fn read_expiry_beats_sort_order() {
    // fifo_batch 1: every dispatch starts a batch and looks at the FIFO.
    // read_expire 3 ms: B (sector 0, queued at 0) expires at jiffy 3.
    // 0: A (8000) dispatched at once; latest_pos = 8000.
    // 1, 2: not expired → deadline_from_pos(8000): C1 9000, C2 10000.
    // 3: jiffies 3 >= fifo_time 3 → the FIFO head B, though sector 0 is behind.
    // 4..6: from_pos(0): C3, C4, C5.
    let t = tunables(|t| {
        t.read_expire_j = 3;
        t.fifo_batch = 1;
    });
    let mut rig = MqRig::dd(t, 1, vec![BE4; 3]);
    rig.submit(0, READ, 8000, 8);
    rig.submit(1, READ, 0, 8);
    for s in [9000, 10000, 11000, 12000, 13000] {
        rig.submit(2, READ, s, 8);
    }
    rig.drain();
    assert_eq!(rig.order(), vec![(8000, 0), (9000, 1), (10000, 2), (0, 3), (11000, 4), (12000, 5), (13000, 6)]);
}

#[test]
fn writes_starved_lets_a_write_through_every_third_batch() {
    // fifo_batch 1, writes_starved 2. W1 goes at 0 (device idle). Then at
    // each new batch with reads and writes queued: `starved++ >= 2` lets
    // reads through twice and a write the third time (starved = 0).
    // 1: R1 (starved 0→1), 2: R2 (1→2), 3: W2 (2>=2), 4: R3, 5: R4, 6: W3,
    // 7: R5, 8: W4 (only writes left).
    let t = tunables(|t| t.fifo_batch = 1);
    let mut rig = MqRig::dd(t, 1, vec![BE4; 2]);
    rig.submit(1, WRITE, 100_000, 8);
    for s in [0, 1000, 2000, 3000, 4000] {
        rig.submit(0, READ, s, 8);
    }
    for s in [200_000, 300_000, 400_000] {
        rig.submit(1, WRITE, s, 8);
    }
    rig.drain();
    assert_eq!(
        rig.order(),
        vec![
            (100_000, 0),
            (0, 1),
            (1000, 2),
            (200_000, 3),
            (2000, 4),
            (3000, 5),
            (300_000, 6),
            (4000, 7),
            (400_000, 8)
        ]
    );
}

#[test]
fn fifo_batch_defers_an_expired_read_to_the_next_batch() {
    // fifo_batch 4, read_expire 2 ms. A (1000) at 0 starts a batch
    // (batching 1); C1..C3 continue it in sector order (batching 4 at 3 ms)
    // although B (sector 0) expired at jiffy 2: expiry is looked at only
    // when a batch starts. 4: new batch, B expired → B. 5..7: C4..C6.
    let t = tunables(|t| {
        t.read_expire_j = 2;
        t.fifo_batch = 4;
    });
    let mut rig = MqRig::dd(t, 1, vec![BE4; 3]);
    rig.submit(0, READ, 1000, 8);
    rig.submit(1, READ, 0, 8);
    for s in [2000, 3000, 4000, 5000, 6000, 7000] {
        rig.submit(2, READ, s, 8);
    }
    rig.drain();
    assert_eq!(rig.order(), vec![(1000, 0), (2000, 1), (3000, 2), (4000, 3), (0, 4), (5000, 5), (6000, 6), (7000, 7)]);
}

#[test]
fn idle_class_waits_for_rt_until_prio_aging_expires() {
    // Task 0 is rt/0, task 1 idle; prio_aging_expire 5 ms.
    // 0: R0 (500) at once. I (idle, sector 0) queued at 0, fifo start 0.
    // 1..4: RT has requests (dd_queued > 0), so IDLE is not looked at in
    // the class loop; dd_dispatch_prio_aged_requests refuses I while its
    // start (0) is after now − 5.
    // 5: now − 5 = 0, I started at 0, not after → I goes ahead of R5.
    let t = tunables(|t| t.prio_aging_expire_j = 5);
    let rt = Ioprio { class: IoprioClass::Rt, level: 0 };
    let idle = Ioprio { class: IoprioClass::Idle, level: 7 };
    let mut rig = MqRig::dd(t, 1, vec![rt, idle]);
    rig.submit(0, READ, 500, 8);
    rig.submit(1, READ, 0, 8);
    for k in 1..=8 {
        rig.submit(0, READ, 1000 * k, 8);
    }
    rig.drain();
    let order = rig.order();
    assert_eq!(&order[..6], &[(500, 0), (1000, 1), (2000, 2), (3000, 3), (4000, 4), (0, 5)]);
    assert_eq!(&order[6..], &[(5000, 6), (6000, 7), (7000, 8), (8000, 9)]);
}

#[test]
fn without_aging_a_lower_class_waits_for_the_higher_one_to_drain() {
    // Same, with prio_aging_expire 10 s: I goes last, at 9 ms.
    let rt = Ioprio { class: IoprioClass::Rt, level: 0 };
    let be = BE4;
    let mut rig = MqRig::dd(MqDeadlineTunables::defaults(HZ), 1, vec![rt, be]);
    rig.submit(0, READ, 500, 8);
    rig.submit(1, READ, 0, 8);
    for k in 1..=8 {
        rig.submit(0, READ, 1000 * k, 8);
    }
    rig.drain();
    assert_eq!(rig.order().last(), Some(&(0, 9)));
}

#[test]
fn a_submission_without_tags_sleeps_and_resumes_as_tags_free() {
    // nr_requests 4 (BLKDEV_MIN_RQ), max_sectors 8: a 48-sector read is 6
    // bios. Bios 1–4 get tags (G ×4, P once), bio 5 finds none: the plug is
    // flushed (U depth 4, I ×4) and the task sleeps. Depth 1: bio 1 is
    // dispatched at 0 and completes at 1 ms; its tag goes to bio 5, then
    // bio 2's (2 ms) to bio 6: the submission is all queued at 2 ms.
    let settings = BlkMqSettings { nr_hw_queues: 1, nr_requests: Some(4) };
    let spec = disk(1, 8, ElevatorSpec::MqDeadline(MqDeadlineTunables::defaults(HZ)));
    let mut rig = MqRig::new(spec, vec![BE4], settings);
    assert!(rig.submit(0, READ, 0, 48), "the fifth bio finds no tag");
    assert!(rig.q.tag_waiting(TaskId(0)));
    let actions: String = rig.q.rec.ring().map(|e| e.action.code()).collect();
    assert_eq!(actions, "QGPQGQGQGQUIIIID");
    // Bio 1 completes at 1 ms: bio 5 gets its tag, the task still sleeps.
    let (at, Event::IoComplete { request, .. }) = rig.events.pop().unwrap() else { panic!() };
    rig.now = at;
    rig.q.complete(at, request, &mut rig.events);
    rig.run();
    assert!(rig.q.tag_waiting(TaskId(0)));
    let (at, Event::IoComplete { request, .. }) = rig.events.pop().unwrap() else { panic!() };
    rig.now = at;
    rig.q.complete(at, request, &mut rig.events);
    rig.run();
    assert_eq!(at.ns(), 2 * MS);
    assert!(!rig.q.tag_waiting(TaskId(0)));
    assert_eq!(
        rig.q.mq.as_ref().unwrap().tag_woken,
        vec![(TaskId(0), 1)],
        "the first submission (op_seq 1) is all queued"
    );
    rig.drain();
    // Sequential bios in separate requests (max_sectors 8 forbids merging),
    // dispatched in sector order, one per ms (0 and 8 completed above).
    assert_eq!(rig.order(), vec![(16, 2), (24, 3), (32, 4), (40, 5)]);
    assert_eq!(rig.q.mq.as_ref().unwrap().max_sched_tags_seen, 4);
    // btt's Q2G: bios 1–4 at once; bio 5 queued at 0, its tag at 1 ms; bio 6
    // queued only when the submission resumed (1 ms), its tag at 2 ms.
    assert_eq!(rig.q.rec.q2g.count(), 6);
    assert_eq!(rig.q.rec.q2g.max_ns(), MS);
    assert_eq!(rig.q.mq.as_ref().unwrap().tag_waits, 2);
}

#[test]
fn plug_and_scheduler_merges_conserve_bytes() {
    // max_sectors 32, depth 1. 0..16: Q G P U I, dispatched at once (D).
    // 24..32: nothing to merge with (the first is on the device): its own
    // request, which becomes `last_merge`. 32..40: `last_merge` ends at 32:
    // back merge (M). 16..24 ends where `last_merge` starts: front merge (F),
    // 16..40 = 24 sectors ≤ 32.
    let settings = BlkMqSettings { nr_hw_queues: 1, nr_requests: None };
    let spec = disk(1, 32, ElevatorSpec::MqDeadline(MqDeadlineTunables::defaults(HZ)));
    let mut rig = MqRig::new(spec, vec![BE4], settings);
    rig.submit(0, WRITE, 0, 16);
    rig.submit(0, WRITE, 24, 8);
    rig.submit(0, WRITE, 32, 8);
    rig.submit(0, WRITE, 16, 8);
    let actions: String = rig.q.rec.ring().map(|e| e.action.code()).collect();
    assert_eq!(actions, "QGPUIDQGPUIQMQF");
    rig.drain();
    // Two requests: 0..16 and 16..40 (3 bios, 24 sectors).
    assert_eq!(rig.served.iter().map(|s| s.1).collect::<Vec<_>>(), vec![0, 16]);
    assert_eq!(rig.q.rec.completed_bytes[1], 40 * 512);
    assert_eq!(rig.q.rec.merged[1], 2);
}

#[test]
fn back_merge_then_request_merge_frees_a_tag() {
    // Queued (device busy with X): A = 0..8 and C = 16..24. A bio 8..16
    // back-merges into A (hash on sector 8), then attempt_back_merge finds
    // C next in the sort tree, starting where A now ends: C joins A and its
    // scheduler tag is freed (`dd_merged_requests`).
    let settings = BlkMqSettings { nr_hw_queues: 1, nr_requests: Some(64) };
    let spec = disk(1, 64, ElevatorSpec::MqDeadline(MqDeadlineTunables::defaults(HZ)));
    let mut rig = MqRig::new(spec, vec![BE4], settings);
    rig.submit(0, READ, 100_000, 8);
    rig.submit(0, READ, 0, 8);
    rig.submit(0, READ, 16, 8);
    let actions: Vec<String> = rig.q.rec.ring().map(|e| format!("{}{}", e.action.code(), e.sector)).collect();
    assert_eq!(rig.q.mq.as_ref().unwrap().hctx[0].sched_tags, 3, "{actions:?}");
    rig.submit(0, READ, 8, 8);
    assert_eq!(rig.q.mq.as_ref().unwrap().hctx[0].sched_tags, 2);
    assert_eq!(rig.q.mq.as_ref().unwrap().rq_merges, 1);
    rig.drain();
    assert_eq!(rig.served.iter().map(|s| s.1).collect::<Vec<_>>(), vec![100_000, 0]);
    assert_eq!(rig.q.rec.completed_bytes[0], 32 * 512);
}

#[test]
fn none_dispatches_in_plug_order_and_limits_driver_tags() {
    // none, queue_depth 2, nr_requests default = queue_depth: two driver
    // tags. Three one-bio submissions: the third sleeps for a tag until the
    // first completes at 1 ms (the SSD overlaps latencies: both first
    // requests complete at 1 ms and 1 ms + 1 µs).
    let settings = BlkMqSettings { nr_hw_queues: 1, nr_requests: None };
    let mut rig = MqRig::new(disk(2, 2560, ElevatorSpec::MqNone), vec![BE4; 3], settings);
    assert!(!rig.submit(0, READ, 5000, 8));
    assert!(!rig.submit(1, READ, 0, 8));
    assert!(rig.submit(2, READ, 900, 8));
    rig.drain();
    assert_eq!(rig.served.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(), vec![(0, 5000), (1, 0), (2, 900)]);
}

#[test]
fn sysfs_ranges_and_defaults() {
    let mut t = MqDeadlineTunables::defaults(250);
    assert_eq!(
        t.sysfs(250, 64),
        vec![
            ("read_expire", 500),
            ("write_expire", 5000),
            ("writes_starved", 2),
            ("front_merges", 1),
            ("async_depth", 64),
            ("fifo_batch", 16),
            ("prio_aging_expire", 10_000)
        ]
    );
    assert!(t.set("front_merges", 2, 250).unwrap_err().contains("0 to 1"));
    assert!(t.set("async_depth", 0, 250).unwrap_err().contains("1 to 2147483647"));
    assert!(t.set("quantum", 1, 250).unwrap_err().contains("prio_aging_expire"));
    // msecs_to_jiffies rounds up: 3 ms at HZ 250 is 1 jiffy, shown as 4 ms.
    t.set("read_expire", 3, 250).unwrap();
    assert_eq!(t.read_expire_j, 1);
    assert_eq!(crate::block::blk_mq::default_nr_requests(32, true), 64);
    assert_eq!(crate::block::blk_mq::default_nr_requests(1024, true), 256);
    assert_eq!(crate::block::blk_mq::default_nr_requests(32, false), 32);
}

#[test]
fn cpus_map_to_hardware_queues_in_even_ranges() {
    use crate::block::blk_mq::map_queues;
    // 8 CPUs, 3 queues: groups of 3, 3, 2.
    assert_eq!(map_queues(3, 8), vec![0, 0, 0, 1, 1, 1, 2, 2]);
    assert_eq!(map_queues(1, 4), vec![0; 4]);
    // More queues than CPUs: queue q takes group q % 2, the last one wins.
    assert_eq!(map_queues(4, 2), vec![2, 3]);
    let _ = BlkAction::Plug;
}
