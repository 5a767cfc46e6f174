//! A task's scheduling policy (`p->policy`, 4.4 include/uapi/linux/sched.h):
//! the scheduler's own vocabulary, so it sits in `sched` with no import from
//! the layers above (workloads name it; the fair class and the weights read it).

/// Scheduling policy (`p->policy`, 4.4 include/uapi/linux/sched.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_NORMAL (SCHED_OTHER).
    Normal,
    /// SCHED_BATCH: never preempts on wakeup.
    Batch,
    /// SCHED_IDLE: weight 3, preempted by any non-idle wakeup.
    Idle,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
        }
    }
}
