//! The glue between the tasks and the elastic CPU limiters
//! (`workload/limiter.rs`): a limited `run` step is cut into grant-sized
//! chunks, a task without a grant blocks behind earlier waiters, the
//! controller adjusts the rate each period, and watched tasks' delays fill
//! its window.
//!
//! The limiters own their state; blocking, waking and starting a chunk's
//! burst come back as effects (`Block`, `Wake`, `StartBurst`), and a grant
//! timer that must follow wake-ups as `Arm`.

use super::effects::Effect;
use super::world::World;
use crate::event::Event;
use crate::ids::TaskId;
use crate::scenario::ScenarioSpec;
use crate::task::{BlockOn, Task, TaskState};
use crate::time::SimTime;
use crate::workload::limiter::{Limiter, LimiterId};

fn limiter_of(spec: &ScenarioSpec, t: &Task) -> Option<LimiterId> {
    spec.tasks[t.spec].limiter
}

/// CPU time used by a task up to `now` (its current run included).
pub(super) fn task_runtime_ns(t: &Task, now: SimTime) -> u64 {
    let running = t.state == TaskState::Running;
    t.runtime_ns + if running { now.since(t.sched_in_at) } else { 0 }
}

/// CPU time used so far by the tasks under limiter `l`.
pub(super) fn limited_runtime_ns(spec: &ScenarioSpec, tasks: &[Task], now: SimTime, l: LimiterId) -> u64 {
    let mut sum = 0;
    for ts in spec.tasks.iter().filter(|ts| ts.limiter == Some(l)) {
        for i in 0..ts.count {
            sum += task_runtime_ns(&tasks[(ts.first.0 + i) as usize], now);
        }
    }
    sum
}

/// The elastic CPU limiters, by `LimiterId`, for one call.
pub(super) struct Limiters<'a>(pub &'a mut [Limiter]);

impl Limiters<'_> {
    /// The next chunk of a limited `run` step: at most the held grant's CPU
    /// time (acquiring a grant first, or blocking for one behind earlier
    /// waiters), then the task "preempts itself" at the chunk's end and
    /// comes back here for the rest (`burst_end` → `run_steps`).
    pub fn next_chunk(&mut self, task: TaskId, w: &mut World) {
        let l = limiter_of(&w.spec, &w.tasks[task.index()]).expect("limited work belongs to a task with a limiter");
        let now = w.now();
        if w.tasks[task.index()].grant_left_ns == 0 {
            let lim = &mut self.0[l.index()];
            if !lim.try_acquire(now) {
                lim.waiters.push_back(task);
                w.tasks[task.index()].grant_wait_from = now;
                w.emit(Effect::Block { task, state: TaskState::Blocked(BlockOn::Grant) });
                self.arm_grant(l, w);
                return;
            }
            w.tasks[task.index()].grant_left_ns = lim.spec.grant_ns;
        }
        let t = &mut w.tasks[task.index()];
        let chunk = t.grant_left_ns.min(t.limited_work_left_ns);
        t.grant_left_ns -= chunk;
        t.limited_work_left_ns -= chunk;
        t.limited_chunk = true;
        w.emit(Effect::StartBurst { task, work_ns: chunk });
    }

    /// A limited `run` step's last chunk ended: the grant's unused CPU time
    /// goes back to the bucket (capped at one grant), which may serve a waiter.
    pub fn step_done(&mut self, task: TaskId, w: &mut World) {
        let l = limiter_of(&w.spec, &w.tasks[task.index()]).expect("a limited step belongs to a task with a limiter");
        let left = std::mem::take(&mut w.tasks[task.index()].grant_left_ns);
        if left > 0 {
            let now = w.now();
            self.0[l.index()].give_back(now, left);
            self.grant(l, w);
        }
    }

    /// Schedules the `LimiterGrant` for the first waiter at the exact time
    /// the bucket will hold a grant (none at a zero rate: the next
    /// adjustment re-arms it). A previous one is cancelled by generation.
    /// Armed after the effects emitted before it (`Effect::Arm`).
    fn arm_grant(&mut self, l: LimiterId, w: &mut World) {
        let now = w.now();
        let lim = &mut self.0[l.index()];
        lim.grant_generation = lim.grant_generation.wrapping_add(1);
        lim.grant_armed = false;
        if lim.waiters.is_empty() {
            return;
        }
        lim.bucket.refill(now);
        if let Some(at) = lim.bucket.ready_at(lim.spec.grant_ns) {
            lim.grant_armed = true;
            let generation = lim.grant_generation;
            w.emit(Effect::Arm { at: at.max(now), event: Event::LimiterGrant { limiter: l, generation } });
        }
    }

    /// Hands grants to waiters, first come first served, while the bucket
    /// holds them; wakes each; re-arms the timer for the next waiter.
    pub fn grant(&mut self, l: LimiterId, w: &mut World) {
        let now = w.now();
        // Bounded: each pass removes a waiter.
        while let Some(&waiter) = self.0[l.index()].waiters.front() {
            let lim = &mut self.0[l.index()];
            if !lim.take_grant(now) {
                break;
            }
            lim.waiters.pop_front();
            let grant = lim.spec.grant_ns;
            let t = &mut w.tasks[waiter.index()];
            lim.wait_ns += now.since(t.grant_wait_from);
            t.grant_left_ns = grant;
            debug_assert_eq!(t.state, TaskState::Blocked(BlockOn::Grant));
            w.emit(Effect::Wake { task: waiter, waker: None, sync: false });
        }
        self.arm_grant(l, w);
    }

    /// The controller's period ends: new limit from the window's percentile,
    /// the sample recorded, the grant timer recomputed at the new rate.
    pub fn adjust(&mut self, l: LimiterId, w: &mut World) {
        let now = w.now();
        let used = limited_runtime_ns(&w.spec, &w.tasks, now, l);
        let lim = &mut self.0[l.index()];
        lim.adjust(now, used);
        let next = now.after(lim.spec.adjust_every_ns);
        if next < w.clock.end {
            w.queue.push(next, Event::LimiterAdjust { limiter: l });
        }
        // The rate changed: serve whoever the bucket now covers, re-arm.
        self.grant(l, w);
    }

    /// A watched task's scheduling delay goes into each watching limiter's window.
    pub fn note_delay(&mut self, task: TaskId, ns: u64, w: &World) {
        let decl = w.tasks[task.index()].spec;
        for lim in self.0.iter_mut() {
            if lim.spec.watch.contains(&decl) {
                lim.window.record(ns);
            }
        }
    }
}
