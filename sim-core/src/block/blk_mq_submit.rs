//! The blk-mq path of a `RequestQueue` (6.18 block/blk-mq.c, blk-mq-sched.c,
//! blk-mq-tag.c): switching a queue to it, a submission through the plug,
//! tags and the submitters asleep for one, dispatch and completion, the
//! figures of the report and the invariants. `blk_mq.rs` describes the
//! model and holds its state; merges are in `blk_mq_merge.rs`.

use super::blk_mq::{
    BLK_MAX_REQUEST_COUNT, BLK_PLUG_FLUSH_SIZE, BlkMq, BlkMqSettings, MqOpen, Outcome, RqMq, TagWaiter,
};
use super::elevator::Elevator;
use super::elv_ctx::ElvCtx;
use super::queue::RequestQueue;
use super::request::{ReqFlags, Request, SECTOR_BYTES};
use crate::ids::{BioId, RequestId, TaskId};
use super::io_recorder::BlkAction;
use crate::time::SimTime;

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

    /// `blk_mq_get_new_requests`: a tag on `hctx` (`G`), the request into
    /// the plug (`blk_add_rq_to_plug`: `P` when the plug was empty, a flush
    /// first at the plug's limits), or `NoTag`.
    pub(super) fn alloc(&mut self, now: SimTime, bid: BioId, hctx: u16) -> Outcome {
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

    /// Frees a request's tags (`blk_mq_free_request` / `__blk_mq_end_request`).
    pub(super) fn free_tags(&mut self, rq: RequestId) {
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
