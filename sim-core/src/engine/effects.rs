//! What a part of the engine asks of the others, as values: the one effects
//! type that the event loop (`engine/mod.rs`) drains.
//!
//! The subsystems (block and userspace I/O, the elastic limiters, request
//! hops, the task programs, and `context_switch`) never call into another
//! part of the engine. Each pushes the `Effect`s that must follow onto the
//! shared `Effects` stack and returns; the loop pops and applies them. An
//! effect applied may push more: those come off the stack first, so the
//! order is depth-first, exactly the order of the direct calls they replace
//! (queue pushes, RNG draws and recorder calls keep their sequence, and the
//! event queue's tie-break with them). A subsystem therefore emits an effect
//! only where the direct call stood at the end of its work, or where what it
//! does afterwards neither reads nor writes what the effect changes.
//!
//! The hottest last acts are handed back as return values instead, which the
//! loop applies after the call's effects, exactly where the effect would
//! have been applied: a step's `Flow::Block`/`Flow::Yield`, the task an
//! arrival wakes, the task `schedule`/`context_switch` lets run its steps,
//! and what follows a burst's end (`program::BurstEnded`).
//!
//! A subsystem arms its own timers on the event queue directly when no effect
//! precedes them (the queue is the shared scheduling context, not the engine);
//! `Arm` is for a timer that must follow earlier effects. The fair class's own
//! outboxes (reschedules, bandwidth timers and throttles) are drained by the
//! scheduler core where the class returns (`Core::apply_class_resched`).

use crate::block::queue::BioDone;
use crate::block::request::ReqFlags;
use crate::event::Event;
use crate::ids::{CpuId, DeviceId, TaskId};
use crate::task::TaskState;
use crate::time::SimTime;
use crate::userspace_io::IoClassRef;

/// One submission of a task's I/O step, prepared (size, sector and sequence
/// number drawn) and about to enter its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Submission {
    pub task: TaskId,
    pub device: DeviceId,
    /// Through a userspace I/O queue's class, else straight to the block layer.
    pub io_class: Option<IoClassRef>,
    pub seq: u64,
    pub flags: ReqFlags,
    pub sector: u64,
    pub sectors: u64,
    pub bytes: u64,
    /// The step blocks until the submission completes.
    pub wait: bool,
}

/// What must happen next, handed back by a subsystem to the event loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// `try_to_wake_up`, run on `waker`'s CPU, else on the task's own;
    /// `sync`: `WF_SYNC` (the waker is about to sleep).
    Wake { task: TaskId, waker: Option<CpuId>, sync: bool },
    /// The running task blocks (or exits): its CPU reschedules.
    Block { task: TaskId, state: TaskState },
    /// The task executes its program from its program counter.
    RunSteps { task: TaskId },
    /// The running task starts a CPU burst of `work_ns`.
    StartBurst { task: TaskId, work_ns: u64 },
    /// A timer armed after the effects before it.
    Arm { at: SimTime, event: Event },
    /// A prepared submission enters its queue (`submit_bio`, or a userspace I/O queue).
    Submit(Submission),
    /// After `Submit`: the submitter sleeps for a tag or for the submission.
    Submitted(Submission),
    /// `bio_endio` for one bio.
    BioDone(BioDone),
    /// A submission's last bio completed: its userspace I/O queue releases it.
    IoQueueDone { task: TaskId, seq: u64 },
    /// The block device's queue runs, then tag waiters are woken.
    RunQueue(DeviceId),
    /// A task blocked on I/O is woken (if it still is).
    IoWake(TaskId),
    /// The next grant-sized chunk of a limited `run` step.
    LimitedChunk(TaskId),
    /// A watched task's scheduling delay, for the limiters' windows.
    NoteDelay { task: TaskId, ns: u64 },
}

/// The stack of effects waiting to be applied.
#[derive(Clone, Debug, Default)]
pub(crate) struct Effects {
    stack: Vec<Effect>,
}

impl Effects {
    /// Queues an effect behind the ones the same call emitted before.
    pub fn push(&mut self, effect: Effect) {
        self.stack.push(effect);
    }

    /// The stack's height: effects above it are the ones a call emits.
    pub fn mark(&self) -> usize {
        self.stack.len()
    }

    /// Puts what was emitted since `mark` in application order (first
    /// emitted on top).
    pub fn seal(&mut self, mark: usize) {
        self.stack[mark..].reverse();
    }

    /// The next effect above `floor`, if any.
    pub fn pop_above(&mut self, floor: usize) -> Option<Effect> {
        if self.stack.len() > floor { self.stack.pop() } else { None }
    }
}
