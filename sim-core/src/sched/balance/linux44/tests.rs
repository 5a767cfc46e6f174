//! Hand-computed cases for the 4.4 placement and balancing rules, run on a
//! mock machine whose loads, utilisations and run queues are set by hand,
//! so each figure in a comment can be checked with a pencil. End-to-end
//! traces over the whole engine are in `sched/balance/trace_tests.rs`.

use super::*;
use crate::sched::balance::{CpuSignals, PlaceKind, Placement, TaskHotInputs, TaskSignals};
use crate::sched::topology::MachineShape;

/// A machine reduced to what the policy reads.
struct Mock {
    clock_ns: u64,
    hz: u64,
    nr: Vec<u32>,
    curr: Vec<Option<TaskId>>,
    /// `rq->cfs_tasks` per CPU, head first.
    lists: Vec<Vec<TaskId>>,
    task_cpu: Vec<CpuId>,
    allowed: Vec<CpuSet>,
    /// Per task: `se.avg.load_avg` (also its `task_h_load`: root group).
    load_avg: Vec<u64>,
    exec_start: Vec<u64>,
    util: Vec<u64>,
    moves: Vec<(TaskId, CpuId, MigrateCause)>,
    kicks: Vec<CpuId>,
    active: Vec<CpuId>,
    /// Per CPU: `rq->rt_avg`, `rq->age_stamp`.
    rt: Vec<crate::sched::rt_pressure::RqPressure>,
}

impl Mock {
    fn new(cpus: u16, tasks: usize) -> Mock {
        Mock {
            clock_ns: 100_000_000,
            hz: 1000,
            nr: vec![0; cpus.into()],
            curr: vec![None; cpus.into()],
            lists: vec![Vec::new(); cpus.into()],
            task_cpu: vec![CpuId(0); tasks],
            allowed: vec![CpuSet::all(cpus); tasks],
            load_avg: vec![1024; tasks],
            exec_start: vec![0; tasks],
            util: vec![0; cpus.into()],
            moves: Vec::new(),
            kicks: Vec::new(),
            active: Vec::new(),
            rt: vec![Default::default(); cpus.into()],
        }
    }

    /// Queues `task` on `cpu` (at the list's head, as `account_entity_enqueue`);
    /// `running` makes it `curr`.
    fn queue(&mut self, task: u32, cpu: u16, running: bool) {
        let (t, c) = (TaskId(task), CpuId(cpu));
        self.task_cpu[t.index()] = c;
        self.nr[c.index()] += 1;
        self.lists[c.index()].insert(0, t);
        if running {
            self.curr[c.index()] = Some(t);
        }
    }

    /// A sleeping task that last ran on `cpu`.
    fn sleeping(&mut self, task: u32, cpu: u16) {
        self.task_cpu[task as usize] = CpuId(cpu);
    }
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
        self.nr[cpu.index()]
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
        self.lists[cpu.index()].iter().map(|t| self.load_avg[t.index()]).sum()
    }
    fn cpu_util_avg(&self, cpu: CpuId) -> u64 {
        self.util[cpu.index()]
    }
    fn h_nr_running(&self, cpu: CpuId) -> u32 {
        self.nr[cpu.index()]
    }
    fn task_load_avg(&self, task: TaskId) -> u64 {
        self.load_avg[task.index()]
    }
    fn task_h_load(&mut self, task: TaskId) -> u64 {
        self.load_avg[task.index()]
    }
    fn effective_load(&self, _of_task: TaskId, _cpu: CpuId, wl: i64, _wg: i64) -> i64 {
        wl // the root group: `if (!tg->parent) return wl;`
    }
    fn update_blocked_averages(&mut self, _cpu: CpuId) {}
    fn task_hot_inputs(&self, task: TaskId) -> TaskHotInputs {
        TaskHotInputs {
            sched_delayed: false,
            sched_idle: false,
            exec_start_ns: self.exec_start[task.index()],
            buddy: false,
        }
    }
    fn cpu_signals(&self, cpu: CpuId) -> CpuSignals {
        CpuSignals { load_avg: self.weighted_cpuload(cpu), util_avg: self.util[cpu.index()], ..CpuSignals::default() }
    }
    fn task_signals(&self, task: TaskId) -> TaskSignals {
        TaskSignals { load_avg: self.load_avg[task.index()], ..TaskSignals::default() }
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
    fn move_queued_task(&mut self, task: TaskId, to: CpuId, cause: MigrateCause, _by: CpuId) {
        let from = self.task_cpu[task.index()];
        assert_ne!(self.curr[from.index()], Some(task), "the policy moved a running task");
        assert!(self.allowed[task.index()].contains(to), "the policy moved a task outside its affinity");
        self.lists[from.index()].retain(|&t| t != task);
        self.nr[from.index()] -= 1;
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
    }
    fn rt_pressure(&self, cpu: CpuId) -> crate::sched::rt_pressure::RqPressure {
        self.rt[cpu.index()]
    }
}

fn smp(shape: MachineShape, tasks: usize) -> Smp44 {
    let n = shape.cpus();
    Smp44::new(Topology::build(shape, &CpuSet::empty(n)), 1000, tasks, true)
}

/// `cpu_load[]` as after many ticks at the current loads.
fn settle_cpu_load(s: &mut Smp44, m: &Mock) {
    for c in 0..s.rqs.len() {
        s.rqs[c].load.cpu_load = [m.weighted_cpuload(CpuId(c as u16)); crate::sched::cpu_load::CPU_LOAD_IDX_MAX];
    }
}

fn flat(cpus: u16) -> MachineShape {
    MachineShape::flat(cpus)
}

// ------------------------------------------------------------ wake_affine

/// Two CPUs in one MC domain (imbalance_pct 117, wake_idx 0). The waker W
/// (task 0) runs on CPU 0, a hog H (task 1) on CPU 1, where the wakee P
/// (task 2) last ran. Loads: CPU 0 1024, CPU 1 1024, P's load_avg `p_load`.
/// wake_affine (4.4): this_eff = 100·cap(prev)·(this_load + P) and
/// prev_eff = (100 + 17/2)·cap(this)·(load + 0), balanced if this_eff ≤ prev_eff.
fn wake_affine_case(p_load: u64) -> Placement {
    let mut m = Mock::new(2, 3);
    m.queue(0, 0, true);
    m.queue(1, 1, true);
    m.sleeping(2, 1);
    m.load_avg[2] = p_load;
    let s = smp(flat(2), 3);
    s.select_task_rq_fair(&m, TaskId(2), CpuId(1), PlaceKind::Wake { sync: false }, CpuId(0), Some(TaskId(0)))
}

#[test]
fn wake_affine_pulls_a_light_wakee_to_the_wakers_cpu() {
    // P = 50: this_eff = 100·1024·1074 = 109,977,600 ≤ prev_eff = 108·1024·1024 =
    // 113,246,208, so wake_affine picks CPU 0; select_idle_sibling(0) finds
    // no idle CPU (0 runs W, 1 runs H) and keeps it.
    assert_eq!(wake_affine_case(50), Placement { cpu: CpuId(0), cause: MigrateCause::WakeAffine });
}

#[test]
fn wake_affine_leaves_a_heavy_wakee_on_its_previous_cpu() {
    // P = 100: this_eff = 100·1024·1124 = 115,097,600 > 113,246,208: not
    // balanced, new_cpu stays prev_cpu 1 (busy, so select_idle_sibling keeps it).
    assert_eq!(wake_affine_case(100).cpu, CpuId(1));
    // The boundary: P = 81 gives 100·1105 = 110,500 ≤ 110,592 (108·1024): affine;
    // P = 82 gives 110,600 > 110,592: prev.
    assert_eq!(wake_affine_case(81).cpu, CpuId(0));
    assert_eq!(wake_affine_case(82).cpu, CpuId(1));
}

#[test]
fn wake_wide_skips_the_affine_path_for_a_waker_with_many_wakees() {
    // wake_wide: master = W's flips, slave = P's; with the LLC of 2 CPUs
    // (factor 2), slave ≥ 2 and master ≥ 2·slave spreads: want_affine = 0, so
    // no SD_WAKE_AFFINE domain is taken and, with SD_BALANCE_WAKE off on every
    // domain (sd_init), select_idle_sibling(prev) decides: P stays on CPU 1.
    let mut m = Mock::new(2, 3);
    m.queue(0, 0, true);
    m.queue(1, 1, true);
    m.sleeping(2, 1);
    m.load_avg[2] = 10;
    let mut s = smp(flat(2), 3);
    s.wakee[0].wakee_flips = 8;
    s.wakee[2].wakee_flips = 2;
    let placed = s.select_task_rq_fair(&m, TaskId(2), CpuId(1), PlaceKind::Wake { sync: false }, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed.cpu, CpuId(1));
    // Without the flips the same wake-up is affine (P = 10 is light).
    s.wakee[0].wakee_flips = 0;
    let placed = s.select_task_rq_fair(&m, TaskId(2), CpuId(1), PlaceKind::Wake { sync: false }, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed.cpu, CpuId(0));
}

#[test]
fn record_wakee_counts_switches_of_wakee_and_halves_each_second() {
    let mut s = smp(flat(2), 3);
    for (jiffies, p) in [(10, 1), (11, 1), (12, 2), (13, 1)] {
        s.record_wakee(jiffies, 1000, Some(TaskId(0)), CpuId(0), TaskId(p));
    }
    // 1, 1 (same wakee), 2, 1: three switches.
    assert_eq!(s.wakee[0].wakee_flips, 3);
    // More than HZ jiffies after the last decay (at 0): halve, then count.
    s.record_wakee(1013, 1000, Some(TaskId(0)), CpuId(0), TaskId(2));
    assert_eq!(s.wakee[0].wakee_flips, 3 / 2 + 1);
}

// ------------------------------------------------------ select_idle_sibling

/// One socket, two cores, two threads: CPUs 0 and 2 are core 0's threads,
/// 1 and 3 core 1's (siblings are i and i + cores). sd_llc is MC [0-3] with
/// groups {0,2} {1,3}; below it SMT [0,2] with groups {0} {2}.
fn smt_2x2() -> MachineShape {
    MachineShape { sockets: 1, cores_per_socket: 2, threads_per_core: 2, numa_nodes: 1, clusters_per_socket: None }
}

#[test]
fn select_idle_sibling_takes_an_idle_core_before_an_idle_sibling_thread() {
    // A timer wakes P (task 1) on CPU 0, where it last ran and where task 0
    // runs. this_cpu == prev_cpu, so the affine domain is taken without
    // wake_affine and select_idle_sibling(P, 0) decides: CPU 0 is busy; prev
    // is the target itself; from sd_llc (MC) down, the first group whose CPUs
    // are all idle and not the target: {0,2} holds the target, {1,3} is idle,
    // so its first allowed CPU, 1 — not the idle SMT sibling 2.
    let mut m = Mock::new(4, 2);
    m.queue(0, 0, true);
    m.sleeping(1, 0);
    let s = smp(smt_2x2(), 2);
    let placed = s.select_task_rq_fair(&m, TaskId(1), CpuId(0), PlaceKind::Wake { sync: false }, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed, Placement { cpu: CpuId(1), cause: MigrateCause::IdleSibling });
    // With core 1 half busy (task 0's twin on CPU 3), no MC group is all
    // idle; at the SMT level group {2} is: the sibling thread 2.
    let mut m = Mock::new(4, 3);
    m.queue(0, 0, true);
    m.queue(2, 3, true);
    m.sleeping(1, 0);
    let s = smp(smt_2x2(), 3);
    let placed = s.select_task_rq_fair(&m, TaskId(1), CpuId(0), PlaceKind::Wake { sync: false }, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed.cpu, CpuId(2));
}

#[test]
fn select_idle_sibling_prefers_an_idle_previous_cpu_sharing_the_cache() {
    // The target (waker's CPU 0 after wake_affine) is busy but P's previous
    // CPU 1 shares the LLC and is idle: "don't be stupid", return prev.
    let mut m = Mock::new(2, 2);
    m.queue(0, 0, true);
    m.sleeping(1, 1);
    m.load_avg[1] = 1;
    let s = smp(flat(2), 2);
    let placed = s.select_task_rq_fair(&m, TaskId(1), CpuId(1), PlaceKind::Wake { sync: false }, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed.cpu, CpuId(1));
}

// ------------------------------------------------------------ fork

#[test]
fn fork_goes_to_the_idlest_group_then_its_idlest_cpu() {
    // Flat 4 CPUs (one MC domain, SD_BALANCE_FORK, forkexec_idx 0). Loads
    // (weighted_cpuload): CPU 0 1024 (the parent), CPU 1 2048, CPU 2 1024,
    // CPU 3 0. find_idlest_group: local {0} = 1024; the least loaded other
    // group {3} = 0; 100·1024 < 108·0 is false, so {3} is returned and
    // find_idlest_cpu gives its idle CPU 3.
    let mut m = Mock::new(4, 6);
    m.queue(0, 0, true);
    m.queue(1, 1, true);
    m.queue(2, 1, false);
    m.queue(3, 2, true);
    m.sleeping(4, 0);
    let s = smp(flat(4), 6);
    let placed = s.select_task_rq_fair(&m, TaskId(4), CpuId(0), PlaceKind::Fork, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed, Placement { cpu: CpuId(3), cause: MigrateCause::Fork });
    // With task 5 (load 1000) on CPU 3 the idlest other group is within
    // half the imbalance margin of the local one (100·1024 = 102,400 <
    // 108·1000 = 108,000): find_idlest_group returns NULL and the child
    // stays on the parent's CPU 0.
    m.queue(5, 3, true);
    m.load_avg[5] = 1000;
    let placed = s.select_task_rq_fair(&m, TaskId(4), CpuId(0), PlaceKind::Fork, CpuId(0), Some(TaskId(0)));
    assert_eq!(placed.cpu, CpuId(0));
}

#[test]
fn fork_on_an_idle_machine_spreads_to_the_first_other_group() {
    // All loads 0: the first non-local group has min_load 0 and 100·0 < 108·0
    // is false, so every fork from CPU 0 leaves for CPU 1 (find_idlest_cpu:
    // the idle CPU with the latest idle stamp, the first on ties).
    let m = Mock::new(4, 1);
    let mut s = smp(flat(4), 1);
    let placed = s.select_task_rq_fair(&m, TaskId(0), CpuId(0), PlaceKind::Fork, CpuId(0), None);
    assert_eq!(placed.cpu, CpuId(1));
    // The CPU that went idle last wins among idle CPUs.
    s.rqs[1].idle_stamp = Some(5);
    s.rqs[2].idle_stamp = Some(9);
    s.rqs[3].idle_stamp = Some(7);
    // Only one CPU per group on a flat machine: find_idlest_group picks by
    // load (all 0) so group {1} again; its one CPU is 1.
    assert_eq!(s.select_task_rq_fair(&m, TaskId(0), CpuId(0), PlaceKind::Fork, CpuId(0), None).cpu, CpuId(1));
}

// ------------------------------------------------------------ load_balance

/// CPU 0 runs A (task 0) with B (1) and C (2) queued; CPU 1 is idle. Each
/// task weighs 1024 and CPU 0's utilisation is 1024 (always busy).
fn three_on_cpu0(b_ran_ns_ago: u64, c_ran_ns_ago: u64) -> Mock {
    let mut m = Mock::new(2, 3);
    m.queue(2, 0, false);
    m.queue(1, 0, false);
    m.queue(0, 0, true);
    m.exec_start[0] = m.clock_ns;
    m.exec_start[1] = m.clock_ns - b_ran_ns_ago;
    m.exec_start[2] = m.clock_ns - c_ran_ns_ago;
    m.util[0] = 1024;
    m
}

#[test]
fn periodic_balance_pulls_a_cold_task_and_refuses_a_cache_hot_one() {
    // CPU 1 (idle) balances MC. Group {0}: sum_nr_running 3 > weight 1 and
    // 100·1024 < 117·1024 (util): overloaded, so an idle CPU may pull.
    // avg_load = 3072 vs sds avg 1536; calculate_imbalance: min(1536·1024,
    // 1536·1024)/1024 = 1536 ≥ load_per_task 1024. detach_tasks walks
    // cfs_tasks from the head: A runs (skip), B ran 100 µs ago (< 0.5 ms
    // migration cost, nr_balance_failed 0 ≤ cache_nice_tries 1: hot, skip),
    // C ran 2 ms ago: moved (1024/2 ≤ 1536, imbalance left 512); then
    // loop 4 > loop_max 3 ends the walk. Only C moves.
    let mut m = three_on_cpu0(100_000, 2_000_000);
    let mut s = smp(flat(2), 3);
    let out = s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(out.moved, 1);
    assert_eq!(m.moves, vec![(TaskId(2), CpuId(1), MigrateCause::Periodic)]);
    assert_eq!(s.domain_state(CpuId(1), 0).nr_balance_failed, 0);
}

#[test]
fn a_cache_hot_task_moves_once_balancing_has_failed_more_than_cache_nice_tries() {
    // Both B and C are hot: nothing moves and nr_balance_failed counts up;
    // at 2 (> cache_nice_tries 1) can_migrate_task lets a hot task go.
    let mut m = three_on_cpu0(100_000, 200_000);
    let mut s = smp(flat(2), 3);
    for expect_failed in 1..=2 {
        let out = s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
        assert_eq!(out.moved, 0);
        assert_eq!(s.domain_state(CpuId(1), 0).nr_balance_failed, expect_failed);
    }
    // Third pass: A (running) goes to the tail, B moves (imbalance 1536 −
    // 1024 = 512 left), C moves too: 1024/2 > 512 is false (the kernel lets
    // the last task overshoot); imbalance −512 ends the walk.
    let out = s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(out.moved, 2);
    assert_eq!(m.moves.iter().map(|mv| mv.0).collect::<Vec<_>>(), [TaskId(1), TaskId(2)]);
}

#[test]
fn a_busy_cpu_leaves_an_imbalance_within_imbalance_pct() {
    // CPU 1 busy with one task (1024), CPU 0 with two (2048): not idle, so
    // find_busiest_group compares 100·2048 ≤ 117·1024? No (204,800 > 119,808):
    // imbalanced — and with 1024 vs 1100 it is balanced (110,000 ≤ 119,808).
    let mut m = three_on_cpu0(2_000_000, 2_000_000);
    m.lists[0].retain(|&t| t != TaskId(2));
    m.nr[0] = 2;
    m.queue(2, 1, true);
    m.util[1] = 1024;
    let mut s = smp(flat(2), 3);
    // busy_idx 2 reads cpu_load[1]: as after many ticks at these loads.
    settle_cpu_load(&mut s, &m);
    let out = s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::NotIdle, MigrateCause::Periodic);
    assert_eq!(out.moved, 1, "2048 vs 1024 is beyond imbalance_pct 117");
    let mut m = three_on_cpu0(2_000_000, 2_000_000);
    m.lists[0].retain(|&t| t != TaskId(2));
    m.nr[0] = 2;
    m.load_avg[0] = 550;
    m.load_avg[1] = 550;
    m.queue(2, 1, true);
    m.util[1] = 1024;
    settle_cpu_load(&mut s, &m);
    let out = s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::NotIdle, MigrateCause::Periodic);
    assert_eq!(out.moved, 0, "1100 vs 1024 is within imbalance_pct 117");
}

#[test]
fn newidle_balance_pulls_when_avg_idle_allows_and_skips_when_it_does_not() {
    // CPU 1 is about to idle; CPU 0 runs A with B (cold) queued. The root
    // domain is overloaded (a queue reached 2). idle_balance: avg_idle 1 ms
    // ≥ 0.5 ms migration cost, so load_balance(CPU_NEWLY_IDLE): the local
    // group has capacity and the busiest has none (2 tasks on 1 CPU,
    // util 1024·117 > 1024·100): force_balance, imbalance 1024, B moves.
    let mut m = three_on_cpu0(2_000_000, 2_000_000);
    m.lists[0].retain(|&t| t != TaskId(2));
    m.nr[0] = 2;
    let mut s = smp(flat(2), 3);
    s.add_nr_running(CpuId(0), 1, 2);
    s.rqs[1].avg_idle = 1_000_000;
    assert!(s.idle_balance(&mut m, CpuId(1)));
    assert_eq!(m.moves, vec![(TaskId(1), CpuId(1), MigrateCause::NewIdle)]);
    // The pass's modelled cost becomes the domain's max_newidle_lb_cost.
    assert_eq!(s.domain_state(CpuId(1), 0).max_newidle_lb_cost, NEWIDLE_COST_BASE_NS + 2 * NEWIDLE_COST_PER_CPU_NS);
    // avg_idle 0.4 ms < migration cost: idle_balance returns at once.
    let mut m = three_on_cpu0(2_000_000, 2_000_000);
    m.lists[0].retain(|&t| t != TaskId(2));
    m.nr[0] = 2;
    let mut s = smp(flat(2), 3);
    s.add_nr_running(CpuId(0), 1, 2);
    s.rqs[1].avg_idle = 400_000;
    assert!(!s.idle_balance(&mut m, CpuId(1)));
    assert!(m.moves.is_empty());
}

#[test]
fn avg_idle_is_an_eighth_weighted_average_capped_at_twice_the_max_cost() {
    let mut m = Mock::new(2, 1);
    let mut s = smp(flat(2), 1);
    s.rqs[0].avg_idle = 800_000;
    s.rqs[0].idle_stamp = Some(m.clock_ns - 400_000);
    s.ttwu_do_wakeup(m.clock_ns, CpuId(0));
    // 800,000 + (400,000 − 800,000)/8 = 750,000.
    assert_eq!(s.rqs[0].avg_idle, 750_000);
    assert_eq!(s.rqs[0].idle_stamp, None);
    m.clock_ns += 50_000_000;
    s.rqs[0].idle_stamp = Some(0);
    s.ttwu_do_wakeup(m.clock_ns, CpuId(0));
    // A long idle period is capped at 2·max_idle_balance_cost = 1 ms.
    assert_eq!(s.rqs[0].avg_idle, 1_000_000);
}

#[test]
fn active_balance_moves_the_running_task_when_the_queued_one_is_pinned() {
    // CPU 0 runs B (task 1, movable) with A (task 0) queued and pinned to
    // CPU 0; CPU 1 idle. Each balance fails: B runs (task_running), A is
    // pinned (LBF_SOME_PINNED, and no other CPU of the destination group
    // takes it). nr_balance_failed reaches 4 > cache_nice_tries + 2 = 3:
    // need_active_balance, B's CPU allows CPU 1, so CPU 0's stopper is queued
    // with push_cpu 1 and nr_balance_failed is set to cache_nice_tries + 1.
    let mut m = Mock::new(2, 2);
    m.allowed[0] = CpuSet::parse("0", 2).unwrap();
    m.queue(0, 0, false);
    m.queue(1, 0, true);
    m.exec_start[0] = m.clock_ns - 5_000_000;
    m.exec_start[1] = m.clock_ns;
    m.util[0] = 1024;
    let mut s = smp(flat(2), 2);
    for failed in 1..=3 {
        s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
        assert_eq!(s.domain_state(CpuId(1), 0).nr_balance_failed, failed);
        assert!(m.active.is_empty());
    }
    s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(m.active, vec![CpuId(0)]);
    assert_eq!(s.domain_state(CpuId(1), 0).nr_balance_failed, 2);
    // The stopper preempts B; detach_one_task walks the list from the head
    // (B, picked last) and may move it although hot (2 > cache_nice_tries).
    s.active_load_balance_cpu_stop(&mut m, CpuId(0));
    assert_eq!(m.moves, vec![(TaskId(1), CpuId(1), MigrateCause::Active)]);
    assert!(!s.rqs[0].active_balance);
}

#[test]
fn balance_intervals_grow_when_balanced_and_reset_after_a_pull() {
    // sd_init: balance_interval = min_interval = sd_weight (2 ms), max 4 ms.
    // out_balanced doubles it up to max_interval; a pull resets it.
    let mut m = Mock::new(2, 3);
    let mut s = smp(flat(2), 3);
    assert_eq!(s.domain_state(CpuId(1), 0).balance_interval, 2);
    s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(s.domain_state(CpuId(1), 0).balance_interval, 4);
    s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(s.domain_state(CpuId(1), 0).balance_interval, 4);
    m = three_on_cpu0(2_000_000, 2_000_000);
    s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(s.domain_state(CpuId(1), 0).balance_interval, 2);
    // get_sd_balance_interval: busy CPUs wait busy_factor (32) times longer.
    assert_eq!(s.get_sd_balance_interval(&m, CpuId(1), 0, true), 64);
    assert_eq!(s.get_sd_balance_interval(&m, CpuId(1), 0, false), 2);
}

#[test]
fn a_busy_tick_kicks_the_first_tickless_idle_cpu() {
    // nohz_kick_needed: CPU 0 runs two tasks, CPU 1 has stopped its tick and
    // is in nohz.idle_cpus_mask: kick it (find_new_ilb = first idle CPU).
    let mut m = three_on_cpu0(2_000_000, 2_000_000);
    let mut s = smp(flat(2), 3);
    s.tick_stopped(CpuId(1));
    s.scheduler_tick(&mut m, CpuId(0));
    assert_eq!(m.kicks, vec![CpuId(1)]);
    // The kick is still pending (NOHZ_BALANCE_KICK set until CPU 1 runs it):
    // no second IPI.
    s.scheduler_tick(&mut m, CpuId(0));
    assert_eq!(m.kicks.len(), 1);
}

#[test]
fn active_balance_moves_a_cpus_only_task_from_busy_siblings_to_an_idle_core() {
    // One socket, two cores, two threads (core 0 = {0,2}, core 1 = {1,3}):
    // hogs on CPU 0 and its sibling CPU 2, core 1 idle. CPU 1 balances MC:
    // groups {1,3} (local, idle) and {0,2}: 2 tasks on weight 2, util
    // 2·589 ≤ capacity: not overloaded by itself, but the child (SMT) has
    // SD_PREFER_SIBLING and the local group has capacity, so {0,2} is
    // treated as having none: Overloaded. avg_load = 2048·1024/1178 = 1780,
    // sds avg = 2048·1024/2356 = 890; imbalance = min(890·1178, 890·1178)/1024
    // = 1023 < load_per_task 1024, so fix_small_imbalance: 1780 + 890 ≥ 0 +
    // 890·2 gives imbalance = 1024. find_busiest_queue keeps CPU 0 (wl 1024
    // is not > 1024) although it runs its only task: no detach, a failure.
    // On the 4th failure (> cache_nice_tries 1 + 2) CPU 0's stopper is
    // queued; it preempts the hog and, counting itself in nr_running as
    // 4.4 does, pushes it to CPU 1.
    let mut m = Mock::new(4, 2);
    m.queue(0, 0, true);
    m.queue(1, 2, true);
    m.util[0] = 589;
    m.util[2] = 589;
    let mut s = smp(smt_2x2(), 2);
    let mc = s.topo.cpu_domains[1].len() - 1;
    for failed in 1..=3 {
        let out = s.load_balance(&mut m, CpuId(1), mc, CpuIdleType::Idle, MigrateCause::Periodic);
        assert_eq!(out.moved, 0);
        assert_eq!(s.domain_state(CpuId(1), mc).nr_balance_failed, failed);
    }
    s.load_balance(&mut m, CpuId(1), mc, CpuIdleType::Idle, MigrateCause::Periodic);
    assert_eq!(m.active.len(), 1);
    let busiest = m.active[0];
    s.active_load_balance_cpu_stop(&mut m, busiest);
    assert_eq!(m.moves.len(), 1);
    assert_eq!(m.moves[0].1, CpuId(1));
    assert_eq!(m.moves[0].2, MigrateCause::Active);
}

// ------------------------------------------------------------ RT pressure on capacity

/// CPU 0 runs B (task 0) alone; an RT task ran 90 ms of the last 100 ms
/// there and sleeps now: `rt_avg` = 90 ms · 1024, `age_stamp` 0, clock 100
/// ms. CPU 1 idles. (4.4 fair.c, docs/kernel/rt-capacity.md)
/// - CPU 0's own periodic balance refreshes its capacity
///   (`update_group_capacity` → `update_cpu_capacity`, lowest level):
///   `scale_rt_capacity`: total = 500 + 100 = 600 ms, used = 90e6·1024 /
///   600e6 = 153, so 1024 − 153 = 871; capacity = 1024 · 871 >> 10 = 871.
/// - `check_cpu_capacity` (MC, imbalance_pct 117): 871·117 = 101907 <
///   1024·100 = 102400: reduced.
/// - CPU 1 goes newly idle (`idle_balance`; its periodic CPU_IDLE balance
///   would leave a group with one task alone: `local->idle_cpus <=
///   busiest->idle_cpus + 1`), finds CPU 0 busiest, cannot detach the
///   running B, and `need_active_balance` answers at once: not
///   CPU_NOT_IDLE, one CFS task on src, reduced capacity, 871·117 <
///   1024·100. Without the RT time it never does for newidle (newidle
///   failures are not counted in `nr_balance_failed`).
#[test]
fn rt_time_cuts_capacity_and_a_newly_idle_cpu_pulls_the_lone_task_actively() {
    for rt_ms in [90u64, 0] {
        let mut m = Mock::new(2, 1);
        m.queue(0, 0, true);
        m.exec_start[0] = m.clock_ns;
        m.util[0] = 1024;
        m.rt[0].rt_avg = rt_ms * 1_000_000 * 1024;
        let mut s = smp(flat(2), 1);
        settle_cpu_load(&mut s, &m);
        s.load_balance(&mut m, CpuId(0), 0, CpuIdleType::NotIdle, MigrateCause::Periodic);
        let d = s.dom(CpuId(0), 0);
        if rt_ms == 0 {
            assert_eq!(s.capacity_of(CpuId(0)), 1024);
            assert!(!s.check_cpu_capacity(CpuId(0), d));
        } else {
            assert_eq!(Smp44::scale_rt_capacity(&m, CpuId(0)), 871);
            assert_eq!(s.capacity_of(CpuId(0)), 871);
            // sgc->capacity of CPU 0's group in the MC domain.
            assert_eq!(s.topo.domain(d).groups[s.topo.local_group(d, CpuId(0))].capacity, 871);
            assert!(s.check_cpu_capacity(CpuId(0), d));
        }
        s.load_balance(&mut m, CpuId(1), 0, CpuIdleType::NewlyIdle, MigrateCause::NewIdle);
        assert!(m.moves.is_empty());
        if rt_ms == 0 {
            assert!(m.active.is_empty(), "no pressure: no active balance from newidle");
        } else {
            assert_eq!(m.active, vec![CpuId(0)]);
            s.active_load_balance_cpu_stop(&mut m, CpuId(0));
            assert_eq!(m.moves, vec![(TaskId(0), CpuId(1), MigrateCause::Active)]);
        }
    }
}

/// `nohz_kick_needed`: a busy CPU whose capacity RT time cut kicks the
/// NO_HZ balancer though it runs one task (4.4 fair.c:7847-7854).
#[test]
fn a_cpu_with_reduced_capacity_kicks_the_nohz_balancer() {
    let mut m = Mock::new(2, 1);
    m.queue(0, 0, true);
    m.rt[0].rt_avg = 90 * 1_000_000 * 1024;
    let mut s = smp(flat(2), 1);
    s.tick_stopped(CpuId(1));
    assert!(!s.nohz_kick_needed(&m, CpuId(0)), "capacity not refreshed yet: boot value");
    s.load_balance(&mut m, CpuId(0), 0, CpuIdleType::NotIdle, MigrateCause::Periodic);
    assert!(s.nohz_kick_needed(&m, CpuId(0)));
}
