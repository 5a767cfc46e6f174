//! What an elevator sees of the world on each call (`ElvCtx`): the time, the
//! request slab, the jiffy length and whether the disk rotates. It sits below
//! every elevator and below `Elevator`, which dispatches to them, so the
//! elevators never import the enum that is built from them.

use super::request::Requests;
use crate::time::SimTime;

/// What an elevator sees of the world on each call.
pub struct ElvCtx<'a> {
    pub now: SimTime,
    pub rqs: &'a mut Requests,
    /// `TICK_NSEC`: one jiffy.
    pub jiffy_ns: u64,
    /// `blk_queue_nonrot`.
    pub nonrot: bool,
}

impl ElvCtx<'_> {
    /// `jiffies` now.
    pub fn jiffies(&self) -> u64 {
        self.now.ns() / self.jiffy_ns
    }
}
