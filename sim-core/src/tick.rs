//! Exact event elision: the periodic tick outside the event queue.
//!
//! Every CPU's next tick (`scheduler_tick`, 4.4 core.c; armed at
//! `machine.tick_offset` + k × TICK_NSEC) is kept here, one per CPU, under
//! the `(time, seq)` key an event pushed at the same moment would have had
//! (`EventQueue::reserve_key`). The engine runs the earliest tick whenever it
//! is ordered before the queue's next event (`Simulation::calendar_tick`), so
//! ticks and events interleave exactly as when ticks were events. What
//! changes is what a tick costs and whether it counts:
//!
//! - the tick of a NO_HZ idle CPU (`tick_nohz_idle_enter` stopped it) is
//!   dropped: not dispatched, not counted;
//! - a busy CPU's tick that cannot change a decision, because it neither
//!   rescheduled (`check_preempt_tick`, an EEVDF slice end, a CPU-quota
//!   throttle) nor ran the periodic balance (`jiffies < rq->next_balance`)
//!   nor kicked the NO_HZ balancer, is not counted as an event: its work is
//!   the accounting (`update_curr`, PELT's `update_load_avg` and
//!   `update_cfs_shares`, `cpu_load[]`), done at its own time without a trip
//!   through the queue;
//! - a tick that acts is counted and settled like any event.
//!
//! Why the accounting runs at every tick rather than once, analytically, at
//! the next event: PELT is not additive in 4.4. `__update_load_avg` sets
//! `last_update_time = now` and drops the sub-1024 ns remainder, and
//! `decay_load` rounds at each step, so one update over k ticks differs in
//! the low bits from k updates; `calc_delta_fair` rounds each `update_curr`
//! delta the same way. Those bits reach group shares and balancing, so a
//! catch-up would change results; running each tick's accounting keeps them.
//!
//! The switch (`Simulation::set_elision`) exists for tests and debugging:
//! with it off every tick is an event in the queue, and the equivalence tests
//! (tests/it/elision.rs) check that the schedule, the delays and the report
//! are the same either way; only the event count differs.

use std::collections::VecDeque;

use crate::ids::CpuId;

/// The next tick of each CPU, ordered by key.
#[derive(Clone, Debug, Default)]
pub struct TickCalendar {
    /// `(key, cpu)`, ascending by key: the next tick is first. A CPU has at
    /// most one. A tick is armed at the next tick boundary, after every tick
    /// already armed, so an insert is nearly always at the back: O(1) even
    /// with hundreds of CPUs ticking in phase (a sorted `Vec` with the next
    /// tick last moved all of them on every insert).
    order: VecDeque<(u128, u16)>,
    pub stats: ElisionStats,
}

/// What elision saved in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ElisionStats {
    /// Busy ticks that only accounted: not counted as events.
    pub busy_ticks: u64,
    /// Busy ticks that acted (resched, periodic balance, NO_HZ kick): counted.
    pub busy_ticks_acting: u64,
    /// Ticks of NO_HZ idle CPUs dropped.
    pub idle_ticks: u64,
}

impl TickCalendar {
    pub fn new(cpus: usize) -> TickCalendar {
        TickCalendar { order: VecDeque::with_capacity(cpus), stats: ElisionStats::default() }
    }

    /// Arms `cpu`'s next tick under `key` (from `EventQueue::reserve_key`).
    pub fn arm(&mut self, cpu: CpuId, key: u128) {
        debug_assert!(self.order.iter().all(|&(_, c)| c != cpu.0), "one tick per CPU");
        if self.order.back().is_none_or(|&(k, _)| k < key) {
            self.order.push_back((key, cpu.0));
        } else {
            let pos = self.order.partition_point(|&(k, _)| k < key);
            self.order.insert(pos, (key, cpu.0));
        }
    }

    /// The earliest tick, without taking it.
    pub fn peek(&self) -> Option<(u128, CpuId)> {
        self.order.front().map(|&(k, c)| (k, CpuId(c)))
    }

    /// Takes the earliest tick.
    pub fn pop(&mut self) -> Option<(u128, CpuId)> {
        self.order.pop_front().map(|(k, c)| (k, CpuId(c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order() {
        let mut t = TickCalendar::new(3);
        t.arm(CpuId(0), 30);
        t.arm(CpuId(1), 10);
        t.arm(CpuId(2), 20);
        assert_eq!(t.peek(), Some((10, CpuId(1))));
        assert_eq!(t.pop(), Some((10, CpuId(1))));
        t.arm(CpuId(1), 25);
        assert_eq!(t.pop(), Some((20, CpuId(2))));
        assert_eq!(t.pop(), Some((25, CpuId(1))));
        assert_eq!(t.pop(), Some((30, CpuId(0))));
        assert_eq!(t.pop(), None);
    }
}
