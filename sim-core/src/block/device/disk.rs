//! A rotating disk with native command queueing (`kind = "hdd"`, `ncq =
//! true`): the drive holds up to `queue_depth` commands and, each time the
//! head frees, serves the one with the shortest positioning time (seek +
//! rotational wait, "SPTF"), so IOPS grow with depth.
//!
//! Geometry, all deterministic:
//! - a track holds what passes under the head in one revolution:
//!   `bytes_per_s × revolution / 512` sectors; sector `s` lies on track
//!   `s / spt` at angle `(s mod spt) / spt` of a turn;
//! - the platter turns at `rpm` from angle 0 at time 0, so the sector under
//!   the head at time `t` is at angle `(t mod rev) / rev`;
//! - a seek to another track takes `seek_min + (seek_max - seek_min) ×
//!   sqrt(tracks / all tracks)`; the same track costs no seek;
//! - then the head waits for the sector to come round, then transfers at
//!   `bytes_per_s`. A request starting where the last one ended costs only
//!   its transfer.
//!
//! Firmware ages requests so none starves: a command passed over by
//! `queue_depth` later-chosen commands is served next (a model choice; drive
//! vendors do not publish their aging rule).

use super::super::request::{Op, SECTOR_BYTES};
use super::transfer_ns;
use crate::ids::RequestId;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct DiskParams {
    pub rpm: u32,
    pub seek_min_ns: u64,
    pub seek_max_ns: u64,
    pub bytes_per_s: u64,
    pub capacity_sectors: u64,
}

impl DiskParams {
    pub fn revolution_ns(&self) -> u64 {
        60_000_000_000 / u64::from(self.rpm.max(1))
    }

    /// Sectors per track (at least 1).
    pub fn sectors_per_track(&self) -> u64 {
        let bytes = u128::from(self.bytes_per_s) * u128::from(self.revolution_ns()) / 1_000_000_000;
        ((bytes / u128::from(SECTOR_BYTES)) as u64).max(1)
    }

    /// Seek time between the tracks of two sectors.
    pub fn seek_ns(&self, from: u64, to: u64) -> u64 {
        let spt = self.sectors_per_track();
        let (a, b) = (from / spt, to / spt);
        if a == b {
            return 0;
        }
        let tracks = self.capacity_sectors.div_ceil(spt).max(1);
        let frac = libm::sqrt(a.abs_diff(b) as f64 / tracks as f64).min(1.0);
        self.seek_min_ns + ((self.seek_max_ns - self.seek_min_ns) as f64 * frac) as u64
    }

    /// Seek plus rotational wait for the head at `head` at time `t` to reach `to`.
    pub fn position_ns(&self, t: SimTime, head: u64, to: u64) -> u64 {
        if head == to {
            return 0;
        }
        let seek = self.seek_ns(head, to);
        let rev = self.revolution_ns();
        let spt = self.sectors_per_track();
        let angle = ((u128::from(to % spt) * u128::from(rev)) / u128::from(spt)) as u64;
        let phase = t.ns().wrapping_add(seek) % rev;
        seek + (angle + rev - phase) % rev
    }
}

#[derive(Clone, Debug)]
struct Queued {
    rq: RequestId,
    sector: u64,
    nr_sectors: u32,
    /// Commands chosen before this one since it arrived.
    passed: u32,
}

/// The disk's running state.
#[derive(Clone, Debug)]
pub struct NcqDisk {
    pub params: DiskParams,
    queue_depth: u32,
    /// Commands held but not yet on the head, in arrival order.
    queued: Vec<Queued>,
    /// Whether the head is serving a command.
    busy: bool,
    head_sector: u64,
}

impl NcqDisk {
    pub fn new(params: DiskParams, queue_depth: u32) -> NcqDisk {
        NcqDisk { params, queue_depth, queued: Vec::new(), busy: false, head_sector: 0 }
    }

    pub fn start(
        &mut self,
        now: SimTime,
        rq: RequestId,
        _op: Op,
        sector: u64,
        nr_sectors: u32,
        out: &mut Vec<(SimTime, RequestId)>,
    ) {
        self.queued.push(Queued { rq, sector, nr_sectors, passed: 0 });
        if !self.busy {
            self.serve_next(now, out);
        }
    }

    /// The head finished its command at `now`.
    pub fn complete(&mut self, now: SimTime, out: &mut Vec<(SimTime, RequestId)>) {
        self.busy = false;
        self.serve_next(now, out);
    }

    /// Shortest positioning time first (ties: the oldest), unless the oldest
    /// command has been passed over `queue_depth` times.
    fn serve_next(&mut self, now: SimTime, out: &mut Vec<(SimTime, RequestId)>) {
        if self.queued.is_empty() {
            return;
        }
        let p = &self.params;
        let i = if self.queued[0].passed >= self.queue_depth {
            0
        } else {
            let head = self.head_sector;
            (0..self.queued.len())
                .min_by_key(|&i| (p.position_ns(now, head, self.queued[i].sector), i))
                .expect("queued")
        };
        let q = self.queued.remove(i);
        for other in &mut self.queued[..i] {
            other.passed += 1;
        }
        let bytes = u64::from(q.nr_sectors) * SECTOR_BYTES;
        let done = now.after(p.position_ns(now, self.head_sector, q.sector)).after(transfer_ns(bytes, p.bytes_per_s));
        self.head_sector = q.sector + u64::from(q.nr_sectors);
        self.busy = true;
        out.push((done, q.rq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 6000 rpm (10 ms a turn), 51.2 MB/s → 512 000 bytes = 1000 sectors a
    /// track; 100 tracks.
    fn params() -> DiskParams {
        DiskParams {
            rpm: 6000,
            seek_min_ns: 1_000_000,
            seek_max_ns: 11_000_000,
            bytes_per_s: 51_200_000,
            capacity_sectors: 100_000,
        }
    }

    #[test]
    fn geometry_gives_seek_and_rotation_from_angle_and_time() {
        let p = params();
        assert_eq!((p.revolution_ns(), p.sectors_per_track()), (10_000_000, 1000));
        // Same track, sector 500 is half a turn on: 5 ms at t = 0.
        assert_eq!(p.position_ns(SimTime::ZERO, 10, 500), 5_000_000);
        // At t = 6 ms the platter is at angle 0.6: sector 500 comes round in 9 ms.
        assert_eq!(p.position_ns(SimTime(6_000_000), 10, 500), 9_000_000);
        // 25 tracks of 100: seek 1 + 10 × sqrt(0.25) = 6 ms, landing at angle 0.6
        // (t = 0); sector 25 700 (angle 0.7) is 1 ms later.
        assert_eq!(p.position_ns(SimTime::ZERO, 0, 25_700), 7_000_000);
    }

    #[test]
    fn ncq_picks_the_shortest_positioning_time() {
        let mut d = NcqDisk::new(params(), 32);
        let mut out = Vec::new();
        // First command at sector 900 (angle 0.9): 9 ms + 4096 B at 51.2 MB/s (80 µs).
        d.start(SimTime::ZERO, RequestId(0), Op::Read, 900, 8, &mut out);
        assert_eq!(out, vec![(SimTime(9_080_000), RequestId(0))]);
        out.clear();
        // Two more arrive; at 9.08 ms the head is at sector 908 (angle 0.908):
        // sector 100 is 1.92 ms away, sector 950 only 0.42 ms: 950 goes first
        // though it arrived last.
        d.start(SimTime(1), RequestId(1), Op::Read, 100, 8, &mut out);
        d.start(SimTime(2), RequestId(2), Op::Read, 950, 8, &mut out);
        assert!(out.is_empty(), "the head is busy");
        d.complete(SimTime(9_080_000), &mut out);
        assert_eq!(out, vec![(SimTime(9_080_000 + 420_000 + 80_000), RequestId(2))]);
        out.clear();
        // Head at 958 at 9.58 ms (angle 0.958): sector 100 in 1.42 ms.
        d.complete(SimTime(9_580_000), &mut out);
        assert_eq!(out, vec![(SimTime(9_580_000 + 1_420_000 + 80_000), RequestId(1))]);
    }

    #[test]
    fn an_aged_command_is_served_first() {
        let mut d = NcqDisk::new(params(), 1);
        let mut out = Vec::new();
        d.start(SimTime::ZERO, RequestId(0), Op::Read, 0, 8, &mut out); // at the head: 80 µs
        d.start(SimTime::ZERO, RequestId(1), Op::Read, 600, 8, &mut out);
        d.start(SimTime::ZERO, RequestId(2), Op::Read, 100, 8, &mut out);
        out.clear();
        // At 80 µs (head at sector 8, angle 0.008) sector 100 is nearer: 2 first;
        // 1 has then been passed over once = queue_depth, so it goes next even
        // if another nearer command arrives.
        d.complete(SimTime(80_000), &mut out);
        assert_eq!(out[0].1, RequestId(2));
        d.start(SimTime(100_000), RequestId(3), Op::Read, 200, 8, &mut out);
        let t = out[0].0;
        out.clear();
        d.complete(t, &mut out);
        assert_eq!(out[0].1, RequestId(1));
    }
}
