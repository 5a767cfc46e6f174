//! Root run-queue load tracking, migration of load, `task_h_load` and
//! `effective_load`, driven directly on `Cfs` (no engine) so every clock value
//! is explicit. Expected values come from Linux 4.4 fair.c as cited.

use super::SchedClass;
use super::entity::SchedEntity;
use super::fair::{Cfs, DEQUEUE_SLEEP, ENQUEUE_WAKEUP, ENQUEUE_WAKING};
use super::group::{GroupLoad, ROOT_GROUP};
use super::tunables::{CfsTunables, TunableScaling, TunableValue};
use super::weights::{LoadWeight, NICE_0_LOAD};
use crate::cpuset::CpuSet;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId};
use crate::sched::policy::Policy;

const MS: u64 = 1_000_000;

fn cfs(ncpus: u16) -> Cfs {
    let d = TunableValue::Default;
    let t = CfsTunables::resolve(ncpus, TunableScaling::None, d, d, d);
    Cfs::new(crate::sched::fair::FairConfig::of(crate::sched::model::KernelModel::Linux44, t), GroupLoad::Pelt, ncpus)
}

/// A nice-0 task entity placed on `group`'s queue on `cpu` (not queued).
fn task(c: &mut Cfs, group: GroupId, cpu: CpuId) -> EntityId {
    let se = EntityId(c.entities.len() as u32);
    c.entities.push(SchedEntity::new(LoadWeight::from_weight(NICE_0_LOAD), CfsRqId(0), Policy::Normal));
    c.set_task_rq(se, group, cpu);
    se
}

fn root(cpu: u16) -> CfsRqId {
    CfsRqId(u32::from(cpu))
}

/// Runs `curr` on its CPU from `from` to `to` with a 1 ms tick (`task_tick_fair`).
fn run_ticks(c: &mut Cfs, curr: EntityId, from: u64, to: u64) {
    let mut t = from;
    while t < to {
        t += MS;
        c.clock = t;
        c.task_tick(curr, false, false);
    }
}

/// Two new tasks on CPU 0; returns (the one picked to run, the other).
fn two_tasks_one_running(c: &mut Cfs) -> (EntityId, EntityId) {
    let first = task(c, ROOT_GROUP, CpuId(0));
    let second = task(c, ROOT_GROUP, CpuId(0));
    c.clock = 0;
    for se in [first, second] {
        c.task_fork(root(0), se);
        c.enqueue_task(se, 0);
    }
    let running = c.pick_next_task(root(0), None).expect("two tasks queued");
    (running, if running == first { second } else { first })
}

/// The root queue tracks PELT now: a task running alone on CPU 0 for 200 ms
/// makes `weighted_cpuload(0)` (root `runnable_load_avg`) and the root
/// `load_avg` follow the task's own average (4.4 enqueue_entity_load_avg adds
/// `se->avg` to both; `__update_load_avg` with the cfs_rq accrues the queue
/// weight into both), while CPU 1 stays at 0.
#[test]
fn root_queue_tracks_the_running_task() {
    let mut c = cfs(2);
    let a = task(&mut c, ROOT_GROUP, CpuId(0));
    c.clock = 0;
    c.task_fork(root(0), a);
    c.enqueue_task(a, 0);
    // A new entity arrives with a full average (init_entity_runnable_average).
    assert_eq!((c.weighted_cpuload(CpuId(0)), c.cfs_rq_load_avg(root(0))), (1024, 1024));
    assert!(c.rq(root(0)).on_list, "list_add_leaf_cfs_rq covers root queues");
    assert_eq!(c.pick_next_task(root(0), None), Some(a));
    run_ticks(&mut c, a, 0, 200 * MS);
    let (w, q, t) = (c.weighted_cpuload(CpuId(0)), c.cfs_rq_load_avg(root(0)), c.task_load_avg(a));
    assert!((1000..=1024).contains(&t), "always runnable: near its weight, got {t}");
    assert!(w.abs_diff(t) <= 10 && q.abs_diff(t) <= 10, "runnable {w}, queue {q}, task {t}");
    assert_eq!(c.weighted_cpuload(CpuId(1)), 0);
    assert_eq!(c.task_group_of(a), ROOT_GROUP);
}

/// The wakeup path: A sleeps on CPU 0 (dequeue_entity_load_avg removes its
/// average from runnable_load_avg at once but leaves it in the blocked
/// `avg.load_avg`), then wakes on CPU 1: migrate_task_rq_fair puts A's average
/// into CPU 0's removed_load_avg (subtracted at that queue's next update) and
/// clears last_update_time/exec_start, so the enqueue on CPU 1 attaches A's
/// average there (attach_entity_load_avg) and adds it to CPU 1's runnable load.
#[test]
fn a_task_migrated_on_wakeup_moves_its_load() {
    let mut c = cfs(2);
    let (a, b) = two_tasks_one_running(&mut c);
    assert_eq!(c.weighted_cpuload(CpuId(0)), 2048);
    run_ticks(&mut c, a, 0, 100 * MS);
    let before = c.weighted_cpuload(CpuId(0));
    // A blocks: __schedule → deactivate_task(DEQUEUE_SLEEP).
    c.clock = 100 * MS + 10_000;
    c.dequeue_task(a, DEQUEUE_SLEEP);
    let a_load = c.task_load_avg(a);
    let after = c.weighted_cpuload(CpuId(0));
    assert!(a_load > 0 && after < before, "{before} → {after}");
    // dequeue_entity_load_avg: runnable -= se->avg.load_avg after the update.
    assert!(after.abs_diff(c.task_load_avg(b)) <= 10, "only B is runnable: {after} vs {}", c.task_load_avg(b));
    let blocked = c.cfs_rq_load_avg(root(0));
    assert!(blocked >= after + a_load - 10, "A's blocked load stays in avg.load_avg: {blocked}");
    c.pick_next_task(root(0), Some(a));

    // Wakeup on CPU 1: task_waking_fair, set_task_cpu → migrate_task_rq_fair, set_task_rq.
    c.clock = 101 * MS;
    c.task_waking(a);
    c.migrate_task_rq(a, false);
    assert_eq!(c.rq(root(0)).removed_load_avg, a_load, "aged to CPU 0's last update, which A's update was");
    assert!(!c.se(a).avg.attached, "4.4: last_update_time = 0");
    assert_eq!(c.se(a).exec_start, 0, "no longer cache hot");
    assert_eq!(c.cfs_rq_load_avg(root(0)), blocked, "removed load leaves at the queue's next update");
    c.set_task_rq(a, ROOT_GROUP, CpuId(1));
    c.clock = 101 * MS; // CPU 1's clock
    c.enqueue_task(a, ENQUEUE_WAKEUP | ENQUEUE_WAKING);
    assert!(c.se(a).avg.attached);
    assert_eq!(c.weighted_cpuload(CpuId(1)), a_load, "enqueue_entity_load_avg adds the migrated average");
    assert_eq!(c.cfs_rq_load_avg(root(1)), a_load, "attach_entity_load_avg");

    // CPU 0's next update (here update_blocked_averages) subtracts the removed load.
    c.clock = 102 * MS;
    c.update_blocked_averages(CpuId(0));
    assert_eq!(c.rq(root(0)).removed_load_avg, 0);
    let now = c.cfs_rq_load_avg(root(0));
    assert!(now + a_load <= blocked + 10 && now + 50 >= after, "{blocked} → {now} (runnable {after})");
}

/// The load-balance path (4.4 detach_task / attach_task): deactivate_task
/// (flags 0) takes the queued task's average out of the source's runnable
/// load at once; set_task_cpu → migrate_task_rq_fair; activate_task on the
/// destination attaches it.
#[test]
fn detach_and_attach_task_move_runnable_load() {
    let mut c = cfs(2);
    let (a, b) = two_tasks_one_running(&mut c);
    run_ticks(&mut c, a, 0, 50 * MS);
    // B is queued, not running: the balancer may pull it.
    c.clock = 50 * MS + 500_000;
    c.dequeue_task(b, 0);
    let b_load = c.task_load_avg(b);
    assert!(c.weighted_cpuload(CpuId(0)).abs_diff(c.task_load_avg(a)) <= 10);
    c.migrate_task_rq(b, false);
    c.set_task_rq(b, ROOT_GROUP, CpuId(1));
    c.enqueue_task(b, 0);
    assert_eq!(c.weighted_cpuload(CpuId(1)), b_load);
    assert_eq!(c.rq(root(0)).removed_load_avg, b_load);
}

/// One group /g (shares 1024) on CPU 0 with two tasks, next to a root task.
fn grouped() -> (Cfs, GroupId, [EntityId; 3]) {
    let mut c = cfs(2);
    let g = c.create_group("/g".into(), ROOT_GROUP, NICE_0_LOAD, &CpuSet::all(2));
    let x = task(&mut c, g, CpuId(0));
    let y = task(&mut c, g, CpuId(0));
    let r = task(&mut c, ROOT_GROUP, CpuId(0));
    c.clock = 0;
    for se in [x, y, r] {
        let q = c.se(se).cfs_rq;
        c.task_fork(q, se);
        c.enqueue_task(se, 0);
    }
    let p = c.pick_next_task(root(0), None).unwrap();
    run_ticks(&mut c, p, 0, 80 * MS);
    (c, g, [x, y, r])
}

/// task_h_load (4.4 update_cfs_rq_h_load): the root queue's h_load is its
/// load_avg; a group queue's is h_load(parent) · gse.load_avg /
/// (parent.load_avg + 1); a task's is load_avg · h_load / (queue load_avg + 1).
/// The value is cached per jiffy: a later change within the jiffy is not seen.
#[test]
fn task_h_load_scales_through_the_group() {
    let (mut c, g, [x, _y, r]) = grouped();
    let gq = c.groups[g.index()].cfs_rq[0].unwrap();
    let gse = c.groups[g.index()].se[0].unwrap();
    let root_load = c.cfs_rq_load_avg(root(0));
    let gq_h = root_load * c.se(gse).avg.load_avg / (root_load + 1);
    let want_x = c.task_load_avg(x) * gq_h / (c.cfs_rq_load_avg(gq) + 1);
    let want_r = c.task_load_avg(r) * root_load / (root_load + 1);
    assert_eq!(c.task_h_load(x, 7), want_x);
    assert_eq!(c.rq(gq).h_load, gq_h);
    assert_eq!(c.task_h_load(r, 7), want_r);
    // Two equal tasks share the group entity's load: each about half of it.
    assert!(want_x.abs_diff(c.se(gse).avg.load_avg / 2) <= c.se(gse).avg.load_avg / 8, "{want_x}");
    // Cached for jiffy 7: move the averages, the group queue's h_load stays.
    let curr = c.rq(root(0)).curr.unwrap();
    run_ticks(&mut c, curr, 80 * MS, 120 * MS);
    c.task_h_load(x, 7);
    assert_eq!(c.rq(gq).h_load, gq_h, "last_h_load_update == jiffies: not recomputed");
    c.task_h_load(x, 8);
    let root_load = c.cfs_rq_load_avg(root(0));
    assert_eq!(c.rq(gq).h_load, root_load * c.se(gse).avg.load_avg / (root_load + 1));
}

/// effective_load (4.4, CONFIG_FAIR_GROUP_SCHED) with hand-set averages:
/// w = 2048 (this CPU's group load), tg->load_avg = 3072 of which this CPU
/// contributed 2048, wl = wg = 1024:
/// W = 1024 + 3072 − 2048 + 2048 = 4096, w = 3072, wl = 3072 · 1024 / 4096 = 768,
/// minus the group entity's load_avg 683 → 85.
#[test]
fn effective_load_by_hand() {
    let mut c = cfs(2);
    let g = c.create_group("/g".into(), ROOT_GROUP, NICE_0_LOAD, &CpuSet::all(2));
    let (gq, gse) = (c.groups[g.index()].cfs_rq[0].unwrap(), c.groups[g.index()].se[0].unwrap());
    c.cfs_rqs[gq.index()].avg.load_avg = 2048;
    c.cfs_rqs[gq.index()].tg_load_avg_contrib = 2048;
    c.groups[g.index()].load_avg = 3072;
    c.entities[gse.index()].avg.load_avg = 683;
    assert_eq!(c.effective_load(g, CpuId(0), 1024, 1024), 85);
    // w ≥ W: the whole shares, 1024 − 683.
    c.groups[g.index()].load_avg = 0;
    c.cfs_rqs[gq.index()].tg_load_avg_contrib = 0;
    assert_eq!(c.effective_load(g, CpuId(0), 1024, 0), 1024 - 683);
    // Taking more than the queue has: W = 2048, w = 2048 − 4096 = −2048,
    // wl = −2048 · 1024 / 2048 = −1024, clipped to MIN_SHARES = 2.
    c.groups[g.index()].load_avg = 3072;
    c.cfs_rqs[gq.index()].tg_load_avg_contrib = 2048;
    assert_eq!(c.effective_load(g, CpuId(0), -4096, -1024), 2 - 683);
    // The root group: wl unchanged (the trivial, non-cgroup case).
    assert_eq!(c.effective_load(ROOT_GROUP, CpuId(0), 1234, 99), 1234);
    // A group with no queue on CPU 1 in this model: wl unchanged.
    let only0 = CpuSet::parse("0", 2).unwrap();
    let h = c.create_group("/h".into(), ROOT_GROUP, NICE_0_LOAD, &only0);
    assert_eq!(c.effective_load(h, CpuId(1), 500, 500), 500);
}

/// Nested groups: the first level gets wg, the next only redistributes
/// (wg = 0). /g/k on CPU 0, k's queue load 1024 of k's total 1024, wl = wg =
/// 1024: W = 1024 + 1024 − 1024 + 1024 = 2048, w = 2048 → w ≥ W → wl = 1024,
/// − k's entity 1024 = 0; then at /g: w = 1024 (g's queue), W = 0 + 1024 −
/// 1024 + 1024 = 1024, w + 0 = 1024 ≥ W → wl = 1024 − g's entity 700 = 324.
#[test]
fn effective_load_nested() {
    let mut c = cfs(1);
    let all = CpuSet::all(1);
    let g = c.create_group("/g".into(), ROOT_GROUP, NICE_0_LOAD, &all);
    let k = c.create_group("/g/k".into(), g, NICE_0_LOAD, &all);
    let (gq, gse) = (c.groups[g.index()].cfs_rq[0].unwrap(), c.groups[g.index()].se[0].unwrap());
    let (kq, kse) = (c.groups[k.index()].cfs_rq[0].unwrap(), c.groups[k.index()].se[0].unwrap());
    for (q, tg) in [(gq, g), (kq, k)] {
        c.cfs_rqs[q.index()].avg.load_avg = 1024;
        c.cfs_rqs[q.index()].tg_load_avg_contrib = 1024;
        c.groups[tg.index()].load_avg = 1024;
    }
    c.entities[kse.index()].avg.load_avg = 1024;
    c.entities[gse.index()].avg.load_avg = 700;
    assert_eq!(c.effective_load(k, CpuId(0), 1024, 1024), 324);
    assert_eq!(c.task_group_of(kse), g, "k's entity sits on g's queue");
}
