//! The report's part for userspace I/O queues (`[io_queues.NAME]`, Seastar's
//! I/O scheduler): per queue its policy and limits, the in-flight high-water
//! marks against them, and per class requests, bytes, throughput, the time
//! spent queued in the layer (apart from the kernel's Q2C) and the
//! end-to-end latency from submission to completion.

use crate::metrics::latency::LatencySummary;
use crate::userspace_io::io_queue::{InflightPolicy, UNLIMITED};
use crate::view::RunView;

fn limit(v: u64) -> Option<u64> {
    (v < UNLIMITED).then_some(v)
}

/// One I/O queue's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct IoQueueReport {
    pub name: String,
    pub device: String,
    /// `capacity`, `max-io-requests` or `none`.
    pub policy: &'static str,
    /// Limits (`None`: no limit): requests in flight (`capacity`), and with
    /// the capacity policy the weight and size limits in read-request units
    /// (×128).
    pub max_requests: Option<u64>,
    pub max_req_count: Option<u64>,
    pub max_bytes_count: Option<u64>,
    /// The largest in-flight totals seen: requests, weights, sizes.
    pub high_water_requests: u64,
    pub high_water_req_count: u64,
    pub high_water_bytes_count: u64,
    pub classes: Vec<IoClassReport>,
}

/// One class of an I/O queue.
#[derive(Clone, Debug, PartialEq)]
pub struct IoClassReport {
    pub name: String,
    pub shares: u32,
    pub submitted: u64,
    pub completed: u64,
    pub bytes: u64,
    /// Completed bytes per second of simulated time, in bytes.
    pub bytes_per_s: u64,
    /// Submission to admission (the layer's queue), open waits included.
    pub queue_wait: LatencySummary,
    /// Submission to completion, open ones included.
    pub latency: LatencySummary,
}

impl IoQueueReport {
    pub fn build(v: &RunView) -> Vec<IoQueueReport> {
        let now = v.now;
        let spec = v.spec;
        v.io_queues
            .iter()
            .map(|q| {
                let classes = q
                    .spec
                    .classes
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let s = &q.stats[i];
                        let (queue_wait, latency) = q.class_summaries(i, now);
                        IoClassReport {
                            name: c.name.clone(),
                            shares: c.shares,
                            submitted: s.submitted,
                            completed: s.completed,
                            bytes: s.completed_bytes,
                            bytes_per_s: if now.ns() == 0 {
                                0
                            } else {
                                (u128::from(s.completed_bytes) * 1_000_000_000 / u128::from(now.ns())) as u64
                            },
                            queue_wait,
                            latency,
                        }
                    })
                    .collect();
                IoQueueReport {
                    name: q.spec.name.clone(),
                    device: spec.devices[q.spec.device.index()].name.clone(),
                    policy: match q.spec.policy {
                        InflightPolicy::MaxIoRequests(_) => "max-io-requests",
                        InflightPolicy::Capacity { .. } => "capacity",
                        InflightPolicy::Unlimited => "none",
                    },
                    max_requests: limit(q.config.capacity),
                    max_req_count: limit(q.config.max_req_count),
                    max_bytes_count: limit(q.config.max_bytes_count),
                    high_water_requests: q.high_water.requests,
                    high_water_req_count: q.high_water.req_count,
                    high_water_bytes_count: q.high_water.bytes_count,
                    classes,
                }
            })
            .collect()
    }
}
