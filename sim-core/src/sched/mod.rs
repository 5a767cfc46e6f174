//! CPU scheduling: the fair class of Linux 4.4 (CFS) and of 6.6–6.18 (EEVDF),
//! and the pieces they are built from.
//!
//! - `class`: the `SchedClass` hooks (`struct sched_class`) and the class chain core.c picks along.
//! - `stop`, `deadline`, `rt`, `policy`: the classes above fair (stop_task.c, deadline.c, rt.c) and `p->policy`.
//! - `model`: the kernel versions as data: one `KernelRules` table per version, asked by rule name.
//! - `features`, `tunables`: the `features.h` bits; `sched_latency_ns` & co. and their CPU-count scaling.
//! - `weights`: nice/weight tables and `calc_delta` fixed-point arithmetic.
//! - `entity`, `cfs_rq`: `struct sched_entity` and `struct cfs_rq` (and 4.4's `Timeline`).
//! - `fair`: the fair class, chosen once per run (the class-selection point): `Cfs` over `FairCore`.
//! - `fair_core`: the state and code both fair models share (entities, queues, PELT, groups, buddies).
//! - `cfs44`: the 4.4 CFS implementation (placement, slices, tick and wakeup preemption, pick).
//! - `eevdf`, `eevdf_class`: the 6.x EEVDF implementation (V, lag, deadlines, `pick_eevdf`, delayed dequeue).
//! - `eevdf_tree`: the EEVDF timeline, an augmented treap (`__pick_eevdf` in O(log n)).
//! - `bandwidth`, `cfs_bandwidth`: CFS bandwidth control (cgroup CPU quota): state; pools, throttling, timers.
//! - `group`: task groups (cgroups, autogroups) and `calc_cfs_shares`.
//! - `pelt`, `fair_pelt44`: 4.4's per-entity load tracking, which feeds the group shares and the 4.4 balancer.
//! - `pelt6x`, `fair_pelt6x`, `blocked6x`, `util_est`: 6.x's (runnable averages, propagation, util_est).
//! - `fair_pelt`: the load-tracking entry points both classes share, by the version's `pelt` rule.
//! - `wakeup`: why a wake-up did or did not preempt.
//! - `rt_pressure`: RT and deadline time as the fair balancer's capacity sees it (4.4 `rt_avg`, 6.x `avg_rt`/`avg_dl`).
//! - `balance`, `topology`, `cpu_load`, `migrate`, `cfs_tasks`: SMP placement and balancing.

pub mod balance;
pub mod bandwidth;
pub mod cfs44;
pub mod cfs_bandwidth;
pub mod cfs_rq;
pub mod cfs_tasks;
pub mod cpu_load;
pub mod deadline;
pub mod eevdf;
pub mod eevdf_class;
pub mod eevdf_tree;
pub mod entity;
pub mod blocked6x;
pub mod fair;
pub mod fair_core;
pub mod fair_pelt;
pub mod fair_pelt44;
pub mod fair_pelt6x;
pub mod features;
pub mod group;
pub mod migrate;
pub mod model;
pub mod model_rt;
mod model_smp;
pub mod pelt;
pub mod pelt6x;
pub mod policy;
pub mod rt;
pub mod rt_pressure;
pub mod spread;
pub mod stop;
pub mod topology;
pub mod tunables;
pub mod util_est;
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
mod model_tests;
#[cfg(test)]
mod pelt6x_tests;
#[cfg(test)]
mod rt_tests;
#[cfg(test)]
mod dl_smp_tests;
#[cfg(test)]
mod stop_tests;
#[cfg(test)]
mod tests;

mod class;
pub use class::{ClassChain, ClassKind, ClassState, SchedClass};
