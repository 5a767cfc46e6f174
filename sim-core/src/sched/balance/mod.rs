//! Multi-CPU placement and load balancing: which CPU a waking or new task
//! is queued on, and what moves queued and running tasks between CPUs.
//!
//! The policy is per kernel version (`linux44` follows 4.4 fair.c's SMP
//! half); all versions share the machine's shape (`sched/topology.rs`) and
//! see the machine through the `Machine` trait, which the engine implements.
//! The policy decides; the engine moves tasks (`Machine::move_queued_task`)
//! and keeps the generic bookkeeping (`set_task_cpu`, run-queue counters,
//! records). A later kernel (6.x: `select_idle_core`/`select_idle_cpu`,
//! the 5.5 `load_balance` rewrite with `migrate_type`, misfit tasks) plugs in
//! as a sibling module with the same entry points, chosen once in
//! `Simulation::new`.

pub mod linux44;

use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
pub use crate::sched::migrate::MigrateCause;

/// `enum cpu_idle_type` (4.4 include/linux/sched.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuIdleType {
    Idle,
    NotIdle,
    NewlyIdle,
}

/// What `task_hot` (4.4 fair.c) reads of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskHotInputs {
    /// Kept queued by EEVDF's DELAY_DEQUEUE (6.12+): asleep, not moved.
    pub sched_delayed: bool,
    pub sched_idle: bool,
    pub exec_start_ns: u64,
    pub buddy: bool,
}

/// What the placement and balancing policy reads and does on the machine.
/// The engine implements it; the policy never sees the engine's types.
pub trait Machine {
    /// `throttled_lb_pair` (4.4 fair.c): the task's group is throttled (CFS
    /// bandwidth) on the source or the destination CPU.
    fn throttled_lb_pair(&self, _task: TaskId, _src: CpuId, _dst: CpuId) -> bool {
        false
    }
    /// `rq_clock` in ns (one clock for the whole machine).
    fn clock_ns(&self) -> u64;
    /// `jiffies`: ticks since boot.
    fn jiffies(&self) -> u64;
    /// `CONFIG_HZ`.
    fn hz(&self) -> u64;
    /// `rq->nr_running` (the running task included).
    fn nr_running(&self, cpu: CpuId) -> u32;
    /// `rq->curr` when it is a task (None: the idle task runs).
    fn curr(&self, cpu: CpuId) -> Option<TaskId>;
    /// `idle_cpu` (4.4 core.c): the idle task runs and nothing is queued.
    fn idle_cpu(&self, cpu: CpuId) -> bool {
        self.curr(cpu).is_none() && self.nr_running(cpu) == 0
    }
    fn task_cpu(&self, task: TaskId) -> CpuId;
    /// `tsk_cpus_allowed`.
    fn cpus_allowed(&self, task: TaskId) -> &CpuSet;
    /// `weighted_cpuload`: the root queue's `runnable_load_avg`.
    fn weighted_cpuload(&self, cpu: CpuId) -> u64;
    /// `cfs_rq->avg.util_avg` of the root queue (uncapped).
    fn cpu_util_avg(&self, cpu: CpuId) -> u64;
    /// `rq->cfs.h_nr_running`.
    fn h_nr_running(&self, cpu: CpuId) -> u32;
    /// `p->se.avg.load_avg`.
    fn task_load_avg(&self, task: TaskId) -> u64;
    /// `task_h_load` (cached per jiffy in the queues, hence `&mut`).
    fn task_h_load(&mut self, task: TaskId) -> u64;
    /// `effective_load(task_group(p), cpu, wl, wg)`.
    fn effective_load(&self, of_task: TaskId, cpu: CpuId, wl: i64, wg: i64) -> i64;
    /// `update_blocked_averages(cpu)`.
    fn update_blocked_averages(&mut self, cpu: CpuId);
    /// What `task_hot` reads: the policy is SCHED_IDLE; `se.exec_start`;
    /// the task is its queue's next or last buddy.
    fn task_hot_inputs(&self, task: TaskId) -> TaskHotInputs;
    /// `rq->cfs_tasks` from its head: the fair tasks queued on `cpu`, the
    /// most recently enqueued first.
    fn cfs_task_at(&self, cpu: CpuId, index_from_head: usize) -> Option<TaskId>;
    /// `list_move_tail(&p->se.group_node, &rq->cfs_tasks)`.
    fn cfs_tasks_move_tail(&mut self, cpu: CpuId, task: TaskId);
    /// `detach_task` + `attach_task` (4.4 fair.c) of a queued task that is
    /// not running: `deactivate_task`, `set_task_cpu`, `activate_task`,
    /// `check_preempt_curr`. `by` is the CPU doing it (for the trace).
    fn move_queued_task(&mut self, task: TaskId, to: CpuId, cause: MigrateCause, by: CpuId);
    /// Ask the idle-load-balancer CPU `ilb` to run `nohz_idle_balance`
    /// (`smp_send_reschedule` → `SCHED_SOFTIRQ`).
    fn kick_nohz_balancer(&mut self, ilb: CpuId);
    /// `stop_one_cpu_nowait(busiest, active_load_balance_cpu_stop)`.
    fn queue_active_balance(&mut self, busiest: CpuId);
    /// The stopper preempts `cpu`'s running task (it becomes a queued,
    /// not running task) before `active_load_balance_cpu_stop` looks.
    fn stopper_preempt(&mut self, cpu: CpuId);
}
