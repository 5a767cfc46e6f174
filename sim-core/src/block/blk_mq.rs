//! The blk-mq path of a request queue (6.18 block/blk-mq.c, blk-mq-sched.c,
//! blk-mq-tag.c, blk-merge.c, elevator.c), chosen by the elevator name
//! (`none`, `mq-deadline`): hardware queues mapped from CPUs, tags, plugging,
//! bio and request merges, and one dispatch loop.
//!
//! A submission (one `Step::Io`, one system call) runs between
//! `blk_start_plug` and `blk_finish_plug`: each bio is first offered to the
//! plug's last request (`blk_attempt_plug_merge`), then to the scheduler
//! (`blk_mq_sched_bio_merge`; `none` has no scheduler merge here); otherwise a
//! request is allocated with a tag (`G`) and added to the plug (`P` when the
//! plug was empty). The plug is flushed (`U`, then `I` for each request) when
//! it holds `BLK_MAX_REQUEST_COUNT` requests or its last one reaches
//! `BLK_PLUG_FLUSH_SIZE`, when the submitter sleeps for a tag, and at the end
//! of the step.
//!
//! Tags: with a scheduler a request takes a scheduler tag at allocation
//! (`nr_requests` per hctx) and a driver tag at dispatch; with `none` the
//! driver tag (`nr_requests`, at most `queue_depth`) is taken at allocation.
//! Simplifications, each a statement about the model:
//! - the sbitmap wake (`sbq_wake_ptr`, `wake_batch` frees per batch of
//!   waiters) becomes: every freed tag goes at once to the first waiter of its
//!   hctx that can use it, and that waiter's submission resumes at that
//!   instant (the kernel wakes the task and it allocates when it next runs);
//! - a waiter keeps the hctx of the CPU it slept on (`blk_mq_get_tag`
//!   re-maps after a migration);
//! - `dd_limit_depth`'s shallow depth is applied to the whole map
//!   (`__map_depth_with_shallow` spreads it over the sbitmap words);
//! - CPU → hctx is `blk_mq_map_queues` over `group_cpus_evenly` on one NUMA
//!   node without SMT siblings: consecutive CPU ranges, the first
//!   `ncpus % groups` one CPU larger;
//! - `none` does not merge into requests already queued on an hctx (the
//!   per-ctx `blk_bio_list_merge`): requests leave the plug straight for the
//!   hctx dispatch list, and `I` is traced for them at unplug (the kernel
//!   traces no `I` for a request it issues directly).
//!
//! This file holds the blk-mq state of a queue (hardware contexts, tags,
//! the plug, tag waiters) and its settings; `blk_mq_submit.rs` runs the path
//! on a `RequestQueue` (submission, plug flush, dispatch, completion, tag
//! waits), `blk_mq_merge.rs` its merges (6.18 blk-merge.c).

use super::request::ReqFlags;
use crate::ids::{BioId, RequestId, TaskId};
use crate::time::SimTime;
use std::collections::VecDeque;

/// A bio's request before it has one (it waits for a tag).
pub const NO_REQUEST: RequestId = RequestId(u32::MAX);

/// `BLK_MAX_REQUEST_COUNT` (6.18 block/blk.h).
pub const BLK_MAX_REQUEST_COUNT: usize = 32;
/// `BLK_PLUG_FLUSH_SIZE` (6.18 block/blk.h): 128 KiB.
pub const BLK_PLUG_FLUSH_SIZE: u64 = 128 * 1024;
/// `BLKDEV_MIN_RQ` (6.18 include/linux/blk-mq.h).
pub const BLKDEV_MIN_RQ: u32 = 4;
/// `BLKDEV_DEFAULT_RQ`.
pub const BLKDEV_DEFAULT_RQ: u32 = 128;
/// `MAX_SCHED_RQ` (6.18 block/blk-mq-sched.h): 16 × BLKDEV_DEFAULT_RQ.
pub const MAX_SCHED_RQ: u32 = 16 * BLKDEV_DEFAULT_RQ;
/// The most hardware queues a scenario may ask for.
pub const NR_HW_QUEUES_MAX: u32 = 128;

/// `blk_mq_default_nr_requests` (6.18 block/blk-mq.h): 2 × min(queue_depth,
/// BLKDEV_DEFAULT_RQ) with a scheduler (`blk_mq_init_sched`); without one,
/// `q->nr_requests = set->queue_depth` (`elevator_switch` to none).
pub fn default_nr_requests(queue_depth: u32, sched: bool) -> u32 {
    if sched { 2 * queue_depth.min(BLKDEV_DEFAULT_RQ) } else { queue_depth }
}

/// `queue_requests_store` (6.18 blk-sysfs.c): below `BLKDEV_MIN_RQ` the
/// kernel raises the value to 4 (refused here, as other out-of-range values
/// are); above `MAX_SCHED_RQ` with a scheduler, or above `queue_depth`
/// without one, it fails with EINVAL. Returns the allowed range.
pub fn nr_requests_range(queue_depth: u32, sched: bool) -> (u32, u32) {
    (BLKDEV_MIN_RQ, if sched { MAX_SCHED_RQ } else { queue_depth })
}

/// The blk-mq settings of a device (`[devices.X] nr_hw_queues, nr_requests`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkMqSettings {
    pub nr_hw_queues: u32,
    /// `None`: `default_nr_requests`.
    pub nr_requests: Option<u32>,
}

impl Default for BlkMqSettings {
    fn default() -> Self {
        BlkMqSettings { nr_hw_queues: 1, nr_requests: None }
    }
}

/// `blk_mq_map_queues` (6.18 blk-mq-cpumap.c) over `group_cpus_evenly` on a
/// flat topology: `min(nr_queues, ncpus)` groups of consecutive CPUs; queue
/// `q` takes group `q % groups`, so with more queues than CPUs the last
/// queues assigned win.
pub fn map_queues(nr_queues: u32, ncpus: usize) -> Vec<u16> {
    let ncpus = ncpus.max(1);
    let groups = (nr_queues as usize).min(ncpus).max(1);
    let (base, extra) = (ncpus / groups, ncpus % groups);
    let mut group_of = Vec::with_capacity(ncpus);
    for g in 0..groups {
        let n = base + usize::from(g < extra);
        group_of.extend(std::iter::repeat_n(g, n));
    }
    let mut map = vec![0u16; ncpus];
    for q in 0..nr_queues as usize {
        for (cpu, &g) in group_of.iter().enumerate() {
            if g == q % groups {
                map[cpu] = q as u16;
            }
        }
    }
    map
}

/// One hardware context (`struct blk_mq_hw_ctx`).
#[derive(Clone, Debug, Default)]
pub struct Hctx {
    /// Scheduler tags in use (`hctx->sched_tags`).
    pub sched_tags: u32,
    /// Driver tags in use (`hctx->tags`).
    pub driver_tags: u32,
    /// `hctx->dispatch` (with `none`, where unplugged requests wait).
    pub dispatch: VecDeque<RequestId>,
}

/// Per request: its hctx, when it got its tag (`G`), which tags it holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct RqMq {
    pub hctx: u16,
    pub g_at: SimTime,
    pub sched_tag: bool,
    pub driver_tag: bool,
    pub in_plug: bool,
}

/// A submitter asleep in `blk_mq_get_tag`: the bio it could not get a
/// request for, and the rest of its submission.
#[derive(Clone, Copy, Debug)]
pub struct TagWaiter {
    pub task: TaskId,
    pub hctx: u16,
    pub bio: BioId,
    pub op_seq: u64,
    pub flags: ReqFlags,
    /// Next sector and sectors left after `bio`.
    pub sector: u64,
    pub left: u64,
    pub since: SimTime,
}

/// The blk-mq state of one queue.
#[derive(Clone, Debug)]
pub struct BlkMq {
    pub nr_hw_queues: u32,
    /// Tags per hctx: scheduler tags with a scheduler, driver tags without.
    pub nr_requests: u32,
    /// Driver tags per hctx (`set->queue_depth`).
    pub queue_depth: u32,
    pub has_sched: bool,
    cpu_map: Vec<u16>,
    pub hctx: Vec<Hctx>,
    /// By request id (ids are reused, so this follows the peak).
    pub rq: Vec<RqMq>,
    /// The current submission's plug (`plug->mq_list`).
    pub(super) plug: Vec<RequestId>,
    pub waiters: VecDeque<TagWaiter>,
    /// Submissions (task, op_seq) whose tag wait ended (all queued), for the engine.
    pub tag_woken: Vec<(TaskId, u64)>,
    next_hctx: usize,
    /// Requests freed by a request-request merge, and tag sleeps.
    pub rq_merges: u64,
    pub tag_waits: u64,
    pub max_sched_tags_seen: u32,
}

impl BlkMq {
    pub fn new(settings: BlkMqSettings, queue_depth: u32, has_sched: bool, ncpus: usize) -> BlkMq {
        let nr_hw = settings.nr_hw_queues.clamp(1, NR_HW_QUEUES_MAX);
        let nr_requests = settings.nr_requests.unwrap_or_else(|| default_nr_requests(queue_depth, has_sched));
        BlkMq {
            nr_hw_queues: nr_hw,
            nr_requests,
            queue_depth,
            has_sched,
            cpu_map: map_queues(nr_hw, ncpus),
            hctx: vec![Hctx::default(); nr_hw as usize],
            rq: Vec::new(),
            plug: Vec::with_capacity(BLK_MAX_REQUEST_COUNT),
            waiters: VecDeque::new(),
            tag_woken: Vec::new(),
            next_hctx: 0,
            rq_merges: 0,
            tag_waits: 0,
            max_sched_tags_seen: 0,
        }
    }

    /// `blk_mq_map_queue` for a CPU.
    pub fn hctx_of_cpu(&self, cpu: usize) -> u16 {
        self.cpu_map.get(cpu).copied().unwrap_or(0)
    }

    /// Whether a request of `flags` can get a tag on `hctx` now
    /// (`blk_mq_get_tag` without sleeping); `shallow` is the scheduler's
    /// `limit_depth` for it.
    pub fn tag_free(&self, hctx: u16, shallow: Option<u32>) -> bool {
        let h = &self.hctx[hctx as usize];
        if self.has_sched {
            h.sched_tags < self.nr_requests.min(shallow.unwrap_or(u32::MAX))
        } else {
            h.driver_tags < self.nr_requests.min(self.queue_depth)
        }
    }

    pub(super) fn info(&mut self, rq: RequestId) -> &mut RqMq {
        let i = rq.0 as usize;
        if self.rq.len() <= i {
            self.rq.resize(i + 1, RqMq::default());
        }
        &mut self.rq[i]
    }

    /// The next request of `none`'s hctx dispatch lists, round robin.
    pub(super) fn pop_dispatch(&mut self) -> Option<RequestId> {
        let n = self.hctx.len();
        for k in 0..n {
            let h = (self.next_hctx + k) % n;
            if let Some(rq) = self.hctx[h].dispatch.pop_front() {
                self.next_hctx = (h + 1) % n;
                return Some(rq);
            }
        }
        None
    }
}

/// A blk-mq queue's settings and open waits for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MqOpen {
    pub nr_hw_queues: u32,
    pub nr_requests: u32,
    /// (count, oldest ns).
    pub q2g: (u64, u64),
    pub i2d: (u64, u64),
    pub tag_waits: u64,
}

/// What became of a bio in `submit_bio_mq`.
pub(super) enum Outcome {
    Merged,
    Allocated,
    NoTag,
}
