//! `rq->cfs_tasks` (4.4 sched.h): per CPU, the fair tasks queued there, in
//! the order the load balancer walks them. `account_entity_enqueue` adds a
//! task at the head (the most recently enqueued first; 4.4's
//! `pick_next_task_fair` does not reorder it, 6.x moves the picked task to
//! the head: `Smp::set_next_task_fair`), 4.4's `detach_tasks` takes from the head and moves a task
//! it skips to the tail; 6.x's takes from the tail and moves a skipped one to the head. An intrusive doubly linked list over task ids keeps every one
//! of those O(1) whatever the number of tasks.

use crate::ids::{CpuId, TaskId};

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct CfsTasks {
    next: Vec<u32>,
    prev: Vec<u32>,
    on: Vec<bool>,
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
}

impl CfsTasks {
    pub fn new(cpus: usize, tasks: usize) -> CfsTasks {
        CfsTasks {
            next: vec![NONE; tasks],
            prev: vec![NONE; tasks],
            on: vec![false; tasks],
            head: vec![NONE; cpus],
            tail: vec![NONE; cpus],
            len: vec![0; cpus],
        }
    }

    pub fn len(&self, cpu: CpuId) -> u32 {
        self.len[cpu.index()]
    }

    pub fn contains(&self, task: TaskId) -> bool {
        self.on[task.index()]
    }

    /// `list_add`: at the head.
    pub fn push_head(&mut self, cpu: CpuId, task: TaskId) {
        debug_assert!(!self.on[task.index()], "task {task} already on a cfs_tasks list");
        let (c, t) = (cpu.index(), task.0);
        let old = self.head[c];
        self.next[t as usize] = old;
        self.prev[t as usize] = NONE;
        if old == NONE {
            self.tail[c] = t;
        } else {
            self.prev[old as usize] = t;
        }
        self.head[c] = t;
        self.on[t as usize] = true;
        self.len[c] += 1;
    }

    /// `list_add_tail`.
    pub fn push_tail(&mut self, cpu: CpuId, task: TaskId) {
        debug_assert!(!self.on[task.index()], "task {task} already on a cfs_tasks list");
        let (c, t) = (cpu.index(), task.0);
        let old = self.tail[c];
        self.prev[t as usize] = old;
        self.next[t as usize] = NONE;
        if old == NONE {
            self.head[c] = t;
        } else {
            self.next[old as usize] = t;
        }
        self.tail[c] = t;
        self.on[t as usize] = true;
        self.len[c] += 1;
    }

    /// `list_del_init`.
    pub fn remove(&mut self, cpu: CpuId, task: TaskId) {
        if !self.on[task.index()] {
            return;
        }
        let (c, t) = (cpu.index(), task.index());
        let (p, n) = (self.prev[t], self.next[t]);
        if p == NONE {
            self.head[c] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail[c] = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.on[t] = false;
        self.len[c] -= 1;
    }

    /// `list_move`: to the head.
    pub fn move_head(&mut self, cpu: CpuId, task: TaskId) {
        if self.head[cpu.index()] != task.0 {
            self.remove(cpu, task);
            self.push_head(cpu, task);
        }
    }

    /// `list_move_tail`.
    pub fn move_tail(&mut self, cpu: CpuId, task: TaskId) {
        if self.tail[cpu.index()] != task.0 {
            self.remove(cpu, task);
            self.push_tail(cpu, task);
        }
    }

    /// The task `index` places from the head (walks the list: callers keep
    /// `index` below `sysctl_sched_nr_migrate` or the queue's length).
    pub fn at(&self, cpu: CpuId, index: usize) -> Option<TaskId> {
        let mut t = self.head[cpu.index()];
        for _ in 0..index {
            if t == NONE {
                return None;
            }
            t = self.next[t as usize];
        }
        (t != NONE).then_some(TaskId(t))
    }

    /// The task `index` places from the tail (walks the list backwards:
    /// callers keep `index` below the queue's length).
    pub fn at_tail(&self, cpu: CpuId, index: usize) -> Option<TaskId> {
        let mut t = self.tail[cpu.index()];
        for _ in 0..index {
            if t == NONE {
                return None;
            }
            t = self.prev[t as usize];
        }
        (t != NONE).then_some(TaskId(t))
    }

    /// The whole list from the head (for invariant checks).
    pub fn iter(&self, cpu: CpuId) -> impl Iterator<Item = TaskId> + '_ {
        let mut t = self.head[cpu.index()];
        std::iter::from_fn(move || {
            if t == NONE {
                return None;
            }
            let out = TaskId(t);
            t = self.next[t as usize];
            Some(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_moves_keep_the_list_order() {
        let mut l = CfsTasks::new(2, 4);
        let c = CpuId(1);
        for t in 0..4 {
            l.push_head(c, TaskId(t));
        }
        let order = |l: &CfsTasks| l.iter(c).map(|t| t.0).collect::<Vec<_>>();
        assert_eq!(order(&l), [3, 2, 1, 0]);
        l.move_tail(c, TaskId(3));
        assert_eq!(order(&l), [2, 1, 0, 3]);
        l.move_head(c, TaskId(0));
        assert_eq!(order(&l), [0, 2, 1, 3]);
        l.remove(c, TaskId(2));
        assert_eq!(order(&l), [0, 1, 3]);
        assert_eq!(l.at(c, 2), Some(TaskId(3)));
        assert_eq!((l.at_tail(c, 0), l.at_tail(c, 2), l.at_tail(c, 3)), (Some(TaskId(3)), Some(TaskId(0)), None));
        assert_eq!(l.at(c, 3), None);
        assert_eq!(l.len(c), 3);
        assert_eq!(l.iter(CpuId(0)).count(), 0);
    }
}
