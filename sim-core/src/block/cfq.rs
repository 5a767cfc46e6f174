//! The CFQ elevator of Linux 4.4 (block/cfq-iosched.c), root cgroup only,
//! with an option for commit 3932a86b4b9d ("cfq: fix starvation of
//! asynchronous writes", 4.9 / 4.8.4; also backported to late 4.4.y).
//!
//! Modelled: per-process sync queues and async queues shared per (class,
//! prio); the BE service trees by workload type (ASYNC, SYNC_NOIDLE, SYNC)
//! and the IDLE tree, with 4.4's `rb_key` (`cfq_service_tree_add`); the
//! group's saved workload slice; slices that start at the first completion
//! (`cfq_set_prio_slice`, scaled by `cfq_scaled_cfqq_slice` under
//! `low_latency`); `cfq_select_queue` with idling, `group_idle` and
//! `wait_busy`; `cfq_may_dispatch` with quantum, the async depth from
//! `last_delayed_sync` and "async waits while sync is in flight";
//! `cfq_check_fifo` once per slice; `cfq_should_preempt`/`cfq_preempt_queue`;
//! think time, seek history, the idle window and `hw_tag` detection. Every
//! time is in jiffies with the kernel's unsigned arithmetic.
//!
//! Not modelled: RT class (no task has an RT policy), blkio cgroups (one
//! group, so `vdisktime` orders nothing), close cooperators and queue merging
//! (`cfq_close_cooperator`), `REQ_NOIDLE` (O_DIRECT writes do not set it),
//! `cfq_may_queue`, forced dispatch. The exact sources are in the notes of
//! issue 4; `/work/cfq-spec.md`'s pseudo-code was read from v4.4 and v4.9.

use super::cfq_tunables::{CfqBehaviour, CfqTunables};
use super::elv_ctx::ElvCtx;
use super::request::{ReqFlags, Request, Requests, elv_rb_neighbour, nearer_after};
use crate::ids::{RequestId, TaskId};
use crate::time::SimTime;
use crate::workload::Policy;
use std::collections::BTreeMap;

/// `CFQ_SLICE_SCALE`.
const SLICE_SCALE: u64 = 5;
/// `CFQ_MIN_TT`, jiffies.
const MIN_TT: u64 = 2;
/// `CFQ_HW_QUEUE_MIN`.
const HW_QUEUE_MIN: u32 = 5;
/// `CFQQ_SEEK_THR`, sectors.
const SEEK_THR: u64 = 800;
/// `CFQQ_SECT_THR_NONROT`, sectors.
const SECT_THR_NONROT: u32 = 64;
/// `CFQQ_CLOSE_THR`, sectors.
const CLOSE_THR: u64 = 8192;
/// `PAGE_CACHE_SIZE`.
const PAGE_BYTES: u64 = 4096;

/// I/O scheduling class (`IOPRIO_CLASS_*`) as `task_nice_ioclass` derives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoClass {
    Be,
    Idle,
}

/// A task's I/O priority: class and level 0–7 (`task_nice_ioprio`: (nice+20)/5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoPrio {
    pub class: IoClass,
    pub prio: u8,
}

impl IoPrio {
    /// `task_nice_ioclass` / `task_nice_ioprio` (4.4 include/linux/ioprio.h).
    pub fn of_task(policy: Policy, nice: i8) -> IoPrio {
        let class = if policy == Policy::Idle { IoClass::Idle } else { IoClass::Be };
        let prio = if class == IoClass::Idle { 7 } else { ((i32::from(nice) + 20) / 5) as u8 };
        IoPrio { class, prio }
    }
}

/// `wl_type_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum WlType {
    Async = 0,
    SyncNoidle = 1,
    Sync = 2,
}

const WL_TYPES: [WlType; 3] = [WlType::Async, WlType::SyncNoidle, WlType::Sync];

/// Index of a service tree: BE async / sync-noidle / sync, then IDLE.
type TreeId = usize;
const IDLE_TREE: TreeId = 3;

/// `struct cfq_ttime`.
#[derive(Clone, Copy, Debug, Default)]
struct Ttime {
    last_end_request: u64,
    total: u64,
    samples: u64,
    mean: u64,
}

impl Ttime {
    /// `__cfq_update_io_thinktime`.
    fn update(&mut self, jiffies: u64, slice_idle: u64) {
        let elapsed = jiffies.wrapping_sub(self.last_end_request).min(2 * slice_idle);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed) / 8;
        self.mean = (self.total + 128) / self.samples;
    }

    /// `sample_valid`.
    fn valid(&self) -> bool {
        self.samples > 80
    }
}

/// A service tree (`struct cfq_rb_root`): queues by `rb_key`, ties after.
#[derive(Clone, Debug, Default)]
struct ServiceTree {
    rb: BTreeMap<(i64, u64), u32>,
    ttime: Ttime,
}

impl ServiceTree {
    fn first(&self) -> Option<u32> {
        self.rb.first_key_value().map(|(_, &q)| q)
    }
}

/// `struct cfq_queue`.
#[derive(Clone, Debug)]
struct CfqQueue {
    sync: bool,
    prio: IoPrio,
    /// The owning task (sync), or the task that created the shared queue.
    pid: TaskId,
    on_rr: bool,
    /// Position in a service tree: (tree, key).
    rb_node: Option<(TreeId, (i64, u64))>,
    rb_key: u64,
    sort_list: BTreeMap<(u64, u64), RequestId>,
    fifo: BTreeMap<u64, RequestId>,
    next_rq: Option<RequestId>,
    queued: [u32; 2],
    dispatched: u32,
    dispatch_start: u64,
    allocated_slice: u64,
    slice_dispatch: u32,
    slice_start: u64,
    slice_end: u64,
    slice_resid: i64,
    prio_pending: u32,
    seek_history: u32,
    last_request_pos: u64,
    wait_request: bool,
    must_dispatch: bool,
    fifo_expire: bool,
    idle_window: bool,
    slice_new: bool,
    deep: bool,
    wait_busy: bool,
}

impl CfqQueue {
    /// `cfq_init_cfqq` + `cfq_init_prio_data`.
    fn new(sync: bool, prio: IoPrio, pid: TaskId) -> CfqQueue {
        CfqQueue {
            sync,
            prio,
            pid,
            on_rr: false,
            rb_node: None,
            rb_key: 0,
            sort_list: BTreeMap::new(),
            fifo: BTreeMap::new(),
            next_rq: None,
            queued: [0; 2],
            dispatched: 0,
            dispatch_start: 0,
            allocated_slice: 0,
            slice_dispatch: 0,
            slice_start: 0,
            slice_end: 0,
            slice_resid: 0,
            prio_pending: 0,
            seek_history: 0,
            last_request_pos: 0,
            wait_request: false,
            must_dispatch: false,
            fifo_expire: false,
            // A sync queue starts with the idle window unless it is class IDLE.
            idle_window: sync && prio.class != IoClass::Idle,
            slice_new: false,
            deep: false,
            wait_busy: false,
        }
    }

    fn class_idle(&self) -> bool {
        self.prio.class == IoClass::Idle
    }

    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 4
    }

    fn empty(&self) -> bool {
        self.sort_list.is_empty()
    }

    /// `cfqq_type`.
    fn wl_type(&self) -> WlType {
        if !self.sync {
            WlType::Async
        } else if !self.idle_window {
            WlType::SyncNoidle
        } else {
            WlType::Sync
        }
    }

    /// `st_for(cfqg, cfqq_class, cfqq_type)`.
    fn tree_for(&self) -> TreeId {
        if self.class_idle() { IDLE_TREE } else { self.wl_type() as usize }
    }
}

fn time_after(a: u64, b: u64) -> bool {
    (b.wrapping_sub(a) as i64) < 0
}

fn time_before(a: u64, b: u64) -> bool {
    time_after(b, a)
}

/// `struct cfq_data` with its one (root) `cfq_group`.
#[derive(Clone, Debug)]
pub struct Cfq {
    pub t: CfqTunables,
    hz: u64,
    queues: Vec<CfqQueue>,
    /// `cic->cfqq[1]` per task.
    sync_q: Vec<Option<u32>>,
    /// Whether the task's `cic->cfqq[0]` is set (it has allocated an async request).
    has_async: Vec<bool>,
    task_prio: Vec<IoPrio>,
    /// `cfqg->async_cfqq[1][prio]` and `async_idle_cfqq`.
    async_be: [Option<u32>; 8],
    async_idle: Option<u32>,
    /// Per task `cic->ttime`.
    cic_ttime: Vec<Ttime>,
    trees: [ServiceTree; 4],
    tree_seq: u64,
    sort_seq: u64,
    // cfq_group
    nr_cfqq: u32,
    grp_dispatched: u32,
    saved_wl_slice: u64,
    saved_wl_type: WlType,
    saved_wl_idle: bool,
    busy_queues_avg: u64,
    grp_ttime: Ttime,
    // cfq_data
    serving_wl_idle: bool,
    serving_wl_type: WlType,
    workload_expires: u64,
    busy_queues: u32,
    busy_sync_queues: u32,
    rq_in_driver: u32,
    rq_in_flight: [u32; 2],
    rq_queued: u32,
    hw_tag: i32,
    hw_tag_est_depth: u32,
    hw_tag_samples: u32,
    active_queue: Option<u32>,
    /// `active_cic`: the task whose request was first dispatched in the slice.
    active_cic: Option<TaskId>,
    last_position: u64,
    last_delayed_sync: u64,
    idle_timer: Option<SimTime>,
    jiffy_ns: u64,
}

impl Cfq {
    /// `cfq_init_queue` (root group weight; `hw_tag = -1`;
    /// `last_delayed_sync = jiffies - HZ`).
    pub fn new(t: CfqTunables, task_prio: Vec<IoPrio>, hz: u32, jiffy_ns: u64) -> Cfq {
        let n = task_prio.len();
        let hz = u64::from(hz);
        Cfq {
            t,
            hz,
            queues: Vec::new(),
            sync_q: vec![None; n],
            has_async: vec![false; n],
            task_prio,
            async_be: [None; 8],
            async_idle: None,
            cic_ttime: vec![Ttime::default(); n],
            trees: Default::default(),
            tree_seq: 0,
            sort_seq: 0,
            nr_cfqq: 0,
            grp_dispatched: 0,
            saved_wl_slice: 0,
            saved_wl_type: WlType::Async,
            saved_wl_idle: false,
            busy_queues_avg: 0,
            grp_ttime: Ttime::default(),
            serving_wl_idle: false,
            serving_wl_type: WlType::Async,
            workload_expires: 0,
            busy_queues: 0,
            busy_sync_queues: 0,
            rq_in_driver: 0,
            rq_in_flight: [0; 2],
            rq_queued: 0,
            hw_tag: -1,
            hw_tag_est_depth: 0,
            hw_tag_samples: 0,
            active_queue: None,
            active_cic: None,
            last_position: 0,
            last_delayed_sync: 0u64.wrapping_sub(hz),
            idle_timer: None,
            jiffy_ns,
        }
    }

    fn q(&self, id: u32) -> &CfqQueue {
        &self.queues[id as usize]
    }

    fn qm(&mut self, id: u32) -> &mut CfqQueue {
        &mut self.queues[id as usize]
    }

    /// `cic->cfqq[sync]` of a task, if it exists (no allocation).
    fn cic_queue(&self, task: TaskId, sync: bool) -> Option<u32> {
        if sync {
            self.sync_q[task.index()]
        } else if !self.has_async[task.index()] {
            None
        } else {
            let p = self.task_prio[task.index()];
            match p.class {
                IoClass::Be => self.async_be[p.prio as usize],
                IoClass::Idle => self.async_idle,
            }
        }
    }

    /// `cfq_set_request` → `cfq_get_queue`: the queue a new request goes to.
    fn get_queue(&mut self, task: TaskId, sync: bool) -> u32 {
        if let Some(q) = self.cic_queue(task, sync) {
            return q;
        }
        let p = self.task_prio[task.index()];
        let id = self.queues.len() as u32;
        if sync {
            self.queues.push(CfqQueue::new(true, p, task));
            self.sync_q[task.index()] = Some(id);
            return id;
        }
        self.has_async[task.index()] = true;
        let slot = match p.class {
            IoClass::Be => &mut self.async_be[p.prio as usize],
            IoClass::Idle => &mut self.async_idle,
        };
        match *slot {
            Some(q) => q,
            None => {
                *slot = Some(id);
                self.queues.push(CfqQueue::new(false, p, task));
                id
            }
        }
    }

    // ------------------------------------------------------------ slices

    /// `cfq_prio_slice`: base + base/5·(4 − prio).
    fn prio_slice(&self, sync: bool, prio: u8) -> u64 {
        let base = self.t.slice_j[usize::from(sync)] as i64;
        (base + base / SLICE_SCALE as i64 * (4 - i64::from(prio))) as u64
    }

    fn prio_to_slice(&self, q: u32) -> u64 {
        let q = self.q(q);
        self.prio_slice(q.sync, q.prio.prio)
    }

    /// `cfq_prio_to_maxrq`: 2·slice_async_rq·(8 − prio).
    fn prio_to_maxrq(&self, q: u32) -> u32 {
        2 * self.t.slice_async_rq * (8 - u32::from(self.q(q).prio.prio))
    }

    /// Busy queues of the BE class (`cfq_group_busy_queues_wl`).
    fn busy_wl_be(&self) -> u64 {
        (0..3).map(|t| self.trees[t].rb.len() as u64).sum()
    }

    /// `cfq_group_get_avg_queues` (updates the average as a side effect).
    fn group_get_avg_queues(&mut self) -> u64 {
        let busy = self.busy_wl_be();
        let (min_q, max_q) = (self.busy_queues_avg.min(busy), self.busy_queues_avg.max(busy));
        self.busy_queues_avg = (3 * max_q + min_q + 2) / 4;
        self.busy_queues_avg
    }

    /// `cfq_group_slice`: the root group alone has vfraction 4096.
    fn group_slice(&self) -> u64 {
        self.t.target_latency_j
    }

    /// `cfq_scaled_cfqq_slice`.
    fn scaled_slice(&mut self, q: u32) -> u64 {
        let mut slice = self.prio_to_slice(q);
        if self.t.low_latency {
            let iq = self.group_get_avg_queues();
            let sync_slice = self.t.slice_j[1];
            let expect_latency = sync_slice * iq;
            let group_slice = self.group_slice();
            if expect_latency > group_slice {
                let base_low_slice = 2 * self.t.slice_idle_j;
                let low_slice = slice.min(base_low_slice * slice / sync_slice);
                slice = (slice * group_slice / expect_latency).max(low_slice);
            }
        }
        slice
    }

    /// `cfq_set_prio_slice`.
    fn set_prio_slice(&mut self, q: u32, jiffies: u64) {
        let slice = self.scaled_slice(q);
        let cq = self.qm(q);
        cq.slice_start = jiffies;
        cq.slice_end = jiffies.wrapping_add(slice);
        cq.allocated_slice = slice;
    }

    /// `cfq_slice_used`.
    fn slice_used(&self, q: u32, jiffies: u64) -> bool {
        let cq = self.q(q);
        !cq.slice_new && !time_before(jiffies, cq.slice_end)
    }

    // ------------------------------------------------------------ service trees

    /// `cfq_service_tree_add`: the only place `rb_key` is computed.
    fn service_tree_add(&mut self, q: u32, add_front: bool, jiffies: u64) {
        let st = self.q(q).tree_for();
        let mut new_cfqq = true;
        let rb_key = if self.q(q).class_idle() {
            // CFQ_IDLE_DELAY after the last queue of the idle tree.
            let delay = self.hz / 5;
            match self.trees[st].rb.last_key_value() {
                Some((_, &last)) if last != q => delay.wrapping_add(self.q(last).rb_key),
                _ => delay.wrapping_add(jiffies),
            }
        } else if !add_front {
            // cfq_slice_offset: (nr_cfqq − 1)·(slice(sync, 0) − own slice),
            // with nr_cfqq not yet counting a newly busy queue.
            let cq = self.q(q);
            let delta = self.prio_slice(true, 0) as i64 - self.prio_slice(cq.sync, cq.prio.prio) as i64;
            let offset = (i64::from(self.nr_cfqq) - 1) * delta;
            let key = (offset as u64).wrapping_add(jiffies).wrapping_sub(cq.slice_resid as u64);
            self.qm(q).slice_resid = 0;
            key
        } else {
            let base = match self.trees[st].first() {
                Some(f) => self.q(f).rb_key,
                None => jiffies,
            };
            base.wrapping_sub(self.hz)
        };
        if let Some((old_st, key)) = self.q(q).rb_node {
            new_cfqq = false;
            if rb_key == self.q(q).rb_key && old_st == st {
                return;
            }
            self.trees[old_st].rb.remove(&key);
            self.qm(q).rb_node = None;
        }
        self.tree_seq += 1;
        let key = (rb_key as i64, self.tree_seq);
        self.trees[st].rb.insert(key, q);
        let cq = self.qm(q);
        cq.rb_key = rb_key;
        cq.rb_node = Some((st, key));
        if add_front || !new_cfqq {
            return;
        }
        // cfq_group_notify_queue_add.
        self.nr_cfqq += 1;
    }

    /// `cfq_add_cfqq_rr`.
    fn add_cfqq_rr(&mut self, q: u32, jiffies: u64) {
        debug_assert!(!self.q(q).on_rr);
        self.qm(q).on_rr = true;
        self.busy_queues += 1;
        if self.q(q).sync {
            self.busy_sync_queues += 1;
        }
        self.service_tree_add(q, false, jiffies);
    }

    /// `cfq_del_cfqq_rr`.
    fn del_cfqq_rr(&mut self, q: u32) {
        self.qm(q).on_rr = false;
        if let Some((st, key)) = self.qm(q).rb_node.take() {
            self.trees[st].rb.remove(&key);
        }
        // cfq_group_notify_queue_del.
        self.nr_cfqq -= 1;
        if self.nr_cfqq == 0 {
            self.saved_wl_slice = 0;
        }
        self.busy_queues -= 1;
        if self.q(q).sync {
            self.busy_sync_queues -= 1;
        }
    }

    // ------------------------------------------------------------ requests

    /// `cfq_choose_req`: of two requests, the one to serve first after `last`.
    fn choose_req(
        &self,
        rqs: &Requests,
        rq1: Option<RequestId>,
        rq2: Option<RequestId>,
        last: u64,
    ) -> Option<RequestId> {
        let (Some(r1), Some(r2)) = (rq1, rq2) else { return rq1.or(rq2) };
        if r1 == r2 {
            return rq2;
        }
        let (a, b) = (rqs.rq(r1), rqs.rq(r2));
        if a.flags.is_sync() != b.flags.is_sync() {
            return Some(if a.flags.is_sync() { r1 } else { r2 });
        }
        if a.flags.prio != b.flags.prio {
            return Some(if a.flags.prio { r1 } else { r2 });
        }
        let back_max = self.t.back_seek_max_kib * 2;
        let penalty = u64::from(self.t.back_seek_penalty);
        Some(nearer_after(last, back_max, penalty, (r1, a.sector), (r2, b.sector)))
    }

    /// `cfq_find_next_rq`: the better of the sector successor (wrapping to
    /// the lowest) and predecessor of `last`.
    fn find_next_rq(&self, rqs: &Requests, q: u32, last: RequestId) -> Option<RequestId> {
        let cq = self.q(q);
        let l = rqs.rq(last);
        let key = (l.sector, l.sort_key);
        let next = elv_rb_neighbour(&cq.sort_list, key, true)
            .or_else(|| cq.sort_list.first_key_value().map(|(_, &r)| r).filter(|&r| r != last));
        let prev = elv_rb_neighbour(&cq.sort_list, key, false);
        self.choose_req(rqs, next, prev, l.sector)
    }

    /// `cfq_add_rq_rb`.
    fn add_rq_rb(&mut self, rqs: &mut Requests, q: u32, rq: RequestId, jiffies: u64) {
        self.sort_seq += 1;
        let r = rqs.rq_mut(rq);
        r.sort_key = self.sort_seq;
        let (key, sync) = ((r.sector, r.sort_key), r.flags.is_sync());
        let cq = self.qm(q);
        cq.queued[usize::from(sync)] += 1;
        cq.sort_list.insert(key, rq);
        if !cq.on_rr {
            self.add_cfqq_rr(q, jiffies);
        }
        let prev = self.q(q).next_rq;
        self.qm(q).next_rq = self.choose_req(rqs, prev, Some(rq), self.last_position);
    }

    /// `cfq_remove_request` (off the FIFO and the sort list).
    fn remove_request(&mut self, rqs: &Requests, rq: RequestId) {
        let r = rqs.rq(rq);
        let q = r.cfqq.expect("a CFQ request has a queue");
        if self.q(q).next_rq == Some(rq) {
            self.qm(q).next_rq = self.find_next_rq(rqs, q, rq);
        }
        let cq = self.qm(q);
        cq.fifo.remove(&r.fifo_key);
        cq.queued[usize::from(r.flags.is_sync())] -= 1;
        cq.sort_list.remove(&(r.sector, r.sort_key));
        if r.flags.prio {
            cq.prio_pending -= 1;
        }
        self.rq_queued -= 1;
    }

    /// `cfq_allow_bio_merge`: never a sync bio into an async request, and
    /// only into the submitter's own queue of that syncness.
    pub fn allow_bio_merge(&self, rqs: &Requests, rq: RequestId, task: TaskId, flags: ReqFlags) -> bool {
        let r = rqs.rq(rq);
        if flags.is_sync() && !r.flags.is_sync() {
            return false;
        }
        self.cic_queue(task, flags.is_sync()).is_some_and(|q| r.cfqq == Some(q))
    }

    /// `cfq_merge`: a request of the submitter's queue starting where the bio ends.
    pub fn merge(&self, rqs: &Requests, task: TaskId, flags: ReqFlags, bio_end: u64) -> Option<RequestId> {
        let q = self.cic_queue(task, flags.is_sync())?;
        let (_, &rq) = self.q(q).sort_list.range((bio_end, 0)..(bio_end + 1, 0)).next()?;
        debug_assert_eq!(rqs.rq(rq).sector, bio_end);
        Some(rq)
    }

    /// `cfq_merged_request`: a front merge re-sorts the request
    /// (`cfq_reposition_rq_rb`).
    pub fn merged_request(&mut self, rqs: &mut Requests, rq: RequestId, old_sector: u64, front: bool) {
        if !front {
            return;
        }
        let r = rqs.rq(rq);
        let q = r.cfqq.expect("a CFQ request has a queue");
        let sync = usize::from(r.flags.is_sync());
        let cq = self.qm(q);
        cq.sort_list.remove(&(old_sector, r.sort_key));
        cq.queued[sync] -= 1;
        // The queue is busy, so the jiffies argument is not used.
        self.add_rq_rb(rqs, q, rq, 0);
    }

    /// `cfq_insert_request` + `cfq_rq_enqueued`.
    pub fn insert_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        let jiffies = ctx.jiffies();
        let (task, flags) = {
            let r = ctx.rqs.rq(rq);
            (r.task, r.flags)
        };
        let q = self.get_queue(task, flags.is_sync());
        self.sort_seq += 1;
        let expire = self.t.fifo_expire_j[usize::from(flags.is_sync())];
        let r = ctx.rqs.rq_mut(rq);
        r.cfqq = Some(q);
        r.fifo_time = SimTime(jiffies.wrapping_add(expire).wrapping_mul(ctx.jiffy_ns));
        r.fifo_key = self.sort_seq;
        let seq = self.sort_seq;
        self.qm(q).fifo.insert(seq, rq);
        self.add_rq_rb(ctx.rqs, q, rq, jiffies);

        // cfq_rq_enqueued.
        self.rq_queued += 1;
        if flags.prio {
            self.qm(q).prio_pending += 1;
        }
        self.update_io_thinktime(q, task, jiffies);
        self.update_io_seektime(ctx.rqs.rq(rq), q, ctx.nonrot);
        self.update_idle_window(q, task);
        let end = ctx.rqs.rq(rq).end_sector();
        self.qm(q).last_request_pos = end;
        if self.active_queue == Some(q) {
            if self.q(q).wait_request {
                if ctx.rqs.rq(rq).bytes() > PAGE_BYTES || self.busy_queues > 1 {
                    self.idle_timer = None;
                    self.qm(q).wait_request = false;
                } else {
                    // The timer stays armed; the queue is run anyway.
                    self.qm(q).must_dispatch = true;
                }
            }
        } else if self.should_preempt(ctx, q, rq) {
            self.preempt_queue(q, jiffies);
        }
    }

    /// `cfq_update_io_thinktime`.
    fn update_io_thinktime(&mut self, q: u32, task: TaskId, jiffies: u64) {
        let idle = self.t.slice_idle_j;
        if self.q(q).sync {
            self.cic_ttime[task.index()].update(jiffies, idle);
            if let Some((st, _)) = self.q(q).rb_node {
                self.trees[st].ttime.update(jiffies, idle);
            }
        }
        let gi = self.t.group_idle_j;
        self.grp_ttime.update(jiffies, gi);
    }

    /// `cfq_update_io_seektime`.
    fn update_io_seektime(&mut self, r: &Request, q: u32, nonrot: bool) {
        let cq = self.qm(q);
        let sdist = if cq.last_request_pos != 0 { r.sector.abs_diff(cq.last_request_pos) } else { 0 };
        cq.seek_history <<= 1;
        cq.seek_history |= if nonrot { u32::from(r.nr_sectors < SECT_THR_NONROT) } else { u32::from(sdist > SEEK_THR) };
    }

    /// `cfq_update_idle_window` (no `REQ_NOIDLE` requests are modelled).
    fn update_idle_window(&mut self, q: u32, task: TaskId) {
        let slice_idle = self.t.slice_idle_j;
        let ttime = self.cic_ttime[task.index()];
        let cq = self.qm(q);
        if !cq.sync || cq.class_idle() {
            return;
        }
        if cq.queued[0] + cq.queued[1] >= 4 {
            cq.deep = true;
        }
        let enable = if slice_idle == 0 || (!cq.deep && cq.seeky()) {
            false
        } else if ttime.valid() {
            ttime.mean <= slice_idle
        } else {
            cq.idle_window
        };
        cq.idle_window = enable;
    }

    // ------------------------------------------------------------ preemption

    /// `cfq_should_preempt` (4.4 order; the fix adds `!must_dispatch` to rule 4).
    fn should_preempt(&self, ctx: &ElvCtx<'_>, new: u32, rq: RequestId) -> bool {
        let Some(act) = self.active_queue else { return false };
        let jiffies = ctx.jiffies();
        let (n, a) = (self.q(new), self.q(act));
        let r = ctx.rqs.rq(rq);
        if n.class_idle() {
            return false;
        }
        if a.class_idle() {
            return true;
        }
        if r.flags.is_sync() && !a.sync && !(self.t.behaviour == CfqBehaviour::Fixed && a.must_dispatch) {
            return true;
        }
        if self.slice_used(act, jiffies) {
            return true;
        }
        if self.serving_wl_type == WlType::SyncNoidle
            && n.wl_type() == WlType::SyncNoidle
            && n.rb_node.is_some_and(|(st, _)| self.trees[st].rb.len() == 2)
            && a.empty()
        {
            return true;
        }
        if r.flags.prio && a.prio_pending == 0 {
            return true;
        }
        if a.empty() && !self.should_idle(act, ctx.nonrot) {
            return true;
        }
        if self.active_cic.is_none() || !a.wait_request {
            return false;
        }
        // cfq_rq_close.
        r.sector.abs_diff(self.last_position) <= CLOSE_THR
    }

    /// `cfq_preempt_queue`: expire the active queue and put `q` first.
    fn preempt_queue(&mut self, q: u32, jiffies: u64) {
        let old_type = self.active_queue.map(|a| self.q(a).wl_type());
        self.slice_expired(true, jiffies);
        if old_type != Some(self.q(q).wl_type()) {
            self.saved_wl_slice = 0;
        }
        debug_assert!(self.q(q).on_rr);
        self.service_tree_add(q, true, jiffies);
        let cq = self.qm(q);
        cq.slice_end = 0;
        cq.slice_new = true;
    }

    // ------------------------------------------------------------ idling

    /// `cfq_should_idle`.
    fn should_idle(&self, q: u32, nonrot: bool) -> bool {
        let cq = self.q(q);
        if self.t.slice_idle_j == 0 || cq.class_idle() {
            return false;
        }
        if cq.idle_window && !(nonrot && self.hw_tag != 0) {
            return true;
        }
        let Some((st, _)) = cq.rb_node else { return false };
        self.trees[st].rb.len() == 1 && cq.sync && !self.thinktime_big(&self.trees[st].ttime, false)
    }

    /// `cfq_io_thinktime_big`.
    fn thinktime_big(&self, t: &Ttime, group_idle: bool) -> bool {
        if !t.valid() {
            return false;
        }
        let slice = if group_idle { self.t.group_idle_j } else { self.t.slice_idle_j };
        t.mean > slice
    }

    /// `cfq_arm_slice_timer`.
    fn arm_slice_timer(&mut self, ctx: &ElvCtx<'_>) {
        let Some(q) = self.active_queue else { return };
        let jiffies = ctx.jiffies();
        if ctx.nonrot && self.hw_tag != 0 {
            return;
        }
        let mut group_idle = false;
        if !self.should_idle(q, ctx.nonrot) {
            if self.t.group_idle_j > 0 {
                group_idle = true;
            } else {
                return;
            }
        }
        if self.q(q).dispatched > 0 {
            return;
        }
        let Some(cic) = self.active_cic else { return };
        let tt = self.cic_ttime[cic.index()];
        if tt.valid() && self.q(q).slice_end.wrapping_sub(jiffies) < tt.mean {
            return;
        }
        if group_idle && self.nr_cfqq > 1 {
            return;
        }
        self.qm(q).wait_request = true;
        let sl = if group_idle { self.t.group_idle_j } else { self.t.slice_idle_j };
        self.idle_timer = Some(SimTime(jiffies.wrapping_add(sl).wrapping_mul(self.jiffy_ns)));
    }

    /// `cfq_idle_slice_timer`.
    pub fn idle_slice_timer(&mut self, ctx: &mut ElvCtx<'_>) {
        self.idle_timer = None;
        let jiffies = ctx.jiffies();
        let mut timed_out = true;
        if let Some(q) = self.active_queue {
            timed_out = false;
            if self.q(q).must_dispatch {
                return; // out_kick: the caller runs the queue.
            }
            if !self.slice_used(q, jiffies) {
                if self.busy_queues == 0 {
                    return;
                }
                if !self.q(q).empty() {
                    return;
                }
                self.qm(q).deep = false;
            }
        }
        self.slice_expired(timed_out, jiffies);
    }

    pub fn idle_timer_at(&self) -> Option<SimTime> {
        self.idle_timer
    }

    // ------------------------------------------------------------ expiry and selection

    /// `__cfq_slice_expired` for the active queue (`cfq_slice_expired`).
    fn slice_expired(&mut self, timed_out: bool, jiffies: u64) {
        let Some(q) = self.active_queue else { return };
        if self.q(q).wait_request {
            self.idle_timer = None;
        }
        let cq = self.qm(q);
        cq.wait_request = false;
        cq.wait_busy = false;
        if timed_out {
            if self.q(q).slice_new {
                let s = self.scaled_slice(q);
                self.qm(q).slice_resid = s as i64;
            } else {
                let cq = self.qm(q);
                cq.slice_resid = cq.slice_end.wrapping_sub(jiffies) as i64;
            }
        }
        // cfq_group_served: with one group only the saved workload matters.
        if time_after(self.workload_expires, jiffies) {
            self.saved_wl_slice = self.workload_expires.wrapping_sub(jiffies);
            self.saved_wl_type = self.serving_wl_type;
            self.saved_wl_idle = self.serving_wl_idle;
        } else {
            self.saved_wl_slice = 0;
        }
        if self.q(q).on_rr && self.q(q).empty() {
            self.del_cfqq_rr(q);
        }
        // cfq_resort_rr_list.
        if self.q(q).on_rr {
            self.service_tree_add(q, false, jiffies);
        }
        self.active_queue = None;
        self.active_cic = None;
    }

    /// `cfq_choose_cfqg` + `choose_wl_class_and_type`.
    fn choose_cfqg(&mut self, jiffies: u64) {
        if self.saved_wl_slice != 0 {
            self.workload_expires = jiffies.wrapping_add(self.saved_wl_slice);
            self.serving_wl_type = self.saved_wl_type;
            self.serving_wl_idle = self.saved_wl_idle;
        } else {
            self.workload_expires = jiffies.wrapping_sub(1);
        }
        let original_idle = self.serving_wl_idle;
        if self.busy_wl_be() > 0 {
            self.serving_wl_idle = false;
        } else {
            self.serving_wl_idle = true;
            self.workload_expires = jiffies.wrapping_add(1);
            return;
        }
        if original_idle == self.serving_wl_idle {
            let count = self.trees[self.serving_wl_type as usize].rb.len();
            if count > 0 && !time_after(jiffies, self.workload_expires) {
                return;
            }
        }
        // new_workload: cfq_choose_wl_type (ties favour the lower type).
        let mut best = WlType::SyncNoidle;
        let mut lowest: Option<u64> = None;
        for ty in WL_TYPES {
            if let Some(f) = self.trees[ty as usize].first() {
                let key = self.q(f).rb_key;
                if lowest.is_none_or(|l| time_before(key, l)) {
                    lowest = Some(key);
                    best = ty;
                }
            }
        }
        self.serving_wl_type = best;
        let count = self.trees[best as usize].rb.len() as u64;
        let group_slice = self.group_slice();
        let busy = self.busy_wl_be();
        let mut slice = group_slice * count / self.busy_queues_avg.max(busy).max(1);
        if best == WlType::Async {
            let tmp = self.t.target_latency_j * self.trees[WlType::Async as usize].rb.len() as u64
                / u64::from(self.busy_queues.max(1));
            slice = slice.min(tmp);
            slice = slice * self.t.slice_j[0] / self.t.slice_j[1];
        } else {
            slice = slice.max(2 * self.t.slice_idle_j);
        }
        slice = slice.max(MIN_TT);
        self.workload_expires = jiffies.wrapping_add(slice);
    }

    /// `cfq_get_next_queue`.
    fn get_next_queue(&self) -> Option<u32> {
        if self.rq_queued == 0 {
            return None;
        }
        let st = if self.serving_wl_idle { IDLE_TREE } else { self.serving_wl_type as usize };
        self.trees[st].first()
    }

    /// `__cfq_set_active_queue`.
    fn set_active_queue(&mut self, q: Option<u32>, jiffies: u64) -> Option<u32> {
        if let Some(q) = q {
            let cq = self.qm(q);
            cq.slice_start = 0;
            cq.dispatch_start = jiffies;
            cq.allocated_slice = 0;
            cq.slice_end = 0;
            cq.slice_dispatch = 0;
            cq.wait_request = false;
            cq.must_dispatch = false;
            cq.fifo_expire = false;
            cq.slice_new = true;
            self.idle_timer = None;
        }
        self.active_queue = q;
        q
    }

    /// `cfq_select_queue` (no close cooperators).
    fn select_queue(&mut self, ctx: &ElvCtx<'_>) -> Option<u32> {
        let jiffies = ctx.jiffies();
        let expire_and_new = |s: &mut Cfq| {
            s.slice_expired(false, jiffies);
            s.choose_cfqg(jiffies);
            let next = s.get_next_queue();
            s.set_active_queue(next, jiffies)
        };
        let Some(q) = self.active_queue else {
            self.choose_cfqg(jiffies);
            let next = self.get_next_queue();
            return self.set_active_queue(next, jiffies);
        };
        if self.rq_queued == 0 {
            return None;
        }
        if self.q(q).wait_busy && !self.q(q).empty() {
            return expire_and_new(self);
        }
        let check_group_idle = if self.slice_used(q, jiffies) && !self.q(q).must_dispatch {
            if self.nr_cfqq == 1 && self.q(q).empty() && self.q(q).dispatched > 0 && self.should_idle(q, ctx.nonrot) {
                return None;
            }
            true
        } else {
            false
        };
        if !check_group_idle {
            if !self.q(q).empty() {
                return Some(q);
            }
            if self.idle_timer.is_some() {
                return None;
            }
            let cq = self.q(q);
            if cq.seeky()
                && cq.idle_window
                && (cq.slice_new || cq.slice_end.wrapping_sub(jiffies) > jiffies.wrapping_sub(cq.slice_start))
            {
                let cq = self.qm(q);
                cq.deep = false;
                cq.idle_window = false;
            }
            if self.q(q).dispatched > 0 && self.should_idle(q, ctx.nonrot) {
                return None;
            }
        }
        if self.t.group_idle_j > 0
            && self.nr_cfqq == 1
            && self.grp_dispatched > 0
            && !self.thinktime_big(&self.grp_ttime, true)
        {
            return None;
        }
        expire_and_new(self)
    }

    /// `cfq_may_dispatch` (the fix: a `must_dispatch` queue always may).
    fn may_dispatch(&self, q: u32, ctx: &ElvCtx<'_>) -> bool {
        let cq = self.q(q);
        let jiffies = ctx.jiffies();
        if self.t.behaviour == CfqBehaviour::Fixed && cq.must_dispatch {
            return true;
        }
        // Drain async requests before we start sync I/O.
        if self.should_idle(q, ctx.nonrot) && self.rq_in_flight[0] > 0 {
            return false;
        }
        // Async waits while any sync request is in flight.
        if self.rq_in_flight[1] > 0 && !cq.sync {
            return false;
        }
        let mut max_dispatch = (self.t.quantum / 2).max(1);
        if cq.class_idle() {
            max_dispatch = 1;
        }
        if cq.dispatched >= max_dispatch {
            if cq.class_idle() {
                return false;
            }
            let promote_sync = cq.sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(q, jiffies) && !promote_sync {
                return false;
            }
            max_dispatch = if self.busy_queues == 1 || promote_sync { u32::MAX } else { self.t.quantum };
        }
        if !cq.sync && self.t.low_latency {
            let last_sync = jiffies.wrapping_sub(self.last_delayed_sync);
            let mut depth = (last_sync / self.t.slice_j[1]).min(u64::from(u32::MAX)) as u32;
            if depth == 0 && cq.dispatched == 0 {
                depth = 1;
            }
            max_dispatch = max_dispatch.min(depth);
        }
        cq.dispatched < max_dispatch
    }

    /// `cfq_slice_used_soon`.
    fn slice_used_soon(&self, q: u32, jiffies: u64) -> bool {
        let cq = self.q(q);
        cq.slice_new || time_after(jiffies.wrapping_add(self.t.slice_idle_j * u64::from(cq.dispatched)), cq.slice_end)
    }

    /// `cfq_check_fifo`: at most once per slice, the FIFO head if expired.
    fn check_fifo(&mut self, q: u32, ctx: &ElvCtx<'_>) -> Option<RequestId> {
        let cq = self.qm(q);
        if cq.fifo_expire {
            return None;
        }
        cq.fifo_expire = true;
        let (_, &rq) = cq.fifo.first_key_value()?;
        if ctx.now < ctx.rqs.rq(rq).fifo_time {
            return None;
        }
        Some(rq)
    }

    /// `cfq_dispatch_request` (4.4; with the fix the FIFO is checked first).
    fn dispatch_request(&mut self, q: u32, ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        debug_assert!(!self.q(q).empty());
        let fixed = self.t.behaviour == CfqBehaviour::Fixed;
        let mut rq = None;
        if fixed {
            rq = self.check_fifo(q, ctx);
            if rq.is_some() {
                self.qm(q).must_dispatch = true;
            }
        }
        if !self.may_dispatch(q, ctx) {
            return None;
        }
        if !fixed {
            rq = self.check_fifo(q, ctx);
        }
        let rq = rq.or(self.q(q).next_rq).expect("a non-empty queue has a next request");
        // cfq_dispatch_insert.
        let next = self.find_next_rq(ctx.rqs, q, rq);
        self.qm(q).next_rq = next;
        self.remove_request(ctx.rqs, rq);
        let cq = self.qm(q);
        cq.dispatched += 1;
        let sync = cq.sync;
        self.grp_dispatched += 1;
        self.rq_in_flight[usize::from(sync)] += 1;
        if self.active_cic.is_none() {
            self.active_cic = Some(ctx.rqs.rq(rq).task);
        }
        Some(rq)
    }

    /// `cfq_dispatch_requests` (one request), then `cfq_activate_request` as
    /// the driver takes it.
    pub fn dispatch_requests(&mut self, ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        if self.busy_queues == 0 {
            return None;
        }
        let jiffies = ctx.jiffies();
        let q = self.select_queue(ctx)?;
        let rq = self.dispatch_request(q, ctx)?;
        let maxrq = self.prio_to_maxrq(q);
        let busy = self.busy_queues;
        let cq = self.qm(q);
        cq.slice_dispatch += 1;
        cq.must_dispatch = false;
        if busy > 1 && ((!cq.sync && cq.slice_dispatch >= maxrq) || cq.class_idle()) {
            cq.slice_end = jiffies.wrapping_add(1);
            self.slice_expired(false, jiffies);
        }
        // cfq_activate_request.
        self.rq_in_driver += 1;
        self.last_position = ctx.rqs.rq(rq).end_sector();
        Some(rq)
    }

    /// `cfq_update_hw_tag`.
    fn update_hw_tag(&mut self) {
        self.hw_tag_est_depth = self.hw_tag_est_depth.max(self.rq_in_driver);
        if self.hw_tag == 1 {
            return;
        }
        if self.rq_queued <= HW_QUEUE_MIN && self.rq_in_driver <= HW_QUEUE_MIN {
            return;
        }
        if let Some(q) = self.active_queue {
            let cq = self.q(q);
            if cq.idle_window
                && cq.dispatched + cq.queued[0] + cq.queued[1] < HW_QUEUE_MIN
                && self.rq_in_driver < HW_QUEUE_MIN
            {
                return;
            }
        }
        let samples = self.hw_tag_samples;
        self.hw_tag_samples += 1;
        if samples < 50 {
            return;
        }
        self.hw_tag = i32::from(self.hw_tag_est_depth >= HW_QUEUE_MIN);
    }

    /// `cfq_completed_request`.
    pub fn completed_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        let jiffies = ctx.jiffies();
        let r = ctx.rqs.rq(rq);
        let q = r.cfqq.expect("a CFQ request has a queue");
        let sync = r.flags.is_sync();
        let start_j = r.i_at.ns() / ctx.jiffy_ns;
        let task = r.task;
        self.update_hw_tag();
        self.rq_in_driver -= 1;
        let qsync = self.q(q).sync;
        self.qm(q).dispatched -= 1;
        self.grp_dispatched -= 1;
        self.rq_in_flight[usize::from(qsync)] -= 1;
        if sync {
            self.cic_ttime[task.index()].last_end_request = jiffies;
            let st = match self.q(q).rb_node {
                Some((st, _)) if self.q(q).on_rr => st,
                _ => self.q(q).tree_for(),
            };
            self.trees[st].ttime.last_end_request = jiffies;
            if !time_after(start_j.wrapping_add(self.t.fifo_expire_j[1]), jiffies) {
                self.last_delayed_sync = jiffies;
            }
        }
        self.grp_ttime.last_end_request = jiffies;
        if self.active_queue == Some(q) {
            let empty = self.q(q).empty();
            if self.q(q).slice_new {
                self.set_prio_slice(q, jiffies);
                self.qm(q).slice_new = false;
            }
            if self.should_wait_busy(q, jiffies) {
                let extend = if self.t.slice_idle_j > 0 { self.t.slice_idle_j } else { self.t.group_idle_j };
                let cq = self.qm(q);
                cq.slice_end = jiffies.wrapping_add(extend);
                cq.wait_busy = true;
            }
            if self.slice_used(q, jiffies) || self.q(q).class_idle() {
                self.slice_expired(true, jiffies);
            } else if sync && empty {
                self.arm_slice_timer(ctx);
            }
        }
    }

    /// `cfq_should_wait_busy`.
    fn should_wait_busy(&self, q: u32, jiffies: u64) -> bool {
        let cq = self.q(q);
        if !cq.empty() || self.nr_cfqq > 1 || self.thinktime_big(&self.grp_ttime, true) {
            return false;
        }
        if self.slice_used(q, jiffies) {
            return true;
        }
        let left = cq.slice_end.wrapping_sub(jiffies);
        if let Some(cic) = self.active_cic {
            let tt = self.cic_ttime[cic.index()];
            if tt.valid() && left < tt.mean {
                return true;
            }
        }
        left == 1
    }

    /// Requests held (not dispatched).
    pub fn queued(&self) -> usize {
        self.rq_queued as usize
    }

    /// The queue's name for reports: `sync pid N be/4` or `async be/4`.
    pub fn queue_label(&self, r: &Request, comm: impl Fn(TaskId) -> String) -> String {
        let Some(q) = r.cfqq else { return "cfq".into() };
        let cq = self.q(q);
        let class = match cq.prio.class {
            IoClass::Be => format!("be/{}", cq.prio.prio),
            IoClass::Idle => "idle".into(),
        };
        if cq.sync {
            format!("sync queue of {} ({class})", comm(cq.pid))
        } else {
            format!("shared async queue ({class})")
        }
    }

    /// Checks CFQ's counters against its queues: busy queues are exactly
    /// those on a service tree, `rq_queued` is the sum of queued requests, and
    /// in-flight counts match.
    pub fn check(&self) -> Result<(), String> {
        let on_tree: usize = self.trees.iter().map(|t| t.rb.len()).sum();
        let busy = self.queues.iter().filter(|q| q.on_rr).count();
        if on_tree != busy || busy != self.busy_queues as usize || self.nr_cfqq as usize != busy {
            return Err(format!(
                "cfq: {on_tree} queues on trees, {busy} on_rr, busy_queues {}, nr_cfqq {}",
                self.busy_queues, self.nr_cfqq
            ));
        }
        let queued: u32 = self.queues.iter().map(|q| q.queued[0] + q.queued[1]).sum();
        let sorted: usize = self.queues.iter().map(|q| q.sort_list.len()).sum();
        let fifo: usize = self.queues.iter().map(|q| q.fifo.len()).sum();
        if queued != self.rq_queued || sorted != queued as usize || fifo != sorted {
            return Err(format!("cfq: rq_queued {} but queues hold {queued}/{sorted}/{fifo}", self.rq_queued));
        }
        let dispatched: u32 = self.queues.iter().map(|q| q.dispatched).sum();
        if dispatched != self.rq_in_flight[0] + self.rq_in_flight[1] || dispatched != self.grp_dispatched {
            return Err(format!("cfq: {dispatched} dispatched but in flight {:?}", self.rq_in_flight));
        }
        if let Some(a) = self.active_queue
            && !self.q(a).on_rr
        {
            return Err("cfq: the active queue is not busy".into());
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "cfq_random_readers_tests.rs"]
mod random_readers_tests;
