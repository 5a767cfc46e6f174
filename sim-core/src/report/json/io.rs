//! The JSON of the I/O parts: block devices (btt's stages, the worst Q2D
//! explained) and userspace I/O queues.

use super::latency::Latency;
use crate::report::io::{DeviceIoReport, IoReport};
use crate::report::userspace_io::IoQueueReport;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct Io<'a> {
    devices: Vec<IoDevice<'a>>,
    processes: Vec<IoProcess<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct IoDevice<'a> {
    name: &'a str,
    kind: &'a str,
    elevator: &'a str,
    cfq_behaviour: Option<&'a str>,
    tunables: BTreeMap<&'a str, u64>,
    queue_depth: u32,
    rotational: bool,
    q2d: Latency,
    d2c: Latency,
    q2c: Latency,
    reads: IoCounts,
    writes: IoCounts,
    pending: u64,
    oldest_pending_ns: Option<u64>,
    worst_q2d: Option<IoWorst<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct IoCounts {
    queued: u64,
    queued_kib: u64,
    merged: u64,
    dispatched: u64,
    completed: u64,
    completed_kib: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct IoProcess<'a> {
    name: &'a str,
    pid: u32,
    device: &'a str,
    q2d: Latency,
    q2c: Latency,
    dispatch_wait_max_ns: u64,
    dispatch_wait_read_ns: u64,
    dispatch_wait_write_ns: u64,
    bios: u64,
    kib: u64,
    pending_q2d_ns: Option<u64>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct IoWorst<'a> {
    comm: &'a str,
    pid: u32,
    rwbs: &'a str,
    sector: u64,
    nr_sectors: u32,
    queued_ns: u64,
    dispatched_ns: u64,
    q2d_ns: u64,
    still_queued: bool,
    queue: &'a str,
    dispatched_meanwhile: u64,
    meanwhile: Vec<IoMeanwhile<'a>>,
    meanwhile_truncated: bool,
    log: Vec<IoLogLine<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct IoMeanwhile<'a> {
    comm: &'a str,
    requests: u64,
    kib: u64,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct IoLogLine<'a> {
    at_ns: u64,
    seq: u64,
    pid: u32,
    comm: &'a str,
    action: &'a str,
    rwbs: &'a str,
    sector: u64,
    nr_sectors: u32,
}

pub(super) fn io_dto(io: &IoReport) -> Io<'_> {
    let counts = |d: &DeviceIoReport, i: usize| IoCounts {
        queued: d.queued[i],
        queued_kib: d.queued_kib[i],
        merged: d.merged[i],
        dispatched: d.dispatched[i],
        completed: d.completed[i],
        completed_kib: d.completed_kib[i],
    };
    Io {
        devices: io
            .devices
            .iter()
            .map(|d| IoDevice {
                name: &d.name,
                kind: d.kind,
                elevator: d.elevator,
                cfq_behaviour: d.cfq_behaviour,
                tunables: d.tunables.iter().copied().collect(),
                queue_depth: d.queue_depth,
                rotational: d.rotational,
                q2d: (&d.q2d).into(),
                d2c: (&d.d2c).into(),
                q2c: (&d.q2c).into(),
                reads: counts(d, 0),
                writes: counts(d, 1),
                pending: d.pending,
                oldest_pending_ns: d.oldest_pending_ns,
                worst_q2d: d.worst.as_ref().map(|w| IoWorst {
                    comm: &w.comm,
                    pid: w.pid,
                    rwbs: &w.rwbs,
                    sector: w.sector,
                    nr_sectors: w.nr_sectors,
                    queued_ns: w.q_ns,
                    dispatched_ns: w.d_ns,
                    q2d_ns: w.q2d_ns,
                    still_queued: w.open,
                    queue: &w.queue,
                    dispatched_meanwhile: w.dispatched_meanwhile,
                    meanwhile: w
                        .meanwhile
                        .iter()
                        .map(|(c, r, k)| IoMeanwhile { comm: c, requests: *r, kib: *k })
                        .collect(),
                    meanwhile_truncated: w.meanwhile_truncated,
                    log: w
                        .log
                        .iter()
                        .map(|l| IoLogLine {
                            at_ns: l.at_ns,
                            seq: l.seq,
                            pid: l.pid,
                            comm: &l.comm,
                            action: l.action,
                            rwbs: &l.rwbs,
                            sector: l.sector,
                            nr_sectors: l.nr_sectors,
                        })
                        .collect(),
                }),
            })
            .collect(),
        processes: io
            .processes
            .iter()
            .map(|p| IoProcess {
                name: &p.comm,
                pid: p.pid,
                device: &p.device,
                q2d: (&p.q2d).into(),
                q2c: (&p.q2c).into(),
                dispatch_wait_max_ns: p.dispatch_wait_max_ns,
                dispatch_wait_read_ns: p.dispatch_wait_ns[0],
                dispatch_wait_write_ns: p.dispatch_wait_ns[1],
                bios: p.bios,
                kib: p.kib,
                pending_q2d_ns: p.pending_q2d_ns,
            })
            .collect(),
    }
}

/// A userspace I/O queue (Seastar's I/O scheduler): limits, high-water
/// marks and per-class figures.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct UserspaceIoQueue<'a> {
    name: &'a str,
    device: &'a str,
    /// `capacity`, `max-io-requests` or `none`.
    policy: &'static str,
    /// Requests in flight allowed; absent: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_requests: Option<u64>,
    /// Weight and size limits in read-request units (×128); absent: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_req_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_bytes_count: Option<u64>,
    high_water_requests: u64,
    high_water_req_count: u64,
    high_water_bytes_count: u64,
    classes: Vec<UserspaceIoClass<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct UserspaceIoClass<'a> {
    name: &'a str,
    shares: u32,
    submitted: u64,
    completed: u64,
    bytes: u64,
    bytes_per_s: u64,
    /// Submission to admission by the layer.
    queue_wait: Latency,
    /// Submission to completion.
    latency: Latency,
}

pub(super) fn userspace_io_dto(q: &IoQueueReport) -> UserspaceIoQueue<'_> {
    UserspaceIoQueue {
        name: &q.name,
        device: &q.device,
        policy: q.policy,
        max_requests: q.max_requests,
        max_req_count: q.max_req_count,
        max_bytes_count: q.max_bytes_count,
        high_water_requests: q.high_water_requests,
        high_water_req_count: q.high_water_req_count,
        high_water_bytes_count: q.high_water_bytes_count,
        classes: q
            .classes
            .iter()
            .map(|c| UserspaceIoClass {
                name: &c.name,
                shares: c.shares,
                submitted: c.submitted,
                completed: c.completed,
                bytes: c.bytes,
                bytes_per_s: c.bytes_per_s,
                queue_wait: (&c.queue_wait).into(),
                latency: (&c.latency).into(),
            })
            .collect(),
    }
}
