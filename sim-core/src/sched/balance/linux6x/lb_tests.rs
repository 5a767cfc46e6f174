//! Hand-computed cases for the 6.x balancer (`load_balance.rs`,
//! `lb_stats.rs`, `rebalance.rs`, `nohz.rs`) on the mock machine. Each
//! comment names the deciding kernel condition with its numbers; signals
//! are steady PELT values set by hand (a saturated task: load 1024,
//! runnable 1024, util its share of the CPU). jiffies = 100 at HZ 1000.

use super::lb_stats::{GroupType, SdLbStats};
use super::mock::{Mock, policy};
use super::nohz::{NOHZ_NEXT_KICK, NOHZ_STATS_KICK};
use super::*;
use crate::ids::TaskId;
use crate::sched::balance::linux44::{NEWIDLE_COST_BASE_NS, NEWIDLE_COST_PER_CPU_NS};
use crate::sched::balance::{CpuIdleType, CpuSignals, MigrateCause};
use crate::sched::model::{BALANCE_66, BALANCE_612, BALANCE_618};
use crate::sched::topology::MachineShape;

const PERIODIC: MigrateCause = MigrateCause::Periodic;

/// Queues an always-runnable task: load 1024, runnable 1024, util `util`.
fn saturated(m: &mut Mock, task: u32, cpu: u16, running: bool, util: u64) {
    m.queue(task, cpu, running);
    m.signals(task, 1024, util);
    m.task[task as usize].runnable_avg = 1024;
}

/// These CPUs run tasks and have had a busy tick: out of the NO_HZ set.
fn busy(smp: &mut Smp6x, cpus: &[u16]) {
    for &c in cpus {
        smp.nohz_balance_exit_idle(CpuId(c));
    }
}

/// One `sched_balance_rq` by `cpu` at `level`: (tasks moved, continue_balancing).
fn balance(smp: &mut Smp6x, m: &mut Mock, cpu: u16, level: usize, idle: CpuIdleType) -> (u32, bool) {
    let mut cb = true;
    let n = smp.sched_balance_rq(m, CpuId(cpu), level, idle, PERIODIC, &mut cb);
    (n, cb)
}

/// `update_sd_lb_stats` as `cpu` would see its domain at `level`.
fn stats(smp: &mut Smp6x, m: &Mock, cpu: u16, level: usize, idle: CpuIdleType) -> SdLbStats {
    let mut env = smp.lb_env(CpuId(cpu), level, idle, PERIODIC);
    let s = smp.update_sd_lb_stats(m, &env);
    smp.lb_scratch = std::mem::take(&mut env.cpus);
    s
}

fn moved(t: u32, cpu: u16, cause: MigrateCause) -> (TaskId, CpuId, MigrateCause) {
    (TaskId(t), CpuId(cpu), cause)
}

/// 2 CPUs (one MC level, single-CPU groups): CPU0 runs t0 and queues t1, t2
/// (utils 342/341/341, list head→tail [0, 2, 1]); CPU1 runs t3 (util 1024).
fn three_on_one(rules: Balance6xRules) -> (Smp6x, Mock) {
    let mut m = Mock::new(2, 4);
    saturated(&mut m, 1, 0, false, 341);
    saturated(&mut m, 2, 0, false, 341);
    saturated(&mut m, 0, 0, true, 342);
    saturated(&mut m, 3, 1, true, 1024);
    let mut smp = policy(MachineShape::flat(2), rules, 4);
    busy(&mut smp, &[0, 1]);
    (smp, m)
}

#[test]
fn overloaded_group_gives_migrate_load_at_the_busy_tick() {
    let (mut smp, mut m) = three_on_one(BALANCE_612);
    // CPU0: sum_nr_running 3 > weight 1 and capacity·100 < util·pct
    // (102400 < 1024·117) → group_overloaded, avg_load 3072·1024/1024.
    // CPU1: 1 ≤ 1 not overloaded; has_capacity: 1 < 1 no, runnable
    // 1024·117 < 1024·100 no, util 1024·100 > 1024·117 no → fully_busy.
    let s = stats(&mut smp, &m, 1, 0, CpuIdleType::NotIdle);
    assert_eq!((s.local_stat.group_type, s.busiest_stat.group_type), (GroupType::FullyBusy, GroupType::Overloaded));
    assert_eq!((s.busiest, s.busiest_stat.avg_load), (Some(0), 3072));
    smp.scheduler_tick(&mut m, CpuId(1));
    // calculate_imbalance: local avg 1024 < sds avg 4096·1024/2048 = 2048 →
    // migrate_load min((3072−2048)·1024, (2048−1024)·1024)/1024 = 1024;
    // the tail task t1 (load 1024, shr_bound(1024, 0) ≤ 1024) moves.
    assert_eq!(m.moves, [moved(1, 1, PERIODIC)]);
    // The root level sets rd->overloaded (CPU0 nr_running 3 > 1); the LLC's
    // scan depth: x = 2048/2 = 1024, x²·117²/(10000·1024) ≥ 1024 → 0.
    assert!(smp.overloaded);
    assert_eq!(smp.llc_shared[0].nr_idle_scan, 0);
    // Unbalanced: interval back to min_interval 2 ms; busy interval
    // 2·16 = 32 jiffies − 1 → next_balance 100 + 31.
    assert_eq!(smp.sd[1][0].balance_interval, 2);
    assert_eq!(smp.rqs[1].next_balance, 131);
}

#[test]
fn hot_tasks_move_once_balancing_failed_more_than_cache_nice_tries() {
    let (mut smp, mut m) = three_on_one(BALANCE_612);
    // t1 and t2 ran 0.1 ms ago: task_hot (delta < 0.5 ms).
    m.exec_start[1] = m.clock_ns - 100_000;
    m.exec_start[2] = m.clock_ns - 100_000;
    // nr_balance_failed 0, then 1: not > cache_nice_tries (MC: 1).
    for failed in 1..=2 {
        assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::NotIdle).0, 0);
        assert_eq!(smp.sd[1][0].nr_balance_failed, failed);
    }
    // The skipped tasks went to the head and came back round: same list.
    assert_eq!(m.lists[0], [TaskId(0), TaskId(2), TaskId(1)]);
    // 2 > 1: hot t1 may go, and shr_bound(1024, 2) = 256 ≤ 1024.
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::NotIdle).0, 1);
    assert_eq!((m.moves.as_slice(), smp.sd[1][0].nr_balance_failed), ([moved(1, 1, PERIODIC)].as_slice(), 0));
}

#[test]
fn fully_busy_groups_are_balanced_for_a_busy_cpu_and_back_off() {
    let mut m = Mock::new(2, 2);
    saturated(&mut m, 0, 0, true, 1024);
    saturated(&mut m, 1, 1, true, 1024);
    let mut smp = policy(MachineShape::flat(2), BALANCE_612, 2);
    busy(&mut smp, &[0, 1]);
    let s = stats(&mut smp, &m, 1, 0, CpuIdleType::NotIdle);
    assert_eq!((s.local_stat.group_type, s.busiest_stat.group_type), (GroupType::FullyBusy, GroupType::FullyBusy));
    // find_src_group: busiest not overloaded and `!env->idle` → out_balanced:
    // balance_interval 2 → 4 (< max_interval 4 before), busy interval 4·16 − 1.
    smp.scheduler_tick(&mut m, CpuId(1));
    assert!(m.moves.is_empty());
    assert_eq!((smp.sd[1][0].balance_interval, smp.rqs[1].next_balance), (4, 163));
    balance(&mut smp, &mut m, 1, 0, CpuIdleType::NotIdle);
    assert_eq!(smp.sd[1][0].balance_interval, 4, "max_interval caps the back-off");
}

#[test]
fn has_spare_groups_even_out_tasks_by_sibling_imbalance() {
    let mut m = Mock::new(2, 3);
    // CPU0: three light tasks (util 100, runnable 110 each): util 300 and
    // runnable 330 stay under capacity → not overloaded, has_spare.
    for (t, running) in [(2, false), (1, false), (0, true)] {
        m.queue(t, 0, running);
        m.signals(t, 300, 100);
        m.task[t as usize].runnable_avg = 110;
    }
    let mut smp = policy(MachineShape::flat(2), BALANCE_612, 3);
    busy(&mut smp, &[0]);
    let s = stats(&mut smp, &m, 1, 0, CpuIdleType::Idle);
    assert_eq!((s.local_stat.group_type, s.busiest_stat.group_type), (GroupType::HasSpare, GroupType::HasSpare));
    // Idle CPU1: busiest weight 1, sum_h_nr_running 3 ≠ 1 → force;
    // migrate_task: sibling_imbalance (1 core each) = 3 − 0, `>>= 1` → 1 task.
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 1);
    assert_eq!(m.moves, [moved(2, 1, PERIODIC)]);
}

#[test]
fn smt_balance_pulls_actively_after_cache_nice_tries_plus_two_failures() {
    // 2 cores × 2 threads: core 0 = CPUs {0, 2}, core 1 = {1, 3}.
    let shape = MachineShape { sockets: 1, cores_per_socket: 2, threads_per_core: 2, numa_nodes: 1, clusters_per_socket: None };
    let mut m = Mock::new(4, 2);
    saturated(&mut m, 0, 0, true, 1024);
    saturated(&mut m, 1, 2, true, 1024);
    let mut smp = policy(shape, BALANCE_612, 2);
    busy(&mut smp, &[0, 2]);
    // MC (level 1) seen by idle CPU1: group {0,2} has SD_SHARE_CPUCAPACITY
    // (its child is SMT) and sum_h_nr_running 2 > 1 → group_smt_balance.
    let s = stats(&mut smp, &m, 1, 1, CpuIdleType::Idle);
    assert_eq!((s.local_stat.group_type, s.busiest_stat.group_type), (GroupType::HasSpare, GroupType::SmtBalance));
    // prefer_sibling, sibling_imbalance 2 − 0 > 1 → migrate_task 1 from
    // CPU0; it runs one task (nr_running 1): no detach, a failure.
    for failed in 1..=3 {
        assert_eq!(balance(&mut smp, &mut m, 1, 1, CpuIdleType::Idle).0, 0);
        assert_eq!(smp.sd[1][1].nr_balance_failed, failed);
        assert!(m.active.is_empty(), "{failed} > cache_nice_tries 1 + 2 is false");
    }
    // 4 > 3: imbalanced_active_balance → the stopper of CPU0 pushes to CPU1.
    balance(&mut smp, &mut m, 1, 1, CpuIdleType::Idle);
    assert_eq!(m.active, [CpuId(0)]);
    assert!(smp.rqs[0].active_balance && smp.rqs[0].push_cpu == CpuId(1));
    smp.active_load_balance_cpu_stop(&mut m, CpuId(0));
    // The preempted t0 is a queued task now: detach_one_task takes it.
    assert_eq!((m.preempted.as_slice(), m.moves.as_slice()), ([CpuId(0)].as_slice(), [moved(0, 1, MigrateCause::Active)].as_slice()));
    assert_eq!(smp.sd[1][1].nr_balance_failed, 0, "active balancing done: reset");
    assert!(!smp.rqs[0].active_balance);
}

#[test]
fn should_we_balance_picks_an_idle_core_then_an_idle_smt_cpu() {
    // 2 sockets × 2 cores × 2 threads: socket 0 holds cores {0,4}, {1,5};
    // the DIE level (2) has groups = sockets; local group of CPU 0..5: {0,1,4,5}.
    let shape = MachineShape { sockets: 2, cores_per_socket: 2, threads_per_core: 2, numa_nodes: 1, clusters_per_socket: None };
    let idle_cb = |running: &[u16], cpu: u16| {
        let mut m = Mock::new(8, running.len());
        for (t, &c) in running.iter().enumerate() {
            saturated(&mut m, t as u32, c, true, 1024);
        }
        let mut smp = policy(shape, BALANCE_612, running.len());
        balance(&mut smp, &mut m, cpu, 2, CpuIdleType::Idle).1
    };
    // CPU4 busy: CPU0 is idle on a busy core (idle_smt), CPU1 on an idle
    // core → "the first idle core" CPU1 balances, CPU0 does not.
    assert!(idle_cb(&[4], 1) && !idle_cb(&[4], 0));
    // CPUs 4 and 5 busy: no idle core; the first idle SMT CPU, CPU0 (6.6.9+).
    assert!(idle_cb(&[4, 5], 0) && !idle_cb(&[4, 5], 1));
    // No idle CPU: group_balance_cpu, the group's first CPU (CPU0) — for a busy pass.
    let mut m = Mock::new(8, 4);
    for (t, c) in [0, 1, 4, 5].into_iter().enumerate() {
        saturated(&mut m, t as u32, c, true, 1024);
    }
    let mut smp = policy(shape, BALANCE_612, 4);
    assert!(!balance(&mut smp, &mut m, 5, 2, CpuIdleType::NotIdle).1);
    assert!(balance(&mut smp, &mut m, 0, 2, CpuIdleType::NotIdle).1);
}

#[test]
fn misfit_and_asym_packing_are_never_chosen_on_equal_cpus() {
    // One big task (util 1000, over 80% of a smaller CPU) alone on CPU0:
    // equal capacities → no SD_ASYM_CPUCAPACITY, misfit_task_load 0, and
    // without RT time no reduced capacity (see the next test); no
    // SD_ASYM_PACKING (no ITMT). Group {0}: has_capacity 1 < 1 no,
    // 1024·117 < 1000·100 no, 102400 > 117000 no → fully_busy.
    let mut m = Mock::new(2, 1);
    m.queue(0, 0, true);
    m.signals(0, 1024, 1000);
    let mut smp = policy(MachineShape::flat(2), BALANCE_618, 1);
    busy(&mut smp, &[0]);
    let s = stats(&mut smp, &m, 1, 0, CpuIdleType::Idle);
    assert_eq!(s.busiest_stat.group_type, GroupType::FullyBusy);
    // Not overloaded, one CFS task (sum_h_nr_running == 1) → out_balanced.
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 0);
    assert!(m.moves.is_empty() && m.active.is_empty() && smp.rqs[0].misfit_task_load == 0);
}

/// The same machine with RT time on CPU0 (docs/kernel/rt-capacity.md):
/// avg_rt.util_avg 200 + avg_dl.util_avg 100.
/// - CPU0's own busy balance refreshes its capacity (`update_cpu_capacity`
///   at the lowest level): `scale_rt_capacity` = 1024 − 300 = 724.
/// - `check_cpu_capacity` (MC, imbalance_pct 117): 724·117 = 84708 <
///   1024·100 = 102400, so for CPU1's idle balance `sched_reduced_capacity`
///   (one CFS task) makes group {0} `group_misfit_task` with
///   `group_misfit_task_load` = cpu_load 1024; it is forced
///   (`calculate_imbalance`: migrate_load 1024, not asym → not misfit).
/// - The running task cannot be detached; `need_active_balance`: idle dst,
///   one CFS task, reduced capacity, 724·117 < 1024·100 → the stopper runs
///   on CPU0 and moves t0 to CPU1. Every version alike.
#[test]
fn reduced_capacity_makes_a_misfit_group_and_an_active_balance() {
    for rules in [BALANCE_66, BALANCE_612, BALANCE_618] {
        let mut m = Mock::new(2, 1);
        m.queue(0, 0, true);
        m.signals(0, 1024, 1000);
        m.rt[0].avg_rt.util_avg = 200;
        m.rt[0].avg_dl.util_avg = 100;
        let mut smp = policy(MachineShape::flat(2), rules, 1);
        busy(&mut smp, &[0]);
        let s = stats(&mut smp, &m, 1, 0, CpuIdleType::Idle);
        assert_eq!(s.busiest_stat.group_type, GroupType::FullyBusy, "boot capacity until CPU0 refreshes it");
        assert_eq!(balance(&mut smp, &mut m, 0, 0, CpuIdleType::NotIdle).0, 0);
        assert_eq!(smp.capacity_of(CpuId(0)), 724);
        let d = smp.topo.cpu_domains[0][0];
        assert_eq!(smp.topo.domain(d).groups[smp.topo.local_group(d, CpuId(0))].capacity, 724);
        let s = stats(&mut smp, &m, 1, 0, CpuIdleType::Idle);
        assert_eq!((s.busiest_stat.group_type, s.busiest_stat.group_misfit_task_load), (GroupType::MisfitTask, 1024));
        // A busy destination does not look for reduced capacity (env->idle).
        let s = stats(&mut smp, &m, 1, 0, CpuIdleType::NotIdle);
        assert_eq!(s.busiest_stat.group_misfit_task_load, 0);
        assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 0);
        assert_eq!(m.active, vec![CpuId(0)], "{}", rules.version);
        smp.active_load_balance_cpu_stop(&mut m, CpuId(0));
        assert_eq!(m.moves, vec![moved(0, 1, MigrateCause::Active)], "{}", rules.version);
    }
}

#[test]
fn imbalanced_group_lets_the_parent_pull_a_pinned_task() {
    // 2 LLCs: MC {0,1}, {2,3}; DIE {0..3} (level 1) with groups {0,1}, {2,3}.
    let shape = MachineShape { sockets: 2, cores_per_socket: 2, threads_per_core: 1, numa_nodes: 1, clusters_per_socket: None };
    let mut m = Mock::new(4, 4);
    saturated(&mut m, 1, 0, false, 512);
    saturated(&mut m, 0, 0, true, 512);
    saturated(&mut m, 2, 2, true, 1024);
    saturated(&mut m, 3, 3, true, 1024);
    let pinned = CpuSet::parse("0,2", 4).unwrap();
    (m.allowed[0], m.allowed[1]) = (pinned.clone(), pinned);
    let mut smp = policy(shape, BALANCE_612, 4);
    busy(&mut smp, &[0, 2, 3]);
    let die = smp.dom(CpuId(2), 1);
    // Without the flag, {0,1} (2 tasks on 2 CPUs, util 1024·117 < 2048·100)
    // is has_spare and local {2,3} fully_busy: local type > busiest → balanced.
    let s = stats(&mut smp, &m, 2, 1, CpuIdleType::NotIdle);
    assert_eq!((s.local_stat.group_type, s.busiest_stat.group_type), (GroupType::FullyBusy, GroupType::HasSpare));
    assert_eq!(balance(&mut smp, &mut m, 2, 1, CpuIdleType::NotIdle).0, 0);
    // MC pass of idle CPU1: CPU0 overloaded, migrate_task 1, but both tasks
    // may not run on CPU1 → LBF_SOME_PINNED with imbalance 1 > 0 →
    // sd_parent->groups->sgc->imbalance = 1; all pinned: interval 2 → 4.
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 0);
    assert!(smp.sgc_imbalance[die.0 as usize][0]);
    assert_eq!(smp.sd[1][0].balance_interval, 4);
    // DIE pass of busy CPU2: sg_imbalanced → group_imbalanced → forced before
    // the `!env->idle` test; migrate_task 1: t1 may run on CPU2.
    let s = stats(&mut smp, &m, 2, 1, CpuIdleType::NotIdle);
    assert_eq!(s.busiest_stat.group_type, GroupType::Imbalanced);
    assert_eq!(balance(&mut smp, &mut m, 2, 1, CpuIdleType::NotIdle).0, 1);
    assert_eq!(m.moves, [moved(1, 2, PERIODIC)]);
}

#[test]
fn overloaded_group_above_the_llc_gives_migrate_util() {
    let shape = MachineShape { sockets: 2, cores_per_socket: 2, threads_per_core: 1, numa_nodes: 1, clusters_per_socket: None };
    let mut m = Mock::new(4, 5);
    // CPU0: t0 running, t2 at the tail (utils 341, 341, 342); CPU1, CPU3 one
    // saturated task each; CPU2 idle.
    saturated(&mut m, 2, 0, false, 342);
    saturated(&mut m, 1, 0, false, 341);
    saturated(&mut m, 0, 0, true, 341);
    saturated(&mut m, 3, 1, true, 1024);
    saturated(&mut m, 4, 3, true, 1024);
    let mut smp = policy(shape, BALANCE_612, 5);
    busy(&mut smp, &[0, 1, 3]);
    // {0,1}: 4 tasks > 2, 2048·100 < 2048·117 → overloaded; {2,3}: 1 < 2 → has_spare.
    let s = stats(&mut smp, &m, 2, 1, CpuIdleType::Idle);
    assert_eq!((s.local_stat.group_type, s.busiest_stat.group_type), (GroupType::HasSpare, GroupType::Overloaded));
    // DIE has no SD_SHARE_LLC → migrate_util, max(2048, 1024) − 1024 = 1024;
    // busiest queue: CPU0 (boosted util 1024, nr 3 > 1). 342 → 682 left,
    // 341 → 341 left, then CPU0 runs one task (`nr_running <= 1`) → stop.
    assert_eq!(balance(&mut smp, &mut m, 2, 1, CpuIdleType::Idle).0, 2);
    assert_eq!(m.moves, [moved(2, 2, PERIODIC), moved(1, 2, PERIODIC)]);
    // attach_tasks attaches the last detached first, each at the head.
    assert_eq!(m.lists[2], [TaskId(2), TaskId(1)]);
}

#[test]
fn lbf_dst_pinned_moves_tasks_to_another_cpu_of_the_group() {
    // As above, but t1 and t2 may not run on CPU2: the first CPU of the
    // local group {2,3} they allow, CPU3, becomes new_dst_cpu.
    let shape = MachineShape { sockets: 2, cores_per_socket: 2, threads_per_core: 1, numa_nodes: 1, clusters_per_socket: None };
    let mut m = Mock::new(4, 5);
    saturated(&mut m, 2, 0, false, 342);
    saturated(&mut m, 1, 0, false, 341);
    saturated(&mut m, 0, 0, true, 341);
    saturated(&mut m, 3, 1, true, 1024);
    saturated(&mut m, 4, 3, true, 1024);
    let not_2 = CpuSet::parse("0,1,3", 4).unwrap();
    (m.allowed[1], m.allowed[2]) = (not_2.clone(), not_2);
    let mut smp = policy(shape, BALANCE_612, 5);
    busy(&mut smp, &[0, 1, 3]);
    // First walk: t2, t1 pinned (LBF_DST_PINNED, new_dst_cpu 3), t0 running;
    // imbalance 1024 > 0 → dst_cpu 3, `goto more_balance`: both move there.
    assert_eq!(balance(&mut smp, &mut m, 2, 1, CpuIdleType::Idle).0, 2);
    assert_eq!(m.moves, [moved(2, 3, PERIODIC), moved(1, 3, PERIODIC)]);
    assert_eq!(m.lists[3], [TaskId(2), TaskId(1), TaskId(4)]);
}

#[test]
fn numa_allowance_keeps_a_pair_of_tasks_on_their_node() {
    // 2 nodes × 4 CPUs, one LLC each: MC then NUMA (level 1). imb_numa_nr:
    // one LLC per node → 4 >> 3 = 0 → at least 1.
    let shape = MachineShape { sockets: 2, cores_per_socket: 4, threads_per_core: 1, numa_nodes: 2, clusters_per_socket: None };
    let mut m = Mock::new(8, 3);
    saturated(&mut m, 0, 0, true, 1024);
    saturated(&mut m, 1, 1, true, 1024);
    let mut smp = policy(shape, BALANCE_612, 3);
    busy(&mut smp, &[0, 1]);
    assert_eq!(smp.topo.imb_numa_nr(CpuId(4), 1), 1);
    // prefer_sibling (group {0..3}'s child MC has it), sibling_imbalance
    // 2 − 0 = 2 > 1 → force; adjust_numa_imbalance(2, 0 + 1, 1): 1 ≤ 1 and
    // 2 ≤ NUMA_IMBALANCE_MIN → 0 → balanced.
    assert_eq!(balance(&mut smp, &mut m, 4, 1, CpuIdleType::Idle).0, 0);
    // A third task (queued on CPU0): 3 > 2 kept, `>> 1` → 1 moves.
    saturated(&mut m, 2, 0, false, 512);
    assert_eq!(balance(&mut smp, &mut m, 4, 1, CpuIdleType::Idle).0, 1);
    assert_eq!(m.moves, [moved(2, 4, PERIODIC)]);
}

/// 2 CPUs: CPU0 runs t0 and queues t1 (util 512 each); CPU1's task slept.
fn two_on_one(rules: Balance6xRules) -> (Smp6x, Mock) {
    let mut m = Mock::new(2, 2);
    saturated(&mut m, 1, 0, false, 512);
    saturated(&mut m, 0, 0, true, 512);
    let mut smp = policy(MachineShape::flat(2), rules, 2);
    busy(&mut smp, &[0, 1]);
    smp.add_nr_running(CpuId(0), 1, 2); // rd->overloaded, as enqueueing t1 set it
    (smp, m)
}

#[test]
fn newidle_pulls_one_task_and_keeps_its_cost() {
    let (mut smp, mut m) = two_on_one(BALANCE_612);
    // Gate: rd->overloaded, avg_idle 1 ms ≥ max_newidle_lb_cost 0. MC:
    // overloaded CPU0, sibling_imbalance 2 >> 1 → t1; PREEMPTION: one task.
    assert!(smp.idle_balance(&mut m, CpuId(1)));
    assert_eq!(m.moves, [moved(1, 1, MigrateCause::NewIdle)]);
    assert_eq!(m.blocked_updates, [CpuId(1)]);
    // The pass costs the model's 2 µs + 0.25 µs × 2 CPUs.
    assert_eq!(smp.sd[1][0].max_newidle_lb_cost, NEWIDLE_COST_BASE_NS + 2 * NEWIDLE_COST_PER_CPU_NS);
    assert_eq!(smp.rqs[1].idle_stamp, None);
}

#[test]
fn newidle_finds_hot_tasks_and_does_not_count_failures() {
    for (rules, cost) in [(BALANCE_612, NEWIDLE_COST_BASE_NS + 2 * NEWIDLE_COST_PER_CPU_NS), (BALANCE_618, 0)] {
        let (mut smp, mut m) = two_on_one(rules);
        m.exec_start[1] = m.clock_ns - 100_000;
        assert!(!smp.idle_balance(&mut m, CpuId(1)));
        assert!(m.moves.is_empty());
        // `idle != CPU_NEWLY_IDLE` guards nr_balance_failed++, so t1 stays hot.
        assert_eq!(smp.sd[1][0].nr_balance_failed, 0);
        // 6.18.0 charges a failure 3/2 × max_newidle_lb_cost (0 stays 0).
        assert_eq!(smp.sd[1][0].max_newidle_lb_cost, cost, "{}", rules.version);
        assert_eq!(smp.rqs[1].idle_stamp, Some(m.clock_ns));
        // Nothing pulled: nohz_newidle_balance (avg_idle 1 ms ≥ 0.5 ms,
        // nohz.has_blocked since boot, next_blocked due) → NOHZ_NEWILB_KICK,
        // then do_idle's stats-only pass: next_blocked = 100 + 32.
        assert_eq!((smp.nohz_next_blocked, smp.rqs[1].nohz_flags), (132, 0));
    }
}

#[test]
fn newidle_failure_cost_bump_is_capped_in_6_18() {
    let (mut smp, mut m) = two_on_one(BALANCE_618);
    m.exec_start[1] = m.clock_ns - 100_000;
    smp.sd[1][0].max_newidle_lb_cost = 1_000;
    smp.idle_balance(&mut m, CpuId(1));
    assert_eq!(smp.sd[1][0].max_newidle_lb_cost, 1_500, "3 × 1000 / 2");
    // 400 µs → 600 µs, capped at sysctl_sched_migration_cost + 200 ns.
    smp.sd[1][0].max_newidle_lb_cost = 400_000;
    smp.idle_balance(&mut m, CpuId(1));
    assert_eq!(smp.sd[1][0].max_newidle_lb_cost, 500_200);
}

#[test]
fn newidle_gate_closed_without_overload() {
    let (mut smp, mut m) = two_on_one(BALANCE_612);
    smp.overloaded = false;
    assert!(!smp.idle_balance(&mut m, CpuId(1)));
    assert!(m.moves.is_empty() && m.blocked_updates.is_empty());
    assert_eq!(smp.sd[1][0].max_newidle_lb_cost, 0);
    // update_next_balance: last_balance 0 + idle interval 2 < 100 + HZ.
    assert_eq!(smp.rqs[1].next_balance, 0);
}

#[test]
fn nohz_stats_kick_decays_blocked_load_and_moves_nothing() {
    let mut m = Mock::new(2, 1);
    saturated(&mut m, 0, 0, true, 1024);
    // CPU1 went tickless idle with blocked load.
    m.cpu_extra[1] = CpuSignals { load_avg: 200, util_avg: 50, ..CpuSignals::default() };
    m.blocked_decays_to_zero = true;
    let mut smp = policy(MachineShape::flat(2), BALANCE_612, 1);
    // CPU0's busy tick: exit_idle (nr_busy_cpus 0 → 1). nohz.has_blocked and
    // now 100 > next_blocked 0 → NOHZ_STATS_KICK. nohz.next_balance (0) is
    // due, but nr_running 1 < 2 and nr_busy_cpus 1 is not > 1 → no BALANCE;
    // nohz.needs_update (CPU1 entered idle) → NOHZ_NEXT_KICK.
    smp.scheduler_tick(&mut m, CpuId(0));
    assert_eq!(m.kicks, [CpuId(1)]);
    assert_eq!(smp.rqs[1].nohz_flags, NOHZ_STATS_KICK | NOHZ_NEXT_KICK);
    assert_eq!(smp.llc_shared[0].nr_busy_cpus, 1);
    // A second tick before the IPI lands: the kick bits are pending, no new IPI.
    m.clock_ns += 1_000_000;
    smp.scheduler_tick(&mut m, CpuId(0));
    assert_eq!(m.kicks.len(), 1);
    smp.nohz_kick_received(&mut m, CpuId(1));
    // _nohz_idle_balance(STATS | NEXT): CPU1's blocked load updated and gone
    // (has_blocked_load cleared, nohz.has_blocked not re-armed); no
    // sched_balance_domains for CPU1 (no BALANCE), so no move.
    assert!(m.moves.is_empty() && m.blocked_updates.contains(&CpuId(1)));
    assert!(!smp.rqs[1].has_blocked_load && !smp.nohz_has_blocked && !smp.nohz_needs_update);
    assert_eq!(smp.sd[1][0].last_balance, 0, "CPU1's domains were not balanced");
    assert_eq!(smp.nohz_next_blocked, 101 + 32, "now + msecs_to_jiffies(LOAD_AVG_PERIOD)");
    assert_eq!(smp.rqs[1].nohz_flags, 0);
}

#[test]
fn nohz_stats_kick_rearms_while_blocked_load_remains() {
    let mut m = Mock::new(2, 1);
    saturated(&mut m, 0, 0, true, 1024);
    m.cpu_extra[1] = CpuSignals { load_avg: 200, ..CpuSignals::default() };
    let mut smp = policy(MachineShape::flat(2), BALANCE_612, 1);
    smp.scheduler_tick(&mut m, CpuId(0));
    smp.nohz_kick_received(&mut m, CpuId(1));
    // update_nohz_stats: cfs_rq_has_blocked (load_avg 200) → has_blocked_load
    // stays set → nohz.has_blocked = 1 again for the next period.
    assert!(smp.rqs[1].has_blocked_load && smp.nohz_has_blocked);
}

#[test]
fn nohz_balance_kick_balances_for_the_idle_cpus() {
    // 4 CPUs (MC, single-CPU groups): CPU0 runs t0 and queues t1, CPU1 runs t2.
    let mut m = Mock::new(4, 3);
    saturated(&mut m, 1, 0, false, 512);
    saturated(&mut m, 0, 0, true, 512);
    saturated(&mut m, 2, 1, true, 1024);
    let mut smp = policy(MachineShape::flat(4), BALANCE_612, 3);
    busy(&mut smp, &[1]);
    // CPU0's tick: nr_running 2 ≥ 2 → STATS | BALANCE (| NEXT); kick_ilb:
    // nohz.next_balance = jiffies + 1, the first idle CPU of the set: CPU2.
    smp.scheduler_tick(&mut m, CpuId(0));
    assert_eq!((m.kicks.as_slice(), smp.nohz_next_balance), ([CpuId(2)].as_slice(), 101));
    smp.nohz_kick_received(&mut m, CpuId(2));
    // From the CPU after the kicked one: CPU3 balances first (sibling_imbalance
    // 2 >> 1 = 1 task), then CPU2 finds every group with one task.
    assert_eq!(m.moves, [moved(1, 3, MigrateCause::Nohz)]);
    // CPU3 pulled, so it is busy for its next interval: 4 ms × 16 − 1 = 63;
    // CPU2 found nothing: idle interval doubled to 8. nohz.next_balance =
    // the earliest next_balance of the CPUs visited.
    assert_eq!((smp.rqs[3].next_balance, smp.rqs[2].next_balance, smp.nohz_next_balance), (163, 108, 108));
}

#[test]
fn busy_interval_is_busy_factor_times_less_one_and_backs_off_to_max() {
    let mut m = Mock::new(4, 4);
    for c in 0..4 {
        saturated(&mut m, u32::from(c), c, true, 1024);
    }
    let mut smp = policy(MachineShape::flat(4), BALANCE_612, 4);
    busy(&mut smp, &[0, 1, 2, 3]);
    // MC of 4: min 4, max 8 ms. Nothing to pull (all fully busy, dst busy):
    // 4 → 8; busy interval msecs_to_jiffies(8·16) − 1 = 127.
    smp.scheduler_tick(&mut m, CpuId(0));
    assert_eq!((smp.sd[0][0].balance_interval, smp.rqs[0].next_balance), (8, 227));
    assert_eq!(smp.get_sd_balance_interval(1000, CpuId(0), 0, false), 8, "idle: no factor, no −1");
    m.clock_ns = 227_000_000;
    smp.scheduler_tick(&mut m, CpuId(0));
    assert_eq!((smp.sd[0][0].balance_interval, smp.rqs[0].next_balance), (8, 354));
}

/// 2 CPUs: CPU0 runs t0 (util 600) and keeps t1 queued by DELAY_DEQUEUE
/// (no load, util or runnable left); CPU1 idle.
fn delayed_pair(rules: Balance6xRules) -> (Smp6x, Mock) {
    let mut m = Mock::new(2, 2);
    m.queue(1, 0, false);
    m.signals(1, 0, 0);
    m.delayed[1] = true;
    m.queue(0, 0, true);
    m.signals(0, 600, 600);
    let mut smp = policy(MachineShape::flat(2), rules, 2);
    busy(&mut smp, &[0]);
    (smp, m)
}

#[test]
fn delayed_task_counts_as_runnable_in_6_12_not_in_6_18() {
    // {0}: nr_running 2 > 1 but util 600·117 < 102400, runnable 600 → has_spare.
    let (mut smp, mut m) = delayed_pair(BALANCE_612);
    let s = stats(&mut smp, &m, 1, 0, CpuIdleType::Idle);
    assert_eq!((s.busiest_stat.group_type, s.busiest_stat.sum_h_nr_running), (GroupType::HasSpare, 2));
    // 6.12.0: h_nr_running 2 ≠ 1 → force; sibling_imbalance (2 − 0) >> 1 = 1;
    // can_migrate_task has no delayed test: the delayed t1 (tail) is pulled.
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 1);
    assert_eq!(m.moves, [moved(1, 1, PERIODIC)]);
    // 6.18: h_nr_runnable 1 → `busiest->sum_h_nr_running == 1` → out_balanced.
    let (mut smp, mut m) = delayed_pair(BALANCE_618);
    assert_eq!(stats(&mut smp, &m, 1, 0, CpuIdleType::Idle).busiest_stat.sum_h_nr_running, 1);
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 0);
    assert!(m.moves.is_empty());
}

#[test]
fn delayed_task_moves_only_for_migrate_load_in_6_18() {
    // CPU1 runs t3 (fully busy, busy pass); CPU0 runs t0, queues t1 (util
    // 512, load 1024 each) and keeps t2 delayed (load 512) at the tail.
    let mut m = Mock::new(2, 4);
    saturated(&mut m, 2, 0, false, 0);
    m.signals(2, 512, 0);
    m.delayed[2] = true;
    saturated(&mut m, 1, 0, false, 512);
    saturated(&mut m, 0, 0, true, 512);
    saturated(&mut m, 3, 1, true, 1024);
    let mut smp = policy(MachineShape::flat(2), BALANCE_618, 4);
    busy(&mut smp, &[0, 1]);
    // {0}: 3 > 1, 102400 < 1024·117 → overloaded, avg 2560; local avg 1024 <
    // sds avg 3584·1024/2048 = 1792 → migrate_load min(768·1024, 768·1024)/1024
    // = 768: t2 (delayed, allowed for migrate_load) 512 ≤ 768 moves; t1 1024 > 256 stays.
    assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::NotIdle).0, 1);
    assert_eq!(m.moves, [moved(2, 1, PERIODIC)]);
}

#[test]
fn ineligible_task_waits_for_a_failed_balance_in_6_18() {
    for (rules, passes) in [(BALANCE_612, 1), (BALANCE_618, 2)] {
        let (mut smp, mut m) = three_on_one(rules);
        (m.ineligible[1], m.ineligible[2]) = (true, true);
        // 6.18: `!sd->nr_balance_failed && task_is_ineligible_on_dst_cpu`
        // (CPU1's queue is not empty) refuses t1 and t2 on the first pass.
        let mut n = 0;
        while m.moves.is_empty() && n < 3 {
            balance(&mut smp, &mut m, 1, 0, CpuIdleType::NotIdle);
            n += 1;
        }
        assert_eq!((n, m.moves.as_slice()), (passes, [moved(1, 1, PERIODIC)].as_slice()), "{}", rules.version);
    }
}

#[test]
fn loop_max_waits_for_a_movable_task_in_6_6() {
    // CPU0 runs t0 and queues t1, t2, all pinned to CPU0: LBF_ALL_PINNED
    // stays set. 6.12: `loop > loop_max` (3) stops after one turn of the
    // list. 6.6.9: it goes on until `loop > loop_break` (32): 32 rotations
    // of three tasks, 2 net.
    for (rules, list) in [(BALANCE_612, [0, 1, 2]), (BALANCE_66, [1, 2, 0])] {
        let mut m = Mock::new(2, 3);
        for (t, running) in [(2, false), (1, false), (0, true)] {
            saturated(&mut m, t, 0, running, 341);
            m.allowed[t as usize] = CpuSet::parse("0", 2).unwrap();
        }
        let mut smp = policy(MachineShape::flat(2), rules, 3);
        busy(&mut smp, &[0]);
        assert_eq!(balance(&mut smp, &mut m, 1, 0, CpuIdleType::Idle).0, 0);
        assert_eq!(m.lists[0], list.map(TaskId), "{}", rules.version);
        // out_all_pinned: failures reset, interval 2 → 4 (< MAX_PINNED_INTERVAL).
        assert_eq!((smp.sd[1][0].nr_balance_failed, smp.sd[1][0].balance_interval), (0, 4));
    }
}

#[test]
fn sis_util_scan_depth_is_set_by_periodic_passes_at_the_llc() {
    let mut m = Mock::new(4, 2);
    saturated(&mut m, 0, 0, true, 1024);
    saturated(&mut m, 1, 1, true, 1024);
    let mut smp = policy(MachineShape::flat(4), BALANCE_612, 2);
    busy(&mut smp, &[0, 1]);
    // Newidle passes do not write it.
    smp.llc_shared[0].nr_idle_scan = 99;
    balance(&mut smp, &mut m, 2, 0, CpuIdleType::NewlyIdle);
    assert_eq!(smp.llc_shared[0].nr_idle_scan, 99);
    // x = 2048 / 4 = 512; 512²·117²/(10000·1024) = 350; (1024 − 350)·4/1024 = 2.
    balance(&mut smp, &mut m, 2, 0, CpuIdleType::Idle);
    assert_eq!(smp.llc_shared[0].nr_idle_scan, 2);
}

#[test]
fn add_nr_running_sets_overload_when_crossing_two() {
    let mut smp = policy(MachineShape::flat(2), BALANCE_612, 0);
    // `prev_nr < 2 && rq->nr_running >= 2` only: a queue already at two
    // (after a root pass cleared the flag) does not set it again.
    smp.add_nr_running(CpuId(0), 2, 3);
    assert!(!smp.overloaded);
    smp.add_nr_running(CpuId(0), 1, 2);
    assert!(smp.overloaded);
}
