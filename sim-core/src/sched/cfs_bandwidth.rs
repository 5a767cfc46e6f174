//! CFS bandwidth control's functions (fair.c, under their kernel names):
//! the runtime pools, per-CPU accounting and expiry, the period and slack
//! timers (on `FairCore`), and throttling and unthrottling, which dequeue
//! and requeue group entities through the model's own entity operations
//! (`FairPolicy`, generic and monomorphised). The state and the version
//! notes are in `bandwidth.rs`.

use super::bandwidth::{
    BandwidthRules, BandwidthSpec, CFS_BANDWIDTH_SLACK_PERIOD_NS, CfsBandwidth, CpuStat, MIN_BANDWIDTH_EXPIRATION_NS,
    MIN_CFS_RQ_RUNTIME_NS, ThrottleEvent, TimerRequest, forward_now,
};
use super::fair_core::{ENQUEUE_WAKEUP, Fair, FairCore, FairPolicy};
use super::model::RuntimeExpiry;
use crate::ids::{CfsRqId, CpuId, GroupId};
use std::collections::VecDeque;

impl FairCore {
    fn cfs_b(&self, g: GroupId) -> &CfsBandwidth {
        self.bw.groups[g.index()].as_ref().expect("a limited group")
    }

    fn cfs_b_mut(&mut self, g: GroupId) -> &mut CfsBandwidth {
        self.bw.groups[g.index()].as_mut().expect("a limited group")
    }

    /// `cfs_rq_throttled`.
    pub fn cfs_rq_throttled(&self, q: CfsRqId) -> bool {
        self.bw.used && self.rq(q).rt.throttled
    }

    /// `throttled_hierarchy`: this queue or an ancestor on its CPU is throttled.
    pub fn throttled_hierarchy(&self, q: CfsRqId) -> bool {
        self.bw.used && self.rq(q).rt.throttle_count > 0
    }

    /// `tg_set_cfs_bandwidth` (4.4 core.c) for a group at the start of the
    /// run: refill the pool, start the timer (its first expiry at `phase_ns`
    /// if non-zero, else one period on: 6.6+ starts it at a random point of
    /// the period, earlier versions on the period grid from 0), and enable
    /// runtime accounting on the group's queues with nothing in hand.
    pub fn set_cfs_bandwidth(&mut self, g: GroupId, spec: BandwidthSpec, phase_ns: u64) {
        if self.bw.groups.len() < self.groups.len() {
            self.bw.groups.resize(self.groups.len(), None);
        }
        let Some(quota) = spec.quota_ns else { return };
        self.bw.used = true;
        let now = self.clock;
        let mut b = CfsBandwidth {
            spec,
            runtime: 0,
            runtime_expires: 0,
            expires_seq: 0,
            runtime_snap: 0,
            idle: false,
            period_active: false,
            timer_at: phase_ns,
            timer_generation: 0,
            slack_at: None,
            slack_generation: 0,
            throttled: VecDeque::new(),
            stat: CpuStat::default(),
            consumed_ns: 0,
            timer_events: (0, 0),
        };
        b.runtime = quota;
        b.runtime_snap = quota;
        b.runtime_expires = now + spec.period_ns;
        self.bw.groups[g.index()] = Some(b);
        self.start_cfs_bandwidth(g);
        let queues: Vec<CfsRqId> = self.groups[g.index()].cfs_rq.iter().flatten().copied().collect();
        for q in queues {
            let rt = &mut self.rq_mut(q).rt;
            rt.enabled = true;
            rt.remaining = 0;
        }
    }

    /// `__refill_cfs_bandwidth_runtime`: 4.4–5.13 set the pool to the quota;
    /// 5.14+ add the quota to what is left, up to quota + burst (6.6+ counts
    /// a period that used more than the quota as a burst).
    fn refill_cfs_bandwidth_runtime(&mut self, g: GroupId) {
        let (rules, now) = (self.bw.rules, self.clock);
        let b = self.cfs_b_mut(g);
        let Some(quota) = b.spec.quota_ns else { return };
        if rules.has_burst() {
            b.runtime += quota;
            if rules.burst_stats() && b.runtime_snap > b.runtime {
                b.stat.burst_time_ns += b.runtime_snap - b.runtime;
                b.stat.nr_bursts += 1;
            }
            b.runtime = b.runtime.min(quota + b.spec.burst_ns);
            b.runtime_snap = b.runtime;
        } else {
            b.runtime = quota;
            b.runtime_expires = now + b.spec.period_ns;
            b.expires_seq += 1;
        }
    }

    /// `start_cfs_bandwidth`: arm the period timer if it is not running.
    fn start_cfs_bandwidth(&mut self, g: GroupId) {
        let now = self.clock;
        let b = self.cfs_b_mut(g);
        if b.period_active {
            return;
        }
        b.period_active = true;
        b.timer_at = forward_now(b.timer_at, b.spec.period_ns, now);
        b.timer_generation = b.timer_generation.wrapping_add(1);
        b.timer_events.0 += 1;
        let req = TimerRequest { group: g, slack: false, at: b.timer_at, generation: b.timer_generation };
        self.bw.timers.push(req);
    }

    /// `assign_cfs_rq_runtime` (4.4) / `__assign_cfs_rq_runtime(cfs_b,
    /// cfs_rq, target)` (5.4+): top the queue up to `target` above zero from
    /// the pool (repaying any debt first). Returns whether it now has runtime.
    fn assign_cfs_rq_runtime(&mut self, q: CfsRqId, target: u64) -> bool {
        let g = self.rq(q).tg;
        let min_amount = (target as i64 - self.rq(q).rt.remaining) as u64;
        let mut amount = 0;
        if self.cfs_b(g).spec.quota_ns.is_none() {
            amount = min_amount;
        } else {
            self.start_cfs_bandwidth(g);
            let b = self.cfs_b_mut(g);
            if b.runtime > 0 {
                amount = b.runtime.min(min_amount);
                b.runtime -= amount;
                b.idle = false;
            }
        }
        let rules = self.bw.rules;
        let b = self.cfs_b_mut(g);
        b.consumed_ns += amount;
        let (expires, seq) = (b.runtime_expires, b.expires_seq);
        let rt = &mut self.rq_mut(q).rt;
        rt.remaining += amount as i64;
        match rules.expiry() {
            // We may have advanced our local expiration (4.4 assign_cfs_rq_runtime).
            RuntimeExpiry::ByDeadline => {
                if (expires as i64).wrapping_sub(rt.expires as i64) > 0 {
                    rt.expires = expires;
                }
            }
            RuntimeExpiry::BySeq => {
                if rt.expires_seq != seq {
                    rt.expires_seq = seq;
                    rt.expires = expires;
                }
            }
            RuntimeExpiry::Never => {}
        }
        rt.remaining > 0
    }

    /// `expire_cfs_rq_runtime` (4.4 to 5.3).
    fn expire_cfs_rq_runtime(&mut self, q: CfsRqId) {
        let (now, tick, rules) = (self.clock, self.tick_nsec, self.bw.rules);
        let g = self.rq(q).tg;
        let (b_expires, b_seq) = (self.cfs_b(g).runtime_expires, self.cfs_b(g).expires_seq);
        let rt = &mut self.rq_mut(q).rt;
        // If the deadline is ahead of our clock, nothing to do.
        if (now as i64).wrapping_sub(rt.expires as i64) < 0 || rt.remaining < 0 {
            return;
        }
        // 4.4 compares the deadlines (a refilled pool has moved on, so the
        // local one is extended); 4.18 the period sequence numbers.
        let same_period = match rules.expiry() {
            RuntimeExpiry::ByDeadline => rt.expires != b_expires,
            _ => rt.expires_seq == b_seq,
        };
        if same_period {
            // Extend local deadline, drift is bounded above by 2 ticks.
            rt.expires += tick;
        } else {
            // Global deadline is ahead, expiration has passed.
            let lost = rt.remaining as u64;
            rt.remaining = 0;
            self.cfs_b_mut(g).stat.expired_ns += lost;
        }
    }

    /// `account_cfs_rq_runtime` → `__account_cfs_rq_runtime` (4.4 and 5.4+),
    /// from `update_curr` of each level: charge, and when the queue has run
    /// out and cannot get more, reschedule its CPU so the next
    /// `put_prev_entity` throttles it.
    pub(crate) fn account_cfs_rq_runtime(&mut self, q: CfsRqId, delta_exec: u64) {
        if !self.bw.used || !self.rq(q).rt.enabled {
            return;
        }
        self.rq_mut(q).rt.remaining -= delta_exec as i64;
        if self.bw.rules.expires() {
            self.expire_cfs_rq_runtime(q);
        }
        if self.rq(q).rt.remaining > 0 {
            return;
        }
        // 5.4+: a throttled queue waits for distribution.
        if self.bw.rules.v54() && self.rq(q).rt.throttled {
            return;
        }
        let slice = self.bw.slice_ns;
        if !self.assign_cfs_rq_runtime(q, slice) && self.rq(q).curr.is_some() {
            let cpu = self.rq(q).cpu;
            if !self.resched.contains(&cpu) {
                self.resched.push(cpu);
            }
        }
    }

    /// 6.6+ `enqueue_entity`: a queue that was throttled while empty starts
    /// its throttled time when something is queued on it.
    pub(crate) fn note_enqueue_throttled(&mut self, q: CfsRqId) {
        if self.bw.rules.throttled_clock_when_queued()
            && self.cfs_rq_throttled(q)
            && self.rq(q).rt.throttled_clock.is_none()
        {
            let now = self.clock;
            self.rq_mut(q).rt.throttled_clock = Some(now);
        }
    }

    /// `return_cfs_rq_runtime` → `__return_cfs_rq_runtime`: on the last
    /// dequeue, everything above 1 ms goes back to the pool (4.4/4.18: only
    /// if the runtime is of the current period; otherwise it is dropped).
    pub(crate) fn return_cfs_rq_runtime(&mut self, q: CfsRqId) {
        if !self.bw.used || !self.rq(q).rt.enabled || self.rq(q).nr_running > 0 {
            return;
        }
        let slack = self.rq(q).rt.remaining - MIN_CFS_RQ_RUNTIME_NS;
        if slack <= 0 {
            return;
        }
        let g = self.rq(q).tg;
        let rt = self.rq(q).rt;
        let (rules, slice) = (self.bw.rules, self.bw.slice_ns);
        let b = self.cfs_b(g);
        let valid = match rules.expiry() {
            RuntimeExpiry::ByDeadline => rt.expires == b.runtime_expires,
            RuntimeExpiry::BySeq => rt.expires_seq == b.expires_seq,
            RuntimeExpiry::Never => true,
        };
        if b.spec.quota_ns.is_some() && valid {
            let b = self.cfs_b_mut(g);
            b.runtime += slack as u64;
            b.consumed_ns -= (slack as u64).min(b.consumed_ns);
            // We are under rq->lock, defer unthrottling using a timer.
            if b.runtime > slice && !b.throttled.is_empty() {
                self.start_cfs_slack_bandwidth(g);
            }
        } else if b.spec.quota_ns.is_some() {
            self.cfs_b_mut(g).stat.expired_ns += slack as u64;
        }
        // Even if it's not valid for return we don't want to try again.
        self.rq_mut(q).rt.remaining -= slack;
    }

    /// `runtime_refresh_within`: the period timer fires within `min_expire`.
    fn runtime_refresh_within(&self, g: GroupId, min_expire: u64) -> bool {
        let b = self.cfs_b(g);
        // hrtimer_expires_remaining of a stale expiry is negative: read as u64, huge.
        (b.timer_at.wrapping_sub(self.clock)) < min_expire
    }

    /// `start_cfs_slack_bandwidth`: arm the slack timer 5 ms on, unless a
    /// refill comes within 7 ms (5.4+: unless it is armed already).
    fn start_cfs_slack_bandwidth(&mut self, g: GroupId) {
        if self.runtime_refresh_within(g, CFS_BANDWIDTH_SLACK_PERIOD_NS + MIN_BANDWIDTH_EXPIRATION_NS) {
            return;
        }
        let (now, v54) = (self.clock, self.bw.rules.v54());
        let b = self.cfs_b_mut(g);
        if v54 && b.slack_at.is_some() {
            return;
        }
        b.slack_generation = b.slack_generation.wrapping_add(1);
        let at = now + CFS_BANDWIDTH_SLACK_PERIOD_NS;
        b.slack_at = Some(at);
        b.timer_events.1 += 1;
        let req = TimerRequest { group: g, slack: true, at, generation: b.slack_generation };
        self.bw.timers.push(req);
    }

    /// `tg_throttle_down` / `tg_unthrottle_up` over the group's subtree on one CPU.
    fn walk_throttle_count(&mut self, g: GroupId, cpu: CpuId, delta: i32) {
        // Groups are created parents first, so descendants come after `g`:
        // `tg_throttle_down` runs parents first, `tg_unthrottle_up` children first.
        let n = self.groups.len();
        for k in g.index()..n {
            let i = if delta > 0 { k } else { n - 1 - (k - g.index()) };
            if !self.group_is_under(GroupId(i as u32), g) {
                continue;
            }
            if let Some(q) = self.groups[i].cfs_rq[cpu.index()] {
                if delta > 0 {
                    self.pelt_throttle_down(q);
                }
                let rt = &mut self.rq_mut(q).rt;
                rt.throttle_count = rt.throttle_count.wrapping_add_signed(delta);
                if delta < 0 {
                    self.pelt_unthrottle_up(q);
                }
            }
        }
    }

    /// Whether `g` is `ancestor` or below it.
    pub fn group_is_under(&self, mut g: GroupId, ancestor: GroupId) -> bool {
        loop {
            if g == ancestor {
                return true;
            }
            match self.groups[g.index()].parent {
                Some(p) => g = p,
                None => return false,
            }
        }
    }

    /// Whether a `BandwidthTimer` event is the one armed now (a re-armed or
    /// stopped timer leaves stale events, which the engine drops uncounted).
    pub fn bandwidth_timer_current(&self, g: GroupId, slack: bool, generation: u32) -> bool {
        let Some(b) = self.bw.groups.get(g.index()).and_then(Option::as_ref) else { return false };
        if slack {
            b.slack_at.is_some() && b.slack_generation == generation
        } else {
            b.period_active && b.timer_generation == generation
        }
    }

    /// Where a limited group's refills fall: `phase + k × period` (the
    /// period timer's grid, which `hrtimer_forward_now` keeps).
    pub fn period_phase(&self, g: GroupId) -> Option<u64> {
        let b = self.bw.groups.get(g.index())?.as_ref()?;
        Some(b.timer_at % b.spec.period_ns)
    }

    /// `cpu.stat` of a group, if it is limited.
    pub fn cpu_stat(&self, g: GroupId) -> Option<(BandwidthSpec, CpuStat, u64)> {
        let b = self.bw.groups.get(g.index())?.as_ref()?;
        Some((b.spec, b.stat, b.consumed_ns))
    }

    /// The bandwidth invariants: a throttled queue is on its group's list and
    /// holds no positive runtime, its group entity is off its parent, and
    /// every queue's `throttle_count` counts the throttled levels at and
    /// above it on its CPU.
    pub fn bandwidth_invariants(&self) -> Result<(), String> {
        if !self.bw.used {
            return Ok(());
        }
        for (i, q) in self.cfs_rqs.iter().enumerate() {
            let id = CfsRqId(i as u32);
            let mut count = 0;
            let mut g = Some(q.tg);
            while let Some(x) = g {
                if let Some(xq) = self.groups[x.index()].cfs_rq[q.cpu.index()]
                    && self.rq(xq).rt.throttled
                {
                    count += 1;
                }
                g = self.groups[x.index()].parent;
            }
            if q.rt.throttle_count != count {
                return Err(format!("cfs_rq {i}: throttle_count {} but {count} throttled levels", q.rt.throttle_count));
            }
            if q.rt.throttled {
                let on_list = self.cfs_b(q.tg).throttled.contains(&id);
                if !on_list || q.rt.remaining > 0 {
                    return Err(format!("cfs_rq {i}: throttled, on list {on_list}, runtime {}", q.rt.remaining));
                }
                if let Some(owner) = q.owner
                    && self.se(owner).on_rq
                {
                    return Err(format!("cfs_rq {i}: throttled but its group entity is queued"));
                }
            }
        }
        Ok(())
    }
}

impl<P: FairPolicy> Fair<'_, P> {
    /// `check_cfs_rq_runtime`: throttle a queue found without runtime at
    /// `put_prev_entity` or in the pick. Returns whether it is throttled.
    pub(crate) fn check_cfs_rq_runtime(&mut self, q: CfsRqId) -> bool {
        if !self.bw.used {
            return false;
        }
        let rt = self.rq(q).rt;
        if !rt.enabled || rt.remaining > 0 {
            return false;
        }
        if rt.throttled {
            return true;
        }
        self.throttle_cfs_rq(q)
    }

    /// `check_enqueue_throttle`: a group waking on a CPU (its queue's first
    /// entity) is throttled at once if it has no runtime there.
    pub(crate) fn check_enqueue_throttle(&mut self, q: CfsRqId) {
        if !self.bw.used {
            return;
        }
        let rq = self.rq(q);
        // An active group must be handled by the update_curr()->put() path.
        if !rq.rt.enabled || rq.curr.is_some() || rq.rt.throttled {
            return;
        }
        self.account_cfs_rq_runtime(q, 0);
        if self.rq(q).rt.remaining <= 0 {
            self.throttle_cfs_rq(q);
        }
    }

    /// `throttle_cfs_rq`: take the queue's group entity off its parent (and
    /// the parents that empty with it), stop counting its tasks on the CPU,
    /// and put it on the throttled list. 5.4+ first tries for 1 ns from the
    /// pool and does not throttle if it gets it. Returns whether it throttled.
    fn throttle_cfs_rq(&mut self, q: CfsRqId) -> bool {
        let g = self.rq(q).tg;
        let rules = self.bw.rules;
        if rules.v54() {
            // This will start the period timer if necessary.
            if self.assign_cfs_rq_runtime(q, 1) {
                return false;
            }
            self.cfs_b_mut(g).throttled.push_back(q);
        }
        let cpu = self.rq(q).cpu;
        self.walk_throttle_count(g, cpu, 1);
        // The queue's tasks (6.x: and its runnable and SCHED_IDLE ones,
        // which 4.4 does not count) leave every level above it.
        let delta = self.rq(q).tasks();
        let task_delta = delta.queued;
        let mut se = self.rq(q).owner;
        let mut dequeue = true;
        while let Some(s) = se {
            // Throttled entity or throttle-on-deactivate.
            if !self.se(s).on_rq {
                break;
            }
            let pq = self.cfs_rq_of(s);
            if dequeue {
                P::throttle_dequeue(self, pq, s);
            } else if P::UPDATE_WALKED_LEVELS {
                self.update_walked_level(s, false);
            }
            self.rq_mut(pq).sub_tasks(delta);
            if self.rq(pq).load.weight != 0 {
                dequeue = false;
            }
            se = self.parent(s);
        }
        let nr_delta = if se.is_none() { -(task_delta as i32) } else { 0 };
        let now = self.clock;
        let nr_queued = self.rq(q).nr_running;
        let rt = &mut self.rq_mut(q).rt;
        rt.throttled = true;
        // 6.6+: the throttled time starts when the queue holds something.
        rt.throttled_clock = if !rules.throttled_clock_when_queued() || nr_queued > 0 { Some(now) } else { None };
        if !rules.v54() {
            // 4.4: add to the _head_ of the list, so that an already-started
            // distribute_cfs_runtime will not see us; 4.19+ to the tail.
            let b = self.cfs_b_mut(g);
            let empty = b.throttled.is_empty();
            if rules.tail_insert() {
                b.throttled.push_back(q);
            } else {
                b.throttled.push_front(q);
            }
            if empty {
                self.start_cfs_bandwidth(g);
            }
        }
        self.bw.events.push(ThrottleEvent { cpu, group: g, throttled: true, nr_delta });
        true
    }

    /// `unthrottle_cfs_rq`: account the throttled time, requeue the group
    /// entity up the hierarchy (up to a level that is itself throttled) and
    /// count its tasks on the CPU again; an idle CPU reschedules.
    fn unthrottle_cfs_rq(&mut self, q: CfsRqId) {
        let g = self.rq(q).tg;
        let cpu = self.rq(q).cpu;
        let now = self.clock;
        let rt = &mut self.rq_mut(q).rt;
        rt.throttled = false;
        let clock = rt.throttled_clock.take();
        let b = self.cfs_b_mut(g);
        if let Some(c) = clock {
            b.stat.throttled_time_ns += now - c;
        }
        b.throttled.retain(|&x| x != q);
        self.walk_throttle_count(g, cpu, -1);
        let mut nr_delta = 0;
        if self.rq(q).load.weight == 0 {
            // Nothing to run but something to decay (6.x: complete the leaf-list branch).
            self.unthrottle_empty(q);
        } else {
            let delta = self.rq(q).tasks();
            let task_delta = delta.queued;
            let mut enqueue = true;
            let mut reached_root = true;
            let mut se = self.rq(q).owner;
            while let Some(s) = se {
                let pq = self.cfs_rq_of(s);
                // 6.12: handle any unfinished DELAY_DEQUEUE business first.
                if !P::unthrottle_finish_delayed(self, pq, s) && self.se(s).on_rq {
                    enqueue = false;
                }
                if enqueue {
                    P::enqueue_entity(self, pq, s, ENQUEUE_WAKEUP);
                } else if P::UPDATE_WALKED_LEVELS {
                    self.update_walked_level(s, true);
                }
                self.rq_mut(pq).add_tasks(delta);
                // End evaluation on encountering a throttled cfs_rq.
                if self.cfs_rq_throttled(pq) {
                    reached_root = false;
                    break;
                }
                se = self.parent(s);
            }
            if reached_root {
                nr_delta = task_delta as i32;
            }
        }
        self.bw.events.push(ThrottleEvent { cpu, group: g, throttled: false, nr_delta });
        // Determine whether we need to wake up a potentially idle CPU: the
        // engine reschedules an idle CPU whose root queue is not empty.
    }

    /// `distribute_cfs_runtime`: pay each throttled queue its debt plus 1 ns,
    /// in list order, unthrottling those that reach a positive balance, until
    /// `remaining` is spent. Returns the runtime handed out.
    fn distribute_cfs_runtime(&mut self, g: GroupId, mut remaining: u64) -> u64 {
        let start = remaining;
        let (expires, seq) = (self.cfs_b(g).runtime_expires, self.cfs_b(g).expires_seq);
        let list: Vec<CfsRqId> = self.cfs_b(g).throttled.iter().copied().collect();
        for q in list {
            if remaining == 0 {
                break;
            }
            if !self.rq(q).rt.throttled {
                continue;
            }
            let runtime = ((-self.rq(q).rt.remaining + 1) as u64).min(remaining);
            remaining -= runtime;
            let rt = &mut self.rq_mut(q).rt;
            rt.remaining += runtime as i64;
            rt.expires = expires;
            rt.expires_seq = seq;
            if rt.remaining > 0 {
                self.unthrottle_cfs_rq(q);
            }
        }
        let used = start - remaining;
        self.cfs_b_mut(g).consumed_ns += used;
        used
    }

    /// The period timer of group `g` fires (`sched_cfs_period_timer` →
    /// `do_sched_cfs_period_timer`). A stale generation is ignored.
    pub fn cfs_period_timer(&mut self, g: GroupId, generation: u32) {
        let rules = self.bw.rules;
        let b = self.cfs_b_mut(g);
        if !b.period_active || b.timer_generation != generation {
            return;
        }
        let period = b.spec.period_ns;
        b.timer_at += period; // hrtimer_forward_now: overrun 1, the event fires on time.
        let idle = self.do_sched_cfs_period_timer(g, rules);
        let b = self.cfs_b_mut(g);
        if idle {
            b.period_active = false;
        } else {
            b.timer_events.0 += 1;
            let req = TimerRequest { group: g, slack: false, at: b.timer_at, generation: b.timer_generation };
            self.bw.timers.push(req);
        }
    }

    /// `do_sched_cfs_period_timer` with one overrun. Returns "idle": the
    /// timer stops.
    fn do_sched_cfs_period_timer(&mut self, g: GroupId, rules: BandwidthRules) -> bool {
        let b = self.cfs_b_mut(g);
        if b.spec.quota_ns.is_none() {
            return true;
        }
        let throttled = !b.throttled.is_empty();
        b.stat.nr_periods += 1;
        if rules.has_burst() {
            // Refill extra burst quota even if cfs_b->idle (5.14+).
            self.refill_cfs_bandwidth_runtime(g);
        }
        let b = self.cfs_b_mut(g);
        if b.idle && !throttled {
            return true;
        }
        if !rules.has_burst() {
            self.refill_cfs_bandwidth_runtime(g);
        }
        let b = self.cfs_b_mut(g);
        if !throttled {
            // Mark as potentially idle for the upcoming period.
            b.idle = true;
            return false;
        }
        b.stat.nr_throttled += 1;
        // One pass pays every queue in full or spends the pool: the kernel's
        // loop (which re-reads the list after each pass) ends after it.
        let mut throttled = throttled;
        while throttled && self.cfs_b(g).runtime > 0 {
            let runtime = self.cfs_b(g).runtime;
            let used = self.distribute_cfs_runtime(g, runtime);
            let b = self.cfs_b_mut(g);
            b.runtime -= used.min(b.runtime);
            throttled = !b.throttled.is_empty() && used > 0;
        }
        self.cfs_b_mut(g).idle = false;
        false
    }

    /// The slack timer of group `g` fires (`do_sched_cfs_slack_timer`).
    pub fn cfs_slack_timer(&mut self, g: GroupId, generation: u32) {
        let b = self.cfs_b_mut(g);
        if b.slack_at.is_none() || b.slack_generation != generation {
            return;
        }
        b.slack_at = None;
        // Confirm we're still not at a refresh boundary.
        if self.runtime_refresh_within(g, MIN_BANDWIDTH_EXPIRATION_NS) {
            return;
        }
        let slice = self.bw.slice_ns;
        let b = self.cfs_b(g);
        if b.spec.quota_ns.is_none() || b.runtime <= slice {
            return;
        }
        let (runtime, expires) = (b.runtime, b.runtime_expires);
        let used = self.distribute_cfs_runtime(g, runtime);
        let b = self.cfs_b_mut(g);
        if expires == b.runtime_expires {
            b.runtime -= used.min(b.runtime);
        }
    }
}
