//! One device's request queue (`struct request_queue`, 4.4 blk-core.c and
//! elevator.c): bios come in through `submit_bio` (`blk_queue_bio`), are merged
//! into a queued request or become a new one inserted into the elevator, and
//! `run` hands requests to the device while it has a free tag (`__blk_run_queue`
//! → `blk_peek_request` → `elevator_dispatch_fn`).
//!
//! Not modelled: plugging (`Q`, `G` and `I` happen at one instant), merging two
//! queued requests after a bio merge (`attempt_back_merge`), the
//! `nr_requests` allocation limit, and SCSI's early `D` (the kernel traces `D`
//! when it peeks a request even if the device then refuses it; here `D` is
//! when the device accepts it). The early peek itself is modelled
//! (`peeked`): the elevator gives out one request more than the device holds.

use super::device::Device;
use super::elevator::Elevator;
use super::elv_ctx::ElvCtx;
use super::blk_mq::NO_REQUEST;
use super::request::{Bio, ReqFlags, Request, Requests, SECTOR_BYTES, Slab};
use crate::event::{Event, EventQueue};
use crate::ids::{BioId, DeviceId, RequestId, TaskId};
use super::io_recorder::{BlkAction, IoRecorder};
use crate::time::SimTime;
use std::collections::BTreeSet;

/// A bio the block layer finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BioDone {
    pub task: TaskId,
    pub op_seq: u64,
}

#[derive(Clone, Debug)]
pub struct RequestQueue {
    pub id: DeviceId,
    pub device: Device,
    pub elevator: Elevator,
    pub rqs: Requests,
    pub bios: Slab<Bio>,
    /// `q->last_merge`: the one-hit merge cache.
    pub(super) last_merge: Option<RequestId>,
    /// `elv_rqhash`: queued requests by end sector, for back merges.
    pub(super) hash: BTreeSet<(u64, u32)>,
    pub rec: IoRecorder,
    pub(super) jiffy_ns: u64,
    timer_armed: Option<SimTime>,
    pub timer_generation: u32,
    /// Bios submitted and completed, and bytes merged into requests, for the invariants.
    pub bios_submitted: u64,
    pub bios_completed: u64,
    /// The request `scsi_request_fn` peeked (`blk_peek_request`: taken from
    /// the elevator onto `q->queue_head`) but could not start because
    /// `scsi_dev_queue_ready` found the device full; started first when a tag frees.
    pub peeked: Option<RequestId>,
    /// Completions the device reported from `start`/`complete`, reused so a
    /// request allocates nothing.
    device_out: Vec<(SimTime, RequestId)>,
    /// The blk-mq state when the elevator is an mq one (`enable_mq`).
    pub mq: Option<Box<super::blk_mq::BlkMq>>,
}

impl RequestQueue {
    pub fn new(id: DeviceId, device: Device, elevator: Elevator, ntasks: usize, jiffy_ns: u64) -> RequestQueue {
        RequestQueue {
            id,
            device,
            elevator,
            rqs: Requests::default(),
            bios: Slab::default(),
            last_merge: None,
            hash: BTreeSet::new(),
            rec: IoRecorder::new(ntasks),
            jiffy_ns,
            timer_armed: None,
            timer_generation: 0,
            bios_submitted: 0,
            bios_completed: 0,
            peeked: None,
            device_out: Vec::new(),
            mq: None,
        }
    }

    fn ctx(rqs: &mut Requests, now: SimTime, jiffy_ns: u64, nonrot: bool) -> ElvCtx<'_> {
        ElvCtx { now, rqs, jiffy_ns, nonrot }
    }

    /// `elv_bio_merge_ok` (4.4 elevator.c): same direction, not marked
    /// `REQ_NOMERGE`, and the elevator allows it.
    /// On blk-mq also equal ioprio (6.18 `blk_rq_merge_ok`).
    fn bio_merge_ok(&self, rq: RequestId, task: TaskId, flags: ReqFlags) -> bool {
        let r = self.rqs.rq(rq);
        !r.nomerge
            && r.flags.op == flags.op
            && (self.mq.is_none() || self.ioprio_eq(r.task, task))
            && self.elevator.allow_bio_merge(&self.rqs, rq, task, flags)
    }

    /// `elv_merge` (4.4 and 6.18 elevator.c): the `last_merge` cache (back or
    /// front, `blk_try_merge`), then the back-merge hash, then the
    /// elevator's own front-merge lookup (`elevator_merge_fn` /
    /// `request_merge`: deadline, cfq, mq-deadline, bfq; kyber's per-domain
    /// list).
    pub(super) fn find_merge(&self, task: TaskId, flags: ReqFlags, sector: u64, end: u64) -> Option<(RequestId, bool)> {
        if let Some(lm) = self.last_merge
            && self.bio_merge_ok(lm, task, flags)
        {
            let r = self.rqs.rq(lm);
            if r.end_sector() == sector {
                return Some((lm, false));
            }
            if r.sector == end {
                return Some((lm, true));
            }
        }
        if let Some(&(_, id)) = self.hash.range((sector, 0)..(sector + 1, 0)).next()
            && self.bio_merge_ok(RequestId(id), task, flags)
        {
            return Some((RequestId(id), false));
        }
        let rq = self.elevator.merge(&self.rqs, task, flags, end)?;
        self.bio_merge_ok(rq, task, flags).then_some((rq, true))
    }

    /// `Q`: a bio enters the block layer (6.18 `submit_bio_noacct`, 4.4
    /// `generic_make_request_checks`): counted, traced, and kept until it
    /// completes; its request is set when it is merged or given one.
    pub(super) fn queue_bio(&mut self, now: SimTime, task: TaskId, op_seq: u64, flags: ReqFlags, sector: u64, nr: u32) -> BioId {
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

    /// `blk_queue_bio` (4.4 blk-core.c) for one bio of at most `max_sectors`.
    #[allow(clippy::too_many_arguments)]
    pub fn submit_bio(&mut self, now: SimTime, task: TaskId, op_seq: u64, flags: ReqFlags, sector: u64, nr: u32) {
        debug_assert!(nr > 0 && nr <= self.device.spec.max_sectors);
        let op = flags.op.index();
        let bid = self.queue_bio(now, task, op_seq, flags, sector, nr);

        if let Some((rq, front)) = self.find_merge(task, flags, sector, sector + u64::from(nr)) {
            let max = self.device.spec.max_sectors;
            if self.rqs.rq(rq).nr_sectors + nr <= max {
                // bio_attempt_back_merge / bio_attempt_front_merge.
                let old_sector = self.rqs.rq(rq).sector;
                let old_end = self.rqs.rq(rq).end_sector();
                let r = self.rqs.rq_mut(rq);
                r.nr_sectors += nr;
                r.bios.push(bid);
                if front {
                    r.sector = sector;
                }
                let b = self.bios.get_mut(bid.0);
                b.request = rq;
                b.merged = true;
                self.rec.merged[op] += 1;
                let action = if front { BlkAction::FrontMerge } else { BlkAction::BackMerge };
                self.rec.trace(now, Some(task), action, flags, sector, nr);
                // elv_merged_request: the elevator's hook, the hash
                // repositioned after a back merge, and the merge cache.
                self.elevator.merged_request(&mut self.rqs, rq, old_sector, front);
                if !front {
                    self.hash.remove(&(old_end, rq.0));
                    self.hash.insert((self.rqs.rq(rq).end_sector(), rq.0));
                }
                self.last_merge = Some(rq);
                return;
            }
            // ll_back_merge_fn / ll_front_merge_fn refuse: REQ_NOMERGE.
            let r = self.rqs.rq_mut(rq);
            r.nomerge = true;
            let end = r.end_sector();
            self.hash.remove(&(end, rq.0));
            if self.last_merge == Some(rq) {
                self.last_merge = None;
            }
        }
        // get_request + init_request_from_bio, then __elv_add_request(ELEVATOR_INSERT_SORT).
        let rq = RequestId(self.rqs.insert(Request {
            flags,
            task,
            sector,
            nr_sectors: nr,
            bios: vec![bid],
            i_at: now,
            d_at: None,
            fifo_time: now,
            sort_key: 0,
            fifo_key: 0,
            nomerge: false,
            cfqq: None,
        }));
        self.bios.get_mut(bid.0).request = rq;
        self.rec.trace(now, Some(task), BlkAction::Insert, flags, sector, nr);
        self.hash.insert((sector + u64::from(nr), rq.0));
        if self.last_merge.is_none() {
            self.last_merge = Some(rq);
        }
        let nonrot = !self.device.spec.rotational;
        let mut ctx = Self::ctx(&mut self.rqs, now, self.jiffy_ns, nonrot);
        self.elevator.add_request(&mut ctx, rq);
    }

    /// `__blk_run_queue` → `scsi_request_fn` (4.4 scsi_lib.c): peek the next
    /// request (`blk_peek_request`: the one already on the dispatch list,
    /// else one from `elevator_dispatch_fn`), and only then ask
    /// `scsi_dev_queue_ready`; a full device leaves the peeked request at the
    /// head of the dispatch list, so the elevator has given out one request
    /// more than the device holds. Then (re)arm the elevator's timer.
    pub fn run(&mut self, now: SimTime, events: &mut EventQueue, comm: &dyn Fn(TaskId) -> String) {
        let nonrot = !self.device.spec.rotational;
        loop {
            // blk-mq (6.18 `__blk_mq_sched_dispatch_requests`): a request
            // leaves the scheduler only with a driver tag, so nothing is peeked.
            if self.mq.is_some() {
                if !self.device.can_accept() {
                    break;
                }
                let Some(rq) = self.mq_next_request(now) else { break };
                self.dispatch_sort(rq);
                self.dispatch(now, rq, events, comm);
                continue;
            }
            let rq = match self.peeked.take() {
                Some(rq) => rq,
                None => {
                    let mut ctx = Self::ctx(&mut self.rqs, now, self.jiffy_ns, nonrot);
                    let Some(rq) = self.elevator.dispatch_request(&mut ctx) else { break };
                    self.dispatch_sort(rq);
                    rq
                }
            };
            if !self.device.can_accept() {
                self.peeked = Some(rq);
                break;
            }
            self.dispatch(now, rq, events, comm);
        }
        self.sync_timer(events);
    }

    /// `elv_dispatch_sort`: off the merge hash and out of the merge cache.
    fn dispatch_sort(&mut self, rq: RequestId) {
        let r = self.rqs.rq(rq);
        self.hash.remove(&(r.end_sector(), rq.0));
        if self.last_merge == Some(rq) {
            self.last_merge = None;
        }
    }

    fn dispatch(&mut self, now: SimTime, rq: RequestId, events: &mut EventQueue, comm: &dyn Fn(TaskId) -> String) {
        let r = self.rqs.rq(rq);
        let (flags, sector, nr, task) = (r.flags, r.sector, r.nr_sectors, r.task);
        self.rqs.rq_mut(rq).d_at = Some(now);
        if self.mq.is_some() {
            self.rec.i2d.record(now.since(self.rqs.rq(rq).i_at), now);
        }
        self.rec.trace(now, Some(task), BlkAction::Dispatch, flags, sector, nr);
        self.rec.dispatch(now, task, flags, self.rqs.rq(rq).bytes());
        let mut worst = None;
        for &b in &self.rqs.rq(rq).bios {
            let bio = self.bios.get(b.0);
            if self.rec.bio_dispatched(bio.task, bio.flags.op.index(), now.since(bio.q_at), now) {
                worst = Some(b);
            }
        }
        if let Some(b) = worst {
            let label = self.elevator.queue_label(&self.rqs, rq, comm);
            self.rec.set_worst(self.bios.get(b.0), now, label);
        }
        self.device.start(now, rq, flags.op, sector, nr, &mut self.device_out);
        self.push_completions(events);
    }

    /// Schedules the completions the device has just made known.
    fn push_completions(&mut self, events: &mut EventQueue) {
        for &(at, request) in &self.device_out {
            events.push(at, Event::IoComplete { device: self.id, request });
        }
        self.device_out.clear();
    }

    /// The device finished `rq` (`blk_end_request` → `elv_completed_request`).
    /// Returns its bios; the caller then runs the queue.
    pub fn complete(&mut self, now: SimTime, rq: RequestId, events: &mut EventQueue) -> Vec<BioDone> {
        self.device.complete(now, rq, &mut self.device_out);
        self.push_completions(events);
        let r = self.rqs.rq(rq);
        let d_at = r.d_at.expect("completed requests were dispatched");
        assert!(r.i_at <= d_at && d_at <= now, "Q <= I <= D <= C violated for request {rq}");
        self.rec.trace(now, None, BlkAction::Complete, r.flags, r.sector, r.nr_sectors);
        self.rec.request_completed(r.flags.op.index(), r.bytes(), now.since(d_at), now);
        if self.mq.is_some() {
            // blk_mq_end_request: the scheduler's finish_request and the tags.
            self.mq_finish(now, rq);
        } else {
            let nonrot = !self.device.spec.rotational;
            let mut ctx = Self::ctx(&mut self.rqs, now, self.jiffy_ns, nonrot);
            self.elevator.completed_request(&mut ctx, rq);
        }
        let r = self.rqs.remove(rq.0);
        let mut done = Vec::with_capacity(r.bios.len());
        for b in r.bios {
            let bio = self.bios.remove(b.0);
            self.bios_completed += 1;
            self.rec.bio_completed(bio.task, now.since(bio.q_at), now);
            done.push(BioDone { task: bio.task, op_seq: bio.op_seq });
        }
        if self.mq.is_some() {
            // The freed tags resume sleeping submitters.
            self.serve_tag_waiters(now);
        }
        done
    }

    /// The device's worst wait so far, counting the oldest bio still waiting
    /// for dispatch at `now` (a Q2D not yet over).
    pub fn worst_wait(&self, now: SimTime, comm: &dyn Fn(TaskId) -> String) -> Option<super::io_recorder::WorstWait> {
        let no_rq = super::blk_mq::NO_REQUEST;
        let oldest = self
            .bios
            .iter()
            .filter(|(_, b)| b.request == no_rq || self.rqs.rq(b.request).d_at.is_none())
            .min_by_key(|(id, b)| (b.q_at, *id));
        let label = |b: &super::request::Bio| {
            if b.request == no_rq {
                "tag wait".to_string()
            } else {
                self.elevator.queue_label(&self.rqs, b.request, comm)
            }
        };
        let open = oldest.map(|(_, b)| (b, label(b)));
        self.rec.worst_or_open(open, now)
    }

    /// The elevator's timer event; false if it was re-armed or cancelled since.
    pub fn timer(&mut self, now: SimTime, generation: u32) -> bool {
        if generation != self.timer_generation || self.timer_armed.is_none() {
            return false;
        }
        self.timer_armed = None;
        let nonrot = !self.device.spec.rotational;
        let mut ctx = Self::ctx(&mut self.rqs, now, self.jiffy_ns, nonrot);
        self.elevator.timer(&mut ctx);
        true
    }

    fn sync_timer(&mut self, events: &mut EventQueue) {
        let want = self.elevator.timer_at();
        if want != self.timer_armed {
            self.timer_armed = want;
            self.timer_generation = self.timer_generation.wrapping_add(1);
            if let Some(at) = want {
                events.push(at, Event::IoTimer { device: self.id, generation: self.timer_generation });
            }
        }
    }

    /// Whether an `IoTimer` event is still the armed one.
    pub fn timer_is_current(&self, generation: u32) -> bool {
        self.timer_armed.is_some() && generation == self.timer_generation
    }

    /// Checks the queue's invariants: the device holds at most `queue_depth`
    /// requests, every live request is either queued in the elevator or in
    /// flight, timestamps are ordered, and a request's bytes are its bios' bytes.
    pub fn check(&self, now: SimTime) -> Result<(), String> {
        if self.mq.is_some() {
            return self.check_mq(now);
        }
        let name = &self.device.spec.name;
        if self.device.in_flight > self.device.spec.queue_depth {
            return Err(format!(
                "{name}: {} in flight, queue depth {}",
                self.device.in_flight, self.device.spec.queue_depth
            ));
        }
        let in_flight = self.rqs.iter().filter(|(_, r)| r.d_at.is_some()).count();
        if in_flight != self.device.in_flight as usize {
            return Err(format!("{name}: {in_flight} dispatched requests, device says {}", self.device.in_flight));
        }
        let queued = self.rqs.len() - in_flight - usize::from(self.peeked.is_some());
        if queued != self.elevator.queued() {
            return Err(format!("{name}: {queued} undispatched requests, elevator holds {}", self.elevator.queued()));
        }
        for (id, r) in self.rqs.iter() {
            let sectors: u64 = r.bios.iter().map(|b| u64::from(self.bios.get(b.0).nr_sectors)).sum();
            if sectors != u64::from(r.nr_sectors) {
                return Err(format!("{name}: request {id} has {} sectors but its bios {sectors}", r.nr_sectors));
            }
            for b in &r.bios {
                let bio = self.bios.get(b.0);
                let ordered = bio.q_at <= r.i_at.max(bio.q_at) && r.d_at.is_none_or(|d| bio.q_at <= d && d <= now);
                if !ordered || bio.request != RequestId(id) {
                    return Err(format!(
                        "{name}: bio {b} of request {id} out of order (Q {} D {:?})",
                        bio.q_at.ns(),
                        r.d_at
                    ));
                }
            }
            if r.i_at > now {
                return Err(format!("{name}: request {id} inserted in the future"));
            }
        }
        self.elevator.check().map_err(|e| format!("{name}: {e}"))?;
        self.check_conservation(0)?;
        // deadline: an expired FIFO head is dispatched within the current
        // batch, `writes_starved` batches of the other direction and its own
        // batch's first slot, each dispatch waiting at most one service time
        // for a tag, plus a drain of the device's queue and a jiffy of expiry
        // granularity.
        if let Elevator::Deadline(d) = &self.elevator {
            let dispatches = u64::from(d.t.writes_starved + 1) * u64::from(d.t.fifo_batch.max(1))
                + u64::from(self.device.spec.queue_depth)
                + 1;
            let bound = dispatches * self.device.max_service_ns() + self.jiffy_ns;
            if d.lateness_max_ns > bound {
                return Err(format!(
                    "{name}: deadline dispatched an expired FIFO head {} ns late; bound {bound} ns",
                    d.lateness_max_ns
                ));
            }
        }
        Ok(())
    }

    /// Both paths: merged bytes are conserved (what was queued is completed,
    /// live in a request, or `waiting` in bios not yet given a request), and
    /// every bio submitted is completed or live.
    pub(super) fn check_conservation(&self, waiting: u64) -> Result<(), String> {
        let name = &self.device.spec.name;
        let live: u64 = self.rqs.iter().map(|(_, r)| r.bytes()).sum();
        let queued = self.rec.queued_bytes[0] + self.rec.queued_bytes[1];
        let completed = self.rec.completed_bytes[0] + self.rec.completed_bytes[1];
        if queued != completed + live + waiting {
            return Err(format!(
                "{name}: {queued} bytes queued but {completed} completed + {live} live + {waiting} waiting"
            ));
        }
        if self.bios.len() as u64 != self.bios_submitted - self.bios_completed {
            return Err(format!(
                "{name}: {} live bios, {} submitted, {} completed",
                self.bios.len(),
                self.bios_submitted,
                self.bios_completed
            ));
        }
        Ok(())
    }
}
