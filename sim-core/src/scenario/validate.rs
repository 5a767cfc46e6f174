//! Stage two of parsing: checks a deserialized `ScenarioFile` and turns it into
//! the typed `ScenarioSpec` the engine runs. Every error names a key path and
//! what is allowed there.
//!
//! This file is the order of the checks (which error a file with several
//! faults reports first); each part of the file is read by its own module:
//! `machine.rs`, `fair_settings.rs`, `tasks.rs` (with `steps.rs`),
//! `groups.rs`, `bandwidth.rs`, `hops.rs`, `devices.rs`, `sources.rs`,
//! `limiters.rs`, `io_queues.rs`; `values.rs` reads single values for all.

use super::error::KeyError;
use super::fair_settings::fair_settings;
use super::file::ScenarioFile;
use super::groups;
use super::machine::{check_clusters, check_tick_offset, hz_value, kernel_model, machine_spec};
use super::spec::{ScenarioSpec, limits};
use super::values::{duration_in, opt_duration};

// Where the engine reads them (`scenario::validate::…`).
pub use super::machine::WAKEUP_LATENCY_MAX_NS;
pub use super::steps::IO_SIZE_MAX;

/// Validates a deserialized file into a `ScenarioSpec`.
pub fn validate(f: &ScenarioFile) -> Result<ScenarioSpec, KeyError> {
    if f.schema != 1 {
        return Err(KeyError::new("schema", format!("unsupported schema {}; this version reads schema 1", f.schema)));
    }
    let duration_ns = duration_in(&f.duration, "duration", (1, limits::DURATION_MAX_NS), " (positive, at most a day)")?;
    let machine = machine_spec(f)?;
    let cpus = machine.shape.cpus();
    let hz = hz_value(f.machine.hz.as_ref())?;
    let kernel = kernel_model(f.kernel.version.as_ref())?;
    check_tick_offset(&machine, hz)?;
    check_clusters(&machine, kernel)?;
    let context_switch_ns = match &f.machine.context_switch {
        None => 0,
        Some(v) => duration_in(v, "machine.context_switch", (0, 1_000_000), "")?,
    };

    let (tunables, features, eevdf, eevdf_features) = fair_settings(f, kernel, cpus)?;

    let events_max = f.limits.events_max.unwrap_or(limits::EVENTS_DEFAULT);
    if events_max == 0 || events_max > limits::EVENTS_MAX {
        return Err(KeyError::new(
            "limits.events_max",
            format!("{events_max} is not allowed: 1 to {}", limits::EVENTS_MAX),
        ));
    }

    let mut tasks = super::tasks::tasks(f, &machine, kernel)?;
    let groups = groups::resolve(f, &mut tasks, cpus)?;
    let bandwidth_rules = super::bandwidth::rules(f, kernel)?;
    let bandwidth_slice_us = super::bandwidth::slice_us(f)?;
    super::bandwidth::check(f, &groups.groups, bandwidth_rules)?;
    super::hops::resolve(f, &mut tasks)?;
    let devices = super::devices::resolve(f, hz, kernel)?;
    let device_mq = super::devices::resolve_mq(f, &devices)?;
    super::devices::check_ionice(&tasks, &devices)?;
    super::tasks::check_io_regions(&tasks, &devices)?;

    let sources = super::sources::sources(f, &tasks)?;

    let victim = match &f.report.victim {
        None => 0,
        Some(v) => f
            .tasks
            .iter()
            .position(|t| &t.name == v)
            .ok_or_else(|| KeyError::new("report.victim", format!("no task named `{v}`")))?,
    };
    let history_window_ns = opt_duration(&f.report.history_window, "report.history_window", 0)?;
    let warmup_ns = opt_duration(&f.report.warmup, "report.warmup", 0)?;
    if warmup_ns >= duration_ns {
        return Err(KeyError::new(
            "report.warmup",
            format!(
                "{} is not allowed: the warm-up must be shorter than the duration ({}), from 0 to {}",
                crate::time::format_duration(warmup_ns),
                crate::time::format_duration(duration_ns),
                crate::time::format_duration(duration_ns - 1)
            ),
        ));
    }
    let rt = super::rt::rt_spec(f, kernel, hz)?;
    super::rt::admission(&tasks, &machine, &rt)?;
    let limiters = super::limiters::limiter_specs(f, &mut tasks)?;
    let io_queues = super::io_queues::resolve(f)?;
    // Last: every pass above reads `f.tasks` beside `tasks` index by index.
    super::noise::background_tasks(machine.noise.as_ref(), &mut tasks, cpus)?;

    Ok(ScenarioSpec {
        name: f.name.clone().unwrap_or_default(),
        description: f.description.clone().unwrap_or_default(),
        seed: f.seed,
        duration_ns,
        cpus,
        machine,
        hz,
        kernel,
        bandwidth_rules,
        bandwidth_slice_us,
        context_switch_ns,
        eevdf,
        eevdf_features,
        tunables,
        features,
        tasks,
        sources,
        groups,
        rt,
        devices,
        device_mq,
        events_max,
        victim,
        history_window_ns,
        warmup_ns,
        limiters,
        io_queues,
    })
}
