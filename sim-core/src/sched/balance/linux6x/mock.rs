//! A machine reduced to what the 6.x policy reads, for the hand-computed
//! tests: run queues, PELT signals and affinities are set by hand, so each
//! figure in a test comment can be checked with a pencil. Moves made by the
//! policy are applied to the lists and recorded.

use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::linux6x::{Balance6xRules, Smp6x};
use crate::sched::balance::{CpuSignals, Machine, MigrateCause, TaskHotInputs, TaskSignals};
use crate::sched::topology::{MachineShape, Topology};

/// One mock machine. Per-CPU signals are derived from the queued tasks'
/// signals unless `cpu_extra` adds blocked load / util on top.
pub struct Mock {
    pub clock_ns: u64,
    pub hz: u64,
    pub curr: Vec<Option<TaskId>>,
    /// `rq->cfs_tasks` per CPU, head first (the running task included).
    pub lists: Vec<Vec<TaskId>>,
    pub task_cpu: Vec<CpuId>,
    pub allowed: Vec<CpuSet>,
    pub task: Vec<TaskSignals>,
    /// Per task: DELAY_DEQUEUE keeps it queued asleep (6.12+).
    pub delayed: Vec<bool>,
    pub sched_idle: Vec<bool>,
    pub exec_start: Vec<u64>,
    /// Per task: `!entity_eligible` in its queue (6.18's soft limit reads it
    /// when the destination queue is not empty).
    pub ineligible: Vec<bool>,
    /// Added to the derived per-CPU signals (blocked load and util of
    /// tasks that slept).
    pub cpu_extra: Vec<CpuSignals>,
    pub moves: Vec<(TaskId, CpuId, MigrateCause)>,
    pub kicks: Vec<CpuId>,
    pub active: Vec<CpuId>,
    pub preempted: Vec<CpuId>,
    pub blocked_updates: Vec<CpuId>,
    /// `update_blocked_averages` decays a CPU's `cpu_extra` (its blocked
    /// load) to nothing when set, else leaves it.
    pub blocked_decays_to_zero: bool,
    /// Per CPU: `rq->avg_rt`, `rq->avg_dl` (only `util_avg` is read).
    pub rt: Vec<crate::sched::rt_pressure::RqPressure>,
}

impl Mock {
    /// `cpus` idle CPUs and `tasks` sleeping tasks of nice 0 on CPU 0, each
    /// with load 1024 and util 0, allowed everywhere; jiffies = 100 at HZ 1000.
    pub fn new(cpus: u16, tasks: usize) -> Mock {
        let n = usize::from(cpus);
        Mock {
            clock_ns: 100_000_000,
            hz: 1000,
            curr: vec![None; n],
            lists: vec![Vec::new(); n],
            task_cpu: vec![CpuId(0); tasks],
            allowed: vec![CpuSet::all(cpus); tasks],
            task: vec![TaskSignals { load_avg: 1024, weight: 1024, ..TaskSignals::default() }; tasks],
            delayed: vec![false; tasks],
            sched_idle: vec![false; tasks],
            exec_start: vec![0; tasks],
            ineligible: vec![false; tasks],
            cpu_extra: vec![CpuSignals::default(); n],
            moves: Vec::new(),
            kicks: Vec::new(),
            active: Vec::new(),
            preempted: Vec::new(),
            blocked_updates: Vec::new(),
            blocked_decays_to_zero: false,
            rt: vec![Default::default(); n],
        }
    }

    /// Queues `task` on `cpu` (at the list's head, as `account_entity_enqueue`);
    /// `running` makes it `curr`.
    pub fn queue(&mut self, task: u32, cpu: u16, running: bool) {
        let (t, c) = (TaskId(task), CpuId(cpu));
        self.task_cpu[t.index()] = c;
        self.lists[c.index()].insert(0, t);
        if running {
            self.curr[c.index()] = Some(t);
        }
    }

    /// A sleeping task that last ran on `cpu`.
    pub fn sleeping(&mut self, task: u32, cpu: u16) {
        self.task_cpu[task as usize] = CpuId(cpu);
    }

    /// Sets a task's load, util and util_est (runnable = util unless set apart).
    pub fn signals(&mut self, task: u32, load: u64, util: u64) {
        let s = &mut self.task[task as usize];
        s.load_avg = load;
        s.util_avg = util;
        s.runnable_avg = util;
        s.util_est = util;
    }
}

/// A 6.x policy over `shape` with `rules`, HZ 1000, NO_HZ on.
pub fn policy(shape: MachineShape, rules: Balance6xRules, tasks: usize) -> Smp6x {
    Smp6x::new(rules, Topology::build_6x(shape, &CpuSet::empty(shape.cpus()), rules.topology()), 1000, tasks, true)
}

impl Machine for Mock {
    fn clock_ns(&self) -> u64 {
        self.clock_ns
    }
    fn jiffies(&self) -> u64 {
        self.clock_ns / 1_000_000
    }
    fn hz(&self) -> u64 {
        self.hz
    }
    fn nr_running(&self, cpu: CpuId) -> u32 {
        self.lists[cpu.index()].len() as u32
    }
    fn curr(&self, cpu: CpuId) -> Option<TaskId> {
        self.curr[cpu.index()]
    }
    fn task_cpu(&self, task: TaskId) -> CpuId {
        self.task_cpu[task.index()]
    }
    fn cpus_allowed(&self, task: TaskId) -> &CpuSet {
        &self.allowed[task.index()]
    }
    fn weighted_cpuload(&self, cpu: CpuId) -> u64 {
        self.cpu_signals(cpu).load_avg
    }
    fn cpu_util_avg(&self, cpu: CpuId) -> u64 {
        self.cpu_signals(cpu).util_avg
    }
    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.nr_running(cpu)
    }
    fn task_load_avg(&self, task: TaskId) -> u64 {
        self.task[task.index()].load_avg
    }
    fn task_h_load(&mut self, task: TaskId) -> u64 {
        self.task[task.index()].load_avg // the root group: h_load = load_avg
    }
    fn effective_load(&self, _of_task: TaskId, _cpu: CpuId, wl: i64, _wg: i64) -> i64 {
        wl
    }
    fn update_blocked_averages(&mut self, cpu: CpuId) {
        self.blocked_updates.push(cpu);
        if self.blocked_decays_to_zero {
            self.cpu_extra[cpu.index()] = CpuSignals::default();
        }
    }
    fn task_hot_inputs(&self, task: TaskId) -> TaskHotInputs {
        TaskHotInputs {
            sched_delayed: self.delayed[task.index()],
            sched_idle: self.sched_idle[task.index()],
            exec_start_ns: self.exec_start[task.index()],
            buddy: false,
        }
    }
    fn cpu_signals(&self, cpu: CpuId) -> CpuSignals {
        let e = self.cpu_extra[cpu.index()];
        let l = &self.lists[cpu.index()];
        let sum = |f: fn(&TaskSignals) -> u64| l.iter().map(|t| f(&self.task[t.index()])).sum::<u64>();
        CpuSignals {
            load_avg: e.load_avg + sum(|s| s.load_avg),
            runnable_avg: e.runnable_avg + sum(|s| s.runnable_avg),
            util_avg: e.util_avg + sum(|s| s.util_avg),
            util_est: e.util_est + sum(|s| s.util_est),
            h_nr_queued: l.len() as u32,
            h_nr_delayed: l.iter().filter(|t| self.delayed[t.index()]).count() as u32,
            h_nr_idle: l.iter().filter(|t| self.sched_idle[t.index()]).count() as u32,
        }
    }
    fn task_signals(&self, task: TaskId) -> TaskSignals {
        self.task[task.index()]
    }
    fn cfs_task_at(&self, cpu: CpuId, index_from_head: usize) -> Option<TaskId> {
        self.lists[cpu.index()].get(index_from_head).copied()
    }
    fn cfs_tasks_move_tail(&mut self, cpu: CpuId, task: TaskId) {
        let l = &mut self.lists[cpu.index()];
        l.retain(|&t| t != task);
        l.push(task);
    }
    fn cfs_task_at_tail(&self, cpu: CpuId, index_from_tail: usize) -> Option<TaskId> {
        self.lists[cpu.index()].iter().rev().nth(index_from_tail).copied()
    }
    fn cfs_tasks_move_head(&mut self, cpu: CpuId, task: TaskId) {
        let l = &mut self.lists[cpu.index()];
        l.retain(|&t| t != task);
        l.insert(0, task);
    }
    fn task_is_ineligible_on_dst_cpu(&self, task: TaskId, dst: CpuId) -> bool {
        !self.lists[dst.index()].is_empty() && self.ineligible[task.index()]
    }
    fn move_queued_task(&mut self, task: TaskId, to: CpuId, cause: MigrateCause, _by: CpuId) {
        let from = self.task_cpu[task.index()];
        assert_ne!(self.curr[from.index()], Some(task), "the policy moved a running task");
        assert!(self.allowed[task.index()].contains(to), "the policy moved a task outside its affinity");
        self.lists[from.index()].retain(|&t| t != task);
        self.queue(task.0, to.0, false);
        self.moves.push((task, to, cause));
    }
    fn kick_nohz_balancer(&mut self, ilb: CpuId) {
        self.kicks.push(ilb);
    }
    fn queue_active_balance(&mut self, busiest: CpuId) {
        self.active.push(busiest);
    }
    fn stopper_preempt(&mut self, cpu: CpuId) {
        self.curr[cpu.index()] = None;
        self.preempted.push(cpu);
    }
    fn rt_pressure(&self, cpu: CpuId) -> crate::sched::rt_pressure::RqPressure {
        self.rt[cpu.index()]
    }
}
