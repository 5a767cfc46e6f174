//! Validates `[devices.*]`: the disk model, its elevator and the elevator's
//! sysfs tunables (only the selected elevator's table applies; the others are
//! still checked, so a typo in a table a variant switches to is caught).

use super::error::KeyError;
use super::file::{DeviceFile, ScenarioFile};
use super::values::{check_name, duration_in, duration_value, shown};
use crate::block::blk_mq::{NR_HW_QUEUES_MAX, nr_requests_range};
use crate::block::cfq_tunables::CfqBehaviour;
use crate::block::device::cloud::CloudParams;
use crate::block::device::flash::FlashParams;
use crate::block::device::presets::{self, Preset};
use crate::block::request::Op;
use crate::block::request::SECTOR_BYTES;
use crate::block::{
    BfqTunables, BlkMqSettings, CfqTunables, DeadlineTunables, DeviceKind, DeviceSpec, ElevatorSpec, Ioprio,
    IoprioClass, KyberTunables, MqDeadlineTunables,
};
use crate::sched::model::KernelModel;
use crate::time::format_duration;
use crate::workload::dist::parse_size;
use std::collections::BTreeMap;
use toml::Value;

pub const DEVICES_MAX: usize = 64;
pub use crate::block::device::{BURST_CREDITS_MAX, IOPS_MAX, PARALLELISM_MAX, QUEUE_DEPTH_MAX};

fn bandwidth(v: &Option<String>, key: &str, default: u64) -> Result<u64, KeyError> {
    let Some(s) = v else { return Ok(default) };
    let per_s = s.trim().strip_suffix("/s").ok_or_else(|| {
        KeyError::new(key, format!("`{s}` is not a bandwidth; write a size per second such as \"500MiB/s\""))
    })?;
    let bytes = parse_size(per_s).map_err(|m| KeyError::new(key, m))?;
    if bytes == 0 {
        return Err(KeyError::new(key, format!("`{s}` is not allowed: a bandwidth is positive, such as \"500MiB/s\"")));
    }
    Ok(bytes)
}

fn tunable_value(v: &Value, key: &str) -> Result<u64, KeyError> {
    match v {
        Value::Integer(n) if *n >= 0 && *n <= i64::from(i32::MAX) => Ok(*n as u64),
        Value::Boolean(b) => Ok(u64::from(*b)),
        _ => Err(KeyError::new(
            key,
            format!("{} is not allowed: an integer from 0 to 2147483647, as written to sysfs", shown(v)),
        )),
    }
}

/// kyber's targets: 6.18 `kyber_*_lat_store` takes any `kstrtoull` value;
/// a TOML integer stops at i64::MAX.
fn kyber_value(v: &Value, key: &str) -> Result<u64, KeyError> {
    match v {
        Value::Integer(n) if *n >= 0 => Ok(*n as u64),
        _ => Err(KeyError::new(
            key,
            format!("{} is not allowed: an integer from 0 to {} (ns, as written to sysfs)", shown(v), i64::MAX),
        )),
    }
}

fn device(name: &str, d: &DeviceFile, hz: u32, index: usize, kernel: KernelModel) -> Result<DeviceSpec, KeyError> {
    let key = |k: &str| format!("devices.{name}.{k}");
    let preset = match &d.preset {
        None => None,
        Some(p) => Some(presets::find(p).ok_or_else(|| {
            KeyError::new(key("preset"), format!("unknown preset `{p}`; allowed: {}", presets::names()))
        })?),
    };
    let preset_kind = preset.as_ref().map(|p| p.kind.name());
    if let (Some(k), Some(pk)) = (d.kind.as_deref(), preset_kind)
        && k != pk
    {
        return Err(KeyError::new(
            key("kind"),
            format!(
                "preset `{}` is a `{pk}` device; drop `kind` or set it to \"{pk}\"",
                d.preset.as_deref().unwrap_or("")
            ),
        ));
    }
    let kind_name = d.kind.as_deref().or(preset_kind).unwrap_or("ssd");
    let (kind, capacity_default) = device_kind(d, &key, preset.as_ref(), kind_name)?;
    let capacity = match &d.capacity {
        None => preset.as_ref().map_or(capacity_default, |p| p.capacity_bytes),
        Some(s) => parse_size(s).map_err(|m| KeyError::new(key("capacity"), m))?,
    };
    if capacity < 1 << 20 {
        return Err(KeyError::new(
            key("capacity"),
            format!("{capacity} bytes is not allowed: at least 1MiB (up to 1PiB)"),
        ));
    }
    let queue_depth = d.queue_depth.unwrap_or(preset.as_ref().map_or(32, |p| u64::from(p.queue_depth)));
    if queue_depth == 0 || queue_depth > QUEUE_DEPTH_MAX {
        return Err(KeyError::new(key("queue_depth"), format!("{queue_depth} is not allowed: 1 to {QUEUE_DEPTH_MAX}")));
    }
    let max_kb = d.max_sectors_kb.unwrap_or(1280);
    if !(4..=32_768).contains(&max_kb) {
        return Err(KeyError::new(key("max_sectors_kb"), format!("{max_kb} is not allowed: 4 to 32768")));
    }
    let rotational = d.rotational.unwrap_or(kind_name == "hdd");
    let elevator = elevator_spec(d, &key, hz, rotational, kernel)?;
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

/// The device's kind and its figures (`kind`, or the preset's), with the
/// capacity a device of that kind has by default; keys of another kind are
/// refused.
fn device_kind(
    d: &DeviceFile,
    key: &dyn Fn(&str) -> String,
    preset: Option<&Preset>,
    kind_name: &str,
) -> Result<(DeviceKind, u64), KeyError> {
    let curve_keys = [
        ("read_iops", d.read_iops.is_some()),
        ("write_iops", d.write_iops.is_some()),
        ("parallelism", d.parallelism.is_some()),
    ];
    let cloud_keys = [
        ("iops_limit", d.iops_limit.is_some()),
        ("burst_iops", d.burst_iops.is_some()),
        ("burst_credits", d.burst_credits.is_some()),
        ("throughput_limit", d.throughput_limit.is_some()),
        ("network_latency", d.network_latency.is_some()),
    ];
    let legacy = matches!(kind_name, "ssd" | "hdd");
    if legacy && let Some((k, _)) = curve_keys.iter().find(|(_, set)| *set) {
        return Err(KeyError::new(key(k), "applies to `kind = \"flash\"` or `\"cloud\"` only"));
    }
    if kind_name != "cloud"
        && let Some((k, _)) = cloud_keys.iter().find(|(_, set)| *set)
    {
        return Err(KeyError::new(key(k), "applies to `kind = \"cloud\"` only"));
    }
    if kind_name != "hdd" && d.ncq.is_some() {
        return Err(KeyError::new(key("ncq"), "applies to `kind = \"hdd\"` only"));
    }
    let opt_ns =
        |v: &Option<Value>, k: &str, default: u64| v.as_ref().map_or(Ok(default), |v| duration_value(v, &key(k)));
    let ssd_only = [
        ("rpm", d.rpm.is_some()),
        ("seek_min", d.seek_min.is_some()),
        ("seek_max", d.seek_max.is_some()),
        ("bandwidth", d.bandwidth.is_some()),
    ];
    Ok(match kind_name {
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
        "hdd" => (hdd_kind(d, key, preset)?, 2u64 << 40),
        "flash" => {
            reject_disk_keys(d, key, "flash")?;
            let base = match preset.map(|p| &p.kind) {
                Some(DeviceKind::Flash(f)) => f.clone(),
                _ => presets::sata_ssd_flash(),
            };
            (DeviceKind::Flash(flash_params(d, key, base)?), 512u64 << 30)
        }
        "cloud" => {
            reject_disk_keys(d, key, "cloud")?;
            let base = match preset.map(|p| p.kind.clone()) {
                Some(DeviceKind::Cloud(c)) => c,
                _ => presets::gp3_cloud(),
            };
            (DeviceKind::Cloud(cloud_params(d, key, base)?), 500u64 << 30)
        }
        other => {
            return Err(KeyError::new(
                key("kind"),
                format!("unknown device kind `{other}`; allowed: ssd, hdd, flash, cloud (or a `preset`)"),
            ));
        }
    })
}

/// `kind = "hdd"`: a rotating disk (the preset's figures as defaults), with
/// NCQ when it has a preset or `ncq = true`.
fn hdd_kind(d: &DeviceFile, key: &dyn Fn(&str) -> String, preset: Option<&Preset>) -> Result<DeviceKind, KeyError> {
    let opt_ns =
        |v: &Option<Value>, k: &str, default: u64| v.as_ref().map_or(Ok(default), |v| duration_value(v, &key(k)));
    let hdd_only = [
        ("read_latency", d.read_latency.is_some()),
        ("write_latency", d.write_latency.is_some()),
        ("read_bandwidth", d.read_bandwidth.is_some()),
        ("write_bandwidth", d.write_bandwidth.is_some()),
    ];
    if let Some((k, _)) = hdd_only.iter().find(|(_, set)| *set) {
        return Err(KeyError::new(key(k), "applies to `kind = \"ssd\"` only (a disk has `bandwidth`)"));
    }
    let preset_disk = match preset.map(|p| &p.kind) {
        Some(DeviceKind::HddNcq { rpm, seek_min_ns, seek_max_ns, bytes_per_s }) => {
            Some((u64::from(*rpm), *seek_min_ns, *seek_max_ns, *bytes_per_s))
        }
        _ => None,
    };
    let (rpm0, smin0, smax0, bw0) = preset_disk.unwrap_or((7200, 500_000, 15_000_000, 150_000_000));
    let rpm = d.rpm.unwrap_or(rpm0);
    if !(3600..=20_000).contains(&rpm) {
        return Err(KeyError::new(key("rpm"), format!("{rpm} is not allowed: 3600 to 20000")));
    }
    let seek_min_ns = opt_ns(&d.seek_min, "seek_min", smin0)?;
    let seek_max_ns = opt_ns(&d.seek_max, "seek_max", smax0)?;
    if seek_min_ns > seek_max_ns || seek_max_ns > 1_000_000_000 {
        return Err(KeyError::new(
            key("seek_max"),
            format!(
                "{} is not allowed: at least seek_min ({}) and at most 1s",
                format_duration(seek_max_ns),
                format_duration(seek_min_ns)
            ),
        ));
    }
    let bytes_per_s = bandwidth(&d.bandwidth, &key("bandwidth"), bw0)?;
    // `ncq` defaults to on for a preset (presets model NCQ), off otherwise.
    let kind = if d.ncq.unwrap_or(preset_disk.is_some()) {
        DeviceKind::HddNcq { rpm: rpm as u32, seek_min_ns, seek_max_ns, bytes_per_s }
    } else {
        DeviceKind::Hdd { rpm: rpm as u32, seek_min_ns, seek_max_ns, bytes_per_s }
    };
    Ok(kind)
}

/// The elevator (`elevator`, or the kernel's default) with its tunables;
/// every elevator's table is checked, whichever is chosen.
fn elevator_spec(
    d: &DeviceFile,
    key: &dyn Fn(&str) -> String,
    hz: u32,
    rotational: bool,
    kernel: KernelModel,
) -> Result<ElevatorSpec, KeyError> {
    let behaviour = match d.cfq_behaviour.as_deref() {
        None | Some("fixed") => CfqBehaviour::Fixed,
        Some("4.4") => CfqBehaviour::V4_4,
        Some(other) => {
            return Err(KeyError::new(key("cfq_behaviour"), format!("`{other}` is not allowed: \"4.4\" or \"fixed\"")));
        }
    };
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
    let mut kyber = KyberTunables::default();
    for (k, v) in &d.kyber {
        let full = key(&format!("kyber.{k}"));
        kyber.set(k, kyber_value(v, &full)?).map_err(|m| KeyError::new(full, m))?;
    }
    let mut bfq = BfqTunables::defaults(hz);
    for (k, v) in &d.bfq {
        let full = key(&format!("bfq.{k}"));
        bfq.set(k, tunable_value(v, &full)?, hz).map_err(|m| KeyError::new(full, m))?;
    }
    let mut mq_deadline = MqDeadlineTunables::defaults(hz);
    for (k, v) in &d.mq_deadline {
        let full = key(&format!("mq-deadline.{k}"));
        mq_deadline.set(k, tunable_value(v, &full)?, hz).map_err(|m| KeyError::new(full, m))?;
    }
    let elevator_name = elevator_of(d, kernel, &key("elevator"))?;
    Ok(match elevator_name {
        "none" => ElevatorSpec::MqNone,
        "mq-deadline" => ElevatorSpec::MqDeadline(mq_deadline),
        "noop" => ElevatorSpec::Noop,
        "deadline" => ElevatorSpec::Deadline(deadline),
        "cfq" => ElevatorSpec::Cfq(cfq),
        "kyber" => ElevatorSpec::Kyber(kyber),
        "bfq" => ElevatorSpec::Bfq(bfq),
        other => unreachable!("elevator_of returned `{other}`, which is not one of the kernel's"),
    })
}

/// The device's elevator: the one it names, if the kernel has it, or the
/// kernel's default (`KernelModel::default_elevator`).
fn elevator_of(d: &DeviceFile, kernel: KernelModel, key: &str) -> Result<&'static str, KeyError> {
    let has = kernel.elevators();
    let Some(name) = d.elevator.as_deref() else {
        return Ok(kernel.default_elevator(d.nr_hw_queues.unwrap_or(1)));
    };
    if let Some(e) = has.iter().find(|e| **e == name) {
        return Ok(e);
    }
    let model = kernel.describe();
    let why = match kernel.elevator_history(name) {
        Some(h) => format!("`{name}` does not exist in the {model} model: {h}"),
        None => format!("unknown elevator `{name}`{}", super::error::did_you_mean(name, has)),
    };
    let other = KernelModel::newest_with_elevator(name);
    let hint = other.map_or(String::new(), |m| format!(" (or kernel.version = \"{}\")", m.version()));
    Err(KeyError::new(key, format!("{why}; the {model} model has: {}{hint}", has.join(", "))))
}

fn reject_disk_keys(d: &DeviceFile, key: &dyn Fn(&str) -> String, kind: &str) -> Result<(), KeyError> {
    let disk = [
        ("rpm", d.rpm.is_some()),
        ("seek_min", d.seek_min.is_some()),
        ("seek_max", d.seek_max.is_some()),
        ("bandwidth", d.bandwidth.is_some()),
    ];
    match disk.iter().find(|(_, set)| *set) {
        Some((k, _)) => Err(KeyError::new(
            key(k),
            format!("applies to `kind = \"hdd\"` only (a `{kind}` device has `read_bandwidth` and `write_bandwidth`)"),
        )),
        None => Ok(()),
    }
}

/// An integer key within `lo..=hi`, or `default`.
fn ranged(v: Option<i64>, key: String, lo: i64, hi: i64, what: &str, default: u64) -> Result<u64, KeyError> {
    match v {
        None => Ok(default),
        Some(n) if (lo..=hi).contains(&n) => Ok(n as u64),
        Some(n) => Err(KeyError::new(key, format!("{n} is not allowed: {what} from {lo} to {hi}"))),
    }
}

/// The flash curve's keys over `base` (a preset's figures or the default).
fn flash_params(d: &DeviceFile, key: &dyn Fn(&str) -> String, base: FlashParams) -> Result<FlashParams, KeyError> {
    let ns = |v: &Option<Value>, k: &str, default: u64| v.as_ref().map_or(Ok(default), |v| duration_value(v, &key(k)));
    let f = FlashParams {
        read_iops: ranged(d.read_iops, key("read_iops"), 1, IOPS_MAX, "IOPS", base.read_iops)?,
        write_iops: ranged(d.write_iops, key("write_iops"), 1, IOPS_MAX, "IOPS", base.write_iops)?,
        read_bytes_per_s: bandwidth(&d.read_bandwidth, &key("read_bandwidth"), base.read_bytes_per_s)?,
        write_bytes_per_s: bandwidth(&d.write_bandwidth, &key("write_bandwidth"), base.write_bytes_per_s)?,
        parallelism: ranged(d.parallelism, key("parallelism"), 1, PARALLELISM_MAX, "channels", base.parallelism.into())?
            as u32,
        read_latency_ns: ns(&d.read_latency, "read_latency", base.read_latency_ns)?,
        write_latency_ns: ns(&d.write_latency, "write_latency", base.write_latency_ns)?,
    };
    // A QD1 read holds one channel for parallelism / read_iops and moves 4 KiB:
    // its latency cannot be shorter (flash.rs).
    if f.overhead_ns(Op::Read).is_none() {
        return Err(KeyError::new(
            key("read_latency"),
            format!(
                "{} ns is below what parallelism / read_iops + 4KiB / read_bandwidth allow: at least {} ns \
                 (lower `parallelism` or raise `read_iops`)",
                f.read_latency_ns,
                f.min_read_latency_ns()
            ),
        ));
    }
    if f.overhead_ns(Op::Write).is_none() {
        let min = crate::block::device::transfer_ns(4096, f.write_bytes_per_s);
        return Err(KeyError::new(
            key("write_latency"),
            format!("{} ns is below a 4KiB transfer at write_bandwidth: at least {min} ns", f.write_latency_ns),
        ));
    }
    Ok(f)
}

/// The cloud volume's keys over `base`.
fn cloud_params(d: &DeviceFile, key: &dyn Fn(&str) -> String, base: CloudParams) -> Result<CloudParams, KeyError> {
    let flash = flash_params(d, key, base.flash.clone())?;
    let iops_limit = ranged(d.iops_limit, key("iops_limit"), 1, IOPS_MAX, "IOPS", base.iops_limit)?;
    // Without a burst rate given, a changed limit means no burst above it.
    let burst_default = if d.iops_limit.is_some() { base.burst_iops.max(iops_limit) } else { base.burst_iops };
    let burst_iops = ranged(d.burst_iops, key("burst_iops"), 1, IOPS_MAX, "IOPS", burst_default)?;
    if burst_iops < iops_limit {
        return Err(KeyError::new(
            key("burst_iops"),
            format!("{burst_iops} is not allowed: at least iops_limit ({iops_limit}) up to {IOPS_MAX}"),
        ));
    }
    let network_latency_ns = d
        .network_latency
        .as_ref()
        .map_or(Ok(base.network_latency_ns), |v| duration_in(v, &key("network_latency"), (0, 1_000_000_000), ""))?;
    Ok(CloudParams {
        flash,
        iops_limit,
        burst_iops,
        burst_credits: ranged(
            d.burst_credits,
            key("burst_credits"),
            0,
            BURST_CREDITS_MAX,
            "I/O credits",
            base.burst_credits,
        )?,
        throughput_bytes_per_s: bandwidth(&d.throughput_limit, &key("throughput_limit"), base.throughput_bytes_per_s)?,
        network_latency_ns,
    })
}

/// All devices, in name order (the order `DeviceId`s follow).
pub fn resolve(f: &ScenarioFile, hz: u32, kernel: KernelModel) -> Result<Vec<DeviceSpec>, KeyError> {
    if f.devices.len() > DEVICES_MAX {
        return Err(KeyError::new("devices", format!("{} devices; at most {DEVICES_MAX}", f.devices.len())));
    }
    let devices: &BTreeMap<String, DeviceFile> = &f.devices;
    devices
        .iter()
        .enumerate()
        .map(|(i, (name, d))| {
            check_name(name, &format!("devices.{name}"))?;
            device(name, d, hz, i, kernel)
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
                    format!(
                        "applies to blk-mq elevators only (`none`, `mq-deadline`, `kyber`, `bfq`), not `{}`",
                        spec.elevator.name()
                    ),
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
pub fn check_ionice(tasks: &[super::spec::TaskSpec], devices: &[DeviceSpec]) -> Result<(), KeyError> {
    let Some(cfq) = devices.iter().find(|d| matches!(d.elevator, ElevatorSpec::Cfq(_))) else { return Ok(()) };
    for t in tasks {
        if t.ionice.is_some_and(|p| p.class == IoprioClass::Rt) {
            return Err(KeyError::new(
                format!("tasks.{}.ionice", t.name),
                format!("the cfq model (device `{}`) has no RT class; allowed with cfq: \"be/N\", \"idle\"", cfq.name),
            ));
        }
        // task_nice_ioclass (4.4 include/linux/ioprio.h): an RT or deadline
        // task without ionice does its I/O in IOPRIO_CLASS_RT.
        let uses_io = t.program.steps.iter().any(|s| matches!(s, crate::workload::Step::Io(_)));
        if t.ionice.is_none() && uses_io && t.policy.class() != crate::sched::ClassKind::Fair {
            return Err(KeyError::new(
                format!("tasks.{}.ionice", t.name),
                format!(
                    "a {} task's I/O defaults to the RT I/O class (task_nice_ioclass), which the cfq model (device \
                     `{}`) does not have: give ionice = \"be/N\" or \"idle\"",
                    t.policy.name(),
                    cfq.name
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::presets;

    fn one(table: &str) -> Result<DeviceSpec, KeyError> {
        let d: DeviceFile = toml::from_str(table).expect("a device table");
        device("sda", &d, 250, 0, KernelModel::LATEST)
    }

    #[test]
    fn a_preset_sets_kind_and_figures_and_keys_override_them() {
        let s = one("preset = \"nvme-pm9a3\"\nparallelism = 32\n").expect("valid");
        let DeviceKind::Flash(f) = &s.kind else { panic!("{:?}", s.kind) };
        // parallelism overridden; the rest from the preset (900k IOPS, 6.5 GB/s, 1023 tags).
        assert_eq!((f.parallelism, f.read_iops, f.read_bytes_per_s), (32, 900_000, 6_500_000_000));
        assert_eq!((s.queue_depth, s.rotational), (1023, false));
        let h = one("preset = \"hdd-7200\"\n").expect("valid");
        assert!(matches!(h.kind, DeviceKind::HddNcq { rpm: 7200, .. }) && h.rotational);
        let legacy = one("preset = \"hdd-7200\"\nncq = false\n").expect("valid");
        assert!(matches!(legacy.kind, DeviceKind::Hdd { rpm: 7200, bytes_per_s: 261_000_000, .. }));
        let plain = one("kind = \"hdd\"\n").expect("valid");
        assert!(matches!(plain.kind, DeviceKind::Hdd { .. }), "no preset: the legacy disk unless ncq = true");
    }

    #[test]
    fn kinds_without_a_preset_take_documented_defaults() {
        let f = one("kind = \"flash\"\n").expect("valid");
        assert_eq!(f.kind, DeviceKind::Flash(presets::sata_ssd_flash()));
        let c = one("kind = \"cloud\"\niops_limit = 300\nburst_iops = 3000\nburst_credits = 5400000\n").expect("valid");
        let DeviceKind::Cloud(p) = &c.kind else { panic!("{:?}", c.kind) };
        assert_eq!((p.iops_limit, p.burst_iops, p.burst_credits), (300, 3000, 5_400_000));
        assert_eq!(p.throughput_bytes_per_s, 125 << 20, "gp3's 125 MiB/s");
        // A raised limit without a burst rate means no burst above it.
        let c = one("kind = \"cloud\"\niops_limit = 16000\n").expect("valid");
        let DeviceKind::Cloud(p) = &c.kind else { panic!("{:?}", c.kind) };
        assert_eq!(p.burst_iops, 16_000);
    }

    #[test]
    fn legacy_kinds_refuse_curve_keys() {
        let e = one("kind = \"ssd\"\nread_iops = 5\n").unwrap_err();
        assert!(format!("{e:?}").contains("read_iops"), "{e:?}");
        let e = one("kind = \"flash\"\nrpm = 7200\n").unwrap_err();
        assert!(format!("{e:?}").contains("rpm"), "{e:?}");
    }
}
