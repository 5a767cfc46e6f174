//! The task program interpreter: one step at a time, from the task's
//! program counter (`run`, `sleep`, `sleep_until`, `wait`, `wake`, `serve`,
//! `yield`, `io`, `fdatasync`, `wait_io`), and the bursts the steps start.
//!
//! A step changes only its task, draws from the task's own RNG stream, arms
//! its task's timers and records its metrics; what another part must do
//! (wake another task, submit I/O, take a limiter's grant) it hands back as
//! an `Effect`, and a step that ends by blocking or yielding its task says so
//! in its `Flow`. The event loop's `run_steps` applies those before the next
//! step, as the direct calls did. A burst's end is sequenced by the loop
//! (`BurstEnded`).

use super::effects::Effect;
use super::io;
use super::rq::next_kernel_entry;
use super::world::World;
use crate::event::Event;
use crate::ids::TaskId;
use crate::task::{BlockOn, IoWait, Item, TaskState};
use crate::time::SimTime;
use crate::workload::Step;

/// Whether `run_steps` goes on after a step (and its effects).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flow {
    /// On to the next step, if the task still runs.
    Next,
    /// The step took time, or handed its task to another part: the task
    /// stops here.
    Stop,
    /// The task blocks (or exits) as the step's last act: `Core::block`,
    /// after the step's effects.
    Block(TaskState),
    /// A `yield` step: `Core::yield_task`, after the step's effects.
    Yield,
}

/// Executes the running task's step at its program counter. A task whose
/// passes are all done exits when it would start the next one.
pub(super) fn step(task: TaskId, w: &mut World) -> Flow {
    let now = w.now();
    let t = &mut w.tasks[task.index()];
    if t.limited_work_left_ns > 0 {
        // A limited `run` step goes on with its next grant-sized chunk.
        w.emit(Effect::LimitedChunk(task));
        return Flow::Stop;
    }
    debug_assert_eq!(t.state, TaskState::Running);
    let program = &w.spec.tasks[t.spec].program;
    if t.pc == 0 && program.iterations.is_some_and(|n| t.iterations_done >= n) {
        // The last periodic job completes with the program.
        if let Some((release, period_ns)) = t.job.take() {
            w.recorder.job_completed(task, release, period_ns, now);
        }
        return Flow::Block(TaskState::Exited);
    }
    // The step is read in place (the spec and the tasks are apart in `w`);
    // only an I/O step is copied out (steps hold no heap data).
    let step = &program.steps[t.pc];
    match step {
        Step::Run { work: d, enter_kernel_every_ns } => {
            let work = d.sample(&mut t.rng);
            t.kernel_every_ns = *enter_kernel_every_ns;
            advance_pc(task, w);
            if work > 0 && w.spec.tasks[w.tasks[task.index()].spec].limiter.is_some() {
                w.tasks[task.index()].limited_work_left_ns = work;
                w.emit(Effect::LimitedChunk(task));
                return Flow::Stop;
            }
            if work > 0 {
                start_burst(task, work, w);
                return Flow::Stop;
            }
        }
        Step::Sleep(d) => {
            let wake_at = now.after(d.sample(&mut t.rng));
            return sleep_until(task, wake_at, w);
        }
        &Step::SleepUntil { period_ns, offset_ns } => {
            let k = if now.ns() < offset_ns { 0 } else { (now.ns() - offset_ns) / period_ns + 1 };
            let wake_at = SimTime(k.saturating_mul(period_ns).saturating_add(offset_ns));
            // A periodic job: released at the boundary slept until
            // (even if the wake-up or the run comes later), complete
            // when the program next reaches a `sleep_until`.
            if !w.spec.tasks[t.spec].program.steps.contains(&Step::Serve)
                && let Some((release, period_ns)) = t.job.replace((wake_at, period_ns))
            {
                w.recorder.job_completed(task, release, period_ns, now);
            }
            return sleep_until(task, wake_at, w);
        }
        Step::Wait => {
            let pending = t.pending_wakeups > 0;
            if pending {
                t.pending_wakeups -= 1;
            }
            advance_pc(task, w);
            if !pending {
                return Flow::Block(TaskState::Blocked(BlockOn::Wakeup));
            }
        }
        &Step::Wake { target, sync } => {
            let target = target.resolve(t.instance);
            let waker_cpu = t.cpu;
            advance_pc(task, w);
            // A `wake` step run on `waker_cpu`: wakes the target if it waits
            // for one, or leaves a pending wakeup.
            let t = &mut w.tasks[target.index()];
            match t.state {
                TaskState::Blocked(BlockOn::Wakeup) => w.emit(Effect::Wake { task: target, waker: Some(waker_cpu), sync }),
                TaskState::Exited => {}
                _ => t.pending_wakeups = t.pending_wakeups.saturating_add(1),
            }
        }
        Step::Serve => {
            if let Some(item) = t.items.pop_front() {
                t.kernel_every_ns = None;
                t.serving = Some(item);
                t.served_this_pass = true;
                start_burst(task, item.work_ns, w);
                return Flow::Stop;
            }
            if !t.served_this_pass {
                return Flow::Block(TaskState::Blocked(BlockOn::Item));
            }
            t.served_this_pass = false;
            advance_pc(task, w);
        }
        Step::Yield => {
            advance_pc(task, w);
            return Flow::Yield;
        }
        Step::Io(_) | Step::Fdatasync | Step::WaitIo(_) => {
            let step = step.clone();
            return io_step(task, step, w);
        }
    }
    Flow::Next
}

/// The I/O steps: `io` (submit, then maybe sleep), `fdatasync` (sleep while
/// writes are outstanding), `wait_io` (sleep until another task's
/// submissions so far complete).
fn io_step(task: TaskId, step: Step, w: &mut World) -> Flow {
    let t = &mut w.tasks[task.index()];
    match step {
        Step::Io(io) => {
            if io.depth > 0 && t.io.ops.len() >= io.depth as usize {
                // io_submit with the AIO ring full: wait for a completion,
                // then execute this step again.
                io::block_io(task, IoWait::Depth(io.depth), w);
                return Flow::Stop;
            }
            // The submission enters its queue, then the task may sleep for
            // a tag or for the submission (`io::submitted`).
            let sub = io::prepare(task, &io, w);
            advance_pc(task, w);
            w.emit(Effect::Submit(sub));
            w.emit(Effect::Submitted(sub));
        }
        Step::Fdatasync => {
            let writes = t.io.ops.iter().any(|o| o.write);
            advance_pc(task, w);
            if writes {
                io::block_io(task, IoWait::Writes, w);
                return Flow::Stop;
            }
        }
        Step::WaitIo(target) => {
            let target = target.resolve(t.instance);
            advance_pc(task, w);
            let other = &mut w.tasks[target.index()].io;
            if target != task && !other.ops.is_empty() {
                let last = other.next_seq - 1;
                other.waiters.push((task, last));
                io::block_io(task, IoWait::OtherTask, w);
                return Flow::Stop;
            }
        }
        _ => unreachable!("not an I/O step"),
    }
    Flow::Next
}

/// Arms the task's timer for `at`; the task then blocks on it.
fn sleep_until(task: TaskId, at: SimTime, w: &mut World) -> Flow {
    advance_pc(task, w);
    let t = &mut w.tasks[task.index()];
    t.timer_generation = t.timer_generation.wrapping_add(1);
    let generation = t.timer_generation;
    w.queue.push(at, Event::TimerExpired { task, generation });
    Flow::Block(TaskState::Blocked(BlockOn::Timer))
}

/// Advances the program counter, counting a pass when it wraps.
fn advance_pc(task: TaskId, w: &mut World) {
    let t = &mut w.tasks[task.index()];
    t.pc += 1;
    if t.pc == w.spec.tasks[t.spec].program.steps.len() {
        t.pc = 0;
        t.iterations_done += 1;
    }
}

/// The running task starts a CPU burst of `work_ns` (its `BurstEnd` and,
/// with `enter_kernel_every`, its first `KernelEntry` armed).
pub(super) fn start_burst(task: TaskId, work_ns: u64, w: &mut World) {
    let now = w.now();
    let t = &mut w.tasks[task.index()];
    t.in_burst = true;
    t.work_left_ns = work_ns;
    t.burst_generation = t.burst_generation.wrapping_add(1);
    let from = t.progress_from.max(now);
    // A burst begun after another in the same run segment counts its
    // work from now: a later switch-out charges `now − progress_from`.
    t.progress_from = from;
    let at = from.after(work_ns);
    let generation = t.burst_generation;
    t.burst_end_at = at;
    w.queue.push(at, Event::BurstEnd { task, generation });
    next_kernel_entry(task, from, w);
}

/// What follows a burst's end, in this order: the served item goes on
/// (`hops::item_served`), a limited step's last chunk returns its unused
/// grant (`Limiters::step_done`), and the task runs its next steps.
pub(super) struct BurstEnded {
    pub served: Option<Item>,
    pub limited_step_done: bool,
}

/// The running task's burst ended: a served item's response is recorded;
/// the event loop then does what `BurstEnded` says, each part's effects
/// applied before the next part runs (`Simulation::burst_end`).
pub(super) fn burst_end(task: TaskId, w: &mut World) -> BurstEnded {
    let now = w.now();
    let t = &mut w.tasks[task.index()];
    t.in_burst = false;
    t.work_left_ns = 0;
    let served = t.serving.take();
    let limited_step_done = std::mem::take(&mut t.limited_chunk) && t.limited_work_left_ns == 0;
    if let Some(item) = served {
        w.recorder.record_response(task, item.arrival, now);
    }
    BurstEnded { served, limited_step_done }
}
