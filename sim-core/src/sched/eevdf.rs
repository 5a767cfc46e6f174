//! The EEVDF fair class of Linux 6.6, 6.12 and 6.18 (`kernel/sched/fair.c`),
//! on the same entities, run queues, groups and load tracking as the 4.4 CFS
//! class (`fair.rs`). The model is chosen once (`Cfs::model`); where the three
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
//! the class (`update_curr` at a slice end) are collected in `Cfs::resched`
//! and applied by the engine after the call. Every task here runs in user
//! space, where a lazy resched is honoured at the next return to user mode,
//! i.e. at the same preemption points as a full one (tick, kernel entry,
//! wake-up): the two are not told apart.

use super::cfs_rq::CfsRq;
use super::fair::{Cfs, DEQUEUE_SLEEP, ENQUEUE_WAKEUP, WF_FORK};
use super::group::{MIN_SHARES, ROOT_GROUP};
use super::model::{KernelModel, WakeupVerdict};
use super::weights::{LoadWeight, calc_delta_fair};
use crate::ids::{CfsRqId, EntityId};
use super::policy::Policy;

/// `ENQUEUE_INITIAL` (6.x sched.h): a new task (half a slice with PLACE_DEADLINE_INITIAL).
pub const ENQUEUE_INITIAL: u32 = 0x80;
/// `ENQUEUE_DELAYED` (6.12+): wake a task that DELAY_DEQUEUE kept queued.
pub const ENQUEUE_DELAYED: u32 = 0x200;
/// `DEQUEUE_DELAYED` (6.12+): the final dequeue of a delayed entity.
pub const DEQUEUE_DELAYED: u32 = 0x200;
/// `DEQUEUE_SPECIAL` (6.12+): never delayed (`throttle_cfs_rq` uses it).
pub const DEQUEUE_SPECIAL: u32 = 0x10;

impl Cfs {
    fn model(&self) -> KernelModel {
        self.model
    }

    /// `scale_load_down(se->load.weight)`.
    fn weight_of(&self, se: EntityId) -> i64 {
        self.se(se).load.weight as i64
    }

    /// `entity_key` (6.x): vruntime relative to `min_vruntime`.
    fn entity_key(&self, q: CfsRqId, se: EntityId) -> i64 {
        self.se(se).vruntime.wrapping_sub(self.rq(q).min_vruntime)
    }

    /// `avg_vruntime_add` (from `__enqueue_entity`).
    fn avg_vruntime_add(&mut self, q: CfsRqId, se: EntityId) {
        let (w, key) = (self.weight_of(se), self.entity_key(q, se));
        let rq = self.rq_mut(q);
        rq.avg_vruntime = rq.avg_vruntime.wrapping_add(key.wrapping_mul(w));
        rq.avg_load += w;
    }

    /// `avg_vruntime_sub` (from `__dequeue_entity`).
    fn avg_vruntime_sub(&mut self, q: CfsRqId, se: EntityId) {
        let (w, key) = (self.weight_of(se), self.entity_key(q, se));
        let rq = self.rq_mut(q);
        rq.avg_vruntime = rq.avg_vruntime.wrapping_sub(key.wrapping_mul(w));
        rq.avg_load -= w;
    }

    /// The sums `avg_vruntime()` and `vruntime_eligible()` use: the timeline
    /// plus `curr` if it is queued.
    fn avg_sums(&self, q: CfsRqId) -> (i64, i64) {
        let rq = self.rq(q);
        let (mut avg, mut load) = (rq.avg_vruntime, rq.avg_load);
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
        let (mut avg, load) = self.avg_sums(q);
        if load != 0 {
            // Sign flips with the division: floor, as the kernel's `avg -= load - 1`.
            if avg < 0 {
                avg -= load - 1;
            }
            avg /= load;
        }
        self.rq(q).min_vruntime.wrapping_add(avg)
    }

    /// `vruntime_eligible` (6.12 :726; 6.6 `entity_eligible` :738): `V ≥ v`
    /// without dividing, ties eligible.
    pub fn vruntime_eligible(&self, q: CfsRqId, vruntime: i64) -> bool {
        self.eligibility(q)(vruntime)
    }

    /// The eligibility test of `q` as it stands, with its sums computed
    /// once (a pick tests several vruntimes against the same V).
    fn eligibility(&self, q: CfsRqId) -> impl Fn(i64) -> bool + use<> {
        let (avg, load) = self.avg_sums(q);
        let min = self.rq(q).min_vruntime;
        move |v: i64| avg >= v.wrapping_sub(min).wrapping_mul(load)
    }

    pub fn entity_eligible(&self, q: CfsRqId, se: EntityId) -> bool {
        self.vruntime_eligible(q, self.se(se).vruntime)
    }

    /// `update_entity_lag` (6.6 :710, 6.12 :702, 6.18 :693): `vlag = V - v`,
    /// clamped to `calc_delta_fair(max(2·slice, TICK_NSEC))`.
    fn update_entity_lag(&mut self, q: CfsRqId, se: EntityId) {
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
        let rq = self.rq_mut(q);
        let delta = vruntime.wrapping_sub(rq.min_vruntime);
        if delta > 0 {
            // avg_vruntime_update: keys shrink by delta.
            rq.avg_vruntime = rq.avg_vruntime.wrapping_sub(rq.avg_load.wrapping_mul(delta));
            rq.min_vruntime = vruntime;
        }
    }

    /// The smallest vruntime in the timeline (curr excluded).
    fn timeline_min_vruntime(&self, q: CfsRqId) -> Option<i64> {
        // 6.6: the leftmost of a vruntime-ordered tree; 6.12+: the root's
        // augmented min_vruntime. Both are the smallest vruntime queued.
        self.rq(q).tree.min_vruntime()
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
        rq.tree.min_slice().map_or(min, |m| min.min(m))
    }

    /// `update_deadline` (6.6 :1019, 6.12 :1007, 6.18 :1041): when the
    /// request is used up, a new one from the current vruntime. 6.6 asks
    /// for the resched here, later versions in `update_curr`.
    fn update_deadline(&mut self, q: CfsRqId, se: EntityId) -> bool {
        let e = self.se(se);
        if e.vruntime.wrapping_sub(e.deadline) < 0 {
            return false;
        }
        let keep_custom = self.model() >= KernelModel::Linux612 && e.custom_slice;
        let slice = if keep_custom { e.slice } else { self.eevdf.base_slice_ns };
        let vslice = calc_delta_fair(slice, &e.load) as i64;
        let e = self.se_mut(se);
        e.slice = slice;
        e.deadline = e.vruntime.wrapping_add(vslice);
        if self.model() == KernelModel::Linux66 && self.rq(q).nr_running > 1 {
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
        if self.model() == KernelModel::Linux66 || self.rq(q).nr_running == 1 {
            return;
        }
        let more = match self.model() {
            // did_preempt_short (6.12 :1177).
            KernelModel::Linux612 => {
                let e = self.se(curr);
                self.features_eevdf.preempt_short && e.vlag != e.deadline && !self.entity_eligible(q, curr)
            }
            _ => !Self::protect_slice(self.se(curr)),
        };
        if resched || more {
            self.resched_cpu_of(q);
            self.clear_buddies(q, curr);
        }
    }

    /// Asks the engine to reschedule the CPU of `q`.
    fn resched_cpu_of(&mut self, q: CfsRqId) {
        let cpu = self.rq(q).cpu;
        if !self.resched.contains(&cpu) {
            self.resched.push(cpu);
        }
    }

    // ------------------------------------------------------------- 6.18 vprot

    /// `set_protect_slice` (6.18 :892): at pick, protect curr up to its
    /// deadline, or for the shortest queued slice if that is shorter; with
    /// RUN_TO_PARITY off, for min(slice, the unscaled base slice).
    fn set_protect_slice(&mut self, q: CfsRqId, se: EntityId) {
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
    fn update_protect_slice(&mut self, q: CfsRqId, se: EntityId) {
        let slice = self.cfs_rq_min_slice(q);
        let e = self.se(se);
        let until = e.vruntime.wrapping_add(calc_delta_fair(slice, &e.load) as i64);
        let e = self.se_mut(se);
        e.vprot = e.vprot.min(until);
    }

    /// `protect_slice` (6.18).
    fn protect_slice(e: &super::entity::SchedEntity) -> bool {
        e.vprot.wrapping_sub(e.vruntime) > 0
    }

    /// `cancel_protect_slice` (6.18).
    fn cancel_protect_slice(&mut self, se: EntityId) {
        let e = self.se_mut(se);
        if Self::protect_slice(e) {
            e.vprot = e.vruntime;
        }
    }

    // ------------------------------------------------------------- the tree

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
        let model = self.model();
        let leftmost = rq.first().map(|(_, e)| e);
        let mut curr = rq.curr;
        // 6.12+: one entity (curr and delayed ones counted) needs no eligibility test.
        if model >= KernelModel::Linux612 && rq.nr_running == 1 {
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
        let found = if model == KernelModel::Linux66 {
            // Tree by vruntime, augmented with min_deadline (6.6 :875).
            rq.tree.earliest_deadline_eligible(eligible)
        } else {
            // Tree by deadline, augmented with min_vruntime: the first
            // eligible entity in deadline order (6.12 :907).
            rq.tree.first_eligible(eligible)
        }
        .map(|i| i.se);
        // Curr is a candidate too; it wins only with a strictly earlier deadline.
        let best = match (found, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if self.se(c).deadline.wrapping_sub(self.se(b).deadline) < 0 => Some(c),
            (b, _) => b,
        };
        // 6.6 pick_eevdf: nothing found (rounding) → the leftmost.
        if best.is_none() && model == KernelModel::Linux66 {
            return leftmost;
        }
        best
    }

    /// Why `pick_eevdf` may return an ineligible entity: it is alone (6.12+,
    /// delayed ones counted), or it is curr under RUN_TO_PARITY / `vprot`
    /// (which need it eligible, so never), or 6.6's fallback to the leftmost.
    fn pick_exempt(&self, q: CfsRqId, se: EntityId) -> bool {
        let rq = self.rq(q);
        match self.model() {
            KernelModel::Linux66 => rq.first().map(|(_, e)| e) == Some(se),
            _ => rq.nr_running == 1,
        }
    }

    // ------------------------------------------------------------- placement

    /// `place_entity` (6.6 :5063, 6.12 :5266, 6.18 :5128): at V, minus the
    /// saved lag inflated by `(W + w)/W` (PLACE_LAG), with a deadline one
    /// vslice on (half for a new task, PLACE_DEADLINE_INITIAL), or the
    /// relative deadline it kept (6.12+ `rel_deadline`).
    fn eevdf_place_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        let model = self.model();
        let vruntime = self.avg_vruntime(q);
        let e = self.se(se);
        let slice = if model >= KernelModel::Linux612 && e.custom_slice { e.slice } else { self.eevdf.base_slice_ns };
        let mut vslice = calc_delta_fair(slice, &e.load) as i64;
        let mut lag = 0i64;
        let nr = self.rq(q).nr_running;
        let has_lag = if model >= KernelModel::Linux618 { e.vlag != 0 } else { true };
        if self.features_eevdf.place_lag && nr > 0 && has_lag {
            let rq = self.rq(q);
            let mut load = rq.avg_load;
            if let Some(c) = rq.curr
                && self.se(c).on_rq
            {
                load += self.weight_of(c);
            }
            lag = e.vlag.wrapping_mul(load + self.weight_of(se));
            if load == 0 {
                load = 1; // WARN_ON_ONCE(!load)
            }
            lag /= load; // div_s64 truncates toward 0
        }
        let rel = match model {
            KernelModel::Linux66 => false,
            KernelModel::Linux612 => self.features_eevdf.place_rel_deadline && e.rel_deadline,
            _ => e.rel_deadline,
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

    // ------------------------------------------------------------- enqueue / dequeue

    /// `enqueue_entity` (6.x): curr is placed before `update_curr`, others
    /// after their group weight is brought up to date (`update_cfs_group`).
    pub(crate) fn eevdf_enqueue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        let curr = self.rq(q).curr == Some(se);
        if curr {
            self.eevdf_place_entity(q, se, flags);
        }
        self.eevdf_update_curr(q);
        self.enqueue_entity_load_avg(q, se);
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
            self.list_add_leaf_cfs_rq(q);
            self.check_enqueue_throttle(q);
            self.note_enqueue_throttled(q);
        }
    }

    /// `dequeue_entity` (6.x). Returns false when DELAY_DEQUEUE (6.12+)
    /// keeps a sleeping, ineligible entity queued instead.
    pub(crate) fn eevdf_dequeue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) -> bool {
        let sleep = flags & DEQUEUE_SLEEP != 0;
        self.eevdf_update_curr(q);
        if flags & (DEQUEUE_DELAYED | DEQUEUE_SPECIAL) == 0
            && sleep
            && self.features_eevdf.delay_dequeue
            && self.model() >= KernelModel::Linux612
            && !self.entity_eligible(q, se)
        {
            if self.model() >= KernelModel::Linux618 {
                self.clear_buddies(q, se);
            } else if self.rq(q).next == Some(se) {
                self.rq_mut(q).next = None;
            }
            self.update_load_avg(se, false);
            self.se_mut(se).sched_delayed = true;
            return false;
        }
        self.dequeue_entity_load_avg(q, se);
        self.clear_buddies(q, se);
        self.update_entity_lag(q, se);
        // Out of the tree before the deadline (its key from 6.12) changes.
        if self.rq(q).curr != Some(se) {
            self.eevdf_dequeue_timeline(q, se);
        }
        if self.model() >= KernelModel::Linux612 && self.features_eevdf.place_rel_deadline && !sleep {
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
        true
    }

    /// `finish_delayed_dequeue_entity` (6.12+): DELAY_ZERO keeps no positive lag.
    fn finish_delayed_dequeue_entity(&mut self, se: EntityId) {
        let zero = self.features_eevdf.delay_zero;
        let e = self.se_mut(se);
        e.sched_delayed = false;
        if zero && e.vlag > 0 {
            e.vlag = 0;
        }
    }

    /// `requeue_delayed_entity` (6.12 :6919, 6.18 :6885): a delayed entity
    /// woken (or with a task enqueued below it) stays where it is, unless
    /// its lag became positive: then it is placed afresh at V (DELAY_ZERO).
    fn requeue_delayed_entity(&mut self, se: EntityId) {
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
        self.update_load_avg(se, false);
        self.se_mut(se).sched_delayed = false;
    }

    /// `update_cfs_group` (6.x): a group entity's weight from
    /// `calc_group_shares` (6.x: `load = max(load.weight, load_avg)`, then
    /// `shares · load / (tg->load_avg − contrib + load)`, clamped to
    /// [MIN_SHARES, shares]).
    fn update_cfs_group(&mut self, se: EntityId) {
        let Some(gq) = self.se(se).my_q else { return };
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
    /// saves lag and relative deadline and places the entity again).
    pub(crate) fn eevdf_reweight_entity(&mut self, q: CfsRqId, se: EntityId, weight: u64) {
        let curr = self.rq(q).curr == Some(se);
        let on_rq = self.se(se).on_rq;
        let old = self.se(se).load.weight as i64;
        let new = weight as i64;
        let model = self.model();
        let mut avruntime = 0;
        if on_rq {
            self.eevdf_update_curr(q);
            if model >= KernelModel::Linux618 {
                self.update_entity_lag(q, se);
            } else {
                avruntime = self.avg_vruntime(q);
            }
            if !curr {
                self.eevdf_dequeue_timeline(q, se);
            }
            if model >= KernelModel::Linux618 {
                let e = self.se_mut(se);
                e.deadline = e.deadline.wrapping_sub(e.vruntime);
                e.rel_deadline = true;
            }
            self.account_entity_dequeue(q, se);
        }
        if on_rq && model < KernelModel::Linux618 {
            // reweight_eevdf: keep the lag and the relative deadline in real time.
            let e = self.se(se);
            if avruntime != e.vruntime {
                let mut vlag = avruntime.wrapping_sub(e.vruntime);
                if model == KernelModel::Linux612 {
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
            if model >= KernelModel::Linux618 && e.rel_deadline {
                e.deadline = e.deadline.wrapping_mul(old) / new;
            }
        }
        self.se_mut(se).load = LoadWeight::from_weight(weight);
        if on_rq {
            if model >= KernelModel::Linux618 {
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

    // ------------------------------------------------------------- pick / put

    /// `set_next_entity` (6.x): out of the timeline; 6.6/6.12 stash the
    /// deadline in vlag (the RUN_TO_PARITY marker), 6.18 sets `vprot`.
    fn eevdf_set_next_entity(&mut self, q: CfsRqId, se: EntityId) {
        self.clear_buddies(q, se);
        if self.se(se).on_rq {
            self.eevdf_dequeue_timeline(q, se);
            self.update_load_avg(se, true);
            if self.model() >= KernelModel::Linux618 {
                self.set_protect_slice(q, se);
            } else {
                let e = self.se_mut(se);
                e.vlag = e.deadline;
            }
        }
        let now = self.clock;
        let e = self.se_mut(se);
        e.exec_start = now;
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        self.rq_mut(q).curr = Some(se);
    }

    /// `put_prev_entity` (6.x): a still-queued curr goes back into the tree.
    fn eevdf_put_prev_entity(&mut self, q: CfsRqId, prev: EntityId) {
        if self.se(prev).on_rq {
            self.eevdf_update_curr(q);
        }
        // Throttle cfs_rqs exceeding runtime.
        self.check_cfs_rq_runtime(q);
        if self.se(prev).on_rq {
            self.eevdf_enqueue_timeline(q, prev);
            self.update_load_avg(prev, false);
        }
        self.rq_mut(q).curr = None;
    }

    /// `pick_next_entity` (6.x): the next buddy if eligible (NEXT_BUDDY; 6.18
    /// PICK_BUDDY), else `pick_eevdf`; a delayed entity picked is dequeued
    /// for good (`None`: the caller starts over).
    fn eevdf_pick_next_entity(&mut self, q: CfsRqId) -> Option<EntityId> {
        let buddy = if self.model() >= KernelModel::Linux618 {
            self.features_eevdf.pick_buddy
        } else {
            self.features_eevdf.next_buddy
        };
        if buddy
            && let Some(next) = self.rq(q).next
            && self.entity_eligible(q, next)
        {
            return Some(next);
        }
        let se = self.pick_eevdf(q, true).expect("pick_eevdf on a non-empty cfs_rq");
        // Checked in builds with debug assertions (tests): it costs a second V.
        if cfg!(debug_assertions) && !self.entity_eligible(q, se) && !self.pick_exempt(q, se) {
            self.pick_violations += 1;
        }
        if self.se(se).sched_delayed {
            self.eevdf_dequeue_entities(se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
            return None;
        }
        Some(se)
    }

    /// `pick_next_task_fair` + `pick_task_fair` (6.x): pick top-down with
    /// curr still in place (picking a delayed entity dequeues it and starts
    /// over), then put the old path and set the new one from where they
    /// meet. Re-picking the running task sets nothing, so neither the
    /// RUN_TO_PARITY marker nor `vprot` is re-armed.
    pub(crate) fn eevdf_pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<EntityId> {
        // Each restart dequeues one delayed entity for good or throttles a
        // queue: bounded by their number.
        let mut simple = false;
        let p = 'again: loop {
            if self.rq(root).nr_running == 0 {
                break None;
            }
            let mut q = root;
            loop {
                let curr = self.rq(q).curr;
                if let Some(c) = curr
                    && self.se(c).on_rq
                {
                    self.eevdf_update_curr(q);
                }
                // A level out of runtime is throttled: 6.12+ check every
                // level and start over (pick_task_fair); 6.6 checks those
                // with a curr and takes the `simple:` path (pick_next_task_fair).
                if self.model() >= KernelModel::Linux612 {
                    if self.check_cfs_rq_runtime(q) {
                        continue 'again;
                    }
                } else if curr.is_some() && self.check_cfs_rq_runtime(q) {
                    simple = true;
                    break 'again None;
                }
                let Some(se) = self.eevdf_pick_next_entity(q) else { continue 'again };
                match self.se(se).my_q {
                    Some(child) => q = child,
                    None => break 'again Some(se),
                }
            }
        };
        let Some(p) = p else {
            if let Some(prev) = prev {
                self.eevdf_put_prev_task(prev);
            }
            if simple && self.rq(root).nr_running > 0 {
                // simple: put_prev_task, then pick and set top-down (6.6 has
                // no delayed entities, so every pick is a real one).
                let mut q = root;
                loop {
                    let se = self.eevdf_pick_next_entity(q).expect("6.6 picks no delayed entity");
                    self.eevdf_set_next_entity(q, se);
                    match self.se(se).my_q {
                        Some(child) => q = child,
                        None => return Some(se),
                    }
                }
            }
            return None;
        };
        let Some(prev) = prev else {
            // simple: set_next_task_fair, bottom-up.
            let mut cur = Some(p);
            while let Some(s) = cur {
                self.eevdf_set_next_entity(self.cfs_rq_of(s), s);
                cur = self.parent(s);
            }
            return Some(p);
        };
        if p != prev {
            self.switch_path(p, prev, Cfs::eevdf_put_prev_entity, Cfs::eevdf_set_next_entity);
        }
        Some(p)
    }

    /// `put_prev_task_fair` (6.x).
    pub(crate) fn eevdf_put_prev_task(&mut self, prev: EntityId) {
        let mut cur = Some(prev);
        while let Some(s) = cur {
            self.eevdf_put_prev_entity(self.cfs_rq_of(s), s);
            cur = self.parent(s);
        }
    }

    // ------------------------------------------------------------- task-level hooks

    /// `enqueue_task_fair` (6.x): a delayed task is requeued where it is
    /// (ENQUEUE_DELAYED); otherwise enqueue up the hierarchy, requeueing a
    /// delayed ancestor met on the way, and push the shortest slice up to
    /// the group entities (6.12+).
    pub(crate) fn eevdf_enqueue_task(&mut self, se: EntityId, mut flags: u32) -> bool {
        if flags & ENQUEUE_DELAYED != 0 {
            // Still counted where it is; the engine adds nothing.
            self.requeue_delayed_entity(se);
            return true;
        }
        let custom_slices = self.model() >= KernelModel::Linux612;
        let mut slice = 0u64;
        let mut cur = Some(se);
        while let Some(s) = cur {
            if self.se(s).on_rq {
                if self.se(s).sched_delayed {
                    self.requeue_delayed_entity(s);
                }
                break;
            }
            let q = self.cfs_rq_of(s);
            if custom_slices && slice != 0 {
                let e = self.se_mut(s);
                e.slice = slice;
                e.custom_slice = true;
            }
            self.eevdf_enqueue_entity(q, s, flags);
            slice = self.cfs_rq_min_slice(q);
            self.rq_mut(q).h_nr_running += 1;
            // End evaluation on encountering a throttled cfs_rq.
            if self.cfs_rq_throttled(q) {
                return false;
            }
            flags = ENQUEUE_WAKEUP;
            cur = self.parent(s);
        }
        self.update_ancestors(cur, slice, 1)
    }

    /// The second loop of `enqueue_task_fair` / `dequeue_entities` (6.x):
    /// the levels above the last one enqueued or dequeued get their load
    /// average, group weight and (6.12+) the shortest slice below them, and
    /// count the task (`delta` = +1, −1, or 0 for a group entity).
    /// Stops after a throttled level; returns whether it reached the root.
    fn update_ancestors(&mut self, mut cur: Option<EntityId>, mut slice: u64, delta: i32) -> bool {
        let custom_slices = self.model() >= KernelModel::Linux612;
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.update_load_avg(s, true);
            self.update_cfs_group(s);
            if custom_slices {
                self.set_group_slice(q, s, slice);
            }
            slice = self.cfs_rq_min_slice(q);
            let rq = self.rq_mut(q);
            rq.h_nr_running = rq.h_nr_running.wrapping_add_signed(delta);
            if self.cfs_rq_throttled(q) {
                return false;
            }
            cur = self.parent(s);
        }
        true
    }

    /// `se->slice = slice` for a queued group entity (6.12+
    /// `enqueue_task_fair`/`dequeue_entities`). 6.18 then refreshes the
    /// tree's augmented `min_slice` (`min_vruntime_cb_propagate`); 6.12 does
    /// not, so the tree keeps the slice the entity was queued with.
    fn set_group_slice(&mut self, q: CfsRqId, se: EntityId, slice: u64) {
        self.se_mut(se).slice = slice;
        if self.model() >= KernelModel::Linux618 && self.se(se).on_rq && self.rq(q).curr != Some(se) {
            let e = self.se(se);
            let (key, seq) = (if self.model() >= KernelModel::Linux612 { e.deadline } else { e.vruntime }, e.tree_seq);
            let rq = self.rq_mut(q);
            if let Some(mut item) = rq.tree.remove(key, seq) {
                item.slice = slice;
                rq.tree.insert(item);
            }
        }
    }

    /// `dequeue_task_fair` → `dequeue_entities` (6.x). Returns false when
    /// the task itself was delayed (it stays queued and counted).
    pub(crate) fn eevdf_dequeue_task(&mut self, se: EntityId, flags: u32) -> bool {
        self.eevdf_dequeue_entities(se, flags)
    }

    /// `dequeue_entities` (6.12 :7052 and 6.18; 6.6 `dequeue_task_fair`).
    /// Dequeued delayed tasks are listed in `delayed_done` for the engine.
    fn eevdf_dequeue_entities(&mut self, se: EntityId, mut flags: u32) -> bool {
        let task_sleep = flags & DEQUEUE_SLEEP != 0;
        let task_delayed = flags & DEQUEUE_DELAYED != 0;
        let is_task = self.se(se).is_task();
        let h = u32::from(is_task);
        let mut slice = match self.se(se).my_q {
            Some(gq) => self.cfs_rq_min_slice(gq),
            None => 0,
        };
        let mut cur = Some(se);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            if !self.eevdf_dequeue_entity(q, s, flags) {
                if s == se && is_task {
                    return false;
                }
                // A delayed group entity: 6.18 takes the shortest slice of its
                // queue for the levels above (fair.c:7079); 6.12 keeps 0.
                if self.model() >= KernelModel::Linux618 {
                    slice = self.cfs_rq_min_slice(q);
                }
                break;
            }
            self.rq_mut(q).h_nr_running -= h;
            // End evaluation on encountering a throttled cfs_rq.
            if self.cfs_rq_throttled(q) {
                return true;
            }
            if self.rq(q).load.weight != 0 {
                slice = self.cfs_rq_min_slice(q);
                let parent = self.parent(s);
                // Bias the pick towards this group while the sleeper's slice lasts.
                if task_sleep
                    && let Some(p) = parent
                    && !self.throttled_hierarchy(q)
                {
                    self.set_next_buddy(p);
                }
                cur = parent;
                break;
            }
            flags |= DEQUEUE_SLEEP;
            flags &= !DEQUEUE_DELAYED;
            cur = self.parent(s);
        }
        self.update_ancestors(cur, slice, -(h as i32));
        if is_task && task_delayed {
            self.delayed_done.push(se);
        }
        true
    }

    /// `task_tick_fair` / `entity_tick` (6.x): `update_curr` at every level
    /// (the slice end is found there), the load average and the group weight.
    /// The HRTICK expiry (`queued`) reschedules.
    pub(crate) fn eevdf_task_tick(&mut self, curr: EntityId, queued: bool) -> bool {
        let mut cur = Some(curr);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.eevdf_update_curr(q);
            self.update_load_avg(s, true);
            self.update_cfs_group(s);
            cur = self.parent(s);
        }
        queued
    }

    /// A kernel entry of the running task that reads its CPU time
    /// (`task_sched_runtime` → `update_curr_fair`, 6.x core.c): `update_curr`
    /// of the task's own queue.
    pub fn kernel_entry(&mut self, curr: EntityId) {
        let q = self.cfs_rq_of(curr);
        if self.model().is_eevdf() {
            self.eevdf_update_curr(q);
        } else {
            self.update_curr(q);
        }
    }

    /// `se_is_idle` (6.x): a SCHED_IDLE task (group `cpu.idle` is not modelled).
    fn se_is_idle(&self, se: EntityId) -> bool {
        let e = self.se(se);
        e.is_task() && e.policy == Policy::Idle
    }

    /// `check_preempt_wakeup` (6.6 :8143) / `check_preempt_wakeup_fair`
    /// (6.12 :8764, 6.18 :8741): preempt when the woken entity is now the
    /// one `pick_eevdf` would choose at the level where the two meet.
    pub(crate) fn check_preempt_wakeup_fair(
        &mut self,
        curr: EntityId,
        woken: EntityId,
        wake_flags: u32,
        need_resched: bool,
    ) -> WakeupVerdict {
        if curr == woken {
            return WakeupVerdict::NotChecked;
        }
        // An enqueue that led to a throttle: saves work and a false next buddy.
        if self.throttled_hierarchy(self.cfs_rq_of(woken)) {
            return WakeupVerdict::Throttled;
        }
        let model = self.model();
        if self.features_eevdf.next_buddy
            && wake_flags & WF_FORK == 0
            && !(model >= KernelModel::Linux618 && self.se(woken).sched_delayed)
        {
            self.set_next_buddy(woken);
        }
        if need_resched {
            return WakeupVerdict::ReschedPending;
        }
        let curr_policy = self.se(curr).policy;
        let woken_policy = self.se(woken).policy;
        if model == KernelModel::Linux66 {
            if curr_policy == Policy::Idle && woken_policy != Policy::Idle {
                return WakeupVerdict::CurrIdle;
            }
            if woken_policy != Policy::Normal || !self.features_eevdf.wakeup_preemption {
                return WakeupVerdict::NoWakeupPreemption;
            }
            let (se, pse) = self.find_matching_se(curr, woken);
            self.wakeup_group_level = pse != woken;
            let (cse_idle, pse_idle) = (self.se_is_idle(se), self.se_is_idle(pse));
            if cse_idle && !pse_idle {
                return WakeupVerdict::CurrIdle;
            }
            if cse_idle != pse_idle {
                return WakeupVerdict::WokenIdle;
            }
            let q = self.cfs_rq_of(se);
            self.eevdf_update_curr(q);
            if self.pick_eevdf(q, true) == Some(pse) {
                return WakeupVerdict::EarliestDeadline;
            }
            return self.no_preempt_reason(q, se, pse, true);
        }
        if !self.features_eevdf.wakeup_preemption {
            return WakeupVerdict::NoWakeupPreemption;
        }
        let (se, pse) = self.find_matching_se(curr, woken);
        self.wakeup_group_level = pse != woken;
        let (cse_idle, pse_idle) = (self.se_is_idle(se), self.se_is_idle(pse));
        if cse_idle && !pse_idle {
            if model >= KernelModel::Linux618 {
                self.cancel_protect_slice(se);
            }
            return WakeupVerdict::CurrIdle;
        }
        if cse_idle != pse_idle {
            return WakeupVerdict::WokenIdle;
        }
        if woken_policy != Policy::Normal {
            return WakeupVerdict::NoWakeupPreemption; // BATCH and IDLE tasks do not preempt others
        }
        let q = self.cfs_rq_of(se);
        self.eevdf_update_curr(q);
        if model == KernelModel::Linux612 {
            // do_preempt_short (6.12 :1177) cancels curr's RUN_TO_PARITY marker.
            let (s, p) = (self.se(se), self.se(pse));
            let short = self.features_eevdf.preempt_short
                && p.slice < s.slice
                && self.entity_eligible(q, pse)
                && (p.deadline.wrapping_sub(s.deadline) < 0 || !self.entity_eligible(q, se));
            if short && self.se(se).vlag == self.se(se).deadline {
                let e = self.se_mut(se);
                e.vlag = e.deadline + 1;
            }
            if self.pick_eevdf(q, true) == Some(pse) {
                return if short { WakeupVerdict::ShortSlice } else { WakeupVerdict::EarliestDeadline };
            }
            return self.no_preempt_reason(q, se, pse, true);
        }
        let short = self.features_eevdf.preempt_short && self.se(pse).slice < self.se(se).slice;
        if self.pick_eevdf(q, !short) == Some(pse) {
            if short {
                self.cancel_protect_slice(se);
                return WakeupVerdict::ShortSlice;
            }
            return WakeupVerdict::EarliestDeadline;
        }
        let verdict = self.no_preempt_reason(q, se, pse, !short);
        if self.features_eevdf.run_to_parity && short {
            self.update_protect_slice(q, se);
        }
        verdict
    }

    /// Why `pick_eevdf(q, protect)` did not choose the woken entity `pse`
    /// over `se` (curr's entity at that level), in the order it tests: the
    /// woken one is not eligible; curr (eligible) is protected by the
    /// version's RUN_TO_PARITY rule; curr's deadline is not later; else
    /// another queued entity's deadline is earlier.
    fn no_preempt_reason(&self, q: CfsRqId, se: EntityId, pse: EntityId, protect: bool) -> WakeupVerdict {
        if !self.entity_eligible(q, pse) {
            return WakeupVerdict::NotEligible;
        }
        let c = self.se(se);
        if c.on_rq && self.entity_eligible(q, se) {
            if let Some(v) = self.protection(c, protect) {
                return v;
            }
            if c.deadline.wrapping_sub(self.se(pse).deadline) <= 0 {
                return WakeupVerdict::LaterDeadline;
            }
        }
        WakeupVerdict::OtherEarlier
    }

    /// The RUN_TO_PARITY protection of an eligible curr `e`, per version:
    /// 6.6/6.12 while the deadline stashed in `vlag` at pick holds
    /// (`pick_eevdf`), 6.18 while `protect_slice` (`__pick_eevdf` with `protect`).
    fn protection(&self, e: &super::entity::SchedEntity, protect: bool) -> Option<WakeupVerdict> {
        match self.model() {
            KernelModel::Linux66 | KernelModel::Linux612 => {
                (self.features_eevdf.run_to_parity && e.vlag == e.deadline).then_some(WakeupVerdict::RunToParity)
            }
            _ => (protect && Self::protect_slice(e)).then_some(WakeupVerdict::SliceProtected),
        }
    }

    /// `entity_lag` (6.12 :702; the arithmetic of `update_entity_lag` in 6.6
    /// :710 and 6.18 :693): `V - vruntime` of `se` in its queue `q`, clamped
    /// to `calc_delta_fair(max(2·slice, TICK_NSEC))`, the entity's weight
    /// scaling the clamp. Eligible exactly when it is ≥ 0 (V is rounded down).
    pub fn entity_lag(&self, q: CfsRqId, se: EntityId) -> i64 {
        let lag = self.avg_vruntime(q).wrapping_sub(self.se(se).vruntime);
        let e = self.se(se);
        let limit = calc_delta_fair((2 * e.slice).max(self.tick_nsec), &e.load) as i64;
        lag.clamp(-limit, limit)
    }

    /// `yield_task_fair` (6.6/6.12: the deadline moves one vslice; 6.18: an
    /// eligible task gives up the rest of its request, vruntime = deadline).
    pub(crate) fn eevdf_yield_task(&mut self, curr: EntityId, nr_running: u32) {
        if nr_running == 1 {
            return;
        }
        let q = self.cfs_rq_of(curr);
        self.clear_buddies(q, curr);
        self.eevdf_update_curr(q);
        let e = self.se(curr);
        let vslice = calc_delta_fair(e.slice, &e.load) as i64;
        if self.model() >= KernelModel::Linux618 {
            if self.entity_eligible(q, curr) {
                let e = self.se_mut(curr);
                e.vruntime = e.deadline;
                e.deadline = e.deadline.wrapping_add(vslice);
                self.eevdf_update_min_vruntime(q);
            }
        } else {
            let e = self.se_mut(curr);
            e.deadline = e.deadline.wrapping_add(vslice);
        }
    }

    /// A task's own slice (6.12+ `__setscheduler_params`/`__setparam_fair`).
    pub fn set_custom_slice(&mut self, se: EntityId, slice_ns: u64) {
        let e = self.se_mut(se);
        e.slice = slice_ns;
        e.custom_slice = true;
    }

    /// `__sched_fork` (6.6: `se.slice = sysctl_sched_base_slice`; 6.12+
    /// inherits the parent's, which here is the base slice unless the
    /// scenario gives the task its own).
    pub fn eevdf_sched_fork(&mut self, se: EntityId) {
        let base = self.eevdf.base_slice_ns;
        let e = self.se_mut(se);
        e.vruntime = 0;
        e.vlag = 0;
        if !e.custom_slice {
            e.slice = base;
        }
    }

    /// The HRTICK delay of 6.x `hrtick_start_fair`: slice minus what ran
    /// since the pick, when the CPU has other fair tasks.
    pub(crate) fn eevdf_hrtick_delay(&self, curr: EntityId, root: CfsRqId) -> Option<i64> {
        if self.rq(root).h_nr_running <= 1 {
            return None;
        }
        let e = self.se(curr);
        let ran = e.sum_exec_runtime - e.prev_sum_exec_runtime;
        Some(e.slice as i64 - ran as i64)
    }

    /// The EEVDF invariants, for `check_invariants`: on every queue the sums
    /// match the tree; `Σ w·(V − v)` over the queued entities (curr
    /// included) lies in `(−W, 0]` (V is the floor of the weighted mean);
    /// some queued entity is eligible; every task off the queues has its
    /// lag within the clamp (`update_entity_lag`); no pick took an ineligible entity without a rule allowing it.
    pub fn eevdf_invariants(&self) -> Result<(), String> {
        if self.pick_violations > 0 {
            return Err(format!("{} picks of an ineligible entity without a rule for it", self.pick_violations));
        }
        for i in 0..self.cfs_rqs.len() {
            let q = CfsRqId(i as u32);
            self.eevdf_check(q)?;
            let rq = self.rq(q);
            let v_avg = self.avg_vruntime(q) as i128;
            let mut members: Vec<EntityId> = rq.queued().map(|(_, e)| e).collect();
            if let Some(c) = rq.curr.filter(|&c| self.se(c).on_rq) {
                members.push(c);
            }
            if members.is_empty() {
                continue;
            }
            let w_total: i128 = members.iter().map(|&e| self.weight_of(e) as i128).sum();
            let lag_sum: i128 =
                members.iter().map(|&e| self.weight_of(e) as i128 * (v_avg - self.se(e).vruntime as i128)).sum();
            if lag_sum > 0 || lag_sum <= -w_total {
                return Err(format!("cfs_rq {i}: Σ w·(V − v) = {lag_sum}, outside (−{w_total}, 0]"));
            }
            if !members.iter().any(|&e| self.entity_eligible(q, e)) {
                return Err(format!("cfs_rq {i}: no queued entity is eligible"));
            }
        }
        // Task entities only: a group entity's slice and weight move while it
        // is off the queue (the shortest slice below it; reweights), so its
        // saved lag is not bound by today's clamp.
        for (i, e) in self.entities.iter().enumerate() {
            if e.on_rq || e.slice == 0 || !e.is_task() {
                continue;
            }
            let limit = calc_delta_fair((2 * e.slice).max(self.tick_nsec), &e.load) as i64;
            if e.vlag.abs() > limit {
                return Err(format!("entity {i}: vlag {} outside ±{limit}", e.vlag));
            }
        }
        Ok(())
    }

    /// Invariants of one queue's EEVDF sums, for `check_invariants`:
    /// `avg_load` and `avg_vruntime` equal their definitions over the timeline.
    pub fn eevdf_check(&self, q: CfsRqId) -> Result<(), String> {
        let rq: &CfsRq = self.rq(q);
        let (mut load, mut avg) = (0i64, 0i64);
        for (_, e) in rq.queued() {
            let w = self.weight_of(e);
            load += w;
            avg = avg.wrapping_add(self.entity_key(q, e).wrapping_mul(w));
        }
        if load != rq.avg_load || avg != rq.avg_vruntime {
            return Err(format!(
                "cfs_rq {}: avg_load {} / avg_vruntime {} but the timeline sums to {load} / {avg}",
                q.0, rq.avg_load, rq.avg_vruntime
            ));
        }
        if rq.tg == ROOT_GROUP && rq.owner.is_some() {
            return Err(format!("cfs_rq {}: a root queue with an owner", q.0));
        }
        Ok(())
    }
}
