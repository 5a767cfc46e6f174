//! `[limiters.NAME]` and each task's `limiter = "NAME"` (issue 20): the
//! elastic CPU limiters' controller and bucket settings, checked against
//! each other, and the tasks they pace.

use super::error::{KeyError, did_you_mean};
use super::file::{LimiterFile, ScenarioFile};
use super::spec::TaskSpec;
use super::values::{check_name, duration_in, opt_duration, task_key};
use crate::time::format_duration;
use crate::workload::Step;
use crate::workload::limiter::{
    ADJUST_EVERY_MIN_NS, GRANT_MAX_NS, GRANT_MIN_NS, LimiterId, LimiterSpec, PPM, WINDOW_SLOTS_MAX, defaults,
};

/// Most `[limiters.NAME]` in one scenario.
const LIMITERS_MAX: usize = 64;

/// `[limiters.NAME]` and each task's `limiter = "NAME"` (issue 20): the
/// controller's and the bucket's settings, checked against each other.
pub(super) fn limiter_specs(f: &ScenarioFile, tasks: &mut [TaskSpec]) -> Result<Vec<LimiterSpec>, KeyError> {
    if f.limiters.len() > LIMITERS_MAX {
        return Err(KeyError::new("limiters", format!("at most {LIMITERS_MAX} limiters")));
    }
    let task_names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
    let mut out = Vec::with_capacity(f.limiters.len());
    for (name, l) in &f.limiters {
        out.push(limiter_spec(name, l, f, &task_names)?);
    }
    attach(f, tasks)?;
    Ok(out)
}

/// A share of one CPU in ppm (`floor`, `ceiling`, `initial`).
fn share(v: Option<f64>, key: String, default: u32) -> Result<u32, KeyError> {
    let Some(x) = v else { return Ok(default) };
    // Checked as written: a share that rounds to 0 ppm is below the
    // resolution, not 0.
    let ppm = if x.is_finite() { libm::round(x * PPM as f64) } else { 0.0 };
    if !(x.is_finite() && (0.0..=1.0).contains(&x)) || (x > 0.0 && ppm < 1.0) {
        return Err(KeyError::new(
            key,
            format!("{x} is not allowed: a share of one CPU, 0 to 1, in steps of 0.000001 (one millionth)"),
        ));
    }
    Ok(ppm as u32)
}

/// A step of the limit in ppm (`step_up`, `step_down`).
fn step(v: Option<f64>, key: String, default: u32) -> Result<u32, KeyError> {
    let Some(x) = v else { return Ok(default) };
    let ppm = if x.is_finite() { libm::round(x * PPM as f64) } else { 0.0 };
    if !(x.is_finite() && x > 0.0 && x <= 1.0) || ppm < 1.0 {
        return Err(KeyError::new(
            key,
            format!("{x} is not allowed: a step is a share of one CPU above 0 and at most 1 (at least 0.000001)"),
        ));
    }
    Ok(ppm as u32)
}

/// One `[limiters.NAME]`.
fn limiter_spec(name: &str, l: &LimiterFile, f: &ScenarioFile, task_names: &[&str]) -> Result<LimiterSpec, KeyError> {
    let key = format!("limiters.{name}");
    check_name(name, &key)?;
    let watch = watch(l, f, &key, task_names)?;
    let percentile = l.percentile.unwrap_or(defaults::PERCENTILE);
    if !(percentile.is_finite() && percentile > 0.0 && percentile < 100.0) {
        return Err(KeyError::new(
            format!("{key}.percentile"),
            format!("{percentile} is not allowed: above 0 and below 100 (99 for the p99)"),
        ));
    }
    let (target_ns, adjust_every_ns, window_ns) = periods(l, &key)?;
    let (step_up_ppm, step_down_ppm, floor_ppm, ceiling_ppm, initial_ppm) = levels(l, &key)?;
    let grant_ns = match &l.grant {
        None => defaults::GRANT_NS,
        Some(v) => duration_in(
            v,
            &format!("{key}.grant"),
            (GRANT_MIN_NS, GRANT_MAX_NS),
            " of CPU time per grant (each grant is an event)",
        )?,
    };
    Ok(LimiterSpec {
        name: name.to_string(),
        watch,
        percentile,
        target_ns,
        window_ns,
        adjust_every_ns,
        step_up_ppm,
        step_down_ppm,
        floor_ppm,
        ceiling_ppm,
        initial_ppm,
        grant_ns,
    })
}

/// `watch`: the tasks whose delays the limiter reads, each once.
fn watch(l: &LimiterFile, f: &ScenarioFile, key: &str, task_names: &[&str]) -> Result<Vec<usize>, KeyError> {
    if l.watch.is_empty() {
        return Err(KeyError::new(format!("{key}.watch"), "name at least one task whose delays the limiter reads"));
    }
    let mut watch = Vec::with_capacity(l.watch.len());
    for (j, w) in l.watch.iter().enumerate() {
        let i = f.tasks.iter().position(|t| &t.name == w).ok_or_else(|| {
            KeyError::new(
                format!("{key}.watch[{j}]"),
                format!("no task named `{w}`{}; tasks: {}", did_you_mean(w, task_names), task_names.join(", ")),
            )
        })?;
        if !watch.contains(&i) {
            watch.push(i);
        }
    }
    Ok(watch)
}

/// `target`, `adjust_every` and `window` (ns), the window covering whole periods.
fn periods(l: &LimiterFile, key: &str) -> Result<(u64, u64, u64), KeyError> {
    let target_ns = opt_duration(&l.target, &format!("{key}.target"), defaults::TARGET_NS)?;
    let adjust_every_ns = opt_duration(&l.adjust_every, &format!("{key}.adjust_every"), defaults::ADJUST_EVERY_NS)?;
    if adjust_every_ns < ADJUST_EVERY_MIN_NS {
        return Err(KeyError::new(
            format!("{key}.adjust_every"),
            format!(
                "{} is too short: at least {}",
                format_duration(adjust_every_ns),
                format_duration(ADJUST_EVERY_MIN_NS)
            ),
        ));
    }
    let window_ns = opt_duration(&l.window, &format!("{key}.window"), defaults::WINDOW_NS.max(adjust_every_ns))?;
    if window_ns < adjust_every_ns {
        return Err(KeyError::new(
            format!("{key}.window"),
            format!(
                "{} is shorter than adjust_every ({}): the window must cover at least one period",
                format_duration(window_ns),
                format_duration(adjust_every_ns)
            ),
        ));
    }
    if window_ns.div_ceil(adjust_every_ns) > WINDOW_SLOTS_MAX {
        return Err(KeyError::new(
            format!("{key}.window"),
            format!(
                "{} spans more than {WINDOW_SLOTS_MAX} periods of adjust_every ({}); lengthen adjust_every or \
                 shorten the window",
                format_duration(window_ns),
                format_duration(adjust_every_ns)
            ),
        ));
    }
    Ok((target_ns, adjust_every_ns, window_ns))
}

/// `step_up`, `step_down`, `floor`, `ceiling` and `initial` (ppm), the
/// floor above 0 and at most the ceiling, the initial limit between them.
fn levels(l: &LimiterFile, key: &str) -> Result<(u32, u32, u32, u32, u32), KeyError> {
    let step_up_ppm = step(l.step_up, format!("{key}.step_up"), defaults::STEP_UP_PPM)?;
    let step_down_ppm = step(l.step_down, format!("{key}.step_down"), defaults::STEP_DOWN_PPM)?;
    let floor_ppm = share(l.floor, format!("{key}.floor"), defaults::FLOOR_PPM)?;
    let ceiling_ppm = share(l.ceiling, format!("{key}.ceiling"), defaults::CEILING_PPM)?;
    if floor_ppm == 0 {
        // A zero limit refills nothing: the limited tasks would wait for
        // good once a window without samples keeps the limit there.
        return Err(KeyError::new(
            format!("{key}.floor"),
            format!(
                "{} is not allowed: a floor of 0 would stop the limited tasks for good; above 0 (at least \
                 0.000001) up to 1",
                l.floor.unwrap_or(0.0)
            ),
        ));
    }
    if floor_ppm > ceiling_ppm {
        return Err(KeyError::new(
            format!("{key}.floor"),
            format!(
                "floor {} is above ceiling {}: floor must be at most ceiling (both 0 to 1)",
                floor_ppm as f64 / PPM as f64,
                ceiling_ppm as f64 / PPM as f64
            ),
        ));
    }
    let initial_ppm = share(l.initial, format!("{key}.initial"), floor_ppm)?;
    if !(floor_ppm..=ceiling_ppm).contains(&initial_ppm) {
        return Err(KeyError::new(
            format!("{key}.initial"),
            format!(
                "{} is not allowed: between floor {} and ceiling {}",
                initial_ppm as f64 / PPM as f64,
                floor_ppm as f64 / PPM as f64,
                ceiling_ppm as f64 / PPM as f64
            ),
        ));
    }
    Ok((step_up_ppm, step_down_ppm, floor_ppm, ceiling_ppm, initial_ppm))
}

/// Each task's `limiter = "NAME"`: the limiter must exist, and a limited
/// task's CPU work must be `run` steps.
fn attach(f: &ScenarioFile, tasks: &mut [TaskSpec]) -> Result<(), KeyError> {
    let limiter_names: Vec<&str> = f.limiters.keys().map(String::as_str).collect();
    for (i, t) in f.tasks.iter().enumerate() {
        let Some(name) = t.limiter.as_deref().filter(|n| !n.is_empty()) else { continue };
        let id = limiter_names.iter().position(|n| *n == name).ok_or_else(|| {
            let known = if limiter_names.is_empty() {
                "the scenario declares none ([limiters.NAME])".to_string()
            } else {
                format!("limiters: {}", limiter_names.join(", "))
            };
            KeyError::new(
                format!("{}.limiter", task_key(&t.name)),
                format!("no limiter named `{name}`{}; {known} (or \"\" for none)", did_you_mean(name, &limiter_names)),
            )
        })?;
        if tasks[i].program.steps.contains(&Step::Serve) {
            // Grants pace `run` steps; a `serve` burst would escape them.
            return Err(KeyError::new(
                format!("{}.limiter", task_key(&t.name)),
                "a limited task's CPU work must be `run` steps; `serve` work is not paced by grants",
            ));
        }
        tasks[i].limiter = Some(LimiterId(id as u16));
    }
    Ok(())
}
