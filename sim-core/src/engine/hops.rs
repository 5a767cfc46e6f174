//! Arrival sources and request hops: a source delivers work items to its
//! task; a `serve` burst's item is forwarded to the next declaration
//! (`forward`, with its `hop_work`), or completed at the sink with its
//! end-to-end latency (`requests.rs` holds the per-source figures).
//!
//! Sources and hops own their state and arm their own arrivals; waking a
//! task blocked in `serve` comes back as `Effect::Wake` (from a hop) or as
//! the task an arrival returns, the last thing each call does.

use super::effects::Effect;
use super::world::World;
use crate::event::Event;
use crate::ids::{SourceId, TaskId};
use crate::requests::{Hops, REQUEST_LOG_MAX, RequestDone};
use crate::rng::SimRng;
use crate::task::{BlockOn, ITEMS_QUEUED_MAX, Item, Task, TaskState};
use crate::time::SimTime;
use crate::workload::Dist;

/// An arrival source bound to one target task.
#[derive(Clone, Debug)]
pub(super) struct Source {
    pub target: TaskId,
    /// Its declaration (index into `ScenarioSpec::sources`).
    pub decl: u32,
    pub interval: Dist,
    pub work: Dist,
    pub burst: u32,
    pub rng: SimRng,
}

/// A source delivers its burst of items (dropped when the task's queue is
/// full or it exited), arms its next arrival, and returns a task blocked in
/// `serve` that must now be woken (the last thing it does: the event loop
/// runs `try_to_wake_up`, as an `Effect::Wake` would).
pub(super) fn arrival(source: &mut Source, id: SourceId, hops: &mut Hops, w: &mut World) -> Option<TaskId> {
    let now = w.now();
    let s = source;
    let target = s.target;
    let t = &mut w.tasks[target.index()];
    let (source_decl, tracked) = (s.decl, hops.tracked(s.decl));
    for _ in 0..s.burst {
        let work_ns = s.work.sample(&mut s.rng);
        let request = hops.next_request;
        hops.next_request += 1;
        // Counters count what happened after the warm-up (`Recorder::counts`).
        let counted = w.recorder.counts(now);
        if tracked && counted {
            hops.metrics[source_decl as usize].arrived += 1;
        }
        if t.items.len() >= ITEMS_QUEUED_MAX || t.state == TaskState::Exited {
            if counted {
                w.recorder.tasks[target.index()].dropped_items += 1;
                if tracked {
                    hops.metrics[source_decl as usize].dropped += 1;
                }
            }
        } else {
            t.items.push_back(Item { arrival: now, work_ns, source: source_decl, request, work_total_ns: work_ns });
        }
    }
    let next = now.after(s.interval.sample(&mut s.rng).max(1));
    if next < w.clock.end {
        w.queue.push(next, Event::Arrival { source: id });
    }
    let t = &w.tasks[target.index()];
    (t.state == TaskState::Blocked(BlockOn::Item) && !t.items.is_empty()).then_some(target)
}

/// A `serve` burst of `item` ended on `task`: forward it (`forward`), or,
/// at a sink, complete its request.
pub(super) fn item_served(hops: &mut Hops, task: TaskId, item: Item, w: &mut World) {
    let now = w.now();
    let decl = w.tasks[task.index()].spec;
    if let Some(next) = w.spec.tasks[decl].forward {
        forward_item(hops, task, next, item, w);
    } else if hops.tracked(item.source) {
        let latency_ns = now.since(item.arrival);
        debug_assert!(latency_ns >= item.work_total_ns, "request faster than its work (seed {})", w.spec.seed);
        if w.recorder.counts(now) {
            let m = &mut hops.metrics[item.source as usize];
            m.completed += 1;
            m.latency.record(latency_ns, now);
        }
        if let Some(log) = &mut hops.log
            && log.len() < REQUEST_LOG_MAX
        {
            log.push(RequestDone {
                source: item.source,
                request: item.request,
                latency_ns,
                work_ns: item.work_total_ns,
            });
        }
    }
}

/// Queues a served item at an instance of declaration `next` (fewest
/// items outstanding, ties round-robin: `Hops::choose`) with its hop work,
/// and wakes that instance if it blocks in `serve`, from `from`'s CPU as
/// a `wake` step would.
fn forward_item(hops: &mut Hops, from: TaskId, next: usize, item: Item, w: &mut World) {
    let now = w.now();
    let ts = &w.spec.tasks[next];
    let loads: Vec<Option<usize>> = (0..ts.count)
        .map(|i| {
            let t = &w.tasks[ts.first.index() + i as usize];
            (t.state != TaskState::Exited).then(|| t.items.len() + usize::from(t.serving.is_some()))
        })
        .collect();
    let tracked = hops.tracked(item.source);
    let Some(i) = Hops::choose(&mut hops.cursor[next], &loads) else {
        // Every instance has exited: the item is lost with it.
        if !w.recorder.counts(now) {
            return;
        }
        w.recorder.tasks[ts.first.index()].dropped_items += 1;
        if tracked {
            hops.metrics[item.source as usize].dropped += 1;
        }
        return;
    };
    let target = TaskId(ts.first.0 + i);
    let work_ns = match (&ts.hop_work, hops.rng.get_mut(&target.0)) {
        (Some(d), Some(rng)) => d.sample(rng),
        _ => item.work_ns,
    };
    let t = &mut w.tasks[target.index()];
    if t.items.len() >= ITEMS_QUEUED_MAX {
        if w.recorder.counts(now) {
            w.recorder.tasks[target.index()].dropped_items += 1;
            if tracked {
                hops.metrics[item.source as usize].dropped += 1;
            }
        }
        return;
    }
    t.items.push_back(Item { work_ns, work_total_ns: item.work_total_ns.saturating_add(work_ns), ..item });
    if t.state == TaskState::Blocked(BlockOn::Item) {
        let waker_cpu = w.tasks[from.index()].cpu;
        w.emit(Effect::Wake { task: target, waker: Some(waker_cpu), sync: false });
    }
}

/// Requests of tracked source `source` (a declaration index) still in a
/// queue or in service, and the oldest one's age.
pub(super) fn requests_in_flight(tasks: &[Task], now: SimTime, source: u32) -> (u64, u64) {
    let mut n = 0;
    let mut oldest = 0;
    for t in tasks {
        for item in t.items.iter().chain(t.serving.iter()) {
            if item.source == source {
                n += 1;
                oldest = oldest.max(now.since(item.arrival));
            }
        }
    }
    (n, oldest)
}
