//! 6.x load tracking on the fair class (6.6, 6.12, 6.18 fair.c), driven
//! directly on `Cfs` (no engine) so every clock value is explicit: moving a
//! task's average between queues (removal at a wakeup, detach by the
//! balancer, attach), propagation through a group entity, blocked load and
//! the leaf list, util_est, the runnable count of delayed tasks, and a new
//! task's initial util. Expected values are derived in the comments.

use super::SchedClass;
use super::entity::SchedEntity;
use super::fair::{Cfs, DEQUEUE_MIGRATING, DEQUEUE_SLEEP, ENQUEUE_WAKEUP, FairConfig};
use super::group::{GroupLoad, ROOT_GROUP};
use super::model::KernelModel;
use super::pelt6x::UTIL_AVG_UNCHANGED;
use super::tunables::{CfsTunables, TunableScaling, TunableValue};
use super::weights::{LoadWeight, NICE_0_LOAD};
use crate::cpuset::CpuSet;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId};
use crate::sched::policy::Policy;

const MS: u64 = 1_000_000;

fn cfs(model: KernelModel, ncpus: u16) -> Cfs {
    let d = TunableValue::Default;
    let t = CfsTunables::resolve(ncpus, TunableScaling::None, d, d, d);
    Cfs::new(FairConfig::of(model, t), GroupLoad::Pelt, ncpus)
}

/// A nice-0 task of `group` on `cpu`, forked there (`sched_fork`:
/// `init_entity_runnable_average`), not queued yet.
fn task(c: &mut Cfs, group: GroupId, cpu: CpuId) -> EntityId {
    let se = EntityId(c.entities.len() as u32);
    c.entities.push(SchedEntity::new(LoadWeight::from_weight(NICE_0_LOAD), CfsRqId(0), Policy::Normal));
    c.set_task_rq(se, group, cpu);
    let q = c.cfs_rq_of(se);
    c.task_fork(q, se);
    se
}

fn root(cpu: u16) -> CfsRqId {
    CfsRqId(u32::from(cpu))
}

/// `curr` runs from `from` to `to` with a 1 ms tick.
fn run_ticks(c: &mut Cfs, curr: EntityId, from: u64, to: u64) {
    let mut t = from;
    while t < to {
        t += MS;
        c.clock = t;
        c.task_tick(curr, false, false);
    }
}

/// A task that ran alone on CPU 0 for 100 ms and went to sleep at 100 ms.
fn slept_on_cpu0(c: &mut Cfs) -> EntityId {
    let a = task(c, ROOT_GROUP, CpuId(0));
    c.clock = 0;
    c.post_init_entity_util_avg(a);
    c.enqueue_task(a, 0);
    assert_eq!(c.pick_next_task(root(0), None), Some(a));
    run_ticks(c, a, 0, 100 * MS);
    assert!(c.dequeue_task(a, DEQUEUE_SLEEP));
    assert_eq!(c.pick_next_task(root(0), Some(a)), None);
    a
}

/// A wake-up on another CPU (`migrate_task_rq_fair`, not migrating):
/// `remove_entity_load_avg` syncs the task to CPU 0's last update and parks
/// its averages in `removed`; CPU 0 loses them at its next update; CPU 1
/// gains them at the enqueue (`attach_entity_load_avg`), exactly.
#[test]
fn a_wakeup_migration_removes_the_average_here_and_attaches_it_there() {
    let mut c = cfs(KernelModel::Linux612, 2);
    let a = slept_on_cpu0(&mut c);
    let before = c.rq(root(0)).avg;
    assert!(before.util_avg > 900 && before.runnable_avg > 900, "{before:?}");
    c.clock = 100 * MS; // CPU 0 is idle but its queue is up to date: no lag to add
    c.migrate_task_rq(a, false);
    let ta = c.se(a).avg;
    assert!(!ta.attached);
    let p6 = c.rq(root(0)).p6;
    assert_eq!((p6.removed_nr, p6.removed_util_avg, p6.removed_runnable_avg), (1, ta.util_avg, ta.runnable_avg));
    assert_eq!(p6.removed_load_avg, ta.load_avg);
    assert!(c.pelt_invariants().is_ok(), "{:?}", c.pelt_invariants());
    c.set_task_rq(a, ROOT_GROUP, CpuId(1));
    c.enqueue_task(a, ENQUEUE_WAKEUP);
    let dst = c.rq(root(1)).avg;
    assert_eq!((dst.util_avg, dst.runnable_avg, dst.load_avg), (ta.util_avg, ta.runnable_avg, ta.load_avg));
    assert_eq!(c.se(a).avg.last_update_time, dst.last_update_time, "attach aligns the windows");
    // CPU 0's next update (here the blocked-load pass) takes them out,
    // within rounding: the queue's load_sum (weight · contrib, decayed and
    // truncated as one number) keeps a little more than 1024 times the
    // task's, and the removed sums are estimated as avg · divider.
    c.update_blocked_averages(CpuId(0));
    let src = c.rq(root(0)).avg;
    assert_eq!((src.util_avg, src.runnable_avg), (0, 0), "{src:?}");
    assert!(src.load_avg <= 1, "{src:?}");
    assert_eq!(c.rq(root(0)).p6.removed_nr, 0);
    assert!(c.pelt_invariants().is_ok(), "{:?}", c.pelt_invariants());
}

/// The balancer's move (`detach_task` with the task on_rq_migrating): the
/// dequeue detaches at once (DO_DETACH), nothing goes to `removed`, and
/// `migrate_task_rq_fair` does not remove it again.
#[test]
fn a_balancer_move_detaches_at_the_dequeue() {
    let mut c = cfs(KernelModel::Linux618, 2);
    let a = task(&mut c, ROOT_GROUP, CpuId(0));
    let b = task(&mut c, ROOT_GROUP, CpuId(0));
    c.clock = 0;
    for se in [a, b] {
        c.post_init_entity_util_avg(se);
        c.enqueue_task(se, 0);
    }
    let running = c.pick_next_task(root(0), None).unwrap();
    let waiting = if running == a { b } else { a };
    run_ticks(&mut c, running, 0, 50 * MS);
    let src_before = c.rq(root(0)).avg;
    assert!(c.dequeue_task(waiting, DEQUEUE_MIGRATING));
    let w = c.se(waiting).avg;
    let src = c.rq(root(0)).avg;
    assert_eq!(src.util_avg, src_before.util_avg - w.util_avg, "a waiting task's util left with it");
    assert_eq!(src.load_avg, src_before.load_avg - w.load_avg);
    assert_eq!(src.runnable_avg, src_before.runnable_avg - w.runnable_avg);
    c.migrate_task_rq(waiting, true);
    assert_eq!(c.rq(root(0)).p6.removed_nr, 0);
    c.set_task_rq(waiting, ROOT_GROUP, CpuId(1));
    c.enqueue_task(waiting, 0);
    assert_eq!(c.rq(root(1)).avg.util_avg, w.util_avg);
    assert!(c.pelt_invariants().is_ok(), "{:?}", c.pelt_invariants());
}

/// A task attached to a group's queue (here a new one, util from
/// `post_init_entity_util_avg`: half of 1024 on an empty queue, 512) is
/// taken up through the group entity by `propagate_entity_load_avg`: the
/// entity's util becomes its queue's and the root gains the same.
#[test]
fn an_attach_below_a_group_propagates_to_the_root() {
    let mut c = cfs(KernelModel::Linux618, 1);
    let g = c.create_group("/g".into(), ROOT_GROUP, 1024, &CpuSet::all(1));
    let a = task(&mut c, g, CpuId(0));
    c.clock = 0;
    c.post_init_entity_util_avg(a);
    assert_eq!((c.se(a).avg.util_avg, c.se(a).avg.runnable_avg), (512, 512));
    c.enqueue_task(a, 0);
    let gq = c.groups[g.index()].cfs_rq[0].unwrap();
    let gse = c.groups[g.index()].se[0].unwrap();
    assert_eq!(c.rq(gq).avg.util_avg, 512);
    assert_eq!(c.se(gse).avg.util_avg, 512, "update_tg_cfs_util copies the queue's util");
    assert_eq!(c.rq(root(0)).avg.util_avg, 512);
    assert_eq!(c.se(gse).avg.runnable_avg, 512);
    assert!(!c.rq(gq).p6.propagate, "consumed by the group entity's update");
    // The leaf list: the group queue before the root.
    assert_eq!(c.leaf[0], vec![gq, root(0)]);
    assert!(c.pelt_invariants().is_ok(), "{:?}", c.pelt_invariants());
}

/// Blocked load decays (y^32 = 1/2 per 32 ms) and a queue fully decayed
/// leaves the leaf list; the pass says whether blocked load remains.
#[test]
fn blocked_load_decays_and_decayed_queues_leave_the_list() {
    let mut c = cfs(KernelModel::Linux66, 1);
    let g = c.create_group("/g".into(), ROOT_GROUP, 1024, &CpuSet::all(1));
    let a = task(&mut c, g, CpuId(0));
    c.clock = 0;
    c.post_init_entity_util_avg(a);
    c.enqueue_task(a, 0);
    assert_eq!(c.pick_next_task(root(0), None), Some(a));
    run_ticks(&mut c, a, 0, 64 * MS);
    assert!(c.dequeue_task(a, DEQUEUE_SLEEP));
    assert_eq!(c.pick_next_task(root(0), Some(a)), None);
    let gq = c.groups[g.index()].cfs_rq[0].unwrap();
    let u0 = c.rq(root(0)).avg.util_avg;
    c.clock = 64 * MS + 32 * 1024 * 1024;
    assert!(c.update_blocked_averages(CpuId(0)));
    let u32ms = c.rq(root(0)).avg.util_avg;
    assert!(u32ms.abs_diff(u0 / 2) <= 2, "{u0} → {u32ms} after 32 periods");
    assert_eq!(c.leaf[0], vec![gq, root(0)]);
    // LOAD_AVG_PERIOD · 63 periods later every sum is 0.
    c.clock += 2100 * 1024 * 1024;
    assert!(!c.update_blocked_averages(CpuId(0)), "no blocked load left");
    assert!(c.leaf[0].is_empty(), "{:?}", c.leaf[0]);
    assert!(!c.rq(gq).on_list && !c.rq(root(0)).on_list);
    // The next enqueue lists both again, child first.
    c.enqueue_task(a, ENQUEUE_WAKEUP);
    assert_eq!(c.leaf[0], vec![gq, root(0)]);
}

/// 6.18 counts a delayed task out of `h_nr_runnable` (`set_delayed`) and
/// PELT's runnable reads that; 6.12 reads `h_nr_running`, delayed included.
/// Either way the balancer sees the delayed task (`h_nr_delayed`).
#[test]
fn a_delayed_task_is_runnable_for_612_pelt_not_for_618() {
    for (model, want_runnable) in [(KernelModel::Linux612, true), (KernelModel::Linux618, false)] {
        let mut c = cfs(model, 1);
        let a = task(&mut c, ROOT_GROUP, CpuId(0));
        c.clock = 0;
        c.enqueue_task(a, 0);
        c.eevdf().set_delayed(a);
        let s = c.cpu_signals(CpuId(0));
        assert_eq!((s.h_nr_queued, s.h_nr_delayed, c.rq(root(0)).h_nr_runnable), (1, 1, 0), "{model:?}");
        c.clock = 200 * MS;
        c.update_load_avg6x(a, 0);
        let r = c.rq(root(0)).avg.runnable_avg;
        assert_eq!(r > 1000, want_runnable, "{model:?}: runnable_avg {r}");
        let e = c.se(a).avg;
        assert_eq!((e.runnable_avg, e.util_avg), (0, 0), "{model:?}: a delayed entity is never runnable (se_runnable)");
        assert!(e.load_avg > 1000, "{model:?}: but its load counts while it is queued");
    }
}

/// `post_init_entity_util_avg`: util from the queue's, `util · weight /
/// (load + 1)`, capped at half the spare capacity. Queue util 100, load
/// 2048: 6.12 gives 100 · 1024 / 2049 = 49; 6.6 multiplies by the
/// 2^10-scaled weight, 51174, capped at (1024 − 100) / 2 = 462.
#[test]
fn a_new_task_gets_util_from_its_queue() {
    for (model, want) in [(KernelModel::Linux612, 49), (KernelModel::Linux66, 462)] {
        let mut c = cfs(model, 1);
        let a = task(&mut c, ROOT_GROUP, CpuId(0));
        c.cfs_rqs[0].avg.util_avg = 100;
        c.cfs_rqs[0].avg.load_avg = 2048;
        c.post_init_entity_util_avg(a);
        assert_eq!((c.se(a).avg.util_avg, c.se(a).avg.runnable_avg), (want, want), "{model:?}");
        assert_eq!(c.se(a).avg.load_avg, NICE_0_LOAD, "init_entity_runnable_average: load = weight");
    }
}

/// A queued task whose util is `util` and runnable `runnable`, and whose
/// estimate was `ewma` (6.12+ one value; the flag cleared by a PELT update).
fn util_est_task(model: KernelModel, util: u64, runnable: u64, ewma: u32) -> (Cfs, EntityId) {
    let mut c = cfs(model, 1);
    let a = task(&mut c, ROOT_GROUP, CpuId(0));
    c.enqueue_task(a, 0);
    let e = &mut c.entities[a.index()].avg;
    (e.util_avg, e.runnable_avg, e.util_est.ewma) = (util, runnable, ewma);
    c.cfs_rqs[0].avg.util_est.enqueued = ewma;
    (c, a)
}

/// 6.12 `util_est_update` at a sleep: the ewma moves a quarter of the way
/// down, `(4·ewma − (ewma − util)) / 4`; up at once; not within 1%
/// (UTIL_EST_MARGIN = 10); not when the task waited (runnable > util + 10);
/// and the new value is flagged UTIL_AVG_UNCHANGED until PELT moves again.
#[test]
fn util_est_612_follows_decreases_by_a_quarter() {
    let sleep = |c: &mut Cfs, a| {
        c.util_est_dequeue_task(a, DEQUEUE_SLEEP);
        c.se(a).avg.util_est.ewma
    };
    let (mut c, a) = util_est_task(KernelModel::Linux612, 200, 200, 400);
    assert_eq!(sleep(&mut c, a), ((400 * 4 - 200) / 4) | UTIL_AVG_UNCHANGED); // 350
    assert_eq!(c.rq(root(0)).avg.util_est.enqueued, 0, "util_est_dequeue took the task's 400 out");
    assert_eq!(c.task_util_est(a), 350);
    let (mut c, a) = util_est_task(KernelModel::Linux612, 500, 500, 400);
    assert_eq!(sleep(&mut c, a), 500 | UTIL_AVG_UNCHANGED, "an increase is taken at once");
    let (mut c, a) = util_est_task(KernelModel::Linux612, 395, 395, 400);
    assert_eq!(sleep(&mut c, a), 400 | UTIL_AVG_UNCHANGED, "within the margin: kept");
    let (mut c, a) = util_est_task(KernelModel::Linux612, 200, 300, 400);
    assert_eq!(sleep(&mut c, a), 400 | UTIL_AVG_UNCHANGED, "it waited for the CPU: kept");
    // Flagged: a second sleep without a PELT update changes nothing.
    let (mut c, a) = util_est_task(KernelModel::Linux612, 200, 200, 400 | UTIL_AVG_UNCHANGED);
    assert_eq!(sleep(&mut c, a), 400 | UTIL_AVG_UNCHANGED);
    // Above the CPU's capacity: 6.12 skips (the flag not even set), 6.18 updates.
    let (mut c, a) = util_est_task(KernelModel::Linux612, 1100, 1100, 1200);
    assert_eq!(sleep(&mut c, a), 1200);
    let (mut c, a) = util_est_task(KernelModel::Linux618, 1100, 1100, 1200);
    assert_eq!(sleep(&mut c, a), ((1200 * 4 - 100) / 4) | UTIL_AVG_UNCHANGED);
}

/// 6.6 `util_est_update` (after the dequeue): `enqueued` takes the util,
/// UTIL_EST_FASTUP lifts the ewma to it, a decrease moves it a quarter of
/// the way unless both differences are within the margin.
#[test]
fn util_est_66_keeps_enqueued_and_ewma() {
    let mut c = cfs(KernelModel::Linux66, 1);
    let a = task(&mut c, ROOT_GROUP, CpuId(0));
    c.enqueue_task(a, 0);
    let set = |c: &mut Cfs, util: u64, enqueued: u32, ewma: u32| {
        let e = &mut c.entities[a.index()].avg;
        (e.util_avg, e.util_est.enqueued, e.util_est.ewma) = (util, enqueued, ewma);
        c.util_est_dequeued_task(a, DEQUEUE_SLEEP);
        let ue = c.se(a).avg.util_est;
        (ue.enqueued, ue.ewma)
    };
    assert_eq!(set(&mut c, 500, 300, 300), (500 | UTIL_AVG_UNCHANGED, 500), "FASTUP");
    // ewma 400, util 200: (4·400 + (200 − 400)) / 4 = 350.
    assert_eq!(set(&mut c, 200, 400, 400), (200 | UTIL_AVG_UNCHANGED, 350));
    // Both within 1%: nothing stored.
    assert_eq!(set(&mut c, 395, 398, 400), (398, 400));
    // ewma within 1% but the last enqueued far: only the flag and enqueued.
    assert_eq!(set(&mut c, 395, 200, 400), (395 | UTIL_AVG_UNCHANGED, 400));
    assert_eq!(c.task_util_est(a), 400, "max(ewma, enqueued)");
}

/// 6.12+ `update_tg_load_avg` publishes at most once per ms; 6.6 each time
/// the change passes 1/64.
#[test]
fn tg_load_avg_is_rate_limited_from_612() {
    for (model, want_second) in [(KernelModel::Linux66, true), (KernelModel::Linux612, false)] {
        let mut c = cfs(model, 1);
        let g = c.create_group("/g".into(), ROOT_GROUP, 1024, &CpuSet::all(1));
        let gq = c.groups[g.index()].cfs_rq[0].unwrap();
        c.clock = 10 * MS;
        c.cfs_rqs[gq.index()].avg.load_avg = 1000;
        c.update_tg_load_avg6x(gq);
        assert_eq!(c.groups[g.index()].load_avg, 1000);
        c.clock += MS / 2;
        c.cfs_rqs[gq.index()].avg.load_avg = 500;
        c.update_tg_load_avg6x(gq);
        assert_eq!(c.groups[g.index()].load_avg == 500, want_second, "{model:?}");
    }
}
