//! What the block layer records: btt's Q2D, D2C and Q2C per device and per
//! process, blkparse's per-process "Dispatch wait" maximum, counters, a ring
//! of recent blktrace events, and the longest Q2D with what the elevator
//! dispatched while that bio waited. Bounded by the model's size. It lives in
//! the block layer, beside the `Bio` it reads, above the generic recorders
//! (`crate::metrics`) it builds on.

use super::request::{Bio, ReqFlags};
use crate::metrics::latency::LatencyStats;
use crate::ids::TaskId;
use crate::time::SimTime;
use std::collections::VecDeque;

/// blktrace events kept for the log around the worst wait.
pub const BLK_RING: usize = 96;
/// Dispatches remembered to explain the worst wait.
pub const DISPATCH_RING: usize = 8192;

/// A blktrace action (`blkparse`'s action column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlkAction {
    /// Queued (`Q`).
    Queue,
    /// Back-merged into a queued request (`M`).
    BackMerge,
    /// Front-merged (`F`).
    FrontMerge,
    /// Inserted into the elevator (`I`); `G` happens at the same instant.
    Insert,
    /// Dispatched to the device (`D`).
    Dispatch,
    /// Completed (`C`).
    Complete,
    /// blk-mq: a request allocated with its tag (`G`, `trace_block_getrq`).
    GetRq,
    /// blk-mq: the plug started a list (`P`, `trace_block_plug`).
    Plug,
    /// blk-mq: the plug flushed (`U`, `trace_block_unplug`; `nr_sectors`
    /// holds the depth, as blkparse prints `[n]`).
    Unplug,
}

impl BlkAction {
    pub fn code(self) -> &'static str {
        match self {
            BlkAction::Queue => "Q",
            BlkAction::BackMerge => "M",
            BlkAction::FrontMerge => "F",
            BlkAction::Insert => "I",
            BlkAction::Dispatch => "D",
            BlkAction::Complete => "C",
            BlkAction::GetRq => "G",
            BlkAction::Plug => "P",
            BlkAction::Unplug => "U",
        }
    }
}

/// One blkparse line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkEvent {
    pub at: SimTime,
    /// blkparse's sequence number (per device, from 1).
    pub seq: u64,
    /// The issuing task (`None` on completions, printed as pid 0).
    pub task: Option<TaskId>,
    pub action: BlkAction,
    pub flags: ReqFlags,
    pub sector: u64,
    pub nr_sectors: u32,
}

/// Per process (per issuing task) figures.
#[derive(Clone, Debug, Default)]
pub struct ProcIo {
    pub q2d: LatencyStats,
    pub q2c: LatencyStats,
    /// blkparse `-t` "Dispatch wait", reads and writes.
    pub dispatch_wait_max_ns: [u64; 2],
    pub bios: u64,
    pub bytes: u64,
}

/// What the elevator dispatched while the worst bio waited, per issuing task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meanwhile {
    pub task: TaskId,
    pub requests: u64,
    pub bytes: u64,
}

/// The longest Q2D of a device.
#[derive(Clone, Debug, PartialEq)]
pub struct WorstWait {
    pub task: TaskId,
    pub flags: ReqFlags,
    pub sector: u64,
    pub nr_sectors: u32,
    pub q_at: SimTime,
    pub d_at: SimTime,
    /// The elevator queue it waited in.
    pub queue: String,
    /// Requests the device was sent while it waited.
    pub dispatched: u64,
    /// The same, by issuing task (from the dispatch ring).
    pub meanwhile: Vec<Meanwhile>,
    /// The dispatch ring had wrapped: `meanwhile` covers only the latest.
    pub meanwhile_truncated: bool,
    /// The blktrace events up to its dispatch (at most `BLK_RING`).
    pub log: Vec<BlkEvent>,
    /// Not dispatched when the run stopped: `d_at` is the end of the run.
    pub open: bool,
}

#[derive(Clone, Copy, Debug)]
struct DispatchMark {
    at: SimTime,
    task: TaskId,
    bytes: u64,
}

/// One device's recorder.
#[derive(Clone, Debug)]
pub struct IoRecorder {
    pub q2d: LatencyStats,
    pub d2c: LatencyStats,
    pub q2c: LatencyStats,
    /// blk-mq only: Q2G (the first bio of a request to its tag, tag sleeps
    /// included), G2I (in the plug) and I2D (in the scheduler or the hctx
    /// dispatch list), as btt computes them from `G` and `I`.
    pub q2g: LatencyStats,
    pub g2i: LatencyStats,
    pub i2d: LatencyStats,
    pub procs: Vec<ProcIo>,
    /// Per direction: bios queued, bytes queued, bios merged, requests
    /// dispatched, requests completed.
    pub queued: [u64; 2],
    pub queued_bytes: [u64; 2],
    pub merged: [u64; 2],
    pub dispatched: [u64; 2],
    pub completed: [u64; 2],
    pub completed_bytes: [u64; 2],
    pub seq: u64,
    ring: VecDeque<BlkEvent>,
    dispatches: VecDeque<DispatchMark>,
    pub worst: Option<WorstWait>,
}

impl IoRecorder {
    pub fn new(ntasks: usize) -> IoRecorder {
        IoRecorder {
            q2d: LatencyStats::default(),
            d2c: LatencyStats::default(),
            q2c: LatencyStats::default(),
            q2g: LatencyStats::default(),
            g2i: LatencyStats::default(),
            i2d: LatencyStats::default(),
            procs: vec![ProcIo::default(); ntasks],
            queued: [0; 2],
            queued_bytes: [0; 2],
            merged: [0; 2],
            dispatched: [0; 2],
            completed: [0; 2],
            completed_bytes: [0; 2],
            seq: 0,
            ring: VecDeque::with_capacity(BLK_RING),
            dispatches: VecDeque::with_capacity(DISPATCH_RING),
            worst: None,
        }
    }

    /// Appends a blktrace event to the ring.
    /// The blktrace events kept (the last `BLK_RING`), oldest first.
    pub fn ring(&self) -> impl Iterator<Item = &BlkEvent> {
        self.ring.iter()
    }

    /// Actions traced so far (blkparse's sequence number).
    pub fn actions(&self) -> u64 {
        self.seq
    }

    pub fn trace(
        &mut self,
        at: SimTime,
        task: Option<TaskId>,
        action: BlkAction,
        flags: ReqFlags,
        sector: u64,
        nr_sectors: u32,
    ) {
        self.seq += 1;
        if self.ring.len() == BLK_RING {
            self.ring.pop_front();
        }
        self.ring.push_back(BlkEvent { at, seq: self.seq, task, action, flags, sector, nr_sectors });
    }

    /// Total requests dispatched so far (both directions).
    pub fn dispatched_total(&self) -> u64 {
        self.dispatched[0] + self.dispatched[1]
    }

    /// A request was dispatched.
    pub fn dispatch(&mut self, at: SimTime, task: TaskId, flags: ReqFlags, bytes: u64) {
        self.dispatched[flags.op.index()] += 1;
        if self.dispatches.len() == DISPATCH_RING {
            self.dispatches.pop_front();
        }
        self.dispatches.push_back(DispatchMark { at, task, bytes });
    }

    /// A bio's request was dispatched after it waited `q2d` ns. Returns true
    /// when this is the device's new longest wait (the caller then records
    /// it, with its queue's label, through `set_worst`).
    pub fn bio_dispatched(&mut self, task: TaskId, op: usize, q2d: u64, at: SimTime) -> bool {
        self.q2d.record(q2d, at);
        let p = &mut self.procs[task.index()];
        p.q2d.record(q2d, at);
        p.dispatch_wait_max_ns[op] = p.dispatch_wait_max_ns[op].max(q2d);
        self.worst.as_ref().is_none_or(|w| q2d > w.d_at.since(w.q_at))
    }

    /// The worst wait as it stands: the longest dispatched Q2D, or a bio
    /// still queued at `now` that has waited longer.
    pub fn worst_or_open(&self, open: Option<(&Bio, String)>, now: SimTime) -> Option<WorstWait> {
        let done = self.worst.as_ref().map_or(0, |w| w.d_at.since(w.q_at));
        match open {
            Some((bio, queue)) if now.since(bio.q_at) > done => Some(self.wait_of(bio, now, queue, true)),
            _ => self.worst.clone(),
        }
    }

    /// Records `bio`, just dispatched at `d_at`, as the new worst wait.
    pub fn set_worst(&mut self, bio: &Bio, d_at: SimTime, queue: String) {
        self.worst = Some(self.wait_of(bio, d_at, queue, false));
    }

    /// `bio`'s wait until `d_at`, with the dispatches and events since its Q.
    /// `open`: it is still queued (no dispatch mark of its own to skip).
    fn wait_of(&self, bio: &Bio, d_at: SimTime, queue: String, open: bool) -> WorstWait {
        let own = u64::from(!open);
        let mut meanwhile: Vec<Meanwhile> = Vec::new();
        let marks = self.dispatches.iter().rev().skip(own as usize).take_while(|m| m.at >= bio.q_at);
        let mut seen = 0u64;
        for m in marks {
            seen += 1;
            match meanwhile.iter_mut().find(|x| x.task == m.task) {
                Some(x) => {
                    x.requests += 1;
                    x.bytes += m.bytes;
                }
                None => meanwhile.push(Meanwhile { task: m.task, requests: 1, bytes: m.bytes }),
            }
        }
        meanwhile.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.task.cmp(&b.task)));
        let dispatched = self.dispatched_total() - own - bio.dispatched_before;
        WorstWait {
            task: bio.task,
            flags: bio.flags,
            sector: bio.sector,
            nr_sectors: bio.nr_sectors,
            q_at: bio.q_at,
            d_at,
            queue,
            dispatched,
            meanwhile,
            meanwhile_truncated: seen < dispatched,
            log: self.ring.iter().copied().collect(),
            open,
        }
    }

    /// A request completed after `d2c` ns.
    pub fn request_completed(&mut self, op: usize, bytes: u64, d2c: u64, at: SimTime) {
        self.d2c.record(d2c, at);
        self.completed[op] += 1;
        self.completed_bytes[op] += bytes;
    }

    /// One of its bios, queued `q2c` ns ago, completed.
    pub fn bio_completed(&mut self, task: TaskId, q2c: u64, at: SimTime) {
        self.q2c.record(q2c, at);
        self.procs[task.index()].q2c.record(q2c, at);
    }
}
