//! Reports: what a run showed, as plain data (`RunReport`) and as the
//! `--json` contract, built from a read-only `RunView` of the run
//! (`Simulation::view`) or from a measurement on a real kernel. This layer
//! sits above the engine; the recorders it reads (`crate::metrics`) sit
//! below it and never see a report. No formatting beyond JSON here: text
//! is the front ends' job.
//!
//! - `run`: `RunReport` and its parts (plain data), `ReportSections`;
//! - `build`: a simulated run's report from its view (`Simulation::report`);
//!   `victim`: the victim's part of it (histogram, worst delay, history);
//! - `io`, `limiter`, `userspace_io`: the block devices', limiters' and
//!   userspace I/O queues' parts;
//! - `source`, `measured`: a report's source, and a measured run's report;
//! - `bands`: one scenario over tick phases and seeds, each statistic as a
//!   median and a min–max band;
//! - `json`: the `--json` document; `timeline`: a traced run as text.

pub mod bands;
mod build;
pub mod import;
pub mod io;
pub mod json;
pub mod limiter;
pub mod measured;
pub mod run;
pub mod source;
pub mod timeline;
pub mod userspace_io;
mod victim;

pub use build::{run_recording, run_to_report};
pub use run::{ReportSections, RunReport};
