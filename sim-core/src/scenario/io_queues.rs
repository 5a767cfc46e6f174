//! Validates `[io_queues.*]` (the Seastar-style userspace I/O scheduler,
//! `userspace_io/`) and resolves an I/O step's `io_class = "QUEUE.CLASS"`.

use super::error::KeyError;
use super::file::{IoQueueFile, ScenarioFile};
use super::values::{check_name, duration_in};
use crate::ids::DeviceId;
use crate::userspace_io::io_queue::{InflightPolicy, IoProperties};
use crate::userspace_io::{IoClassRef, IoClassSpec, IoQueueSpec};
use crate::workload::dist::parse_size;

pub const IO_QUEUES_MAX: usize = 64;
pub const IO_CLASSES_MAX: usize = 64;
pub const SHARES_MAX: i64 = 1_000_000;
pub const MAX_IO_REQUESTS_MAX: i64 = 65_536;
pub const IOPS_MAX: i64 = 1_000_000_000;
const TASK_QUOTA_NS: (u64, u64) = (10_000, 100_000_000);
const LATENCY_FACTOR: (f64, f64) = (0.1, 100.0);
const POLICIES: &str = "\"capacity\", \"max-io-requests\", \"none\"";

fn iops(v: Option<i64>, key: &str) -> Result<u64, KeyError> {
    match v {
        None => Err(KeyError::new(key, format!("required with policy \"capacity\": 1 to {IOPS_MAX}"))),
        Some(n) if (1..=IOPS_MAX).contains(&n) => Ok(n as u64),
        Some(n) => Err(KeyError::new(key, format!("{n} is not allowed: 1 to {IOPS_MAX} requests per second"))),
    }
}

fn bandwidth(v: &Option<String>, key: &str) -> Result<u64, KeyError> {
    let Some(s) = v else {
        return Err(KeyError::new(
            key,
            "required with policy \"capacity\": a positive size per second such as \"512MiB/s\"",
        ));
    };
    let bad = || KeyError::new(key, format!("`{s}` is not allowed: a positive size per second such as \"512MiB/s\""));
    let per_s = s.trim().strip_suffix("/s").ok_or_else(bad)?;
    let bytes = parse_size(per_s).map_err(|_| bad())?;
    if bytes == 0 {
        return Err(bad());
    }
    Ok(bytes)
}

fn io_queue(f: &ScenarioFile, name: &str, q: &IoQueueFile) -> Result<IoQueueSpec, KeyError> {
    let key = |k: &str| format!("io_queues.{name}.{k}");
    check_name(name, &format!("io_queues.{name}"))?;
    let device = f.devices.keys().position(|d| d == &q.device).ok_or_else(|| {
        let names: Vec<&str> = f.devices.keys().map(String::as_str).collect();
        KeyError::new(
            key("device"),
            format!(
                "no device named `{}`; declared: {}",
                q.device,
                if names.is_empty() { "none".into() } else { names.join(", ") }
            ),
        )
    })?;
    let max_io_requests = match q.max_io_requests {
        None => None,
        Some(n) if (1..=MAX_IO_REQUESTS_MAX).contains(&n) => Some(n as u64),
        Some(n) => {
            return Err(KeyError::new(
                key("max_io_requests"),
                format!("{n} is not allowed: 1 to {MAX_IO_REQUESTS_MAX}"),
            ));
        }
    };
    let policy = match q.policy.as_deref() {
        None | Some("capacity") => {
            let task_quota_ns = match &q.task_quota {
                None => 500_000,
                Some(v) => duration_in(v, &key("task_quota"), TASK_QUOTA_NS, " (Seastar's --task-quota-ms)")?,
            };
            let latency_factor = q.latency_factor.unwrap_or(1.5);
            if !(LATENCY_FACTOR.0..=LATENCY_FACTOR.1).contains(&latency_factor) {
                return Err(KeyError::new(
                    key("latency_factor"),
                    format!("{latency_factor} is not allowed: 0.1 to 100"),
                ));
            }
            let props = IoProperties {
                read_iops: iops(q.read_iops, &key("read_iops"))?,
                write_iops: iops(q.write_iops, &key("write_iops"))?,
                read_bytes_per_s: bandwidth(&q.read_bandwidth, &key("read_bandwidth"))?,
                write_bytes_per_s: bandwidth(&q.write_bandwidth, &key("write_bandwidth"))?,
                task_quota_ns,
                latency_factor,
            };
            InflightPolicy::Capacity { props, max_io_requests }
        }
        // The io_properties keys are read by "capacity" only, so a variant
        // can switch policies without removing them.
        Some("max-io-requests") => {
            let n = max_io_requests.ok_or_else(|| {
                KeyError::new(
                    key("max_io_requests"),
                    format!("required with policy \"max-io-requests\": 1 to {MAX_IO_REQUESTS_MAX}"),
                )
            })?;
            InflightPolicy::MaxIoRequests(n)
        }
        Some("none") => InflightPolicy::Unlimited,
        Some(other) => {
            return Err(KeyError::new(key("policy"), format!("unknown policy `{other}`; allowed: {POLICIES}")));
        }
    };
    if q.classes.is_empty() || q.classes.len() > IO_CLASSES_MAX {
        return Err(KeyError::new(
            key("classes"),
            format!("1 to {IO_CLASSES_MAX} classes ([io_queues.{name}.classes.NAME])"),
        ));
    }
    let mut classes = Vec::with_capacity(q.classes.len());
    for (c, cf) in &q.classes {
        let ck = key(&format!("classes.{c}"));
        check_name(c, &ck)?;
        if !(1..=SHARES_MAX).contains(&cf.shares) {
            return Err(KeyError::new(
                format!("{ck}.shares"),
                format!("{} is not allowed: 1 to {SHARES_MAX}", cf.shares),
            ));
        }
        classes.push(IoClassSpec { name: c.clone(), shares: cf.shares as u32 });
    }
    Ok(IoQueueSpec { name: name.to_string(), device: DeviceId(device as u16), policy, classes })
}

/// All I/O queues, in name order (the order `IoClassRef::queue` follows).
pub fn resolve(f: &ScenarioFile) -> Result<Vec<IoQueueSpec>, KeyError> {
    if f.io_queues.len() > IO_QUEUES_MAX {
        return Err(KeyError::new("io_queues", format!("{} I/O queues; at most {IO_QUEUES_MAX}", f.io_queues.len())));
    }
    f.io_queues.iter().map(|(name, q)| io_queue(f, name, q)).collect()
}

/// An I/O step's `io_class = "QUEUE.CLASS"`, and the device it implies.
pub fn class_ref(f: &ScenarioFile, text: &str, key: &str) -> Result<(IoClassRef, usize), KeyError> {
    let queues: Vec<&str> = f.io_queues.keys().map(String::as_str).collect();
    let Some((qn, cn)) = text.split_once('.') else {
        return Err(KeyError::new(key, format!("`{text}` is not \"QUEUE.CLASS\"; queues: {}", list(&queues))));
    };
    let Some((qi, q)) = f.io_queues.iter().enumerate().find(|(_, (n, _))| n.as_str() == qn).map(|(i, (_, q))| (i, q))
    else {
        return Err(KeyError::new(key, format!("no I/O queue named `{qn}`; declared: {}", list(&queues))));
    };
    let Some(ci) = q.classes.keys().position(|c| c == cn) else {
        let classes: Vec<&str> = q.classes.keys().map(String::as_str).collect();
        return Err(KeyError::new(key, format!("I/O queue `{qn}` has no class `{cn}`; classes: {}", list(&classes))));
    };
    let device = f.devices.keys().position(|d| d == &q.device).unwrap_or(0);
    Ok((IoClassRef { queue: qi as u16, class: ci as u16 }, device))
}

fn list(names: &[&str]) -> String {
    if names.is_empty() { "none".to_string() } else { names.join(", ") }
}
