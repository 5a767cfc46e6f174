//! Exact tick elision: the bookkeeping of ticks that run without an event.
//!
//! A periodic tick (`scheduler_tick`, 4.4 core.c) on a CPU whose running
//! task is alone (`rq->nr_running == 1`, so `check_preempt_tick` is not
//! called and no EEVDF slice end can reschedule), with no HRTICK, no CPU
//! quota and no periodic balance due before it (`jiffies < rq->next_balance`),
//! cannot preempt or balance. Its only effects are accounting: `update_curr`,
//! PELT (`update_load_avg`, `update_cfs_shares`), `cpu_load[]`, and the NO_HZ
//! kick test. The engine does not queue such a tick: it reserves the tick's
//! place in the `(time, seq)` order (`EventQueue::reserve_key`) and keeps it
//! here; before the next real event, every elided tick ordered before that
//! event is replayed at its own time (`Simulation::replay_elided_ticks`), so
//! the accounting runs with the same inputs, in the same order, as when the
//! tick was an event. Anything that could make the tick matter (a task
//! enqueued or dequeued on its CPU, a switch, a resched, an HRTICK) turns it
//! back into a queued event under its reserved key (`demote`).
//!
//! Why replay tick by tick rather than one analytic update at the next event:
//! PELT is not additive in 4.4. `__update_load_avg` sets `last_update_time =
//! now` and drops the sub-1024 ns remainder, and `decay_load` rounds at each
//! step, so one update over k ticks differs in the low bits from k updates;
//! `calc_delta_fair` rounds each `update_curr` delta the same way. The
//! replay is exact; an analytic catch-up would not be.
//!
//! Ticks of an idle CPU under NO_HZ idle are dropped without being dispatched
//! (`tick_nohz_idle_enter` stopped them; the event found the CPU idle and did
//! nothing).
//!
//! The switch (`Simulation::set_elision`) exists for tests and debugging:
//! with it off every tick is an event, and the equivalence tests check that
//! the schedule, the delays and the report are the same either way, only the
//! event count differs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::ids::CpuId;

/// Elided ticks waiting for their replay, one at most per CPU.
#[derive(Clone, Debug, Default)]
pub struct ElidedTicks {
    /// `(key, cpu)` min-heap; an entry is live while `pending[cpu]` holds its key.
    heap: BinaryHeap<Reverse<(u128, u16)>>,
    pending: Vec<Option<u128>>,
    pub stats: ElisionStats,
}

/// What elision saved in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ElisionStats {
    /// Busy ticks replayed without an event.
    pub busy_ticks: u64,
    /// Elided ticks that turned out to act (a NO_HZ kick): counted as events.
    pub busy_ticks_acting: u64,
    /// Ticks of NO_HZ idle CPUs dropped.
    pub idle_ticks: u64,
    /// Elided ticks turned back into events before their time.
    pub demoted: u64,
}

impl ElidedTicks {
    pub fn new(cpus: usize) -> ElidedTicks {
        ElidedTicks { heap: BinaryHeap::new(), pending: vec![None; cpus], stats: ElisionStats::default() }
    }

    /// Keeps `cpu`'s next tick, reserved under `key`, for replay.
    pub fn elide(&mut self, cpu: CpuId, key: u128) {
        debug_assert!(self.pending[cpu.index()].is_none(), "one tick per CPU");
        self.pending[cpu.index()] = Some(key);
        self.heap.push(Reverse((key, cpu.0)));
    }

    /// `cpu`'s elided tick, taken back (to queue it as an event).
    pub fn take(&mut self, cpu: CpuId) -> Option<u128> {
        self.pending[cpu.index()].take()
    }

    pub fn is_pending(&self, cpu: CpuId) -> bool {
        self.pending[cpu.index()].is_some()
    }

    /// The earliest elided tick still pending, without taking it.
    pub fn peek(&mut self) -> Option<(u128, CpuId)> {
        while let Some(&Reverse((key, cpu))) = self.heap.peek() {
            if self.pending[usize::from(cpu)] == Some(key) {
                return Some((key, CpuId(cpu)));
            }
            self.heap.pop();
        }
        None
    }

    /// Takes the earliest pending elided tick.
    pub fn pop(&mut self) -> Option<(u128, CpuId)> {
        let (key, cpu) = self.peek()?;
        self.heap.pop();
        self.pending[cpu.index()] = None;
        Some((key, cpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_and_skips_taken_ticks() {
        let mut e = ElidedTicks::new(3);
        e.elide(CpuId(0), 30);
        e.elide(CpuId(1), 10);
        e.elide(CpuId(2), 20);
        assert_eq!(e.take(CpuId(1)), Some(10));
        assert_eq!(e.pop(), Some((20, CpuId(2))));
        e.elide(CpuId(1), 25);
        assert_eq!(e.pop(), Some((25, CpuId(1))));
        assert_eq!(e.pop(), Some((30, CpuId(0))));
        assert_eq!(e.pop(), None);
        assert_eq!(e.take(CpuId(0)), None);
    }
}
