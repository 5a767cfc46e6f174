//! A task's behaviour: a small looped program of steps.
//!
//! A task executes steps only while it is on a CPU, as a real thread runs code.
//! `run` consumes CPU time; `sleep`, `sleep_until`, `wait` and `serve` (when
//! idle) block; `wake` and `yield` take no time. After the last step the program
//! starts over, until `iterations` passes are done and the task exits.

use super::dist::Dist;
use crate::ids::{DeviceId, TaskId};

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A CPU burst of the sampled length. With `enter_kernel_every_ns` the
    /// burst enters the kernel that often (a system call, a page fault, a
    /// `CLOCK_THREAD_CPUTIME_ID` read), and each entry runs `update_curr`;
    /// `None` is a pure user-space spin, seen only at ticks and events.
    Run { work: Dist, enter_kernel_every_ns: Option<u64> },
    /// Sleep for the sampled duration (`nanosleep`).
    Sleep(Dist),
    /// Sleep until the next multiple of `period_ns` after now, plus `offset_ns`
    /// (`clock_nanosleep(TIMER_ABSTIME)` on a periodic deadline).
    SleepUntil { period_ns: u64, offset_ns: u64 },
    /// Block until another task's `wake` step (consumes one pending wakeup).
    Wait,
    /// Wake another task (a hand-off, like a futex or eventfd write);
    /// `sync`: the waker is about to sleep (`WF_SYNC`, as
    /// `wake_up_interruptible_sync` or a pipe write passes it).
    Wake { target: WakeTarget, sync: bool },
    /// Reactor loop: block until at least one work item is pending, then run
    /// one CPU burst per item until none is left.
    Serve,
    /// `sched_yield()`.
    Yield,
    /// Submit a read or write to a block device.
    Io(IoStep),
    /// `fdatasync()`: block until every write the task submitted has completed.
    Fdatasync,
    /// Block until the I/O another task has outstanding now has completed
    /// (waiting for a buffer under writeback: `xfs_buf_lock`, `wait_on_page_writeback`).
    WaitIo(WakeTarget),
}

/// One I/O submission.
#[derive(Clone, Debug, PartialEq)]
pub struct IoStep {
    pub device: DeviceId,
    pub flags: ReqFlags,
    /// Bytes per submission (rounded up to 512-byte sectors).
    pub size: Dist,
    pub pattern: Pattern,
    /// First sector of the region the task uses; `None`: task id × 1 GiB,
    /// wrapped into the device.
    pub offset_sectors: Option<u64>,
    /// Sectors in the region (sequential runs wrap at its end).
    pub span_sectors: u64,
    /// Block until it completes (`read()`, `pwrite()` with `O_DIRECT`); otherwise
    /// submit and go on (`io_submit`, writeback).
    pub wait: bool,
    /// With `wait = false`: before submitting, block while this many of the
    /// task's submissions are outstanding (an AIO queue depth; 0: no limit).
    pub depth: u32,
    /// Through a userspace I/O queue's class (`io_class = "QUEUE.CLASS"`):
    /// held there until the queue admits it.
    pub io_class: Option<IoClassRef>,
}

// The plain data an I/O step carries, which the layers above read: the
// direction and flags (block/request.rs re-exports them, where the kernel has
// them: blk_types.h) and the userspace I/O queue class it goes through.

/// Data direction (`rq_data_dir`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Read,
    Write,
}

impl Op {
    /// Index into per-direction arrays (`READ` 0, `WRITE` 1).
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
    }
}

/// The flags a request carries that the elevators read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReqFlags {
    pub op: Op,
    /// `REQ_SYNC` (reads are always sync: `rq_is_sync`).
    pub sync: bool,
    /// `REQ_META`: shown by blktrace (`M`); no elevator reads it in 4.4.
    pub meta: bool,
    /// `REQ_PRIO`: what CFQ reads (`cfq_choose_req`, `cfq_should_preempt`).
    /// ext4 sets it with `REQ_META` on some metadata; XFS's buffer writes do not.
    pub prio: bool,
}

impl ReqFlags {
    /// blktrace's RWBS column (`blk_fill_rwbs`): R/W, then S (sync) and M (meta).
    pub fn rwbs(self) -> String {
        let mut s = String::from(if self.op == Op::Read { "R" } else { "W" });
        if self.sync && self.op == Op::Write {
            s.push('S');
        }
        if self.meta {
            s.push('M');
        }
        s
    }

    /// `rq_is_sync`: reads, and writes marked `REQ_SYNC`.
    pub fn is_sync(self) -> bool {
        self.op == Op::Read || self.sync
    }
}

/// A class of an I/O queue, as an I/O step names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoClassRef {
    /// Index into `ScenarioSpec::io_queues` (name order).
    pub queue: u16,
    /// Index into that queue's classes (name order).
    pub class: u16,
}

/// Where successive submissions land.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Each starts where the previous one ended.
    Sequential,
    /// Uniform over the region, 4 KiB aligned.
    Random,
}

impl Step {
    /// Whether the step can consume time or block (a program needs one).
    /// A `run` or `sleep` whose every sample is 0 does not count.
    pub fn takes_time(&self) -> bool {
        match self {
            Step::Run { work: d, .. } | Step::Sleep(d) => !d.is_always_zero(),
            Step::Wake { .. } | Step::Yield | Step::Fdatasync | Step::WaitIo(_) => false,
            Step::Io(io) => io.wait || io.depth > 0,
            Step::SleepUntil { .. } | Step::Wait | Step::Serve => true,
        }
    }
}

/// Whom a `wake` (or `wait_io`) step names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeTarget {
    /// One specific task (named by its `comm`, e.g. `"worker/2"`).
    Task(TaskId),
    /// A declaration with `count` instances starting at `first`: instance
    /// `i` of the waker wakes instance `i % count`.
    Group { first: TaskId, count: u32 },
}

impl WakeTarget {
    /// The task meant, for instance `instance` of the declaration whose step this is.
    pub fn resolve(self, instance: u32) -> TaskId {
        match self {
            WakeTarget::Task(id) => id,
            WakeTarget::Group { first, count } => TaskId(first.0 + instance % count),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub steps: Vec<Step>,
    /// Passes through the program before the task exits; `None` runs forever.
    pub iterations: Option<u64>,
}
