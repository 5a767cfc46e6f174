//! Seastar's `fair_queue` as of commit 97cc0de6e (2018-04-18, Glauber Costa,
//! "io_queue: determine concurrency based on the disk's visible throughput";
//! `core/fair_queue.hh`): priority classes with shares, each with a FIFO of
//! requests and an accumulated cost; the queued class with the smallest
//! accumulated cost is served next, while the in-flight counters are under
//! every limit (`can_dispatch`).
//!
//! The cost a request charges its class grows as exp(t / tau) (tau = 100 ms),
//! so older charges weigh less and less: an exponential decay without ever
//! touching the other classes' sums. A class that was idle keeps its old
//! `_accumulated` (there is no reset in this version) and rejoins with it; as
//! the others' costs kept growing, it is served first until it catches up,
//! and what it saved more than ~tau ago counts for little. When a sum would
//! overflow `float`, every class is scaled by FLT_MIN and the time base moves
//! forward (`normalize_stats`). Arithmetic is `f32` as in the source, with
//! `libm::expf`/`logf` so native and wasm agree.
//!
//! Ties (equal accumulated cost) go to the lower class index; Seastar's
//! `std::priority_queue` leaves them to the heap's layout.

use crate::time::SimTime;
use std::collections::VecDeque;

/// `fair_queue_request_descriptor`: what a request counts against the limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairQueueRequest {
    /// Its weight for the request-count (IOPS) limit.
    pub weight: u64,
    /// Its effective size for the byte limit.
    pub size: u64,
}

/// How a dispatched request is charged to its class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CostRule {
    /// 97cc0de6e `fair_queue::dispatch_requests`: (weight / max_req_count +
    /// size / max_bytes_count) / shares, the request's share of the disk.
    Capacity { max_req_count: u64, max_bytes_count: u64 },
    /// Before 2be664d20 (`io_queue::queue_request`): a fairness weight of
    /// 1 + len / 16 KiB, divided by shares.
    FairnessWeight,
}

/// `fair_queue::config`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairQueueConfig {
    /// Requests in flight (`--max-io-requests` per I/O queue).
    pub capacity: u64,
    /// The decay constant, in µs (`tau`, default 100 ms).
    pub tau_us: u64,
    /// Limit on the sum of in-flight weights.
    pub max_req_count: u64,
    /// Limit on the sum of in-flight sizes.
    pub max_bytes_count: u64,
    pub cost: CostRule,
}

/// Seastar's default `tau`.
pub const TAU_US: u64 = 100_000;

/// One request waiting in a class, with its payload.
#[derive(Clone, Debug)]
struct Queued<T> {
    desc: FairQueueRequest,
    /// Bytes, for `CostRule::FairnessWeight`.
    len: u64,
    item: T,
}

/// `priority_class`.
#[derive(Clone, Debug)]
pub struct PriorityClass<T> {
    shares: u32,
    accumulated: f32,
    queue: VecDeque<Queued<T>>,
}

impl<T> PriorityClass<T> {
    pub fn shares(&self) -> u32 {
        self.shares
    }

    pub fn accumulated(&self) -> f32 {
        self.accumulated
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

/// The in-flight totals `can_dispatch` compares with the limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Executing {
    pub requests: u64,
    pub req_count: u64,
    pub bytes_count: u64,
}

#[derive(Clone, Debug)]
pub struct FairQueue<T> {
    pub config: FairQueueConfig,
    executing: Executing,
    requests_queued: u64,
    /// `_base`, in ns of simulated time (may move past now on normalisation).
    base_ns: i64,
    classes: Vec<PriorityClass<T>>,
}

impl<T> FairQueue<T> {
    /// `fair_queue(config)` at time zero with one class per entry of
    /// `shares` (`register_priority_class`); shares are at least 1 as
    /// `priority_class` clamps them.
    pub fn new(config: FairQueueConfig, shares: &[u32]) -> FairQueue<T> {
        let classes = shares
            .iter()
            .map(|&s| PriorityClass { shares: s.max(1), accumulated: 0.0, queue: VecDeque::new() })
            .collect();
        FairQueue { config, executing: Executing::default(), requests_queued: 0, base_ns: 0, classes }
    }

    pub fn classes(&self) -> &[PriorityClass<T>] {
        &self.classes
    }

    pub fn executing(&self) -> Executing {
        self.executing
    }

    /// `waiters()`.
    pub fn waiters(&self) -> u64 {
        self.requests_queued
    }

    /// The payloads waiting in `class`, oldest first.
    pub fn queued_items(&self, class: usize) -> impl Iterator<Item = &T> {
        self.classes[class].queue.iter().map(|q| &q.item)
    }

    /// `fair_queue::queue`: appended to its class's FIFO.
    pub fn queue(&mut self, class: usize, desc: FairQueueRequest, len: u64, item: T) {
        self.classes[class].queue.push_back(Queued { desc, len, item });
        self.requests_queued += 1;
    }

    /// `fair_queue::can_dispatch` (97cc0de6e): something is queued and every
    /// in-flight total is still *below* its limit, so the last request
    /// admitted may take a total past it.
    pub fn can_dispatch(&self) -> bool {
        let e = &self.executing;
        self.requests_queued > 0
            && e.requests < self.config.capacity
            && e.req_count < self.config.max_req_count
            && e.bytes_count < self.config.max_bytes_count
    }

    /// One step of `fair_queue::dispatch_requests`' loop: takes the head
    /// request of the queued class with the least accumulated cost, counts
    /// it in flight and charges its class. `None` when `can_dispatch` fails.
    pub fn dispatch_one(&mut self, now: SimTime) -> Option<(usize, FairQueueRequest, T)> {
        if !self.can_dispatch() {
            return None;
        }
        let h = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.queue.is_empty())
            .min_by(|a, b| a.1.accumulated.total_cmp(&b.1.accumulated).then(a.0.cmp(&b.0)))
            .map(|(i, _)| i)?;
        let req = self.classes[h].queue.pop_front().expect("a queued class has a request");
        self.executing.requests += 1;
        self.executing.req_count += req.desc.weight;
        self.executing.bytes_count += req.desc.size;
        self.requests_queued -= 1;
        let shares = self.classes[h].shares as f32;
        let req_cost = match self.config.cost {
            CostRule::Capacity { max_req_count, max_bytes_count } => {
                (req.desc.weight as f32 / max_req_count as f32 + req.desc.size as f32 / max_bytes_count as f32) / shares
            }
            // 2be664d20^ io_queue::queue_request: 1 + len/(16 << 10).
            CostRule::FairnessWeight => (1 + req.len / (16 << 10)) as f32 / shares,
        };
        let mut cost = self.decay(now) * req_cost;
        let mut next = self.classes[h].accumulated + cost;
        // dispatch_requests: renormalise while the sum overflows float.
        let mut guard = 0;
        while next.is_infinite() && guard < 8 {
            self.normalize_stats();
            cost = self.decay(now) * req_cost;
            next = self.classes[h].accumulated + cost;
            guard += 1;
        }
        self.classes[h].accumulated = next;
        Some((h, req.desc, req.item))
    }

    /// `expf(1.0f/tau.count() * delta.count())`, delta in whole µs since `_base`.
    fn decay(&self, now: SimTime) -> f32 {
        let delta_us = (now.0 as i64 - self.base_ns) / 1000;
        libm::expf(1.0f32 / self.config.tau_us as f32 * delta_us as f32)
    }

    /// `fair_queue::normalize_stats`: every class × FLT_MIN, and `_base`
    /// forward by −ln(FLT_MIN) × tau (about 8.7 s with tau = 100 ms).
    fn normalize_stats(&mut self) {
        let factor = f32::MIN_POSITIVE;
        let time_delta_us = libm::logf(factor) * self.config.tau_us as f32;
        self.base_ns -= (f64::from(time_delta_us) * 1000.0) as i64;
        for c in &mut self.classes {
            c.accumulated *= factor;
        }
    }

    /// `fair_queue::notify_requests_finished`.
    pub fn notify_requests_finished(&mut self, desc: FairQueueRequest) {
        self.executing.requests -= 1;
        self.executing.req_count -= desc.weight;
        self.executing.bytes_count -= desc.size;
    }
}
