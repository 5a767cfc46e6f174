//! Load tracking as Linux 6.x fair.c keeps it on the fair class's state
//! (6.6, 6.12 and 6.18 fair.c: the code is the same in the three but for
//! the rules `Pelt6xRules` names), the arithmetic being `pelt6x.rs`:
//!
//! - `update_load_avg(cfs_rq, se, flags)` with UPDATE_TG, SKIP_AGE_LOAD,
//!   DO_ATTACH (enqueue of a task that changed CPU or is new) and DO_DETACH
//!   (dequeue of a task the balancer moves): the entity, then its queue
//!   (`update_cfs_rq_load_avg`, which first takes out what `removed` holds),
//!   then what a group queue below passed up (`propagate_entity_load_avg`:
//!   `update_tg_cfs_util`, `_runnable`, `_load`), then attach, detach or
//!   `update_tg_load_avg`;
//! - `remove_entity_load_avg` and `migrate_task_rq_fair` (with the NO_HZ
//!   `migrate_se_pelt_lag`); `update_blocked_averages`' `__update_blocked_fair`
//!   over the leaf list, which drops decayed queues (`list_add_leaf_cfs_rq`
//!   with `tmp_alone_branch`, `list_del_leaf_cfs_rq`);
//! - the PELT clock of a throttled queue stops (`cfs_rq_clock_pelt`,
//!   `tg_throttle_down`/`tg_unthrottle_up`), as 6.6 and 6.12 do (6.18 is run
//!   with 6.12's group throttling, `bandwidth.rs` says why, and so with its clock).
//!
//! Units: weights are the kernel's scaled-down ones (`se_weight`,
//! `scale_load_down`); the kernel's `u32` sums (`util_sum`, and the
//! `max_t(u32, ..)` floors) are kept with their truncation.

use super::fair_core::FairCore;
use super::group::ROOT_GROUP;
use super::model::{Pelt6xRules, PeltKind};
use super::pelt::{SchedAvg, decay_load};
use super::pelt6x::{self, PELT_MIN_DIVIDER, SCHED_CAPACITY_SHIFT, get_pelt_divider, load_avg_is_decayed};
use crate::ids::{CfsRqId, EntityId};

/// `update_load_avg` flags (6.x fair.c).
pub const UPDATE_TG: u32 = 0x1;
pub const SKIP_AGE_LOAD: u32 = 0x2;
pub const DO_ATTACH: u32 = 0x4;
pub const DO_DETACH: u32 = 0x8;
const NSEC_PER_MSEC: u64 = 1_000_000;

/// `sub_positive`: subtract, clamped at 0.
#[inline]
pub(crate) fn sub_positive(v: &mut u64, d: u64) {
    *v = v.saturating_sub(d);
}

/// `add_positive`: add a signed delta, clamped at 0.
#[inline]
fn add_positive(v: &mut u64, d: i64) {
    *v = v.checked_add_signed(d).unwrap_or(0);
}

/// `max_t(u32, a, b)`: both truncated to 32 bits first, as the kernel does.
#[inline]
pub(crate) fn max_u32(a: u64, b: u64) -> u64 {
    u64::from((a as u32).max(b as u32))
}

/// A runnable or util sum changed by `delta` (`sub_positive` or
/// `add_positive`), then floored at `avg · PELT_MIN_DIVIDER` (`max_t(u32, ..)`).
/// Returns how far the clamp and the floor moved it from `sum + delta`,
/// which `pelt_invariants` allows for.
fn change_floored(sum: &mut u64, delta: i64, avg: u64) -> u64 {
    let exact = i128::from(*sum) + i128::from(delta);
    add_positive(sum, delta);
    *sum = max_u32(*sum, avg * PELT_MIN_DIVIDER);
    (i128::from(*sum) - exact).unsigned_abs() as u64
}

impl FairCore {
    /// The version's 6.x PELT rules (the EEVDF class runs only under them).
    #[inline]
    pub(crate) fn pelt6x(&self) -> Pelt6xRules {
        match self.pelt {
            PeltKind::Linux6x(r) => r,
            PeltKind::Linux44 => unreachable!("6.x load tracking under a 4.4 table"),
        }
    }

    /// `cfs_rq_clock_pelt` (6.6/6.12 pelt.h): the clock less the time the
    /// queue spent throttled, stopped while it is.
    #[inline]
    pub(crate) fn cfs_rq_clock_pelt(&self, q: CfsRqId) -> u64 {
        let rq = self.rq(q);
        if rq.rt.throttle_count > 0 {
            return rq.p6.throttled_clock_pelt - rq.p6.throttled_clock_pelt_time;
        }
        self.clock - rq.p6.throttled_clock_pelt_time
    }

    /// The runnable count PELT reads of a queue: `h_nr_running` (6.6, 6.12,
    /// delayed tasks included) or `h_nr_runnable` (6.18).
    #[inline]
    fn runnable_count(&self, q: CfsRqId) -> u32 {
        let rq = self.rq(q);
        // Only 6.x reads it: no test of the 4.4 table (`pelt6x`) on this path.
        match &self.pelt {
            PeltKind::Linux6x(r) if r.runnable_excludes_delayed => rq.h_nr_runnable,
            _ => rq.h_nr_running,
        }
    }

    /// `se_runnable` (6.x sched.h): 0 for a delayed entity (6.12+), `!!on_rq`
    /// for a task, `runnable_weight` for a group entity.
    #[inline]
    fn se_runnable(&self, se: EntityId) -> u64 {
        let e = self.se(se);
        if e.sched_delayed {
            return 0;
        }
        if e.is_task() { u64::from(e.on_rq) } else { u64::from(e.runnable_weight) }
    }

    /// `se_update_runnable` (6.x sched.h): a group entity's runnable weight
    /// becomes its queue's runnable count.
    pub(crate) fn se_update_runnable(&mut self, se: EntityId) {
        if let Some(gq) = self.se(se).my_q {
            let n = self.runnable_count(gq);
            self.se_mut(se).runnable_weight = n;
        }
    }

    /// `__update_load_avg_se` (6.x pelt.c) of `se` on its queue `q`.
    #[inline]
    fn update_load_avg_se6x(&mut self, now: u64, q: CfsRqId, se: EntityId) -> bool {
        let running = self.rq(q).curr == Some(se);
        let runnable = self.se_runnable(se);
        let e = self.se_mut(se);
        let (on_rq, weight) = (e.on_rq, e.load.weight);
        pelt6x::update_load_avg_se(now, &mut e.avg, on_rq, runnable, running, weight)
    }

    /// `update_cfs_rq_load_avg` (6.x fair.c): take out the averages of the
    /// entities removed since the last update (their sums estimated as
    /// `avg · divider`, floored at `avg · PELT_MIN_DIVIDER`), pass the
    /// removed runnable sum up as a negative propagation, then age the queue.
    #[inline(always)]
    pub(crate) fn update_cfs_rq_load_avg6x(&mut self, now: u64, q: CfsRqId) -> bool {
        let mut decayed = false;
        if self.rq(q).p6.removed_nr != 0 {
            self.take_removed6x(q);
            decayed = true;
        }
        let runnable = u64::from(self.runnable_count(q));
        let rq = self.rq_mut(q);
        let (weight, running) = (rq.load.weight, rq.curr.is_some());
        decayed |= pelt6x::update_load_avg_cfs_rq(now, &mut rq.avg, weight, runnable, running);
        decayed
    }

    /// The removed-load half of `update_cfs_rq_load_avg` (6.x fair.c), out
    /// of line: most updates find nothing removed.
    #[inline(never)]
    fn take_removed6x(&mut self, q: CfsRqId) {
        let rq = self.rq_mut(q);
        let divider = get_pelt_divider(&rq.avg);
        let p6 = &mut rq.p6;
        let (load, util, runnable) = (p6.removed_load_avg, p6.removed_util_avg, p6.removed_runnable_avg);
        // An entity's sum is its average times the divider it was taken
        // at plus what it gained since in that period (under 1024 << 10):
        // `avg · divider` may miss it by that much either way.
        let mut off = u64::from(p6.removed_nr) * (divider + (1 << 20));
        (p6.removed_load_avg, p6.removed_util_avg, p6.removed_runnable_avg, p6.removed_nr) = (0, 0, 0, 0);
        let sa = &mut rq.avg;
        sub_positive(&mut sa.load_avg, load);
        sub_positive(&mut sa.load_sum, load * divider);
        sa.load_sum = max_u32(sa.load_sum, sa.load_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut sa.util_avg, util);
        off += change_floored(&mut sa.util_sum, -((util * divider) as i64), sa.util_avg);
        sub_positive(&mut sa.runnable_avg, runnable);
        off += change_floored(&mut sa.runnable_sum, -((runnable * divider) as i64), sa.runnable_avg);
        self.note_residue(q, off);
        // removed_runnable is the unweighted version of removed_load.
        self.add_tg_cfs_propagate(q, -((runnable * divider) as i64) >> SCHED_CAPACITY_SHIFT);
    }

    /// For `pelt_invariants`: the queue's runnable and util sums may differ
    /// from its entities' by `off` more (decayed as the sums are).
    fn note_residue(&mut self, q: CfsRqId, off: u64) {
        if off == 0 {
            return;
        }
        let rq = self.rq_mut(q);
        let lut = rq.avg.last_update_time;
        let p6 = &mut rq.p6;
        p6.residue = decay_load(p6.residue, lut.saturating_sub(p6.residue_at) >> 20) + off;
        p6.residue_at = lut;
    }

    /// `add_tg_cfs_propagate` (6.x fair.c).
    fn add_tg_cfs_propagate(&mut self, q: CfsRqId, runnable_sum: i64) {
        let p6 = &mut self.rq_mut(q).p6;
        p6.propagate = true;
        p6.prop_runnable_sum += runnable_sum;
    }

    /// `propagate_entity_load_avg` (6.x fair.c): a group entity whose queue
    /// changed by attach, detach or removal takes the change, and passes it
    /// on to its own queue.
    fn propagate_entity_load_avg(&mut self, se: EntityId) -> bool {
        let Some(gq) = self.se(se).my_q else { return false };
        if !self.rq(gq).p6.propagate {
            return false;
        }
        self.rq_mut(gq).p6.propagate = false;
        let q = self.cfs_rq_of(se);
        let prop = self.rq(gq).p6.prop_runnable_sum;
        self.add_tg_cfs_propagate(q, prop);
        self.update_tg_cfs_util(q, se, gq);
        self.update_tg_cfs_runnable(q, se, gq);
        self.update_tg_cfs_load(q, se, gq);
        true
    }

    /// `update_tg_cfs_util` (6.x fair.c): the group entity's util becomes its
    /// queue's; the parent queue takes the difference.
    fn update_tg_cfs_util(&mut self, q: CfsRqId, se: EntityId, gq: CfsRqId) {
        let g = self.rq(gq).avg.util_avg;
        let delta_avg = g as i64 - self.se(se).avg.util_avg as i64;
        if delta_avg == 0 {
            return;
        }
        let divider = get_pelt_divider(&self.rq(q).avg);
        let e = &mut self.se_mut(se).avg;
        e.util_avg = g;
        let new_sum = (g * divider) as u32;
        let delta_sum = i64::from(new_sum) - e.util_sum as i64;
        e.util_sum = u64::from(new_sum);
        let sa = &mut self.rq_mut(q).avg;
        add_positive(&mut sa.util_avg, delta_avg);
        let off = change_floored(&mut sa.util_sum, delta_sum, sa.util_avg);
        self.note_residue(q, off);
    }

    /// `update_tg_cfs_runnable` (6.x fair.c), the same for runnable.
    fn update_tg_cfs_runnable(&mut self, q: CfsRqId, se: EntityId, gq: CfsRqId) {
        let g = self.rq(gq).avg.runnable_avg;
        let delta_avg = g as i64 - self.se(se).avg.runnable_avg as i64;
        if delta_avg == 0 {
            return;
        }
        let divider = get_pelt_divider(&self.rq(q).avg);
        let e = &mut self.se_mut(se).avg;
        e.runnable_avg = g;
        let new_sum = (g * divider) as u32;
        let delta_sum = i64::from(new_sum) - e.runnable_sum as i64;
        e.runnable_sum = u64::from(new_sum);
        let sa = &mut self.rq_mut(q).avg;
        add_positive(&mut sa.runnable_avg, delta_avg);
        let off = change_floored(&mut sa.runnable_sum, delta_sum, sa.runnable_avg);
        self.note_residue(q, off);
    }

    /// `update_tg_cfs_load` (6.x fair.c): the group entity's unweighted
    /// runnable sum gains what was attached below (clipped at the divider)
    /// or, after a removal, is estimated as the queue's `load_sum / weight`
    /// (no more than before), never below its running sum; its load is
    /// that times its weight.
    fn update_tg_cfs_load(&mut self, q: CfsRqId, se: EntityId, gq: CfsRqId) {
        let mut runnable_sum = self.rq(gq).p6.prop_runnable_sum;
        if runnable_sum == 0 {
            return;
        }
        self.rq_mut(gq).p6.prop_runnable_sum = 0;
        let divider = get_pelt_divider(&self.rq(q).avg);
        let e = self.se(se);
        let (se_load_sum, se_util_sum, weight, se_load_avg) = (e.avg.load_sum, e.avg.util_sum, e.load.weight, e.avg.load_avg);
        if runnable_sum >= 0 {
            // Add runnable; clip at the divider (running == runnable until saturation).
            runnable_sum = (runnable_sum + se_load_sum as i64).min(divider as i64);
        } else {
            // Estimate the queue's unweighted runnable sum: all tasks equally runnable.
            let g = self.rq(gq);
            let load_sum = g.avg.load_sum.checked_div(g.load.weight).unwrap_or(0);
            runnable_sum = se_load_sum.min(load_sum) as i64;
        }
        let running_sum = (se_util_sum >> SCHED_CAPACITY_SHIFT) as i64;
        let runnable_sum = runnable_sum.max(running_sum) as u64;
        let load_sum = weight * runnable_sum;
        let load_avg = load_sum / divider;
        let delta_avg = load_avg as i64 - se_load_avg as i64;
        if delta_avg == 0 {
            return;
        }
        let delta_sum = load_sum as i64 - (weight * se_load_sum) as i64;
        let e = &mut self.se_mut(se).avg;
        e.load_sum = runnable_sum;
        e.load_avg = load_avg;
        let sa = &mut self.rq_mut(q).avg;
        add_positive(&mut sa.load_avg, delta_avg);
        add_positive(&mut sa.load_sum, delta_sum);
        sa.load_sum = max_u32(sa.load_sum, sa.load_avg * PELT_MIN_DIVIDER);
    }

    /// `update_load_avg` (6.x fair.c): age the entity (unless it is detached
    /// or SKIP_AGE_LOAD), its queue and the propagation from below, then
    /// attach a migrated or new entity (DO_ATTACH), detach one the balancer
    /// moves (DO_DETACH), or publish `tg->load_avg` (UPDATE_TG).
    pub(crate) fn update_load_avg6x(&mut self, se: EntityId, flags: u32) {
        let q = self.cfs_rq_of(se);
        let now = self.cfs_rq_clock_pelt(q);
        if self.se(se).avg.attached && flags & SKIP_AGE_LOAD == 0 {
            self.update_load_avg_se6x(now, q, se);
        }
        let mut decayed = self.update_cfs_rq_load_avg6x(now, q);
        decayed |= self.propagate_entity_load_avg(se);
        if !self.se(se).avg.attached && flags & DO_ATTACH != 0 {
            // Enqueued on a new CPU (migrate_task_rq_fair cleared it) or new.
            self.attach_entity_load_avg(q, se);
            self.update_tg_load_avg6x(q);
        } else if flags & DO_DETACH != 0 {
            self.detach_entity_load_avg(q, se);
            self.update_tg_load_avg6x(q);
        } else if decayed && flags & UPDATE_TG != 0 {
            self.update_tg_load_avg6x(q);
        }
    }

    /// `enqueue_load_avg` (6.x fair.c).
    pub(crate) fn enqueue_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        let e = self.se(se);
        let (load_avg, load_sum) = (e.avg.load_avg, e.load.weight * e.avg.load_sum);
        let sa = &mut self.rq_mut(q).avg;
        sa.load_avg += load_avg;
        sa.load_sum += load_sum;
    }

    /// `dequeue_load_avg` (6.x fair.c).
    pub(crate) fn dequeue_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        let e = self.se(se);
        let (load_avg, load_sum) = (e.avg.load_avg, e.load.weight * e.avg.load_sum);
        let sa = &mut self.rq_mut(q).avg;
        sub_positive(&mut sa.load_avg, load_avg);
        sub_positive(&mut sa.load_sum, load_sum);
        sa.load_sum = max_u32(sa.load_sum, sa.load_avg * PELT_MIN_DIVIDER);
    }

    /// The PELT step of `reweight_entity` (6.x fair.c), between its
    /// `dequeue_load_avg` and `enqueue_load_avg`: the entity's load average
    /// follows its new weight, `se_weight · load_sum / divider`.
    pub(crate) fn reweight_load_avg(&mut self, se: EntityId) {
        let e = self.se_mut(se);
        let divider = get_pelt_divider(&e.avg);
        e.avg.load_avg = e.load.weight * e.avg.load_sum / divider;
    }

    /// `attach_entity_load_avg` (6.x fair.c): align the entity's window with
    /// its queue's, rebuild its sums from its averages, add them, and
    /// propagate its runnable sum up.
    pub(crate) fn attach_entity_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        let qa = self.rq(q).avg;
        let divider = get_pelt_divider(&qa);
        let e = self.se_mut(se);
        let weight = e.load.weight;
        let sa = &mut e.avg;
        sa.last_update_time = qa.last_update_time;
        sa.period_contrib = qa.period_contrib;
        sa.attached = true;
        sa.util_sum = u64::from((sa.util_avg * divider) as u32);
        sa.runnable_sum = sa.runnable_avg * divider;
        sa.load_sum = sa.load_avg * divider;
        sa.load_sum = if weight < sa.load_sum { sa.load_sum / weight } else { 1 };
        let SchedAvg { util_avg, util_sum, runnable_avg, runnable_sum, load_sum, .. } = *sa;
        self.enqueue_load_avg(q, se);
        let qa = &mut self.rq_mut(q).avg;
        qa.util_avg += util_avg;
        qa.util_sum = u64::from((qa.util_sum + util_sum) as u32);
        qa.runnable_avg += runnable_avg;
        qa.runnable_sum += runnable_sum;
        self.add_tg_cfs_propagate(q, load_sum as i64);
    }

    /// `detach_entity_load_avg` (6.x fair.c): take the entity's averages and
    /// sums out of its queue (floored) and propagate the loss up.
    fn detach_entity_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        self.dequeue_load_avg(q, se);
        let SchedAvg { util_avg, util_sum, runnable_avg, runnable_sum, load_sum, .. } = self.se(se).avg;
        let sa = &mut self.rq_mut(q).avg;
        sub_positive(&mut sa.util_avg, util_avg);
        let mut off = change_floored(&mut sa.util_sum, -(util_sum as i64), sa.util_avg);
        sub_positive(&mut sa.runnable_avg, runnable_avg);
        off += change_floored(&mut sa.runnable_sum, -(runnable_sum as i64), sa.runnable_avg);
        self.note_residue(q, off);
        self.add_tg_cfs_propagate(q, -(load_sum as i64));
    }

    /// `update_tg_load_avg` (6.x fair.c): publish this group queue's load
    /// into `tg->load_avg` when it moved by more than 1/64 of the last
    /// published value; from 6.12 at most once per ms (`sched_clock_cpu`,
    /// the clock here). The root group is skipped; every CPU is active.
    pub(crate) fn update_tg_load_avg6x(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        if rq.tg == ROOT_GROUP {
            return;
        }
        let now = self.clock;
        if self.pelt6x().tg_load_avg_ratelimit
            && rq.p6.last_update_tg_load_avg.is_some_and(|t| now - t < NSEC_PER_MSEC)
        {
            return;
        }
        let delta = rq.avg.load_avg as i64 - rq.tg_load_avg_contrib as i64;
        if delta.unsigned_abs() > rq.tg_load_avg_contrib / 64 {
            let tg = rq.tg;
            self.groups[tg.index()].load_avg += delta;
            let rq = self.rq_mut(q);
            rq.tg_load_avg_contrib = rq.avg.load_avg;
            rq.p6.last_update_tg_load_avg = Some(now);
        }
    }

    /// `sync_entity_load_avg` (6.x fair.c): decay an entity off its queue to
    /// the queue's last update.
    fn sync_entity_load_avg(&mut self, se: EntityId) {
        let last = self.rq(self.cfs_rq_of(se)).avg.last_update_time;
        let e = self.se_mut(se);
        let weight = e.load.weight;
        pelt6x::update_load_avg_blocked_se(last, &mut e.avg, weight);
    }

    /// `remove_entity_load_avg` (6.x fair.c): the entity, synced to its
    /// queue's last update, is added to the queue's `removed` (taken out at
    /// the queue's next update, `update_cfs_rq_load_avg`).
    pub(crate) fn remove_entity_load_avg6x(&mut self, se: EntityId) {
        self.sync_entity_load_avg(se);
        let q = self.cfs_rq_of(se);
        let SchedAvg { load_avg, util_avg, runnable_avg, .. } = self.se(se).avg;
        let p6 = &mut self.rq_mut(q).p6;
        p6.removed_nr += 1;
        p6.removed_util_avg += util_avg;
        p6.removed_load_avg += load_avg;
        p6.removed_runnable_avg += runnable_avg;
    }

    /// `migrate_se_pelt_lag` (6.x fair.c, CONFIG_NO_HZ_COMMON): a task
    /// leaving an idle CPU, whose queue may not have been updated for a
    /// while, is decayed to an estimate of now: `clock_pelt_idle −
    /// throttled_pelt_idle + (sched_clock_cpu − clock_idle)`, which with one
    /// clock and no invariance is the clock less the queue's throttled time
    /// (never before the queue's last update). Not while the queue was
    /// throttled when last seen empty.
    fn migrate_se_pelt_lag(&mut self, se: EntityId) {
        if load_avg_is_decayed(&self.se(se).avg) {
            return;
        }
        let q = self.cfs_rq_of(se);
        let cpu = self.rq(q).cpu;
        // is_idle_task(rq->curr): no fair task runs there (no other class has tasks).
        if self.rq(self.root_cfs_rq(cpu)).curr.is_some() {
            return;
        }
        let throttled = self.rq(q).p6.throttled_pelt_idle;
        if throttled == u64::MAX {
            return;
        }
        let lut = self.rq(q).avg.last_update_time;
        let now = self.clock.saturating_sub(throttled).max(lut);
        let e = self.se_mut(se);
        let weight = e.load.weight;
        pelt6x::update_load_avg_blocked_se(now, &mut e.avg, weight);
    }

    /// `migrate_task_rq_fair` (6.x fair.c), from `set_task_cpu`: a task that
    /// is not being moved by the balancer (`task_on_rq_migrating`, whose
    /// dequeue detached it) has its average removed from its old queue and
    /// decayed over the source CPU's idle time; either way it is marked to
    /// be attached at its next enqueue (`last_update_time = 0`), and it is
    /// no longer cache hot (`ENQUEUE_MIGRATED`'s `exec_start = 0`). A task
    /// never attached is being forked: 6.x's `wake_up_new_task` places it
    /// with `__set_task_cpu`, which does not call this hook (the engine's
    /// fork path calls it for 4.4's `set_task_cpu`), so it is left alone.
    pub(crate) fn migrate_task_rq6x(&mut self, se: EntityId, on_rq_migrating: bool) {
        if !self.se(se).avg.attached {
            return;
        }
        if !on_rq_migrating {
            self.remove_entity_load_avg6x(se);
            self.migrate_se_pelt_lag(se);
        }
        let e = self.se_mut(se);
        e.avg.attached = false;
        e.exec_start = 0;
    }

    /// `init_entity_runnable_average` (6.x fair.c, from `sched_fork` and
    /// `init_tg_cfs_entry`): a task starts with its weight as load and
    /// nothing else, a group entity with nothing.
    pub(crate) fn init_entity_runnable_average6x(&mut self, se: EntityId) {
        let e = self.se_mut(se);
        e.avg = SchedAvg::default();
        if e.is_task() {
            e.avg.load_avg = e.load.weight;
        }
    }

    /// `post_init_entity_util_avg` (6.x fair.c, from `wake_up_new_task`
    /// once the CPU is chosen): a new task's util is extrapolated from its
    /// queue's, `util_avg · weight / (load_avg + 1)`, capped at half the
    /// CPU's spare capacity (1024 − util); runnable starts equal. 6.6
    /// multiplies by `se->load.weight`, 2^10 times `se_weight` on 64-bit.
    pub(crate) fn post_init_entity_util_avg6x(&mut self, se: EntityId) {
        let q = self.cfs_rq_of(se);
        let (q_util, q_load) = (self.rq(q).avg.util_avg, self.rq(q).avg.load_avg);
        let scaled = self.pelt6x().post_init_scaled_weight;
        let e = self.se_mut(se);
        let weight = if scaled { e.load.weight << 10 } else { e.load.weight };
        // cpu_scale = arch_scale_cpu_capacity: every CPU at 1024.
        let cap = (1024 - q_util as i64) / 2;
        let sa = &mut e.avg;
        if cap > 0 {
            sa.util_avg = if q_util != 0 { (q_util * weight / (q_load + 1)).min(cap as u64) } else { cap as u64 };
        }
        sa.runnable_avg = sa.util_avg;
    }
}
