//! The EEVDF fair class of Linux 6.6, 6.12 and 6.18 (`kernel/sched/fair.c`):
//! its state (the augmented tree and the `avg_vruntime` sums of each queue),
//! V, lag, deadlines, placement, enqueue/dequeue and reweight; the pick, the
//! task-level hooks and the wake-up check are in `eevdf_class.rs`. It runs
//! on the same entities, run queues, groups and load tracking as the 4.4 CFS
//! class (`fair_core.rs`). The model is chosen once (`fair.rs`); where the three
//! versions differ by one rule the rule says which, and feature bits carry
//! the kernel's names (`EevdfFeatures`).
//!
//! Sources read: 6.6.9, 6.12.0 and 6.18.2 `fair.c` (docs/kernel/eevdf-fair-class.md
//! lists the trees and every rule with its line). Each function below names
//! the kernel function it follows.
//!
//! Units: weights are `scale_load_down` weights (nice 0 = 1024), as
//! `avg_vruntime` and `place_entity` use them; virtual times are ns.
//!
//! Rescheduling: the kernel's `resched_curr`/`resched_curr_lazy` from inside
//! the class (`update_curr` at a slice end) are collected in `FairCore::resched`
//! and applied by the engine after the call. Every task here runs in user
//! space, where a lazy resched is honoured at the next return to user mode,
//! i.e. at the same preemption points as a full one (tick, kernel entry,
//! wake-up): the two are not told apart.

use super::eevdf_tree::{EevdfTree, Item};
pub use super::fair_core::{DEQUEUE_DELAYED, DEQUEUE_SPECIAL, ENQUEUE_DELAYED, ENQUEUE_INITIAL};
use super::fair_core::{DEQUEUE_MIGRATING, DEQUEUE_SLEEP, Fair, FairCore, FairPolicy};
use super::fair_pelt6x::{DO_ATTACH, DO_DETACH, UPDATE_TG};
use super::group::MIN_SHARES;
use super::model::{RelDeadline, Reweight, SliceEnd, SliceProtection, TreeKey};
use super::weights::{LoadWeight, calc_delta_fair};
use crate::ids::{CfsRqId, EntityId};
use std::ops::Deref;

/// One run queue's EEVDF state.
#[derive(Clone, Debug, Default)]
pub struct EevdfRq {
    /// The timeline, augmented for `pick_eevdf` (6.6 by vruntime, 6.12+ by deadline).
    pub(crate) tree: EevdfTree,
    /// `Σ (v_i - min_vruntime) · w_i` over the entities in the tree (not
    /// `curr`) (`cfs_rq->avg_vruntime`).
    pub avg_vruntime: i64,
    /// `Σ w_i` over the same entities (`cfs_rq->avg_load`).
    pub avg_load: i64,
}

/// The EEVDF class's own state, per run queue (indexed by `CfsRqId`).
#[derive(Clone, Debug, Default)]
pub struct Eevdf {
    pub(crate) queues: Vec<EevdfRq>,
    /// EEVDF picks of an ineligible entity that no kernel rule explains
    /// (checked by `eevdf_invariants`; stays 0).
    pub pick_violations: u64,
}

impl FairPolicy for Eevdf {
    fn add_queue(&mut self) {
        self.queues.push(EevdfRq::default());
    }

    fn enqueue_entity(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId, flags: u32) {
        f.eevdf_enqueue_entity(q, se, flags);
    }

    /// 6.12: SPECIAL keeps the group entity from being delayed.
    fn throttle_dequeue(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId) {
        let mut flags = DEQUEUE_SLEEP | DEQUEUE_SPECIAL;
        if f.se(se).sched_delayed {
            flags |= DEQUEUE_DELAYED;
        }
        f.eevdf_dequeue_entity(q, se, flags);
    }

    /// 6.12: handle any unfinished DELAY_DEQUEUE business first.
    fn unthrottle_finish_delayed(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId) -> bool {
        if !f.se(se).sched_delayed {
            return false;
        }
        f.eevdf_dequeue_entity(q, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
        true
    }

    const UPDATE_WALKED_LEVELS: bool = true;
}

/// The EEVDF state read-only, with the shared state: what V and lag need,
/// for callers that hold the class by shared reference.
pub struct EevdfRead<'a> {
    pub core: &'a FairCore,
    pub eevdf: &'a Eevdf,
}

impl Deref for EevdfRead<'_> {
    type Target = FairCore;
    fn deref(&self) -> &FairCore {
        self.core
    }
}

impl EevdfRead<'_> {
    /// `scale_load_down(se->load.weight)`.
    pub(crate) fn weight_of(&self, se: EntityId) -> i64 {
        self.se(se).load.weight as i64
    }

    /// `entity_key` (6.x): vruntime relative to `min_vruntime`.
    pub(crate) fn entity_key(&self, q: CfsRqId, se: EntityId) -> i64 {
        self.se(se).vruntime.wrapping_sub(self.rq(q).min_vruntime)
    }

    /// The sums `avg_vruntime()` and `vruntime_eligible()` use: the timeline
    /// plus `curr` if it is queued.
    pub(crate) fn avg_sums(&self, q: CfsRqId) -> (i64, i64) {
        let rq = self.rq(q);
        let eq = &self.eevdf.queues[q.index()];
        let (mut avg, mut load) = (eq.avg_vruntime, eq.avg_load);
        if let Some(c) = rq.curr
            && self.se(c).on_rq
        {
            let w = self.weight_of(c);
            avg = avg.wrapping_add(self.entity_key(q, c).wrapping_mul(w));
            load += w;
        }
        (avg, load)
    }

    /// `avg_vruntime` (6.6 fair.c:671, 6.12 :653, 6.18 :654): V, the
    /// weighted average vruntime, rounded down.
    pub fn avg_vruntime(&self, q: CfsRqId) -> i64 {
        self.avg_vruntime_of(q, self.avg_sums(q))
    }

    /// `avg_vruntime` from the sums `avg_sums(q)` gave, when they still hold.
    #[inline]
    #[allow(clippy::if_same_then_else)]
    pub(crate) fn avg_vruntime_of(&self, q: CfsRqId, (mut avg, load): (i64, i64)) -> i64 {
        // Sign flips with the division: floor, as the kernel's `avg -= load - 1`.
        let floor_div = |mut avg: i64, load: i64| {
            if avg < 0 {
                avg -= load - 1;
            }
            avg / load
        };
        // The load is a sum of weights: positive, which spares the division
        // its overflow test (any other non-zero load divides the same way).
        if load > 0 {
            avg = floor_div(avg, load);
        } else if load != 0 {
            avg = floor_div(avg, load);
        }
        self.rq(q).min_vruntime.wrapping_add(avg)
    }

    /// `entity_lag` (6.12 :702; the arithmetic of `update_entity_lag` in 6.6
    /// :710 and 6.18 :693): `V - vruntime` of `se` in its queue `q`, clamped
    /// to `calc_delta_fair(max(2·slice, TICK_NSEC))`, the entity's weight
    /// scaling the clamp. Eligible exactly when it is ≥ 0 (V is rounded down).
    pub fn entity_lag(&self, q: CfsRqId, se: EntityId) -> i64 {
        self.entity_lag_of(q, se, self.avg_sums(q))
    }

    /// `entity_lag` from the sums `avg_sums(q)` gave, when they still hold.
    #[inline]
    pub(crate) fn entity_lag_of(&self, q: CfsRqId, se: EntityId, sums: (i64, i64)) -> i64 {
        let lag = self.avg_vruntime_of(q, sums).wrapping_sub(self.se(se).vruntime);
        let e = self.se(se);
        let limit = calc_delta_fair((2 * e.slice).max(self.tick_nsec), &e.load) as i64;
        lag.clamp(-limit, limit)
    }
}

impl Fair<'_, Eevdf> {
    /// The read-only EEVDF view of this state.
    pub(crate) fn read(&self) -> EevdfRead<'_> {
        EevdfRead { core: self.core, eevdf: self.policy }
    }

    /// `scale_load_down(se->load.weight)`.
    pub(crate) fn weight_of(&self, se: EntityId) -> i64 {
        self.read().weight_of(se)
    }

    /// `entity_key` (6.x): vruntime relative to `min_vruntime`.
    pub(crate) fn entity_key(&self, q: CfsRqId, se: EntityId) -> i64 {
        self.read().entity_key(q, se)
    }

    /// The sums `avg_vruntime()` and `vruntime_eligible()` use.
    pub(crate) fn avg_sums(&self, q: CfsRqId) -> (i64, i64) {
        self.read().avg_sums(q)
    }

    /// `avg_vruntime`: V (`EevdfRead::avg_vruntime`).
    pub fn avg_vruntime(&self, q: CfsRqId) -> i64 {
        self.read().avg_vruntime(q)
    }

    /// `entity_lag` (`EevdfRead::entity_lag`).
    pub fn entity_lag(&self, q: CfsRqId, se: EntityId) -> i64 {
        self.read().entity_lag(q, se)
    }

    /// The tree's order: vruntime (6.6) or the virtual deadline (6.12+
    /// `entity_before`), then insertion.
    fn key(&self, se: EntityId) -> (i64, u64) {
        let e = self.se(se);
        let k = match self.rules.tree_key {
            TreeKey::Deadline => e.deadline,
            TreeKey::Vruntime => e.vruntime,
        };
        (k, e.tree_seq)
    }

    /// `__enqueue_entity`: insert into the augmented tree (ties go right),
    /// with the values `pick_eevdf` searches.
    pub(crate) fn enqueue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        self.tree_seq += 1;
        let seq = self.tree_seq;
        self.se_mut(se).tree_seq = seq;
        let (key, _) = self.key(se);
        let e = self.se(se);
        let item = Item { key, seq, se, vruntime: e.vruntime, deadline: e.deadline, slice: e.slice };
        self.policy.queues[q.index()].tree.insert(item);
    }

    /// `__dequeue_entity`: out of the tree.
    pub(crate) fn dequeue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        let (key, seq) = self.key(se);
        let removed = self.policy.queues[q.index()].tree.remove(key, seq);
        debug_assert!(removed.is_some_and(|i| i.se == se), "dequeue of an entity not in the tree");
    }

    /// The EEVDF state of `q`.
    pub(crate) fn queue(&self, q: CfsRqId) -> &EevdfRq {
        &self.policy.queues[q.index()]
    }

    /// `avg_vruntime_add` (from `__enqueue_entity`).
    pub(crate) fn avg_vruntime_add(&mut self, q: CfsRqId, se: EntityId) {
        let (w, key) = (self.weight_of(se), self.entity_key(q, se));
        let eq = &mut self.policy.queues[q.index()];
        eq.avg_vruntime = eq.avg_vruntime.wrapping_add(key.wrapping_mul(w));
        eq.avg_load += w;
    }

    /// `avg_vruntime_sub` (from `__dequeue_entity`).
    pub(crate) fn avg_vruntime_sub(&mut self, q: CfsRqId, se: EntityId) {
        let (w, key) = (self.weight_of(se), self.entity_key(q, se));
        let eq = &mut self.policy.queues[q.index()];
        eq.avg_vruntime = eq.avg_vruntime.wrapping_sub(key.wrapping_mul(w));
        eq.avg_load -= w;
    }

    /// `vruntime_eligible` (6.12 :726; 6.6 `entity_eligible` :738): `V ≥ v`
    /// without dividing, ties eligible.
    pub fn vruntime_eligible(&self, q: CfsRqId, vruntime: i64) -> bool {
        self.eligibility(q)(vruntime)
    }

    /// The eligibility test of `q` as it stands, with its sums computed
    /// once (a pick tests several vruntimes against the same V).
    pub(crate) fn eligibility(&self, q: CfsRqId) -> impl Fn(i64) -> bool + use<> {
        self.eligibility_of(q, self.avg_sums(q))
    }

    /// The eligibility test of `q` from the sums `avg_sums(q)` gave.
    #[inline]
    pub(crate) fn eligibility_of(&self, q: CfsRqId, (avg, load): (i64, i64)) -> impl Fn(i64) -> bool + use<> {
        let min = self.rq(q).min_vruntime;
        move |v: i64| avg >= v.wrapping_sub(min).wrapping_mul(load)
    }

    pub fn entity_eligible(&self, q: CfsRqId, se: EntityId) -> bool {
        self.vruntime_eligible(q, self.se(se).vruntime)
    }

    /// `update_entity_lag` (6.6 :710, 6.12 :702, 6.18 :693): `vlag = V - v`,
    /// clamped to `calc_delta_fair(max(2·slice, TICK_NSEC))`.
    pub(crate) fn update_entity_lag(&mut self, q: CfsRqId, se: EntityId) {
        self.se_mut(se).vlag = self.entity_lag(q, se);
    }

    /// `update_min_vruntime` (6.x): the smaller of curr (if queued) and the
    /// tree's smallest vruntime (6.6: the leftmost's, the tree being ordered
    /// by vruntime; 6.12+: the augmented `min_vruntime` of the root), never
    /// backwards; `avg_vruntime` is rebased by the move (`__update_min_vruntime`).
    pub(crate) fn eevdf_update_min_vruntime(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        let mut vruntime = rq.min_vruntime;
        let curr = rq.curr.filter(|&c| self.se(c).on_rq);
        if let Some(c) = curr {
            vruntime = self.se(c).vruntime;
        }
        if let Some(tree_min) = self.timeline_min_vruntime(q) {
            vruntime = if curr.is_none() { tree_min } else { vruntime.min(tree_min) };
        }
        let delta = vruntime.wrapping_sub(self.rq(q).min_vruntime);
        if delta > 0 {
            // avg_vruntime_update: keys shrink by delta.
            let eq = &mut self.policy.queues[q.index()];
            eq.avg_vruntime = eq.avg_vruntime.wrapping_sub(eq.avg_load.wrapping_mul(delta));
            self.rq_mut(q).min_vruntime = vruntime;
        }
    }

    /// The smallest vruntime in the timeline (curr excluded).
    pub(crate) fn timeline_min_vruntime(&self, q: CfsRqId) -> Option<i64> {
        // 6.6: the leftmost of a vruntime-ordered tree; 6.12+: the root's
        // augmented min_vruntime. Both are the smallest vruntime queued.
        self.queue(q).tree.min_vruntime()
    }

    /// `cfs_rq_min_slice` (6.12 :785): the shortest slice of curr (if
    /// queued) and the timeline; `u64::MAX` when empty.
    pub(crate) fn cfs_rq_min_slice(&self, q: CfsRqId) -> u64 {
        let rq = self.rq(q);
        let mut min = u64::MAX;
        if let Some(c) = rq.curr
            && self.se(c).on_rq
        {
            min = self.se(c).slice;
        }
        self.queue(q).tree.min_slice().map_or(min, |m| min.min(m))
    }

    /// `update_deadline` (6.6 :1019, 6.12 :1007, 6.18 :1041): when the
    /// request is used up, a new one from the current vruntime. 6.6 asks
    /// for the resched here, later versions in `update_curr`.
    pub(crate) fn update_deadline(&mut self, q: CfsRqId, se: EntityId) -> bool {
        let e = self.se(se);
        if e.vruntime.wrapping_sub(e.deadline) < 0 {
            return false;
        }
        let keep_custom = self.rules.custom_slices && e.custom_slice;
        let slice = if keep_custom { e.slice } else { self.eevdf.base_slice_ns };
        let vslice = calc_delta_fair(slice, &e.load) as i64;
        let e = self.se_mut(se);
        e.slice = slice;
        e.deadline = e.vruntime.wrapping_add(vslice);
        if self.rules.slice_end == SliceEnd::InUpdateDeadline && self.rq(q).nr_running > 1 {
            self.resched_cpu_of(q);
            self.clear_buddies(q, se);
        }
        true
    }

    /// `update_curr` (6.x): charge curr, move its deadline, then (6.12+)
    /// resched at a slice end, or when 6.12's PREEMPT_SHORT cancelled the
    /// protection of a now ineligible curr, or (6.18) once its protected
    /// window (`vprot`) is behind it.
    pub(crate) fn eevdf_update_curr(&mut self, q: CfsRqId) {
        let Some(curr) = self.rq(q).curr else { return };
        let now = self.clock;
        let se = self.se_mut(curr);
        let delta_exec = now as i64 - se.exec_start as i64;
        if delta_exec <= 0 {
            return;
        }
        se.exec_start = now;
        se.sum_exec_runtime += delta_exec as u64;
        se.vruntime = se.vruntime.wrapping_add(calc_delta_fair(delta_exec as u64, &se.load) as i64);
        let resched = self.update_deadline(q, curr);
        self.eevdf_update_min_vruntime(q);
        self.account_cfs_rq_runtime(q, delta_exec as u64);
        if self.rules.slice_end == SliceEnd::InUpdateDeadline || self.rq(q).nr_running == 1 {
            return;
        }
        let more = match self.rules.slice_protection {
            // did_preempt_short (6.12 :1177).
            SliceProtection::ParityMarker | SliceProtection::None => {
                let e = self.se(curr);
                self.features_eevdf.preempt_short && e.vlag != e.deadline && !self.entity_eligible(q, curr)
            }
            SliceProtection::Vprot => !Self::protect_slice(self.se(curr)),
        };
        if resched || more {
            self.resched_cpu_of(q);
            self.clear_buddies(q, curr);
        }
    }

    /// `set_protect_slice` (6.18 :892): at pick, protect curr up to its
    /// deadline, or for the shortest queued slice if that is shorter; with
    /// RUN_TO_PARITY off, for min(slice, the unscaled base slice).
    pub(crate) fn set_protect_slice(&mut self, q: CfsRqId, se: EntityId) {
        let mut slice = self.eevdf.normalized_base_slice_ns;
        if self.features_eevdf.run_to_parity {
            slice = self.cfs_rq_min_slice(q);
        }
        let e = self.se(se);
        slice = slice.min(e.slice);
        let mut vprot = e.deadline;
        if slice != e.slice {
            vprot = vprot.min(e.vruntime.wrapping_add(calc_delta_fair(slice, &e.load) as i64));
        }
        self.se_mut(se).vprot = vprot;
    }

    /// `update_protect_slice` (6.18): shrink the window to the shortest queued slice.
    pub(crate) fn update_protect_slice(&mut self, q: CfsRqId, se: EntityId) {
        let slice = self.cfs_rq_min_slice(q);
        let e = self.se(se);
        let until = e.vruntime.wrapping_add(calc_delta_fair(slice, &e.load) as i64);
        let e = self.se_mut(se);
        e.vprot = e.vprot.min(until);
    }

    /// `protect_slice` (6.18).
    pub(crate) fn protect_slice(e: &super::entity::SchedEntity) -> bool {
        e.vprot.wrapping_sub(e.vruntime) > 0
    }

    /// `cancel_protect_slice` (6.18).
    pub(crate) fn cancel_protect_slice(&mut self, se: EntityId) {
        let e = self.se_mut(se);
        if Self::protect_slice(e) {
            e.vprot = e.vruntime;
        }
    }

    /// `__enqueue_entity` (6.x): into the timeline and the average.
    pub(crate) fn eevdf_enqueue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        self.avg_vruntime_add(q, se);
        self.enqueue_timeline(q, se);
    }

    /// `__dequeue_entity` (6.x).
    pub(crate) fn eevdf_dequeue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        self.dequeue_timeline(q, se);
        self.avg_vruntime_sub(q, se);
    }

    /// `__pick_eevdf` / `pick_eevdf` of the model (6.6 :875/:969, 6.12 :907,
    /// 6.18 :944 with `protect`): the eligible entity with the earliest
    /// deadline, curr included, with the version's shortcuts and protection.
    pub(crate) fn pick_eevdf(&self, q: CfsRqId, protect: bool) -> Option<EntityId> {
        let rq = self.rq(q);
        let tree = &self.queue(q).tree;
        let rules = self.rules;
        let leftmost = tree.first().map(|i| i.se);
        let mut curr = rq.curr;
        // 6.12+: one entity (curr and delayed ones counted) needs no eligibility test.
        if rules.pick_alone && rq.nr_running == 1 {
            return match curr {
                Some(c) if self.se(c).on_rq => Some(c),
                _ => leftmost,
            };
        }
        let eligible = self.eligibility(q);
        if let Some(c) = curr
            && (!self.se(c).on_rq || !eligible(self.se(c).vruntime))
        {
            curr = None;
        }
        // RUN_TO_PARITY: 6.6/6.12 the deadline stashed in vlag at pick still holds; 6.18 vprot.
        if let Some(c) = curr
            && self.protection(self.se(c), protect).is_some()
        {
            return Some(c);
        }
        let found = if rules.tree_key == TreeKey::Vruntime {
            // Tree by vruntime, augmented with min_deadline (6.6 :875).
            tree.earliest_deadline_eligible(eligible)
        } else {
            // Tree by deadline, augmented with min_vruntime: the first
            // eligible entity in deadline order (6.12 :907).
            tree.first_eligible(eligible)
        }
        .map(|i| i.se);
        // Curr is a candidate too; it wins only with a strictly earlier deadline.
        let best = match (found, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if self.se(c).deadline.wrapping_sub(self.se(b).deadline) < 0 => Some(c),
            (b, _) => b,
        };
        // 6.6 pick_eevdf: nothing found (rounding) → the leftmost.
        if best.is_none() && rules.tree_key == TreeKey::Vruntime {
            return leftmost;
        }
        best
    }

    /// Why `pick_eevdf` may return an ineligible entity: it is alone (6.12+,
    /// delayed ones counted), or it is curr under RUN_TO_PARITY / `vprot`
    /// (which need it eligible, so never), or 6.6's fallback to the leftmost.
    pub(crate) fn pick_exempt(&self, q: CfsRqId, se: EntityId) -> bool {
        let rq = self.rq(q);
        match self.rules.tree_key {
            TreeKey::Vruntime => self.queue(q).tree.first().map(|i| i.se) == Some(se),
            TreeKey::Deadline => rq.nr_running == 1,
        }
    }

    /// `place_entity` (6.6 :5063, 6.12 :5266, 6.18 :5128): at V, minus the
    /// saved lag inflated by `(W + w)/W` (PLACE_LAG), with a deadline one
    /// vslice on (half for a new task, PLACE_DEADLINE_INITIAL), or the
    /// relative deadline it kept (6.12+ `rel_deadline`).
    pub(crate) fn eevdf_place_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        let rules = self.rules;
        let sums = self.avg_sums(q);
        let vruntime = self.read().avg_vruntime_of(q, sums);
        let e = self.se(se);
        let slice = if rules.custom_slices && e.custom_slice { e.slice } else { self.eevdf.base_slice_ns };
        let mut vslice = calc_delta_fair(slice, &e.load) as i64;
        let mut lag = 0i64;
        let nr = self.rq(q).nr_running;
        let has_lag = if rules.place_needs_lag { e.vlag != 0 } else { true };
        if self.features_eevdf.place_lag && nr > 0 && has_lag {
            // avg_load plus curr's weight if queued: the load of `sums`.
            let mut load = sums.1;
            lag = e.vlag.wrapping_mul(load + self.weight_of(se));
            if load == 0 {
                load = 1; // WARN_ON_ONCE(!load)
            }
            lag /= load; // div_s64 truncates toward 0
        }
        let rel = match rules.rel_deadline {
            RelDeadline::None => false,
            RelDeadline::Feature => self.features_eevdf.place_rel_deadline && e.rel_deadline,
            RelDeadline::Always => e.rel_deadline,
        };
        let initial = flags & ENQUEUE_INITIAL != 0 && self.features_eevdf.place_deadline_initial;
        let e = self.se_mut(se);
        e.slice = slice;
        e.vruntime = vruntime.wrapping_sub(lag);
        if rel {
            e.deadline = e.deadline.wrapping_add(e.vruntime);
            e.rel_deadline = false;
            return;
        }
        if initial {
            vslice /= 2;
        }
        e.deadline = e.vruntime.wrapping_add(vslice);
    }

    /// `enqueue_entity` (6.x): curr is placed before `update_curr`, others
    /// after their group weight is brought up to date (`update_cfs_group`).
    pub(crate) fn eevdf_enqueue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        let curr = self.rq(q).curr == Some(se);
        if curr {
            self.eevdf_place_entity(q, se, flags);
        }
        self.eevdf_update_curr(q);
        self.update_load_avg6x(se, UPDATE_TG | DO_ATTACH);
        self.se_update_runnable(se);
        self.update_cfs_group(se);
        if !curr {
            self.eevdf_place_entity(q, se, flags);
        }
        self.account_entity_enqueue(q, se);
        if !curr {
            self.eevdf_enqueue_timeline(q, se);
        }
        self.se_mut(se).on_rq = true;
        if self.rq(q).nr_running == 1 {
            self.check_enqueue_throttle(q);
            // 6.6/6.12 (and 6.18 with their group throttling): a queue joins
            // the leaf list unless its PELT clock is stopped.
            if !self.throttled_hierarchy(q) {
                self.list_add_leaf_cfs_rq6x(q);
            }
            self.note_enqueue_throttled(q);
        }
    }

    /// `dequeue_entity` (6.x). Returns false when DELAY_DEQUEUE (6.12+)
    /// keeps a sleeping, ineligible entity queued instead.
    pub(crate) fn eevdf_dequeue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) -> bool {
        let sleep = flags & DEQUEUE_SLEEP != 0;
        self.eevdf_update_curr(q);
        // The sums of V, when the eligibility test reads them: nothing
        // below changes them before `update_entity_lag` (PELT, runnable
        // weight and buddies only), which then reuses them.
        let mut sums = None;
        if flags & (DEQUEUE_DELAYED | DEQUEUE_SPECIAL) == 0
            && sleep
            && self.features_eevdf.delay_dequeue
            && self.rules.delay_dequeue
            && !self.eligibility_of(q, *sums.insert(self.avg_sums(q)))(self.se(se).vruntime)
        {
            if self.rules.delay_clears_buddies {
                self.clear_buddies(q, se);
            } else if self.rq(q).next == Some(se) {
                self.rq_mut(q).next = None;
            }
            self.update_load_avg6x(se, 0);
            self.set_delayed(se);
            return false;
        }
        // A task the balancer moves leaves its queue's averages at once.
        let migrating = flags & DEQUEUE_MIGRATING != 0 && self.se(se).is_task();
        self.update_load_avg6x(se, if migrating { UPDATE_TG | DO_DETACH } else { UPDATE_TG });
        self.se_update_runnable(se);
        self.clear_buddies(q, se);
        // update_entity_lag (6.x), from the sums read above when there are any.
        let sums = sums.unwrap_or_else(|| self.avg_sums(q));
        self.se_mut(se).vlag = self.read().entity_lag_of(q, se, sums);
        // Out of the tree before the deadline (its key from 6.12) changes.
        if self.rq(q).curr != Some(se) {
            self.eevdf_dequeue_timeline(q, se);
        }
        if self.rules.rel_deadline != RelDeadline::None && self.features_eevdf.place_rel_deadline && !sleep {
            let e = self.se_mut(se);
            e.deadline = e.deadline.wrapping_sub(e.vruntime);
            e.rel_deadline = true;
        }
        self.se_mut(se).on_rq = false;
        self.account_entity_dequeue(q, se);
        // Return excess runtime on last dequeue.
        self.return_cfs_rq_runtime(q);
        self.update_cfs_group(se);
        self.eevdf_update_min_vruntime(q);
        if flags & DEQUEUE_DELAYED != 0 {
            self.finish_delayed_dequeue_entity(se);
        }
        if self.rq(q).nr_running == 0 {
            self.update_idle_cfs_rq_clock_pelt(q);
        }
        true
    }

    /// `finish_delayed_dequeue_entity` (6.12+): DELAY_ZERO keeps no positive lag.
    pub(crate) fn finish_delayed_dequeue_entity(&mut self, se: EntityId) {
        let zero = self.features_eevdf.delay_zero;
        self.clear_delayed(se);
        let e = self.se_mut(se);
        if zero && e.vlag > 0 {
            e.vlag = 0;
        }
    }

    /// `requeue_delayed_entity` (6.12 :6919, 6.18 :6885): a delayed entity
    /// woken (or with a task enqueued below it) stays where it is, unless
    /// its lag became positive: then it is placed afresh at V (DELAY_ZERO).
    pub(crate) fn requeue_delayed_entity(&mut self, se: EntityId) {
        let q = self.cfs_rq_of(se);
        debug_assert!(self.se(se).sched_delayed && self.se(se).on_rq);
        if self.features_eevdf.delay_zero {
            self.update_entity_lag(q, se);
            if self.se(se).vlag > 0 {
                let curr = self.rq(q).curr == Some(se);
                self.rq_mut(q).nr_running -= 1;
                if !curr {
                    self.eevdf_dequeue_timeline(q, se);
                }
                self.se_mut(se).vlag = 0;
                self.eevdf_place_entity(q, se, 0);
                if !curr {
                    self.eevdf_enqueue_timeline(q, se);
                }
                self.rq_mut(q).nr_running += 1;
            }
        }
        self.update_load_avg6x(se, 0);
        self.clear_delayed(se);
    }

    /// `set_delayed` (6.18 fair.c; 6.12.y's, which stops at a throttled
    /// queue as the group throttling modelled needs): a delayed task no
    /// longer counts in `h_nr_runnable` up the hierarchy. A group entity's
    /// tasks were counted out as they left it.
    pub(crate) fn set_delayed(&mut self, se: EntityId) {
        self.se_mut(se).sched_delayed = true;
        self.walk_runnable(se, -1);
    }

    /// `clear_delayed` (6.18 fair.c): the task counts as runnable again.
    pub(crate) fn clear_delayed(&mut self, se: EntityId) {
        self.se_mut(se).sched_delayed = false;
        self.walk_runnable(se, 1);
    }

    /// `set_delayed`/`clear_delayed`'s walk: a task's `h_nr_runnable` change
    /// at each level up to the root or a throttled queue.
    fn walk_runnable(&mut self, se: EntityId, delta: i32) {
        if !self.se(se).is_task() {
            return;
        }
        let mut cur = Some(se);
        // Bounded by the hierarchy depth.
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            let rq = self.rq_mut(q);
            rq.h_nr_runnable = rq.h_nr_runnable.wrapping_add_signed(delta);
            if self.cfs_rq_throttled(q) {
                break;
            }
            cur = self.parent(s);
        }
    }

    /// `update_cfs_group` (6.x): a group entity's weight from
    /// `calc_group_shares` (6.x: `load = max(load.weight, load_avg)`, then
    /// `shares · load / (tg->load_avg − contrib + load)`, clamped to
    /// [MIN_SHARES, shares]). 6.18 keeps an empty group's weight
    /// (`empty_group_keeps_weight`): a delayed group entity stays as it was.
    pub(crate) fn update_cfs_group(&mut self, se: EntityId) {
        let Some(gq) = self.se(se).my_q else { return };
        if self.rules.empty_group_keeps_weight && self.rq(gq).load.weight == 0 {
            return;
        }
        // 6.6/6.12 (and 6.18 as modelled, with 6.12's group throttling).
        if self.throttled_hierarchy(gq) {
            return;
        }
        let rq = self.rq(gq);
        let tg = &self.groups[rq.tg.index()];
        let load = rq.load.weight.max(rq.avg.load_avg) as i64;
        let tg_weight = match self.group_load {
            super::group::GroupLoad::Pelt => tg.load_avg - rq.tg_load_avg_contrib as i64 + load,
            super::group::GroupLoad::Instantaneous => tg.load_weight as i64,
        };
        let tg_shares = tg.shares as i64;
        let mut shares = tg_shares * load;
        if tg_weight != 0 {
            shares /= tg_weight;
        }
        let shares = shares.clamp(MIN_SHARES as i64, tg_shares) as u64;
        if self.se(se).load.weight != shares {
            let q = self.cfs_rq_of(se);
            self.eevdf_reweight_entity(q, se, shares);
        }
    }

    /// `reweight_entity` (6.6.9/6.12 with `reweight_eevdf`; 6.18 :3770, which
    /// saves lag and relative deadline and places the entity again), with
    /// its PELT step (`dequeue_load_avg`, the new `load_avg`, `enqueue_load_avg`).
    pub(crate) fn eevdf_reweight_entity(&mut self, q: CfsRqId, se: EntityId, weight: u64) {
        let curr = self.rq(q).curr == Some(se);
        let on_rq = self.se(se).on_rq;
        let old = self.se(se).load.weight as i64;
        let new = weight as i64;
        let reweight = self.rules.reweight;
        let replace = reweight == Reweight::Replace;
        let mut avruntime = 0;
        if on_rq {
            self.eevdf_update_curr(q);
            if replace {
                self.update_entity_lag(q, se);
            } else {
                avruntime = self.avg_vruntime(q);
            }
            if !curr {
                self.eevdf_dequeue_timeline(q, se);
            }
            if replace {
                let e = self.se_mut(se);
                e.deadline = e.deadline.wrapping_sub(e.vruntime);
                e.rel_deadline = true;
            }
            self.account_entity_dequeue(q, se);
        }
        self.dequeue_load_avg(q, se);
        if on_rq && !replace {
            // reweight_eevdf: keep the lag and the relative deadline in real time.
            let e = self.se(se);
            if avruntime != e.vruntime {
                let mut vlag = avruntime.wrapping_sub(e.vruntime);
                if reweight == (Reweight::Rescale { clamp_lag: true }) {
                    let limit = calc_delta_fair((2 * e.slice).max(self.tick_nsec), &e.load) as i64;
                    vlag = vlag.clamp(-limit, limit);
                }
                let vlag = vlag.wrapping_mul(old) / new;
                self.se_mut(se).vruntime = avruntime.wrapping_sub(vlag);
            }
            let e = self.se_mut(se);
            let vslice = e.deadline.wrapping_sub(avruntime).wrapping_mul(old) / new;
            e.deadline = avruntime.wrapping_add(vslice);
        } else {
            let e = self.se_mut(se);
            e.vlag = e.vlag.wrapping_mul(old) / new;
            if replace && e.rel_deadline {
                e.deadline = e.deadline.wrapping_mul(old) / new;
            }
        }
        self.se_mut(se).load = LoadWeight::from_weight(weight);
        // The load average follows the weight (se_weight · load_sum / divider).
        self.reweight_load_avg(se);
        self.enqueue_load_avg(q, se);
        if on_rq {
            if replace {
                // Placed with the rebuilt lag (nr_queued does not count it meanwhile).
                self.eevdf_place_entity(q, se, 0);
            }
            self.account_entity_enqueue(q, se);
            if !curr {
                self.eevdf_enqueue_timeline(q, se);
            }
            self.eevdf_update_min_vruntime(q);
        }
    }
}
