//! Seastar's `io_queue` limits: what may be in flight at the disk, by the two
//! policies seed 004 compares (Seastar commit 97cc0de6e, 2018-04-18).
//!
//! - `max-io-requests` (before the series): a fixed count of requests,
//!   whatever their size or direction.
//! - capacity (97cc0de6e, `disk_config_params::generate_config`): from
//!   iotune's io_properties (read/write IOPS and bandwidth) and Little's law,
//!   concurrency = rate × latency goal, where the goal is `task_quota` ×
//!   1.5. Every request is counted twice, in "read request units" (×128,
//!   `read_request_base_count`): a weight against the IOPS limit and a size
//!   against the byte limit, writes scaled by the read/write ratios. Each
//!   limit is checked on its own, so a request is held by whichever the
//!   in-flight mix exhausts first: many 4 KiB reads fit under the IOPS
//!   limit, few 128 KiB writes under the byte limit.

use super::fair_queue::{CostRule, FairQueueConfig, FairQueueRequest, TAU_US};

/// `io_queue::read_request_base_count`: one read request counts as 128, so
/// write/read ratios stay integers.
pub const READ_REQUEST_BASE_COUNT: u64 = 128;

/// iotune's io_properties (`--io-properties`: `read_reqs_per_sec`,
/// `write_reqs_per_sec`, `read_bytes_per_sec`, `write_bytes_per_sec`) and the
/// latency goal's parts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoProperties {
    pub read_iops: u64,
    pub write_iops: u64,
    pub read_bytes_per_s: u64,
    pub write_bytes_per_s: u64,
    /// `--task-quota-ms` (default 0.5 ms).
    pub task_quota_ns: u64,
    /// The factor over the task quota (1.5 in 97cc0de6e).
    pub latency_factor: f64,
}

/// Which in-flight limit the layer applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InflightPolicy {
    /// `--max-io-requests`: at most this many requests in flight.
    MaxIoRequests(u64),
    /// Little's-law capacity from io_properties; `max_io_requests` may
    /// still cap the count, as `io_queue::config::capacity` does.
    Capacity { props: IoProperties, max_io_requests: Option<u64> },
    /// No limit (`policy = "none"`): every submission is admitted at once,
    /// as without the layer; the layer only measures.
    Unlimited,
}

/// `io_queue::config` as `generate_config` fills it, for one I/O queue
/// (one shard: `num_io_queues` = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoQueueConfig {
    pub capacity: u64,
    pub max_req_count: u64,
    pub max_bytes_count: u64,
    pub disk_req_write_to_read_multiplier: u64,
    pub disk_bytes_write_to_read_multiplier: u64,
    /// Whether the cost rule is 97cc0de6e's (else the older fairness weight).
    pub capacity_costs: bool,
}

/// Seastar's `unsigned` limits: this large means none.
pub const UNLIMITED: u64 = u32::MAX as u64;

impl IoQueueConfig {
    /// `disk_config_params::generate_config` (97cc0de6e, core/reactor.cc).
    pub fn generate(policy: &InflightPolicy) -> IoQueueConfig {
        match *policy {
            InflightPolicy::Unlimited => IoQueueConfig {
                capacity: u64::MAX,
                max_req_count: u64::MAX,
                max_bytes_count: u64::MAX,
                disk_req_write_to_read_multiplier: READ_REQUEST_BASE_COUNT,
                disk_bytes_write_to_read_multiplier: READ_REQUEST_BASE_COUNT,
                capacity_costs: false,
            },
            // Before 2be664d20 the fair queue had only its capacity.
            InflightPolicy::MaxIoRequests(n) => IoQueueConfig {
                capacity: n,
                max_req_count: u64::MAX,
                max_bytes_count: u64::MAX,
                disk_req_write_to_read_multiplier: READ_REQUEST_BASE_COUNT,
                disk_bytes_write_to_read_multiplier: READ_REQUEST_BASE_COUNT,
                capacity_costs: false,
            },
            InflightPolicy::Capacity { props: p, max_io_requests } => {
                // _latency_goal = task-quota-ms × 1.5 ms, in seconds (double).
                let goal_s = p.task_quota_ns as f64 * p.latency_factor / 1e9;
                let max_bandwidth = p.read_bytes_per_s.max(p.write_bytes_per_s);
                let max_iops = p.read_iops.max(p.write_iops);
                // per_io_queue(qty) = max(qty / num_io_queues, 1), qty truncated to an integer.
                let per_io_queue = |qty: f64| (qty as u64).max(1);
                IoQueueConfig {
                    capacity: max_io_requests.unwrap_or(UNLIMITED),
                    max_req_count: (READ_REQUEST_BASE_COUNT * per_io_queue(max_iops as f64 * goal_s)).min(UNLIMITED),
                    max_bytes_count: (READ_REQUEST_BASE_COUNT * per_io_queue(max_bandwidth as f64 * goal_s))
                        .min(UNLIMITED),
                    disk_req_write_to_read_multiplier: READ_REQUEST_BASE_COUNT * p.read_iops / p.write_iops,
                    disk_bytes_write_to_read_multiplier: READ_REQUEST_BASE_COUNT * p.read_bytes_per_s
                        / p.write_bytes_per_s,
                    capacity_costs: true,
                }
            }
        }
    }

    /// `io_queue::queue_request` (97cc0de6e): a read counts 128 and 128 × len;
    /// a write the write/read multipliers.
    pub fn request(&self, write: bool, len: u64) -> FairQueueRequest {
        if write {
            FairQueueRequest {
                weight: self.disk_req_write_to_read_multiplier,
                size: self.disk_bytes_write_to_read_multiplier * len,
            }
        } else {
            FairQueueRequest { weight: READ_REQUEST_BASE_COUNT, size: READ_REQUEST_BASE_COUNT * len }
        }
    }

    /// `io_queue::make_fair_queue_config`.
    pub fn fair_queue_config(&self) -> FairQueueConfig {
        FairQueueConfig {
            capacity: self.capacity,
            tau_us: TAU_US,
            max_req_count: self.max_req_count,
            max_bytes_count: self.max_bytes_count,
            cost: if self.capacity_costs {
                CostRule::Capacity { max_req_count: self.max_req_count, max_bytes_count: self.max_bytes_count }
            } else {
                CostRule::FairnessWeight
            },
        }
    }
}
