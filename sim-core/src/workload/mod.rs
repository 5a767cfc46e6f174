//! What tasks do: duration distributions, step programs (with the plain data
//! an I/O step carries: `ReqFlags`, `IoClassRef`), arrival sources and the
//! elastic CPU limiter. The scheduling policy a task runs under is the
//! scheduler's (`sched::policy::Policy`), re-exported here for the old path.
//! This layer sits above `sched` and `metrics` and below `block` and
//! `userspace_io`, which read the flags and class an I/O step names.

pub mod dist;
pub mod limiter;
#[cfg(test)]
mod limiter_tests;
pub mod program;
pub mod ziggurat;

pub use crate::sched::policy::Policy;
pub use dist::Dist;
pub use program::{IoStep, Pattern, Program, Step, WakeTarget};
