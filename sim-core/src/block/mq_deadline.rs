//! The mq-deadline scheduler (6.18 block/mq-deadline.c): per I/O priority
//! class (RT, BE, IDLE) and data direction a sector-sorted tree and a FIFO of
//! expiry times; batches of up to `fifo_batch` requests in sector order from
//! the last dispatched position (`latest_pos`); reads preferred unless writes
//! have been passed over `writes_starved` times; a lower class is served only
//! when no higher class has requests queued or in the driver, except requests
//! older than `prio_aging_expire` (`dd_dispatch_prio_aged_requests`).
//!
//! Not modelled: the `dd->dispatch` list (requests requeued at the head by the
//! driver: the device here never refuses a request it was offered), and
//! discard merges.

use super::elv_ctx::ElvCtx;
use super::request::{Op, Requests, elv_rb_neighbour};
use crate::ids::{RequestId, TaskId};
use std::collections::BTreeMap;

/// The 6.18 ioprio class of a task or request (`IOPRIO_CLASS_*`), with its
/// level 0–7 (`IOPRIO_PRIO_LEVEL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IoprioClass {
    Rt,
    Be,
    Idle,
}

/// An I/O priority as 6.18 computes it for a bio (`__get_task_ioprio`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ioprio {
    pub class: IoprioClass,
    pub level: u8,
}

impl Ioprio {
    /// `ionice -c1 -n4` style text: `rt/N`, `be/N`, `idle`.
    pub fn label(self) -> String {
        match self.class {
            IoprioClass::Rt => format!("rt/{}", self.level),
            IoprioClass::Be => format!("be/{}", self.level),
            IoprioClass::Idle => "idle".into(),
        }
    }

    /// `__get_task_ioprio` (6.18 include/linux/ioprio.h): the `ionice`
    /// setting, else `task_nice_ioclass` (SCHED_IDLE → IDLE, RT/DL policies →
    /// RT, else BE) and `task_nice_ioprio` ((nice + 20) / 5).
    pub fn of_task(policy: crate::workload::Policy, nice: i8, ionice: Option<Ioprio>) -> Ioprio {
        if let Some(p) = ionice {
            return p;
        }
        let level = ((i32::from(nice) + 20) / 5) as u8;
        match policy {
            crate::workload::Policy::Idle => Ioprio { class: IoprioClass::Idle, level },
            p if p.class() != crate::sched::ClassKind::Fair => Ioprio { class: IoprioClass::Rt, level },
            _ => Ioprio { class: IoprioClass::Be, level },
        }
    }

    /// `ioprio_class_to_prio` (6.18 mq-deadline.c): RT 0, BE 1 (and NONE),
    /// IDLE 2.
    pub fn dd_prio(self) -> usize {
        match self.class {
            IoprioClass::Rt => 0,
            IoprioClass::Be => 1,
            IoprioClass::Idle => 2,
        }
    }
}

/// `DD_PRIO_COUNT`.
const DD_PRIO_COUNT: usize = 3;

/// The sysfs tunables (`/sys/block/<dev>/queue/iosched/*`), times in jiffies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MqDeadlineTunables {
    /// `fifo_expire[DD_READ]` (`read_expire`, ms in sysfs).
    pub read_expire_j: u64,
    /// `fifo_expire[DD_WRITE]`.
    pub write_expire_j: u64,
    /// `writes_starved` (an `int` in 6.18; this format takes 0 to INT_MAX).
    pub writes_starved: u32,
    pub front_merges: bool,
    pub fifo_batch: u32,
    /// `async_depth`; `None` until the queue sets it to `nr_requests`
    /// (`dd_depth_updated`).
    pub async_depth: Option<u32>,
    pub prio_aging_expire_j: u64,
}

/// mq-deadline's files under `/sys/block/<dev>/queue/iosched/` in 6.18
/// (`deadline_attrs`).
pub const MQ_DEADLINE_TUNABLES: &[&str] = &[
    "read_expire",
    "write_expire",
    "writes_starved",
    "front_merges",
    "async_depth",
    "fifo_batch",
    "prio_aging_expire",
];

impl MqDeadlineTunables {
    /// `dd_init_sched` (6.18): read_expire HZ/2, write_expire 5·HZ,
    /// prio_aging_expire 10·HZ, writes_starved 2, front_merges 1, fifo_batch 16.
    pub fn defaults(hz: u32) -> MqDeadlineTunables {
        let hz = u64::from(hz);
        MqDeadlineTunables {
            read_expire_j: hz / 2,
            write_expire_j: 5 * hz,
            writes_starved: 2,
            front_merges: true,
            fifo_batch: 16,
            async_depth: None,
            prio_aging_expire_j: 10 * hz,
        }
    }

    /// Sets a tunable by its sysfs name. The kernel's `STORE_FUNCTION` clamps
    /// to [MIN, MAX]; a scenario is refused outside that range instead.
    pub fn set(&mut self, name: &str, value: u64, hz: u32) -> Result<(), String> {
        let int = |v: u64| v.min(i32::MAX as u64) as u32;
        let j = super::cfq_tunables::msecs_to_jiffies(value, hz);
        match name {
            // STORE_JIFFIES(..., 0, INT_MAX)
            "read_expire" => self.read_expire_j = j,
            "write_expire" => self.write_expire_j = j,
            "prio_aging_expire" => self.prio_aging_expire_j = j,
            // STORE_INT(writes_starved, INT_MIN, INT_MAX)
            "writes_starved" => self.writes_starved = int(value),
            // STORE_INT(front_merges, 0, 1)
            "front_merges" => {
                if value > 1 {
                    return Err(format!("{value} is not allowed: `front_merges` is 0 to 1"));
                }
                self.front_merges = value == 1;
            }
            // STORE_INT(async_depth, 1, INT_MAX)
            "async_depth" => {
                if value == 0 {
                    return Err("0 is not allowed: `async_depth` is 1 to 2147483647".into());
                }
                self.async_depth = Some(int(value));
            }
            // STORE_INT(fifo_batch, 0, INT_MAX)
            "fifo_batch" => self.fifo_batch = int(value),
            _ => {
                return Err(format!(
                    "unknown mq-deadline tunable `{name}`; allowed: {}",
                    MQ_DEADLINE_TUNABLES.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The sysfs view (`SHOW_JIFFIES` converts back with `jiffies_to_msecs`);
    /// `nr_requests` stands in for an `async_depth` never set.
    pub fn sysfs(&self, hz: u32, nr_requests: u32) -> Vec<(&'static str, u64)> {
        let ms = |j: u64| j * 1000 / u64::from(hz);
        vec![
            ("read_expire", ms(self.read_expire_j)),
            ("write_expire", ms(self.write_expire_j)),
            ("writes_starved", u64::from(self.writes_starved)),
            ("front_merges", u64::from(self.front_merges)),
            ("async_depth", u64::from(self.async_depth.unwrap_or(nr_requests))),
            ("fifo_batch", u64::from(self.fifo_batch)),
            ("prio_aging_expire", ms(self.prio_aging_expire_j)),
        ]
    }
}

/// `struct dd_per_prio`.
#[derive(Clone, Debug, Default)]
struct PerPrio {
    /// `sort_list[dir]`: (sector, insertion order), as `elv_rb_add` puts an
    /// equal sector to the right.
    sort_list: [BTreeMap<(u64, u64), RequestId>; 2],
    /// `fifo_list[dir]`: by list position.
    fifo_list: [BTreeMap<u64, RequestId>; 2],
    /// `latest_pos[dir]`: the position of the last dispatched request.
    latest_pos: [u64; 2],
    /// `stats.inserted` / `stats.completed` (`dd_queued` is their difference:
    /// requests in the scheduler or in the driver).
    inserted: u32,
    completed: u32,
    dispatched: u32,
    merged: u32,
}

/// `struct deadline_data`.
#[derive(Clone, Debug)]
pub struct MqDeadline {
    pub t: MqDeadlineTunables,
    per_prio: [PerPrio; DD_PRIO_COUNT],
    /// `last_dir`: `DD_WRITE` at init.
    last_dir: usize,
    batching: u32,
    starved: u32,
    /// Each task's ioprio (`req_get_ioprio` of the requests it allocates).
    task_prio: Vec<Ioprio>,
    seq: u64,
    /// Requests in the sort trees.
    queued: usize,
}

impl MqDeadline {
    pub fn new(t: MqDeadlineTunables, task_prio: Vec<Ioprio>) -> MqDeadline {
        MqDeadline {
            t,
            per_prio: Default::default(),
            last_dir: Op::Write.index(),
            batching: 0,
            starved: 0,
            task_prio,
            seq: 0,
            queued: 0,
        }
    }

    /// The ioprio of requests `task` allocates.
    pub fn ioprio_of(&self, task: TaskId) -> Ioprio {
        self.task_prio.get(task.index()).copied().unwrap_or(Ioprio { class: IoprioClass::Be, level: 4 })
    }

    fn prio(&self, rqs: &Requests, rq: RequestId) -> usize {
        self.ioprio_of(rqs.rq(rq).task).dd_prio()
    }

    /// `dd_limit_depth`: synchronous reads are not throttled; everything else
    /// may take at most `async_depth` scheduler tags.
    pub fn limit_depth(&self, op: Op, sync: bool, nr_requests: u32) -> Option<u32> {
        if sync && op == Op::Read {
            return None;
        }
        Some(self.t.async_depth.unwrap_or(nr_requests))
    }

    fn add_rq_rb(&mut self, rqs: &mut Requests, prio: usize, rq: RequestId) {
        self.seq += 1;
        let r = rqs.rq_mut(rq);
        r.sort_key = self.seq;
        self.per_prio[prio].sort_list[r.flags.op.index()].insert((r.sector, r.sort_key), rq);
    }

    /// `dd_insert_request` (not at head): sort tree, and the FIFO tail with
    /// `fifo_time = jiffies + fifo_expire[dir]`. The core did the insert
    /// merge attempt before (`blk_mq_sched_try_insert_merge`).
    pub fn insert_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        let prio = self.prio(ctx.rqs, rq);
        self.add_rq_rb(ctx.rqs, prio, rq);
        let dir = ctx.rqs.rq(rq).flags.op;
        let expire = if dir == Op::Read { self.t.read_expire_j } else { self.t.write_expire_j };
        self.seq += 1;
        let fifo_time = crate::time::SimTime((ctx.jiffies() + expire) * ctx.jiffy_ns);
        let r = ctx.rqs.rq_mut(rq);
        r.fifo_time = fifo_time;
        r.fifo_key = self.seq;
        self.per_prio[prio].fifo_list[dir.index()].insert(r.fifo_key, rq);
        self.queued += 1;
    }

    /// `dd_insert_request`'s `stats.inserted++`, done before the insert
    /// merge attempt (a request merged away at insertion counts too).
    pub fn count_inserted(&mut self, rqs: &Requests, rq: RequestId) {
        let prio = self.prio(rqs, rq);
        self.per_prio[prio].inserted += 1;
    }

    /// `dd_request_merge`: with `front_merges`, the request of the bio's
    /// class and direction starting where the bio ends (`elv_rb_find`).
    pub fn request_merge(&self, op: Op, task: TaskId, bio_end: u64) -> Option<RequestId> {
        if !self.t.front_merges {
            return None;
        }
        let pp = &self.per_prio[self.ioprio_of(task).dd_prio()];
        pp.sort_list[op.index()].range((bio_end, 0)..(bio_end + 1, 0)).next().map(|(_, &id)| id)
    }

    /// `dd_request_merged`: a front merge moved the start, so re-sort.
    pub fn request_merged(&mut self, rqs: &mut Requests, rq: RequestId, old_sector: u64, front: bool) {
        if front {
            let prio = self.prio(rqs, rq);
            let r = rqs.rq(rq);
            self.per_prio[prio].sort_list[r.flags.op.index()].remove(&(old_sector, r.sort_key));
            self.add_rq_rb(rqs, prio, rq);
        }
    }

    /// `elv_rb_latter_request` / `elv_rb_former_request`: the neighbour in
    /// the sort tree (for `attempt_back_merge` / `attempt_front_merge`).
    pub fn neighbour(&self, rqs: &Requests, rq: RequestId, latter: bool) -> Option<RequestId> {
        let r = rqs.rq(rq);
        let tree = &self.per_prio[self.prio(rqs, rq)].sort_list[r.flags.op.index()];
        let key = (r.sector, r.sort_key);
        if !tree.contains_key(&key) {
            return None;
        }
        elv_rb_neighbour(tree, key, latter)
    }

    /// `dd_merged_requests`: `next` was merged into `req`; `req` takes
    /// `next`'s FIFO place and expiry if that is earlier, and `next` leaves.
    /// `req`'s sectors are already extended (its sort key unchanged: a back
    /// merge keeps the start; a front merge re-sorts through
    /// `request_merged` first, as `elv_merge_requests` does not).
    /// `next` may not be queued yet (an insert merge): then it is on no list
    /// and the FIFO places are left alone.
    pub fn merged_requests(&mut self, rqs: &mut Requests, req: RequestId, next: RequestId, next_sector: u64) {
        let prio = self.prio(rqs, next);
        self.per_prio[prio].merged += 1;
        let n = rqs.rq(next);
        let (n_dir, n_sort, n_fifo_key, n_fifo_time) = (n.flags.op.index(), n.sort_key, n.fifo_key, n.fifo_time);
        // Sort keys start at 1: a request never inserted has key 0.
        let next_queued = self.per_prio[prio].sort_list[n_dir].contains_key(&(next_sector, n_sort)) && n_sort != 0;
        if !next_queued {
            return;
        }
        // deadline_remove_request(next): off the FIFO and the sort tree.
        self.per_prio[prio].fifo_list[n_dir].remove(&n_fifo_key);
        self.per_prio[prio].sort_list[n_dir].remove(&(next_sector, n_sort));
        self.queued -= 1;
        // Both on FIFOs and time_before(next->fifo_time, req->fifo_time):
        // list_move to next's place, with its expiry.
        let r = rqs.rq(req);
        let req_queued =
            self.per_prio[self.prio(rqs, req)].sort_list[r.flags.op.index()].contains_key(&(r.sector, r.sort_key));
        if req_queued && n_fifo_time < r.fifo_time {
            let rprio = self.prio(rqs, req);
            let r = rqs.rq_mut(req);
            self.per_prio[rprio].fifo_list[r.flags.op.index()].remove(&r.fifo_key);
            r.fifo_key = n_fifo_key;
            r.fifo_time = n_fifo_time;
            self.per_prio[rprio].fifo_list[r.flags.op.index()].insert(n_fifo_key, req);
        }
    }

    /// `dd_finish_request`: `stats.completed` of the request's class (for
    /// every request that was inserted, merged-away ones included).
    pub fn finish_request(&mut self, rqs: &Requests, rq: RequestId) {
        let prio = self.prio(rqs, rq);
        self.per_prio[prio].completed += 1;
    }

    /// `dd_queued`: inserted − completed.
    fn dd_queued(&self, prio: usize) -> u32 {
        self.per_prio[prio].inserted - self.per_prio[prio].completed
    }

    /// `deadline_from_pos`: the first request at or after `pos`.
    fn deadline_from_pos(&self, prio: usize, dir: usize, pos: u64) -> Option<RequestId> {
        self.per_prio[prio].sort_list[dir].range((pos, 0)..).next().map(|(_, &id)| id)
    }

    fn fifo_head(&self, prio: usize, dir: usize) -> Option<RequestId> {
        self.per_prio[prio].fifo_list[dir].first_key_value().map(|(_, &id)| id)
    }

    /// `__dd_dispatch_request` (6.18) for one class, with a start time no
    /// later than `latest_start` (jiffies, signed as `time_after` compares).
    fn dispatch_prio(&mut self, ctx: &mut ElvCtx<'_>, prio: usize, latest_start: i64) -> Option<RequestId> {
        let jiffies = ctx.jiffies();
        // "batches are currently reads XOR writes"
        let mut rq = self.deadline_from_pos(prio, self.last_dir, self.per_prio[prio].latest_pos[self.last_dir]);
        let mut dir = self.last_dir;
        if !(rq.is_some() && self.batching < self.t.fifo_batch) {
            // Not running a batch: pick a direction.
            let reads = !self.per_prio[prio].fifo_list[0].is_empty();
            let writes = !self.per_prio[prio].fifo_list[1].is_empty();
            dir = if reads {
                // `deadline_fifo_request(WRITE) && dd->starved++ >= writes_starved`:
                // the counter moves only while writes wait.
                let starved = self.starved;
                if writes {
                    self.starved += 1;
                }
                if writes && starved >= self.t.writes_starved { 1 } else { 0 }
            } else if writes {
                1
            } else {
                return None;
            };
            if dir == 1 {
                self.starved = 0;
            }
            let next_rq = self.deadline_from_pos(prio, dir, self.per_prio[prio].latest_pos[dir]);
            // deadline_check_fifo: time_is_before_eq_jiffies(fifo_time).
            let head = self.fifo_head(prio, dir).expect("direction has requests");
            let expired = jiffies >= ctx.rqs.rq(head).fifo_time.ns() / ctx.jiffy_ns;
            rq = if expired || next_rq.is_none() { Some(head) } else { next_rq };
            self.last_dir = dir;
            self.batching = 0;
        }
        let rq = rq?;
        // started_after: fifo_time − fifo_expire[dir] after latest_start.
        let r = ctx.rqs.rq(rq);
        let expire = if r.flags.op == Op::Read { self.t.read_expire_j } else { self.t.write_expire_j };
        let start = (r.fifo_time.ns() / ctx.jiffy_ns) as i64 - expire as i64;
        if start > latest_start {
            return None;
        }
        self.batching += 1;
        self.remove_request(ctx.rqs, prio, rq);
        // dd_start_request
        let pp = &mut self.per_prio[prio];
        pp.latest_pos[dir] = ctx.rqs.rq(rq).sector;
        pp.dispatched += 1;
        Some(rq)
    }

    /// `deadline_remove_request`: off the FIFO and the sort tree.
    fn remove_request(&mut self, rqs: &Requests, prio: usize, rq: RequestId) {
        let r = rqs.rq(rq);
        let dir = r.flags.op.index();
        self.per_prio[prio].fifo_list[dir].remove(&r.fifo_key).expect("queued on its FIFO");
        self.per_prio[prio].sort_list[dir].remove(&(r.sector, r.sort_key)).expect("queued in its tree");
        self.queued -= 1;
    }

    /// `dd_dispatch_request` (6.18): aged BE/IDLE requests first
    /// (`dd_dispatch_prio_aged_requests`), then classes in priority order,
    /// stopping at the first class with requests queued or in the driver.
    pub fn dispatch_request(&mut self, ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        let now = ctx.jiffies() as i64;
        let prio_cnt = (0..DD_PRIO_COUNT).filter(|&p| self.dd_queued(p) > 0).count();
        if prio_cnt >= 2 {
            for prio in 1..DD_PRIO_COUNT {
                if let Some(rq) = self.dispatch_prio(ctx, prio, now - self.t.prio_aging_expire_j as i64) {
                    return Some(rq);
                }
            }
        }
        for prio in 0..DD_PRIO_COUNT {
            let rq = self.dispatch_prio(ctx, prio, now);
            if rq.is_some() || self.dd_queued(prio) > 0 {
                return rq;
            }
        }
        None
    }

    /// Requests in the sort trees (`dd_has_work`).
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// The counters agree with the trees: every class's FIFOs and trees hold
    /// the same requests, and `dd_queued` covers at least those.
    pub fn check(&self) -> Result<(), String> {
        let mut total = 0;
        for (p, pp) in self.per_prio.iter().enumerate() {
            for dir in 0..2 {
                if pp.fifo_list[dir].len() != pp.sort_list[dir].len() {
                    return Err(format!(
                        "mq-deadline class {p} dir {dir}: {} on the FIFO, {} in the tree",
                        pp.fifo_list[dir].len(),
                        pp.sort_list[dir].len()
                    ));
                }
                total += pp.fifo_list[dir].len();
            }
            let held = pp.fifo_list[0].len() + pp.fifo_list[1].len();
            if (self.dd_queued(p) as usize) < held {
                return Err(format!("mq-deadline class {p}: dd_queued {} < {held} held", self.dd_queued(p)));
            }
        }
        if total != self.queued {
            return Err(format!("mq-deadline: {total} in the lists, counter says {}", self.queued));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "mq_deadline_tests.rs"]
mod tests;
