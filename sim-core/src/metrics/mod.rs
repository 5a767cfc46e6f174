//! Measurements: latency statistics, history rings, the recorder the engine
//! feeds, the plain-data `RunReport`, and its `--json` form.

pub mod balance;
pub mod history;
pub mod io;
pub mod io_report;
pub mod json;
pub mod latency;
pub mod limiter_report;
pub mod loglinear;
pub mod measured;
pub mod occupancy;
pub mod recorder;
pub mod report;
pub mod timeline;
pub mod userspace_io_report;

pub use latency::{CdfPoint, LatencySummary};
pub use report::RunReport;
