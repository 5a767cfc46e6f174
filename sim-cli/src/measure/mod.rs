//! `sim-cli measure` and `sim-cli validate`: run a scenario's workload on the
//! real kernel this process runs on, and put the measurement beside the
//! simulator's prediction. Everything here is I/O; `sim-core` stays pure.

pub mod cgroup;
pub mod host;
pub mod perf;
pub mod perf_script;
pub mod signals;
pub mod sysctl;
