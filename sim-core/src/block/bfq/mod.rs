//! The BFQ I/O scheduler of Linux 6.18 (block/bfq-iosched.c, bfq-wf2q.c,
//! bfq-cgroup.c, bfq-iosched.h), a documented subset, run on the blk-mq
//! path of `RequestQueue` (`blk_mq.rs`: one request at a time while a
//! driver tag is free, as blk-mq calls `__bfq_dispatch_request`).
//!
//! Modelled:
//! - per-process sync queues and async queues shared per (group, class,
//!   level), the IDLE class having one async queue per group (`bfq_get_queue`,
//!   `bfq_async_queue_prio`);
//! - weights from the I/O priority (`bfq_ioprio_to_weight`: (8 - level) × 10),
//!   classes RT > BE > IDLE with the idle-class guard `BFQ_CL_IDLE_TIMEOUT`
//!   (HZ/5), and an IDLE queue expired after each dispatch when other queues
//!   are busy (`bfq_dispatch_rq_from_bfqq`);
//! - B-WF2Q+ on budgets in sectors (`wf2q.rs`): start/finish stamps, virtual
//!   time per service tree, idle trees, hierarchical across blkcg groups
//!   (each group an entity of weight `io.bfq.weight`, class BE);
//! - budgets: a new queue's `max_budget` is 2/3 of `bfq_max_budget`
//!   (`bfq_init_bfqq`), feedback by expiry reason (`__bfq_bfqq_recalc_budget`),
//!   `bfq_min_budget` = max/32, the async charge factor 3
//!   (`bfq_serv_to_charge`), the budget timeout (`bfq_set_budget_timeout`,
//!   scaled by the weight-raising factor) and time charging of a queue that
//!   timed out with a third of its budget left (`bfq_bfqq_charge_time`);
//! - expiry reasons TOO_IDLE, BUDGET_TIMEOUT, BUDGET_EXHAUSTED,
//!   NO_MORE_REQUESTS, PREEMPTED (`bfq_bfqq_expire`, `bfq_select_queue`,
//!   `bfq_completed_request`, `bfq_idle_slice_timer_body`);
//! - idling: `bfq_better_to_idle` with `idling_boosts_thr_without_issues`
//!   (rotational without queueing, or sequential with a short think time)
//!   and `idling_needed_for_service_guarantees` (weight raising, asymmetric
//!   weights/classes/groups, a single busy queue); `bfq_arm_slice_timer`
//!   (2 ms for a seeky queue, at least 20 ms for a raised one);
//!   `strict_guarantees`; think time (`bfq_update_io_thinktime`,
//!   `bfq_update_has_short_ttime`), seek history (`BFQ_RQ_SEEKY`) and
//!   `hw_tag` detection (`bfq_update_hw_tag`);
//! - FIFO expiry once per service slot (`bfq_check_fifo` in
//!   `bfq_find_next_rq`) and `bfq_choose_req` with `back_seek_max`/`penalty`;
//! - low_latency weight raising: interactive (coefficient 30 for
//!   `bfq_wr_duration`) for a sync queue that was idle for
//!   `bfq_wr_min_idle_time` (2 s) or is new; soft real-time (30 × 100 for
//!   300 ms) from `bfq_bfqq_softrt_next_start` for weight-40 queues; async
//!   raising after 500 ms between arrivals (`bfq_add_request`); the end of
//!   raising in `bfq_update_wr_data` (duration, `max_service_from_wr`);
//! - preemption on activation (`bfq_bfqq_handle_idle_busy_switch`: higher
//!   class or weight, or the in-service queue not worth idling for).
//!
//! Left out (simplified or not modelled):
//! - `bfq_limit_depth` (async and sync-write scheduler-tag depth limits):
//!   BFQ's requests take scheduler tags up to `nr_requests` like any other;
//! - peak-rate estimation (`bfq_update_peak_rate`): `bfq_max_budget` stays
//!   16384 sectors (or the `max_budget` written), `bfq_wr_duration` uses the
//!   initial rate estimate (2/3 of the reference rate: 10.5 s rotational,
//!   3.75 s non-rotational) and `bfq_bfqq_is_slow` is always false;
//!   writing `timeout_sync` does not recompute `max_budget`;
//! - I/O injection (`bfq_choose_bfqq_for_injection`, the async/waker/blocked
//!   queues served while idling), waker detection (`bfq_check_waker`);
//! - queue merging and cooperators (`bfq_setup_cooperator`, stable merge),
//!   burst detection (`bfq_handle_burst`, so `in_large_burst` is false),
//!   `bfqq->split_time`;
//! - the arrived-in-time budget path (`non_blocking_wait_rq`,
//!   backshifting in `__bfq_activate_entity`): a reactivated queue always
//!   gets a fresh budget;
//! - `next_in_service` caching (`bfq_update_next_in_service`): the next
//!   entity is looked up when one is needed, so the class-idle guard is
//!   checked at each selection and `next_queue_may_preempt` is taken as
//!   "the two queues are under different top-level entities";
//! - `IO_bound` detection (queues are taken as I/O bound), multi-actuator
//!   drives, `bfq_limit_depth`, request-to-request merges, cgroup stats files;
//! - `ioprio` changes while running and queue freeing: queues live for the
//!   whole run.
//!
//! The request's elevator slot (`Request::cfqq`) holds its BFQ queue
//! (`RQ_BFQQ`). Times: hrtimer-based times (`slice_idle`, FIFO expiry) in ns;
//! jiffy-based ones (budget timeout, weight raising) in jiffies, kept as
//! `i64` so `bfq_smallest_from_now` is simply far in the past.

pub mod tunables;
pub mod wf2q;

#[cfg(test)]
mod tests;

pub use tunables::BfqTunables;

use super::cfq::{IoClass, IoPrio};
use super::cfq_tunables::msecs_to_jiffies;
use super::elv_ctx::ElvCtx;
use super::request::{Request, Requests, elv_rb_neighbour, nearer_after};
use crate::ids::{RequestId, TaskId};
use crate::time::SimTime;
use std::collections::BTreeMap;
use wf2q::{Tree, Wf2q};

/// `bfq_default_max_budget`, sectors.
const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// `bfq_stats_min_budgets`.
const STATS_MIN_BUDGETS: u32 = 194;
/// `bfq_async_charge_factor`.
const ASYNC_CHARGE_FACTOR: u64 = 3;
/// `BFQ_MIN_TT`, ns.
const MIN_TT_NS: u64 = 2_000_000;
/// `BFQ_HW_QUEUE_THRESHOLD`, `BFQ_HW_QUEUE_SAMPLES`.
const HW_QUEUE_THRESHOLD: u32 = 3;
const HW_QUEUE_SAMPLES: u32 = 32;
/// `BFQQ_SEEK_THR`, `BFQQ_SECT_THR_NONROT`, sectors.
const SEEK_THR: u64 = 800;
const SECT_THR_NONROT: u32 = 64;
/// `bfqd->bfq_wr_coeff` (bfq_init_queue).
const WR_COEFF: u64 = 30;
/// `BFQ_SOFTRT_WEIGHT_FACTOR`.
const SOFTRT_WEIGHT_FACTOR: u64 = 100;
/// `max_service_from_wr`, sectors.
const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// `bfq_wr_max_softrt_rate`, sectors/s.
const WR_MAX_SOFTRT_RATE: u64 = 7000;
/// `ref_rate` and `ref_wr_duration` (ms) for rotational [0] and
/// non-rotational [1] devices (bfq_init).
const REF_RATE: [u64; 2] = [14_000, 33_000];
const REF_WR_DURATION_MS: [u64; 2] = [7000, 2500];
/// `BFQ_DEFAULT_GRP_WEIGHT`, `BFQ_MIN_WEIGHT`, `BFQ_MAX_WEIGHT`.
pub const GROUP_WEIGHT_DEFAULT: u16 = 100;
pub const WEIGHT_MIN: u16 = 1;
pub const WEIGHT_MAX: u16 = 1000;
/// `bfq_smallest_from_now`: far enough in the past for every comparison.
const LONG_AGO: i64 = i64::MIN / 4;

/// I/O scheduling class, in BFQ's service order (`ioprio_class - 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BfqClass {
    Rt,
    Be,
    Idle,
}

impl BfqClass {
    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            BfqClass::Rt => "rt",
            BfqClass::Be => "be",
            BfqClass::Idle => "idle",
        }
    }
}

/// What BFQ needs of a task: its I/O priority (class, level 0–7) and the
/// blkcg group (index into the groups given to `Bfq::new`) it issues from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfqTaskIo {
    pub class: BfqClass,
    pub level: u8,
    pub group: usize,
}

impl BfqTaskIo {
    /// From the 4.4 `task_nice_ioprio` priority the engine derives (no RT:
    /// that needs an explicit `ionice`), in the root group.
    /// From a 6.18 ioprio (`ionice`, or nice and policy): RT included.
    pub fn from_mq_ioprio(p: crate::block::mq_deadline::Ioprio, group: usize) -> BfqTaskIo {
        let class = match p.class {
            crate::block::mq_deadline::IoprioClass::Rt => BfqClass::Rt,
            crate::block::mq_deadline::IoprioClass::Be => BfqClass::Be,
            crate::block::mq_deadline::IoprioClass::Idle => BfqClass::Idle,
        };
        BfqTaskIo { class, level: p.level.min(7), group }
    }

    pub fn from_ioprio(p: IoPrio) -> BfqTaskIo {
        let class = match p.class {
            IoClass::Be => BfqClass::Be,
            IoClass::Idle => BfqClass::Idle,
        };
        BfqTaskIo { class, level: p.prio.min(7), group: 0 }
    }
}

/// A blkcg group as BFQ sees it: parent (None for the root, index 0) and
/// `io.bfq.weight` (cgroup v2) / `blkio.bfq.weight` (v1), 1–1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfqGroupIo {
    pub parent: Option<usize>,
    pub weight: u16,
}

/// `enum bfqq_expiration`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    TooIdle = 0,
    BudgetTimeout = 1,
    BudgetExhausted = 2,
    NoMoreRequests = 3,
    Preempted = 4,
}

/// `struct bfq_ttime`.
#[derive(Clone, Copy, Debug, Default)]
struct Ttime {
    last_end_request: u64,
    samples: u64,
    total: u64,
    mean: u64,
}

/// `struct bfq_queue`.
#[derive(Clone, Debug)]
struct BfqQueue {
    sync: bool,
    class: BfqClass,
    level: u8,
    pid: TaskId,
    group: usize,
    entity: u32,
    orig_weight: u64,
    /// (sector, insertion seq).
    sort_list: BTreeMap<(u64, u64), RequestId>,
    /// Insertion seq.
    fifo: BTreeMap<u64, RequestId>,
    next_rq: Option<RequestId>,
    queued: [u32; 2],
    dispatched: u32,
    busy: bool,
    max_budget: u64,
    budget_timeout: i64,
    wr_coeff: u64,
    wr_cur_max_time: i64,
    last_wr_start_finish: i64,
    wr_start_at_switch_to_srt: i64,
    service_from_wr: u64,
    soft_rt_next_start: i64,
    last_idle_bklogged: i64,
    service_from_backlogged: u64,
    softrt_update: bool,
    wait_request: bool,
    fifo_expire: bool,
    has_short_ttime: bool,
    ttime: Ttime,
    seek_history: u32,
    last_request_pos: u64,
}

impl BfqQueue {
    fn seeky(&self) -> bool {
        // BFQQ_SEEKY: more than 19 of the last 32 requests were seeky.
        self.seek_history.count_ones() > 19
    }
}

/// `struct bfq_data`.
#[derive(Clone, Debug)]
pub struct Bfq {
    pub t: BfqTunables,
    hz: u32,
    tasks: Vec<BfqTaskIo>,
    groups: Vec<BfqGroupIo>,
    queues: Vec<BfqQueue>,
    sync_q: Vec<Option<u32>>,
    async_q: BTreeMap<(usize, BfqClass, u8), u32>,
    wf: Wf2q,
    in_service: Option<u32>,
    busy_queues: [u32; 3],
    tot_rq_in_driver: u32,
    queued: u32,
    budgets_assigned: u32,
    /// `bfqd->bfq_max_budget`.
    max_budget: u64,
    /// -1 unknown, 0 no, 1 yes (`bfqd->hw_tag`).
    hw_tag: i8,
    max_rq_in_driver: u32,
    hw_tag_samples: u32,
    idle_timer: Option<SimTime>,
    last_position: u64,
    last_budget_start: SimTime,
    seq: u64,
    /// Expirations by reason (`Expiry as usize`), for tests and reports.
    pub expirations: [u64; 5],
}

impl Bfq {
    /// Each task's 6.18 ioprio (`bfq_set_next_ioprio_data`), before any I/O:
    /// the class and level change, the blkcg group stays.
    pub fn set_task_ioprio(&mut self, prio: &[crate::block::mq_deadline::Ioprio]) {
        for (t, p) in self.tasks.iter_mut().zip(prio) {
            *t = BfqTaskIo::from_mq_ioprio(*p, t.group);
        }
    }

    /// `bfq_init_queue`. `groups[0]` is the root; a task's `group` indexes it.
    pub fn new(t: BfqTunables, tasks: Vec<BfqTaskIo>, groups: Vec<BfqGroupIo>, hz: u32) -> Bfq {
        let mut groups = groups;
        if groups.is_empty() {
            groups.push(BfqGroupIo { parent: None, weight: GROUP_WEIGHT_DEFAULT });
        }
        let wf_groups: Vec<(Option<usize>, u64)> = groups.iter().map(|g| (g.parent, u64::from(g.weight))).collect();
        Bfq {
            t,
            hz,
            sync_q: vec![None; tasks.len()],
            tasks,
            groups,
            queues: Vec::new(),
            async_q: BTreeMap::new(),
            wf: Wf2q::new(&wf_groups, 0),
            in_service: None,
            busy_queues: [0; 3],
            tot_rq_in_driver: 0,
            queued: 0,
            budgets_assigned: 0,
            max_budget: if t.max_budget > 0 { t.max_budget } else { DEFAULT_MAX_BUDGET },
            hw_tag: -1,
            max_rq_in_driver: 0,
            hw_tag_samples: 0,
            idle_timer: None,
            last_position: 0,
            last_budget_start: SimTime::ZERO,
            seq: 0,
            expirations: [0; 5],
        }
    }

    /// The same scheduler with tasks placed in blkcg groups (before any I/O).
    pub fn with_groups(self, task_group: &[usize], groups: Vec<BfqGroupIo>) -> Bfq {
        let mut tasks = self.tasks;
        for (t, &g) in tasks.iter_mut().zip(task_group) {
            t.group = if g < groups.len() { g } else { 0 };
        }
        Bfq::new(self.t, tasks, groups, self.hz)
    }

    fn q(&self, q: u32) -> &BfqQueue {
        &self.queues[q as usize]
    }

    fn qm(&mut self, q: u32) -> &mut BfqQueue {
        &mut self.queues[q as usize]
    }

    fn ms_j(&self, ms: u64) -> i64 {
        msecs_to_jiffies(ms, self.hz) as i64
    }

    fn jiffies(ctx: &ElvCtx<'_>) -> i64 {
        ctx.jiffies() as i64
    }

    /// `bfq_max_budget()`: the default until enough budgets were assigned.
    fn max_budget_now(&self) -> u64 {
        if self.budgets_assigned < STATS_MIN_BUDGETS { DEFAULT_MAX_BUDGET } else { self.max_budget }
    }

    /// `bfq_min_budget()`.
    fn min_budget(&self) -> u64 {
        self.max_budget_now() / 32
    }

    /// `bfq_wr_duration` with the initial peak-rate estimate (ref_rate × 2/3),
    /// clamped to 3–25 s.
    fn wr_duration(&self, nonrot: bool) -> i64 {
        let i = usize::from(nonrot);
        let dur = REF_RATE[i] * msecs_to_jiffies(REF_WR_DURATION_MS[i], self.hz) / (REF_RATE[i] * 2 / 3);
        (dur as i64).clamp(self.ms_j(3000), self.ms_j(25000))
    }

    /// `bfqd->bfq_wr_rt_max_time`: 300 ms.
    fn wr_rt_max_time(&self) -> i64 {
        self.ms_j(300)
    }

    fn tot_busy(&self) -> u32 {
        self.busy_queues.iter().sum()
    }

    fn wr_busy_queues(&self) -> u32 {
        self.queues.iter().filter(|q| q.busy && q.wr_coeff > 1).count() as u32
    }

    fn weight(&self, q: u32) -> u64 {
        self.wf.ents[self.q(q).entity as usize].weight
    }

    fn budget(&self, q: u32) -> u64 {
        self.wf.ents[self.q(q).entity as usize].budget
    }

    fn budget_left(&self, q: u32) -> i64 {
        let e = &self.wf.ents[self.q(q).entity as usize];
        e.budget as i64 - e.service as i64
    }

    /// `__bfq_entity_update_weight_prio`: weight = orig_weight × wr_coeff.
    fn apply_weight(&mut self, q: u32) {
        let w = self.q(q).orig_weight * self.q(q).wr_coeff;
        let e = self.q(q).entity;
        self.wf.set_weight(e, w);
    }

    // ------------------------------------------------------------ queues

    /// `bfq_get_queue` + `bfq_init_bfqq` + `bfq_init_entity`.
    fn get_queue(&mut self, task: TaskId, sync: bool, now: SimTime, jiffies: i64) -> u32 {
        let io = self.task_io(task);
        let (group, level) = (io.group, io.level);
        let key = self.async_key(task);
        if sync {
            if let Some(q) = self.sync_q.get(task.index()).copied().flatten() {
                return q;
            }
        } else if let Some(&q) = self.async_q.get(&key) {
            return q;
        }
        let id = self.queues.len() as u32;
        // bfq_ioprio_to_weight: (IOPRIO_NR_LEVELS - ioprio) * BFQ_WEIGHT_CONVERSION_COEFF.
        let weight = (8 - u64::from(level)) * 10;
        let entity = self.wf.add(group, weight, io.class.index(), Some(id));
        self.queues.push(BfqQueue {
            sync,
            class: io.class,
            level,
            pid: task,
            group,
            entity,
            orig_weight: weight,
            sort_list: BTreeMap::new(),
            fifo: BTreeMap::new(),
            next_rq: None,
            queued: [0; 2],
            dispatched: 0,
            busy: false,
            max_budget: 2 * self.max_budget_now() / 3,
            budget_timeout: LONG_AGO,
            wr_coeff: 1,
            wr_cur_max_time: 0,
            last_wr_start_finish: jiffies,
            wr_start_at_switch_to_srt: LONG_AGO,
            service_from_wr: 0,
            soft_rt_next_start: jiffies,
            last_idle_bklogged: jiffies,
            service_from_backlogged: 0,
            softrt_update: false,
            wait_request: false,
            fifo_expire: false,
            has_short_ttime: sync && io.class != BfqClass::Idle,
            ttime: Ttime { last_end_request: now.ns() + 1, ..Ttime::default() },
            seek_history: 1,
            last_request_pos: 0,
        });
        if sync {
            if task.index() >= self.sync_q.len() {
                self.sync_q.resize(task.index() + 1, None);
            }
            self.sync_q[task.index()] = Some(id);
        } else {
            self.async_q.insert(key, id);
        }
        id
    }

    /// The queue a bio of `task` goes to, if it exists (`bic_to_bfqq`).
    fn bic_queue(&self, task: TaskId, sync: bool) -> Option<u32> {
        if sync {
            return self.sync_q.get(task.index()).copied().flatten();
        }
        self.async_q.get(&self.async_key(task)).copied()
    }

    /// A task's I/O priority and group, checked: an unknown task is BE/4 in
    /// the root, a group out of range is the root, the IDLE class has level 7.
    fn task_io(&self, task: TaskId) -> BfqTaskIo {
        let io = self.tasks.get(task.index()).copied().unwrap_or(BfqTaskIo { class: BfqClass::Be, level: 4, group: 0 });
        let group = if io.group < self.groups.len() { io.group } else { 0 };
        let level = if io.class == BfqClass::Idle { 7 } else { io.level.min(7) };
        BfqTaskIo { class: io.class, level, group }
    }

    /// `bfq_async_queue_prio`: async queues per (group, class, level); one
    /// for the IDLE class per group.
    fn async_key(&self, task: TaskId) -> (usize, BfqClass, u8) {
        let io = self.task_io(task);
        (io.group, io.class, if io.class == BfqClass::Idle { 0 } else { io.level })
    }

    /// `bfq_serv_to_charge`: sync, raised or asymmetric queues pay their
    /// sectors; async ones three times.
    fn serv_to_charge(&self, r: &Request, q: u32) -> u64 {
        let sectors = u64::from(r.nr_sectors);
        if self.q(q).sync || self.q(q).wr_coeff > 1 || self.asymmetric(Some(q)) {
            sectors
        } else {
            sectors * ASYNC_CHARGE_FACTOR
        }
    }

    /// `bfq_asymmetric_scenario`: queue weights differ (and `q` is not of
    /// the smallest), several classes are busy, or several groups have
    /// pending requests.
    fn asymmetric(&self, q: Option<u32>) -> bool {
        // The weights tree: non-raised queues that are busy or have requests in flight.
        let pending = |x: &&BfqQueue| x.busy || x.dispatched > 0;
        let mut weights: Vec<u64> = self
            .queues
            .iter()
            .filter(|x| pending(x) && x.wr_coeff == 1)
            .map(|x| self.wf.ents[x.entity as usize].weight)
            .collect();
        weights.sort_unstable();
        weights.dedup();
        let smallest = q.is_some_and(|q| {
            let x = self.q(q);
            (x.busy || x.dispatched > 0) && x.wr_coeff == 1 && weights.first() == Some(&self.weight(q))
        });
        let varied = !smallest && weights.len() > 1;
        let classes = self.busy_queues.iter().filter(|&&n| n > 0).count() > 1;
        let mut groups: Vec<usize> = self.queues.iter().filter(pending).map(|x| x.group).collect();
        groups.sort_unstable();
        groups.dedup();
        varied || classes || groups.len() > 1
    }

    // ------------------------------------------------------------ idling

    /// `idling_boosts_thr_without_issues`.
    fn idling_boosts_thr_without_issues(&self, q: u32, nonrot: bool) -> bool {
        let rot_without_queueing = !nonrot && self.hw_tag == 0;
        let x = self.q(q);
        // IO_bound is not detected: queues are taken as I/O bound.
        let seq_io_bound = !x.seeky() && x.has_short_ttime;
        let boosts = rot_without_queueing || ((!nonrot || self.hw_tag == 0) && seq_io_bound);
        boosts && self.wr_busy_queues() == 0
    }

    /// `idling_needed_for_service_guarantees`.
    fn idling_needed_for_service_guarantees(&self, q: u32) -> bool {
        let tot = self.tot_busy();
        let x = self.q(q);
        (x.wr_coeff > 1 && (self.wr_busy_queues() < tot || self.tot_rq_in_driver >= x.dispatched + 4))
            || self.asymmetric(Some(q))
            || tot == 1
    }

    /// `bfq_better_to_idle`.
    fn better_to_idle(&self, q: u32, nonrot: bool) -> bool {
        if self.t.strict_guarantees {
            return true;
        }
        let x = self.q(q);
        if self.t.slice_idle_ns == 0 || !x.sync || x.class == BfqClass::Idle {
            return false;
        }
        self.idling_boosts_thr_without_issues(q, nonrot) || self.idling_needed_for_service_guarantees(q)
    }

    /// `bfq_bfqq_must_idle`.
    fn must_idle(&self, q: u32, nonrot: bool) -> bool {
        self.q(q).sort_list.is_empty() && self.better_to_idle(q, nonrot)
    }

    /// `bfq_arm_slice_timer`.
    fn arm_slice_timer(&mut self, ctx: &ElvCtx<'_>, q: u32) {
        self.qm(q).wait_request = true;
        let mut sl = self.t.slice_idle_ns;
        let x = self.q(q);
        if x.seeky() && x.wr_coeff == 1 && !self.asymmetric(Some(q)) {
            sl = sl.min(MIN_TT_NS);
        } else if x.wr_coeff > 1 {
            sl = sl.max(20_000_000);
        }
        self.idle_timer = Some(ctx.now.after(sl));
    }

    /// `bfq_bfqq_budget_timeout`.
    fn budget_timed_out(&self, q: u32, jiffies: i64) -> bool {
        self.q(q).budget_timeout <= jiffies
    }

    /// `bfq_may_expire_for_budg_timeout`.
    fn may_expire_for_budg_timeout(&self, q: u32, jiffies: i64) -> bool {
        (!self.q(q).wait_request || self.budget_left(q) >= self.budget(q) as i64 / 3)
            && self.budget_timed_out(q, jiffies)
    }

    // ------------------------------------------------------------ busy/idle

    /// `bfq_add_bfqq_busy`.
    fn add_busy(&mut self, q: u32) {
        let e = self.q(q).entity;
        self.wf.activate(e);
        self.qm(q).busy = true;
        self.busy_queues[self.q(q).class.index()] += 1;
    }

    /// `bfq_del_bfqq_busy`.
    fn del_busy(&mut self, q: u32) {
        self.qm(q).busy = false;
        self.busy_queues[self.q(q).class.index()] -= 1;
        let e = self.q(q).entity;
        self.wf.deactivate(e, true);
    }

    /// `bfq_bfqq_softrt_next_start`.
    fn softrt_next_start(&self, q: u32, jiffies: i64) -> i64 {
        let x = self.q(q);
        let by_rate =
            x.last_idle_bklogged + (u64::from(self.hz) * x.service_from_backlogged / WR_MAX_SOFTRT_RATE) as i64;
        // nsecs_to_jiffies(slice_idle) + 4.
        let idle_j = (self.t.slice_idle_ns / (1_000_000_000 / u64::from(self.hz))) as i64;
        x.soft_rt_next_start.max(by_rate).max(jiffies + idle_j + 4)
    }

    /// `bfq_bfqq_end_wr`.
    fn end_wr(&mut self, q: u32, jiffies: i64) {
        let x = self.qm(q);
        x.wr_coeff = 1;
        x.wr_cur_max_time = 0;
        x.last_wr_start_finish = jiffies;
        self.apply_weight(q);
    }

    /// `bfq_update_bfqq_wr_on_rq_arrival` (no bursts).
    #[allow(clippy::too_many_arguments)]
    fn update_wr_on_rq_arrival(
        &mut self,
        q: u32,
        old_wr: u64,
        deserves: bool,
        interactive: bool,
        soft_rt: bool,
        jiffies: i64,
        nonrot: bool,
    ) {
        let (dur, rt_max, min_budget) = (self.wr_duration(nonrot), self.wr_rt_max_time(), self.min_budget());
        let e = self.q(q).entity as usize;
        let x = &mut self.queues[q as usize];
        if old_wr == 1 && deserves {
            if interactive {
                x.service_from_wr = 0;
                x.wr_coeff = WR_COEFF;
                x.wr_cur_max_time = dur;
            } else {
                x.wr_start_at_switch_to_srt = LONG_AGO;
                x.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                x.wr_cur_max_time = rt_max;
            }
            let b = &mut self.wf.ents[e].budget;
            *b = (*b).min(2 * min_budget);
        } else if old_wr > 1 {
            if interactive {
                x.wr_coeff = WR_COEFF;
                x.wr_cur_max_time = dur;
            } else if soft_rt {
                if x.wr_cur_max_time != rt_max {
                    x.wr_start_at_switch_to_srt = x.last_wr_start_finish;
                    x.wr_cur_max_time = rt_max;
                    x.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                }
                x.last_wr_start_finish = jiffies;
            }
        }
    }

    /// `bfq_bfqq_higher_class_or_weight`.
    fn higher_class_or_weight(&self, q: u32, s: u32) -> bool {
        if self.q(q).class < self.q(s).class {
            return true;
        }
        let (gq, gs) = (self.q(q).group, self.q(s).group);
        let w = |x: u32, g: usize| match self.wf.sds[g].entity {
            Some(ge) => self.wf.ents[ge as usize].weight,
            None => self.weight(x),
        };
        if gq == gs { self.weight(q) > self.weight(s) } else { w(q, gq) > w(s, gs) }
    }

    /// `next_queue_may_preempt` (root `next_in_service` differs from the
    /// in-service entity), approximated: the in-service queue and the newly
    /// busy one hang under different top-level entities of the root.
    fn may_preempt(&self, q: u32, s: u32) -> bool {
        let top = |g: usize| {
            let mut g = g;
            while let Some(p) = self.groups[g].parent {
                if p == 0 {
                    break;
                }
                g = p;
            }
            g
        };
        let (a, b) = (self.q(q).group, self.q(s).group);
        // Under one top-level group entity, the root's next_in_service is the
        // in-service group itself (`bfq_no_longer_next_in_service` keeps a
        // group with several active entities): no preemption.
        a == 0 || b == 0 || top(a) != top(b)
    }

    /// `bfq_bfqq_handle_idle_busy_switch`.
    fn idle_busy_switch(&mut self, ctx: &mut ElvCtx<'_>, q: u32, old_wr: u64) -> bool {
        let jiffies = Self::jiffies(ctx);
        let x = self.q(q);
        let idle_for_long_time = x.dispatched == 0 && x.budget_timeout + self.ms_j(2000) < jiffies;
        let soft_rt = WR_MAX_SOFTRT_RATE > 0
            && x.seek_history != u32::MAX
            && x.soft_rt_next_start < jiffies
            && x.dispatched == 0
            && x.orig_weight == 40;
        let interactive = idle_for_long_time;
        let deserves = self.t.low_latency && (x.wr_coeff > 1 || (x.sync && (interactive || soft_rt)));
        // bfq_bfqq_update_budg_for_activation (not arrived in time).
        let next = x.next_rq.expect("a queue turning busy has a request");
        let charge = self.serv_to_charge(ctx.rqs.rq(next), q);
        let e = self.q(q).entity as usize;
        self.wf.ents[e].service = 0;
        self.wf.ents[e].budget = self.q(q).max_budget.max(charge);
        if self.t.low_latency {
            self.update_wr_on_rq_arrival(q, old_wr, deserves, interactive, soft_rt, jiffies, ctx.nonrot);
            self.apply_weight(q);
        }
        let x = self.qm(q);
        x.last_idle_bklogged = jiffies;
        x.service_from_backlogged = 0;
        x.softrt_update = false;
        self.add_busy(q);
        if let Some(s) = self.in_service
            && s != q
            && (self.higher_class_or_weight(q, s) || !self.better_to_idle(s, ctx.nonrot))
            && self.may_preempt(q, s)
        {
            self.expire(ctx, s, false, Expiry::Preempted);
        }
        interactive
    }

    // ------------------------------------------------------------ requests

    /// `bfq_choose_req`: sync before async, meta before not, then the
    /// nearer to `last` with backward seeks up to `back_seek_max` KiB
    /// costing `back_seek_penalty` times.
    fn choose_req(&self, rqs: &Requests, a: Option<RequestId>, b: Option<RequestId>, last: u64) -> Option<RequestId> {
        let (Some(r1), Some(r2)) = (a, b) else { return a.or(b) };
        if r1 == r2 {
            return Some(r2);
        }
        let (q1, q2) = (rqs.rq(r1), rqs.rq(r2));
        if q1.flags.is_sync() != q2.flags.is_sync() {
            return Some(if q1.flags.is_sync() { r1 } else { r2 });
        }
        if q1.flags.meta != q2.flags.meta {
            return Some(if q1.flags.meta { r1 } else { r2 });
        }
        let back_max = self.t.back_seek_max * 2;
        Some(nearer_after(last, back_max, self.t.back_seek_penalty, (r1, q1.sector), (r2, q2.sector)))
    }

    /// `bfq_check_fifo`: once per service slot, the FIFO head if expired.
    fn check_fifo(&mut self, ctx: &ElvCtx<'_>, q: u32, last: RequestId) -> Option<RequestId> {
        if self.q(q).fifo_expire {
            return None;
        }
        self.qm(q).fifo_expire = true;
        let (_, &rq) = self.q(q).fifo.first_key_value()?;
        if rq == last || ctx.now < ctx.rqs.rq(rq).fifo_time {
            return None;
        }
        Some(rq)
    }

    /// `bfq_find_next_rq`: the expired FIFO head, else the next request in
    /// sector order (wrapping) against the previous one.
    fn find_next_rq(&mut self, ctx: &ElvCtx<'_>, q: u32, last: RequestId) -> Option<RequestId> {
        if let Some(rq) = self.check_fifo(ctx, q, last) {
            return Some(rq);
        }
        let r = ctx.rqs.rq(last);
        let key = (r.sector, r.sort_key);
        let sl = &self.q(q).sort_list;
        let prev = elv_rb_neighbour(sl, key, false);
        let next = elv_rb_neighbour(sl, key, true)
            .or_else(|| sl.first_key_value().map(|(_, &v)| v).filter(|&v| v != last));
        self.choose_req(ctx.rqs, next, prev, r.sector)
    }

    /// `bfq_updated_next_req`: a queue not in service gets enough budget for
    /// its new first request and is repositioned.
    fn updated_next_req(&mut self, rqs: &Requests, q: u32) {
        let Some(next) = self.q(q).next_rq else { return };
        if self.in_service == Some(q) {
            return;
        }
        let e = self.q(q).entity;
        let en = &self.wf.ents[e as usize];
        let new_budget = self.q(q).max_budget.max(self.serv_to_charge(rqs.rq(next), q)).max(en.service);
        if en.budget != new_budget {
            self.wf.ents[e as usize].budget = new_budget;
            if self.wf.ents[e as usize].tree == Tree::Active {
                self.wf.reposition(e);
            }
        }
    }

    /// `bfq_update_io_thinktime`.
    fn update_io_thinktime(&mut self, now: u64, q: u32) {
        let slice_idle = self.t.slice_idle_ns;
        let x = self.qm(q);
        if x.dispatched > 0 || x.busy {
            return;
        }
        let elapsed = now.saturating_sub(x.ttime.last_end_request).min(2 * slice_idle);
        let t = &mut x.ttime;
        t.samples = (7 * t.samples + 256) / 8;
        t.total = (7 * t.total + 256 * elapsed) / 8;
        t.mean = (t.total + 128) / t.samples;
    }

    /// `bfq_update_has_short_ttime` (no `split_time`, no exited tasks).
    fn update_has_short_ttime(&mut self, q: u32) {
        let slice_idle = self.t.slice_idle_ns;
        let x = self.qm(q);
        if !x.sync || x.class == BfqClass::Idle || slice_idle == 0 {
            return;
        }
        // bfq_sample_valid: more than 80 samples.
        x.has_short_ttime = !(x.ttime.samples > 80 && x.ttime.mean > slice_idle >> 1);
    }

    /// `bfq_update_io_seektime` with `BFQ_RQ_SEEKY`.
    fn update_io_seektime(&mut self, q: u32, r: &Request, nonrot: bool) {
        let x = self.qm(q);
        let last = x.last_request_pos;
        let sdist = if last == 0 { 0 } else { last.abs_diff(r.sector) };
        let seeky = sdist > SEEK_THR && (!nonrot || r.nr_sectors < SECT_THR_NONROT);
        x.seek_history = (x.seek_history << 1) | u32::from(seeky);
    }

    /// `bfq_insert_request` → `__bfq_insert_request`.
    pub fn insert_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        let jiffies = Self::jiffies(ctx);
        let (task, sync) = {
            let r = ctx.rqs.rq(rq);
            (r.task, r.flags.is_sync())
        };
        let q = self.get_queue(task, sync, ctx.now, jiffies);
        self.seq += 1;
        let seq = self.seq;
        {
            let r = ctx.rqs.rq_mut(rq);
            r.cfqq = Some(q);
            r.sort_key = seq;
            r.fifo_key = seq;
        }
        self.update_io_thinktime(ctx.now.ns(), q);
        self.update_has_short_ttime(q);
        let r = ctx.rqs.rq(rq).clone();
        self.update_io_seektime(q, &r, ctx.nonrot);
        self.add_request(ctx, q, rq);
        let fifo_time = ctx.now.after(self.t.fifo_expire_ns[usize::from(sync)]);
        ctx.rqs.rq_mut(rq).fifo_time = fifo_time;
        self.qm(q).fifo.insert(seq, rq);
        self.rq_enqueued(ctx, q, rq);
    }

    /// `bfq_add_request`.
    fn add_request(&mut self, ctx: &mut ElvCtx<'_>, q: u32, rq: RequestId) {
        let jiffies = Self::jiffies(ctx);
        let (sync, key) = {
            let r = ctx.rqs.rq(rq);
            (r.flags.is_sync(), (r.sector, r.sort_key))
        };
        let old_wr = self.q(q).wr_coeff;
        let mut interactive = false;
        self.qm(q).queued[usize::from(sync)] += 1;
        self.queued += 1;
        self.qm(q).sort_list.insert(key, rq);
        let prev = self.q(q).next_rq;
        let next = self.choose_req(ctx.rqs, prev, Some(rq), self.last_position);
        self.qm(q).next_rq = next;
        if !self.q(q).busy {
            interactive = self.idle_busy_switch(ctx, q, old_wr);
        } else {
            // An async queue whose requests arrive 500 ms apart is raised.
            let min_inter_arr_async = self.ms_j(500);
            if self.t.low_latency
                && old_wr == 1
                && !sync
                && self.q(q).last_wr_start_finish + min_inter_arr_async < jiffies
            {
                let dur = self.wr_duration(ctx.nonrot);
                let x = self.qm(q);
                x.wr_coeff = WR_COEFF;
                x.wr_cur_max_time = dur;
                self.apply_weight(q);
            }
            if prev != next {
                self.updated_next_req(ctx.rqs, q);
            }
        }
        let low_latency = self.t.low_latency;
        let x = self.qm(q);
        if low_latency && (old_wr == 1 || x.wr_coeff == 1 || interactive) {
            x.last_wr_start_finish = jiffies;
        }
    }

    /// `bfq_rq_enqueued`: a request for the queue being idled for ends the
    /// idling (unless it is small and idling boosts throughput).
    fn rq_enqueued(&mut self, ctx: &mut ElvCtx<'_>, q: u32, rq: RequestId) {
        let r = ctx.rqs.rq(rq);
        let (end, sync, sectors) = (r.end_sector(), r.flags.is_sync(), r.nr_sectors);
        self.qm(q).last_request_pos = end;
        if self.in_service == Some(q) && self.q(q).wait_request {
            let jiffies = Self::jiffies(ctx);
            let small_req = self.q(q).queued[usize::from(sync)] == 1 && sectors < 32;
            let timed_out = self.budget_timed_out(q, jiffies);
            if small_req && self.idling_boosts_thr_without_issues(q, ctx.nonrot) && !timed_out {
                return;
            }
            self.qm(q).wait_request = false;
            self.idle_timer = None;
            if timed_out {
                self.expire(ctx, q, false, Expiry::BudgetTimeout);
            }
        }
    }

    /// `bfq_remove_request` (from `bfq_dispatch_remove`).
    fn remove_request(&mut self, ctx: &mut ElvCtx<'_>, q: u32, rq: RequestId) {
        if self.q(q).next_rq == Some(rq) {
            let next = self.find_next_rq(ctx, q, rq);
            self.qm(q).next_rq = next;
            self.updated_next_req(ctx.rqs, q);
        }
        let r = ctx.rqs.rq(rq);
        let (sync, key, fkey) = (r.flags.is_sync(), (r.sector, r.sort_key), r.fifo_key);
        let x = self.qm(q);
        // `list_del_init` only if still on the FIFO: `bfq_requests_merged`
        // may have handed its place to the request it joined.
        if x.fifo.get(&fkey) == Some(&rq) {
            x.fifo.remove(&fkey);
        }
        x.queued[usize::from(sync)] -= 1;
        x.sort_list.remove(&key);
        self.queued -= 1;
        if self.q(q).sort_list.is_empty() {
            self.qm(q).next_rq = None;
            if self.q(q).busy && self.in_service != Some(q) {
                self.del_busy(q);
                let e = self.q(q).entity as usize;
                self.wf.ents[e].budget = 0;
                self.wf.ents[e].service = 0;
            }
        }
    }

    /// `bfq_requests_merged` (6.18 bfq-iosched.c): `next` has joined `rq`
    /// (`attempt_merge` → `elv_merge_requests`). If both are queued in the
    /// same queue and `next` is older, `rq` takes `next`'s place in the FIFO
    /// and its `fifo_time`; `rq` replaces `next` as the queue's next request;
    /// then `next`, if still in the scheduler, is removed
    /// (`bfq_remove_request`; the merge into a request being inserted finds
    /// `next` outside it).
    pub fn requests_merged(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId, next: RequestId) {
        let (r, n) = (ctx.rqs.rq(rq), ctx.rqs.rq(next));
        let (bfqq, next_bfqq) = (r.cfqq, n.cfqq);
        let (rq_fifo, next_fifo, next_key) = ((r.fifo_key, r.fifo_time), (n.fifo_key, n.fifo_time), (n.sector, n.sort_key));
        if let Some(q) = bfqq {
            let x = self.qm(q);
            let queued = |x: &BfqQueue, key: u64, id: RequestId| x.fifo.get(&key) == Some(&id);
            if bfqq == next_bfqq && queued(x, rq_fifo.0, rq) && queued(x, next_fifo.0, next) && next_fifo.1 < rq_fifo.1 {
                // list_del_init(&rq->queuelist); list_replace_init(&next->queuelist, &rq->queuelist)
                x.fifo.remove(&rq_fifo.0);
                x.fifo.insert(next_fifo.0, rq);
                let r = ctx.rqs.rq_mut(rq);
                r.fifo_key = next_fifo.0;
                r.fifo_time = next_fifo.1;
            }
            if x.next_rq == Some(next) {
                x.next_rq = Some(rq);
            }
        }
        // `if (!RB_EMPTY_NODE(&next->rb_node)) bfq_remove_request(q, next)`
        if let Some(nq) = next_bfqq
            && self.q(nq).sort_list.get(&next_key) == Some(&next)
        {
            self.remove_request(ctx, nq, next);
        }
    }

    /// `elv_rb_latter_request` / `elv_rb_former_request` (6.18 elevator.c,
    /// BFQ's `next_request` / `former_request`): the neighbour of `rq` in its
    /// queue's sort tree.
    pub fn neighbour(&self, rqs: &Requests, rq: RequestId, latter: bool) -> Option<RequestId> {
        let r = rqs.rq(rq);
        let sl = &self.q(r.cfqq?).sort_list;
        let key = (r.sector, r.sort_key);
        if sl.get(&key) != Some(&rq) {
            return None;
        }
        elv_rb_neighbour(sl, key, latter)
    }

    /// `bfq_request_merge`: the submitter's queue's request starting where
    /// the bio ends (`bfq_find_rq_fmerge`).
    pub fn merge(&self, rqs: &Requests, task: TaskId, sync: bool, bio_end: u64) -> Option<RequestId> {
        let q = self.bic_queue(task, sync)?;
        let (_, &rq) = self.q(q).sort_list.range((bio_end, 0)..(bio_end + 1, 0)).next()?;
        debug_assert_eq!(rqs.rq(rq).sector, bio_end);
        Some(rq)
    }

    /// `bfq_allow_bio_merge`: a sync bio never joins an async request, and
    /// the bio's queue must be the request's.
    pub fn allow_bio_merge(&self, r: &Request, task: TaskId, sync: bool) -> bool {
        if sync && !r.flags.is_sync() {
            return false;
        }
        self.bic_queue(task, sync).is_some_and(|q| r.cfqq == Some(q))
    }

    /// `bfq_request_merged`: after a front merge that moved the request
    /// before its predecessor in the sort tree, re-sort it and reconsider
    /// the queue's next request.
    pub fn merged_request(&mut self, rqs: &mut Requests, rq: RequestId, old_sector: u64, front: bool) {
        let r = rqs.rq(rq);
        let Some(q) = r.cfqq else { return };
        let (new_key, old_key) = ((r.sector, r.sort_key), (old_sector, r.sort_key));
        let moved_before_prev =
            self.q(q).sort_list.range(..old_key).next_back().is_some_and(|(&(sector, _), _)| r.sector < sector);
        // The tree is keyed by sector here: re-key the request whatever the case.
        let x = self.qm(q);
        x.sort_list.remove(&old_key);
        x.sort_list.insert(new_key, rq);
        if !front || !moved_before_prev {
            return;
        }
        let prev = self.q(q).next_rq;
        let next = self.choose_req(rqs, prev, Some(rq), self.last_position);
        self.qm(q).next_rq = next;
        if prev != next {
            self.updated_next_req(rqs, q);
        }
    }

    // ------------------------------------------------------------ expiry

    /// `__bfq_bfqq_recalc_budget`.
    fn recalc_budget(&mut self, ctx: &ElvCtx<'_>, q: u32, reason: Expiry) {
        let min_budget = self.min_budget() as i64;
        let bfqd_max = self.max_budget as i64;
        let x = self.q(q);
        let e = &self.wf.ents[x.entity as usize];
        let mut budget = if x.wr_coeff == 1 { x.max_budget as i64 } else { 2 * min_budget };
        if x.sync && x.wr_coeff == 1 {
            budget = match reason {
                Expiry::TooIdle => {
                    if x.dispatched > 0 {
                        (budget * 2).min(bfqd_max)
                    } else if budget > 5 * min_budget {
                        budget - 4 * min_budget
                    } else {
                        min_budget
                    }
                }
                Expiry::BudgetTimeout => (budget * 2).min(bfqd_max),
                Expiry::BudgetExhausted => (budget * 4).min(bfqd_max),
                Expiry::NoMoreRequests => (e.service as i64).max(min_budget),
                Expiry::Preempted => return,
            };
        } else if !x.sync {
            budget = bfqd_max;
        }
        let mut max_budget = budget.max(0) as u64;
        if self.budgets_assigned >= STATS_MIN_BUDGETS && self.t.max_budget == 0 {
            max_budget = max_budget.min(self.max_budget);
        }
        self.qm(q).max_budget = max_budget;
        if let Some(next) = self.q(q).next_rq {
            let charge = self.serv_to_charge(ctx.rqs.rq(next), q);
            let e = self.q(q).entity as usize;
            self.wf.ents[e].budget = max_budget.max(charge);
        }
    }

    /// `bfq_bfqq_expire` with `__bfq_bfqq_expire` and
    /// `__bfq_bfqd_reset_in_service`.
    fn expire(&mut self, ctx: &ElvCtx<'_>, q: u32, _compensate: bool, reason: Expiry) {
        let jiffies = Self::jiffies(ctx);
        self.expirations[reason as usize] += 1;
        let e = self.q(q).entity;
        // bfq_bfqq_charge_time: a queue that timed out with a third of its
        // budget left is charged for the time it held the device.
        if self.q(q).wr_coeff == 1
            && reason == Expiry::BudgetTimeout
            && self.budget_left(q) >= self.budget(q) as i64 / 3
        {
            let timeout_ms = u64::from(self.hz / 8) * 1000 / u64::from(self.hz);
            let held_ms = ctx.now.since(self.last_budget_start) / 1_000_000;
            let for_time = self.max_budget * held_ms.min(timeout_ms) / timeout_ms.max(1);
            let en = &self.wf.ents[e as usize];
            let tot = for_time.max(en.service);
            if tot > en.budget {
                self.wf.ents[e as usize].budget = tot;
            }
            let extra = tot - self.wf.ents[e as usize].service;
            self.charge(q, extra);
        }
        if self.t.low_latency && self.q(q).wr_coeff == 1 {
            self.qm(q).last_wr_start_finish = jiffies;
        }
        if self.t.low_latency && self.q(q).sort_list.is_empty() {
            if self.q(q).dispatched == 0 {
                let next = self.softrt_next_start(q, jiffies);
                self.qm(q).soft_rt_next_start = next;
            } else {
                self.qm(q).softrt_update = true;
            }
        }
        self.recalc_budget(ctx, q, reason);
        // __bfq_bfqq_expire.
        if self.q(q).sort_list.is_empty()
            && !(reason == Expiry::Preempted && self.idling_needed_for_service_guarantees(q))
        {
            if self.q(q).dispatched == 0 {
                self.qm(q).budget_timeout = jiffies;
            }
            self.del_busy(q);
        } else {
            self.wf.requeue(e);
        }
        // __bfq_bfqd_reset_in_service.
        self.qm(q).wait_request = false;
        self.idle_timer = None;
        self.in_service = None;
        self.wf.reset_in_service(e);
        if self.q(q).busy || matches!(reason, Expiry::BudgetTimeout | Expiry::BudgetExhausted) {
            self.wf.ents[e as usize].service = 0;
        }
    }

    /// `bfq_bfqq_served` plus the queue's own counters.
    fn charge(&mut self, q: u32, served: u64) {
        let x = self.qm(q);
        if x.wr_coeff > 1 {
            x.service_from_wr += served;
        }
        x.service_from_backlogged += served;
        let e = x.entity;
        self.wf.served(e, served);
    }

    // ------------------------------------------------------------ dispatch

    /// `bfq_set_in_service_queue` → `__bfq_set_in_service_queue` and
    /// `bfq_set_budget_timeout`.
    fn set_in_service_queue(&mut self, ctx: &ElvCtx<'_>) -> Option<u32> {
        if self.tot_busy() == 0 {
            return None;
        }
        let jiffies = Self::jiffies(ctx);
        let q = self.wf.next_queue(jiffies, self.hz)?;
        self.budgets_assigned = (self.budgets_assigned * 7 + 256) / 8;
        let rt_max = self.wr_rt_max_time();
        let timeout = self.t.timeout_j as i64;
        let x = self.qm(q);
        x.fifo_expire = false;
        if x.last_wr_start_finish < jiffies
            && x.wr_coeff > 1
            && x.wr_cur_max_time == rt_max
            && x.budget_timeout < jiffies
        {
            if x.budget_timeout > x.last_wr_start_finish {
                x.last_wr_start_finish += jiffies - x.budget_timeout;
            } else {
                x.last_wr_start_finish = jiffies;
            }
        }
        let coeff = if x.wr_cur_max_time == rt_max { 1 } else { x.wr_coeff as i64 };
        x.budget_timeout = jiffies + timeout * coeff;
        self.last_budget_start = ctx.now;
        self.in_service = Some(q);
        Some(q)
    }

    /// `bfq_select_queue` (no injection: while idling nothing is dispatched).
    fn select_queue(&mut self, ctx: &mut ElvCtx<'_>) -> Option<u32> {
        let jiffies = Self::jiffies(ctx);
        let mut cur = self.in_service;
        if let Some(q) = cur
            && self.may_expire_for_budg_timeout(q, jiffies)
            && !self.must_idle(q, ctx.nonrot)
        {
            self.expire(ctx, q, false, Expiry::BudgetTimeout);
            cur = None;
        }
        // Each pass either keeps a queue or expires one; expiring every
        // busy queue once bounds the loop.
        for _ in 0..=self.queues.len() + 1 {
            let q = match cur {
                Some(q) => q,
                None => self.set_in_service_queue(ctx)?,
            };
            if let Some(next) = self.q(q).next_rq {
                if self.serv_to_charge(ctx.rqs.rq(next), q) as i64 > self.budget_left(q) {
                    self.expire(ctx, q, false, Expiry::BudgetExhausted);
                    cur = None;
                    continue;
                }
                if self.q(q).wait_request {
                    self.qm(q).wait_request = false;
                    self.idle_timer = None;
                }
                return Some(q);
            }
            if self.q(q).wait_request || (self.q(q).dispatched != 0 && self.better_to_idle(q, ctx.nonrot)) {
                return None;
            }
            self.expire(ctx, q, false, Expiry::NoMoreRequests);
            cur = None;
        }
        None
    }

    /// `bfq_update_wr_data`: the end of weight raising.
    fn update_wr_data(&mut self, q: u32, jiffies: i64, nonrot: bool) {
        let (dur, rt_max) = (self.wr_duration(nonrot), self.wr_rt_max_time());
        let x = self.q(q);
        if x.wr_coeff > 1 {
            if x.last_wr_start_finish + x.wr_cur_max_time < jiffies {
                if x.wr_cur_max_time != rt_max || x.wr_start_at_switch_to_srt + dur < jiffies {
                    self.end_wr(q, jiffies);
                } else {
                    // switch_back_to_interactive_wr.
                    let x = self.qm(q);
                    x.wr_coeff = WR_COEFF;
                    x.wr_cur_max_time = dur;
                    x.last_wr_start_finish = x.wr_start_at_switch_to_srt;
                    self.apply_weight(q);
                }
            }
            let x = self.q(q);
            if x.wr_coeff > 1 && x.wr_cur_max_time != rt_max && x.service_from_wr > MAX_SERVICE_FROM_WR {
                self.end_wr(q, jiffies);
            }
        }
    }

    /// `bfq_dispatch_request` → `__bfq_dispatch_request` →
    /// `bfq_dispatch_rq_from_bfqq`.
    pub fn dispatch_request(&mut self, ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        if self.tot_busy() == 0 {
            return None;
        }
        if self.t.strict_guarantees && self.tot_rq_in_driver > 0 {
            return None;
        }
        let q = self.select_queue(ctx)?;
        let rq = self.q(q).next_rq.expect("a selected queue has a next request");
        let charge = self.serv_to_charge(ctx.rqs.rq(rq), q);
        self.charge(q, charge);
        // bfq_dispatch_remove.
        self.qm(q).dispatched += 1;
        self.remove_request(ctx, q, rq);
        self.last_position = ctx.rqs.rq(rq).end_sector();
        self.tot_rq_in_driver += 1;
        if self.in_service == Some(q) {
            let jiffies = Self::jiffies(ctx);
            self.update_wr_data(q, jiffies, ctx.nonrot);
            if self.tot_busy() > 1 && self.q(q).class == BfqClass::Idle {
                self.expire(ctx, q, false, Expiry::BudgetExhausted);
            }
        }
        Some(rq)
    }

    /// `bfq_update_hw_tag`.
    fn update_hw_tag(&mut self) {
        self.max_rq_in_driver = self.max_rq_in_driver.max(self.tot_rq_in_driver);
        if self.hw_tag == 1 || self.tot_rq_in_driver + self.queued <= HW_QUEUE_THRESHOLD {
            return;
        }
        if let Some(s) = self.in_service {
            let x = self.q(s);
            if x.has_short_ttime
                && x.dispatched + x.queued[0] + x.queued[1] < HW_QUEUE_THRESHOLD
                && self.tot_rq_in_driver < HW_QUEUE_THRESHOLD
            {
                return;
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= HW_QUEUE_SAMPLES {
            return;
        }
        self.hw_tag = i8::from(self.max_rq_in_driver > HW_QUEUE_THRESHOLD);
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
    }

    /// `bfq_finish_requeue_request` → `bfq_completed_request`.
    pub fn completed_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        let Some(q) = ctx.rqs.rq(rq).cfqq else { return };
        let jiffies = Self::jiffies(ctx);
        self.update_hw_tag();
        self.tot_rq_in_driver -= 1;
        self.qm(q).dispatched -= 1;
        if self.q(q).dispatched == 0 && !self.q(q).busy {
            self.qm(q).budget_timeout = jiffies;
        }
        self.qm(q).ttime.last_end_request = ctx.now.ns();
        let x = self.q(q);
        if x.softrt_update && x.dispatched == 0 && x.sort_list.is_empty() && x.wr_coeff != WR_COEFF {
            let next = self.softrt_next_start(q, jiffies);
            self.qm(q).soft_rt_next_start = next;
        }
        if self.in_service == Some(q) {
            if self.must_idle(q, ctx.nonrot) {
                if self.q(q).dispatched == 0 {
                    self.arm_slice_timer(ctx, q);
                }
            } else if self.may_expire_for_budg_timeout(q, jiffies) {
                self.expire(ctx, q, false, Expiry::BudgetTimeout);
            } else if self.q(q).sort_list.is_empty()
                && (self.q(q).dispatched == 0 || !self.better_to_idle(q, ctx.nonrot))
            {
                self.expire(ctx, q, false, Expiry::NoMoreRequests);
            }
        }
    }

    /// `bfq_idle_slice_timer` → `bfq_idle_slice_timer_body`.
    pub fn idle_slice_timer(&mut self, ctx: &mut ElvCtx<'_>) {
        self.idle_timer = None;
        let Some(q) = self.in_service else { return };
        self.qm(q).wait_request = false;
        let jiffies = Self::jiffies(ctx);
        let reason = if self.budget_timed_out(q, jiffies) {
            Expiry::BudgetTimeout
        } else if self.q(q).queued == [0, 0] {
            Expiry::TooIdle
        } else {
            return;
        };
        self.expire(ctx, q, true, reason);
    }

    pub fn idle_timer_at(&self) -> Option<SimTime> {
        self.idle_timer
    }

    pub fn queued(&self) -> usize {
        self.queued as usize
    }

    /// `sync pid N be/4`-like: the queue's owner, class/level and group.
    pub fn queue_label(&self, r: &Request, comm: impl Fn(TaskId) -> String) -> String {
        let Some(q) = r.cfqq else { return "bfq".into() };
        let x = self.q(q);
        let class = match x.class {
            BfqClass::Idle => "idle".to_string(),
            c => format!("{}/{}", c.name(), x.level),
        };
        let group = if x.group == 0 { String::new() } else { format!(", group {}", x.group) };
        if x.sync {
            format!("sync queue of {} ({class}{group})", comm(x.pid))
        } else {
            format!("shared async queue ({class}{group})")
        }
    }

    /// Counters against the queues: busy queues per class, queued requests
    /// (sort list = FIFO = `queued`), requests in the driver, the in-service
    /// queue busy, and the service trees' weight sums.
    pub fn check(&self) -> Result<(), String> {
        let mut busy = [0u32; 3];
        for x in self.queues.iter().filter(|x| x.busy) {
            busy[x.class.index()] += 1;
            if self.wf.ents[x.entity as usize].tree == Tree::Idle {
                return Err(format!("bfq: busy queue of task {} is on an idle tree", x.pid.0));
            }
        }
        if busy != self.busy_queues {
            return Err(format!("bfq: busy queues {busy:?}, counted {:?}", self.busy_queues));
        }
        let queued: u32 = self.queues.iter().map(|x| x.queued[0] + x.queued[1]).sum();
        let sorted: usize = self.queues.iter().map(|x| x.sort_list.len()).sum();
        let fifo: usize = self.queues.iter().map(|x| x.fifo.len()).sum();
        if queued != self.queued || sorted != queued as usize || fifo != sorted {
            return Err(format!("bfq: queued {} but queues hold {queued}/{sorted}/{fifo}", self.queued));
        }
        let dispatched: u32 = self.queues.iter().map(|x| x.dispatched).sum();
        if dispatched != self.tot_rq_in_driver {
            return Err(format!("bfq: {dispatched} dispatched but tot_rq_in_driver {}", self.tot_rq_in_driver));
        }
        for x in &self.queues {
            if x.sort_list.is_empty() != x.next_rq.is_none() {
                return Err(format!(
                    "bfq: queue of task {} has next_rq {:?} with {} queued",
                    x.pid.0,
                    x.next_rq,
                    x.sort_list.len()
                ));
            }
        }
        if let Some(s) = self.in_service {
            if !self.q(s).busy {
                return Err("bfq: the in-service queue is not busy".into());
            }
            if self.wf.sds[self.q(s).group].in_service != Some(self.q(s).entity) {
                return Err("bfq: the in-service queue's entity is not in service in its group".into());
            }
        }
        self.wf.check()
    }

    /// A task's queue's (weight, wr_coeff), for tests.
    #[cfg(test)]
    fn queue_of(&self, task: u32, sync: bool) -> Option<(u64, u64)> {
        let q = if sync {
            self.sync_q.get(task as usize).copied().flatten()?
        } else {
            self.bic_queue(TaskId(task), false)?
        };
        Some((self.weight(q), self.q(q).wr_coeff))
    }
}
