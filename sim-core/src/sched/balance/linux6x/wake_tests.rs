//! Hand-computed cases for 6.x wake-up and fork placement (`wake.rs`,
//! `idlest.rs`) on the mock machine: each comment names the kernel
//! condition that decides, with the numbers. `nr_idle_scan` and
//! `has_idle_cores` are set by hand where the balancer (SIS_UTIL's
//! `update_idle_cpu_scan`) or an idle entry would have set them; both start
//! at 0 (kzalloc'ed `sd_llc_shared`), which turns the LLC scan off.

use super::mock::{Mock, policy};
use super::*;
use crate::sched::balance::{MigrateCause, PlaceKind, Placement};
use crate::sched::model::{BALANCE_66, BALANCE_612, BALANCE_618};
use crate::sched::topology::MachineShape;

fn flat(cpus: u16) -> MachineShape {
    MachineShape::flat(cpus)
}

/// One socket, two cores of two threads: CPUs 0 and 2 are core 0's
/// threads, 1 and 3 core 1's (siblings are i and i + cores). sd_llc is MC
/// [0-3]; below it SMT [0,2] and [1,3].
fn smt_2x2() -> MachineShape {
    MachineShape { sockets: 1, cores_per_socket: 2, threads_per_core: 2, numa_nodes: 1, clusters_per_socket: None }
}

/// Two sockets of two single-thread cores in `nodes` NUMA nodes: sockets
/// {0,1} and {2,3} (MC each, the LLC).
fn two_sockets(nodes: u16) -> MachineShape {
    MachineShape { sockets: 2, cores_per_socket: 2, threads_per_core: 1, numa_nodes: nodes, clusters_per_socket: None }
}

/// `try_to_wake_up` of `p` (last on `prev`) run on `waker_cpu` by whatever
/// runs there.
fn wake(s: &mut Smp6x, m: &mut Mock, p: u32, prev: u16, waker_cpu: u16, sync: bool) -> Placement {
    let current = m.curr[usize::from(waker_cpu)];
    s.select_task_rq_fair(m, TaskId(p), CpuId(prev), PlaceKind::Wake { sync }, CpuId(waker_cpu), current)
}

/// `wake_up_new_task` of `p` forked on `cpu`.
fn fork(s: &mut Smp6x, m: &mut Mock, p: u32, cpu: u16) -> Placement {
    let current = m.curr[usize::from(cpu)];
    s.select_task_rq_fair(m, TaskId(p), CpuId(cpu), PlaceKind::Fork, CpuId(cpu), current)
}

/// The LLC's `sd_llc_shared` (indexed by `sd_llc_id`).
fn llc(s: &mut Smp6x, cpu: u16) -> &mut LlcShared {
    let id = s.topo.llc_id[usize::from(cpu)].index();
    &mut s.llc_shared[id]
}

/// Flat 4 CPUs: the waker (task 0) runs alone on CPU 0, the wakee P
/// (task 1) last ran on CPU 2, where task 2 runs and P's blocked load
/// (1024) still counts; CPUs 1 and 3 idle.
fn waker_on_0_prev_busy(rules: Balance6xRules) -> (Smp6x, Mock) {
    let mut m = Mock::new(4, 4);
    m.queue(0, 0, true);
    m.sleeping(1, 2);
    m.queue(2, 2, true);
    m.cpu_extra[2].load_avg = 1024;
    (policy(flat(4), rules, 4), m)
}

// ------------------------------------------------------------ wake_affine

#[test]
fn wake_affine_idle_takes_the_wakers_cpu_on_a_sync_wakeup() {
    let (mut s, mut m) = waker_on_0_prev_busy(BALANCE_612);
    // Not sync: wake_affine_idle is undecided (CPU 0 runs the waker, prev 2
    // is busy), and wake_affine_weight keeps prev: this_eff = (1024 + 1024)
    // ·100·1024 = 209,715,200 is not below prev_eff = (2048 − 1024)·108·1024
    // = 113,246,208. select_idle_sibling(P, 2, 2): 2 is busy and
    // nr_idle_scan = 0 ends select_idle_cpu at once: 2.
    assert_eq!(wake(&mut s, &mut m, 1, 2, 0, false).cpu, CpuId(2));
    // Sync: `sync && cpu_rq(this_cpu)->nr_running == 1` returns this_cpu 0;
    // select_idle_sibling(P, 2, 0) finds 0 busy, prev 2 busy, no scan: 0.
    let placed = wake(&mut s, &mut m, 1, 2, 0, true);
    assert_eq!(placed, Placement { cpu: CpuId(0), cause: MigrateCause::WakeAffineIdle });
    // With SIS_UTIL allowing a scan (nr_idle_scan 3 → nr = 4), the scan from
    // target + 1 finds CPU 1 idle: the wakee does not stack on the waker.
    llc(&mut s, 0).nr_idle_scan = 3;
    let placed = wake(&mut s, &mut m, 1, 2, 0, true);
    assert_eq!(placed, Placement { cpu: CpuId(1), cause: MigrateCause::SelectIdleCpu });
}

#[test]
fn a_delayed_task_on_the_wakers_cpu_blocks_the_sync_pull_in_6_12_not_in_6_18() {
    // CPU 0 also holds task 3, kept queued by DELAY_DEQUEUE (load 1024):
    // nr_running 2, h_nr_delayed 1. prev 2 busy, nr_idle_scan 0.
    for (rules, expect) in [(BALANCE_612, 2), (BALANCE_618, 0)] {
        let (mut s, mut m) = waker_on_0_prev_busy(rules);
        m.queue(3, 0, false);
        m.delayed[3] = true;
        // 6.12: nr_running == 1 fails (2), prev is busy, so
        // wake_affine_weight with sync: current_load 1024 ≤ cpu_load 2048,
        // this_eff = (2048 − 1024 + 1024)·100·1024 = 209,715,200 against
        // prev_eff = (2048 − 1024)·108·1024 + 1 = 113,246,209: prev 2.
        // 6.18: nr_running − cfs_h_nr_delayed = 2 − 1 == 1: this_cpu 0.
        let placed = wake(&mut s, &mut m, 1, 2, 0, true);
        assert_eq!(placed.cpu, CpuId(expect), "{}", rules.version);
    }
}

#[test]
fn wake_affine_weight_keeps_prev_within_the_bias_and_pulls_past_it() {
    // Flat 4 (MC, imbalance_pct 117: WA_BIAS 100 + 17/2 = 108). The waker
    // (load 300) runs on CPU 0; P (load 100) last ran on CPU 2, where task 2
    // (load 370) runs beside P's blocked 100: cpu_load(2) = 470. Both busy,
    // not sync: wake_affine_idle is undecided.
    let mut m = Mock::new(4, 3);
    m.queue(0, 0, true);
    m.signals(0, 300, 0);
    m.sleeping(1, 2);
    m.signals(1, 100, 0);
    m.queue(2, 2, true);
    m.signals(2, 370, 0);
    m.cpu_extra[2].load_avg = 100;
    let mut s = policy(flat(4), BALANCE_66, 3);
    // this_eff = (300 + 100)·100·1024 = 40,960,000; prev_eff = (470 − 100)
    // ·108·1024 = 40,919,040: this_eff < prev_eff fails, prev 2 stays.
    assert_eq!(wake(&mut s, &mut m, 1, 2, 0, false).cpu, CpuId(2));
    // Task 2 at 400 (cpu_load 500): prev_eff = 400·108·1024 = 44,236,800
    // > 40,960,000: the waker's CPU 0 (no scan: nr_idle_scan 0).
    m.signals(2, 400, 0);
    let placed = wake(&mut s, &mut m, 1, 2, 0, false);
    assert_eq!(placed, Placement { cpu: CpuId(0), cause: MigrateCause::WakeAffineWeight });
}

// ----------------------------------------------------------- wake_wide

#[test]
fn wake_wide_needs_llc_size_flips_on_both_sides() {
    // sd_llc_size 4 (flat 4): wide iff slave ≥ 4 and master ≥ 4·slave.
    let mut s = policy(flat(4), BALANCE_612, 2);
    for (waker, wakee, wide) in [(8, 3, false), (16, 4, true), (15, 4, false), (4, 16, true)] {
        s.tasks[0].wakee_flips = waker;
        s.tasks[1].wakee_flips = wakee;
        assert_eq!(s.wake_wide(Some(TaskId(0)), CpuId(0), TaskId(1)), wide, "{waker} vs {wakee}");
    }
}

#[test]
fn record_wakee_runs_once_per_wakeup_not_at_fork_and_decays_once() {
    let mut m = Mock::new(2, 3);
    m.queue(0, 0, true);
    m.sleeping(1, 1);
    m.sleeping(2, 1);
    let mut s = policy(flat(2), BALANCE_66, 3);
    // select_task_rq_fair(WF_TTWU) records the wakee once per call.
    wake(&mut s, &mut m, 1, 1, 0, false);
    assert_eq!((s.tasks[0].wakee_flips, s.tasks[0].last_wakee), (1, Some(TaskId(1))));
    wake(&mut s, &mut m, 1, 1, 0, false);
    assert_eq!(s.tasks[0].wakee_flips, 1, "the same wakee is no flip");
    // WF_FORK does not record.
    fork(&mut s, &mut m, 2, 0);
    assert_eq!(s.tasks[0].wakee_flips, 1);
    // Wakes of 2, 1 at jiffies 1, 2: flips 3. At jiffy 2000 (HZ 1000, more
    // than HZ after the decay stamp 0) one halving, 3 → 1, then the switch
    // to 2 counts: 2. About two seconds passed, still one halving.
    s.record_wakee(1, 1000, Some(TaskId(0)), CpuId(0), TaskId(2));
    s.record_wakee(2, 1000, Some(TaskId(0)), CpuId(0), TaskId(1));
    assert_eq!(s.tasks[0].wakee_flips, 3);
    s.record_wakee(2000, 1000, Some(TaskId(0)), CpuId(0), TaskId(2));
    assert_eq!((s.tasks[0].wakee_flips, s.tasks[0].wakee_flip_decay_ts), (2, 2000));
}

// ---------------------------------------------------- select_idle_sibling

#[test]
fn select_idle_core_finds_an_idle_core_before_an_idle_smt_sibling() {
    // SMT 2x2. The waker (task 0) runs on CPU 0, P's prev: this == prev, so
    // no wake_affine and select_idle_sibling(P, 0, 0). CPUs 1, 2, 3 idle;
    // has_idle_cores = 1, nr_idle_scan 4.
    let mut m = Mock::new(4, 3);
    m.queue(0, 0, true);
    m.sleeping(1, 0);
    let mut s = policy(smt_2x2(), BALANCE_612, 3);
    *llc(&mut s, 0) = LlcShared { has_idle_cores: true, nr_idle_scan: 4, ..LlcShared::default() };
    // has_idle_core skips select_idle_smt(prev 0) (whose sibling 2 is
    // idle); select_idle_cpu scans from target + 1: select_idle_core(1):
    // CPUs 1 and 3 both available_idle: return core 1.
    let placed = wake(&mut s, &mut m, 1, 0, 0, false);
    assert_eq!(placed, Placement { cpu: CpuId(1), cause: MigrateCause::SelectIdleCore });
    // Task 2 runs on CPU 3: core {1,3} fails (1 is recorded as idle_cpu, 3
    // is busy), core {0,2} fails at CPU 0; no idle core is left, so
    // set_idle_cores(0) and the recorded idle thread 1.
    m.queue(2, 3, true);
    let placed = wake(&mut s, &mut m, 1, 0, 0, false);
    assert_eq!(placed, Placement { cpu: CpuId(1), cause: MigrateCause::SelectIdleCpu });
    assert!(!s.llc_shared[0].has_idle_cores);
    // Now !has_idle_core and prev shares the target's cache:
    // select_idle_smt(prev 0) gives its idle sibling 2 before any scan.
    let placed = wake(&mut s, &mut m, 1, 0, 0, false);
    assert_eq!(placed, Placement { cpu: CpuId(2), cause: MigrateCause::SelectIdleSmt });
}

#[test]
fn recent_used_cpu_is_taken_when_idle_and_becomes_prev() {
    // Flat 4: the waker runs on CPU 2, P's prev (this == prev: no
    // wake_affine); CPUs 0 and 3 busy, CPU 1 idle, nr_idle_scan 0.
    let mut m = Mock::new(4, 4);
    m.queue(0, 2, true);
    m.sleeping(1, 2);
    m.queue(2, 0, true);
    m.queue(3, 3, true);
    let mut s = policy(flat(4), BALANCE_612, 4);
    s.tasks[1].recent_used_cpu = Some(CpuId(1));
    // Target 2 busy, prev == target; recent_used_cpu 1 != prev, != target,
    // shares the cache, is idle and allowed: 1; p->recent_used_cpu = prev 2.
    let placed = wake(&mut s, &mut m, 1, 2, 2, false);
    assert_eq!(placed, Placement { cpu: CpuId(1), cause: MigrateCause::RecentUsedCpu });
    assert_eq!(s.tasks[1].recent_used_cpu, Some(CpuId(2)));
    // A timer on an idle CPU 2 (the waker gone): the target is idle and
    // select_idle_sibling returns before it reads or writes recent_used_cpu.
    m.lists[2].clear();
    m.curr[2] = None;
    s.tasks[1].recent_used_cpu = Some(CpuId(1));
    assert_eq!(wake(&mut s, &mut m, 1, 2, 2, false).cpu, CpuId(2));
    assert_eq!(s.tasks[1].recent_used_cpu, Some(CpuId(1)));
}

#[test]
fn sis_util_budget_cuts_the_scan_short_on_a_busy_llc() {
    // Flat 4: select_idle_sibling(P, 0, 0) with CPU 0 (the waker) busy,
    // CPU 1 busy, CPU 2 idle, CPU 3 busy. The scan runs 1, 2, 3, 0.
    let mut m = Mock::new(4, 4);
    m.queue(0, 0, true);
    m.sleeping(1, 0);
    m.queue(2, 1, true);
    m.queue(3, 3, true);
    let mut s = policy(flat(4), BALANCE_66, 4);
    // nr_idle_scan 1: nr = 2; CPU 1: --nr = 1, busy; CPU 2: --nr = 0, the
    // budget is spent before CPU 2 is looked at: -1, and the target 0.
    llc(&mut s, 0).nr_idle_scan = 1;
    assert_eq!(wake(&mut s, &mut m, 1, 0, 0, false).cpu, CpuId(0));
    // nr_idle_scan 2: nr = 3; CPU 1 (nr 2) busy, CPU 2 (nr 1) idle: 2.
    llc(&mut s, 0).nr_idle_scan = 2;
    let placed = wake(&mut s, &mut m, 1, 0, 0, false);
    assert_eq!(placed, Placement { cpu: CpuId(2), cause: MigrateCause::SelectIdleCpu });
}

#[test]
fn select_idle_smt_keeps_to_the_llc_from_6_12_and_takes_an_isolated_sibling_in_6_6() {
    // SMT 2x2 with CPU 2 isolated: CPU 0's SMT level degenerates and its
    // LLC is MC [0,1,3]; P may run anywhere, CPU 2 included. The waker runs
    // on CPU 0 = P's prev; has_idle_cores 0, nr_idle_scan 3.
    let mut iso = crate::cpuset::CpuSet::empty(4);
    iso.insert(CpuId(2));
    for (rules, expect, cause) in
        [(BALANCE_66, 2, MigrateCause::SelectIdleSmt), (BALANCE_612, 1, MigrateCause::SelectIdleCpu)]
    {
        let mut m = Mock::new(4, 2);
        m.queue(0, 0, true);
        m.sleeping(1, 0);
        let mut s = Smp6x::new(rules, Topology::build_6x(smt_2x2(), &iso, rules.topology()), 1000, 2, true);
        llc(&mut s, 0).nr_idle_scan = 3;
        // select_idle_smt(prev 0) over cpu_smt_mask(0) = {0, 2}: 6.6 takes
        // the idle sibling 2; 6.12 skips it (not in sd_llc's span) and
        // select_idle_cpu scans [0,1,3] from 1: CPU 1 idle.
        let placed = wake(&mut s, &mut m, 1, 0, 0, false);
        assert_eq!(placed, Placement { cpu: CpuId(expect), cause }, "{}", rules.version);
    }
}

/// Flat 4 with a cluster level under the LLC, clusters {0,1} and {2,3}
/// (`clusters_per_socket = 2`): CLS [0-1] and [2-3] below MC [0-3], the
/// LLC; its groups are the clusters (`sg->flags` SD_CLUSTER from 6.12).
fn with_clusters(rules: Balance6xRules) -> Smp6x {
    let shape = MachineShape { clusters_per_socket: Some(2), ..flat(4) };
    Smp6x::new(rules, Topology::build_6x(shape, &crate::cpuset::CpuSet::empty(4), rules.topology()), 1000, 4, true)
}

#[test]
fn a_cluster_machine_scans_the_targets_cluster_before_an_idle_prev_from_6_12() {
    // Sync wake-up from the waker alone on CPU 0 (nr_running 1):
    // wake_affine_idle gives target 0. P's prev 3 is idle and shares the
    // LLC; CPU 1 idle, CPU 2 busy; nr_idle_scan 4.
    let setup = || {
        let mut m = Mock::new(4, 4);
        m.queue(0, 0, true);
        m.sleeping(1, 3);
        m.queue(2, 2, true);
        m
    };
    // 6.6: no SD_CLUSTER, sched_cluster_active off: "prev is cache affine
    // and idle": 3 (no move).
    let mut s = with_clusters(BALANCE_66);
    llc(&mut s, 0).nr_idle_scan = 4;
    assert_eq!(wake(&mut s, &mut setup(), 1, 3, 0, true).cpu, CpuId(3));
    // 6.12: prev 3 is outside target 0's cluster (cpus_share_resources
    // fails): prev_aff = 3, and select_idle_cpu scans the cluster {0,1}
    // from 1 first: CPU 1.
    let mut s = with_clusters(BALANCE_612);
    llc(&mut s, 0).nr_idle_scan = 4;
    let placed = wake(&mut s, &mut setup(), 1, 3, 0, true);
    assert_eq!(placed, Placement { cpu: CpuId(1), cause: MigrateCause::SelectIdleCpu });
    // CPU 1 busy and nr_idle_scan 1 (nr = 2): CPU 1 spends it (--nr = 1),
    // CPU 2 ends the scan (--nr = 0, -1); the prev_aff fallback gives 3.
    let mut m = setup();
    m.queue(3, 1, true);
    llc(&mut s, 0).nr_idle_scan = 1;
    assert_eq!(wake(&mut s, &mut m, 1, 3, 0, true).cpu, CpuId(3));
}

// ---------------------------------------------------- has_idle_cores

#[test]
fn a_cpu_going_idle_beside_idle_siblings_sets_has_idle_cores() {
    // SMT 2x2: CPU 0 switches to idle while its sibling 2 idles:
    // __update_idle_core sets the LLC's flag.
    let mut m = Mock::new(4, 2);
    let mut s = policy(smt_2x2(), BALANCE_612, 2);
    s.update_idle_core(&m, CpuId(0));
    assert!(s.llc_shared[0].has_idle_cores);
    // The sibling runs a SCHED_IDLE task: sched_idle_cpu, but not
    // available_idle_cpu: no idle core, the flag stays 0.
    let mut s = policy(smt_2x2(), BALANCE_612, 2);
    m.queue(1, 2, true);
    m.sched_idle[1] = true;
    s.update_idle_core(&m, CpuId(0));
    assert!(!s.llc_shared[0].has_idle_cores);
    // Without SMT (sched_smt_present off) update_idle_core does nothing.
    let mut s = policy(flat(4), BALANCE_612, 2);
    s.update_idle_core(&Mock::new(4, 2), CpuId(0));
    assert!(!s.llc_shared[0].has_idle_cores);
}

// -------------------------------------------------- fork: the slow path

#[test]
fn fork_goes_to_the_idle_socket_then_to_its_cpu_that_idled_last() {
    // Two sockets {0,1} {2,3} (DIE above the MCs, both SD_BALANCE_FORK):
    // the parent (task 0) runs on CPU 0, task 1 on CPU 1 (util 100 each).
    let mut m = Mock::new(4, 3);
    m.queue(0, 0, true);
    m.signals(0, 1024, 100);
    m.queue(1, 1, true);
    m.signals(1, 1024, 100);
    m.sleeping(2, 0);
    let mut s = policy(two_sockets(1), BALANCE_612, 3);
    s.rqs[2].idle_stamp = Some(5_000);
    s.rqs[3].idle_stamp = Some(9_000);
    // DIE: local {0,1} has 2 tasks on 2 CPUs, util 200 (2048·100 > 200·117):
    // has_spare with 0 idle CPUs; {2,3} has_spare with 2: the same type, so
    // local idle_cpus 0 < 2 sends it there. find_idlest_group_cpu: both
    // idle, no cpuidle state, the later idle_stamp: 3. Then CPU 3's MC
    // (weight 2 < 4): {3} and {2} both 1 idle CPU, local ≥ idlest: stay.
    assert_eq!(fork(&mut s, &mut m, 2, 0), Placement { cpu: CpuId(3), cause: MigrateCause::Fork });
    // idle_stamp 0 on both (never through newidle balance): neither idle
    // CPU is taken and least_loaded stays this_cpu 0; the walk goes down
    // CPU 0's MC, where {1} is as busy as {0}: the child stays on CPU 0.
    s.rqs[2].idle_stamp = None;
    s.rqs[3].idle_stamp = None;
    assert_eq!(fork(&mut s, &mut m, 2, 0).cpu, CpuId(0));
}

#[test]
fn fork_between_fully_busy_sockets_needs_more_than_imbalance_pct() {
    // Every CPU runs one task of util 900: each socket (capacity 2048) has
    // 2048·100 ≤ 1800·117 = 210,600: fully_busy, avg_load = load·1024/2048.
    let mut m = Mock::new(4, 5);
    for (t, cpu, load) in [(0, 0, 1500), (1, 1, 1500), (2, 2, 1400), (3, 3, 1400)] {
        m.queue(t, cpu, true);
        m.signals(t, load, 900);
    }
    m.sleeping(4, 0);
    let mut s = policy(two_sockets(1), BALANCE_612, 5);
    // Local avg 1500, idlest 1400, imbalance 1024·17/100 = 174: 1400 ≥ 1674
    // no, but 100·1500 = 150,000 ≤ 117·1400 = 163,800: stay. Below, CPU 0's
    // MC: {1} fully busy at 1500 too, 1500 ≥ 1500 + 174: stay on 0.
    assert_eq!(fork(&mut s, &mut m, 4, 0).cpu, CpuId(0));
    // Local avg 2000: 200,000 > 163,800 and 1400 < 2174: the other socket;
    // no idle CPU there, the least loaded, 2 (1400, the first of the tie).
    m.signals(0, 2000, 900);
    m.signals(1, 2000, 900);
    assert_eq!(fork(&mut s, &mut m, 4, 0).cpu, CpuId(2));
}

#[test]
fn fork_across_numa_nodes_stays_local_while_the_node_is_light() {
    // Two nodes of one socket {0,1} {2,3}: MC, then NUMA [0-3] (distance 21
    // keeps SD_BALANCE_FORK). imb_numa_nr: one LLC per node, 2 >> 3 = 0,
    // at least 1. Every CPU has gone idle at some point.
    let mut s = policy(two_sockets(2), BALANCE_618, 2);
    for c in 0..4 {
        s.rqs[c].idle_stamp = Some(1_000 * (c as u64 + 1));
    }
    // Fork from an idle CPU 0: both nodes has_spare with 2 idle CPUs;
    // imbalance |2 − 2| = 0 with dst_running 0 + 1 ≤ 1: adjust_numa_imbalance
    // allows it (≤ NUMA_IMBALANCE_MIN): stay; MC {0} vs {1} alike: CPU 0.
    let mut m = Mock::new(4, 2);
    m.sleeping(1, 0);
    assert_eq!(fork(&mut s, &mut m, 1, 0).cpu, CpuId(0));
    // With the parent running on CPU 0: dst_running 2 > 1, imbalance
    // |1 − 2| = 1 stands, local idle 1 < 2: node {2,3}, its latest idler 3.
    m.queue(0, 0, true);
    assert_eq!(fork(&mut s, &mut m, 1, 0).cpu, CpuId(3));
}

// ------------------------------------------------- through the engine

/// The wakee's migrations by cause when `waker` (pinned to CPU 0, where
/// it is queued first) wakes it with `sync` after 1 ms. The wakee forked
/// beside the busy CPU 0 (the waker queued and the implicit parent
/// running) went to CPU 1 (local has_spare group with 0 idle CPUs against
/// one there) and waits there; then a hog pinned to CPU 1 starts, so at
/// the wake-up both CPUs are busy. 6.6: no delayed dequeue to requeue the
/// wakee in place.
fn wakee_moves(sync: bool) -> Vec<(&'static str, u64)> {
    let toml = format!(
        "schema = 1\nseed = 1\nduration = \"3ms\"\n[kernel]\nversion = \"6.6\"\n[machine]\ncpus = 2\n\
         [[tasks]]\nname = \"waker\"\ncpus = \"0\"\nprogram = [{{ run = \"1ms\" }}, {{ wake = \"wakee\", sync = {sync} }}, {{ sleep = \"1s\" }}]\n\
         [[tasks]]\nname = \"wakee\"\nprogram = [\"wait\", {{ run = \"100us\" }}]\n\
         [[tasks]]\nname = \"hog\"\ncpus = \"1\"\nprogram = [{{ run = \"1s\" }}]\n"
    );
    let scenario = crate::scenario::Scenario::from_toml("sync.toml", &toml).unwrap_or_else(|e| panic!("{e}"));
    let r = crate::run(&scenario);
    r.tasks.iter().find(|t| t.name == "wakee").map(|t| t.migrations.clone()).unwrap_or_default()
}

#[test]
fn a_sync_wake_step_reaches_wake_affine_idle_through_the_engine() {
    // The fork to CPU 1, then `sync = true`: WF_SYNC, the waker alone on
    // CPU 0 (nr_running 1): wake_affine_idle pulls the wakee off the hog's CPU 1.
    assert_eq!(wakee_moves(true), vec![("fork", 1), ("wake_affine_idle", 1)]);
    // Without it wake_affine_idle is undecided (both CPUs busy): whatever
    // moves the wakee, it is not that rule.
    assert!(wakee_moves(false).iter().all(|&(c, _)| c != "wake_affine_idle"), "{:?}", wakee_moves(false));
}
