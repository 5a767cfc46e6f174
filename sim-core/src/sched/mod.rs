//! CPU scheduling: the fair class of Linux 4.4 (CFS) and of 6.6–6.18 (EEVDF),
//! and the pieces they are built from.
//!
//! - `weights`: nice/weight tables and `calc_delta` fixed-point arithmetic.
//! - `tunables`: `sched_latency_ns` & co., their CPU-count scaling, feature bits.
//! - `entity`, `cfs_rq`: `struct sched_entity` and `struct cfs_rq`.
//! - `fair`: the fair class state and the 4.4 CFS rules (placement, slices, tick and wakeup preemption, pick).
//! - `eevdf`: the 6.x EEVDF rules on the same state (V, lag, deadlines, `pick_eevdf`, delayed dequeue).
//! - `eevdf_tree`: the EEVDF timeline, an augmented treap (`__pick_eevdf` in O(log n)).
//! - `model`: which kernel a run models.
//! - `bandwidth`: CFS bandwidth control (cgroup CPU quota): runtime pools, throttling, the period and slack timers.
//! - `group`: task groups (cgroups, autogroups) and `calc_cfs_shares`.
//! - `pelt`: per-entity load tracking, which feeds the group shares.
//! - `placement`: which CPU a waking or new task goes to.

pub mod balance;
pub mod bandwidth;
pub mod cfs_rq;
pub mod cfs_tasks;
pub mod cpu_load;
pub mod eevdf;
pub mod eevdf_tree;
pub mod entity;
pub mod fair;
pub mod features;
pub mod group;
pub mod migrate;
pub mod model;
pub mod pelt;
pub mod topology;
pub mod tunables;
pub mod wakeup;
pub mod weights;

#[cfg(test)]
mod bandwidth_tests;
#[cfg(test)]
mod eevdf_tests;
#[cfg(test)]
mod group_tests;
#[cfg(test)]
mod load_tests;
#[cfg(test)]
mod tests;

mod class;
pub use class::{ClassChain, ClassKind, SchedClass};
