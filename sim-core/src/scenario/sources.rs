//! `[[sources]]`: open-loop request sources, each aimed at a task with a
//! `serve` step: their names, rates or intervals, bursts and work, and the
//! route their requests take through request hops.

use super::error::KeyError;
use super::file::ScenarioFile;
use super::spec::{SourceSpec, TaskSpec, limits};
use super::values::{check_name, dist_value, opt_duration};
use crate::workload::{Dist, Step};

/// Each `[[sources]]` declaration, checked against the tasks it targets.
pub(super) fn sources(f: &ScenarioFile, tasks: &[TaskSpec]) -> Result<Vec<SourceSpec>, KeyError> {
    let mut sources = Vec::with_capacity(f.sources.len());
    let mut instances: u64 = 0;
    for (i, s) in f.sources.iter().enumerate() {
        check_name(&s.name, &format!("sources[{i}].name"))?;
        if let Some(j) = f.sources[..i].iter().position(|o| o.name == s.name) {
            return Err(KeyError::new(
                format!("sources[{i}].name"),
                format!("duplicate source name `{}` (sources[{j}] has it too); names must be unique", s.name),
            ));
        }
        // Unique from here on: keys name the source as `--set` addresses it.
        let key = format!("sources.{}", s.name);
        let target = f.tasks.iter().position(|t| t.name == s.target).ok_or_else(|| {
            let names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
            KeyError::new(format!("{key}.target"), format!("no task named `{}`; tasks: {}", s.target, names.join(", ")))
        })?;
        if !tasks[target].program.steps.contains(&Step::Serve) {
            return Err(KeyError::new(
                format!("{key}.target"),
                format!("task `{}` has no `serve` step, so nothing would handle the items", s.target),
            ));
        }
        instances += u64::from(tasks[target].count);
        if instances > limits::SOURCES_MAX {
            return Err(KeyError::new(key, format!("more than {} source instances in all", limits::SOURCES_MAX)));
        }
        let interval = match (s.rate_per_s, &s.interval) {
            (Some(_), Some(_)) => {
                return Err(KeyError::new(format!("{key}.rate_per_s"), "give rate_per_s or interval, not both"));
            }
            (Some(r), None) => {
                if !(r.is_finite() && r > 0.0 && r <= limits::RATE_MAX_PER_S) {
                    return Err(KeyError::new(
                        format!("{key}.rate_per_s"),
                        format!("must be a positive rate of at most {:e} per second", limits::RATE_MAX_PER_S),
                    ));
                }
                Dist::Exp { mean: libm::round(1e9 / r) as u64 }
            }
            (None, Some(v)) => dist_value(v, &format!("{key}.interval"))?,
            (None, None) => {
                return Err(KeyError::new(key, "needs rate_per_s (Poisson) or interval (a duration or distribution)"));
            }
        };
        if interval.mean_ns() < 1.0 {
            return Err(KeyError::new(
                format!("{key}.interval"),
                format!("a mean interval of {} ns is not allowed: at least 1ns", interval.mean_ns()),
            ));
        }
        let burst = s.burst.unwrap_or(1);
        if burst == 0 || burst > limits::BURST_MAX {
            return Err(KeyError::new(
                format!("{key}.burst"),
                format!("{burst} is not allowed: 1 to {}", limits::BURST_MAX),
            ));
        }
        sources.push(SourceSpec {
            name: s.name.clone(),
            target,
            interval,
            burst: burst as u32,
            work: dist_value(&s.work, &format!("{key}.work"))?,
            start_ns: opt_duration(&s.start, &format!("{key}.start"), 0)?,
            route: super::hops::route(tasks, target),
        });
    }
    Ok(sources)
}
