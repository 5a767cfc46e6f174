//! EEVDF rules (Linux 6.6, 6.12, 6.18 fair.c) pinned against values derived
//! by hand. Each test says which rule decides it; figures are in ns, with
//! V0 = `min_vruntime` of a new queue (`-(1 << 20)`).

use super::tests::{switch_ins, traced};
use crate::ids::{CfsRqId, CpuId, EntityId};
use crate::sched::SchedClass;
use crate::sched::cfs_rq::INITIAL_MIN_VRUNTIME;
use crate::sched::eevdf::ENQUEUE_INITIAL;
use crate::sched::entity::SchedEntity;
use crate::sched::fair::{Cfs, DEQUEUE_SLEEP, ENQUEUE_WAKEUP, FairConfig};
use crate::sched::group::GroupLoad;
use crate::sched::model::{KernelModel, WakeupVerdict};
use crate::sched::tunables::{CfsTunables, EevdfFeatures, EevdfTunables, TunableScaling, TunableValue, tick_nsec};
use crate::sched::weights::LoadWeight;
use crate::sched::policy::Policy;

const MS: i64 = 1_000_000;
const V0: i64 = INITIAL_MIN_VRUNTIME;
const ROOT: CfsRqId = CfsRqId(0);

/// A one-CPU EEVDF class of `model` with a 3 ms base slice, HZ 250 (the lag
/// clamp is max(2 × 3 ms, 4 ms) = 6 ms), and tasks of the given nice values.
fn eevdf(model: KernelModel, nices: &[i8], tweak: impl FnOnce(&mut EevdfFeatures)) -> Cfs {
    let d = TunableValue::Default;
    let mut features_eevdf = EevdfFeatures::defaults(model);
    tweak(&mut features_eevdf);
    let config = FairConfig {
        model,
        tunables: CfsTunables::resolve(1, TunableScaling::None, d, d, d),
        features: Default::default(),
        eevdf: EevdfTunables::resolve(1, TunableScaling::None, 3_000_000, d),
        features_eevdf,
        tick_nsec: tick_nsec(250),
        bandwidth: (crate::sched::bandwidth::BandwidthRules::Linux66, 5_000),
    };
    let mut cfs = Cfs::new(config, GroupLoad::Pelt, 1);
    for &nice in nices {
        let i = cfs.entities.len() as u32;
        cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, nice), ROOT, Policy::Normal));
        cfs.eevdf().eevdf_sched_fork(EntityId(i));
    }
    cfs
}

const A: EntityId = EntityId(0);
const B: EntityId = EntityId(1);

#[test]
fn a_woken_task_is_placed_by_its_lag_and_gets_a_deadline_one_slice_on() {
    // 6.6, A and B nice 0. t=0: both placed at V = V0 (empty queue, then
    // lag 0), deadlines V0 + 3 ms; the pick takes A (ties: the earlier in
    // the tree).
    let mut cfs = eevdf(KernelModel::Linux66, &[0, 0], |_| {});
    cfs.enqueue_task(A, ENQUEUE_WAKEUP);
    cfs.enqueue_task(B, ENQUEUE_WAKEUP);
    assert_eq!((cfs.se(B).vruntime, cfs.se(B).deadline), (V0, V0 + 3 * MS));
    assert_eq!(cfs.pick_next_task(ROOT, None), Some(A));
    // t=2 ms: B sleeps. update_curr: A at V0 + 2 ms; V = (A + B) / 2 = V0 + 1 ms;
    // update_entity_lag: vlag = V − v_B = +1 ms (inside ±6 ms).
    cfs.clock = 2 * MS as u64;
    assert!(cfs.dequeue_task(B, DEQUEUE_SLEEP));
    assert_eq!(cfs.se(B).vlag, MS);
    // t=5 ms: B wakes. update_curr: A at V0 + 5 ms, past its deadline, so
    // update_deadline gives V0 + 8 ms. place_entity: V = V0 + 5 ms (A alone),
    // the lag inflated by (W + w)/W = 2: v_B = V0 + 5 − 2 = V0 + 3 ms, and the
    // deadline one vslice on: V0 + 6 ms. V is then V0 + 4 ms: B's lag is
    // still exactly 1 ms.
    cfs.clock = 5 * MS as u64;
    cfs.enqueue_task(B, ENQUEUE_WAKEUP);
    assert_eq!(cfs.se(A).deadline, V0 + 8 * MS);
    assert_eq!((cfs.se(B).vruntime, cfs.se(B).deadline), (V0 + 3 * MS, V0 + 6 * MS));
    assert_eq!(cfs.eevdf().avg_vruntime(ROOT), V0 + 4 * MS);
    // check_preempt_wakeup: A (v > V) is not eligible, B is: pick_eevdf = B.
    assert!(cfs.wakeup_preempt(A, B, 0, false));
    assert_eq!(cfs.wakeup_verdict, WakeupVerdict::EarliestDeadline);
    // entity_lag: B's V − v (1 ms, inside the clamp), A's negative: only B is eligible.
    assert_eq!(cfs.entity_lag(ROOT, B), MS);
    assert!(cfs.entity_lag(ROOT, A) < 0 && !cfs.eevdf().entity_eligible(ROOT, A));
    assert!(cfs.class_invariants().is_ok());
}

#[test]
fn run_to_parity_holds_off_a_wakeup_until_the_slice_ends() {
    // 6.6: A (nice 0) picked alone at t=0: set_next_entity stashes its
    // deadline V0 + 3 ms in vlag (the RUN_TO_PARITY marker).
    for rtp in [true, false] {
        let mut cfs = eevdf(KernelModel::Linux66, &[0, -10], |f| f.run_to_parity = rtp);
        cfs.enqueue_task(A, ENQUEUE_WAKEUP);
        assert_eq!(cfs.pick_next_task(ROOT, None), Some(A));
        // t=1 ms: B (nice −10, w 9548, wmult 449829) wakes with no lag: v = V
        // = V0 + 1 ms, deadline v + (3 ms × 1024 × 449829 >> 32) = v + 321742 ns
        // (__calc_delta truncates), earlier than A's V0 + 3 ms.
        // Both are eligible (V is A's vruntime: ties count).
        cfs.clock = MS as u64;
        cfs.enqueue_task(B, ENQUEUE_WAKEUP);
        assert_eq!(cfs.se(B).deadline, V0 + MS + 321_742);
        // With the marker intact, pick_eevdf returns curr: no preemption;
        // without RUN_TO_PARITY the earliest eligible deadline wins.
        assert_eq!(cfs.wakeup_preempt(A, B, 0, false), !rtp, "RUN_TO_PARITY {rtp}");
        // The rule that decided, for the report's history.
        let want = if rtp { WakeupVerdict::RunToParity } else { WakeupVerdict::EarliestDeadline };
        assert_eq!(cfs.wakeup_verdict, want);
    }
    // Once A's request is used up (t=3 ms, the tick's update_curr),
    // update_deadline gives it a new one and 6.6 reschedules there; B runs.
    let mut cfs = eevdf(KernelModel::Linux66, &[0, -10], |_| {});
    cfs.enqueue_task(A, ENQUEUE_WAKEUP);
    cfs.pick_next_task(ROOT, None);
    cfs.clock = MS as u64;
    cfs.enqueue_task(B, ENQUEUE_WAKEUP);
    assert!(!cfs.wakeup_preempt(A, B, 0, false));
    cfs.clock = 3 * MS as u64;
    cfs.task_tick(A, false, false);
    assert_eq!(cfs.resched, vec![CpuId(0)], "update_deadline asks for a resched");
    assert_eq!(cfs.pick_next_task(ROOT, Some(A)), Some(B));
}

#[test]
fn preempt_short_lets_a_short_slice_task_in() {
    // 6.12: A (3 ms slice) picked alone at t=0, marker set. B has its own
    // 0.1 ms slice (sched_setattr) and wakes at t=1 ms with no lag: v = V,
    // deadline V + 0.1 ms, both eligible.
    for short in [true, false] {
        let mut cfs = eevdf(KernelModel::Linux612, &[0, 0], |f| f.preempt_short = short);
        cfs.set_custom_slice(B, 100_000);
        cfs.enqueue_task(A, ENQUEUE_WAKEUP);
        cfs.pick_next_task(ROOT, None);
        cfs.clock = MS as u64;
        cfs.enqueue_task(B, ENQUEUE_WAKEUP);
        assert_eq!(cfs.se(B).deadline, cfs.se(B).vruntime + 100_000);
        // do_preempt_short: shorter slice, eligible, earlier deadline: the
        // marker is cancelled (vlag = deadline + 1) and pick_eevdf takes B.
        // Without PREEMPT_SHORT the marker protects A.
        assert_eq!(cfs.wakeup_preempt(A, B, 0, false), short, "PREEMPT_SHORT {short}");
        let want = if short { WakeupVerdict::ShortSlice } else { WakeupVerdict::RunToParity };
        assert_eq!(cfs.wakeup_verdict, want);
        if short {
            assert_eq!(cfs.se(A).vlag, cfs.se(A).deadline + 1);
        }
    }
}

#[test]
fn a_delayed_dequeue_burns_the_negative_lag() {
    // 6.12, A and B nice 0, both placed at V0 at t=0 (deadlines V0 + 3 ms).
    for delay in [true, false] {
        let mut cfs = eevdf(KernelModel::Linux612, &[0, 0], |f| f.delay_dequeue = delay);
        cfs.enqueue_task(A, ENQUEUE_WAKEUP);
        cfs.enqueue_task(B, ENQUEUE_WAKEUP);
        assert_eq!(cfs.pick_next_task(ROOT, None), Some(A));
        // t=1 ms: A at V0 + 1 ms is ineligible (V = V0 + 0.5 ms): the pick takes B.
        cfs.clock = MS as u64;
        assert_eq!(cfs.pick_next_task(ROOT, Some(A)), Some(B));
        // t=3 ms: B at V0 + 2 ms sleeps while ineligible (V = V0 + 1.5 ms).
        cfs.clock = 3 * MS as u64;
        let gone = cfs.dequeue_task(B, DEQUEUE_SLEEP);
        if !delay {
            // Dequeued at once, leaving with vlag = V − v = −0.5 ms.
            assert!(gone);
            assert_eq!(cfs.se(B).vlag, -MS / 2);
            continue;
        }
        // DELAY_DEQUEUE: B stays queued (and counted) as a delayed entity.
        assert!(!gone);
        assert!(cfs.se(B).sched_delayed && cfs.se(B).on_rq);
        assert_eq!(cfs.rq(ROOT).nr_running, 2);
        assert_eq!(cfs.pick_next_task(ROOT, Some(B)), Some(A));
        // t=5 ms: A reaches its deadline (V0 + 3 ms): a new one, V0 + 6 ms, and
        // a resched. B (v = V0 + 2 ms ≤ V = V0 + 2.5 ms) is now eligible with
        // the earliest deadline: the pick takes it, finds it delayed, and
        // dequeues it for good: vlag = V − v = +0.5 ms, which DELAY_ZERO
        // clears. The pick starts over and returns A.
        cfs.clock = 5 * MS as u64;
        cfs.task_tick(A, false, false);
        assert_eq!(cfs.resched, vec![CpuId(0)]);
        assert_eq!(cfs.pick_next_task(ROOT, Some(A)), Some(A));
        assert_eq!(cfs.delayed_done, vec![B]);
        assert!(!cfs.se(B).on_rq && !cfs.se(B).sched_delayed);
        assert_eq!(cfs.se(B).vlag, 0, "the −0.5 ms were paid back while delayed");
    }
}

#[test]
fn new_tasks_get_half_a_slice_from_6_12() {
    // PLACE_DEADLINE_INITIAL with ENQUEUE_INITIAL (6.12 wake_up_new_task):
    // deadline = v + vslice/2. 6.6 passes no ENQUEUE_INITIAL at enqueue.
    let mut cfs = eevdf(KernelModel::Linux612, &[0], |_| {});
    cfs.enqueue_task(A, cfs.new_task_enqueue_flags());
    assert_eq!(cfs.se(A).deadline, V0 + 3 * MS / 2);
    let mut cfs = eevdf(KernelModel::Linux66, &[0], |_| {});
    assert_eq!(cfs.new_task_enqueue_flags() & ENQUEUE_INITIAL, 0);
    cfs.enqueue_task(A, cfs.new_task_enqueue_flags());
    assert_eq!(cfs.se(A).deadline, V0 + 3 * MS);
}

fn hogs(version: &str, entry: &str) -> String {
    format!(
        r#"
        schema = 1
        seed = 1
        duration = "12ms"
        [kernel]
        version = "{version}"
        [machine]
        cpus = 2
        hz = 250
        [[tasks]]
        name = "a"
        cpus = "0"
        program = [{{ run = "1s"{entry} }}]
        [[tasks]]
        name = "b"
        cpus = "0"
        program = [{{ run = "1s"{entry} }}]
        "#
    )
}

fn switch_times(toml: &str) -> Vec<u64> {
    // Switches after the start (both tasks begin at t = 0).
    switch_ins(&traced(toml)).into_iter().filter(|(t, c)| *t > 0 && c != "<idle>").map(|(t, _)| t).collect()
}

#[test]
fn two_hogs_trade_the_cpu_every_tick_in_user_space() {
    // 6.18 on 2 CPUs: base slice 0.70 ms × (1 + ilog2 2) = 1.40 ms. A pure
    // user-space spin is seen only at ticks (4 ms at HZ 250): the slice end
    // is found by the tick's update_curr, which reschedules (deadline passed,
    // vprot behind), and the other hog, eligible with the earlier deadline, runs.
    let t = switch_times(&hogs("6.18", ""));
    assert_eq!(t, vec![4_000_000, 8_000_000]);
    // (12 ms is the end of the run: its tick does not switch any more.)
}

#[test]
fn two_hogs_entering_the_kernel_every_10us_trade_every_slice() {
    // The same hogs reading their CPU time every 10 µs: each entry runs
    // update_curr, so the slice end is found within 10 µs. New tasks start
    // with half a slice (ENQUEUE_INITIAL): a gives way at 0.70 ms, b at
    // 1.40 ms; from then on every 1.40 ms.
    let t = switch_times(&hogs("6.18", r#", enter_kernel_every = "10us""#));
    assert_eq!(&t[..5], &[700_000, 1_400_000, 2_800_000, 4_200_000, 5_600_000]);
}

#[test]
fn the_same_trace_differs_between_6_6_and_6_12() {
    // 6.6: 0.75 ms × 2 = 1.50 ms slices and no half slice for a new task
    // (its enqueue passes no ENQUEUE_INITIAL): a gives way at 1.50 ms.
    // 6.12: the same slices, but a new task's first request is half: 0.75 ms.
    let six6 = switch_times(&hogs("6.6", r#", enter_kernel_every = "10us""#));
    let six12 = switch_times(&hogs("6.12", r#", enter_kernel_every = "10us""#));
    assert_eq!(&six6[..3], &[1_500_000, 3_000_000, 4_500_000]);
    assert_eq!(&six12[..3], &[750_000, 1_500_000, 3_000_000]);
}
