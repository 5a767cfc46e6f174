//! Measurements as a run goes: the recorder the engine feeds, latency
//! statistics and histograms, history rings, balance and occupancy
//! recorders. This layer sits above `sched` (it records the scheduler's
//! verdicts and migration causes) and below everything that feeds it (tasks,
//! workloads, the block layer, whose own I/O recorder builds on it, and the
//! engine); it imports nothing above itself. Reports built from it live in
//! `crate::report`.

pub mod balance;
pub mod history;
pub mod latency;
pub mod loglinear;
pub mod occupancy;
pub mod recorder;

pub use latency::{CdfPoint, LatencySummary};
