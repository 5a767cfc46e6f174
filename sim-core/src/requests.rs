//! Requests across thread hops: the engine's bookkeeping for items that a
//! task forwards to another (`forward`, `hop_work`; scenario/hops.rs), and
//! per-source request statistics: arrived, completed at the sink, dropped on
//! a full or exited queue, and the end-to-end latency (arrival at the first
//! task → end of the sink's burst).
//!
//! Only sources whose route has at least one hop are tracked (their latency
//! recorded, their requests counted): a request that never leaves its first
//! task is that task's `response` already, and shipped scenarios keep their
//! cost and their report.

use crate::metrics::latency::LatencyStats;
use crate::rng::SimRng;
use crate::scenario::ScenarioSpec;
use std::collections::BTreeMap;

/// Completions a request log keeps at most (`Simulation::enable_request_log`).
pub const REQUEST_LOG_MAX: usize = 1_000_000;

/// One source declaration's requests.
#[derive(Clone, Debug, Default)]
pub struct RequestMetrics {
    /// Items the source generated (dropped ones included).
    pub arrived: u64,
    /// Completed at the sink.
    pub completed: u64,
    /// Dropped at the first task or at a hop (queue full, or the task exited).
    pub dropped: u64,
    /// End-to-end latency of completed requests.
    pub latency: LatencyStats,
}

/// One completed request (for tests and invariant checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestDone {
    pub source: u32,
    pub request: u64,
    pub latency_ns: u64,
    /// Work of all its hops.
    pub work_ns: u64,
}

/// The engine's hop state.
#[derive(Clone, Debug)]
pub struct Hops {
    /// Per task declaration: the round-robin cursor for ties between its
    /// instances (the instance tried first next time).
    pub(crate) cursor: Vec<u32>,
    /// The `hop_work` stream (`hop/<name>/<instance>`) of each task (by id)
    /// whose declaration has `hop_work`; a map, so tasks without one cost
    /// nothing.
    pub(crate) rng: BTreeMap<u32, SimRng>,
    /// The next request id (run-wide).
    pub(crate) next_request: u64,
    /// Per source declaration: its route has a hop, so it is tracked.
    pub(crate) tracked: Vec<bool>,
    /// Per source declaration.
    pub metrics: Vec<RequestMetrics>,
    /// Completions, when a log was asked for (bounded by `REQUEST_LOG_MAX`).
    pub(crate) log: Option<Vec<RequestDone>>,
}

impl Hops {
    pub fn new(spec: &ScenarioSpec, root: &SimRng) -> Hops {
        let mut rng = BTreeMap::new();
        for ts in spec.tasks.iter().filter(|ts| ts.hop_work.is_some()) {
            for i in 0..ts.count {
                rng.insert(ts.first.0 + i, root.stream(&format!("hop/{}/{i}", ts.name)));
            }
        }
        Hops {
            cursor: vec![0; spec.tasks.len()],
            rng,
            next_request: 0,
            tracked: spec.sources.iter().map(|s| s.route.len() > 1).collect(),
            metrics: vec![RequestMetrics::default(); spec.sources.len()],
            log: None,
        }
    }

    /// Whether requests of source declaration `source` are tracked.
    pub fn tracked(&self, source: u32) -> bool {
        self.tracked[source as usize]
    }

    /// The completions logged so far (empty unless a log was enabled).
    pub fn log(&self) -> &[RequestDone] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// Picks the instance of a declaration (`first`, `loads` per instance:
    /// items outstanding, `None` for an exited one) an item goes to: fewest
    /// outstanding, ties round-robin from `cursor`, which then moves past it.
    /// `None` when every instance has exited.
    pub fn choose(cursor: &mut u32, loads: &[Option<usize>]) -> Option<u32> {
        let n = loads.len() as u32;
        let mut best: Option<(u32, usize)> = None;
        for k in 0..n {
            let i = (*cursor + k) % n;
            if let Some(load) = loads[i as usize]
                && best.is_none_or(|(_, b)| load < b)
            {
                best = Some((i, load));
            }
        }
        let (i, _) = best?;
        *cursor = (i + 1) % n;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::Hops;
    use crate::engine::Simulation;
    use crate::scenario::Scenario;

    /// Runs with `check_invariants` (request conservation included) after
    /// every event and a request log.
    fn run(toml: &str) -> Simulation {
        let s = Scenario::from_toml("hops.toml", toml).unwrap();
        let mut sim = Simulation::new(&s);
        sim.enable_request_log();
        sim.run_to_end_checked().unwrap();
        sim
    }

    fn head(duration: &str) -> String {
        format!(
            r#"
        schema = 1
        seed = 7
        duration = "{duration}"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        [features]
        WAKEUP_PREEMPTION = false
    "#
        )
    }

    /// a (100 µs, the source's work) → b (200 µs) → c (300 µs) on one CPU,
    /// one request every 10 ms: nothing else runs, so each request takes
    /// exactly the sum of its hops' work, 600 µs.
    #[test]
    fn a_lone_request_takes_the_sum_of_its_hops_work() {
        let toml = format!(
            r#"{}
            [[tasks]]
            name = "a"
            program = ["serve"]
            forward = "b"
            [[tasks]]
            name = "b"
            program = ["serve"]
            forward = "c"
            hop_work = "200us"
            [[tasks]]
            name = "c"
            program = ["serve"]
            hop_work = "300us"
            [[sources]]
            name = "req"
            target = "a"
            interval = "10ms"
            work = "100us"
            "#,
            head("100ms")
        );
        let sim = run(&toml);
        // Arrivals at 10, 20, …, 90 ms; all done by 90.6 ms.
        let log = sim.request_log();
        assert_eq!(log.len(), 9);
        assert!(log.iter().all(|d| d.latency_ns == 600_000 && d.work_ns == 600_000), "{log:?}");
        let r = sim.report();
        assert_eq!(r.requests.len(), 1);
        let q = &r.requests[0];
        assert_eq!(q.route, vec!["a", "b", "c"]);
        assert_eq!((q.arrived, q.completed, q.dropped, q.in_flight), (9, 9, 0, 0));
        assert_eq!((q.latency.min_ns, q.latency.max_ns, q.latency.avg_ns), (600_000, 600_000, 600_000));
        assert_eq!(q.hop_delay_p99_ns.len(), 3);
        // The waker blocks as soon as it has forwarded, so no hop waits.
        assert_eq!(q.sched_delay_p99_ns, 0);
        assert_eq!(q.amplification_x100, None);
        // Per-task response still measures from the request's arrival.
        let c = r.tasks.iter().find(|t| t.name == "c").unwrap();
        assert_eq!(c.response.unwrap().max_ns, 600_000);
    }

    /// Two sources into a (100 µs) → b (200 µs) on one CPU without wake-up
    /// preemption. s1 arrives at 10 ms, s2 at 10.05 ms (behind s1 at a).
    /// a serves s1 10.0–10.1 (waking b, which waits), s2 10.1–10.2, then
    /// blocks; b serves s1 10.2–10.4 and s2 10.4–10.6. Latencies: s1 400 µs
    /// (100 µs queued at b), s2 550 µs (50 µs at a, 200 µs at b).
    #[test]
    fn interleaved_requests_include_their_queueing() {
        let toml = format!(
            r#"{}
            [[tasks]]
            name = "a"
            program = ["serve"]
            forward = "b"
            [[tasks]]
            name = "b"
            program = ["serve"]
            hop_work = "200us"
            [[sources]]
            name = "s1"
            target = "a"
            interval = "10ms"
            work = "100us"
            [[sources]]
            name = "s2"
            target = "a"
            interval = "10ms"
            start = "50us"
            work = "100us"
            "#,
            head("15ms")
        );
        let sim = run(&toml);
        let lat: Vec<(u32, u64)> = sim.request_log().iter().map(|d| (d.source, d.latency_ns)).collect();
        assert_eq!(lat, vec![(0, 400_000), (1, 550_000)]);
        let r = sim.report();
        assert_eq!(r.requests.iter().map(|q| q.latency.max_ns).collect::<Vec<_>>(), vec![400_000, 550_000]);
        // a never waited for the CPU (s2 queued behind s1 in a's items, not
        // on the run queue); b waited 100 µs after its wake-up at 10.1 ms.
        assert_eq!(r.requests[0].hop_delay_p99_ns[0], 0);
        assert!(r.requests[0].hop_delay_p99_ns[1] > 0);
        let b = r.tasks.iter().find(|t| t.name == "b").unwrap();
        assert_eq!(b.wakeup_delay.max_ns, 100_000);
    }

    /// Four items at once through a (10 µs each) to a pool of three: each
    /// goes to the instance with the fewest items outstanding, round-robin on
    /// ties, so the fourth goes back to w/0.
    #[test]
    fn forwarded_items_spread_over_the_instances() {
        let toml = format!(
            r#"{}
            [[tasks]]
            name = "a"
            program = ["serve"]
            forward = "w"
            [[tasks]]
            name = "w"
            count = 3
            program = ["serve"]
            hop_work = "1ms"
            [[sources]]
            name = "req"
            target = "a"
            interval = "10ms"
            burst = 4
            work = "10us"
            "#,
            head("20ms")
        );
        let sim = run(&toml);
        let r = sim.report();
        let served: Vec<u64> = r.tasks.iter().filter(|t| t.name == "w").map(|t| t.response.unwrap().count).collect();
        // Loads when each item is forwarded (a keeps the CPU): [0,0,0] → w/0,
        // [1,0,0] → w/1, [1,1,0] → w/2, [1,1,1] → w/0 (cursor back at 0).
        assert_eq!(served, vec![2, 1, 1]);
        assert_eq!(r.requests[0].completed, 4);
    }

    /// A sink that exits drops what is forwarded to it afterwards; every
    /// request is completed, dropped or still in flight.
    #[test]
    fn requests_are_conserved_when_a_hop_exits() {
        let toml = format!(
            r#"{}
            [[tasks]]
            name = "a"
            program = ["serve"]
            forward = "b"
            [[tasks]]
            name = "b"
            iterations = 3
            program = ["serve"]
            [[sources]]
            name = "req"
            target = "a"
            interval = "exp(1ms)"
            work = "300us"
            "#,
            head("100ms")
        );
        let sim = run(&toml);
        let r = sim.report();
        let q = &r.requests[0];
        assert_eq!(q.completed, sim.request_log().len() as u64);
        assert!(q.completed >= 3 && q.dropped > 0, "{q:?}");
        assert_eq!(q.arrived, q.completed + q.dropped + q.in_flight);
        assert_eq!(q.latency.open_count, q.in_flight);
    }

    #[test]
    fn fewest_items_first_then_round_robin() {
        let mut cursor = 0;
        // Fewest outstanding wins wherever the cursor is.
        assert_eq!(Hops::choose(&mut cursor, &[Some(2), Some(0), Some(1)]), Some(1));
        assert_eq!(cursor, 2);
        // Ties: from the cursor, wrapping.
        let mut picks = Vec::new();
        for _ in 0..4 {
            picks.push(Hops::choose(&mut cursor, &[Some(0), Some(0), Some(0)]).unwrap());
        }
        assert_eq!(picks, vec![2, 0, 1, 2]);
        // An exited instance is skipped; all exited: none.
        let mut cursor = 0;
        assert_eq!(Hops::choose(&mut cursor, &[None, Some(5), Some(5)]), Some(1));
        assert_eq!(Hops::choose(&mut cursor, &[None, None]), None);
    }
}
