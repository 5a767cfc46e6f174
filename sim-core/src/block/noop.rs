//! The noop elevator (4.4 block/noop-iosched.c): one FIFO. Merging is the
//! core's (`elv_merge`: the `last_merge` cache and the back-merge hash); noop
//! has no front-merge hook of its own.

use super::elv_ctx::ElvCtx;
use crate::ids::RequestId;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct Noop {
    queue: VecDeque<RequestId>,
}

impl Noop {
    /// `noop_add_request`: `list_add_tail`.
    pub fn add_request(&mut self, rq: RequestId) {
        self.queue.push_back(rq);
    }

    /// `noop_dispatch`: the head of the list.
    pub fn dispatch_request(&mut self, _ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        self.queue.pop_front()
    }

    pub fn has_work(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}
