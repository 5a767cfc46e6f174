//! The blk-mq path of a request queue (6.18 block/blk-mq.c, blk-mq-sched.c,
//! blk-mq-tag.c, blk-merge.c, elevator.c), chosen by the elevator name
//! (`none`, `mq-deadline`): hardware queues mapped from CPUs, tags, plugging,
//! bio and request merges, and one dispatch loop.
//!
//! A submission (one `Step::Io`, one system call) runs between
//! `blk_start_plug` and `blk_finish_plug`: each bio is first offered to the
//! plug's last request (`blk_attempt_plug_merge`), then to the scheduler
//! (`blk_mq_sched_bio_merge`; `none` has no scheduler merge here); otherwise a
//! request is allocated with a tag (`G`) and added to the plug (`P` when the
//! plug was empty). The plug is flushed (`U`, then `I` for each request) when
//! it holds `BLK_MAX_REQUEST_COUNT` requests or its last one reaches
//! `BLK_PLUG_FLUSH_SIZE`, when the submitter sleeps for a tag, and at the end
//! of the step.
//!
//! Tags: with a scheduler a request takes a scheduler tag at allocation
//! (`nr_requests` per hctx) and a driver tag at dispatch; with `none` the
//! driver tag (`nr_requests`, at most `queue_depth`) is taken at allocation.
//! Simplifications, each a statement about the model:
//! - the sbitmap wake (`sbq_wake_ptr`, `wake_batch` frees per batch of
//!   waiters) becomes: every freed tag goes at once to the first waiter of its
//!   hctx that can use it, and that waiter's submission resumes at that
//!   instant (the kernel wakes the task and it allocates when it next runs);
//! - a waiter keeps the hctx of the CPU it slept on (`blk_mq_get_tag`
//!   re-maps after a migration);
//! - `dd_limit_depth`'s shallow depth is applied to the whole map
//!   (`__map_depth_with_shallow` spreads it over the sbitmap words);
//! - CPU → hctx is `blk_mq_map_queues` over `group_cpus_evenly` on one NUMA
//!   node without SMT siblings: consecutive CPU ranges, the first
//!   `ncpus % groups` one CPU larger;
//! - `none` does not merge into requests already queued on an hctx (the
//!   per-ctx `blk_bio_list_merge`): requests leave the plug straight for the
//!   hctx dispatch list, and `I` is traced for them at unplug (the kernel
//!   traces no `I` for a request it issues directly).

use super::queue::RequestQueue;
use super::request::{Bio, Op, ReqFlags, Request, SECTOR_BYTES};
use super::{Elevator, ElvCtx};
use crate::ids::{BioId, RequestId, TaskId};
use crate::metrics::io::BlkAction;
use crate::time::SimTime;
use std::collections::VecDeque;

/// A bio's request before it has one (it waits for a tag).
pub const NO_REQUEST: RequestId = RequestId(u32::MAX);

/// `BLK_MAX_REQUEST_COUNT` (6.18 block/blk.h).
pub const BLK_MAX_REQUEST_COUNT: usize = 32;
/// `BLK_PLUG_FLUSH_SIZE` (6.18 block/blk.h): 128 KiB.
pub const BLK_PLUG_FLUSH_SIZE: u64 = 128 * 1024;
/// `BLKDEV_MIN_RQ` (6.18 include/linux/blk-mq.h).
pub const BLKDEV_MIN_RQ: u32 = 4;
/// `BLKDEV_DEFAULT_RQ`.
pub const BLKDEV_DEFAULT_RQ: u32 = 128;
/// `MAX_SCHED_RQ` (6.18 block/blk-mq-sched.h): 16 × BLKDEV_DEFAULT_RQ.
pub const MAX_SCHED_RQ: u32 = 16 * BLKDEV_DEFAULT_RQ;
/// The most hardware queues a scenario may ask for.
pub const NR_HW_QUEUES_MAX: u32 = 128;

/// `blk_mq_default_nr_requests` (6.18 block/blk-mq.h): 2 × min(queue_depth,
/// BLKDEV_DEFAULT_RQ) with a scheduler (`blk_mq_init_sched`); without one,
/// `q->nr_requests = set->queue_depth` (`elevator_switch` to none).
pub fn default_nr_requests(queue_depth: u32, sched: bool) -> u32 {
    if sched { 2 * queue_depth.min(BLKDEV_DEFAULT_RQ) } else { queue_depth }
}

/// `queue_requests_store` (6.18 blk-sysfs.c): below `BLKDEV_MIN_RQ` the
/// kernel raises the value to 4 (refused here, as other out-of-range values
/// are); above `MAX_SCHED_RQ` with a scheduler, or above `queue_depth`
/// without one, it fails with EINVAL. Returns the allowed range.
pub fn nr_requests_range(queue_depth: u32, sched: bool) -> (u32, u32) {
    (BLKDEV_MIN_RQ, if sched { MAX_SCHED_RQ } else { queue_depth })
}

/// The blk-mq settings of a device (`[devices.X] nr_hw_queues, nr_requests`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkMqSettings {
    pub nr_hw_queues: u32,
    /// `None`: `default_nr_requests`.
    pub nr_requests: Option<u32>,
}

impl Default for BlkMqSettings {
    fn default() -> Self {
        BlkMqSettings { nr_hw_queues: 1, nr_requests: None }
    }
}

/// `blk_mq_map_queues` (6.18 blk-mq-cpumap.c) over `group_cpus_evenly` on a
/// flat topology: `min(nr_queues, ncpus)` groups of consecutive CPUs; queue
/// `q` takes group `q % groups`, so with more queues than CPUs the last
/// queues assigned win.
pub fn map_queues(nr_queues: u32, ncpus: usize) -> Vec<u16> {
    let ncpus = ncpus.max(1);
    let groups = (nr_queues as usize).min(ncpus).max(1);
    let (base, extra) = (ncpus / groups, ncpus % groups);
    let mut group_of = Vec::with_capacity(ncpus);
    for g in 0..groups {
        let n = base + usize::from(g < extra);
        group_of.extend(std::iter::repeat_n(g, n));
    }
    let mut map = vec![0u16; ncpus];
    for q in 0..nr_queues as usize {
        for (cpu, &g) in group_of.iter().enumerate() {
            if g == q % groups {
                map[cpu] = q as u16;
            }
        }
    }
    map
}

/// One hardware context (`struct blk_mq_hw_ctx`).
#[derive(Clone, Debug, Default)]
pub struct Hctx {
    /// Scheduler tags in use (`hctx->sched_tags`).
    pub sched_tags: u32,
    /// Driver tags in use (`hctx->tags`).
    pub driver_tags: u32,
    /// `hctx->dispatch` (with `none`, where unplugged requests wait).
    pub dispatch: VecDeque<RequestId>,
}

/// Per request: its hctx, when it got its tag (`G`), which tags it holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct RqMq {
    pub hctx: u16,
    pub g_at: SimTime,
    pub sched_tag: bool,
    pub driver_tag: bool,
    pub in_plug: bool,
}

/// A submitter asleep in `blk_mq_get_tag`: the bio it could not get a
/// request for, and the rest of its submission.
#[derive(Clone, Copy, Debug)]
pub struct TagWaiter {
    pub task: TaskId,
    pub hctx: u16,
    pub bio: BioId,
    pub op_seq: u64,
    pub flags: ReqFlags,
    /// Next sector and sectors left after `bio`.
    pub sector: u64,
    pub left: u64,
    pub since: SimTime,
}

/// The blk-mq state of one queue.
#[derive(Clone, Debug)]
pub struct BlkMq {
    pub nr_hw_queues: u32,
    /// Tags per hctx: scheduler tags with a scheduler, driver tags without.
    pub nr_requests: u32,
    /// Driver tags per hctx (`set->queue_depth`).
    pub queue_depth: u32,
    pub has_sched: bool,
    cpu_map: Vec<u16>,
    pub hctx: Vec<Hctx>,
    /// By request id (ids are reused, so this follows the peak).
    pub rq: Vec<RqMq>,
    /// The current submission's plug (`plug->mq_list`).
    plug: Vec<RequestId>,
    pub waiters: VecDeque<TagWaiter>,
    /// Submissions (task, op_seq) whose tag wait ended (all queued), for the engine.
    pub tag_woken: Vec<(TaskId, u64)>,
    next_hctx: usize,
    /// Requests freed by a request-request merge, and tag sleeps.
    pub rq_merges: u64,
    pub tag_waits: u64,
    pub max_sched_tags_seen: u32,
}

impl BlkMq {
    pub fn new(settings: BlkMqSettings, queue_depth: u32, has_sched: bool, ncpus: usize) -> BlkMq {
        let nr_hw = settings.nr_hw_queues.clamp(1, NR_HW_QUEUES_MAX);
        let nr_requests = settings.nr_requests.unwrap_or_else(|| default_nr_requests(queue_depth, has_sched));
        BlkMq {
            nr_hw_queues: nr_hw,
            nr_requests,
            queue_depth,
            has_sched,
            cpu_map: map_queues(nr_hw, ncpus),
            hctx: vec![Hctx::default(); nr_hw as usize],
            rq: Vec::new(),
            plug: Vec::with_capacity(BLK_MAX_REQUEST_COUNT),
            waiters: VecDeque::new(),
            tag_woken: Vec::new(),
            next_hctx: 0,
            rq_merges: 0,
            tag_waits: 0,
            max_sched_tags_seen: 0,
        }
    }

    /// `blk_mq_map_queue` for a CPU.
    pub fn hctx_of_cpu(&self, cpu: usize) -> u16 {
        self.cpu_map.get(cpu).copied().unwrap_or(0)
    }

    /// Whether a request of `flags` can get a tag on `hctx` now
    /// (`blk_mq_get_tag` without sleeping); `shallow` is the scheduler's
    /// `limit_depth` for it.
    pub fn tag_free(&self, hctx: u16, shallow: Option<u32>) -> bool {
        let h = &self.hctx[hctx as usize];
        if self.has_sched {
            h.sched_tags < self.nr_requests.min(shallow.unwrap_or(u32::MAX))
        } else {
            h.driver_tags < self.nr_requests.min(self.queue_depth)
        }
    }

    fn info(&mut self, rq: RequestId) -> &mut RqMq {
        let i = rq.0 as usize;
        if self.rq.len() <= i {
            self.rq.resize(i + 1, RqMq::default());
        }
        &mut self.rq[i]
    }

    /// The next request of `none`'s hctx dispatch lists, round robin.
    fn pop_dispatch(&mut self) -> Option<RequestId> {
        let n = self.hctx.len();
        for k in 0..n {
            let h = (self.next_hctx + k) % n;
            if let Some(rq) = self.hctx[h].dispatch.pop_front() {
                self.next_hctx = (h + 1) % n;
                return Some(rq);
            }
        }
        None
    }
}

/// A blk-mq queue's settings and open waits for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MqOpen {
    pub nr_hw_queues: u32,
    pub nr_requests: u32,
    /// (count, oldest ns).
    pub q2g: (u64, u64),
    pub i2d: (u64, u64),
    pub tag_waits: u64,
}

/// What became of a bio in `submit_bio_mq`.
enum Outcome {
    Merged,
    Allocated,
    NoTag,
}

impl RequestQueue {
    /// Whether this queue runs the blk-mq path.
    pub fn is_mq(&self) -> bool {
        self.mq.is_some()
    }

    /// Switches the queue to blk-mq (called once, before any I/O, when the
    /// elevator is an mq one).
    pub fn enable_mq(&mut self, settings: BlkMqSettings, ncpus: usize) {
        let sched = !matches!(self.elevator, Elevator::MqNone);
        let mq = BlkMq::new(settings, self.device.spec.queue_depth, sched, ncpus);
        if let Elevator::MqDeadline(d) = &mut self.elevator
            && d.t.async_depth.is_none()
        {
            // dd_depth_updated: async_depth = nr_requests.
            d.t.async_depth = Some(mq.nr_requests);
        }
        if let Elevator::Kyber(k) = &mut self.elevator {
            // kyber_depth_updated (6.18): async_depth from nr_requests.
            k.depth_updated(mq.nr_requests);
        }
        self.mq = Some(Box::new(mq));
    }

    /// One submission on the blk-mq path (`submit_bio` of each split bio
    /// between `blk_start_plug` and `blk_finish_plug`). Returns true when the
    /// submitter sleeps for a tag (the rest of the submission waits with it).
    #[allow(clippy::too_many_arguments)]
    pub fn submit_mq(
        &mut self,
        now: SimTime,
        task: TaskId,
        cpu: usize,
        op_seq: u64,
        flags: ReqFlags,
        sector: u64,
        sectors: u64,
    ) -> bool {
        let hctx = self.mq.as_ref().expect("mq queue").hctx_of_cpu(cpu);
        let slept = self.submit_range(now, task, hctx, op_seq, flags, sector, sectors, None);
        // blk_finish_plug, or the flush before io_schedule (sched_submit_work).
        self.flush_plug(now);
        // Tags freed by request merges go to sleeping submitters.
        self.serve_tag_waiters(now);
        slept && self.tag_waiting(task)
    }

    /// Queues bios for `[sector, sector + left)` (after `first`, an already
    /// queued bio still needing a request); stops at the first bio without a
    /// tag and records the waiter.
    #[allow(clippy::too_many_arguments)]
    fn submit_range(
        &mut self,
        now: SimTime,
        task: TaskId,
        hctx: u16,
        op_seq: u64,
        flags: ReqFlags,
        mut sector: u64,
        mut left: u64,
        first: Option<BioId>,
    ) -> bool {
        let max = u64::from(self.device.spec.max_sectors);
        let mut pending = first;
        loop {
            let (bid, retry) = match pending.take() {
                Some(b) => (b, true),
                None => {
                    if left == 0 {
                        return false;
                    }
                    let n = left.min(max);
                    let b = self.queue_bio(now, task, op_seq, flags, sector, n as u32);
                    sector += n;
                    left -= n;
                    (b, false)
                }
            };
            // After a tag sleep the bio goes straight back to blk_mq_get_tag.
            let outcome = if retry { self.alloc(now, bid, hctx) } else { self.merge_or_alloc(now, bid, hctx) };
            if let Outcome::NoTag = outcome {
                let mq = self.mq.as_mut().expect("mq");
                mq.tag_waits += 1;
                mq.waiters.push_back(TagWaiter { task, hctx, bio: bid, op_seq, flags, sector, left, since: now });
                return true;
            }
        }
    }

    /// `Q`: a bio enters the block layer (`submit_bio_noacct`).
    fn queue_bio(&mut self, now: SimTime, task: TaskId, op_seq: u64, flags: ReqFlags, sector: u64, nr: u32) -> BioId {
        self.bios_submitted += 1;
        let op = flags.op.index();
        self.rec.queued[op] += 1;
        self.rec.queued_bytes[op] += u64::from(nr) * SECTOR_BYTES;
        self.rec.procs[task.index()].bios += 1;
        self.rec.procs[task.index()].bytes += u64::from(nr) * SECTOR_BYTES;
        self.rec.trace(now, Some(task), BlkAction::Queue, flags, sector, nr);
        let bio = Bio {
            task,
            op_seq,
            flags,
            sector,
            nr_sectors: nr,
            q_at: now,
            request: NO_REQUEST,
            merged: false,
            dispatched_before: self.rec.dispatched_total(),
        };
        BioId(self.bios.insert(bio))
    }

    /// `blk_rq_merge_ok` (6.18 blk-merge.c): same direction, mergeable
    /// (`REQ_NOMERGE` clear), same `bi_ioprio`; then where the bio fits
    /// (`blk_try_merge`): back (true) or front (false).
    fn mq_merge_ok(&self, rq: RequestId, task: TaskId, op: Op) -> bool {
        let r = self.rqs.rq(rq);
        !r.nomerge && r.flags.op == op && self.ioprio_eq(r.task, task)
    }

    pub(super) fn ioprio_eq(&self, a: TaskId, b: TaskId) -> bool {
        match &self.elevator {
            Elevator::MqDeadline(d) => d.ioprio_of(a) == d.ioprio_of(b),
            _ => true,
        }
    }

    /// `blk_mq_attempt_bio_merge`: the plug (`blk_attempt_plug_merge`: its
    /// tail request only), then the scheduler (`blk_mq_sched_bio_merge` →
    /// `dd_bio_merge` → `blk_mq_sched_try_merge`); else a new request.
    fn merge_or_alloc(&mut self, now: SimTime, bid: BioId, hctx: u16) -> Outcome {
        let b = self.bios.get(bid.0);
        let (task, flags, sector, nr) = (b.task, b.flags, b.sector, b.nr_sectors);
        let end = sector + u64::from(nr);
        let (tail, has_sched) = {
            let mq = self.mq.as_ref().expect("mq");
            (mq.plug.last().copied(), mq.has_sched)
        };
        if let Some(tail) = tail
            && self.mq_merge_ok(tail, task, flags.op)
        {
            let r = self.rqs.rq(tail);
            let front = if r.end_sector() == sector {
                Some(false)
            } else if r.sector == end {
                Some(true)
            } else {
                None
            };
            if let Some(front) = front
                && self.bio_attempt_merge(now, tail, bid, front)
            {
                return Outcome::Merged;
            }
        }
        if has_sched && let Some((rq, front)) = self.find_merge(task, flags, sector, end) {
            if self.bio_attempt_merge(now, rq, bid, front) {
                // attempt_back_merge / attempt_front_merge, else elv_merged_request.
                let merged = if front {
                    self.elv_neighbour(rq, false).and_then(|prev| self.attempt_merge(now, prev, rq))
                } else {
                    self.elv_neighbour(rq, true).and_then(|next| self.attempt_merge(now, rq, next))
                };
                if merged.is_none() {
                    self.mq_elv_merged(rq, front);
                }
                return Outcome::Merged;
            }
            return self.alloc(now, bid, hctx);
        }
        self.alloc(now, bid, hctx)
    }

    fn elv_neighbour(&self, rq: RequestId, latter: bool) -> Option<RequestId> {
        match &self.elevator {
            Elevator::MqDeadline(d) => d.neighbour(&self.rqs, rq, latter),
            _ => None,
        }
    }

    /// `elv_merged_request`: the scheduler's hook, the hash repositioned
    /// after a back merge, and `last_merge`.
    fn mq_elv_merged(&mut self, rq: RequestId, front: bool) {
        let _ = (rq, front);
        self.last_merge = Some(rq);
    }

    /// `bio_attempt_back_merge` / `bio_attempt_front_merge`: refused over
    /// `max_sectors` (`ll_back_merge_fn` sets `REQ_NOMERGE`).
    fn bio_attempt_merge(&mut self, now: SimTime, rq: RequestId, bid: BioId, front: bool) -> bool {
        let b = self.bios.get(bid.0);
        let (task, flags, sector, nr) = (b.task, b.flags, b.sector, b.nr_sectors);
        if self.rqs.rq(rq).nr_sectors + nr > self.device.spec.max_sectors {
            // req_set_nomerge: flagged, out of the hash and the merge cache.
            let r = self.rqs.rq_mut(rq);
            r.nomerge = true;
            let end = r.end_sector();
            self.hash.remove(&(end, rq.0));
            if self.last_merge == Some(rq) {
                self.last_merge = None;
            }
            return false;
        }
        let old_sector = self.rqs.rq(rq).sector;
        let old_end = self.rqs.rq(rq).end_sector();
        let r = self.rqs.rq_mut(rq);
        r.nr_sectors += nr;
        if front {
            r.bios.insert(0, bid);
            r.sector = sector;
        } else {
            r.bios.push(bid);
        }
        let bio = self.bios.get_mut(bid.0);
        bio.request = rq;
        bio.merged = true;
        self.rec.merged[flags.op.index()] += 1;
        let action = if front { BlkAction::FrontMerge } else { BlkAction::BackMerge };
        self.rec.trace(now, Some(task), action, flags, sector, nr);
        let in_sched = !self.mq.as_ref().expect("mq").rq[rq.0 as usize].in_plug;
        if in_sched {
            // elv_merged_request: dd_request_merged re-sorts a front merge;
            // elv_rqhash_reposition after a back merge.
            self.elevator.merged_request(&mut self.rqs, rq, old_sector, front);
            if !front && self.hash.remove(&(old_end, rq.0)) {
                self.hash.insert((self.rqs.rq(rq).end_sector(), rq.0));
            }
        }
        true
    }

    /// `attempt_merge` (6.18 blk-merge.c): `next` joins `req` if `req` ends
    /// where `next` starts, both are mergeable, same direction and ioprio, and
    /// the sum fits `max_sectors`; then `elv_merge_requests`
    /// (`dd_merged_requests`, hash, `last_merge = req`) and `next` is freed
    /// with its tag (`blk_mq_free_request` → `dd_finish_request`).
    fn attempt_merge(&mut self, now: SimTime, req: RequestId, next: RequestId) -> Option<RequestId> {
        let (r, n) = (self.rqs.rq(req), self.rqs.rq(next));
        if r.nomerge || n.nomerge || r.flags.op != n.flags.op || !self.ioprio_eq(r.task, n.task) {
            return None;
        }
        if r.end_sector() != n.sector || r.nr_sectors + n.nr_sectors > self.device.spec.max_sectors {
            return None;
        }
        let (next_sector, next_end, next_flags, next_nr) = (n.sector, n.end_sector(), n.flags, n.nr_sectors);
        let old_end = r.end_sector();
        let moved = std::mem::take(&mut self.rqs.rq_mut(next).bios);
        for &b in &moved {
            self.bios.get_mut(b.0).request = req;
        }
        let r = self.rqs.rq_mut(req);
        r.bios.extend(moved);
        r.nr_sectors += next_nr;
        self.rqs.rq_mut(next).nr_sectors = 0;
        self.rec.trace(now, None, BlkAction::BackMerge, next_flags, next_sector, next_nr);
        if let Elevator::MqDeadline(d) = &mut self.elevator {
            d.merged_requests(&mut self.rqs, req, next, next_sector);
            d.finish_request(&self.rqs, next);
        }
        self.hash.remove(&(next_end, next.0));
        if self.hash.remove(&(old_end, req.0)) {
            self.hash.insert((self.rqs.rq(req).end_sector(), req.0));
        }
        self.last_merge = Some(req);
        self.free_tags(next);
        self.rqs.remove(next.0);
        self.mq.as_mut().expect("mq").rq_merges += 1;
        Some(next)
    }

    /// `blk_mq_get_new_requests`: a tag on `hctx` (`G`), the request into
    /// the plug (`blk_add_rq_to_plug`: `P` when the plug was empty, a flush
    /// first at the plug's limits), or `NoTag`.
    fn alloc(&mut self, now: SimTime, bid: BioId, hctx: u16) -> Outcome {
        let b = self.bios.get(bid.0);
        let (task, flags, sector, nr) = (b.task, b.flags, b.sector, b.nr_sectors);
        let shallow = match &self.elevator {
            Elevator::MqDeadline(d) => {
                d.limit_depth(flags.op, flags.is_sync(), self.mq.as_ref().expect("mq").nr_requests)
            }
            Elevator::Kyber(k) => k.limit_depth(flags),
            _ => None,
        };
        let mq = self.mq.as_mut().expect("mq");
        if !mq.tag_free(hctx, shallow) {
            return Outcome::NoTag;
        }
        let plug_len = mq.plug.len();
        let last_big = mq.plug.last().is_some_and(|&l| self.rqs.rq(l).bytes() >= BLK_PLUG_FLUSH_SIZE);
        let rq = RequestId(self.rqs.insert(Request {
            flags,
            task,
            sector,
            nr_sectors: nr,
            bios: vec![bid],
            i_at: now,
            d_at: None,
            fifo_time: SimTime::ZERO,
            sort_key: 0,
            fifo_key: 0,
            nomerge: false,
            cfqq: None,
        }));
        self.bios.get_mut(bid.0).request = rq;
        let mq = self.mq.as_mut().expect("mq");
        let sched = mq.has_sched;
        let h = &mut mq.hctx[hctx as usize];
        if sched {
            h.sched_tags += 1;
            mq.max_sched_tags_seen = mq.max_sched_tags_seen.max(h.sched_tags);
        } else {
            h.driver_tags += 1;
        }
        *mq.info(rq) = RqMq { hctx, g_at: now, sched_tag: sched, driver_tag: !sched, in_plug: true };
        self.rec.trace(now, Some(task), BlkAction::GetRq, flags, sector, nr);
        let q_at = self.bios.get(bid.0).q_at;
        self.rec.q2g.record(now.since(q_at), now);
        if plug_len == 0 {
            self.rec.trace(now, Some(task), BlkAction::Plug, flags, sector, 0);
        } else if plug_len >= BLK_MAX_REQUEST_COUNT || last_big {
            self.flush_plug(now);
            self.rec.trace(now, Some(task), BlkAction::Plug, flags, sector, 0);
        }
        self.mq.as_mut().expect("mq").plug.push(rq);
        Outcome::Allocated
    }

    /// `blk_mq_flush_plug_list`: `U`, then each request into the scheduler
    /// (`dd_insert_requests`, after `blk_mq_sched_try_insert_merge`) or onto
    /// its hctx's dispatch list (`none`), `I` for each.
    fn flush_plug(&mut self, now: SimTime) {
        let mut plug = std::mem::take(&mut self.mq.as_mut().expect("mq").plug);
        if plug.is_empty() {
            self.mq.as_mut().expect("mq").plug = plug;
            return;
        }
        let first = self.rqs.rq(plug[0]);
        let (task, flags) = (first.task, first.flags);
        self.rec.trace(now, Some(task), BlkAction::Unplug, flags, 0, plug.len() as u32);
        let nonrot = !self.device.spec.rotational;
        for &rq in &plug {
            let mq = self.mq.as_mut().expect("mq");
            mq.info(rq).in_plug = false;
            let sched = mq.has_sched;
            let hctx = mq.rq[rq.0 as usize].hctx;
            if sched && self.insert_merge(now, rq) {
                continue;
            }
            let g_at = self.mq.as_ref().expect("mq").rq[rq.0 as usize].g_at;
            self.rec.g2i.record(now.since(g_at), now);
            let r = self.rqs.rq_mut(rq);
            r.i_at = now;
            let (t, f, s, n) = (r.task, r.flags, r.sector, r.nr_sectors);
            self.rec.trace(now, Some(t), BlkAction::Insert, f, s, n);
            if sched {
                self.hash.insert((s + u64::from(n), rq.0));
                if self.last_merge.is_none() {
                    self.last_merge = Some(rq);
                }
                let mut ctx = ElvCtx { now, rqs: &mut self.rqs, jiffy_ns: self.jiffy_ns, nonrot };
                self.elevator.add_request(&mut ctx, rq);
            } else {
                self.mq.as_mut().expect("mq").hctx[hctx as usize].dispatch.push_back(rq);
            }
        }
        plug.clear();
        self.mq.as_mut().expect("mq").plug = plug;
    }

    /// `elv_attempt_insert_merge` (6.18 elevator.c): `rq` joins `last_merge`
    /// or the hashed request ending where it starts, repeatedly.
    fn insert_merge(&mut self, now: SimTime, rq: RequestId) -> bool {
        if let Elevator::MqDeadline(d) = &mut self.elevator {
            // dd_insert_request counts it inserted before trying.
            d.count_inserted(&self.rqs, rq);
        }
        if let Some(lm) = self.last_merge
            && lm != rq
            && self.attempt_merge(now, lm, rq).is_some()
        {
            return true;
        }
        let mut cur = rq;
        let mut merged = false;
        for _ in 0..self.rqs.len() {
            let pos = self.rqs.rq(cur).sector;
            let Some(&(_, id)) = self.hash.range((pos, 0)..(pos + 1, 0)).next() else { break };
            let target = RequestId(id);
            if target == cur || self.attempt_merge(now, target, cur).is_none() {
                break;
            }
            merged = true;
            cur = target;
        }
        merged
    }

    /// Frees a request's tags (`blk_mq_free_request` / `__blk_mq_end_request`).
    fn free_tags(&mut self, rq: RequestId) {
        let mq = self.mq.as_mut().expect("mq");
        let info = mq.info(rq);
        let (h, st, dt) = (info.hctx as usize, info.sched_tag, info.driver_tag);
        *info = RqMq::default();
        if st {
            mq.hctx[h].sched_tags -= 1;
        }
        if dt {
            mq.hctx[h].driver_tags -= 1;
        }
    }

    /// The mq part of a dispatch: a driver tag for a scheduled request
    /// (`blk_mq_get_driver_tag`), and the next request to dispatch.
    pub(super) fn mq_next_request(&mut self, now: SimTime) -> Option<RequestId> {
        let mq = self.mq.as_mut()?;
        let rq = if mq.has_sched {
            let nonrot = !self.device.spec.rotational;
            let mut ctx = ElvCtx { now, rqs: &mut self.rqs, jiffy_ns: self.jiffy_ns, nonrot };
            let rq = self.elevator.dispatch_request(&mut ctx)?;
            let mq = self.mq.as_mut().expect("mq");
            let info = mq.info(rq);
            info.driver_tag = true;
            let h = info.hctx as usize;
            mq.hctx[h].driver_tags += 1;
            debug_assert!(mq.hctx[h].driver_tags <= mq.queue_depth);
            rq
        } else {
            mq.pop_dispatch()?
        };
        Some(rq)
    }

    /// Completion on the mq path: the scheduler's `finish_request`
    /// (`dd_finish_request`) and the tags back.
    pub(super) fn mq_finish(&mut self, now: SimTime, rq: RequestId) {
        match &mut self.elevator {
            Elevator::MqDeadline(d) => d.finish_request(&self.rqs, rq),
            // kyber_finish_request / kyber_completed_request, bfq_finish_requeue_request.
            Elevator::Kyber(_) | Elevator::Bfq(_) => {
                let nonrot = !self.device.spec.rotational;
                let mut ctx = ElvCtx { now, rqs: &mut self.rqs, jiffy_ns: self.jiffy_ns, nonrot };
                self.elevator.completed_request(&mut ctx, rq);
            }
            _ => {}
        }
        self.free_tags(rq);
    }

    /// Every waiter that can now get a tag resumes its submission (in wait
    /// order); those whose submission is all queued go to `tag_woken`.
    pub(super) fn serve_tag_waiters(&mut self, now: SimTime) {
        // Repeated while a pass made progress: a resumed submission may free
        // tags again (request merges) for waiters passed over earlier.
        let passes = self.mq.as_ref().expect("mq").waiters.len() + 1;
        for _ in 0..passes {
            // The waiters passed over keep their places ahead of any that
            // sleep again during this pass (prepare_to_wait_exclusive adds
            // a re-sleeping task at the tail of the sbitmap wait queue).
            let mq = self.mq.as_ref().expect("mq");
            if mq.waiters.is_empty() || (0..mq.hctx.len() as u16).all(|h| !mq.tag_free(h, None)) {
                // Nothing can run: every hctx is out of tags.
                break;
            }
            let waiting = std::mem::take(&mut self.mq.as_mut().expect("mq").waiters);
            let mut kept = std::collections::VecDeque::with_capacity(waiting.len());
            let mut progress = false;
            // An hctx found with no tag free at all stays full for the rest
            // of the pass (nothing frees a tag within it): its later waiters
            // are kept without a look, so a pass is O(waiters), not more.
            let mut full = 0u128;
            for w in waiting {
                let bit = 1u128 << (w.hctx % 128);
                if full & bit != 0 || !self.waiter_can_run(&w) {
                    if !self.mq.as_ref().expect("mq").tag_free(w.hctx, None) {
                        full |= bit;
                    }
                    kept.push_back(w);
                    continue;
                }
                progress = true;
                let slept = self.submit_range(now, w.task, w.hctx, w.op_seq, w.flags, w.sector, w.left, Some(w.bio));
                self.flush_plug(now);
                if !slept {
                    self.mq.as_mut().expect("mq").tag_woken.push((w.task, w.op_seq));
                }
            }
            let mq = self.mq.as_mut().expect("mq");
            kept.append(&mut mq.waiters);
            mq.waiters = kept;
            if !progress {
                break;
            }
        }
    }

    fn waiter_can_run(&self, w: &TagWaiter) -> bool {
        let mq = self.mq.as_ref().expect("mq");
        let shallow = match &self.elevator {
            Elevator::MqDeadline(d) => d.limit_depth(w.flags.op, w.flags.is_sync(), mq.nr_requests),
            Elevator::Kyber(k) => k.limit_depth(w.flags),
            _ => None,
        };
        mq.tag_free(w.hctx, shallow)
    }

    /// The blk-mq figures of the report: settings, and the waits still open
    /// per stage (count, oldest ns): Q2G (bios asleep for a tag), I2D
    /// (requests inserted, not dispatched).
    pub fn mq_open_waits(&self, now: SimTime) -> Option<MqOpen> {
        let mq = self.mq.as_ref()?;
        let mut q2g = (0, 0);
        for w in &mq.waiters {
            q2g = (q2g.0 + 1, u64::max(q2g.1, now.since(self.bios.get(w.bio.0).q_at)));
        }
        let mut i2d = (0, 0);
        for (id, r) in self.rqs.iter() {
            if r.d_at.is_none() && !mq.rq.get(id as usize).is_some_and(|i| i.in_plug) {
                i2d = (i2d.0 + 1, u64::max(i2d.1, now.since(r.i_at)));
            }
        }
        Some(MqOpen { nr_hw_queues: mq.nr_hw_queues, nr_requests: mq.nr_requests, q2g, i2d, tag_waits: mq.tag_waits })
    }

    /// Per tag waiter, the bios of its submission not yet queued (after the
    /// one it holds).
    pub fn tag_waiter_unqueued_bios(&self) -> impl Iterator<Item = (TaskId, u64)> + '_ {
        let max = u64::from(self.device.spec.max_sectors);
        self.mq.iter().flat_map(move |mq| mq.waiters.iter().map(move |w| (w.task, w.left.div_ceil(max))))
    }

    /// Whether `task` sleeps waiting for a tag on this queue.
    pub fn tag_waiting(&self, task: TaskId) -> bool {
        self.mq.as_ref().is_some_and(|mq| mq.waiters.iter().any(|w| w.task == task))
    }

    /// The submissions (`op_seq`) of `task` waiting for a tag.
    pub fn tag_waiting_seqs(&self, task: TaskId) -> impl Iterator<Item = u64> + '_ {
        self.mq.iter().flat_map(|mq| mq.waiters.iter()).filter(move |w| w.task == task).map(|w| w.op_seq)
    }

    /// The mq invariants: tags in use match the requests holding them and
    /// stay within their limits; in flight ≤ driver tags; no waiter could
    /// get a tag; every live request is in the plug, on a dispatch list, in
    /// the scheduler or in flight.
    pub(super) fn check_mq(&self, now: SimTime) -> Result<(), String> {
        let Some(mq) = &self.mq else { return Ok(()) };
        let name = &self.device.spec.name;
        let mut sched = vec![0u32; mq.hctx.len()];
        let mut driver = vec![0u32; mq.hctx.len()];
        let (mut in_flight, mut undispatched) = (0usize, 0usize);
        for (id, r) in self.rqs.iter() {
            let info = mq.rq.get(id as usize).copied().unwrap_or_default();
            let h = info.hctx as usize;
            sched[h] += u32::from(info.sched_tag);
            driver[h] += u32::from(info.driver_tag);
            if mq.has_sched != info.sched_tag {
                return Err(format!("{name}: request {id} scheduler tag {}", info.sched_tag));
            }
            if r.d_at.is_some() {
                in_flight += 1;
                if !info.driver_tag {
                    return Err(format!("{name}: request {id} dispatched without a driver tag"));
                }
            } else if !info.in_plug {
                undispatched += 1;
            }
            if r.bios.is_empty() {
                return Err(format!("{name}: request {id} has no bios"));
            }
            for b in &r.bios {
                let bio = self.bios.get(b.0);
                if bio.request != RequestId(id) || r.d_at.is_some_and(|d| d < bio.q_at || d > now) {
                    return Err(format!("{name}: bio {b} of request {id} out of order"));
                }
            }
        }
        for (h, hx) in mq.hctx.iter().enumerate() {
            if hx.sched_tags != sched[h] || hx.driver_tags != driver[h] {
                return Err(format!(
                    "{name}: hctx {h} counts {} sched / {} driver tags, requests hold {} / {}",
                    hx.sched_tags, hx.driver_tags, sched[h], driver[h]
                ));
            }
            if mq.has_sched && hx.sched_tags > mq.nr_requests {
                return Err(format!("{name}: hctx {h} {} sched tags > nr_requests {}", hx.sched_tags, mq.nr_requests));
            }
            if hx.driver_tags > mq.queue_depth || (!mq.has_sched && hx.driver_tags > mq.nr_requests) {
                return Err(format!("{name}: hctx {h} {} driver tags over its depth", hx.driver_tags));
            }
        }
        if in_flight != self.device.in_flight as usize || self.device.in_flight > self.device.spec.queue_depth {
            return Err(format!("{name}: {in_flight} dispatched, device holds {}", self.device.in_flight));
        }
        let listed: usize = mq.hctx.iter().map(|h| h.dispatch.len()).sum::<usize>() + self.elevator.queued();
        if listed != undispatched {
            return Err(format!("{name}: {undispatched} unplugged undispatched requests, lists hold {listed}"));
        }
        if !mq.plug.is_empty() {
            return Err(format!("{name}: a plug left unflushed between events"));
        }
        for w in &mq.waiters {
            if self.waiter_can_run(w) {
                return Err(format!("{name}: task {} waits for a tag on hctx {} while one is free", w.task, w.hctx));
            }
        }
        self.elevator.check().map_err(|e| format!("{name}: {e}"))?;
        let waiting: u64 = mq.waiters.iter().map(|w| u64::from(self.bios.get(w.bio.0).nr_sectors) * SECTOR_BYTES).sum();
        self.check_conservation(waiting)
    }
}
