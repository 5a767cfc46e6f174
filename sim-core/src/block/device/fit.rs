//! Fits the flash model (`flash.rs`) to measured runs at several depths and
//! sizes, as `sim-cli fit-device` reads them from fio's JSON output. Pure:
//! the samples come in, the parameters and the fitted curve go out.
//!
//! Per direction:
//! - QD1 latency: the mean latency of the smallest-size run at the lowest
//!   depth;
//! - bandwidth: the largest measured bytes per second (the large-block runs);
//! - IOPS limit and parallelism: least squares of log(IOPS) over every run of
//!   that direction, the model's curve computed by the closed-loop driver
//!   (`curve.rs`); for each candidate parallelism the IOPS limit is found by
//!   a fixed-point scaling of the curve onto the measurements, within what
//!   the QD1 latency allows (a read's channel time cannot exceed it).

use super::super::request::Op;
use super::curve::measure;
use super::flash::{FlashParams, PAGE_BYTES};
use super::transfer_ns;
use super::{DeviceKind, DeviceSpec};
use crate::block::ElevatorSpec;

/// One measured run.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub op: Op,
    pub bytes: u64,
    pub depth: u32,
    pub iops: f64,
    pub mean_latency_ns: f64,
}

/// A fitted device and its curve at the measured points.
#[derive(Clone, Debug)]
pub struct Fit {
    pub params: FlashParams,
    /// Host tags: the deepest run.
    pub queue_depth: u32,
    /// (sample, fitted IOPS, fitted mean latency ns), in input order.
    pub points: Vec<(Sample, f64, f64)>,
    /// Whether the write figures are copies of the read ones (no write runs).
    pub writes_copied: bool,
}

const PARALLELISM: [u32; 16] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256];
/// Completions simulated per point while fitting.
const FIT_REQUESTS: u64 = 3000;

fn spec(p: &FlashParams, queue_depth: u32) -> DeviceSpec {
    DeviceSpec {
        name: "fit".into(),
        kind: DeviceKind::Flash(p.clone()),
        queue_depth,
        capacity_sectors: 1 << 31,
        rotational: false,
        max_sectors: 1 << 20,
        elevator: ElevatorSpec::Noop,
        dev_t: (8, 0),
    }
}

fn predict(p: &FlashParams, qd: u32, s: &Sample) -> (f64, f64) {
    let c = measure(&spec(p, qd), s.op, s.bytes, s.depth, FIT_REQUESTS, 1);
    (c.iops, c.mean_latency_ns)
}

fn set(p: &mut FlashParams, op: Op, iops: u64, bw: u64, lat: u64) {
    match op {
        Op::Read => (p.read_iops, p.read_bytes_per_s, p.read_latency_ns) = (iops, bw, lat),
        Op::Write => (p.write_iops, p.write_bytes_per_s, p.write_latency_ns) = (iops, bw, lat),
    }
}

fn sse(p: &FlashParams, qd: u32, samples: &[&Sample]) -> f64 {
    samples.iter().map(|s| (libm::log(predict(p, qd, s).0.max(1e-9)) - libm::log(s.iops.max(1e-9))).powi(2)).sum()
}

/// Fits one direction's IOPS limit for a given parallelism; returns the
/// parameters and their squared log error.
fn fit_iops(base: &FlashParams, op: Op, parallelism: u32, qd: u32, samples: &[&Sample]) -> (FlashParams, f64) {
    let mut p = base.clone();
    p.parallelism = parallelism;
    let (bw, lat) = match op {
        Op::Read => (p.read_bytes_per_s, p.read_latency_ns),
        Op::Write => (p.write_bytes_per_s, p.write_latency_ns),
    };
    // A read's channel time P / R must fit in its QD1 latency.
    let room = lat.saturating_sub(transfer_ns(PAGE_BYTES, bw)).max(1);
    let r_min = match op {
        Op::Read => (u64::from(parallelism) * 1_000_000_000).div_ceil(room),
        Op::Write => 1,
    };
    let small: Vec<&Sample> = samples.iter().copied().filter(|s| s.bytes <= 4 * PAGE_BYTES).collect();
    let basis = if small.is_empty() { samples.to_vec() } else { small };
    let mut r = basis.iter().map(|s| s.iops).fold(1.0, f64::max).max(r_min as f64);
    // Bounded fixed point: scale R by measured / predicted over the runs.
    for _ in 0..8 {
        set(&mut p, op, r as u64, bw, lat);
        let (meas, pred): (f64, f64) =
            basis.iter().map(|s| (s.iops, predict(&p, qd, s).0)).fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        if pred <= 0.0 {
            break;
        }
        let next = (r * meas / pred).clamp(r_min as f64, 1e8);
        if (next - r).abs() < r * 1e-3 {
            r = next;
            break;
        }
        r = next;
    }
    set(&mut p, op, r.round().max(1.0) as u64, bw, lat);
    let e = sse(&p, qd, samples);
    (p, e)
}

/// Fits the flash model to `samples`. Errors name what is missing.
pub fn fit(samples: &[Sample]) -> Result<Fit, String> {
    let reads: Vec<&Sample> = samples.iter().filter(|s| s.op == Op::Read).collect();
    let writes: Vec<&Sample> = samples.iter().filter(|s| s.op == Op::Write).collect();
    if samples.is_empty() {
        return Err("no runs to fit".into());
    }
    let qd = samples.iter().map(|s| s.depth).max().unwrap_or(1).max(1);
    let base_of = |v: &[&Sample]| -> Option<(u64, u64)> {
        let min_bytes = v.iter().map(|s| s.bytes).min()?;
        let qd1 = v.iter().filter(|s| s.bytes == min_bytes).min_by_key(|s| s.depth)?;
        let bw = v.iter().map(|s| s.iops * s.bytes as f64).fold(0.0, f64::max);
        Some((qd1.mean_latency_ns.round().max(1.0) as u64, bw.round().max(1.0) as u64))
    };
    let primary = if reads.is_empty() { &writes } else { &reads };
    let (lat, bw) = base_of(primary).ok_or("no runs to fit")?;
    let mut p = FlashParams {
        read_iops: 1,
        write_iops: 1,
        read_bytes_per_s: bw,
        write_bytes_per_s: bw,
        parallelism: 1,
        read_latency_ns: lat,
        write_latency_ns: lat,
    };
    if let Some((wl, wb)) = base_of(&writes) {
        (p.write_latency_ns, p.write_bytes_per_s) = (wl, wb);
    }
    if let Some((rl, rb)) = base_of(&reads) {
        (p.read_latency_ns, p.read_bytes_per_s) = (rl, rb);
    }
    let op = if reads.is_empty() { Op::Write } else { Op::Read };
    let mut best: Option<(FlashParams, f64)> = None;
    for par in PARALLELISM {
        let (cand, e) = fit_iops(&p, op, par, qd, primary);
        if best.as_ref().is_none_or(|(_, b)| e < *b - 1e-12) {
            best = Some((cand, e));
        }
    }
    let mut p = best.map(|b| b.0).ok_or("no candidate")?;
    let writes_copied = writes.is_empty() || reads.is_empty();
    if !reads.is_empty() && !writes.is_empty() {
        p = fit_iops(&p, Op::Write, p.parallelism, qd, &writes).0;
    } else if writes.is_empty() {
        (p.write_iops, p.write_bytes_per_s, p.write_latency_ns) = (p.read_iops, p.read_bytes_per_s, p.read_latency_ns);
    } else {
        (p.read_iops, p.read_bytes_per_s, p.read_latency_ns) = (p.write_iops, p.write_bytes_per_s, p.write_latency_ns);
    }
    let points = samples
        .iter()
        .map(|s| {
            let (i, l) = predict(&p, qd, s);
            (s.clone(), i, l)
        })
        .collect();
    Ok(Fit { params: p, queue_depth: qd, points, writes_copied })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::presets;

    #[test]
    fn round_trip_recovers_the_sata_preset() {
        // Samples generated by the model itself from the sata-ssd preset:
        // the fit must find its figures back (QD1 latency and bandwidth
        // exactly as measured; parallelism 8; IOPS within 3%).
        let truth = presets::sata_ssd_flash();
        let s = spec(&truth, 32);
        let mut samples = Vec::new();
        for (bytes, depths) in [(4096u64, &[1u32, 4, 16, 32][..]), (128 << 10, &[1, 4, 16][..])] {
            for &d in depths {
                let c = measure(&s, Op::Read, bytes, d, 5000, 7);
                samples.push(Sample {
                    op: Op::Read,
                    bytes,
                    depth: d,
                    iops: c.iops,
                    mean_latency_ns: c.mean_latency_ns,
                });
            }
        }
        let f = fit(&samples).expect("fits");
        assert_eq!(f.params.read_latency_ns, 100_000, "QD1 4 KiB latency");
        assert!((f.params.read_bytes_per_s as f64 / 512e6 - 1.0).abs() < 0.01, "{}", f.params.read_bytes_per_s);
        assert_eq!(f.params.parallelism, 8);
        assert!((f.params.read_iops as f64 / 107_000.0 - 1.0).abs() < 0.03, "{}", f.params.read_iops);
        assert!(f.writes_copied);
        for (s, i, _) in &f.points {
            assert!((i / s.iops - 1.0).abs() < 0.05, "{s:?} fitted {i}");
        }
    }

    #[test]
    fn no_samples_is_an_error() {
        assert!(fit(&[]).is_err());
    }
}
