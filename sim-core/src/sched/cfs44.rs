//! The CFS fair class of Linux 4.4 (`kernel/sched/fair.c`): vruntime,
//! `sched_slice`, the sleeper credit of `place_entity`, the wakeup
//! granularity and the buddies, on the shared entities, run queues, groups
//! and load tracking (`fair_core.rs`). Its own state is each queue's
//! vruntime-ordered timeline. Functions keep their kernel names so a reader
//! can put this file next to 4.4 fair.c.

use super::SchedClass;
use super::cfs_rq::Timeline;
use super::fair_core::{DEQUEUE_SLEEP, ENQUEUE_WAKEUP, ENQUEUE_WAKING, Fair, FairPolicy, WF_FORK};
use super::group::{GroupLoad, calc_cfs_shares};
use super::model::{TreeKey, WakeupVerdict};
use super::weights::{LoadWeight, calc_delta, calc_delta_fair};
use crate::ids::{CfsRqId, EntityId};
use crate::sched::policy::Policy;

/// The 4.4 class's own state: each run queue's timeline (`tasks_timeline`),
/// indexed by `CfsRqId`.
#[derive(Clone, Debug, Default)]
pub struct Cfs44 {
    timelines: Vec<Timeline>,
}

impl Cfs44 {
    /// How many queues have a timeline.
    pub(crate) fn queues(&self) -> usize {
        self.timelines.len()
    }

    /// Entities in `q`'s timeline.
    pub(crate) fn timeline_len(&self, q: CfsRqId) -> usize {
        self.timelines[q.index()].len()
    }
}

impl FairPolicy for Cfs44 {
    fn add_queue(&mut self) {
        self.timelines.push(Timeline::default());
    }

    fn enqueue_entity(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId, flags: u32) {
        f.enqueue_entity(q, se, flags);
    }

    fn throttle_dequeue(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId) {
        f.dequeue_entity(q, se, DEQUEUE_SLEEP);
    }

    fn unthrottle_finish_delayed(_: &mut Fair<'_, Self>, _: CfsRqId, _: EntityId) -> bool {
        false
    }

    const UPDATE_WALKED_LEVELS: bool = false;
}

impl Fair<'_, Cfs44> {
    /// The timeline of `q`.
    fn timeline(&self, q: CfsRqId) -> &Timeline {
        &self.policy.timelines[q.index()]
    }

    /// `entity_before` (4.4 fair.c).
    fn entity_before(&self, a: EntityId, b: EntityId) -> bool {
        self.se(a).vruntime < self.se(b).vruntime
    }

    /// The timeline's order: vruntime (4.4, and 6.6's EEVDF tree), or the
    /// virtual deadline (6.12+ `entity_before`).
    fn key(&self, se: EntityId) -> (i64, u64, EntityId) {
        let e = self.se(se);
        let k = match self.rules.tree_key {
            TreeKey::Deadline => e.deadline,
            TreeKey::Vruntime => e.vruntime,
        };
        (k, e.tree_seq, se)
    }

    /// `__enqueue_entity`: insert into the timeline (ties go right).
    pub(crate) fn enqueue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        self.tree_seq += 1;
        let seq = self.tree_seq;
        self.se_mut(se).tree_seq = seq;
        let key = self.key(se);
        self.policy.timelines[q.index()].insert(key);
    }

    /// `__dequeue_entity`.
    pub(crate) fn dequeue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        let key = self.key(se);
        self.policy.timelines[q.index()].remove(key);
    }

    /// `update_min_vruntime` (4.4 fair.c). 4.4 uses `curr` even while it is being
    /// dequeued for sleep; 4.9 checks `curr->on_rq` first. The result is clamped so
    /// it never decreases.
    pub fn update_min_vruntime(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        let mut vruntime = rq.min_vruntime;
        if let Some(curr) = rq.curr {
            vruntime = self.se(curr).vruntime;
        }
        if let Some((left, _)) = self.timeline(q).first() {
            vruntime = if rq.curr.is_none() { left } else { vruntime.min(left) };
        }
        let rq = self.rq_mut(q);
        rq.min_vruntime = rq.min_vruntime.max(vruntime);
    }

    /// `update_curr` (4.4 fair.c): charge the running entity for the time since
    /// `exec_start`, in real and in virtual time.
    pub fn update_curr(&mut self, q: CfsRqId) {
        let Some(curr) = self.rq(q).curr else { return };
        let now = self.clock;
        let se = self.se_mut(curr);
        let delta_exec = now as i64 - se.exec_start as i64;
        if delta_exec <= 0 {
            return;
        }
        let delta_exec = delta_exec as u64;
        se.exec_start = now;
        se.sum_exec_runtime += delta_exec;
        se.vruntime += calc_delta_fair(delta_exec, &se.load) as i64;
        self.update_min_vruntime(q);
        self.account_cfs_rq_runtime(q, delta_exec);
    }

    /// `__sched_period` (4.4 fair.c): the targeted latency, stretched to
    /// `nr × min_granularity` past `sched_nr_latency` entities.
    pub fn sched_period(&self, nr_running: u64) -> u64 {
        let t = &self.tunables;
        if nr_running > t.sched_nr_latency { nr_running * t.sched_min_granularity_ns } else { t.sched_latency_ns }
    }

    /// `sched_slice` (4.4 fair.c): the entity's share of the period, scaled by
    /// its weight at every level of the hierarchy (counting it as queued if it
    /// is not).
    pub fn sched_slice(&self, q: CfsRqId, se: EntityId) -> u64 {
        let on_rq = self.se(se).on_rq;
        let mut slice = self.sched_period(u64::from(self.rq(q).nr_running) + u64::from(!on_rq));
        let mut cur = Some(se);
        while let Some(s) = cur {
            let e = self.se(s);
            let mut load = self.rq(e.cfs_rq).load;
            if !e.on_rq {
                load.add(e.load.weight);
            }
            slice = calc_delta(slice, e.load.weight, &load);
            cur = e.parent;
        }
        slice
    }

    /// `sched_vslice` (4.4 fair.c).
    pub fn sched_vslice(&self, q: CfsRqId, se: EntityId) -> u64 {
        calc_delta_fair(self.sched_slice(q, se), &self.se(se).load)
    }

    /// `place_entity` (4.4 fair.c): a forked entity starts one vslice after
    /// `min_vruntime` (START_DEBIT); a waking one gets up to a (half, with
    /// GENTLE_FAIR_SLEEPERS) latency of credit. Never moves vruntime backwards.
    pub fn place_entity(&mut self, q: CfsRqId, se: EntityId, initial: bool) {
        let mut vruntime = self.rq(q).min_vruntime;
        if initial && self.features.start_debit {
            vruntime += self.sched_vslice(q, se) as i64;
        }
        if !initial {
            let mut thresh = self.tunables.sched_latency_ns;
            if self.features.gentle_fair_sleepers {
                thresh >>= 1;
            }
            vruntime -= thresh as i64;
        }
        let e = self.se_mut(se);
        e.vruntime = e.vruntime.max(vruntime);
    }

    /// `reweight_entity` (4.4 fair.c): change a (group) entity's weight,
    /// keeping its queue's load consistent.
    fn reweight_entity(&mut self, q: CfsRqId, se: EntityId, weight: u64) {
        let on_rq = self.se(se).on_rq;
        if on_rq {
            if self.rq(q).curr == Some(se) {
                self.update_curr(q);
            }
            self.account_entity_dequeue(q, se);
        }
        self.se_mut(se).load = LoadWeight::from_weight(weight);
        if on_rq {
            self.account_entity_enqueue(q, se);
        }
    }

    /// `update_cfs_shares` (4.4 fair.c): recompute the weight of the group
    /// entity that owns `q` from the group's load (`calc_cfs_shares`).
    fn update_cfs_shares(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        let Some(se) = rq.owner else { return };
        if self.throttled_hierarchy(q) {
            return;
        }
        let tg = &self.groups[rq.tg.index()];
        let tg_weight = match self.group_load {
            // calc_tg_weight: this CPU's real-time load instead of its last contribution.
            GroupLoad::Pelt => tg.load_avg - rq.tg_load_avg_contrib as i64 + rq.load.weight as i64,
            GroupLoad::Instantaneous => tg.load_weight as i64,
        };
        let shares = calc_cfs_shares(tg.shares, rq.load.weight, tg_weight);
        let parent_q = self.cfs_rq_of(se);
        self.reweight_entity(parent_q, se, shares);
    }

    /// `enqueue_entity` (4.4 fair.c).
    pub fn enqueue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        // Update the normalized vruntime before updating min_vruntime through
        // update_curr(): only a wakeup that was not made relative keeps it absolute.
        if flags & ENQUEUE_WAKEUP == 0 || flags & ENQUEUE_WAKING != 0 {
            let min = self.rq(q).min_vruntime;
            self.se_mut(se).vruntime += min;
        }
        self.update_curr(q);
        self.enqueue_entity_load_avg(q, se);
        self.account_entity_enqueue(q, se);
        self.update_cfs_shares(q);
        if flags & ENQUEUE_WAKEUP != 0 {
            self.place_entity(q, se, false);
        }
        if self.rq(q).curr != Some(se) {
            self.enqueue_timeline(q, se);
        }
        self.se_mut(se).on_rq = true;
        if self.rq(q).nr_running == 1 {
            self.list_add_leaf_cfs_rq(q);
            self.check_enqueue_throttle(q);
        }
    }

    /// `dequeue_entity` (4.4 fair.c).
    pub fn dequeue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        self.update_curr(q);
        self.dequeue_entity_load_avg(q, se);
        self.clear_buddies(q, se);
        if self.rq(q).curr != Some(se) {
            self.dequeue_timeline(q, se);
        }
        self.se_mut(se).on_rq = false;
        self.account_entity_dequeue(q, se);
        // Normalize after update_curr (which may move min_vruntime through curr)
        // so a migrating entity keeps its position relative to its queue.
        if flags & DEQUEUE_SLEEP == 0 {
            let min = self.rq(q).min_vruntime;
            self.se_mut(se).vruntime -= min;
        }
        // Return excess runtime on last dequeue.
        self.return_cfs_rq_runtime(q);
        self.update_min_vruntime(q);
        self.update_cfs_shares(q);
    }

    /// `check_preempt_tick` (4.4 fair.c): at a tick, preempt `curr` if it ran
    /// past its ideal slice, or ran at least `min_granularity` and is more than a
    /// slice of vruntime ahead of the leftmost entity. Returns true to resched.
    pub fn check_preempt_tick(&mut self, q: CfsRqId, curr: EntityId) -> bool {
        let ideal_runtime = self.sched_slice(q, curr);
        let c = self.se(curr);
        let delta_exec = c.sum_exec_runtime - c.prev_sum_exec_runtime;
        if delta_exec > ideal_runtime {
            // The current task ran long enough; don't let buddy favours re-elect it.
            self.clear_buddies(q, curr);
            return true;
        }
        // A task that just missed wakeup preemption should not wait a full slice.
        if delta_exec < self.tunables.sched_min_granularity_ns {
            return false;
        }
        let Some((left, _)) = self.timeline(q).first() else { return false };
        let delta = self.se(curr).vruntime - left;
        if delta < 0 {
            return false;
        }
        delta as u64 > ideal_runtime
    }

    /// `set_next_entity` (4.4 fair.c): make `se` the running entity of `q`.
    pub fn set_next_entity(&mut self, q: CfsRqId, se: EntityId) {
        if self.se(se).on_rq {
            self.dequeue_timeline(q, se);
            self.update_load_avg(se, true);
        }
        let now = self.clock;
        let e = self.se_mut(se);
        e.exec_start = now; // update_stats_curr_start
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        self.rq_mut(q).curr = Some(se);
    }

    /// `put_prev_entity` (4.4 fair.c): a still-queued running entity goes back
    /// into the timeline.
    pub fn put_prev_entity(&mut self, q: CfsRqId, prev: EntityId) {
        if self.se(prev).on_rq {
            self.update_curr(q);
        }
        // Throttle cfs_rqs exceeding runtime.
        self.check_cfs_rq_runtime(q);
        if self.se(prev).on_rq {
            self.enqueue_timeline(q, prev);
            self.update_load_avg(prev, false);
        }
        self.rq_mut(q).curr = None;
    }

    /// `wakeup_gran` (4.4 fair.c): the wakeup granularity in the *woken*
    /// entity's virtual time.
    pub fn wakeup_gran(&self, se: EntityId) -> u64 {
        calc_delta_fair(self.tunables.sched_wakeup_granularity_ns, &self.se(se).load)
    }

    /// `wakeup_preempt_entity` (4.4 fair.c): 1 if `se` should preempt `curr`
    /// (its vruntime is more than a wakeup granularity behind), 0 if it is behind
    /// by less, -1 if it is not behind at all.
    pub fn wakeup_preempt_entity(&self, curr: EntityId, se: EntityId) -> i32 {
        let vdiff = self.se(curr).vruntime - self.se(se).vruntime;
        if vdiff <= 0 {
            return -1;
        }
        if vdiff > self.wakeup_gran(se) as i64 { 1 } else { 0 }
    }

    /// `pick_next_entity` (4.4 fair.c): the leftmost entity, unless a skip, last
    /// or next buddy may run instead without being too unfair.
    pub fn pick_next_entity(&mut self, q: CfsRqId, curr: Option<EntityId>) -> EntityId {
        let rq = self.rq(q);
        let tl = self.timeline(q);
        let mut left = tl.first().map(|(_, e)| e);
        if let Some(c) = curr
            && left.is_none_or(|l| self.entity_before(c, l))
        {
            left = Some(c);
        }
        let left = left.expect("pick_next_entity on an empty cfs_rq");
        let mut se = left;

        // Avoid running the skip buddy if something else can run without being too unfair.
        if rq.skip == Some(se) {
            let second = if Some(se) == curr {
                tl.first().map(|(_, e)| e)
            } else {
                let mut second = tl.after(self.key(se)).map(|(_, e)| e);
                if let Some(c) = curr
                    && second.is_none_or(|s| self.entity_before(c, s))
                {
                    second = Some(c);
                }
                second
            };
            if let Some(second) = second
                && self.wakeup_preempt_entity(second, left) < 1
            {
                se = second;
            }
        }
        // Prefer the last buddy: try to give the CPU back to a preempted task.
        if let Some(last) = rq.last
            && self.wakeup_preempt_entity(last, left) < 1
        {
            se = last;
        }
        // Someone really wants this to run; if it's not unfair, run it.
        if let Some(next) = rq.next
            && self.wakeup_preempt_entity(next, left) < 1
        {
            se = next;
        }
        self.clear_buddies(q, se);
        se
    }

    /// `entity_tick` (4.4 fair.c) for one level. `queued` is set when the HRTICK
    /// timer fired; `hrtick_active` when it is armed (then only it preempts, unless
    /// DOUBLE_TICK).
    fn entity_tick(&mut self, q: CfsRqId, curr: EntityId, queued: bool, hrtick_active: bool) -> bool {
        self.update_curr(q);
        self.update_load_avg(curr, true);
        self.update_cfs_shares(q);
        if queued {
            return true;
        }
        if !self.features.double_tick && hrtick_active {
            return false;
        }
        if self.rq(q).nr_running > 1 {
            return self.check_preempt_tick(q, curr);
        }
        false
    }

    /// `pick_next_task_fair`'s `simple:` path (4.4): pick and set top-down,
    /// nothing running. The root queue is not empty.
    fn pick_simple(&mut self, root: CfsRqId) -> EntityId {
        let mut q = root;
        // Bounded by the hierarchy depth.
        loop {
            let se = self.pick_next_entity(q, None);
            self.set_next_entity(q, se);
            match self.se(se).my_q {
                Some(child) => q = child,
                None => return se,
            }
        }
    }

    /// The delay `hrtick_start_fair` (4.4 fair.c) would arm the HRTICK timer
    /// with: slice minus what already ran, if the queue has company. `Some(d < 0)`
    /// means the slice is already used up (resched now).
    pub fn hrtick_delay(&self, curr: EntityId) -> Option<i64> {
        let q = self.cfs_rq_of(curr);
        if self.rq(q).nr_running <= 1 {
            return None;
        }
        let slice = self.sched_slice(q, curr);
        let e = self.se(curr);
        let ran = e.sum_exec_runtime - e.prev_sum_exec_runtime;
        Some(slice as i64 - ran as i64)
    }

    /// Whether `hrtick_update` (4.4 fair.c) re-arms the timer after an
    /// enqueue/dequeue: only while the running task's queue is below nr_latency.
    pub fn hrtick_update_wanted(&self, curr: EntityId) -> bool {
        u64::from(self.rq(self.cfs_rq_of(curr)).nr_running) < self.tunables.sched_nr_latency
    }
}

impl SchedClass for Fair<'_, Cfs44> {
    /// `enqueue_task_fair` (4.4 fair.c): enqueue up the hierarchy until an
    /// ancestor is already queued; parents are enqueued as wakeups.
    fn enqueue_task(&mut self, se: EntityId, mut flags: u32) -> bool {
        let mut cur = Some(se);
        while let Some(s) = cur {
            if self.se(s).on_rq {
                break;
            }
            let q = self.cfs_rq_of(s);
            self.enqueue_entity(q, s, flags);
            // End evaluation on encountering a throttled cfs_rq; the second
            // loop posts its h_nr_running increment.
            if self.cfs_rq_throttled(q) {
                break;
            }
            self.rq_mut(q).h_nr_running += 1;
            flags = ENQUEUE_WAKEUP;
            cur = self.parent(s);
        }
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).h_nr_running += 1;
            if self.cfs_rq_throttled(q) {
                return false;
            }
            self.update_load_avg(s, true);
            self.update_cfs_shares(q);
            cur = self.parent(s);
        }
        true
    }

    /// `dequeue_task_fair` (4.4 fair.c): dequeue up the hierarchy while the
    /// parent's queue becomes empty; a sleeping task makes its group the `next`
    /// buddy of the level above, to finish the group's slice.
    fn dequeue_task(&mut self, se: EntityId, mut flags: u32) -> bool {
        let task_sleep = flags & DEQUEUE_SLEEP != 0;
        let mut cur = Some(se);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.dequeue_entity(q, s, flags);
            // End evaluation on encountering a throttled cfs_rq.
            if self.cfs_rq_throttled(q) {
                break;
            }
            self.rq_mut(q).h_nr_running -= 1;
            if self.rq(q).load.weight != 0 {
                // Don't dequeue the parent: it has other entities besides us.
                let parent = self.parent(s);
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
            cur = self.parent(s);
        }
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).h_nr_running -= 1;
            if self.cfs_rq_throttled(q) {
                break;
            }
            self.update_load_avg(s, true);
            self.update_cfs_shares(q);
            cur = self.parent(s);
        }
        true
    }

    /// `pick_next_task_fair` (4.4 fair.c, `CONFIG_FAIR_GROUP_SCHED` path when the
    /// previous task was fair, the `simple:` path otherwise). When the same task
    /// is picked again nothing is put or set, so its slice is not restarted.
    fn pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<EntityId> {
        if self.rq(root).nr_running == 0 {
            // pick_next_task_idle puts prev.
            if let Some(p) = prev {
                self.put_prev_task(p);
            }
            return None;
        }
        let Some(prev) = prev else {
            // simple: put_prev_task (nothing fair to put) and pick top-down.
            return Some(self.pick_simple(root));
        };
        let mut q = root;
        let p = loop {
            let mut curr = self.rq(q).curr;
            if let Some(c) = curr {
                if self.se(c).on_rq {
                    self.update_curr(q);
                } else {
                    curr = None;
                }
                // This call to check_cfs_rq_runtime() will do the throttle and
                // dequeue its entity in the parent(s); then `simple:`.
                if self.check_cfs_rq_runtime(q) {
                    // simple: put_prev_task, then pick from the root; with
                    // nothing left, goto idle (pick_next_task_idle puts prev
                    // all the same; a put that throttles more ends here too).
                    self.put_prev_task(prev);
                    if self.rq(root).nr_running == 0 {
                        return None;
                    }
                    return Some(self.pick_simple(root));
                }
            }
            let se = self.pick_next_entity(q, curr);
            match self.se(se).my_q {
                Some(child) => q = child,
                None => break se,
            }
        };
        if p != prev {
            self.switch_path(p, prev, Self::put_prev_entity, Self::set_next_entity);
        }
        Some(p)
    }

    /// `put_prev_task_fair` (4.4 fair.c): put every level of the path.
    fn put_prev_task(&mut self, prev: EntityId) {
        let mut cur = Some(prev);
        while let Some(s) = cur {
            self.put_prev_entity(self.cfs_rq_of(s), s);
            cur = self.parent(s);
        }
    }

    /// `task_tick_fair` (4.4 fair.c): `entity_tick` at every level of the running
    /// task's path. Returns true to resched.
    fn task_tick(&mut self, curr: EntityId, queued: bool, hrtick_active: bool) -> bool {
        let mut resched = false;
        let mut cur = Some(curr);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            resched |= self.entity_tick(q, s, queued, hrtick_active);
            cur = self.parent(s);
        }
        resched
    }

    /// The model's wake-up preemption check (4.4 `check_preempt_wakeup`
    /// below, 6.x `check_preempt_wakeup_fair`). `need_resched` is whether the
    /// CPU already has a resched pending. Returns true to resched; the rule
    /// that decided is left in `wakeup_verdict`.
    fn wakeup_preempt(&mut self, curr: EntityId, woken: EntityId, wake_flags: u32, need_resched: bool) -> bool {
        self.wakeup_group_level = false;
        let verdict = self.check_preempt_wakeup(curr, woken, wake_flags, need_resched);
        self.wakeup_verdict = verdict;
        verdict.preempts()
    }

    /// `yield_task_fair` (4.4 fair.c): charge the caller and mark it as the skip
    /// buddy. `nr_running` is the run queue's task count.
    fn yield_task(&mut self, curr: EntityId, nr_running: u32) {
        if nr_running == 1 {
            return;
        }
        let q = self.cfs_rq_of(curr);
        self.clear_buddies(q, curr);
        if self.se(curr).policy != Policy::Batch {
            self.update_curr(q);
        }
        self.set_skip_buddy(curr);
    }

    /// `task_fork_fair` (4.4 fair.c) for a task created on `q`: the parent is
    /// taken to sit at `min_vruntime`, so the child lands one vslice later with
    /// START_DEBIT. Leaves the vruntime relative, as the kernel does before
    /// `wake_up_new_task` enqueues it (which adds `min_vruntime` back).
    fn task_fork(&mut self, q: CfsRqId, se: EntityId) {
        self.update_curr(q);
        let min = self.rq(q).min_vruntime;
        self.se_mut(se).vruntime = min;
        self.place_entity(q, se, true);
        self.se_mut(se).vruntime -= min;
    }

    /// `task_waking_fair` (4.4 fair.c): make a waking task's vruntime relative to
    /// its old queue, so `enqueue_entity(ENQUEUE_WAKING)` can rebase it on the new one.
    fn task_waking(&mut self, se: EntityId) {
        let min = self.rq(self.cfs_rq_of(se)).min_vruntime;
        self.se_mut(se).vruntime -= min;
    }

    /// 4.4 removes the average whether or not the balancer moves the task.
    fn migrate_task_rq(&mut self, se: EntityId, _on_rq_migrating: bool) {
        self.core.migrate_task_rq44(se);
    }

    /// `update_curr` of the running task's own queue.
    fn update_curr(&mut self, curr: EntityId) {
        let q = self.cfs_rq_of(curr);
        self.update_curr(q);
    }
}

impl Fair<'_, Cfs44> {
    /// `check_preempt_wakeup` (4.4 fair.c), with the rule that decided.
    fn check_preempt_wakeup(
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
        let curr_q = self.cfs_rq_of(curr);
        let scale = u64::from(self.rq(curr_q).nr_running) >= self.tunables.sched_nr_latency;
        let mut next_buddy_marked = false;
        if self.features.next_buddy && scale && wake_flags & WF_FORK == 0 {
            self.set_next_buddy(woken);
            next_buddy_marked = true;
        }
        // We can come here with TIF_NEED_RESCHED already set from a new task's wakeup.
        if need_resched {
            return WakeupVerdict::ReschedPending;
        }
        let curr_policy = self.se(curr).policy;
        let woken_policy = self.se(woken).policy;
        // `se` as the kernel's code leaves it: matched to the woken entity's level.
        let (se, verdict) = if curr_policy == Policy::Idle && woken_policy != Policy::Idle {
            // Idle tasks are by definition preempted by non-idle tasks.
            (curr, WakeupVerdict::CurrIdle)
        } else if woken_policy != Policy::Normal || !self.features.wakeup_preemption {
            // Batch and idle tasks do not preempt; their preemption is tick-driven.
            return WakeupVerdict::NoWakeupPreemption;
        } else {
            let (se, pse) = self.find_matching_se(curr, woken);
            self.wakeup_group_level = pse != woken;
            self.update_curr(self.cfs_rq_of(se));
            match self.wakeup_preempt_entity(se, pse) {
                1 => {}
                0 => return WakeupVerdict::WithinGranularity,
                _ => return WakeupVerdict::NotBehind,
            }
            // Bias pick_next to pick the entity that triggers this preemption.
            if !next_buddy_marked {
                self.set_next_buddy(pse);
            }
            (se, WakeupVerdict::BeyondGranularity)
        };
        // preempt: only set the backward buddy when the current entity is still queued.
        if self.features.last_buddy && scale && self.se(se).on_rq && self.se(se).is_task() {
            self.set_last_buddy(se);
        }
        verdict
    }
}
