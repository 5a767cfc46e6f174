//! The load-tracking entry points the two fair classes, the bandwidth code
//! and the engine share, each choosing 4.4's (`fair_pelt44.rs`) or 6.x's
//! (`fair_pelt6x.rs`, `blocked6x.rs`, `util_est.rs`) by the version's `pelt`
//! rule, kept in `FairCore::pelt` (one `match` per call; each class's own
//! paths call their version's functions directly). Also the PELT signals
//! the 6.x balancer reads (`cpu_signals`, `task_signals`) and the PELT
//! invariants (`pelt_invariants`).

use super::balance::{CpuSignals, TaskSignals};
use super::fair_core::FairCore;
use super::fair_pelt6x::UPDATE_TG;
use super::model::PeltKind;
use super::pelt::decay_load;
use super::pelt6x::{self, PELT_MIN_DIVIDER};
use super::policy::Policy;
use crate::ids::{CfsRqId, CpuId, EntityId};

impl FairCore {
    /// `migrate_task_rq_fair`, from `set_task_cpu` before the task's queue
    /// changes; `on_rq_migrating`: the balancer moves it queued
    /// (`task_on_rq_migrating`; 4.4 does not look).
    pub fn migrate_task_rq(&mut self, se: EntityId, on_rq_migrating: bool) {
        debug_assert!(!self.se(se).on_rq, "migrate_task_rq of a queued entity");
        match self.pelt {
            PeltKind::Linux44 => self.migrate_task_rq44(se),
            PeltKind::Linux6x(_) => self.migrate_task_rq6x(se, on_rq_migrating),
        }
    }

    /// `task_dead_fair`: a dead task's average leaves its queue
    /// (`remove_entity_load_avg`). 6.x: the entity, gone, is no longer
    /// counted as attached anywhere.
    pub fn task_dead_fair(&mut self, se: EntityId) {
        match self.pelt {
            PeltKind::Linux44 => self.remove_entity_load_avg(se),
            PeltKind::Linux6x(_) => {
                self.remove_entity_load_avg6x(se);
                self.se_mut(se).avg.attached = false;
            }
        }
    }

    /// `update_blocked_averages(cpu)`: decay the CPU's listed queues. `clock`
    /// must be that CPU's clock (`update_rq_clock` first); this is also the
    /// remote refresh `nohz_idle_balance` does for idle CPUs. Returns whether
    /// blocked load remains (6.x `rq->has_blocked_load`; 4.4 has no such
    /// flag: false).
    pub fn update_blocked_averages(&mut self, cpu: CpuId) -> bool {
        match self.pelt {
            PeltKind::Linux44 => {
                self.update_blocked_averages44(cpu);
                false
            }
            PeltKind::Linux6x(_) => self.update_blocked_averages6x(cpu),
        }
    }

    /// `init_entity_runnable_average` at `sched_fork`. 4.4's values are set
    /// when the entity is made (`SchedAvg::new_entity`).
    pub fn init_entity_runnable_average(&mut self, se: EntityId) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.init_entity_runnable_average6x(se);
        }
    }

    /// A new group's entity on one CPU (`alloc_fair_sched_group` then
    /// `online_fair_sched_group`): 4.4 starts it with a full average; 6.x
    /// with an empty one, attached to its parent queue at once.
    pub(crate) fn init_group_entity_load_avg(&mut self, se: EntityId) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.init_entity_runnable_average6x(se);
            self.attach_entity_cfs_rq6x(se);
        }
    }

    /// `post_init_entity_util_avg` (6.x `wake_up_new_task`, once the task's
    /// CPU is chosen and before it is enqueued); 4.4 has none.
    pub fn post_init_entity_util_avg(&mut self, se: EntityId) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.post_init_entity_util_avg6x(se);
        }
    }

    /// A level `throttle_cfs_rq` / `unthrottle_cfs_rq` walks past without
    /// (de)queueing its entity (6.x): `update_load_avg(qcfs_rq, se, 0)` (or
    /// UPDATE_TG when unthrottling) and `se_update_runnable`. 4.4 does
    /// nothing there.
    pub(crate) fn update_walked_level(&mut self, se: EntityId, update_tg: bool) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.update_load_avg6x(se, if update_tg { UPDATE_TG } else { 0 });
            self.se_update_runnable(se);
        }
    }

    /// `tg_throttle_down`'s PELT part for queue `q` (6.x: its clock stops and
    /// it leaves the leaf list), before its `throttle_count` is raised.
    pub(crate) fn pelt_throttle_down(&mut self, q: CfsRqId) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.tg_throttle_down6x(q);
        }
    }

    /// `tg_unthrottle_up`'s PELT part, after `throttle_count` was lowered.
    pub(crate) fn pelt_unthrottle_up(&mut self, q: CfsRqId) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.tg_unthrottle_up6x(q);
        }
    }

    /// `unthrottle_cfs_rq` of an empty queue (6.x: complete its leaf-list branch).
    pub(crate) fn unthrottle_empty(&mut self, q: CfsRqId) {
        if let PeltKind::Linux6x(_) = self.pelt {
            self.unthrottle_complete_branch6x(q);
        }
    }

    /// The PELT signals 6.x's balancer reads of `cpu`'s root queue, as last
    /// updated. Under 4.4, which keeps neither `runnable_avg` nor util_est
    /// nor the idle and delayed counts, runnable reads as util and the rest as 0.
    #[inline]
    pub fn cpu_signals(&self, cpu: CpuId) -> CpuSignals {
        let q = self.rq(self.root_cfs_rq(cpu));
        match self.pelt {
            PeltKind::Linux44 => CpuSignals {
                load_avg: q.avg.load_avg,
                runnable_avg: q.avg.util_avg,
                util_avg: q.avg.util_avg,
                util_est: 0,
                h_nr_queued: q.h_nr_running,
                h_nr_delayed: 0,
                h_nr_idle: 0,
            },
            PeltKind::Linux6x(_) => CpuSignals {
                load_avg: q.avg.load_avg,
                runnable_avg: q.avg.runnable_avg,
                util_avg: q.avg.util_avg,
                util_est: u64::from(q.avg.util_est.enqueued),
                h_nr_queued: q.h_nr_running,
                h_nr_delayed: q.h_nr_running - q.h_nr_runnable,
                h_nr_idle: q.h_nr_idle,
            },
        }
    }

    /// `cpu_signals(cpu).h_nr_idle` alone: 0 under 4.4.
    #[inline]
    pub fn cpu_h_nr_idle(&self, cpu: CpuId) -> u32 {
        match self.pelt {
            PeltKind::Linux44 => 0,
            PeltKind::Linux6x(_) => self.rq(self.root_cfs_rq(cpu)).h_nr_idle,
        }
    }

    /// The PELT signals of a task (`se.avg`, `_task_util_est`, its weight);
    /// under 4.4 runnable reads as util and util_est as 0.
    pub fn task_signals(&self, se: EntityId) -> TaskSignals {
        let e = self.se(se);
        let (runnable_avg, util_est) = match self.pelt {
            PeltKind::Linux44 => (e.avg.util_avg, 0),
            PeltKind::Linux6x(_) => (e.avg.runnable_avg, self.task_util_est(se)),
        };
        TaskSignals { load_avg: e.avg.load_avg, runnable_avg, util_avg: e.avg.util_avg, util_est, weight: e.load.weight }
    }

    /// 6.x PELT invariants, for `check_invariants` (4.4: none checked here).
    /// On every queue: the runnable and idle counts match the tasks queued
    /// below (delayed ones not runnable; a throttled queue's tasks not
    /// counted above it); `removed` is empty when nothing was removed; the
    /// util and runnable sums are at least `avg · PELT_MIN_DIVIDER` (where
    /// that fits the kernel's `u32` floor); and runnable and util are, within
    /// rounding, what the entities attached to the queue hold, brought to
    /// the queue's last update, less what was removed (`pelt_conservation`).
    pub fn pelt_invariants(&self) -> Result<(), String> {
        if let PeltKind::Linux44 = self.pelt {
            return Ok(());
        }
        self.pelt_counts()?;
        for (i, q) in self.cfs_rqs.iter().enumerate() {
            let p6 = &q.p6;
            if p6.removed_nr == 0 && (p6.removed_load_avg | p6.removed_util_avg | p6.removed_runnable_avg) != 0 {
                return Err(format!("cfs_rq {i}: removed averages {p6:?} with removed.nr 0"));
            }
            let a = &q.avg;
            for (name, sum, avg) in [("util", a.util_sum, a.util_avg), ("runnable", a.runnable_sum, a.runnable_avg)] {
                let floor = avg * PELT_MIN_DIVIDER;
                if floor <= u64::from(u32::MAX) && sum < floor {
                    return Err(format!("cfs_rq {i}: {name}_sum {sum} below {name}_avg {avg} · PELT_MIN_DIVIDER"));
                }
            }
        }
        self.pelt_conservation()
    }

    /// The counts `h_nr_runnable` and `h_nr_idle` of every queue against the
    /// tasks queued below it.
    fn pelt_counts(&self) -> Result<(), String> {
        let n = self.cfs_rqs.len();
        let (mut runnable, mut idle) = (vec![0u32; n], vec![0u32; n]);
        for e in self.entities.iter().filter(|e| e.on_rq && e.is_task()) {
            let mut up = Some(e.cfs_rq);
            // Bounded by the hierarchy depth.
            while let Some(q) = up {
                runnable[q.index()] += u32::from(!e.sched_delayed);
                idle[q.index()] += u32::from(e.policy == Policy::Idle);
                if self.cfs_rq_throttled(q) {
                    break;
                }
                up = self.rq(q).owner.map(|o| self.se(o).cfs_rq);
            }
        }
        for (i, q) in self.cfs_rqs.iter().enumerate() {
            if q.h_nr_runnable != runnable[i] || q.h_nr_idle != idle[i] {
                return Err(format!(
                    "cfs_rq {i}: h_nr_runnable {} / h_nr_idle {} but {} / {} tasks below",
                    q.h_nr_runnable, q.h_nr_idle, runnable[i], idle[i]
                ));
            }
        }
        Ok(())
    }

    /// Conservation: a queue's runnable and util equal, within rounding, the
    /// sum over the entities attached to it (each brought to the queue's last
    /// update as its next update would: queued, runnable, running as it is
    /// now) less its pending `removed`. Both sides are read from their sums at
    /// that instant (`sum / divider`): a queue's averages are only recomputed
    /// when a period ends. Rounding: one unit per entity and per queue from
    /// the divisions, up to 1/32 from the `PELT_MIN_DIVIDER` floors a
    /// removal can raise a sum to and from removed averages taken at an
    /// earlier point of the period, and what removals, clamps and floors
    /// moved (`residue`). Not checked: load, whose queue sums pass
    /// 2^32 with heavy group entities and are then cut by the kernel's
    /// `max_t(u32, ..)` floors; runnable while DELAY_DEQUEUE can delay
    /// tasks, where it is not conserved in the kernel either (6.12's queues
    /// count them, `h_nr_running`, while their entities accrue none,
    /// `se_runnable`; 6.18's `set_delayed` changes `h_nr_runnable` without
    /// refreshing the group entities' `runnable_weight`).
    fn pelt_conservation(&self) -> Result<(), String> {
        let runnable_conserved = !(self.rules.delay_dequeue && self.features_eevdf.delay_dequeue);
        let n = self.cfs_rqs.len();
        let mut sums = vec![[0u64; 2]; n];
        let mut count = vec![0u64; n];
        for (i, e) in self.entities.iter().enumerate() {
            if !e.avg.attached {
                continue;
            }
            let q = e.cfs_rq;
            let mut sa = e.avg;
            let runnable = if e.sched_delayed || !e.on_rq { 0 } else if e.is_task() { 1 } else { u64::from(e.runnable_weight) };
            let running = self.rq(q).curr == Some(EntityId(i as u32));
            pelt6x::update_load_sum(self.rq(q).avg.last_update_time, &mut sa, u64::from(e.on_rq), runnable, running);
            pelt6x::update_load_avg(&mut sa, e.load.weight);
            let s = &mut sums[q.index()];
            s[0] += sa.runnable_avg;
            s[1] += sa.util_avg;
            count[q.index()] += 1;
        }
        for (i, q) in self.cfs_rqs.iter().enumerate() {
            let (p6, div) = (&q.p6, pelt6x::get_pelt_divider(&q.avg));
            let have = [
                ("runnable", (q.avg.runnable_sum / div).saturating_sub(p6.removed_runnable_avg)),
                ("util", (q.avg.util_sum / div).saturating_sub(p6.removed_util_avg)),
            ];
            // What removals, clamps and floors moved (`residue`, decayed
            // since); a pending removal misses what the entity gained since
            // its average was taken (under 1024 << 10).
            let periods = q.avg.last_update_time.saturating_sub(p6.residue_at) >> 20;
            let pending = u64::from(p6.removed_nr) * ((1 << 20) / div + 2);
            let residue = decay_load(p6.residue, periods) / div + 1 + pending;
            for (k, (name, v)) in have.into_iter().enumerate() {
                if k == 0 && !runnable_conserved {
                    continue;
                }
                let want = sums[i][k];
                let slack = 2 + 2 * count[i] + v.max(want) / 32 + residue;
                if v.abs_diff(want) > slack {
                    return Err(format!(
                        "cfs_rq {i}: {name} {v} (its sum now, less removed) but its {} attached entities hold {want}",
                        count[i]
                    ));
                }
            }
        }
        Ok(())
    }
}
