//! A closed-loop driver over one `Device`, as fio runs it (`--rw=randread
//! --iodepth=N --direct=1` with the `none` scheduler): `depth` requests of
//! one size at random aligned offsets are kept outstanding; each completion
//! issues the next at once. Requests beyond the device's tags wait in a host
//! FIFO, and latency is counted from issue (fio's `clat` plus that wait).
//!
//! Deterministic: offsets come from a seeded stream. Used by the tests, by
//! docs/devices.md's preset tables and by `fit-device`.

use super::super::request::{Op, SECTOR_BYTES};
use super::{Device, DeviceSpec};
use crate::ids::RequestId;
use crate::rng::SimRng;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What one run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    pub depth: u32,
    pub iops: f64,
    pub bytes_per_s: f64,
    pub mean_latency_ns: f64,
}

/// Runs `requests` completions (after a warm-up of `depth` completions) at
/// `depth` outstanding requests of `bytes` each.
pub fn measure(spec: &DeviceSpec, op: Op, bytes: u64, depth: u32, requests: u64, seed: u64) -> CurvePoint {
    let mut dev = Device::new(spec.clone(), SimRng::new(seed).stream("device"));
    let mut rng = SimRng::new(seed).stream("offsets");
    let nr = (bytes / SECTOR_BYTES).max(1) as u32;
    let slots = (spec.capacity_sectors / u64::from(nr)).max(1);
    let depth = depth.max(1);
    let mut issued_at = vec![SimTime::ZERO; depth as usize];
    let mut host: VecDeque<u32> = VecDeque::new();
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut out = Vec::new();
    let mut offset = move || rng.range_inclusive(0, slots - 1) * u64::from(nr);
    let mut issue = |dev: &mut Device, host: &mut VecDeque<u32>, out: &mut Vec<(SimTime, RequestId)>, now: SimTime| {
        while dev.can_accept() {
            let Some(slot) = host.pop_front() else { break };
            dev.start(now, RequestId(slot), op, offset(), nr, out);
        }
    };
    for slot in 0..depth {
        host.push_back(slot);
    }
    issue(&mut dev, &mut host, &mut out, SimTime::ZERO);
    let warm = u64::from(depth);
    let (mut done, mut lat_sum, mut t0) = (0u64, 0u128, SimTime::ZERO);
    let mut now = SimTime::ZERO;
    // Bounded: every iteration completes one request.
    while done < warm + requests {
        for (at, rq) in out.drain(..) {
            heap.push(Reverse((at.ns(), rq.0)));
        }
        let Some(Reverse((at, slot))) = heap.pop() else { break };
        now = SimTime(at);
        dev.complete(now, RequestId(slot), &mut out);
        done += 1;
        if done == warm {
            t0 = now;
        } else if done > warm {
            lat_sum += u128::from(now.since(issued_at[slot as usize]));
        }
        issued_at[slot as usize] = now;
        host.push_back(slot);
        issue(&mut dev, &mut host, &mut out, now);
    }
    let n = done.saturating_sub(warm).max(1);
    let secs = now.since(t0).max(1) as f64 / 1e9;
    let iops = n as f64 / secs;
    CurvePoint { depth, iops, bytes_per_s: iops * bytes as f64, mean_latency_ns: lat_sum as f64 / n as f64 }
}

/// The depths docs/devices.md tabulates.
pub const DEPTHS: [u32; 6] = [1, 4, 16, 32, 64, 128];

/// A markdown table of read IOPS and mean latency at `DEPTHS` for 4 KiB and
/// 128 KiB random reads.
pub fn curve_table(spec: &DeviceSpec, requests: u64) -> String {
    let mut s =
        String::from("| QD | 4 KiB IOPS | 4 KiB lat | 128 KiB MB/s | 128 KiB lat |\n|---:|---:|---:|---:|---:|\n");
    for d in DEPTHS {
        let a = measure(spec, Op::Read, 4096, d, requests, 1);
        let b = measure(spec, Op::Read, 128 << 10, d, requests, 1);
        s.push_str(&format!(
            "| {d} | {:.0} | {} | {:.0} | {} |\n",
            a.iops,
            fmt_lat(a.mean_latency_ns),
            b.bytes_per_s / 1e6,
            fmt_lat(b.mean_latency_ns)
        ));
    }
    s
}

fn fmt_lat(ns: f64) -> String {
    if ns >= 1e6 { format!("{:.2} ms", ns / 1e6) } else { format!("{:.0} µs", ns / 1e3) }
}
