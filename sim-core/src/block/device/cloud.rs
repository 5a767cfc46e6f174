//! A cloud block volume (`kind = "cloud"`): the provider's IOPS and
//! throughput caps, with burst credits, in front of a flash curve, plus a
//! network round trip.
//!
//! The caps follow the AWS EBS documentation ("Amazon EBS General Purpose SSD
//! volumes", docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html;
//! "Provisioned IOPS SSD volumes", .../provisioned-iops.html):
//! - an I/O is counted per started 256 KiB (SSD volumes cap the I/O size at
//!   256 KiB);
//! - gp2: credits accrue at the baseline of 3 IOPS per GiB (at least 100), an
//!   I/O spends one credit, the balance starts at and is capped by 5.4 M, and
//!   while there are credits the volume runs at up to the 3000 IOPS burst;
//!   empty, it runs at the baseline;
//! - gp3 and io2: a provisioned IOPS rate and throughput, no credits
//!   (`burst_iops` = `iops_limit`, `burst_credits` = 0).
//!
//! Modelled as a pacer: an I/O is admitted at the first time when (a) at
//! least `1 / burst_iops` has passed since the previous admission, (b) the
//! credit bucket (refilled at `iops_limit`) holds its I/O count, and (c) the
//! throughput pacer is free; the flash stages follow, then the network
//! latency. Admission is FIFO in dispatch order, so the completion is known
//! at dispatch.

use super::super::request::{Op, SECTOR_BYTES};
use super::flash::{Flash, FlashParams};
use super::transfer_ns;
use crate::time::SimTime;

/// The size one counted I/O covers on an SSD-backed EBS volume.
pub const IO_UNIT_BYTES: u64 = 256 << 10;

#[derive(Clone, Debug, PartialEq)]
pub struct CloudParams {
    pub flash: FlashParams,
    /// The baseline (gp2) or provisioned (gp3, io2) IOPS: the credit refill rate.
    pub iops_limit: u64,
    /// The highest rate while credits last (= `iops_limit` without bursting).
    pub burst_iops: u64,
    /// Credits (I/Os) the volume starts with and can hold.
    pub burst_credits: u64,
    /// Throughput cap, bytes per second.
    pub throughput_bytes_per_s: u64,
    /// Added to every request (the network round trip to the storage servers).
    pub network_latency_ns: u64,
}

/// Credits are counted in nano-I/Os: one I/O per second accrues one unit per
/// nanosecond.
const NANO: u128 = 1_000_000_000;

/// The IOPS and throughput caps.
#[derive(Clone, Debug)]
pub struct Pacer {
    iops_limit: u64,
    burst_iops: u64,
    /// Bucket capacity in nano-I/Os.
    cap: u128,
    credits: u128,
    credits_at: SimTime,
    last_admit: Option<SimTime>,
    throughput: u64,
    bytes_free: SimTime,
}

impl Pacer {
    pub fn new(p: &CloudParams) -> Pacer {
        let cap = u128::from(p.burst_credits) * NANO;
        Pacer {
            iops_limit: p.iops_limit.max(1),
            burst_iops: p.burst_iops.max(p.iops_limit).max(1),
            cap,
            credits: cap,
            credits_at: SimTime::ZERO,
            last_admit: None,
            throughput: p.throughput_bytes_per_s,
            bytes_free: SimTime::ZERO,
        }
    }

    /// Credits left (whole I/Os) as of the last admission.
    pub fn credits(&self) -> u64 {
        (self.credits / NANO) as u64
    }

    fn accrue(&mut self, t: SimTime, cap: u128) {
        let earned = u128::from(t.since(self.credits_at)) * u128::from(self.iops_limit);
        self.credits = (self.credits + earned).min(cap);
        self.credits_at = t;
    }

    /// When a request of `bytes` arriving at `now` is admitted.
    pub fn admit(&mut self, now: SimTime, bytes: u64) -> SimTime {
        let ios = bytes.div_ceil(IO_UNIT_BYTES).max(1);
        let need = u128::from(ios) * NANO;
        // A request larger than the bucket waits for a full bucket of its size.
        let cap = self.cap.max(need);
        let mut t = now.max(self.bytes_free);
        if let Some(last) = self.last_admit {
            t = t.max(last.after((ios * 1_000_000_000).div_ceil(self.burst_iops)));
        }
        self.accrue(t, cap);
        if self.credits < need {
            let wait = (need - self.credits).div_ceil(u128::from(self.iops_limit));
            t = t.after(wait as u64);
            self.accrue(t, cap);
        }
        self.credits -= need;
        self.last_admit = Some(t);
        self.bytes_free = t.after(transfer_ns(bytes, self.throughput));
        t
    }
}

/// The volume's running state.
#[derive(Clone, Debug)]
pub struct Cloud {
    pub params: CloudParams,
    pub pacer: Pacer,
    flash: Flash,
}

impl Cloud {
    pub fn new(params: CloudParams) -> Cloud {
        Cloud { pacer: Pacer::new(&params), flash: Flash::new(params.flash.clone()), params }
    }

    pub fn start(&mut self, now: SimTime, op: Op, sector: u64, nr_sectors: u32) -> SimTime {
        let at = self.pacer.admit(now, u64::from(nr_sectors) * SECTOR_BYTES);
        self.flash.start(at, op, sector, nr_sectors).after(self.params.network_latency_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(credits: u64) -> CloudParams {
        CloudParams {
            flash: FlashParams {
                read_iops: 100_000,
                write_iops: 100_000,
                read_bytes_per_s: 1_000_000_000,
                write_bytes_per_s: 1_000_000_000,
                parallelism: 8,
                read_latency_ns: 100_000,
                write_latency_ns: 100_000,
            },
            iops_limit: 100,
            burst_iops: 1000,
            burst_credits: credits,
            throughput_bytes_per_s: 1 << 30,
            network_latency_ns: 500_000,
        }
    }

    #[test]
    fn qd1_latency_is_network_plus_flash() {
        let mut c = Cloud::new(params(10));
        assert_eq!(c.start(SimTime::ZERO, Op::Read, 0, 8), SimTime(600_000));
    }

    #[test]
    fn burst_credits_drain_then_the_rate_falls_to_baseline() {
        // 10 credits, refill 100/s, burst 1000/s, every request waiting at t = 0.
        // Admissions every 1 ms while credits last: the balance after the k-th
        // admission (at k ms, k from 0) is 10 + 0.1·k - (k+1) = 9 - 0.9·k,
        // which stays ≥ 0 through k = 10 (0.0 left). The 12th (k = 11) needs a
        // credit: at 11 ms the bucket holds 0.1, so it waits 0.9 / 100 s = 9 ms
        // → admitted at 20 ms, and every later one 10 ms apart (the baseline).
        let mut p = Pacer::new(&params(10));
        let times: Vec<u64> = (0..14).map(|_| p.admit(SimTime::ZERO, 4096).ns()).collect();
        let ms: Vec<u64> = (0..11).map(|k| k * 1_000_000).collect();
        assert_eq!(&times[..11], &ms[..]);
        assert_eq!(&times[11..], &[20_000_000, 30_000_000, 40_000_000]);
    }

    #[test]
    fn throughput_cap_paces_large_requests() {
        let mut p = Pacer::new(&CloudParams { throughput_bytes_per_s: 1 << 20, ..params(1000) });
        // 256 KiB at 1 MiB/s: 250 ms each; one I/O unit each (1000 credits).
        let t: Vec<u64> = (0..3).map(|_| p.admit(SimTime::ZERO, 256 << 10).ns()).collect();
        assert_eq!(t, vec![0, 250_000_000, 500_000_000]);
        // 512 KiB counts two I/Os: of 3 credits at t = 0, one is left.
        let mut p = Pacer::new(&params(3));
        assert_eq!(p.admit(SimTime::ZERO, 512 << 10), SimTime::ZERO);
        assert_eq!(p.credits(), 1);
    }

    #[test]
    fn gp2_100gib_falls_to_baseline_after_2000_s() {
        // 100 GiB gp2: baseline 300 IOPS, burst 3000, 5.4 M credits. Under a
        // saturating load the balance falls by 3000 - 300 = 2700 a second:
        // empty after 5.4e6 / 2700 = 2000 s; then 300 IOPS.
        let gp2 = CloudParams { iops_limit: 300, burst_iops: 3000, burst_credits: 5_400_000, ..params(0) };
        let mut p = Pacer::new(&gp2);
        let mut prev = 0;
        let mut fell_at = None;
        for _ in 0..7_000_000u64 {
            let t = p.admit(SimTime::ZERO, 4096).ns();
            if t - prev > 1_000_000_000 / 3000 + 1 {
                fell_at = Some(prev);
                break;
            }
            prev = t;
        }
        let fell = fell_at.expect("the credits run out");
        assert!((1_999_000_000_000..=2_001_000_000_000).contains(&fell), "{fell}");
        let next = p.admit(SimTime::ZERO, 4096).ns();
        let after = p.admit(SimTime::ZERO, 4096).ns();
        assert_eq!(after - next, 1_000_000_000 / 300 + 1, "baseline: 1/300 s, rounded up");
    }
}
