//! Validates `[devices.*]`: the disk model, its elevator and the elevator's
//! sysfs tunables (only the selected elevator's table applies; the others are
//! still checked, so a typo in a table a variant switches to is caught).

use super::error::KeyError;
use super::file::{DeviceFile, ScenarioFile};
use super::validate::{check_name, duration_value};
use crate::block::blk_mq::{NR_HW_QUEUES_MAX, nr_requests_range};
use crate::block::cfq_tunables::CfqBehaviour;
use crate::block::request::SECTOR_BYTES;
use crate::block::{
    BlkMqSettings, CfqTunables, DeadlineTunables, DeviceKind, DeviceSpec, ElevatorSpec, Ioprio, IoprioClass,
    MqDeadlineTunables,
};
use crate::workload::dist::parse_size;
use std::collections::BTreeMap;
use toml::Value;

pub const DEVICES_MAX: usize = 64;
pub const QUEUE_DEPTH_MAX: u64 = 4096;
const ELEVATORS: &str = "noop, deadline, cfq, none, mq-deadline";

fn bandwidth(v: &Option<String>, key: &str, default: u64) -> Result<u64, KeyError> {
    let Some(s) = v else { return Ok(default) };
    let per_s = s.trim().strip_suffix("/s").ok_or_else(|| {
        KeyError::new(key, format!("`{s}` is not a bandwidth; write a size per second such as \"500MiB/s\""))
    })?;
    let bytes = parse_size(per_s).map_err(|m| KeyError::new(key, m))?;
    if bytes == 0 {
        return Err(KeyError::new(key, "must be positive"));
    }
    Ok(bytes)
}

fn tunable_value(v: &Value, key: &str) -> Result<u64, KeyError> {
    match v {
        Value::Integer(n) if *n >= 0 && *n <= i64::from(i32::MAX) => Ok(*n as u64),
        Value::Boolean(b) => Ok(u64::from(*b)),
        _ => Err(KeyError::new(key, "expected an integer from 0 to 2147483647, as written to sysfs")),
    }
}

fn device(name: &str, d: &DeviceFile, hz: u32, index: usize) -> Result<DeviceSpec, KeyError> {
    let key = |k: &str| format!("devices.{name}.{k}");
    let kind_name = d.kind.as_deref().unwrap_or("ssd");
    let opt_ns =
        |v: &Option<Value>, k: &str, default: u64| v.as_ref().map_or(Ok(default), |v| duration_value(v, &key(k)));
    let ssd_only = [
        ("rpm", d.rpm.is_some()),
        ("seek_min", d.seek_min.is_some()),
        ("seek_max", d.seek_max.is_some()),
        ("bandwidth", d.bandwidth.is_some()),
    ];
    let hdd_only = [
        ("read_latency", d.read_latency.is_some()),
        ("write_latency", d.write_latency.is_some()),
        ("read_bandwidth", d.read_bandwidth.is_some()),
        ("write_bandwidth", d.write_bandwidth.is_some()),
    ];
    let (kind, capacity_default) = match kind_name {
        "ssd" => {
            if let Some((k, _)) = ssd_only.iter().find(|(_, set)| *set) {
                return Err(KeyError::new(key(k), "applies to `kind = \"hdd\"` only"));
            }
            let kind = DeviceKind::Ssd {
                read_latency_ns: opt_ns(&d.read_latency, "read_latency", 100_000)?,
                write_latency_ns: opt_ns(&d.write_latency, "write_latency", 30_000)?,
                read_bytes_per_s: bandwidth(&d.read_bandwidth, &key("read_bandwidth"), 2_000_000_000)?,
                write_bytes_per_s: bandwidth(&d.write_bandwidth, &key("write_bandwidth"), 1_000_000_000)?,
            };
            (kind, 512u64 << 30)
        }
        "hdd" => {
            if let Some((k, _)) = hdd_only.iter().find(|(_, set)| *set) {
                return Err(KeyError::new(key(k), "applies to `kind = \"ssd\"` only (a disk has `bandwidth`)"));
            }
            let rpm = d.rpm.unwrap_or(7200);
            if !(3600..=20_000).contains(&rpm) {
                return Err(KeyError::new(key("rpm"), format!("{rpm} is not allowed: 3600 to 20000")));
            }
            let seek_min_ns = opt_ns(&d.seek_min, "seek_min", 500_000)?;
            let seek_max_ns = opt_ns(&d.seek_max, "seek_max", 15_000_000)?;
            if seek_min_ns > seek_max_ns || seek_max_ns > 1_000_000_000 {
                return Err(KeyError::new(key("seek_max"), "must be at least seek_min and at most 1s"));
            }
            let kind = DeviceKind::Hdd {
                rpm: rpm as u32,
                seek_min_ns,
                seek_max_ns,
                bytes_per_s: bandwidth(&d.bandwidth, &key("bandwidth"), 150_000_000)?,
            };
            (kind, 2u64 << 40)
        }
        other => return Err(KeyError::new(key("kind"), format!("unknown device kind `{other}`; allowed: ssd, hdd"))),
    };
    let capacity = match &d.capacity {
        None => capacity_default,
        Some(s) => parse_size(s).map_err(|m| KeyError::new(key("capacity"), m))?,
    };
    if capacity < 1 << 20 {
        return Err(KeyError::new(key("capacity"), "must be at least 1MiB"));
    }
    let queue_depth = d.queue_depth.unwrap_or(32);
    if queue_depth == 0 || queue_depth > QUEUE_DEPTH_MAX {
        return Err(KeyError::new(key("queue_depth"), format!("{queue_depth} is not allowed: 1 to {QUEUE_DEPTH_MAX}")));
    }
    let max_kb = d.max_sectors_kb.unwrap_or(1280);
    if !(4..=32_768).contains(&max_kb) {
        return Err(KeyError::new(key("max_sectors_kb"), format!("{max_kb} is not allowed: 4 to 32768")));
    }
    let behaviour = match d.cfq_behaviour.as_deref() {
        None | Some("fixed") => CfqBehaviour::Fixed,
        Some("4.4") => CfqBehaviour::V4_4,
        Some(other) => {
            return Err(KeyError::new(key("cfq_behaviour"), format!("`{other}` is not allowed: \"4.4\" or \"fixed\"")));
        }
    };
    let rotational = d.rotational.unwrap_or(kind_name == "hdd");
    let mut cfq = CfqTunables::defaults(hz, !rotational);
    cfq.behaviour = behaviour;
    for (k, v) in &d.cfq {
        let full = key(&format!("cfq.{k}"));
        cfq.set(k, tunable_value(v, &full)?, hz).map_err(|m| KeyError::new(full, m))?;
    }
    let mut deadline = DeadlineTunables::defaults(hz);
    for (k, v) in &d.deadline {
        let full = key(&format!("deadline.{k}"));
        deadline.set(k, tunable_value(v, &full)?, hz).map_err(|m| KeyError::new(full, m))?;
    }
    let mut mq_deadline = MqDeadlineTunables::defaults(hz);
    for (k, v) in &d.mq_deadline {
        let full = key(&format!("mq-deadline.{k}"));
        mq_deadline.set(k, tunable_value(v, &full)?, hz).map_err(|m| KeyError::new(full, m))?;
    }
    let elevator = match d.elevator.as_deref().unwrap_or("cfq") {
        "none" => ElevatorSpec::MqNone,
        "mq-deadline" => ElevatorSpec::MqDeadline(mq_deadline),
        "noop" => ElevatorSpec::Noop,
        "deadline" => ElevatorSpec::Deadline(deadline),
        "cfq" => ElevatorSpec::Cfq(cfq),
        other => {
            return Err(KeyError::new(key("elevator"), format!("unknown elevator `{other}`; allowed: {ELEVATORS}")));
        }
    };
    Ok(DeviceSpec {
        name: name.to_string(),
        rotational,
        kind,
        queue_depth: queue_depth as u32,
        capacity_sectors: capacity / SECTOR_BYTES,
        max_sectors: (max_kb * 2) as u32,
        elevator,
        dev_t: (8, 16 * index as u32),
    })
}

/// All devices, in name order (the order `DeviceId`s follow).
pub fn resolve(f: &ScenarioFile, hz: u32) -> Result<Vec<DeviceSpec>, KeyError> {
    if f.devices.len() > DEVICES_MAX {
        return Err(KeyError::new("devices", format!("{} devices; at most {DEVICES_MAX}", f.devices.len())));
    }
    let devices: &BTreeMap<String, DeviceFile> = &f.devices;
    devices
        .iter()
        .enumerate()
        .map(|(i, (name, d))| {
            check_name(name, &format!("devices.{name}"))?;
            device(name, d, hz, i)
        })
        .collect()
}

/// Each device's blk-mq settings: `nr_hw_queues` 1 to `NR_HW_QUEUES_MAX`,
/// `nr_requests` in `queue_requests_store`'s range for the elevator (only
/// with an mq elevator).
pub fn resolve_mq(f: &ScenarioFile, devices: &[DeviceSpec]) -> Result<Vec<BlkMqSettings>, KeyError> {
    f.devices
        .iter()
        .zip(devices)
        .map(|((name, d), spec)| {
            let key = |k: &str| format!("devices.{name}.{k}");
            let mq = spec.elevator.is_mq();
            if !mq
                && let Some(k) = [("nr_hw_queues", d.nr_hw_queues.is_some()), ("nr_requests", d.nr_requests.is_some())]
                    .iter()
                    .find(|(_, set)| *set)
                    .map(|(k, _)| *k)
            {
                return Err(KeyError::new(
                    key(k),
                    format!("applies to blk-mq elevators only (`none`, `mq-deadline`), not `{}`", spec.elevator.name()),
                ));
            }
            let nr_hw = d.nr_hw_queues.unwrap_or(1);
            if !(1..=u64::from(NR_HW_QUEUES_MAX)).contains(&nr_hw) {
                return Err(KeyError::new(
                    key("nr_hw_queues"),
                    format!("{nr_hw} is not allowed: 1 to {NR_HW_QUEUES_MAX}"),
                ));
            }
            let sched = !matches!(spec.elevator, ElevatorSpec::MqNone);
            let nr_requests = match d.nr_requests {
                None => None,
                Some(n) => {
                    let (lo, hi) = nr_requests_range(spec.queue_depth, sched);
                    if n < u64::from(lo) || n > u64::from(hi) {
                        let why = if sched { "with a scheduler, MAX_SCHED_RQ" } else { "with none, queue_depth" };
                        return Err(KeyError::new(
                            key("nr_requests"),
                            format!("{n} is not allowed: {lo} to {hi} (BLKDEV_MIN_RQ to {why})"),
                        ));
                    }
                    Some(n as u32)
                }
            };
            Ok(BlkMqSettings { nr_hw_queues: nr_hw as u32, nr_requests })
        })
        .collect()
}

/// A task's `ionice`: `rt/N`, `be/N` (N 0 to 7, `IOPRIO_NR_LEVELS`) or
/// `idle` (`ioprio_check_cap`: the idle class has no level).
pub fn ionice(v: Option<&str>, key: &str) -> Result<Option<Ioprio>, KeyError> {
    let Some(s) = v else { return Ok(None) };
    let bad = || KeyError::new(key, format!("`{s}` is not allowed: \"rt/N\" or \"be/N\" with N 0 to 7, or \"idle\""));
    if s == "idle" {
        return Ok(Some(Ioprio { class: IoprioClass::Idle, level: 7 }));
    }
    let (class, level) = s.split_once('/').ok_or_else(bad)?;
    let class = match class {
        "rt" => IoprioClass::Rt,
        "be" => IoprioClass::Be,
        _ => return Err(bad()),
    };
    let level: u8 = level.parse().map_err(|_| bad())?;
    if level > 7 {
        return Err(bad());
    }
    Ok(Some(Ioprio { class, level }))
}

/// The 4.4 CFQ model has no RT class: a task with `ionice = "rt/N"` is
/// refused when a device uses `cfq`.
pub fn check_ionice(tasks: &[super::validate::TaskSpec], devices: &[DeviceSpec]) -> Result<(), KeyError> {
    let Some(cfq) = devices.iter().find(|d| matches!(d.elevator, ElevatorSpec::Cfq(_))) else { return Ok(()) };
    for t in tasks {
        if t.ionice.is_some_and(|p| p.class == IoprioClass::Rt) {
            return Err(KeyError::new(
                format!("tasks.{}.ionice", t.name),
                format!("the cfq model (device `{}`) has no RT class; allowed with cfq: \"be/N\", \"idle\"", cfq.name),
            ));
        }
    }
    Ok(())
}
