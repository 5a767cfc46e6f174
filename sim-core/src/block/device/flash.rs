//! The response-curve flash model (`kind = "flash"`), described by what a
//! datasheet or a fio run gives: 4 KiB random IOPS, sequential bandwidth,
//! internal parallelism and the QD1 4 KiB latency, per direction.
//!
//! A request passes three stages, each a FIFO whose times are fixed when the
//! request arrives, so the completion is known at dispatch:
//! 1. the **transfer stage**, one server shared by every request: `bytes /
//!    bandwidth` (the host link and controller; what caps large requests);
//! 2. a **channel** (die): `parallelism / iops` per command, whatever its
//!    size (what caps small requests). A read goes to the channel holding its
//!    LBA (a hash of its 4 KiB page, so random reads collide as balls in
//!    bins); a write goes to the channel that frees first (the FTL writes
//!    wherever a die is free) and completes once its program has started (the
//!    write buffer acknowledged it), so a QD1 write is not charged the die time;
//! 3. a fixed **overhead** that overlaps freely: what remains of the QD1
//!    latency, `latency - channel time - 4 KiB transfer` (reads).
//!
//! So at QD1 a 4 KiB request takes exactly its base latency; as depth grows
//! random reads occupy more channels (`P·(1-(1-1/P)^N)` busy on average) and
//! throughput approaches `min(iops, bandwidth / size)` smoothly; beyond that
//! the device only queues: latency = depth / throughput (Little's law).
//! Stages are ordered transfer → channel → overhead so that arrivals at each
//! FIFO are in dispatch order (the real read path moves data after the die
//! read; the order does not change throughput or the QD1 latency).

use super::super::request::{Op, SECTOR_BYTES};
use super::transfer_ns;
use crate::time::SimTime;

/// Datasheet figures of a flash device.
#[derive(Clone, Debug, PartialEq)]
pub struct FlashParams {
    /// 4 KiB random read IOPS at high depth.
    pub read_iops: u64,
    pub write_iops: u64,
    /// Sequential (large request) bandwidth, bytes per second.
    pub read_bytes_per_s: u64,
    pub write_bytes_per_s: u64,
    /// Internal channels/dies serving commands at once.
    pub parallelism: u32,
    /// QD1 4 KiB latency.
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
}

/// A 4 KiB page: the unit a read's channel is chosen by.
pub const PAGE_BYTES: u64 = 4096;

impl FlashParams {
    /// How long a command holds a channel: `parallelism / iops`, so that all
    /// channels busy give exactly `iops`.
    pub fn channel_ns(&self, op: Op) -> u64 {
        let iops = match op {
            Op::Read => self.read_iops,
            Op::Write => self.write_iops,
        };
        (u64::from(self.parallelism) * 1_000_000_000).div_ceil(iops.max(1))
    }

    pub fn bytes_per_s(&self, op: Op) -> u64 {
        match op {
            Op::Read => self.read_bytes_per_s,
            Op::Write => self.write_bytes_per_s,
        }
    }

    /// The QD1 latency left once the 4 KiB transfer (and, for a read, the
    /// channel time) are counted; `None` when the figures contradict each
    /// other (a read latency shorter than its own channel time).
    pub fn overhead_ns(&self, op: Op) -> Option<u64> {
        let bus = transfer_ns(PAGE_BYTES, self.bytes_per_s(op));
        match op {
            Op::Read => self.read_latency_ns.checked_sub(self.channel_ns(Op::Read) + bus),
            Op::Write => self.write_latency_ns.checked_sub(bus),
        }
    }

    /// The smallest read latency these IOPS, parallelism and bandwidth allow.
    pub fn min_read_latency_ns(&self) -> u64 {
        self.channel_ns(Op::Read) + transfer_ns(PAGE_BYTES, self.read_bytes_per_s)
    }

    /// The slowest service of one request of `bytes` when idle plus one
    /// command already holding each stage (a bound for invariants).
    pub fn max_service_ns(&self, bytes: u64) -> u64 {
        let bw = self.read_bytes_per_s.min(self.write_bytes_per_s);
        let ch = self.channel_ns(Op::Read).max(self.channel_ns(Op::Write));
        let lat = self.read_latency_ns.max(self.write_latency_ns);
        2 * transfer_ns(bytes, bw) + 2 * ch + lat
    }
}

/// The channel of a read: the page index mixed (splitmix64's finalizer) so
/// that strided offsets do not all land on one channel.
pub fn read_channel(sector: u64, parallelism: u32) -> usize {
    let mut z = sector * SECTOR_BYTES / PAGE_BYTES;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % u64::from(parallelism.max(1))) as usize
}

/// The flash device's running state.
#[derive(Clone, Debug)]
pub struct Flash {
    pub params: FlashParams,
    /// When the transfer stage is next free.
    bus_free: SimTime,
    /// When each channel is next free.
    channels: Vec<SimTime>,
}

impl Flash {
    pub fn new(params: FlashParams) -> Flash {
        let n = params.parallelism.max(1) as usize;
        Flash { params, bus_free: SimTime::ZERO, channels: vec![SimTime::ZERO; n] }
    }

    /// Accepts a request arriving at `now` and returns its completion.
    pub fn start(&mut self, now: SimTime, op: Op, sector: u64, nr_sectors: u32) -> SimTime {
        let p = &self.params;
        let bytes = u64::from(nr_sectors) * SECTOR_BYTES;
        let bus_done = now.max(self.bus_free).after(transfer_ns(bytes, p.bytes_per_s(op)));
        self.bus_free = bus_done;
        let overhead = p.overhead_ns(op).unwrap_or(0);
        let ch_ns = p.channel_ns(op);
        match op {
            Op::Read => {
                let c = read_channel(sector, p.parallelism);
                let ch_done = bus_done.max(self.channels[c]).after(ch_ns);
                self.channels[c] = ch_done;
                ch_done.after(overhead)
            }
            Op::Write => {
                // The first free channel; ties to the lowest index.
                let (c, free) = self.channels.iter().enumerate().min_by_key(|(i, t)| (**t, *i)).expect("channels");
                let ch_start = bus_done.max(*free);
                self.channels[c] = ch_start.after(ch_ns);
                ch_start.max(bus_done.after(overhead))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 channels, 40k read IOPS (100 µs a command), 1 GB/s (4096 ns per
    /// 4 KiB), 120 µs QD1 read latency → 15 904 ns of overhead.
    pub fn small() -> FlashParams {
        FlashParams {
            read_iops: 40_000,
            write_iops: 20_000,
            read_bytes_per_s: 1_000_000_000,
            write_bytes_per_s: 500_000_000,
            parallelism: 4,
            read_latency_ns: 120_000,
            write_latency_ns: 30_000,
        }
    }

    /// A sector whose read lands on channel `c`.
    fn sector_on(c: usize, skip: usize) -> u64 {
        (0..).map(|page| page * 8).filter(|&s| read_channel(s, 4) == c).nth(skip).expect("some page")
    }

    #[test]
    fn qd1_latency_is_the_base_latency() {
        let mut f = Flash::new(small());
        assert_eq!(f.params.channel_ns(Op::Read), 100_000);
        assert_eq!(f.params.overhead_ns(Op::Read), Some(120_000 - 100_000 - 4096));
        assert_eq!(f.start(SimTime::ZERO, Op::Read, 0, 8), SimTime(120_000));
        // A write: 8192 ns of transfer at 500 MB/s + 21 808 ns overhead = 30 µs;
        // its 200 µs of die time does not delay the acknowledgement.
        let t = SimTime(1_000_000);
        assert_eq!(f.start(t, Op::Write, 0, 8).since(t), 30_000);
    }

    #[test]
    fn reads_on_one_channel_queue_reads_on_others_overlap() {
        let mut f = Flash::new(small());
        let (a, b, c) = (sector_on(0, 0), sector_on(0, 1), sector_on(1, 0));
        // a: bus 0..4096, channel 0 4096..104096, +15904 → 120 000.
        assert_eq!(f.start(SimTime::ZERO, Op::Read, a, 8), SimTime(120_000));
        // b: bus 4096..8192, channel 0 busy until 104 096 → 204 096 + 15 904.
        assert_eq!(f.start(SimTime::ZERO, Op::Read, b, 8), SimTime(220_000));
        // c: bus 8192..12288, channel 1 free → 112 288 + 15 904.
        assert_eq!(f.start(SimTime::ZERO, Op::Read, c, 8), SimTime(128_192));
    }

    #[test]
    fn large_reads_are_bound_by_the_transfer_stage() {
        let mut f = Flash::new(small());
        // 128 KiB at 1 GB/s = 131 072 ns each; four at once finish their
        // transfers at 1, 2, 3, 4 × 131 072 and then spend 100 µs on a channel
        // + 15 904 ns: the 4th completes at 524 288 + 115 904, whatever channels
        // they hit (a channel frees 100 µs after it starts, before the next
        // transfer ends).
        let done: Vec<u64> = (0..4).map(|i| f.start(SimTime::ZERO, Op::Read, i * 4096, 256).ns()).collect();
        for (i, d) in done.iter().enumerate() {
            assert_eq!(*d, (i as u64 + 1) * 131_072 + 115_904);
        }
    }

    #[test]
    fn writes_take_the_first_free_channel() {
        let mut f = Flash::new(small());
        // Writes: 200 µs a command, 8192 ns of 4 KiB transfer, 21 808 ns overhead.
        // Five writes at once: transfers end at 8192·k; channels 0..3 start at
        // once and the 5th waits for channel 0 (free at 8192 + 200 000).
        let done: Vec<u64> = (0..5).map(|i| f.start(SimTime::ZERO, Op::Write, i * 8, 8).ns()).collect();
        assert_eq!(&done[..4], &[30_000, 8192 * 2 + 21_808, 8192 * 3 + 21_808, 8192 * 4 + 21_808]);
        assert_eq!(done[4], 208_192, "acknowledged when its program starts on channel 0");
    }
}
