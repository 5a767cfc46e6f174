//! The disk behind a request queue: how many requests it accepts at once
//! (NCQ tags, `queue_depth`) and how long each takes.
//!
//! Response-curve models, described by datasheet or fio figures (see
//! docs/devices.md):
//! - `flash.rs` (`kind = "flash"`): IOPS, bandwidth, parallelism and QD1
//!   latency per direction; throughput rises smoothly with depth to
//!   `min(iops, bandwidth / size)`;
//! - `disk.rs` (`kind = "hdd"`, `ncq = true`): seek and rotational position
//!   from geometry, NCQ reordering (shortest positioning time first);
//! - `cloud.rs` (`kind = "cloud"`): provisioned IOPS/throughput caps with
//!   burst credits and a network latency in front of a flash curve;
//! - `presets.rs`: named devices with their sources; `curve.rs`: a closed-loop
//!   fio-like driver measuring IOPS and latency at a depth.
//!
//! The two legacy kinds, kept bit-exact for existing scenarios:
//! - **SSD**: a fixed per-request latency (read and write figures) that
//!   overlaps between requests in flight, plus a transfer at the direction's
//!   bandwidth through one shared channel, so depth hides latency but never
//!   raises bandwidth.
//! - **Rotating disk**: one head serves the requests in flight one at a time in
//!   the order it received them (NCQ's own reordering is not modelled): seek
//!   time grows with the square root of the distance from the previous
//!   request's end, then a rotational latency drawn uniformly over one
//!   revolution from the device's seeded stream, then the transfer. A request
//!   that starts where the previous one ended costs only its transfer.
//!
//! The API is event-driven: `start` and `complete` report the completions that
//! became known into `out`. These two kinds know a request's completion when
//! it is dispatched (completions come back in dispatch order); a disk that
//! reorders its queue (NCQ) only decides its next request at a completion.

pub mod cloud;
pub mod curve;
pub mod disk;
pub mod fit;
pub mod flash;
pub mod presets;

/// The largest figures a device may be given (`[devices.X]` and a fitted
/// device alike): tags (`queue_depth`), IOPS, channels, burst credits.
pub const QUEUE_DEPTH_MAX: u64 = 4096;
pub const IOPS_MAX: i64 = 100_000_000;
pub const PARALLELISM_MAX: i64 = 4096;
pub const BURST_CREDITS_MAX: i64 = 1_000_000_000_000;

use super::request::{Op, SECTOR_BYTES};
use crate::ids::RequestId;
use crate::rng::SimRng;
use crate::time::SimTime;
use cloud::{Cloud, CloudParams};
use disk::{DiskParams, NcqDisk};
use flash::{Flash, FlashParams};

#[derive(Clone, Debug, PartialEq)]
pub enum DeviceKind {
    Ssd {
        read_latency_ns: u64,
        write_latency_ns: u64,
        read_bytes_per_s: u64,
        write_bytes_per_s: u64,
    },
    Hdd {
        rpm: u32,
        /// Track-to-track seek.
        seek_min_ns: u64,
        /// Full-stroke seek.
        seek_max_ns: u64,
        bytes_per_s: u64,
    },
    /// The response-curve flash model (`flash.rs`).
    Flash(FlashParams),
    /// A rotating disk with NCQ reordering (`disk.rs`); `capacity_sectors`
    /// comes from the spec.
    HddNcq {
        rpm: u32,
        seek_min_ns: u64,
        seek_max_ns: u64,
        bytes_per_s: u64,
    },
    /// A cloud volume (`cloud.rs`).
    Cloud(CloudParams),
}

impl DeviceKind {
    /// The scenario's `kind` name.
    pub fn name(&self) -> &'static str {
        match self {
            DeviceKind::Ssd { .. } => "ssd",
            DeviceKind::Hdd { .. } | DeviceKind::HddNcq { .. } => "hdd",
            DeviceKind::Flash(_) => "flash",
            DeviceKind::Cloud(_) => "cloud",
        }
    }
}

/// The state of a response-curve model.
#[derive(Clone, Debug)]
enum Model {
    /// `Ssd` and `Hdd`: the fields of `Device`.
    Legacy,
    Flash(Flash),
    Ncq(NcqDisk),
    Cloud(Box<Cloud>),
}

/// A validated device description.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSpec {
    pub name: String,
    pub kind: DeviceKind,
    /// Requests the device holds at once (NCQ tags, `queue_depth`).
    pub queue_depth: u32,
    pub capacity_sectors: u64,
    /// `queue/rotational`.
    pub rotational: bool,
    /// `queue/max_sectors_kb` in sectors: larger bios are split.
    pub max_sectors: u32,
    pub elevator: crate::block::elevator::ElevatorSpec,
    /// The block device's major,minor as blkparse prints it.
    pub dev_t: (u32, u32),
}

/// The disk's state while running.
#[derive(Clone, Debug)]
pub struct Device {
    pub spec: DeviceSpec,
    pub in_flight: u32,
    /// When the transfer channel (SSD) or the head (HDD) is next free.
    busy_until: SimTime,
    /// Where the head is after the last request scheduled (HDD).
    head_sector: u64,
    rng: SimRng,
    model: Model,
}

impl Device {
    pub fn new(spec: DeviceSpec, rng: SimRng) -> Device {
        let model = match &spec.kind {
            DeviceKind::Ssd { .. } | DeviceKind::Hdd { .. } => Model::Legacy,
            DeviceKind::Flash(p) => Model::Flash(Flash::new(p.clone())),
            DeviceKind::HddNcq { rpm, seek_min_ns, seek_max_ns, bytes_per_s } => {
                let p = DiskParams {
                    rpm: *rpm,
                    seek_min_ns: *seek_min_ns,
                    seek_max_ns: *seek_max_ns,
                    bytes_per_s: *bytes_per_s,
                    capacity_sectors: spec.capacity_sectors,
                };
                Model::Ncq(NcqDisk::new(p, spec.queue_depth))
            }
            DeviceKind::Cloud(p) => Model::Cloud(Box::new(Cloud::new(p.clone()))),
        };
        Device { spec, in_flight: 0, busy_until: SimTime::ZERO, head_sector: 0, rng, model }
    }

    /// Whether the device has a free tag.
    pub fn can_accept(&self) -> bool {
        self.in_flight < self.spec.queue_depth
    }

    /// Accepts request `rq` dispatched at `now`; completions that became
    /// known are pushed to `out` as (time, request).
    pub fn start(
        &mut self,
        now: SimTime,
        rq: RequestId,
        op: Op,
        sector: u64,
        nr_sectors: u32,
        out: &mut Vec<(SimTime, RequestId)>,
    ) {
        let done = match &mut self.model {
            Model::Legacy => self.start_legacy(now, op, sector, nr_sectors),
            Model::Flash(f) => {
                self.in_flight += 1;
                f.start(now, op, sector, nr_sectors)
            }
            Model::Cloud(c) => {
                self.in_flight += 1;
                c.start(now, op, sector, nr_sectors)
            }
            Model::Ncq(d) => {
                self.in_flight += 1;
                d.start(now, rq, op, sector, nr_sectors, out);
                return;
            }
        };
        out.push((done, rq));
    }

    /// The SSD and disk kinds: the completion time, fixed at dispatch.
    fn start_legacy(&mut self, now: SimTime, op: Op, sector: u64, nr_sectors: u32) -> SimTime {
        debug_assert!(self.can_accept());
        self.in_flight += 1;
        let bytes = u64::from(nr_sectors) * SECTOR_BYTES;
        let done = match self.spec.kind {
            DeviceKind::Ssd { read_latency_ns, write_latency_ns, read_bytes_per_s, write_bytes_per_s } => {
                let (lat, bw) = match op {
                    Op::Read => (read_latency_ns, read_bytes_per_s),
                    Op::Write => (write_latency_ns, write_bytes_per_s),
                };
                let ready = now.after(lat);
                ready.max(self.busy_until).after(transfer_ns(bytes, bw))
            }
            DeviceKind::Hdd { rpm, seek_min_ns, seek_max_ns, bytes_per_s } => {
                let start = now.max(self.busy_until);
                let distance = sector.abs_diff(self.head_sector);
                let position_ns = if distance == 0 {
                    0
                } else {
                    let frac = libm::sqrt(distance as f64 / self.spec.capacity_sectors.max(1) as f64).min(1.0);
                    let seek = seek_min_ns + ((seek_max_ns - seek_min_ns) as f64 * frac) as u64;
                    let revolution_ns = 60_000_000_000 / u64::from(rpm);
                    seek + self.rng.range_inclusive(0, revolution_ns - 1)
                };
                start.after(position_ns).after(transfer_ns(bytes, bytes_per_s))
            }
            DeviceKind::Flash(_) | DeviceKind::HddNcq { .. } | DeviceKind::Cloud(_) => {
                debug_assert!(false, "start_legacy on a response-curve model");
                now
            }
        };
        self.busy_until = done;
        self.head_sector = sector + u64::from(nr_sectors);
        done
    }

    /// An upper bound on the time between two completions while the device
    /// is busy: the slowest possible service of one request of at most
    /// `max_sectors` (SSD: latency plus transfer; disk: full-stroke seek, a
    /// whole revolution and the transfer).
    pub fn max_service_ns(&self) -> u64 {
        let bytes = u64::from(self.spec.max_sectors) * SECTOR_BYTES;
        match self.spec.kind {
            DeviceKind::Ssd { read_latency_ns, write_latency_ns, read_bytes_per_s, write_bytes_per_s } => {
                read_latency_ns.max(write_latency_ns) + transfer_ns(bytes, read_bytes_per_s.min(write_bytes_per_s))
            }
            DeviceKind::Hdd { rpm, seek_max_ns, bytes_per_s, .. }
            | DeviceKind::HddNcq { rpm, seek_max_ns, bytes_per_s, .. } => {
                seek_max_ns + 60_000_000_000 / u64::from(rpm) + transfer_ns(bytes, bytes_per_s)
            }
            DeviceKind::Flash(ref p) => p.max_service_ns(bytes),
            DeviceKind::Cloud(ref c) => {
                // One admission interval at the slowest rate, the throughput
                // pacer, the flash stages and the network.
                (bytes.div_ceil(cloud::IO_UNIT_BYTES).max(1) * 1_000_000_000).div_ceil(c.iops_limit.max(1))
                    + transfer_ns(bytes, c.throughput_bytes_per_s)
                    + c.flash.max_service_ns(bytes)
                    + c.network_latency_ns
            }
        }
    }

    /// Request `rq` completed at `now`; completions that became known are
    /// pushed to `out`.
    pub fn complete(&mut self, now: SimTime, rq: RequestId, out: &mut Vec<(SimTime, RequestId)>) {
        let _ = rq;
        debug_assert!(self.in_flight > 0);
        self.in_flight -= 1;
        if let Model::Ncq(d) = &mut self.model {
            d.complete(now, out);
        }
    }
}

/// Time to move `bytes` at `bytes_per_s`, rounded up to whole nanoseconds.
pub fn transfer_ns(bytes: u64, bytes_per_s: u64) -> u64 {
    let ns = (u128::from(bytes) * 1_000_000_000).div_ceil(u128::from(bytes_per_s.max(1)));
    ns.min(u128::from(u64::MAX / 4)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::elevator::ElevatorSpec;

    /// Starts one request and returns its completion time.
    fn st(d: &mut Device, now: SimTime, op: Op, sector: u64, nr: u32) -> SimTime {
        let mut out = Vec::new();
        d.start(now, RequestId(0), op, sector, nr, &mut out);
        assert_eq!(out.len(), 1);
        out[0].0
    }

    fn ssd(depth: u32) -> Device {
        let spec = DeviceSpec {
            name: "ssd".into(),
            kind: DeviceKind::Ssd {
                read_latency_ns: 100_000,
                write_latency_ns: 20_000,
                read_bytes_per_s: 1_000_000_000,
                write_bytes_per_s: 500_000_000,
            },
            queue_depth: depth,
            capacity_sectors: 1 << 30,
            rotational: false,
            max_sectors: 2560,
            elevator: ElevatorSpec::Noop,
            dev_t: (8, 0),
        };
        Device::new(spec, SimRng::new(1).stream("d"))
    }

    #[test]
    fn ssd_overlaps_latency_but_shares_bandwidth() {
        let mut d = ssd(4);
        // 4 KiB read: 100 µs latency + 4096 ns transfer at 1 GB/s.
        assert_eq!(st(&mut d, SimTime::ZERO, Op::Read, 0, 8), SimTime(104_096));
        // A second read at once overlaps the latency and queues for the channel.
        assert_eq!(st(&mut d, SimTime::ZERO, Op::Read, 800, 8), SimTime(108_192));
        // 1 MiB write at 500 MB/s: 2097152 ns of transfer after the channel frees.
        assert_eq!(st(&mut d, SimTime::ZERO, Op::Write, 5000, 2048), SimTime(108_192 + 2_097_152));
        assert!(d.can_accept());
        st(&mut d, SimTime::ZERO, Op::Read, 9000, 8);
        assert!(!d.can_accept());
    }

    #[test]
    fn hdd_charges_seeks_but_not_sequential_runs() {
        let spec = DeviceSpec {
            name: "hdd".into(),
            kind: DeviceKind::Hdd {
                rpm: 7200,
                seek_min_ns: 500_000,
                seek_max_ns: 15_000_000,
                bytes_per_s: 150_000_000,
            },
            queue_depth: 1,
            capacity_sectors: 1 << 31,
            rotational: true,
            max_sectors: 2560,
            elevator: ElevatorSpec::Noop,
            dev_t: (8, 16),
        };
        let mut d = Device::new(spec, SimRng::new(1).stream("d"));
        let first = st(&mut d, SimTime::ZERO, Op::Read, 0, 8);
        assert_eq!(first, SimTime(transfer_ns(4096, 150_000_000)), "the head starts at sector 0");
        d.complete(SimTime::ZERO, RequestId(0), &mut Vec::new());
        let seq = st(&mut d, first, Op::Read, 8, 8);
        assert_eq!(seq.since(first), transfer_ns(4096, 150_000_000));
        d.complete(SimTime::ZERO, RequestId(0), &mut Vec::new());
        let far = st(&mut d, seq, Op::Read, 1 << 30, 8);
        let took = far.since(seq);
        // sqrt(1/2) of the stroke: 500 µs + 14.5 ms · 0.707 ≈ 10.75 ms, plus up to 8.33 ms of rotation.
        assert!((10_700_000..10_800_000 + 8_333_333 + 30_000).contains(&took), "{took}");
    }
}
