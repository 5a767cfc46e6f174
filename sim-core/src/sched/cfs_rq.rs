//! `struct cfs_rq`: one fair run queue, the state both models share; and
//! `Timeline`, 4.4's vruntime-ordered timeline, which the 4.4 class keeps
//! per queue (`cfs44.rs`; EEVDF keeps its augmented tree, `eevdf.rs`).
//!
//! The kernel keeps queued entities in a red-black tree keyed by vruntime; the
//! running entity (`curr`) is kept out of the tree (4.4 `set_next_entity`).
//! Here the 4.4 tree is a sorted `Vec` keyed by `(vruntime, insertion seq)`, which
//! orders equal vruntimes the way `__enqueue_entity` does (ties go right). It
//! is kept in *descending* order so the leftmost entity, the one picked and
//! removed most often, sits at the end: run queues hold a handful of entities,
//! and a `Vec` that keeps its capacity never allocates on the hot path (a
//! B-tree allocates a node whenever a queue goes from empty to one entity).

use super::pelt::SchedAvg;
use super::weights::LoadWeight;
use crate::ids::{CpuId, EntityId, GroupId};

/// `min_vruntime` of a new run queue: `(u64)(-(1LL << 20))` (4.4 fair.c:init_cfs_rq),
/// so that wrap-around bugs show early. Kept so printed vruntimes match the kernel's.
pub const INITIAL_MIN_VRUNTIME: i64 = -(1 << 20);

type Key = (i64, u64, EntityId);

#[derive(Clone, Debug)]
pub struct CfsRq {
    pub cpu: CpuId,
    /// The group this queue belongs to (`cfs_rq->tg`).
    pub tg: GroupId,
    /// The group entity that owns this queue (`tg->se[cpu]`); `None` for a root queue.
    pub owner: Option<EntityId>,
    /// Load tracking of the queue's weight (`cfs_rq->avg`), every queue.
    pub avg: SchedAvg,
    /// `cfs_rq->runnable_load_avg` (4.4): the summed averages of the queued
    /// entities (added at enqueue, removed at dequeue), decayed with `avg`.
    /// On a root queue this is `weighted_cpuload`.
    pub runnable_load_avg: u64,
    /// `cfs_rq->runnable_load_sum` (4.4).
    pub runnable_load_sum: u64,
    /// `cfs_rq->removed_util_avg` (4.4): utilisation of entities that left
    /// (migrated or died), subtracted at the next update.
    pub removed_util_avg: u64,
    /// `cfs_rq->h_load` (4.4 `update_cfs_rq_h_load`): this queue's share of
    /// its root queue's load, cached for one jiffy.
    pub h_load: u64,
    /// `cfs_rq->h_load_next`: the entity on this queue on the path down to
    /// the queue whose `h_load` is being computed.
    pub h_load_next: Option<EntityId>,
    /// `cfs_rq->last_h_load_update` (jiffies); `None` before the first
    /// computation (the kernel's jiffies start far from 0, so its initial 0
    /// never matches; simulated jiffies may start at 0).
    pub last_h_load_update: Option<u64>,
    /// What this queue last published into `tg->load_avg`.
    pub tg_load_avg_contrib: u64,
    /// Load of entities that left, subtracted at the next update (`removed_load_avg`).
    pub removed_load_avg: u64,
    /// On the CPU's leaf list (`on_list`): enqueued at least once, so
    /// `update_blocked_averages` visits it (root queues included).
    pub on_list: bool,
    /// Sum of the weights of the queued entities, `curr` included.
    pub load: LoadWeight,
    /// Entities queued here, `curr` included if it is on the run queue.
    pub nr_running: u32,
    /// Tasks queued here and below (`h_nr_running`; 6.18 `h_nr_queued`).
    pub h_nr_running: u32,
    /// 6.x: those not kept queued by DELAY_DEQUEUE (6.18 `h_nr_runnable`;
    /// 6.12.0 has no such count, `h_nr_running` less the delayed tasks).
    pub h_nr_runnable: u32,
    /// 6.x: SCHED_IDLE tasks queued here and below (`idle_h_nr_running`, 6.18 `h_nr_idle`).
    pub h_nr_idle: u32,
    /// 6.x PELT bookkeeping (`fair_pelt6x.rs`).
    pub p6: RqPelt6x,
    pub min_vruntime: i64,
    pub curr: Option<EntityId>,
    pub next: Option<EntityId>,
    pub last: Option<EntityId>,
    pub skip: Option<EntityId>,
    /// Bandwidth control (`runtime_remaining`, `throttled`, `throttle_count`).
    pub rt: super::bandwidth::RqRuntime,
}

impl CfsRq {
    pub fn new(cpu: CpuId, tg: GroupId, owner: Option<EntityId>) -> CfsRq {
        CfsRq {
            cpu,
            tg,
            owner,
            avg: SchedAvg { attached: true, ..SchedAvg::default() },
            runnable_load_avg: 0,
            runnable_load_sum: 0,
            removed_util_avg: 0,
            h_load: 0,
            h_load_next: None,
            last_h_load_update: None,
            tg_load_avg_contrib: 0,
            removed_load_avg: 0,
            on_list: false,
            load: LoadWeight::ZERO,
            nr_running: 0,
            h_nr_running: 0,
            h_nr_runnable: 0,
            h_nr_idle: 0,
            p6: RqPelt6x::default(),
            min_vruntime: INITIAL_MIN_VRUNTIME,
            curr: None,
            next: None,
            last: None,
            skip: None,
            rt: Default::default(),
        }
    }
}

/// The tasks a 6.x enqueue or dequeue adds or takes at each level
/// (`h_nr_queued`, `h_nr_runnable`, `h_nr_idle`; 6.6/6.12 `h_nr_running`,
/// `idle_h_nr_running`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskCounts {
    pub queued: u32,
    pub runnable: u32,
    pub idle: u32,
}

impl CfsRq {
    /// Count `c` more tasks here and below.
    #[inline]
    pub(crate) fn add_tasks(&mut self, c: TaskCounts) {
        self.h_nr_running += c.queued;
        self.h_nr_runnable += c.runnable;
        self.h_nr_idle += c.idle;
    }

    /// Count `c` fewer.
    #[inline]
    pub(crate) fn sub_tasks(&mut self, c: TaskCounts) {
        self.h_nr_running -= c.queued;
        self.h_nr_runnable -= c.runnable;
        self.h_nr_idle -= c.idle;
    }

    /// What is counted here and below (a throttled queue's delta).
    pub(crate) fn tasks(&self) -> TaskCounts {
        TaskCounts { queued: self.h_nr_running, runnable: self.h_nr_runnable, idle: self.h_nr_idle }
    }
}

/// What 6.x fair.c keeps in `struct cfs_rq` for load tracking.
#[derive(Clone, Copy, Debug, Default)]
pub struct RqPelt6x {
    /// `cfs_rq->removed`: averages of entities that left (migrated or
    /// died), subtracted at the next update (`update_cfs_rq_load_avg`).
    pub removed_nr: u32,
    pub removed_load_avg: u64,
    pub removed_util_avg: u64,
    pub removed_runnable_avg: u64,
    /// For `pelt_invariants` only: a bound on how far the runnable and util
    /// sums may be from their entities', as of `residue_at` (decayed since):
    /// a removal takes `avg · divider`, which may miss the entity's sum by a
    /// divider and what it gained in the period since its average was
    /// taken; `sub_positive` clamps and the `PELT_MIN_DIVIDER` floors move
    /// a sum by what they change.
    pub residue: u64,
    pub residue_at: u64,
    /// `cfs_rq->propagate` and `prop_runnable_sum`: a change below to pass
    /// up to the group entity (`add_tg_cfs_propagate`).
    pub propagate: bool,
    pub prop_runnable_sum: i64,
    /// `cfs_rq->last_update_tg_load_avg` (6.12+); `None` before the first
    /// (the kernel's 0 is far behind its clock; simulated time starts at 0).
    pub last_update_tg_load_avg: Option<u64>,
    /// `throttled_clock_pelt` and `throttled_clock_pelt_time`: the PELT
    /// clock stops while the queue is throttled (`cfs_rq_clock_pelt`).
    pub throttled_clock_pelt: u64,
    pub throttled_clock_pelt_time: u64,
    /// `throttled_pelt_idle` as last stored (`update_idle_cfs_rq_clock_pelt`):
    /// `throttled_clock_pelt_time` then, or `u64::MAX` if throttled then.
    pub throttled_pelt_idle: u64,
}

/// 4.4's timeline of one run queue (`cfs_rq->tasks_timeline`): the queued
/// entities, `curr` excluded.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Descending by key: `timeline.last()` is the leftmost entity.
    timeline: Vec<Key>,
}

impl Timeline {
    /// `__pick_first_entity`: the leftmost queued entity, with its key.
    pub fn first(&self) -> Option<(i64, EntityId)> {
        self.timeline.last().map(|&(v, _, e)| (v, e))
    }

    /// Position of `key` (or where it would go) in the descending vector.
    fn position(&self, key: &Key) -> Result<usize, usize> {
        self.timeline.binary_search_by(|probe| key.cmp(probe))
    }

    /// `__pick_next_entity`: the entity right of `key`.
    pub(crate) fn after(&self, key: Key) -> Option<(i64, EntityId)> {
        let i = match self.position(&key) {
            Ok(i) | Err(i) => i,
        };
        i.checked_sub(1).map(|j| {
            let (v, _, e) = self.timeline[j];
            (v, e)
        })
    }

    pub(crate) fn insert(&mut self, key: Key) {
        match self.position(&key) {
            Ok(_) => debug_assert!(false, "entity queued twice"),
            Err(i) => self.timeline.insert(i, key),
        }
    }

    pub(crate) fn remove(&mut self, key: Key) {
        if self.timeline.last() == Some(&key) {
            self.timeline.pop();
            return;
        }
        match self.position(&key) {
            Ok(i) => {
                self.timeline.remove(i);
            }
            Err(_) => debug_assert!(false, "dequeue of an entity not in the timeline"),
        }
    }

    /// Entities in the timeline (queued and not running), in key order.
    pub fn queued(&self) -> impl Iterator<Item = (i64, EntityId)> + '_ {
        self.timeline.iter().rev().map(|&(v, _, e)| (v, e))
    }

    pub fn len(&self) -> usize {
        self.timeline.len()
    }

    pub fn is_empty(&self) -> bool {
        self.timeline.is_empty()
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_orders_by_vruntime_then_insertion() {
        let mut q = Timeline::default();
        let keys = [(5, 1, EntityId(0)), (3, 2, EntityId(1)), (5, 3, EntityId(2)), (-7, 4, EntityId(3))];
        for k in keys {
            q.insert(k);
        }
        let order: Vec<u32> = q.queued().map(|(_, e)| e.0).collect();
        assert_eq!(order, vec![3, 1, 0, 2], "equal vruntimes keep insertion order");
        assert_eq!(q.first(), Some((-7, EntityId(3))));
        assert_eq!(q.after((3, 2, EntityId(1))), Some((5, EntityId(0))));
        assert_eq!(q.after((5, 3, EntityId(2))), None);
        q.remove((5, 1, EntityId(0)));
        q.remove((-7, 4, EntityId(3)));
        let order: Vec<u32> = q.queued().map(|(_, e)| e.0).collect();
        assert_eq!(order, vec![1, 2]);
    }
}
