//! The deadline elevator (4.4 block/deadline-iosched.c): per data direction a
//! sector-sorted tree and a FIFO of expiry times; batches of up to
//! `fifo_batch` requests in sector order; reads preferred unless writes have
//! been passed over `writes_starved` times; an expired FIFO head restarts the
//! batch, but expiry is only looked at when a new batch starts.

use super::elv_ctx::ElvCtx;
use super::request::{Op, Requests, elv_rb_neighbour};
use crate::ids::RequestId;
use crate::time::SimTime;
use std::collections::BTreeMap;

/// The sysfs tunables (`/sys/block/<dev>/queue/iosched/*`), as the kernel keeps
/// them: expiries in jiffies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlineTunables {
    /// `fifo_expire[READ]`, jiffies (`read_expire` in ms via `msecs_to_jiffies`).
    pub read_expire_j: u64,
    /// `fifo_expire[WRITE]`, jiffies.
    pub write_expire_j: u64,
    pub writes_starved: u32,
    pub front_merges: bool,
    pub fifo_batch: u32,
}

/// deadline's files under `/sys/block/<dev>/queue/iosched/` in 4.4.
pub const DEADLINE_TUNABLES: &[&str] = &["read_expire", "write_expire", "writes_starved", "front_merges", "fifo_batch"];

impl DeadlineTunables {
    /// Sets a tunable by its sysfs name (expiries in ms, stored in jiffies).
    pub fn set(&mut self, name: &str, value: u64, hz: u32) -> Result<(), String> {
        let small = |v: u64| v.min(u64::from(u32::MAX)) as u32;
        match name {
            "read_expire" => self.read_expire_j = super::cfq_tunables::msecs_to_jiffies(value, hz),
            "write_expire" => self.write_expire_j = super::cfq_tunables::msecs_to_jiffies(value, hz),
            "writes_starved" => self.writes_starved = small(value),
            "front_merges" => {
                if value > 1 {
                    return Err("`front_merges` is 0 or 1".into());
                }
                self.front_merges = value == 1;
            }
            // 4.4 accepts 0..INT_MAX: 0 starts a new batch at every dispatch.
            "fifo_batch" => self.fifo_batch = small(value),
            _ => return Err(format!("unknown deadline tunable `{name}`; allowed: {}", DEADLINE_TUNABLES.join(", "))),
        }
        Ok(())
    }

    /// `deadline_init_queue` defaults: read_expire HZ/2, write_expire 5·HZ.
    pub fn defaults(hz: u32) -> DeadlineTunables {
        let hz = u64::from(hz);
        DeadlineTunables {
            read_expire_j: hz / 2,
            write_expire_j: 5 * hz,
            writes_starved: 2,
            front_merges: true,
            fifo_batch: 16,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Deadline {
    pub t: DeadlineTunables,
    /// `sort_list[dir]`: keyed by (sector, insertion order), as `elv_rb_add`
    /// puts an equal sector to the right.
    sort_list: [BTreeMap<(u64, u64), RequestId>; 2],
    /// `fifo_list[dir]`: by insertion order, which is expiry order.
    fifo_list: [BTreeMap<u64, RequestId>; 2],
    /// `next_rq[dir]`: the sector successor of the last dispatch.
    next_rq: [Option<RequestId>; 2],
    batching: u32,
    starved: u32,
    sort_seq: u64,
    /// When each FIFO's current head became the head (for the invariant).
    head_since: [SimTime; 2],
    /// The longest a FIFO head waited past its expiry before dispatch.
    pub lateness_max_ns: u64,
}

impl Deadline {
    pub fn new(t: DeadlineTunables) -> Deadline {
        Deadline {
            t,
            sort_list: [BTreeMap::new(), BTreeMap::new()],
            fifo_list: [BTreeMap::new(), BTreeMap::new()],
            next_rq: [None, None],
            batching: 0,
            starved: 0,
            sort_seq: 0,
            head_since: [SimTime::ZERO; 2],
            lateness_max_ns: 0,
        }
    }

    fn add_rq_rb(&mut self, rqs: &mut Requests, rq: RequestId) {
        self.sort_seq += 1;
        let r = rqs.rq_mut(rq);
        r.sort_key = self.sort_seq;
        self.sort_list[r.flags.op.index()].insert((r.sector, r.sort_key), rq);
    }

    fn del_rq_rb(&mut self, rqs: &Requests, rq: RequestId) {
        let r = rqs.rq(rq);
        let dir = r.flags.op.index();
        if self.next_rq[dir] == Some(rq) {
            self.next_rq[dir] = self.latter_request(rqs, rq);
        }
        self.sort_list[dir].remove(&(r.sector, r.sort_key));
    }

    /// `deadline_latter_request`: the next request in sector order (no wrap).
    fn latter_request(&self, rqs: &Requests, rq: RequestId) -> Option<RequestId> {
        let r = rqs.rq(rq);
        let key = (r.sector, r.sort_key);
        elv_rb_neighbour(&self.sort_list[r.flags.op.index()], key, true)
    }

    /// `deadline_add_request`: into the sort tree, and onto the FIFO with
    /// `fifo_time = jiffies + fifo_expire[dir]`.
    pub fn add_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        self.add_rq_rb(ctx.rqs, rq);
        let dir = ctx.rqs.rq(rq).flags.op;
        let expire = if dir == Op::Read { self.t.read_expire_j } else { self.t.write_expire_j };
        self.sort_seq += 1;
        let fifo_time = SimTime((ctx.jiffies() + expire) * ctx.jiffy_ns);
        let r = ctx.rqs.rq_mut(rq);
        r.fifo_time = fifo_time;
        r.fifo_key = self.sort_seq;
        if self.fifo_list[dir.index()].is_empty() {
            self.head_since[dir.index()] = ctx.now;
        }
        self.fifo_list[dir.index()].insert(r.fifo_key, rq);
    }

    /// `deadline_merge`: a front-merge candidate, the request starting where
    /// the bio ends, in the bio's direction (only with `front_merges`).
    pub fn merge(&self, rqs: &Requests, op: Op, bio_end: u64) -> Option<RequestId> {
        if !self.t.front_merges {
            return None;
        }
        let (_, &id) = self.sort_list[op.index()].range((bio_end, 0)..(bio_end + 1, 0)).next()?;
        debug_assert_eq!(rqs.rq(id).sector, bio_end);
        Some(id)
    }

    /// `deadline_merged_request`: a front merge moved the start sector, so the
    /// request is re-sorted.
    pub fn merged_request(&mut self, rqs: &mut Requests, rq: RequestId, old_sector: u64, front: bool) {
        if front {
            let r = rqs.rq(rq);
            self.sort_list[r.flags.op.index()].remove(&(old_sector, r.sort_key));
            self.add_rq_rb(rqs, rq);
        }
    }

    /// `deadline_check_fifo`: whether the FIFO head of `dir` has expired
    /// (`time_after_eq(jiffies, rq->fifo_time)`).
    fn check_fifo(&self, ctx: &ElvCtx<'_>, dir: usize) -> bool {
        self.fifo_list[dir].first_key_value().is_some_and(|(_, &rq)| ctx.now >= ctx.rqs.rq(rq).fifo_time)
    }

    /// `deadline_dispatch_requests` (4.4), one request per call.
    pub fn dispatch_request(&mut self, ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        let reads = !self.fifo_list[0].is_empty();
        let writes = !self.fifo_list[1].is_empty();
        // "batches are currently reads XOR writes"
        let next = self.next_rq[1].or(self.next_rq[0]);
        let rq = match next {
            Some(rq) if self.batching < self.t.fifo_batch => rq,
            _ => {
                let dir = if reads {
                    // deadline_dispatch_requests: `writes && (dd->starved++ >=
                    // dd->writes_starved)`: `&&` short-circuits, so the counter
                    // only moves while writes are waiting.
                    let starved = self.starved;
                    if writes {
                        self.starved += 1;
                    }
                    if writes && starved >= self.t.writes_starved {
                        self.starved = 0;
                        1
                    } else {
                        0
                    }
                } else if writes {
                    self.starved = 0;
                    1
                } else {
                    return None;
                };
                let rq = if self.check_fifo(ctx, dir) || self.next_rq[dir].is_none() {
                    *self.fifo_list[dir].first_key_value().expect("direction has requests").1
                } else {
                    self.next_rq[dir].expect("checked")
                };
                self.batching = 0;
                rq
            }
        };
        self.batching += 1;
        let dir = ctx.rqs.rq(rq).flags.op.index();
        if self.fifo_list[dir].first_key_value().is_some_and(|(_, &h)| h == rq) {
            // The FIFO head leaves: how long after it was both expired and at the head.
            let from = ctx.rqs.rq(rq).fifo_time.max(self.head_since[dir]);
            self.lateness_max_ns = self.lateness_max_ns.max(ctx.now.since(from.min(ctx.now)));
            self.head_since[dir] = ctx.now;
        }
        self.move_request(ctx.rqs, rq);
        Some(rq)
    }

    /// `deadline_move_request`: remember the successor, take the request off
    /// both lists.
    fn move_request(&mut self, rqs: &Requests, rq: RequestId) {
        let dir = rqs.rq(rq).flags.op.index();
        self.next_rq = [None, None];
        self.next_rq[dir] = self.latter_request(rqs, rq);
        // deadline_remove_request: rq_fifo_clear + deadline_del_rq_rb.
        self.fifo_list[dir].remove(&rqs.rq(rq).fifo_key).expect("queued on its FIFO");
        let next = self.next_rq[dir];
        self.del_rq_rb(rqs, rq);
        self.next_rq[dir] = next;
    }

    pub fn has_work(&self) -> bool {
        !self.fifo_list[0].is_empty() || !self.fifo_list[1].is_empty()
    }

    pub fn queued(&self) -> usize {
        self.fifo_list[0].len() + self.fifo_list[1].len()
    }
}
