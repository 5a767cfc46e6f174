//! Measurements as a run goes: the recorder the engine feeds, latency
//! statistics and histograms, history rings, block I/O and occupancy
//! recorders. This is the layer below the engine (tasks, the block layer
//! and workloads feed it); reports built from it live in `crate::report`.

pub mod balance;
pub mod history;
pub mod latency;
pub mod loglinear;
pub mod occupancy;
pub mod recorder;

pub use latency::{CdfPoint, LatencySummary};

// Transitional: the reporting side moved to `crate::report`. These keep the
// old paths (`metrics::RunReport`, `metrics::report::…`, `metrics::json::…`,
// `metrics::measured::…`, `metrics::io_report::…`, …) compiling for the
// front ends, tests and benches until they use `crate::report` or the
// crate-root re-exports; then this block goes (it is the one import from
// the recorders' layer up to the reports).
pub use crate::report::RunReport;
pub use crate::report::io as io_report;
pub use crate::report::limiter as limiter_report;
pub use crate::report::run as report;
pub use crate::report::userspace_io as userspace_io_report;
pub use crate::report::{json, measured};
