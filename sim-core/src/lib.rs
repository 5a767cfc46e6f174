//! schedlab's deterministic core: a discrete-event simulator of the Linux
//! fair scheduler (CFS of 4.4, EEVDF of 6.6, 6.12 and 6.18) on a multi-CPU
//! machine, driven by scenario files.
//!
//! One API serves every front end:
//!
//! ```
//! use sim_core::{EventBudget, Scenario, Simulation, StopReason};
//!
//! let toml = r#"
//!     schema = 1
//!     seed = 1
//!     duration = "100ms"
//!     [kernel]
//!     version = "6.18"
//!     [machine]
//!     cpus = 1
//!     hz = 1000
//!     [[tasks]]
//!     name = "hog"
//!     count = 2
//!     program = [{ run = "1s" }]
//! "#;
//! let scenario = Scenario::from_toml("doc.toml", toml)?
//!     .with_overrides(&[("cfs.base_slice_ns", "3ms")])?;
//! let mut sim = Simulation::new(&scenario);
//! while !sim.advance(EventBudget(10_000)).is_final() {}
//! let report = sim.report();
//! assert_eq!(report.stop, StopReason::TimeLimit);
//! // Two equal hogs share the CPU half and half.
//! let runtime: Vec<u64> = report.tasks.iter().map(|t| t.runtime_ns).collect();
//! assert_eq!(runtime[0] + runtime[1], 100_000_000);
//! assert!(runtime[0].abs_diff(runtime[1]) <= 2_000_000);
//! # Ok::<(), sim_core::ScenarioError>(())
//! ```
//!
//! Invariants (see ARCHITECTURE.md): no I/O, no wall clock, no unseeded
//! randomness; simulated time and vruntime are integer nanoseconds; the same
//! scenario and seed give the same report on every target.

pub mod block;
pub mod cpuset;
pub mod engine;
pub mod event;
pub mod export;
pub mod ids;
pub mod metrics;
pub mod partial;
pub mod plot;
pub mod report;
pub mod requests;
pub mod rng;
pub mod scenario;
#[cfg(feature = "schema")]
pub mod schema;
pub mod sched;
pub mod sweep;
pub mod task;
pub mod tick;
pub mod time;
pub mod userspace_io;
pub mod view;
pub mod workload;

pub use engine::{EventBudget, Simulation, StopReason};
pub use report::RunReport;
pub use report::json::{report_json, runs_json};
pub use partial::partial_warning;
pub use scenario::{Scenario, ScenarioError};

/// Parses, runs to the end and reports: the whole pipeline in one call.
pub fn run(scenario: &Scenario) -> RunReport {
    let mut sim = Simulation::new(scenario);
    sim.run_to_end();
    sim.report()
}
