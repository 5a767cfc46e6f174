//! Per-CPU scheduling history: a bounded ring of switch and wakeup records,
//! the raw material for culprit attribution and for the `perf sched
//! timehist`-style table around the victim's worst delay.

use crate::ids::{CpuId, TaskId};
use crate::sched::migrate::MigrateCause;
use crate::time::SimTime;

/// Records kept per CPU. Bounds memory to the machine's size, not the run's length.
pub const RING_CAPACITY: usize = 128;
/// Rows kept in the captured window around the worst delay.
pub const CAPTURE_ROWS_MAX: usize = 400;

/// The state a task was switched out in (`prev_state` of `sched_switch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted while runnable (`R+` in perf's notation).
    Preempted,
    /// Blocked (sleeping or waiting): `S`.
    Sleeping,
    /// Exited: `X`.
    Dead,
}

impl PrevState {
    pub fn code(self) -> &'static str {
        match self {
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Dead => "X",
        }
    }
}

/// An entity's EEVDF state at a record (6.x models; zero under 4.4): its
/// virtual deadline and its lag in its own queue (`entity_lag`: V − vruntime,
/// clamped by the entity's weighted limit), which decide the pick from 6.6
/// on. Eligible exactly when `lag >= 0`. For a task off its queue (asleep),
/// `deadline` is `NOT_QUEUED` and `lag` the lag it saved at dequeue (`vlag`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EevdfState {
    pub deadline: i64,
    pub lag: i64,
}

impl EevdfState {
    /// `deadline` of a task that is not on a run queue.
    pub const NOT_QUEUED: i64 = i64::MIN;

    pub fn queued(self) -> bool {
        self.deadline != Self::NOT_QUEUED
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// `sched_switch`: `prev` ran from `prev_sched_in` until `at`; `next` runs.
    Switch {
        prev: Option<TaskId>,
        prev_state: PrevState,
        prev_sched_in: SimTime,
        /// How long `prev` waited before that run (last sched-out to sched-in).
        prev_wait_ns: u64,
        /// How long of that wait it was runnable (wakeup or preemption to run).
        prev_sch_delay_ns: u64,
        prev_vruntime: i64,
        next: Option<TaskId>,
        next_vruntime: i64,
        /// EEVDF: `prev`'s and `next`'s deadline and lag after the switch.
        prev_eevdf: EevdfState,
        next_eevdf: EevdfState,
    },
    /// `sched_wakeup` / `sched_wakeup_new`: `task` became runnable here with
    /// this vruntime; `preempt` if it triggered a wakeup preemption.
    Wakeup {
        task: TaskId,
        vruntime: i64,
        preempt: bool,
        /// A new task's first wakeup (`wake_up_new_task`: `sched_wakeup_new`,
        /// no `sched_waking`), not `try_to_wake_up`.
        new_task: bool,
        /// Where `try_to_wake_up` ran (its `sched_waking`): the waking task's
        /// CPU for a `wake` step; for a timer, an arrival or an I/O
        /// completion, the CPU the woken task last ran on (where its timer
        /// was armed or its interrupt is taken). The record's own `cpu` is
        /// the CPU the task was queued on.
        waker_cpu: CpuId,
        /// `task_cpu(p)` before `select_task_rq`: where the task last ran
        /// (for a new task, its parent's CPU). Differs from `cpu` when the
        /// wake-up moved it; a `Migrate` record at the same instant says why.
        prev_cpu: CpuId,
        /// The rule that decided `preempt` (the model's wake-up check).
        verdict: crate::sched::model::WakeupVerdict,
        /// The verdict compared group entities (where the hierarchies meet).
        group_level: bool,
        /// EEVDF: its deadline and lag once placed.
        eevdf: EevdfState,
    },
    /// `sched_migrate_task` (4.4 include/trace/events/sched.h, emitted in
    /// `set_task_cpu`): `task` moves from `orig_cpu` to `dest_cpu`. The
    /// record's own `cpu` is the CPU performing the move (the waker's CPU
    /// for a wake-up, the balancing CPU for a pull, the busiest CPU's
    /// stopper for active balance); `min_vruntime`, `root_min_vruntime` and
    /// `nr_running` are those of `dest_cpu`.
    Migrate { task: TaskId, orig_cpu: CpuId, dest_cpu: CpuId, cause: MigrateCause },
    /// CFS bandwidth control: `group`'s queue on this CPU was throttled (out
    /// of quota, `throttle_cfs_rq`) or unthrottled (`unthrottle_cfs_rq`).
    Throttle { group: crate::ids::GroupId, throttled: bool },
    /// RT throttling: this CPU's RT queue used its `sched_rt_runtime_us`
    /// (`sched_rt_runtime_exceeded`) or was replenished by the period timer.
    RtThrottle { throttled: bool },
}

impl RecordKind {
    /// The CPUs a `Migrate` record concerns besides its own `cpu` (the
    /// source and the destination), so each one's history shows the move.
    pub fn migrate_cpus(&self) -> Option<(CpuId, CpuId)> {
        match *self {
            RecordKind::Migrate { orig_cpu, dest_cpu, .. } => Some((orig_cpu, dest_cpu)),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedRecord {
    pub at: SimTime,
    pub cpu: CpuId,
    /// `min_vruntime` of the run queue of the task switched in or woken (its
    /// group's queue on this CPU; the root queue when the CPU goes idle).
    pub min_vruntime: i64,
    /// `min_vruntime` of the CPU's root `cfs_rq`: one steady series per CPU
    /// for counters, whichever group the task belongs to.
    pub root_min_vruntime: i64,
    /// `rq->nr_running` after the event (the running task included).
    pub nr_running: u32,
    pub kind: RecordKind,
}

/// One CPU's ring.
#[derive(Clone, Debug, Default)]
pub struct CpuHistory {
    /// Allocated on the first push (a CPU that never switches costs nothing),
    /// then written in place: `RING_CAPACITY` slots, a power of two, of
    /// which the first `pushed` (at most all) hold records.
    ring: Option<Box<[SchedRecord; RING_CAPACITY]>>,
    /// Records pushed so far; the next one goes to slot `pushed % RING_CAPACITY`.
    /// More than `RING_CAPACITY`: records have been dropped from the front.
    pushed: u64,
}

const _: () = assert!(RING_CAPACITY.is_power_of_two());

impl CpuHistory {
    #[inline]
    pub fn push(&mut self, r: SchedRecord) {
        let slot = (self.pushed as usize) & (RING_CAPACITY - 1);
        match &mut self.ring {
            Some(ring) => ring[slot] = r,
            None => self.allocate(r),
        }
        self.pushed += 1;
    }

    /// The first push: the ring, every slot a copy of `r` (only the first
    /// `pushed` slots are ever read).
    #[cold]
    #[inline(never)]
    fn allocate(&mut self, r: SchedRecord) {
        let ring: Box<[SchedRecord]> = vec![r; RING_CAPACITY].into_boxed_slice();
        self.ring = Some(ring.try_into().expect("RING_CAPACITY slots"));
    }

    /// The records kept, oldest first.
    fn iter(&self) -> impl DoubleEndedIterator<Item = &SchedRecord> {
        let ring: &[SchedRecord] = self.ring.as_deref().map_or(&[], |r| &r[..]);
        let (kept, split) = if self.pushed < RING_CAPACITY as u64 {
            (&ring[..self.pushed as usize], 0)
        } else {
            (ring, (self.pushed as usize) & (RING_CAPACITY - 1))
        };
        let (newer, older) = kept.split_at(split);
        older.iter().chain(newer.iter())
    }

    /// Newest first.
    pub fn iter_rev(&self) -> impl Iterator<Item = &SchedRecord> {
        self.iter().rev()
    }

    /// Records at or after `from`, oldest first; `true` if older records that
    /// may matter were already dropped.
    pub fn since(&self, from: SimTime) -> (Vec<SchedRecord>, bool) {
        let start = self.iter().take_while(|r| r.at < from).count();
        let wrapped = self.pushed > RING_CAPACITY as u64;
        let truncated = start == 0 && wrapped && self.iter().next().is_some_and(|r| r.at > from);
        (self.iter().skip(start).copied().collect(), truncated)
    }

    /// Time each task ran on this CPU within `[from, to)`, from the switch
    /// records; `None` for the part of the window older than the ring.
    pub fn occupancy(&self, from: SimTime, to: SimTime, mut add: impl FnMut(Option<TaskId>, u64)) {
        let mut covered_from = to;
        for r in self.iter_rev() {
            if let RecordKind::Switch { prev, prev_sched_in, .. } = r.kind {
                if r.at <= from {
                    covered_from = from;
                    break;
                }
                let start = prev_sched_in.max(from);
                let end = r.at.min(to);
                if end > start
                    && let Some(p) = prev
                {
                    add(Some(p), end.since(start));
                }
                covered_from = prev_sched_in.max(from);
                if prev_sched_in <= from {
                    break;
                }
            }
        }
        if covered_from > from {
            add(None, covered_from.since(from));
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every switch and wakeup writes one record into a ring; its size is
    /// on the hot path (ARCHITECTURE.md § Performance).
    #[test]
    fn a_record_stays_small() {
        // 96 bytes until the switch carried both tasks' EEVDF deadline and lag
        // (32 bytes), which the history needs to explain a 6.x pick.
        assert!(std::mem::size_of::<super::SchedRecord>() <= 128, "{}", std::mem::size_of::<super::SchedRecord>());
        assert!(std::mem::size_of::<super::RecordKind>() <= 96, "{}", std::mem::size_of::<super::RecordKind>());
    }

    #[test]
    fn the_ring_keeps_the_newest_records_in_order() {
        use super::*;
        let rec = |t: u64| SchedRecord {
            at: SimTime(t),
            cpu: CpuId(0),
            min_vruntime: 0,
            root_min_vruntime: 0,
            nr_running: 0,
            kind: RecordKind::Wakeup {
                task: TaskId(0),
                vruntime: 0,
                preempt: false,
                new_task: false,
                waker_cpu: CpuId(0),
                prev_cpu: CpuId(0),
                verdict: Default::default(),
                group_level: false,
                eevdf: Default::default(),
            },
        };
        let mut h = CpuHistory::default();
        for t in 0..100 {
            h.push(rec(t * 10));
        }
        // Not full yet: nothing dropped, so nothing is truncated.
        assert_eq!(h.since(SimTime(0)), ((0..100).map(|t| rec(t * 10)).collect(), false));
        for t in 100..300 {
            h.push(rec(t * 10));
        }
        let newest_first: Vec<u64> = h.iter_rev().map(|r| r.at.ns()).collect();
        assert_eq!(newest_first, (300 - RING_CAPACITY as u64..300).rev().map(|t| t * 10).collect::<Vec<_>>());
        let (kept, truncated) = h.since(SimTime(2905));
        assert_eq!(
            (kept.iter().map(|r| r.at.ns()).collect::<Vec<_>>(), truncated),
            (vec![2910, 2920, 2930, 2940, 2950, 2960, 2970, 2980, 2990], false)
        );
        // Asking from before the oldest record kept: older ones were dropped.
        assert!(h.since(SimTime(5)).1);
        assert_eq!(h.since(SimTime(5)).0.len(), RING_CAPACITY);
    }
}
