//! The merges of the blk-mq path (6.18 block/blk-merge.c and elevator.c's
//! merge helpers): a bio into the plug's tail request or a scheduled one
//! (`blk_mq_attempt_bio_merge`), two requests into one (`attempt_merge`),
//! and a request into a queued one as it is inserted
//! (`elv_attempt_insert_merge`).

use super::blk_mq::Outcome;
use super::elevator::Elevator;
use super::elv_ctx::ElvCtx;
use super::queue::RequestQueue;
use super::request::Op;
use crate::ids::{BioId, RequestId, TaskId};
use super::io_recorder::BlkAction;
use crate::time::SimTime;

impl RequestQueue {
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
    pub(super) fn merge_or_alloc(&mut self, now: SimTime, bid: BioId, hctx: u16) -> Outcome {
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
            Elevator::Bfq(b) => b.neighbour(&self.rqs, rq, latter),
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
        match &mut self.elevator {
            Elevator::MqDeadline(d) => {
                d.merged_requests(&mut self.rqs, req, next, next_sector);
                d.finish_request(&self.rqs, next);
            }
            Elevator::Bfq(b) => {
                let nonrot = !self.device.spec.rotational;
                let mut ctx = ElvCtx { now, rqs: &mut self.rqs, jiffy_ns: self.jiffy_ns, nonrot };
                b.requests_merged(&mut ctx, req, next);
            }
            _ => {}
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

    /// `elv_attempt_insert_merge` (6.18 elevator.c): `rq` joins `last_merge`
    /// or the hashed request ending where it starts, repeatedly.
    pub(super) fn insert_merge(&mut self, now: SimTime, rq: RequestId) -> bool {
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
}
