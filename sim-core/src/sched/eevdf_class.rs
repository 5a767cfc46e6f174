//! The EEVDF class's pick, task-level hooks and wake-up check (6.6, 6.12,
//! 6.18 fair.c): `pick_next_task_fair`, `enqueue_task_fair` /
//! `dequeue_entities`, `task_tick_fair`, `check_preempt_wakeup_fair`,
//! `yield_task_fair`, and the EEVDF invariants; `SchedClass` for the EEVDF
//! implementation. The entity-level rules are in `eevdf.rs`.

use super::SchedClass;
use super::cfs_rq::{CfsRq, TaskCounts};
use super::fair_pelt6x::UPDATE_TG;
use super::eevdf::{Eevdf, EevdfRead};
use super::fair_core::{DEQUEUE_DELAYED, DEQUEUE_SLEEP, ENQUEUE_DELAYED, ENQUEUE_WAKEUP, Fair, WF_FORK};
use super::group::ROOT_GROUP;
use super::model::{PickThrottle, PreemptShort, SliceProtection, TreeKey, WakeupVerdict, YieldRule};
use super::weights::calc_delta_fair;
use crate::ids::{CfsRqId, EntityId};
use crate::sched::policy::Policy;

impl Fair<'_, Eevdf> {
    /// `set_next_entity` (6.x): out of the timeline; 6.6/6.12 stash the
    /// deadline in vlag (the RUN_TO_PARITY marker), 6.18 sets `vprot`.
    pub(crate) fn eevdf_set_next_entity(&mut self, q: CfsRqId, se: EntityId) {
        self.clear_buddies(q, se);
        if self.se(se).on_rq {
            self.eevdf_dequeue_timeline(q, se);
            self.update_load_avg6x(se, UPDATE_TG);
            if self.rules.slice_protection == SliceProtection::Vprot {
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
    pub(crate) fn eevdf_put_prev_entity(&mut self, q: CfsRqId, prev: EntityId) {
        if self.se(prev).on_rq {
            self.eevdf_update_curr(q);
        }
        // Throttle cfs_rqs exceeding runtime.
        self.check_cfs_rq_runtime(q);
        if self.se(prev).on_rq {
            self.eevdf_enqueue_timeline(q, prev);
            // In the !on_rq case, the update occurred at dequeue.
            self.update_load_avg6x(prev, 0);
        }
        self.rq_mut(q).curr = None;
    }

    /// `pick_next_entity` (6.x): the next buddy if eligible (NEXT_BUDDY; 6.18
    /// PICK_BUDDY), else `pick_eevdf`; a delayed entity picked is dequeued
    /// for good (`None`: the caller starts over).
    pub(crate) fn eevdf_pick_next_entity(&mut self, q: CfsRqId) -> Option<EntityId> {
        let buddy = if self.rules.pick_buddy { self.features_eevdf.pick_buddy } else { self.features_eevdf.next_buddy };
        // "->next will never be delayed" (6.12 pick_next_entity's
        // SCHED_WARN_ON): but 6.12.0's load balancer may move a delayed task
        // and attach_task's wakeup_preempt then sets it as next buddy (6.18
        // skips delayed entities in check_preempt_wakeup_fair). The kernel
        // would run a sleeping task; the model passes over it to pick_eevdf,
        // which dequeues a delayed pick.
        if buddy
            && let Some(next) = self.rq(q).next
            && !self.se(next).sched_delayed
            && self.entity_eligible(q, next)
        {
            return Some(next);
        }
        let se = self.pick_eevdf(q, true).expect("pick_eevdf on a non-empty cfs_rq");
        // Checked in builds with debug assertions (tests): it costs a second V.
        if cfg!(debug_assertions) && !self.entity_eligible(q, se) && !self.pick_exempt(q, se) {
            self.policy.pick_violations += 1;
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
                if self.rules.pick_throttle == PickThrottle::EveryLevel {
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
            self.switch_path(p, prev, Self::eevdf_put_prev_entity, Self::eevdf_set_next_entity);
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

    /// `enqueue_task_fair` (6.x): a delayed task is requeued where it is
    /// (ENQUEUE_DELAYED); otherwise enqueue up the hierarchy, requeueing a
    /// delayed ancestor met on the way, and push the shortest slice up to
    /// the group entities (6.12+).
    pub(crate) fn eevdf_enqueue_task(&mut self, se: EntityId, mut flags: u32) -> bool {
        // The task's estimated utilization joins the root's before the
        // updates below (which would tell cpufreq).
        if self.util_est_enqueue_wanted(se, flags) {
            self.util_est_enqueue(se);
        }
        if flags & ENQUEUE_DELAYED != 0 {
            // Still counted where it is; the engine adds nothing.
            self.requeue_delayed_entity(se);
            return true;
        }
        let custom_slices = self.rules.custom_slices;
        // 6.18: a delayed task enqueued without ENQUEUE_WAKEUP is not runnable.
        let task_new = flags & ENQUEUE_WAKEUP == 0;
        let e = self.se(se);
        let counts = TaskCounts {
            queued: 1,
            runnable: u32::from(!(task_new && e.sched_delayed)),
            idle: u32::from(e.policy == Policy::Idle),
        };
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
            self.rq_mut(q).add_tasks(counts);
            // End evaluation on encountering a throttled cfs_rq.
            if self.cfs_rq_throttled(q) {
                return false;
            }
            flags = ENQUEUE_WAKEUP;
            cur = self.parent(s);
        }
        self.update_ancestors(cur, slice, counts, true)
    }

    /// The second loop of `enqueue_task_fair` / `dequeue_entities` (6.x):
    /// the levels above the last one enqueued or dequeued get their load
    /// average, runnable weight, group weight and (6.12+) the shortest slice
    /// below them, and count the task in or out (`counts`, none for a group
    /// entity). Stops after a throttled level; returns whether it reached the root.
    pub(crate) fn update_ancestors(&mut self, mut cur: Option<EntityId>, mut slice: u64, counts: TaskCounts, enqueue: bool) -> bool {
        let custom_slices = self.rules.custom_slices;
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.update_load_avg6x(s, UPDATE_TG);
            self.se_update_runnable(s);
            self.update_cfs_group(s);
            if custom_slices {
                self.set_group_slice(q, s, slice);
            }
            slice = self.cfs_rq_min_slice(q);
            let rq = self.rq_mut(q);
            if enqueue {
                rq.add_tasks(counts);
            } else {
                rq.sub_tasks(counts);
            }
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
    pub(crate) fn set_group_slice(&mut self, q: CfsRqId, se: EntityId, slice: u64) {
        self.se_mut(se).slice = slice;
        if self.rules.group_slice_refresh && self.se(se).on_rq && self.rq(q).curr != Some(se) {
            let e = self.se(se);
            let key = match self.rules.tree_key {
                TreeKey::Deadline => e.deadline,
                TreeKey::Vruntime => e.vruntime,
            };
            let seq = e.tree_seq;
            let tree = &mut self.policy.queues[q.index()].tree;
            if let Some(mut item) = tree.remove(key, seq) {
                item.slice = slice;
                tree.insert(item);
            }
        }
    }

    /// `dequeue_task_fair` → `dequeue_entities` (6.x). Returns false when
    /// the task itself was delayed (it stays queued and counted).
    /// util_est: the task leaves the root's sum and its estimate learns
    /// from this activation (6.12+ before the dequeue, 6.6 after). The
    /// final dequeue of a dying delayed task is `task_dead_fair`'s
    /// `dequeue_entities` (DEQUEUE_DELAYED), with no util_est.
    pub(crate) fn eevdf_dequeue_task(&mut self, se: EntityId, flags: u32) -> bool {
        if flags & DEQUEUE_DELAYED != 0 {
            return self.eevdf_dequeue_entities(se, flags);
        }
        self.util_est_dequeue_task(se, flags);
        let done = self.eevdf_dequeue_entities(se, flags);
        self.util_est_dequeued_task(se, flags);
        done
    }

    /// `dequeue_entities` (6.12 :7052 and 6.18; 6.6 `dequeue_task_fair`).
    /// Dequeued delayed tasks are listed in `delayed_done` for the engine.
    pub(crate) fn eevdf_dequeue_entities(&mut self, se: EntityId, mut flags: u32) -> bool {
        let task_sleep = flags & DEQUEUE_SLEEP != 0;
        let task_delayed = flags & DEQUEUE_DELAYED != 0;
        let e = self.se(se);
        let is_task = e.is_task();
        // 6.18: a delayed task moved queued is already out of h_nr_runnable.
        let counts = if is_task {
            TaskCounts {
                queued: 1,
                runnable: u32::from(task_sleep || task_delayed || !e.sched_delayed),
                idle: u32::from(e.policy == Policy::Idle),
            }
        } else {
            TaskCounts::default()
        };
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
                if self.rules.group_slice_refresh {
                    slice = self.cfs_rq_min_slice(q);
                }
                break;
            }
            self.rq_mut(q).sub_tasks(counts);
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
        self.update_ancestors(cur, slice, counts, false);
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
            self.update_load_avg6x(s, UPDATE_TG);
            self.update_cfs_group(s);
            cur = self.parent(s);
        }
        queued
    }

    /// `se_is_idle` (6.x): a SCHED_IDLE task (group `cpu.idle` is not modelled).
    pub(crate) fn se_is_idle(&self, se: EntityId) -> bool {
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
        let rules = self.rules;
        if self.features_eevdf.next_buddy
            && wake_flags & WF_FORK == 0
            && !(rules.next_buddy_skips_delayed && self.se(woken).sched_delayed)
        {
            self.set_next_buddy(woken);
        }
        if need_resched {
            return WakeupVerdict::ReschedPending;
        }
        let curr_policy = self.se(curr).policy;
        let woken_policy = self.se(woken).policy;
        if rules.preempt_short == PreemptShort::None {
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
            if rules.slice_protection == SliceProtection::Vprot {
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
        if rules.preempt_short == PreemptShort::CancelParity {
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
    pub(crate) fn no_preempt_reason(&self, q: CfsRqId, se: EntityId, pse: EntityId, protect: bool) -> WakeupVerdict {
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
    pub(crate) fn protection(&self, e: &super::entity::SchedEntity, protect: bool) -> Option<WakeupVerdict> {
        match self.rules.slice_protection {
            SliceProtection::ParityMarker | SliceProtection::None => {
                (self.features_eevdf.run_to_parity && e.vlag == e.deadline).then_some(WakeupVerdict::RunToParity)
            }
            SliceProtection::Vprot => (protect && Self::protect_slice(e)).then_some(WakeupVerdict::SliceProtected),
        }
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
        if self.rules.yield_rule == YieldRule::Forfeit {
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

    /// `hrtick_update` (6.x) re-arms the timer whenever curr is fair.
    pub fn hrtick_update_wanted(&self, _curr: EntityId) -> bool {
        true
    }
}

impl SchedClass for Fair<'_, Eevdf> {
    fn enqueue_task(&mut self, se: EntityId, flags: u32) -> bool {
        self.eevdf_enqueue_task(se, flags)
    }

    fn dequeue_task(&mut self, se: EntityId, flags: u32) -> bool {
        self.eevdf_dequeue_task(se, flags)
    }

    fn pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<EntityId> {
        self.eevdf_pick_next_task(root, prev)
    }

    fn put_prev_task(&mut self, prev: EntityId) {
        self.eevdf_put_prev_task(prev);
    }

    fn task_tick(&mut self, curr: EntityId, queued: bool, _hrtick_active: bool) -> bool {
        self.eevdf_task_tick(curr, queued)
    }

    /// `check_preempt_wakeup_fair` (6.x), the rule that decided left in `wakeup_verdict`.
    fn wakeup_preempt(&mut self, curr: EntityId, woken: EntityId, wake_flags: u32, need_resched: bool) -> bool {
        self.wakeup_group_level = false;
        let verdict = self.check_preempt_wakeup_fair(curr, woken, wake_flags, need_resched);
        self.wakeup_verdict = verdict;
        verdict.preempts()
    }

    fn yield_task(&mut self, curr: EntityId, nr_running: u32) {
        self.eevdf_yield_task(curr, nr_running);
    }

    /// `task_fork_fair` (6.x): 6.6 runs update_curr, then a placement that
    /// the enqueue overwrites; 6.12+ places only at enqueue.
    fn task_fork(&mut self, q: CfsRqId, se: EntityId) {
        if self.rules.fork_updates_curr {
            self.eevdf_update_curr(q);
        }
        self.eevdf_sched_fork(se);
    }

    /// 6.x keeps vruntime absolute; placement uses the saved lag.
    fn task_waking(&mut self, _se: EntityId) {}

    fn migrate_task_rq(&mut self, se: EntityId, on_rq_migrating: bool) {
        self.core.migrate_task_rq6x(se, on_rq_migrating);
    }

    /// `update_curr_fair` (6.x core.c `task_sched_runtime`): `update_curr`
    /// of the task's own queue.
    fn update_curr(&mut self, curr: EntityId) {
        let q = self.cfs_rq_of(curr);
        self.eevdf_update_curr(q);
    }
}

/// The invariant checks read the state only (`check_invariants` holds the
/// simulation by shared reference).
impl EevdfRead<'_> {
    /// The EEVDF invariants, for `check_invariants`: on every queue the sums
    /// match the tree; `Σ w·(V − v)` over the queued entities (curr
    /// included) lies in `(−W, 0]` (V is the floor of the weighted mean);
    /// some queued entity is eligible; every task off the queues has its
    /// lag within the clamp (`update_entity_lag`); no pick took an ineligible entity without a rule allowing it.
    pub fn eevdf_invariants(&self) -> Result<(), String> {
        if self.eevdf.pick_violations > 0 {
            let n = self.eevdf.pick_violations;
            return Err(format!("{n} picks of an ineligible entity without a rule for it"));
        }
        for i in 0..self.cfs_rqs.len() {
            let q = CfsRqId(i as u32);
            self.eevdf_check(q)?;
            let rq = self.rq(q);
            let v_avg = self.avg_vruntime(q) as i128;
            let mut members: Vec<EntityId> = self.eevdf.queues[q.index()].tree.iter().map(|i| i.se).collect();
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
        let eq = &self.eevdf.queues[q.index()];
        for e in eq.tree.iter().map(|i| i.se) {
            let w = self.weight_of(e);
            load += w;
            avg = avg.wrapping_add(self.entity_key(q, e).wrapping_mul(w));
        }
        if load != eq.avg_load || avg != eq.avg_vruntime {
            return Err(format!(
                "cfs_rq {}: avg_load {} / avg_vruntime {} but the timeline sums to {load} / {avg}",
                q.0, eq.avg_load, eq.avg_vruntime
            ));
        }
        if rq.tg == ROOT_GROUP && rq.owner.is_some() {
            return Err(format!("cfs_rq {}: a root queue with an owner", q.0));
        }
        Ok(())
    }


    /// `entity_eligible` (6.x): `V ≥ v` without dividing, ties eligible, as
    /// `Fair::eligibility` computes it.
    pub fn entity_eligible(&self, q: CfsRqId, se: EntityId) -> bool {
        let (avg, load) = self.avg_sums(q);
        let min = self.rq(q).min_vruntime;
        avg >= self.se(se).vruntime.wrapping_sub(min).wrapping_mul(load)
    }
}
