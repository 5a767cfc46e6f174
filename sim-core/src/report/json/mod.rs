//! The `--json` contract (schema 1), built from a `RunReport`.
//!
//! It lives in the core, not in each front end, so the CLI and the web page
//! emit byte-identical JSON for the same run. Only integers and strings are
//! written (no floats), which keeps the bytes identical across targets.
//! Fields may be added; existing ones are never renamed.

mod bands;
mod io;
mod latency;
mod limiter;
mod measurement;
mod run;

use super::bands::Bands;
use super::run::RunReport;
use super::source::ReportSource;
use io::{Io, UserspaceIoQueue};
use limiter::Limiter;
use measurement::Measurement;
use run::{Cpu, Group, Request, Settings, Task, Victim};
use serde::Serialize;

/// Version of the JSON layout.
pub const SCHEMA: u32 = 1;

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Report<'a> {
    schema: u32,
    /// `simulated`, or `measured` (`sim-cli measure`: the workload ran on
    /// the real kernel described in `measurement.host`).
    source: &'static str,
    scenario: &'a str,
    variant: Option<&'a str>,
    seed: u64,
    sim_time_ns: u64,
    events: u64,
    stop_reason: &'static str,
    settings: Settings,
    tasks: Vec<Task<'a>>,
    cpus: Vec<Cpu>,
    groups: Vec<Group<'a>>,
    victim: Victim<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    io: Option<Io<'a>>,
    /// Sources whose requests cross at least one hop (`forward`); absent
    /// when none does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    requests: Vec<Request<'a>>,
    /// Elastic CPU limiters (`[limiters.NAME]`); absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    limiters: Option<Vec<Limiter<'a>>>,
    /// Userspace I/O queues (`[io_queues.NAME]`); absent without.
    #[serde(skip_serializing_if = "Option::is_none")]
    userspace_io: Option<Vec<UserspaceIoQueue<'a>>>,
    /// Only in a measured report: the host and how the delays were seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    measurement: Option<Measurement<'a>>,
    /// Only with `--phases`/`--seeds`: the scenario over tick phases and
    /// seeds; the rest of the report is point 0's (the scenario as given).
    #[serde(skip_serializing_if = "Option::is_none")]
    bands: Option<bands::BandsDto<'a>>,
}

fn dto(r: &RunReport) -> Report<'_> {
    Report {
        schema: SCHEMA,
        source: r.source.name(),
        scenario: &r.scenario,
        variant: r.variant.as_deref(),
        seed: r.seed,
        sim_time_ns: r.sim_time_ns,
        events: r.events,
        stop_reason: r.stop.name(),
        settings: run::settings_dto(r),
        tasks: r.tasks.iter().map(run::task_dto).collect(),
        cpus: r.cpus.iter().map(|c| run::cpu_dto(r, c)).collect(),
        groups: r.groups.iter().map(run::group_dto).collect(),
        victim: run::victim_dto(&r.victim),
        io: r.io.as_ref().map(io::io_dto),
        requests: r.requests.iter().map(run::request_dto).collect(),
        limiters: (!r.limiters.is_empty()).then(|| r.limiters.iter().map(limiter::limiter_dto).collect()),
        userspace_io: (!r.userspace_io.is_empty()).then(|| r.userspace_io.iter().map(io::userspace_io_dto).collect()),
        measurement: match &r.source {
            ReportSource::Measured(m) => Some(measurement::measurement_dto(m)),
            ReportSource::Simulated => None,
        },
        bands: None,
    }
}

/// One run as pretty-printed JSON.
pub fn report_json(r: &RunReport) -> String {
    serde_json::to_string_pretty(&dto(r)).expect("the report serializes")
}

/// One run as pretty-printed JSON with the band of its plan (`run --phases`):
/// `report_json`'s document with a `bands` object.
pub fn report_json_with_bands(r: &RunReport, b: &Bands) -> String {
    let doc = Report { bands: Some(bands::bands_dto(b)), ..dto(r) };
    serde_json::to_string_pretty(&doc).expect("the report serializes")
}

/// Several runs with their bands (`compare --phases`): `runs_json`'s
/// document, each run with the `bands` object of its plan.
pub fn runs_json_with_bands(runs: &[RunReport], bands: &[Bands]) -> String {
    #[derive(Serialize)]
    struct Runs<'a> {
        runs: Vec<Report<'a>>,
    }
    let runs = runs.iter().zip(bands).map(|(r, b)| Report { bands: Some(bands::bands_dto(b)), ..dto(r) }).collect();
    serde_json::to_string_pretty(&Runs { runs }).expect("the reports serialize")
}

/// A band alone as pretty-printed JSON (the explorer's `bands_json`).
pub fn bands_json(b: &Bands) -> String {
    serde_json::to_string_pretty(&bands::bands_dto(b)).expect("the band serializes")
}

/// Several runs (`compare`): `{"runs": [report, …]}`.
pub fn runs_json(runs: &[RunReport]) -> String {
    #[derive(Serialize)]
    struct Runs<'a> {
        runs: Vec<Report<'a>>,
    }
    serde_json::to_string_pretty(&Runs { runs: runs.iter().map(dto).collect() }).expect("the reports serialize")
}

/// The JSON Schema of the document `report_json` writes (feature `schema`).
#[cfg(feature = "schema")]
pub fn schema() -> schemars::Schema {
    schemars::schema_for!(Report<'static>)
}
