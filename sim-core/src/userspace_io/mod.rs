//! A Seastar-style userspace I/O scheduler (seed 004: Seastar commit
//! 97cc0de6e, 2018-04-18, and ScyllaDB's blog of the next day): a layer a
//! scenario puts between tasks and a block device (`[io_queues.NAME]`).
//! An I/O step naming a class (`io_class = "NAME.CLASS"`) is queued in that
//! class's FIFO; the fair queue (`fair_queue.rs`) admits requests to the
//! kernel while the in-flight limits of `io_queue.rs` allow, the least-served
//! class first; a completion releases what the request held and admits more.
//! Below, the block layer runs as without the layer (any elevator, any
//! device): the layer only decides *when* a submission reaches `submit_bio`.
//!
//! Not modelled: Seastar's reactor polls completions once per task quota
//! (here a completion releases capacity the moment it happens), several
//! shards (one I/O queue per layer), and the later I/O groups and token
//! bucket (Seastar 2021+).

pub mod fair_queue;
pub mod io_queue;
#[cfg(test)]
mod tests;

use crate::block::ReqFlags;
use crate::ids::{DeviceId, TaskId};
use crate::metrics::latency::{LatencyStats, LatencySummary};
use crate::time::SimTime;
use fair_queue::{Executing, FairQueue, FairQueueRequest};
use io_queue::{InflightPolicy, IoQueueConfig};
use std::collections::BTreeMap;

/// A class of an I/O queue, as an I/O step names it (plain data kept beside
/// `IoStep`, below this layer).
pub use crate::workload::program::IoClassRef;

/// A validated `[io_queues.NAME.classes.CLASS]`.
#[derive(Clone, Debug, PartialEq)]
pub struct IoClassSpec {
    pub name: String,
    pub shares: u32,
}

/// A validated `[io_queues.NAME]`.
#[derive(Clone, Debug, PartialEq)]
pub struct IoQueueSpec {
    pub name: String,
    pub device: DeviceId,
    pub policy: InflightPolicy,
    pub classes: Vec<IoClassSpec>,
}

/// A submission held by the layer until admitted: everything the engine
/// needs to pass it to the block layer then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingIo {
    pub task: TaskId,
    /// The task's submission sequence number.
    pub seq: u64,
    pub flags: ReqFlags,
    pub sector: u64,
    pub sectors: u64,
    pub bytes: u64,
    pub queued_at: SimTime,
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    class: usize,
    desc: FairQueueRequest,
    bytes: u64,
    queued_at: SimTime,
    /// Admission order, to find the latest request still in flight.
    admitted: u64,
}

/// Per-class figures.
#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    pub submitted: u64,
    pub admitted: u64,
    pub completed: u64,
    pub completed_bytes: u64,
    /// Submission to admission: the time spent in the layer.
    pub queue_wait: LatencyStats,
    /// Submission to the completion of its last bio.
    pub latency: LatencyStats,
}

/// One I/O queue while running.
#[derive(Clone, Debug)]
pub struct IoQueue {
    pub spec: IoQueueSpec,
    pub config: IoQueueConfig,
    fq: FairQueue<PendingIo>,
    in_flight: BTreeMap<(TaskId, u64), InFlight>,
    admissions: u64,
    pub stats: Vec<ClassStats>,
    /// The largest in-flight totals seen (requests, weights, sizes).
    pub high_water: Executing,
}

impl IoQueue {
    pub fn new(spec: IoQueueSpec) -> IoQueue {
        let config = IoQueueConfig::generate(&spec.policy);
        let shares: Vec<u32> = spec.classes.iter().map(|c| c.shares).collect();
        let fq = FairQueue::new(config.fair_queue_config(), &shares);
        let stats = vec![ClassStats::default(); spec.classes.len()];
        IoQueue { spec, config, fq, in_flight: BTreeMap::new(), admissions: 0, stats, high_water: Executing::default() }
    }

    pub fn fair_queue(&self) -> &FairQueue<PendingIo> {
        &self.fq
    }

    /// `io_queue::queue_request`: the submission waits in its class.
    pub fn queue(&mut self, class: usize, io: PendingIo) {
        let desc = self.config.request(io.flags.op == crate::block::Op::Write, io.bytes);
        self.stats[class].submitted += 1;
        self.fq.queue(class, desc, io.bytes, io);
    }

    /// `fair_queue::dispatch_requests`: the submissions admitted now, in order.
    pub fn dispatch(&mut self, now: SimTime) -> Vec<PendingIo> {
        let mut out = Vec::new();
        while let Some((class, desc, io)) = self.fq.dispatch_one(now) {
            self.admissions += 1;
            let prev = self.in_flight.insert(
                (io.task, io.seq),
                InFlight { class, desc, bytes: io.bytes, queued_at: io.queued_at, admitted: self.admissions },
            );
            debug_assert!(prev.is_none(), "a submission admitted twice");
            let s = &mut self.stats[class];
            s.admitted += 1;
            s.queue_wait.record(now.since(io.queued_at), now);
            let e = self.fq.executing();
            let hw = &mut self.high_water;
            hw.requests = hw.requests.max(e.requests);
            hw.req_count = hw.req_count.max(e.req_count);
            hw.bytes_count = hw.bytes_count.max(e.bytes_count);
            out.push(io);
        }
        out
    }

    /// A submission's last bio completed: if it went through this queue,
    /// `notify_requests_finished` and true.
    pub fn complete(&mut self, now: SimTime, task: TaskId, seq: u64) -> bool {
        let Some(f) = self.in_flight.remove(&(task, seq)) else { return false };
        self.fq.notify_requests_finished(f.desc);
        let s = &mut self.stats[f.class];
        s.completed += 1;
        s.completed_bytes += f.bytes;
        s.latency.record(now.since(f.queued_at), now);
        true
    }

    /// Submissions admitted and not yet completed.
    /// Whether the layer admitted `(task, seq)` and it has not completed.
    pub fn admitted(&self, task: TaskId, seq: u64) -> bool {
        self.in_flight.contains_key(&(task, seq))
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The submissions waiting in the layer, class by class.
    pub fn waiting_items(&self) -> impl Iterator<Item = &PendingIo> {
        (0..self.spec.classes.len()).flat_map(|i| self.fq.queued_items(i))
    }

    /// Submissions still waiting in the layer.
    pub fn waiting(&self) -> u64 {
        self.fq.waiters()
    }

    /// The layer's invariants: the in-flight totals are the sums over the
    /// requests in flight; each was admitted while every total was below
    /// its limit, so without the latest one still in flight each total is
    /// below its limit (`can_dispatch` checks before adding); per class,
    /// submitted = waiting + in flight + completed.
    pub fn check(&self) -> Result<(), String> {
        let e = self.fq.executing();
        let mut sum = Executing::default();
        let mut latest: Option<&InFlight> = None;
        for f in self.in_flight.values() {
            sum.requests += 1;
            sum.req_count += f.desc.weight;
            sum.bytes_count += f.desc.size;
            if latest.is_none_or(|l| f.admitted > l.admitted) {
                latest = Some(f);
            }
        }
        if sum != e {
            return Err(format!(
                "io queue {}: in-flight totals {e:?}, requests in flight sum to {sum:?}",
                self.spec.name
            ));
        }
        if let Some(l) = latest {
            let c = &self.fq.config;
            if e.requests > c.capacity
                || e.req_count - l.desc.weight >= c.max_req_count
                || e.bytes_count - l.desc.size >= c.max_bytes_count
            {
                return Err(format!("io queue {}: in flight {e:?} over the limits {c:?}", self.spec.name));
            }
        }
        for (i, s) in self.stats.iter().enumerate() {
            let waiting = self.fq.classes()[i].queued() as u64;
            let flying = self.in_flight.values().filter(|f| f.class == i).count() as u64;
            if s.submitted != waiting + flying + s.completed || s.admitted != flying + s.completed {
                return Err(format!(
                    "io queue {} class {}: submitted {} admitted {} ≠ waiting {waiting} + in flight {flying} + completed {}",
                    self.spec.name, self.spec.classes[i].name, s.submitted, s.admitted, s.completed
                ));
            }
        }
        Ok(())
    }

    /// The queue-wait and latency summaries of class `i`, with the waits
    /// still open at `now` (waiting in the layer; in flight).
    pub fn class_summaries(&self, i: usize, now: SimTime) -> (LatencySummary, LatencySummary) {
        let s = &self.stats[i];
        let open_flying: Vec<u64> =
            self.in_flight.values().filter(|f| f.class == i).map(|f| now.since(f.queued_at)).collect();
        let waits: Vec<u64> = self.fq.queued_items(i).map(|io| now.since(io.queued_at)).collect();
        let (wait_open, wait_max) = (waits.len() as u64, waits.iter().copied().max().unwrap_or(0));
        let lat_open = open_flying.len() as u64 + wait_open;
        let lat_max = open_flying.iter().copied().max().unwrap_or(0).max(wait_max);
        (s.queue_wait.summary().with_open(wait_open, wait_max), s.latency.summary().with_open(lat_open, lat_max))
    }
}
