//! Multi-CPU placement and load balancing: which CPU a waking or new task
//! is queued on, and what moves queued and running tasks between CPUs.
//!
//! The policy is per kernel version (`linux44` follows 4.4 fair.c's SMP
//! half); all versions share the machine's shape (`sched/topology.rs`) and
//! see the machine through the `Machine` trait, which the engine implements.
//! The policy decides; the engine moves tasks (`Machine::move_queued_task`)
//! and keeps the generic bookkeeping (`set_task_cpu`, run-queue counters,
//! records). `linux6x` follows 6.6/6.12/6.18 fair.c's SMP half
//! (`select_idle_core`/`select_idle_cpu`, the 5.5 `load_balance` rewrite
//! with `migrate_type`, NO_HZ stats kicks), its per-version differences
//! named rules (`Balance6xRules`) in the version table. The policy is chosen
//! once in `Simulation::new` (`Smp`), from the version table's `balancer`.

pub mod linux44;
pub mod linux6x;

use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
pub use crate::sched::migrate::MigrateCause;
use crate::sched::rt_pressure::RqPressure;
use linux44::Smp44;
use linux6x::Smp6x;

/// `msecs_to_jiffies` (rounding up, as for HZ not dividing 1000).
fn msecs_to_jiffies(ms: u64, hz: u64) -> u64 {
    (ms * hz).div_ceil(1000)
}

/// `init_sched_groups_capacity` → `update_group_capacity` at boot (jiffies
/// 0; 4.4 and 6.x alike): each group's next capacity refresh, one domain
/// balance interval on, clamped to [1, `max_load_balance_interval`].
fn sgc_next_update_at_boot(topo: &crate::sched::topology::Topology, hz: u64, max_interval: u64) -> Vec<Vec<u64>> {
    topo.domains
        .iter()
        .map(|d| vec![msecs_to_jiffies(d.balance_interval, hz).clamp(1, max_interval); d.groups.len()])
        .collect()
}

/// The CPU chosen for a task and, when it differs from the task's CPU,
/// why (for the migration counters and the trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub cpu: CpuId,
    pub cause: MigrateCause,
}

/// Why `select_task_rq` runs, with the waker's `WF_SYNC` (4.4 passes
/// `sd_flag` and `wake_flags`; 6.x folds both into `wake_flags`:
/// `WF_TTWU`/`WF_FORK`/`WF_EXEC` are the `SD_BALANCE_*` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceKind {
    /// `try_to_wake_up` (`SD_BALANCE_WAKE` / `WF_TTWU`); `sync` is `WF_SYNC`.
    Wake { sync: bool },
    /// `wake_up_new_task` (`SD_BALANCE_FORK` / `WF_FORK`).
    Fork,
}

/// The SMP policy of one kernel version, chosen once when the simulation is
/// built. Each entry point is the kernel function of that name; the engine
/// calls the same ones whatever the version.
#[derive(Clone, Debug)]
pub enum Smp {
    Linux44(Box<Smp44>),
    Linux6x(Box<Smp6x>),
}

/// One arm per policy: the engine's entry points forward unchanged.
macro_rules! each_policy {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            Smp::Linux44($p) => $e,
            Smp::Linux6x($p) => $e,
        }
    };
}

impl Smp {
    /// `scheduler_tick` → `trigger_load_balance` (and the 4.4 `cpu_load[]` update).
    pub fn scheduler_tick(&mut self, m: &mut impl Machine, cpu: CpuId) {
        each_policy!(self, p => p.scheduler_tick(m, cpu))
    }
    /// Whether `cpu`'s tick at `jiffies` raises SCHED_SOFTIRQ for the periodic balance.
    pub fn balance_due(&self, cpu: CpuId, jiffies: u64) -> bool {
        each_policy!(self, p => p.balance_due(cpu, jiffies))
    }
    /// The NO_HZ kick arrives at `ilb`.
    pub fn nohz_kick_received(&mut self, m: &mut impl Machine, ilb: CpuId) {
        each_policy!(self, p => p.nohz_kick_received(m, ilb))
    }
    /// `active_load_balance_cpu_stop` on `busiest`.
    pub fn active_load_balance_cpu_stop(&mut self, m: &mut impl Machine, busiest: CpuId) {
        each_policy!(self, p => p.active_load_balance_cpu_stop(m, busiest))
    }
    /// `idle_balance` (4.4) / `sched_balance_newidle` (6.x): whether it pulled.
    pub fn idle_balance(&mut self, m: &mut impl Machine, cpu: CpuId) -> bool {
        each_policy!(self, p => p.idle_balance(m, cpu))
    }
    /// `task_waking_fair` (4.4) → `record_wakee`, for every wake-up that
    /// reaches it. 6.x has no such hook: its `select_task_rq_fair` records
    /// the wakee itself (WF_TTWU), so only for a task allowed on several CPUs.
    pub fn task_waking(&mut self, jiffies: u64, hz: u64, current: Option<TaskId>, waker_cpu: CpuId, p: TaskId) {
        match self {
            Smp::Linux44(s) => s.record_wakee(jiffies, hz, current, waker_cpu, p),
            Smp::Linux6x(_) => {}
        }
    }
    /// `pick_next_task_idle` → `set_next_task_idle` → `update_idle_core`
    /// (6.x): `cpu` switches to its idle task (4.4 keeps no idle-core flag).
    pub fn update_idle_core(&mut self, m: &mut impl Machine, cpu: CpuId) {
        match self {
            Smp::Linux44(_) => {}
            Smp::Linux6x(s) => s.update_idle_core(m, cpu),
        }
    }
    /// A fair task `task` was picked to run on `cpu`. 6.x moves it to the
    /// head of `rq->cfs_tasks`, so the list is most recently run first and
    /// `detach_tasks` (from the tail) takes the least recently run: 6.6
    /// `pick_next_task_fair` (`done:` label), 6.12+ `__set_next_task_fair`
    /// (`list_move(&se->group_node, &rq->cfs_tasks)`). 4.4's
    /// `pick_next_task_fair` leaves the list alone (the move came in 4.15).
    pub fn set_next_task_fair(&mut self, m: &mut impl Machine, cpu: CpuId, task: TaskId) {
        match self {
            Smp::Linux44(_) => {}
            Smp::Linux6x(_) => m.cfs_tasks_move_head(cpu, task),
        }
    }
    /// `ttwu_do_wakeup`: the CPU's idle period ends.
    pub fn ttwu_do_wakeup(&mut self, now: u64, cpu: CpuId) {
        each_policy!(self, p => p.ttwu_do_wakeup(now, cpu))
    }
    /// `add_nr_running`: overload marking.
    pub fn add_nr_running(&mut self, cpu: CpuId, prev_nr: u32, nr_running: u32) {
        each_policy!(self, p => p.add_nr_running(cpu, prev_nr, nr_running))
    }
    /// An idle CPU stops its tick.
    pub fn tick_stopped(&mut self, cpu: CpuId) {
        each_policy!(self, p => p.tick_stopped(cpu))
    }
    /// A CPU leaves NO_HZ idle. Returns whether 4.4's `update_cpu_load_nohz`
    /// ran `__update_cpu_load` (and so `sched_avg_update`).
    pub fn tick_restarted(&mut self, jiffies: u64, cpu: CpuId) -> bool {
        each_policy!(self, p => p.tick_restarted(jiffies, cpu))
    }
    /// `select_task_rq_fair`.
    pub fn select_task_rq_fair(
        &mut self,
        m: &mut impl Machine,
        task: TaskId,
        prev_cpu: CpuId,
        kind: PlaceKind,
        this_cpu: CpuId,
        current: Option<TaskId>,
    ) -> Placement {
        each_policy!(self, p => p.select_task_rq_fair(m, task, prev_cpu, kind, this_cpu, current))
    }
}

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

/// The PELT signals 6.x's balancer reads of a CPU's root `cfs_rq`
/// (6.x fair.c: `cpu_load`, `cpu_runnable`, `cpu_util_cfs` inputs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuSignals {
    /// `cfs_rq->avg.load_avg` (`cpu_load`; blocked load included).
    pub load_avg: u64,
    /// `cfs_rq->avg.runnable_avg` (`cpu_runnable`, 5.7+).
    pub runnable_avg: u64,
    /// `cfs_rq->avg.util_avg`.
    pub util_avg: u64,
    /// `cfs_rq->avg.util_est` (UTIL_EST; 6.6 `util_est.enqueued`).
    pub util_est: u64,
    /// `rq->cfs.h_nr_queued` (6.6/6.12 `h_nr_running`): delayed entities included.
    pub h_nr_queued: u32,
    /// Tasks kept queued by DELAY_DEQUEUE (`h_nr_delayed`; 0 before 6.12).
    pub h_nr_delayed: u32,
    /// `cfs.idle_h_nr_running`: SCHED_IDLE tasks queued.
    pub h_nr_idle: u32,
}

/// The PELT signals of one task entity (6.x fair.c `task_util`,
/// `_task_util_est`, `se.avg.load_avg`, `se.avg.runnable_avg`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskSignals {
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// `_task_util_est`: max(ewma, enqueued) without UTIL_AVG_UNCHANGED.
    pub util_est: u64,
    /// The task's nice weight (`se.load.weight`, scaled down).
    pub weight: u64,
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
    /// `rq->cfs_tasks` from its tail (6.x `detach_tasks` takes
    /// `list_last_entry`, `detach_one_task` walks in reverse).
    fn cfs_task_at_tail(&self, cpu: CpuId, index_from_tail: usize) -> Option<TaskId>;
    /// `list_move(&p->se.group_node, &rq->cfs_tasks)`: to the head (6.x
    /// `detach_tasks` rotates a task it skips there).
    fn cfs_tasks_move_head(&mut self, cpu: CpuId, task: TaskId);
    /// `task_is_ineligible_on_dst_cpu` (6.18 fair.c): PLACE_LAG on, the
    /// task's group queue on `dst` holds entities, and the task is not
    /// eligible (negative lag) in its own queue. False where the class has
    /// no eligibility (4.4).
    fn task_is_ineligible_on_dst_cpu(&self, _task: TaskId, _dst: CpuId) -> bool {
        false
    }
    /// `cfs_rq_has_blocked` of the CPU's root queue after
    /// `update_blocked_averages` (6.x fair.c: `load_avg || util_avg`).
    fn cfs_rq_has_blocked(&self, cpu: CpuId) -> bool {
        let s = self.cpu_signals(cpu);
        s.load_avg != 0 || s.util_avg != 0
    }
    /// `detach_task` + `attach_task` (4.4 fair.c) of a queued task that is
    /// not running: `deactivate_task`, `set_task_cpu`, `activate_task`,
    /// `check_preempt_curr`. `by` is the CPU doing it (for the trace).
    fn move_queued_task(&mut self, task: TaskId, to: CpuId, cause: MigrateCause, by: CpuId);
    /// Ask the idle-load-balancer CPU `ilb` to run `nohz_idle_balance`
    /// (`smp_send_reschedule` → `SCHED_SOFTIRQ`).
    fn kick_nohz_balancer(&mut self, ilb: CpuId);
    /// A fork's parent is not a task of the machine: it runs on the forking
    /// CPU only implicitly (the engine starts tasks from no task), so the
    /// policy counts it there. A mock with an explicit parent says false.
    fn fork_parent_implicit(&self) -> bool {
        false
    }
    /// The 6.x PELT signals of a CPU's root queue, as last updated.
    fn cpu_signals(&self, cpu: CpuId) -> CpuSignals;
    /// `cpu_signals(cpu).h_nr_idle` alone (`sched_idle_cpu` reads only it).
    fn h_nr_idle(&self, cpu: CpuId) -> u32 {
        self.cpu_signals(cpu).h_nr_idle
    }
    /// The RT and deadline time signals of a CPU (`rq->rt_avg`,
    /// `rq->age_stamp`; `rq->avg_rt`, `rq->avg_dl`), as last updated; 0
    /// with no RT or deadline task.
    fn rt_pressure(&self, _cpu: CpuId) -> RqPressure {
        RqPressure::default()
    }
    /// `others_have_blocked` (6.x fair.c): `avg_rt` or `avg_dl` still has
    /// utilisation to decay, so `rq->has_blocked_load` stays set.
    fn others_have_blocked(&self, _cpu: CpuId) -> bool {
        false
    }
    /// 4.4 `sched_avg_update(rq)` at the end of `__update_cpu_load`
    /// (fair.c:4393): `rt_avg` decays to now.
    fn sched_avg_update(&mut self, _cpu: CpuId) {}
    /// The 6.x PELT signals of a task.
    fn task_signals(&self, task: TaskId) -> TaskSignals;
    /// `stop_one_cpu_nowait(busiest, active_load_balance_cpu_stop)`.
    fn queue_active_balance(&mut self, busiest: CpuId);
    /// The stopper preempts `cpu`'s running task (it becomes a queued,
    /// not running task) before `active_load_balance_cpu_stop` looks.
    fn stopper_preempt(&mut self, cpu: CpuId);
}
