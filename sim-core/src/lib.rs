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

// Some items serve only this workspace's tests, benches and examples (the
// lone fair class, the trace renderers, topology descriptions); with the
// modules crate-private they look unused unless `internals` opens them.
#![cfg_attr(not(feature = "internals"), allow(dead_code))]

/// Declares the modules: crate-private, so front ends and library users
/// see only the re-exports below; the `internals` feature (this workspace's
/// tests, benches and examples only) opens them.
macro_rules! modules {
    ($($(#[$attr:meta])* $name:ident),* $(,)?) => {$(
        $(#[$attr])* #[cfg(feature = "internals")] pub mod $name;
        $(#[$attr])* #[cfg(not(feature = "internals"))] pub(crate) mod $name;
    )*};
}

modules! {
    advise,
    block,
    cpuset,
    engine,
    event,
    export,
    ids,
    import,
    metrics,
    partial,
    plot,
    report,
    requests,
    rng,
    scenario,
    #[cfg(feature = "schema")] schema,
    sched,
    sweep,
    task,
    tick,
    time,
    userspace_io,
    view,
    workload,
}

// The public API: what the CLI, the web crate and library users need, by
// concept. Front ends import these names from the root, never a module path.

pub use import::calibrate::{CalibrationSamples, CalibrationTrace, MachineNoiseFit, fit_machine_noise};
pub use import::sched_text::{
    CpuSched, ParseError as SchedTextError, SchedEvent, SchedLine, SchedRecord as SchedTextRecord, SchedSummary,
    ThreadSched, TraceHeader, parse_line_kind as parse_sched_line, parse_script as parse_sched_text,
    summarize as summarize_sched_text,
};
pub use import::{DelayFigures, Import, ImportError, ImportOptions, ImportedTask, Importer};
/// Scheduler traces of a real machine (`perf sched script` text): the parser and per-thread summary,
/// and `sim-cli import`'s scenario builder and its report against a replay.
pub use report::import::{ImportReport, ImportRow, import_report};

/// The settings advisor (`sim-cli advise`): targets, the knob catalogue,
/// the stepwise search and its answer.
pub use advise::effects::{Evaluation, SideEffect, Spread, TaskLot};
pub use advise::json::advice_json;
pub use advise::knobs::{Family as KnobFamily, Needs as KnobNeeds};
pub use advise::search::{AdviseOptions, Advisor, BUDGET_MAX as ADVISE_BUDGET_MAX, Candidate, Judged, Stopped};
pub use advise::target::{Stat as TargetStat, Subject as TargetSubject, Target};
pub use advise::{Advice, Change, Fix, SensitivityRow, Why, WorstWait, advise, advise_with};
/// Block devices and elevators: specs, presets, the flash curve and its fit to fio samples.
pub use block::bfq::GROUP_WEIGHT_DEFAULT as BFQ_GROUP_WEIGHT_DEFAULT;
pub use block::device::curve::curve_table;
pub use block::device::fit::{
    Fit as DeviceFit, SAMPLE_BYTES_MAX as FIT_SAMPLE_BYTES_MAX, SAMPLE_DEPTH_MAX as FIT_SAMPLE_DEPTH_MAX,
    SAMPLE_IOPS_MIN as FIT_SAMPLE_IOPS_MIN, Sample as FitSample, fit as fit_device,
};
pub use block::device::presets::all as device_presets;
pub use block::{DeviceKind, DeviceSpec, ElevatorSpec, Op};
/// The machine's shape and CPU lists.
pub use cpuset::CpuSet;
/// Running a scenario: the simulation, its event budget and why it stopped.
pub use engine::{EventBudget, Simulation, StopReason};
/// Scheduling traces: the window recorded, and the Chrome/Perfetto and timehist renderings.
pub use export::Trace;
pub use export::chrome::{write_json as write_chrome_json, write_systrace as write_ftrace_text};
pub use export::timehist::render as timehist_text;
/// Ids and the seeded random streams (a measured workload draws as the simulator does).
pub use ids::TaskId;
pub use metrics::LatencySummary;
pub use metrics::latency::{delay_bucket, still_waiting};
pub use metrics::recorder::TraceWindow;
pub use metrics::recorder::WaitKind;
pub use partial::partial_warning;
/// Charts, generic over a plotters backend: the data of each chart and `draw`'s functions.
pub use plot::data::{Span, caption};
#[cfg(feature = "plot")]
pub use plot::draw;
#[cfg(feature = "plot")]
pub use plot::sweep::{SweepChart, sweep_chart};
pub use plot::{
    CHART_TEST_SCENARIO, DelayChart, IoChart, LimiterChart, OccupancyChart, Timeline, io_charts, limiter_charts,
};
pub use report::RunReport;
/// Bands: a scenario over tick phases and seeds, each delay statistic as a median and a min–max band.
pub use report::bands::{
    BAND_CURVE_PPM, BAND_PHASES_MAX, BAND_SEEDS_MAX, BAND_TOLERANCE_PCT, BandPlan, BandPoint, Bands, CurveBand,
    StatBand, TaskBand, bands, run_bands,
};
/// The I/O, limiter and userspace I/O parts of a report.
pub use report::io::{DeviceIoReport, IoReport};
/// Reports: a finished run as plain data, its sections, and the JSON front ends print.
pub use report::json::{bands_json, report_json, report_json_with_bands, runs_json, runs_json_with_bands};
pub use report::limiter::{LimiterReport, percent as ppm_percent, percent_fine as ppm_percent_fine};
/// Measured runs: what `measure` hands the core to build a report in `run`'s shape.
pub use report::measured::{MeasuredCpu, MeasuredTask, Measurement, summarize as summarize_delays};
pub use report::run::{
    AboveFair, CpuAboveFair, CpuReport, EevdfView, GroupCpuStat, GroupReport, HistoryRow, NoiseSplit, ReportSections,
    TaskReport, WorstDelay,
};
pub use report::run_recording;
/// Runs a scenario to the end and reports: the whole pipeline in one call.
pub use report::run_to_report as run;
pub use report::source::{
    DelayViews, ForeignCpu, ForeignOnCpu, HostFacts, HostFairServer, HostRtFacts, MeasuredInfo, ReportSource,
};
pub use report::userspace_io::{IoClassReport, IoQueueReport};
pub use rng::SimRng;
pub use scenario::devices::IOPS_MAX as DEVICE_IOPS_MAX;
/// Error text: a user's input echoed bounded, and control characters shown escaped.
pub use scenario::error::{echo as echo_input, escape_controls};
/// Scenarios: parsing with overrides, the validated spec front ends read, its limits.
pub use scenario::limits::CPUS_MAX;
/// Scenario documents: a variant's keys flattened and applied to a TOML table, as `with_variant` does.
pub use scenario::overrides::{apply_all as apply_overrides, flatten as flatten_overrides};
/// The classes above fair: the `[rt]` and `[fair_server]` settings, a deadline task's parameters, the
/// fair server's default (6.12+ 50 ms every 1 s) and the FIFO priority a stop task shows userspace.
pub use scenario::rt::FAIR_SERVER_DEFAULT;
pub use scenario::{
    BackgroundSpec, FILE_SIZE_MAX as SCENARIO_FILE_SIZE_MAX, GroupSpec, Groups, MachineSpec, NoiseSpec, Origin,
    Scenario, ScenarioError, ScenarioSpec, SourceSpec, TaskSpec,
};
pub use scenario::{DlParams, RtSpec};
/// Group CPU bandwidth, nice weights and migration causes.
pub use sched::bandwidth::BandwidthSpec;
pub use sched::migrate::MigrateCause;
/// Kernel models: the versions modelled, their tunables and features, and the wake-up verdicts reports explain.
pub use sched::model::{KernelModel, WakeupVerdict};
pub use sched::policy::STOP_RT_PRIORITY;
pub use sched::topology::{MachineShape, THREADS_PER_CORE_MAX, cpu_list, cpus_text};
pub use sched::tunables::{
    CfsTunables, EevdfFeatures, EevdfTunables, HZ_CHOICES, SYSCTL_GRANULARITY_NS, SYSCTL_WAKEUP_GRANULARITY_NS,
    SchedFeatures, TunableScaling, TunableValue, changed_features,
};
pub use sched::weights::PRIO_TO_WEIGHT;
/// JSON Schemas of the scenario format and the report.
#[cfg(feature = "schema")]
pub use schema::{report_schema, scenario_schema};
/// Sweeps: a grid of settings, each point a run, ranked by a metric.
pub use sweep::{
    Axis, Grid, Metric, PointResult, run_point, sort_by_metric, validate as validate_sweep,
    with_target as sweep_target, within_budget,
};
/// Simulated time and how reports print it.
pub use time::{Secs, SimTime, column_unit, format_duration, format_in, format_ms, format_secs};
/// The userspace I/O scheduler's in-flight policy.
pub use userspace_io::io_queue::InflightPolicy;
/// Workloads: task programs, their steps, policies and duration distributions.
pub use workload::dist::{SAMPLE_MAX_NS as DIST_SAMPLE_MAX_NS, parse_duration};
pub use workload::{Dist, Policy, Program, Step};
