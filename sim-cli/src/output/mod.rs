//! Text rendering of reports, in the shapes engineers know from `perf sched
//! latency` and `perf sched timehist`: `run_text` (one run: header, tables,
//! I/O, limiters, the victim and its history) and `compare_text_named` (runs
//! side by side), each part in its own file; the other formats (`.hgrm`) too.
//! It reads finished reports only and imports no subcommand.

pub mod bands;
mod cells;
mod compare;
mod header;
pub mod hgrm;
pub mod io;
pub mod limiter;
pub mod measured;
mod tables;
#[cfg(test)]
mod tests;
pub mod userspace_io;
mod victim;

#[cfg(test)]
pub use compare::compare_text;
pub use compare::{compare_text_banded, compare_text_named};
use header::header;
use sim_core::{ReportSections, RunReport};
use tables::{cpus, groups, latency_table, migrations, periodic_jobs, request_hops, requests};
use victim::{history, victim};

/// The full text report of one run.
/// With `cpus` (`--cpus`), one line for each of those CPUs in the CPU table.
pub fn run_text(r: &RunReport, per_task: bool, cpus: Option<&[u16]>) -> String {
    let mut out = String::new();
    header(r, &mut out);
    latency_table(r, per_task, &mut out);
    migrations(r, per_task, &mut out);
    requests(r, &mut out);
    periodic_jobs(r, &mut out);
    request_hops(r, &mut out);
    self::cpus(r, cpus, &mut out);
    groups(r, &mut out);
    io::io_text(r, &mut out);
    limiter::limiter_text(r, &mut out);
    userspace_io::userspace_io_text(r, &mut out);
    victim(r, &mut out);
    history(r, &mut out);
    if let sim_core::ReportSource::Measured(m) = &r.source {
        measured::views(m, &mut out);
        measured::foreign(m, &mut out);
    }
    out
}

/// The report sections a command reads: every one for charts (`--plot`)
/// and `--hgrm` (CDFs, occupancy), else those the JSON and text print.
pub fn report_sections(charts: bool) -> ReportSections {
    if charts { ReportSections::ALL } else { ReportSections::PRINTED }
}

/// With `--json`, stdout is the JSON document alone: a partial report's
/// warning (the text report's `warning:` line) goes to stderr instead. The
/// exit status stays 0, as for any report: `stop_reason` says it is partial.
pub fn warn_partial(r: &RunReport, run: Option<&str>) {
    if let Some(w) = sim_core::partial_warning(r) {
        match run {
            Some(name) => eprintln!("warning: {name}: {w}"),
            None => eprintln!("warning: {w}"),
        }
    }
}
