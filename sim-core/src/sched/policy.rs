//! A task's scheduling policy (`p->policy`, include/uapi/linux/sched.h) and
//! the kernel's priority numbering (`p->prio`): the scheduler's own
//! vocabulary, so it sits in `sched` with no import from the layers above
//! (workloads name it; the classes and the weights read it).

use super::class::ClassKind;

/// Scheduling policy (`p->policy`, include/uapi/linux/sched.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_NORMAL (SCHED_OTHER).
    Normal,
    /// SCHED_BATCH: never preempts on wakeup.
    Batch,
    /// SCHED_IDLE: weight 3, preempted by any non-idle wakeup.
    Idle,
    /// SCHED_FIFO: the RT class, runs until it blocks, yields or a higher
    /// priority preempts it.
    Fifo,
    /// SCHED_RR: SCHED_FIFO with a time slice among equal priorities.
    Rr,
    /// SCHED_DEADLINE: the deadline class (CBS, EDF).
    Deadline,
    /// The stop class (stop_task.c): a per-CPU kernel thread such as
    /// migration/N. No system call sets it: `sched_set_stop_task` (4.4 and
    /// 6.18 core.c) gives the CPU's stopper `SCHED_FIFO` at `MAX_RT_PRIO - 1`
    /// as its parameters (so userspace and `sched_switch` see FIFO 99, prio
    /// 0) and `stop_sched_class` as its class.
    Stop,
}

/// `MAX_RT_PRIO` (include/linux/sched/prio.h): kernel priorities below it are RT.
pub const MAX_RT_PRIO: i32 = 100;
/// The `sched_priority` `sched_set_stop_task` gives a stop task (4.4 and
/// 6.18 core.c: `.sched_priority = MAX_RT_PRIO - 1`).
pub const STOP_RT_PRIORITY: i32 = MAX_RT_PRIO - 1;
/// `DEFAULT_PRIO`: nice 0.
pub const DEFAULT_PRIO: i32 = 120;

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Deadline => "deadline",
            Policy::Stop => "stop",
        }
    }

    /// `p->sched_class` as `__setscheduler_class` chooses it from the policy
    /// (6.12 syscalls.c; 4.4 `__setscheduler`): `dl_prio` → deadline,
    /// `rt_prio` → RT, else fair.
    pub fn class(self) -> ClassKind {
        match self {
            Policy::Normal | Policy::Batch | Policy::Idle => ClassKind::Fair,
            Policy::Fifo | Policy::Rr => ClassKind::Rt,
            Policy::Deadline => ClassKind::Deadline,
            // sched_set_stop_task: `stop->sched_class = &stop_sched_class`.
            Policy::Stop => ClassKind::Stop,
        }
    }

    /// `rt_policy` (kernel/sched/sched.h) of a policy the scenario sets
    /// with an `rt_priority`: FIFO and RR. A stop task's FIFO is the
    /// kernel's doing, not a setting, and its class is not RT: false.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// `normal_prio` (4.4 core.c; 6.12 syscalls.c): what `sched_switch`
    /// prints as `prio`: DL −1 (`MAX_DL_PRIO − 1`), RT `MAX_RT_PRIO − 1 −
    /// rt_priority` (0..98), fair `NICE_TO_PRIO(nice)` = 120 + nice; a stop
    /// task 0 (`sched_set_stop_task`: FIFO at `MAX_RT_PRIO - 1`).
    pub fn kernel_prio(self, nice: i8, rt_priority: u8) -> i32 {
        match self.class() {
            ClassKind::Deadline => -1,
            ClassKind::Stop => MAX_RT_PRIO - 1 - STOP_RT_PRIORITY,
            ClassKind::Rt => MAX_RT_PRIO - 1 - i32::from(rt_priority),
            _ => DEFAULT_PRIO + i32::from(nice),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `chrt -f 50` shows as prio 49 in `perf sched`, `chrt -f 99` as 0,
    /// nice 0 as 120, SCHED_DEADLINE as −1.
    #[test]
    fn kernel_prio_numbers_as_sched_switch_prints_them() {
        assert_eq!(Policy::Fifo.kernel_prio(0, 50), 49);
        assert_eq!(Policy::Rr.kernel_prio(0, 99), 0);
        assert_eq!(Policy::Fifo.kernel_prio(0, 1), 98);
        assert_eq!(Policy::Normal.kernel_prio(0, 0), 120);
        assert_eq!(Policy::Batch.kernel_prio(-5, 0), 115);
        assert_eq!(Policy::Deadline.kernel_prio(0, 0), -1);
        // migration/N: FIFO 99 to userspace, prio 0 in sched_switch.
        assert_eq!(Policy::Stop.kernel_prio(0, 0), 0);
        assert_eq!(Policy::Stop.class(), ClassKind::Stop);
        assert!(!Policy::Stop.is_rt());
    }
}
