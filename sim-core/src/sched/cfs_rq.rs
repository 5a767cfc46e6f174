//! `struct cfs_rq`: one CFS run queue, with its vruntime-ordered timeline.
//!
//! The kernel keeps queued entities in a red-black tree keyed by vruntime; the
//! running entity (`curr`) is kept out of the tree (4.4 `set_next_entity`).
//! Here the tree is a `BTreeSet` keyed by `(vruntime, insertion seq)`, which
//! orders equal vruntimes the way `__enqueue_entity` does (ties go right).

use super::weights::LoadWeight;
use crate::ids::{CpuId, EntityId};
use std::collections::BTreeSet;
use std::ops::Bound;

/// `min_vruntime` of a new run queue: `(u64)(-(1LL << 20))` (4.4 fair.c:init_cfs_rq),
/// so that wrap-around bugs show early. Kept so printed vruntimes match the kernel's.
pub const INITIAL_MIN_VRUNTIME: i64 = -(1 << 20);

type Key = (i64, u64, EntityId);

#[derive(Clone, Debug)]
pub struct CfsRq {
    pub cpu: CpuId,
    /// Sum of the weights of the queued entities, `curr` included.
    pub load: LoadWeight,
    /// Entities queued here, `curr` included if it is on the run queue.
    pub nr_running: u32,
    /// Tasks queued here and below (`h_nr_running`).
    pub h_nr_running: u32,
    pub min_vruntime: i64,
    pub curr: Option<EntityId>,
    pub next: Option<EntityId>,
    pub last: Option<EntityId>,
    pub skip: Option<EntityId>,
    timeline: BTreeSet<Key>,
}

impl CfsRq {
    pub fn new(cpu: CpuId) -> CfsRq {
        CfsRq {
            cpu,
            load: LoadWeight::ZERO,
            nr_running: 0,
            h_nr_running: 0,
            min_vruntime: INITIAL_MIN_VRUNTIME,
            curr: None,
            next: None,
            last: None,
            skip: None,
            timeline: BTreeSet::new(),
        }
    }

    /// `__pick_first_entity`: the leftmost queued entity.
    pub fn first(&self) -> Option<(i64, EntityId)> {
        self.timeline.first().map(|&(v, _, e)| (v, e))
    }

    /// `__pick_next_entity`: the entity right of `(vruntime, seq, se)`.
    pub(crate) fn after(&self, key: Key) -> Option<(i64, EntityId)> {
        self.timeline.range((Bound::Excluded(key), Bound::Unbounded)).next().map(|&(v, _, e)| (v, e))
    }

    pub(crate) fn insert(&mut self, key: Key) {
        let fresh = self.timeline.insert(key);
        debug_assert!(fresh, "entity queued twice");
    }

    pub(crate) fn remove(&mut self, key: Key) {
        let found = self.timeline.remove(&key);
        debug_assert!(found, "dequeue of an entity not in the timeline");
    }

    /// Entities in the timeline (queued and not running), in pick order.
    pub fn queued(&self) -> impl Iterator<Item = (i64, EntityId)> + '_ {
        self.timeline.iter().map(|&(v, _, e)| (v, e))
    }

    pub fn timeline_len(&self) -> usize {
        self.timeline.len()
    }
}
