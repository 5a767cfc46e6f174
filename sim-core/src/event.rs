//! The closed set of simulation events and the queue that orders them.
//!
//! Events are totally ordered by `(time, insertion sequence)`: two events at the
//! same nanosecond fire in the order they were scheduled, never in an order that
//! depends on the event's payload or on a hash. Cancelled events (a burst cut
//! short by preemption, a re-armed timer) are not removed from the heap; each
//! carries a generation number that the engine compares on pop.

use crate::ids::{CpuId, SourceId, TaskId};
use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Everything that can happen in a run. Dispatched by one `match` in `engine.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The periodic scheduler tick on one CPU (`scheduler_tick`).
    Tick { cpu: CpuId },
    /// The HRTICK high-resolution timer set by `hrtick_start_fair`.
    HrTick { cpu: CpuId, generation: u32 },
    /// A scenario task is created (forked) and becomes runnable.
    TaskStart { task: TaskId },
    /// The running task finished the CPU work of its current step.
    BurstEnd { task: TaskId, generation: u32 },
    /// A sleeping task's timer expired (`hrtimer_wakeup`).
    TimerExpired { task: TaskId, generation: u32 },
    /// An arrival source delivers work items to its task.
    Arrival { source: SourceId },
    /// A CPU resumes settling after it used up its per-event step budget.
    Resume { cpu: CpuId },
}

#[derive(Clone, Debug)]
struct Entry {
    at: SimTime,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// A priority queue of events keyed by `(time, insertion sequence)`.
#[derive(Clone, Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    /// Schedules `event` at `at`; ties fire in insertion order.
    pub fn push(&mut self, at: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
    }

    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap.pop().map(|e| (e.at, e.event))
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Event::Tick { cpu: CpuId(2) });
        q.push(SimTime(3), Event::Tick { cpu: CpuId(9) });
        q.push(SimTime(5), Event::Tick { cpu: CpuId(1) });
        q.push(SimTime(5), Event::Tick { cpu: CpuId(0) });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let cpus: Vec<u16> = order
            .iter()
            .map(|(_, e)| match e {
                Event::Tick { cpu } => cpu.0,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(cpus, vec![9, 2, 1, 0]);
        assert_eq!(order[0].0, SimTime(3));
    }
}
