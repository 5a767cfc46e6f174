//! Load tracking as Linux 4.4 fair.c keeps it on the fair class's state
//! (`FairCore`), the arithmetic being `pelt.rs`: `update_load_avg` with
//! `update_cfs_rq_load_avg` and `update_tg_load_avg`,
//! `enqueue_entity_load_avg`/`dequeue_entity_load_avg` (`runnable_load_avg`),
//! `remove_entity_load_avg` and `migrate_task_rq_fair`,
//! `update_blocked_averages` over the leaf list. The 4.4 class (`cfs44.rs`)
//! calls these directly; the shared entry points (`fair_pelt.rs`) reach them
//! when the version's `pelt` rule is 4.4's. 6.x's are `fair_pelt6x.rs`.

use super::fair_core::FairCore;
use super::pelt::{self, LOAD_AVG_MAX};
use crate::ids::{CfsRqId, CpuId, EntityId};

impl FairCore {
    /// `migrate_task_rq_fair` (4.4 fair.c), from `set_task_cpu` when a task
    /// (not queued: waking, forked, or detached by `detach_task` after
    /// `deactivate_task`) changes CPU, before `set_task_rq`: its average is
    /// removed from the old queue (at that queue's next update), it is marked
    /// migrated (4.4 `last_update_time = 0`, here `attached = false`) so the
    /// next enqueue attaches it to the new queue (`attach_entity_load_avg`),
    /// and it is no longer cache hot (`exec_start = 0`).
    ///
    /// 4.4 quirk kept: a forked task moved by fork balancing still has
    /// `last_update_time == 0`, so `remove_entity_load_avg` ages its initial
    /// full average from time 0 to the old queue's last update.
    pub(crate) fn migrate_task_rq44(&mut self, se: EntityId) {
        debug_assert!(!self.se(se).on_rq, "migrate_task_rq of a queued entity");
        self.remove_entity_load_avg(se);
        let e = self.se_mut(se);
        e.avg.attached = false;
        e.exec_start = 0;
    }

    /// `update_cfs_rq_load_avg` (4.4 fair.c): fold in removed load, then accrue
    /// the queue's weight (into `avg` and `runnable_load_sum`, 4.4
    /// `__update_load_avg` with its `cfs_rq` argument). Returns whether the
    /// average changed.
    pub(crate) fn update_cfs_rq_load_avg(&mut self, q: CfsRqId) -> bool {
        let now = self.clock;
        let rq = self.rq_mut(q);
        let mut removed = false;
        if rq.removed_load_avg != 0 {
            let r = std::mem::take(&mut rq.removed_load_avg);
            rq.avg.load_avg = rq.avg.load_avg.saturating_sub(r);
            rq.avg.load_sum = rq.avg.load_sum.saturating_sub(r * LOAD_AVG_MAX);
            removed = true;
        }
        if rq.removed_util_avg != 0 {
            let r = std::mem::take(&mut rq.removed_util_avg);
            rq.avg.util_avg = rq.avg.util_avg.saturating_sub(r);
            rq.avg.util_sum = rq.avg.util_sum.saturating_sub(r * LOAD_AVG_MAX);
        }
        let weight = rq.load.weight;
        // running: cfs_rq->curr != NULL.
        let running = rq.curr.is_some();
        let mut sums = pelt::RqSums { runnable_load_sum: rq.runnable_load_sum };
        let decayed = pelt::update_cfs_rq_avg(now, &mut rq.avg, weight, running, &mut sums);
        rq.runnable_load_sum = sums.runnable_load_sum;
        if decayed {
            rq.runnable_load_avg = rq.runnable_load_sum / LOAD_AVG_MAX;
        }
        decayed || removed
    }

    /// `update_tg_load_avg` (4.4 fair.c): publish this queue's average into
    /// `tg->load_avg` when it moved by more than 1/64 of the last published value.
    pub(crate) fn update_tg_load_avg(&mut self, q: CfsRqId, force: bool) {
        let rq = self.rq(q);
        let delta = rq.avg.load_avg as i64 - rq.tg_load_avg_contrib as i64;
        if force || delta.unsigned_abs() > rq.tg_load_avg_contrib / 64 {
            let tg = rq.tg;
            self.groups[tg.index()].load_avg += delta;
            let rq = self.rq_mut(q);
            rq.tg_load_avg_contrib = rq.avg.load_avg;
        }
    }

    /// `__update_load_avg` of an entity: its weight counts while it is
    /// queued, its running time while it is its queue's `curr`.
    pub(crate) fn update_entity_avg(&mut self, se: EntityId) {
        let now = self.clock;
        let running = self.rq(self.se(se).cfs_rq).curr == Some(se);
        let e = self.se_mut(se);
        let weight = if e.on_rq { e.load.weight } else { 0 };
        pelt::update_load_avg(now, &mut e.avg, weight, running);
    }

    /// `update_load_avg` (4.4 fair.c): age the entity's and its queue's averages.
    pub(crate) fn update_load_avg(&mut self, se: EntityId, update_tg: bool) {
        let q = self.cfs_rq_of(se);
        self.update_entity_avg(se);
        if self.update_cfs_rq_load_avg(q) && update_tg {
            self.update_tg_load_avg(q, false);
        }
    }

    /// `enqueue_entity_load_avg` (4.4 fair.c): an entity arriving from another
    /// CPU (or new) brings its average with it (`attach_entity_load_avg`).
    pub(crate) fn enqueue_entity_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        // 4.4: migrated = !se->avg.last_update_time (cleared by migrate_task_rq_fair).
        let migrated = !self.se(se).avg.attached;
        if !migrated {
            self.update_entity_avg(se);
        }
        let decayed = self.update_cfs_rq_load_avg(q);
        let (load_avg, load_sum) = (self.se(se).avg.load_avg, self.se(se).avg.load_sum);
        let rq = self.rq_mut(q);
        rq.runnable_load_avg += load_avg;
        rq.runnable_load_sum += load_sum;
        if migrated {
            // attach_entity_load_avg; ATTACH_AGE_LOAD ages only entities whose
            // last_update_time survived, which no path here leaves.
            let last = self.rq(q).avg.last_update_time;
            let e = self.se_mut(se);
            e.avg.last_update_time = last;
            e.avg.attached = true;
            let (load_avg, load_sum, util_avg, util_sum) =
                (e.avg.load_avg, e.avg.load_sum, e.avg.util_avg, e.avg.util_sum);
            let rq = self.rq_mut(q);
            rq.avg.load_avg += load_avg;
            rq.avg.load_sum += load_sum;
            rq.avg.util_avg += util_avg;
            rq.avg.util_sum += util_sum;
        }
        if decayed || migrated {
            self.update_tg_load_avg(q, false);
        }
    }

    /// `dequeue_entity_load_avg` (4.4 fair.c): age the entity and its queue,
    /// then take the entity's average out of the queue's runnable average
    /// (clamped at 0). The entity stays attached to `cfs_rq->avg`.
    pub(crate) fn dequeue_entity_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        self.update_load_avg(se, true);
        let (load_avg, load_sum) = (self.se(se).avg.load_avg, self.se(se).avg.load_sum);
        let rq = self.rq_mut(q);
        rq.runnable_load_avg = rq.runnable_load_avg.saturating_sub(load_avg);
        rq.runnable_load_sum = rq.runnable_load_sum.saturating_sub(load_sum);
    }

    /// `remove_entity_load_avg` (4.4 fair.c), from `migrate_task_rq_fair` and
    /// `task_dead_fair`: the entity's average, aged (at weight 0) to its queue's
    /// last update, is subtracted from the queue's `avg` at its next update
    /// (`removed_load_avg`). Detaching is `migrate_task_rq`'s job.
    pub fn remove_entity_load_avg(&mut self, se: EntityId) {
        let q = self.cfs_rq_of(se);
        let last = self.rq(q).avg.last_update_time;
        let e = self.se_mut(se);
        pelt::update_load_avg(last, &mut e.avg, 0, false);
        let (load_avg, util_avg) = (e.avg.load_avg, e.avg.util_avg);
        let rq = self.rq_mut(q);
        rq.removed_load_avg += load_avg;
        rq.removed_util_avg += util_avg;
    }

    /// `update_blocked_averages` (4.4 fair.c, `CONFIG_FAIR_GROUP_SCHED`): decay
    /// the averages of every queue on the CPU's leaf list (root queue included),
    /// including those with nothing queued. `clock` must be that CPU's clock
    /// (4.4 runs `update_rq_clock` on the CPU's rq first); this is also the
    /// remote refresh `nohz_idle_balance` does for idle CPUs.
    pub(crate) fn update_blocked_averages44(&mut self, cpu: CpuId) {
        for i in 0..self.leaf[cpu.index()].len() {
            let q = self.leaf[cpu.index()][i];
            if self.update_cfs_rq_load_avg(q) {
                self.update_tg_load_avg(q, false);
            }
        }
    }

    /// `list_add_leaf_cfs_rq` (4.4 fair.c): a queue joins its CPU's leaf list
    /// for good, before its parent if the parent is already on it (children
    /// come first). The order does not change any value: each queue's
    /// `update_blocked_averages` step reads only that queue.
    pub(crate) fn list_add_leaf_cfs_rq(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        if rq.on_list {
            return;
        }
        let (cpu, tg) = (rq.cpu, rq.tg);
        let parent_on_list = self.groups[tg.index()]
            .parent
            .and_then(|p| self.groups[p.index()].cfs_rq[cpu.index()])
            .is_some_and(|pq| self.rq(pq).on_list);
        self.rq_mut(q).on_list = true;
        let leaf = &mut self.leaf[cpu.index()];
        if parent_on_list {
            leaf.insert(0, q);
        } else {
            leaf.push(q);
        }
    }

}
