//! The deadline class's SMP half (deadline.c, cpudeadline.c): what the
//! engine's `select_task_rq_dl`, push and pull ask of the queues — each
//! CPU's earliest deadline, the pushable tasks, the overload bit, `cpudl`
//! and `find_later_rq` — and the move of a queued task.

use super::{DlClass, dl_time_before};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::spread::{CpuSpread, InDomain};

impl DlClass {
    /// `dl_rq->earliest_dl.curr`: the leftmost deadline queued on `cpu`
    /// (the 6.12+ server's included: `inc_dl_tasks` counts it), if any.
    pub fn earliest(&self, cpu: CpuId) -> Option<u64> {
        self.leftmost(cpu).map(|i| self.entities[i].deadline)
    }

    /// Whether the task may run on other CPUs (`nr_cpus_allowed > 1`).
    pub fn migratable(&self, task: TaskId) -> bool {
        self.allowed[task.index()].len() > 1
    }

    /// The earliest task of `cpu`'s pushable tree (queued, not running,
    /// `nr_cpus_allowed > 1`; the server never is: 6.12 `enqueue_task_dl`
    /// returns before `enqueue_pushable_dl_task`), that may run on `on`
    /// (`pick_next_pushable_dl_task`; 6.x `pick_earliest_pushable_dl_task`;
    /// 4.4 `pick_next_earliest_dl_task` walks the tree from its second
    /// entity, the leftmost being the running task but for an instant).
    pub fn earliest_pushable(&self, cpu: CpuId, on: Option<CpuId>) -> Option<TaskId> {
        let running = self.curr(cpu);
        let mut best: Option<usize> = None;
        for &i in &self.queued[cpu.index()] {
            if i >= self.ntasks || Some(TaskId(i as u32)) == running || self.allowed[i].len() < 2 {
                continue;
            }
            if on.is_some_and(|c| !self.allowed[i].contains(c)) {
                continue;
            }
            let e = &self.entities[i];
            if best.is_none_or(|b| {
                let o = &self.entities[b];
                dl_time_before(e.deadline, o.deadline) || (e.deadline == o.deadline && e.seq < o.seq)
            }) {
                best = Some(i);
            }
        }
        best.map(|i| TaskId(i as u32))
    }

    /// `dl_rq->overloaded` (the CPU's bit in `rd->dlo_mask`). 6.12+: a
    /// pushable task is queued (`enqueue_pushable_dl_task` sets it), so a
    /// task replenished on an idle CPU is pushed to a free one; 4.4/6.6
    /// `update_dl_migration`: a migratory task and two queued
    /// (`dl_nr_migratory && dl_nr_running > 1`; `RtRules::overload_needs_two`).
    pub fn overloaded(&self, cpu: CpuId) -> bool {
        if self.overload_needs_two {
            let q = &self.queued[cpu.index()];
            return q.len() > 1 && q.iter().any(|&i| i < self.ntasks && self.allowed[i].len() > 1);
        }
        self.earliest_pushable(cpu, None).is_some()
    }

    /// The root domain of `cpu`.
    pub fn rd_span(&self, cpu: CpuId) -> &CpuSet {
        &self.rd_span[cpu.index()]
    }

    /// `cpudl_find` (4.4 cpudeadline.c:99-120; 6.6 cpudeadline.c:116-160):
    /// with a `later_mask`, the allowed CPUs of the task's root domain that
    /// have no deadline entity (`cp->free_cpus`); failing those (or
    /// without a mask), the root domain's CPU whose earliest deadline is
    /// the latest (`cpudl_maximum`, the heap's top; the model breaks a tie
    /// to the lowest CPU), if the task may run there and its deadline is
    /// earlier. Asymmetric capacity (6.x `dl_task_fits_capacity`) is not
    /// modelled.
    pub fn cpudl_find(&self, task: TaskId, later_mask: bool) -> Option<CpuSet> {
        let i = task.index();
        let e = &self.entities[i];
        let span = &self.rd_span[e.cpu.index()];
        if later_mask {
            let mut free = CpuSet::empty(self.queued.len() as u16);
            for c in span.iter_and(&self.allowed[i]) {
                if self.queued[c.index()].is_empty() {
                    free.insert(c);
                }
            }
            if !free.is_empty() {
                return Some(free);
            }
        }
        let mut max: Option<(CpuId, u64)> = None;
        for c in span.iter() {
            if let Some(d) = self.earliest(c)
                && max.is_none_or(|(_, m)| dl_time_before(m, d))
            {
                max = Some((c, d));
            }
        }
        let (c, d) = max?;
        if !self.allowed[i].contains(c) || !dl_time_before(e.deadline, d) {
            return None;
        }
        let mut one = CpuSet::empty(self.queued.len() as u16);
        one.insert(c);
        Some(one)
    }

    /// `find_later_rq` (4.4 deadline.c:1453-1537; 6.6 2122-2207; 6.18
    /// 2470-): none for a pinned task or when `cpudl_find` finds nothing;
    /// else `spread`'s preference over the mask (4.4 takes `best_cpu`
    /// within a domain, 6.x distributes, `how`).
    pub fn find_later_rq(&self, task: TaskId, this_cpu: CpuId, spread: &mut CpuSpread, how: InDomain) -> Option<CpuId> {
        if !self.migratable(task) {
            return None;
        }
        let mask = self.cpudl_find(task, true)?;
        spread.choose(self.entities[task.index()].cpu, this_cpu, &mask, how)
    }

    /// `dl_task_is_earliest_deadline` (6.x; 4.4 open-codes it): `cpu` has
    /// no deadline entity or the task's deadline is earlier than its earliest.
    pub fn is_earliest_on(&self, task: TaskId, cpu: CpuId) -> bool {
        self.earliest(cpu).is_none_or(|d| dl_time_before(self.entities[task.index()].deadline, d))
    }

    /// The CPU the task is queued (or last ran) on.
    pub fn task_cpu(&self, task: TaskId) -> CpuId {
        self.entities[task.index()].cpu
    }

    /// `move_queued_task_locked` for a queued, not running deadline task
    /// (`deactivate_task`, `set_task_cpu`, `activate_task`: no wake-up, no
    /// replenishment, its deadline and runtime travel with it).
    pub fn migrate_queued(&mut self, task: TaskId, to: CpuId) {
        let i = task.index();
        debug_assert!(self.entities[i].queued && self.curr(self.entities[i].cpu) != Some(task));
        self.dequeue_tree(i);
        self.entities[i].cpu = to;
        self.enqueue_tree(i);
    }

    /// `check_preempt_equal_dl` (4.4 deadline.c:1213-1232; 6.6 1899-1918):
    /// at an equal deadline the woken task goes first only if curr could
    /// run elsewhere and it could not (`cpudl_find` without a mask: the
    /// heap's top only).
    pub fn equal_deadline_goes_first(&self, woken: TaskId, curr: TaskId) -> bool {
        if self.entities[woken.index()].deadline != self.entities[curr.index()].deadline {
            return false;
        }
        if !self.migratable(curr) || self.cpudl_find(curr, false).is_none() {
            return false;
        }
        !(self.migratable(woken) && self.cpudl_find(woken, false).is_some())
    }
}
