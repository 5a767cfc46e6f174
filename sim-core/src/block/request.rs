//! Block requests and bios (`struct request`, `struct bio`, 4.4
//! include/linux/blkdev.h and blk_types.h) with blktrace's timestamps.
//!
//! A task submits a bio; the block layer either merges it into a queued
//! request (blktrace `M` back, `F` front) or allocates a new request and
//! inserts it into the elevator (`Q`, `G`, `I` at the same instant: plugging is
//! not modelled). The elevator dispatches the request to the device (`D`); the
//! device completes it (`C`). Latencies are kept per bio, as btt computes
//! Q2D and Q2C for every queued bio, merged ones included.

use crate::ids::{BioId, RequestId, TaskId};
use crate::time::SimTime;
/// The direction and flags an I/O step asks for: plain data kept beside
/// `IoStep` (below the block layer), re-exported here where the kernel has them.
pub use crate::workload::program::{Op, ReqFlags};

/// Bytes per sector (`SECTOR_SHIFT` 9).
pub const SECTOR_BYTES: u64 = 512;

/// One submitted piece of I/O.
#[derive(Clone, Debug)]
pub struct Bio {
    pub task: TaskId,
    /// The task's I/O operation this bio belongs to (a large write is split).
    pub op_seq: u64,
    pub flags: ReqFlags,
    pub sector: u64,
    pub nr_sectors: u32,
    /// Queued (`Q`).
    pub q_at: SimTime,
    pub request: RequestId,
    /// Merged into an existing request (`M`/`F`) rather than starting one.
    pub merged: bool,
    /// Requests the device had been sent when this bio was queued, so the
    /// worst-wait report can count the dispatches that overtook it.
    pub dispatched_before: u64,
}

/// A request: one or more contiguous bios.
#[derive(Clone, Debug)]
pub struct Request {
    pub flags: ReqFlags,
    /// The task that allocated it; its I/O context picks the CFQ queue.
    pub task: TaskId,
    pub sector: u64,
    pub nr_sectors: u32,
    pub bios: Vec<BioId>,
    /// Inserted into the elevator (`I`).
    pub i_at: SimTime,
    /// Dispatched to the device (`D`).
    pub d_at: Option<SimTime>,
    /// When the elevator considers it expired (`rq->fifo_time`).
    pub fifo_time: SimTime,
    /// Position among equal sectors in the elevator's sort tree.
    pub sort_key: u64,
    /// Position in the elevator's FIFO.
    pub fifo_key: u64,
    /// `REQ_NOMERGE`: a merge into it failed on the size limit.
    pub nomerge: bool,
    /// The CFQ queue it sits in (`RQ_CFQQ`), if the elevator is CFQ.
    pub cfqq: Option<u32>,
}

impl Request {
    /// One past the last sector (`blk_rq_pos + blk_rq_sectors`).
    pub fn end_sector(&self) -> u64 {
        self.sector + u64::from(self.nr_sectors)
    }

    pub fn bytes(&self) -> u64 {
        u64::from(self.nr_sectors) * SECTOR_BYTES
    }
}

/// A slab with a free list: ids are reused after `free`, so memory follows the
/// requests in flight, not the run's length.
#[derive(Clone, Debug)]
pub struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { items: Vec::new(), free: Vec::new(), live: 0 }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = Some(value);
            i
        } else {
            self.items.push(Some(value));
            (self.items.len() - 1) as u32
        }
    }

    pub fn remove(&mut self, id: u32) -> T {
        let v = self.items[id as usize].take().expect("slab slot is live");
        self.free.push(id);
        self.live -= 1;
        v
    }

    pub fn get(&self, id: u32) -> &T {
        self.items[id as usize].as_ref().expect("slab slot is live")
    }

    pub fn get_mut(&mut self, id: u32) -> &mut T {
        self.items[id as usize].as_mut().expect("slab slot is live")
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Live entries with their ids, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.items.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)))
    }
}

/// The requests of one queue, indexed by `RequestId`.
pub type Requests = Slab<Request>;

/// An elevator's sort tree: requests by `(start sector, sort_key)`.
pub type SortTree = std::collections::BTreeMap<(u64, u64), RequestId>;

/// `elv_rb_latter_request` / `elv_rb_former_request` (4.4 and 6.18
/// elevator.c): the request after (`latter`) or before `key` in a sort tree,
/// without wrapping.
pub fn elv_rb_neighbour(tree: &SortTree, key: (u64, u64), latter: bool) -> Option<RequestId> {
    use std::ops::Bound::{Excluded, Unbounded};
    let found = if latter { tree.range((Excluded(key), Unbounded)).next() } else { tree.range(..key).next_back() };
    found.map(|(_, &id)| id)
}

impl Requests {
    pub fn rq(&self, id: RequestId) -> &Request {
        self.get(id.0)
    }

    pub fn rq_mut(&mut self, id: RequestId) -> &mut Request {
        self.get_mut(id.0)
    }
}

/// The seek rule `cfq_choose_req` (4.4) and `bfq_choose_req` (6.18) share
/// once their class checks tie: of two requests at sectors `s1`, `s2`, the
/// nearer to the head at `last`, where a backward seek of at most
/// `back_max` sectors costs `penalty` times its distance and a longer one
/// is out of reach; a tie goes to the higher sector, and with both out of
/// reach the lower sector wins.
pub(crate) fn nearer_after(
    last: u64,
    back_max: u64,
    penalty: u64,
    (r1, s1): (RequestId, u64),
    (r2, s2): (RequestId, u64),
) -> RequestId {
    let dist = |s: u64| {
        if s >= last {
            Some(s - last)
        } else if s + back_max >= last {
            Some((last - s) * penalty)
        } else {
            None
        }
    };
    match (dist(s1), dist(s2)) {
        (Some(d1), Some(d2)) => {
            if d1 < d2 || (d1 == d2 && s1 >= s2) {
                r1
            } else {
                r2
            }
        }
        (Some(_), None) => r1,
        (None, Some(_)) => r2,
        (None, None) => {
            if s1 <= s2 {
                r1
            } else {
                r2
            }
        }
    }
}
