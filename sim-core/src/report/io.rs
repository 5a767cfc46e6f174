//! The I/O part of a `RunReport`: btt's Q2D/D2C/Q2C per device and per
//! process, blkparse's per-process dispatch wait, and the longest Q2D of each
//! device explained (its queue, what was dispatched meanwhile, the blkparse
//! log before its dispatch). Plain data; formatting is the front ends' job.

use crate::block::{DeviceKind, ElevatorSpec, RequestQueue};
use crate::ids::TaskId;
use crate::block::io_recorder::{IoRecorder, WorstWait};
use crate::metrics::latency::{CdfPoint, LatencySummary};
use crate::time::SimTime;
use crate::view::RunView;

#[derive(Clone, Debug, PartialEq)]
pub struct IoReport {
    pub devices: Vec<DeviceIoReport>,
    /// Per (device, issuing task) with at least one bio, device order then tid.
    pub processes: Vec<ProcessIoReport>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeviceIoReport {
    pub name: String,
    pub kind: &'static str,
    pub elevator: &'static str,
    /// `4.4` or `fixed` for CFQ.
    pub cfq_behaviour: Option<&'static str>,
    /// The elevator's sysfs tunables as sysfs shows them (ms for times).
    pub tunables: Vec<(&'static str, u64)>,
    pub queue_depth: u32,
    pub rotational: bool,
    /// blkparse's `maj,min`.
    pub dev_t: (u32, u32),
    pub q2d: LatencySummary,
    /// The whole Q2D distribution, for CDF charts.
    pub q2d_cdf: Vec<CdfPoint>,
    pub d2c: LatencySummary,
    pub q2c: LatencySummary,
    /// The whole Q2C distribution, for CDF charts.
    pub q2c_cdf: Vec<CdfPoint>,
    /// Per direction (read, write): bios queued, KiB queued, bios merged,
    /// requests dispatched, requests completed, KiB completed.
    pub queued: [u64; 2],
    pub queued_kib: [u64; 2],
    pub merged: [u64; 2],
    pub dispatched: [u64; 2],
    pub completed: [u64; 2],
    pub completed_kib: [u64; 2],
    /// blk-mq (`none`, `mq-deadline`): settings and the Q2G/G2I/I2D stages.
    pub mq: Option<MqDeviceReport>,
    /// Requests still in the elevator or the device when the run stopped.
    pub pending: u64,
    /// The oldest of those bios: how long it had waited so far.
    pub oldest_pending_ns: Option<u64>,
    pub worst: Option<WorstIoReport>,
}

/// The blk-mq part of a device's report.
#[derive(Clone, Debug, PartialEq)]
pub struct MqDeviceReport {
    pub nr_hw_queues: u32,
    pub nr_requests: u32,
    /// Q2G, with bios still asleep for a tag at the end as open waits.
    pub q2g: LatencySummary,
    pub g2i: LatencySummary,
    /// I2D, with requests still queued at the end as open waits.
    pub i2d: LatencySummary,
    /// Submitters that slept for a tag.
    pub tag_waits: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProcessIoReport {
    pub device: String,
    pub comm: String,
    pub pid: u32,
    pub q2d: LatencySummary,
    pub q2c: LatencySummary,
    /// blkparse `-t` "Dispatch wait" (read, write), and their maximum.
    pub dispatch_wait_ns: [u64; 2],
    pub dispatch_wait_max_ns: u64,
    pub bios: u64,
    pub kib: u64,
    /// Its oldest bio not yet dispatched when the run stopped: how long it
    /// had waited (a Q2D still open, not in the statistics).
    pub pending_q2d_ns: Option<u64>,
}

/// One blkparse line.
#[derive(Clone, Debug, PartialEq)]
pub struct BlkLine {
    pub at_ns: u64,
    pub seq: u64,
    /// 0 on completions.
    pub pid: u32,
    pub comm: String,
    pub action: &'static str,
    pub rwbs: String,
    pub sector: u64,
    pub nr_sectors: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorstIoReport {
    pub comm: String,
    pub pid: u32,
    pub rwbs: String,
    pub sector: u64,
    pub nr_sectors: u32,
    pub q_ns: u64,
    pub d_ns: u64,
    pub q2d_ns: u64,
    /// Still not dispatched when the run stopped (`d_ns` is the end).
    pub open: bool,
    pub queue: String,
    /// Requests dispatched while it waited.
    pub dispatched_meanwhile: u64,
    /// By issuing task: (comm, requests, KiB), most bytes first.
    pub meanwhile: Vec<(String, u64, u64)>,
    pub meanwhile_truncated: bool,
    pub log: Vec<BlkLine>,
}

impl IoReport {
    pub fn build(v: &RunView) -> Option<IoReport> {
        if v.queues.is_empty() {
            return None;
        }
        let mut devices = Vec::new();
        let mut processes = Vec::new();
        for q in v.queues {
            let open = OpenWaits::of(q, v.now);
            devices.push(device_report(v, q, &open));
            processes.extend(process_reports(v, q, &open));
        }
        Some(IoReport { devices, processes })
    }
}

/// The pid blkparse shows for a task.
fn pid(t: TaskId) -> u32 {
    t.0 + 1
}

/// Waits still open at the end, per stage: a bio not yet dispatched (Q2D),
/// a dispatched request not yet completed (D2C), any bio not yet completed
/// (Q2C); per device and per task, each as `(count, longest ns)`.
struct OpenWaits {
    q2d: (u64, u64),
    q2c: (u64, u64),
    d2c: (u64, u64),
    proc_q2d: Vec<(u64, u64)>,
    proc_q2c: Vec<(u64, u64)>,
}

impl OpenWaits {
    fn of(q: &RequestQueue, now: SimTime) -> OpenWaits {
        let rec: &IoRecorder = &q.rec;
        let mut open_q2d = (0u64, 0u64);
        let mut open_q2c = (0u64, 0u64);
        let mut proc_q2d: Vec<(u64, u64)> = vec![(0, 0); rec.procs.len()];
        let mut proc_q2c: Vec<(u64, u64)> = vec![(0, 0); rec.procs.len()];
        let add = |acc: &mut (u64, u64), ns: u64| *acc = (acc.0 + 1, acc.1.max(ns));
        for (_, b) in q.bios.iter() {
            let waited = now.since(b.q_at);
            add(&mut open_q2c, waited);
            add(&mut proc_q2c[b.task.index()], waited);
            if b.request == crate::block::blk_mq::NO_REQUEST || q.rqs.rq(b.request).d_at.is_none() {
                add(&mut open_q2d, waited);
                add(&mut proc_q2d[b.task.index()], waited);
            }
        }
        let mut open_d2c = (0u64, 0u64);
        for (_, r) in q.rqs.iter() {
            if let Some(d_at) = r.d_at {
                add(&mut open_d2c, now.since(d_at));
            }
        }
        OpenWaits { q2d: open_q2d, q2c: open_q2c, d2c: open_d2c, proc_q2d, proc_q2c }
    }
}

/// One device's report: its settings, btt's stages (open waits included)
/// and its worst Q2D explained.
fn device_report(v: &RunView, q: &RequestQueue, open: &OpenWaits) -> DeviceIoReport {
    let hz = v.spec.hz;
    let comm = |t: TaskId| v.task_comm(t).to_string();
    let d = &q.device.spec;
    let rec: &IoRecorder = &q.rec;
    let cfq_behaviour = match &d.elevator {
        ElevatorSpec::Cfq(t) => Some(t.behaviour.name()),
        _ => None,
    };
    let tunables = match (&q.elevator, &q.mq) {
        // The running scheduler: async_depth follows nr_requests.
        (crate::block::Elevator::MqDeadline(dd), Some(mq)) => dd.t.sysfs(hz, mq.nr_requests),
        _ => d.elevator.sysfs(hz),
    };
    let (open_q2d, open_q2c, open_d2c) = (open.q2d, open.q2c, open.d2c);
    // Every bio still queued counts in Q2C: its oldest is the oldest pending.
    let oldest_pending_ns = (open_q2c.0 > 0).then_some(open_q2c.1);
    let now = v.now;
    let worst = q.worst_wait(now, &comm).as_ref().map(|w| worst_report(w, &comm));
    DeviceIoReport {
        name: d.name.clone(),
        kind: match d.kind {
            DeviceKind::Ssd { .. } => "ssd",
            DeviceKind::Hdd { .. } => "hdd",
            DeviceKind::Flash(_) | DeviceKind::HddNcq { .. } | DeviceKind::Cloud(_) => d.kind.name(),
        },
        elevator: d.elevator.name(),
        cfq_behaviour,
        tunables,
        mq: q.mq_open_waits(now).map(|o| MqDeviceReport {
            nr_hw_queues: o.nr_hw_queues,
            nr_requests: o.nr_requests,
            q2g: rec.q2g.summary().with_open(o.q2g.0, o.q2g.1),
            g2i: rec.g2i.summary(),
            i2d: rec.i2d.summary().with_open(o.i2d.0, o.i2d.1),
            tag_waits: o.tag_waits,
        }),
        queue_depth: d.queue_depth,
        rotational: d.rotational,
        dev_t: d.dev_t,
        q2d: rec.q2d.summary().with_open(open_q2d.0, open_q2d.1),
        q2d_cdf: rec.q2d.cdf(),
        d2c: rec.d2c.summary().with_open(open_d2c.0, open_d2c.1),
        q2c: rec.q2c.summary().with_open(open_q2c.0, open_q2c.1),
        q2c_cdf: rec.q2c.cdf(),
        queued: rec.queued,
        queued_kib: rec.queued_bytes.map(|b| b / 1024),
        merged: rec.merged,
        dispatched: rec.dispatched,
        completed: rec.completed,
        completed_kib: rec.completed_bytes.map(|b| b / 1024),
        pending: q.rqs.len() as u64,
        oldest_pending_ns,
        worst,
    }
}

/// The longest Q2D of a device, explained.
fn worst_report(w: &WorstWait, comm: &dyn Fn(TaskId) -> String) -> WorstIoReport {
    WorstIoReport {
        open: w.open,
        comm: comm(w.task),
        pid: pid(w.task),
        rwbs: w.flags.rwbs(),
        sector: w.sector,
        nr_sectors: w.nr_sectors,
        q_ns: w.q_at.ns(),
        d_ns: w.d_at.ns(),
        q2d_ns: w.d_at.since(w.q_at),
        queue: w.queue.clone(),
        dispatched_meanwhile: w.dispatched,
        meanwhile: w.meanwhile.iter().map(|m| (comm(m.task), m.requests, m.bytes / 1024)).collect(),
        meanwhile_truncated: w.meanwhile_truncated,
        log: w
            .log
            .iter()
            .map(|e| BlkLine {
                at_ns: e.at.ns(),
                seq: e.seq,
                pid: e.task.map_or(0, pid),
                comm: e.task.map_or_else(|| "0".to_string(), comm),
                action: e.action.code(),
                rwbs: e.flags.rwbs(),
                sector: e.sector,
                nr_sectors: e.nr_sectors,
            })
            .collect(),
    }
}

/// Per issuing task with at least one bio on the device: btt's figures.
fn process_reports(v: &RunView, q: &RequestQueue, open: &OpenWaits) -> Vec<ProcessIoReport> {
    let d = &q.device.spec;
    let (proc_q2d, proc_q2c) = (&open.proc_q2d, &open.proc_q2c);
    let comm = |t: TaskId| v.task_comm(t).to_string();
    let mut processes = Vec::new();
    for (i, p) in q.rec.procs.iter().enumerate() {
        if p.bios == 0 {
            continue;
        }
        let t = TaskId(i as u32);
        processes.push(ProcessIoReport {
            device: d.name.clone(),
            comm: comm(t),
            pid: pid(t),
            q2d: p.q2d.summary().with_open(proc_q2d[i].0, proc_q2d[i].1),
            q2c: p.q2c.summary().with_open(proc_q2c[i].0, proc_q2c[i].1),
            dispatch_wait_ns: p.dispatch_wait_max_ns,
            dispatch_wait_max_ns: p.dispatch_wait_max_ns[0].max(p.dispatch_wait_max_ns[1]),
            bios: p.bios,
            kib: p.bytes / 1024,
            pending_q2d_ns: (proc_q2d[i].0 > 0).then_some(proc_q2d[i].1),
        });
    }
    processes
}
