//! What a candidate does, over its band of runs: each target's statistic
//! (median and min–max over the tick phases and seeds), and what every
//! other declared task and the machine get: CPU share, completed jobs,
//! delay percentiles, total utilisation.

use super::target::Target;
use crate::report::RunReport;
use crate::scenario::Scenario;

/// One figure over the band: the lower median, min and max over the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Spread {
    pub median: u64,
    pub min: u64,
    pub max: u64,
}

impl Spread {
    pub fn of(mut v: Vec<u64>) -> Spread {
        v.sort_unstable();
        match (v.first(), v.last()) {
            (Some(&min), Some(&max)) => Spread { median: v[(v.len() - 1) / 2], min, max },
            _ => Spread::default(),
        }
    }
}

/// A declared task's lot under a candidate (medians over the band).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLot {
    pub name: String,
    /// CPU time / simulated time, in parts per million of one CPU.
    pub cpu_ppm: u64,
    /// Jobs or items completed (its response count), when it has any.
    pub completed: Option<u64>,
    /// Its p99 and max delay, each raised to a wait still open at the end.
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Its longest I/O stall (block I/O to running again), when it did I/O.
    pub io_max_ns: Option<u64>,
}

/// A candidate's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Per target, in `--target` order.
    pub targets: Vec<Spread>,
    /// Every target's band maximum is within its bound: met in every phase and seed.
    pub met: bool,
    /// The worst target's band maximum over its bound, in ppm (1 000 000 = at the bound).
    pub score: u64,
    /// Every declared task (host background threads left out), in declaration order.
    pub tasks: Vec<TaskLot>,
    /// Busy CPU time of every task / (simulated time × CPUs), ppm.
    pub utilisation_ppm: u64,
}

fn ppm(num: u64, den: u64) -> u64 {
    if den == 0 { 0 } else { (u128::from(num) * 1_000_000 / u128::from(den)) as u64 }
}

fn median(v: Vec<u64>) -> u64 {
    Spread::of(v).median
}

/// The evaluation of one candidate's band runs.
pub fn evaluate(targets: &[Target], s: &Scenario, reports: &[RunReport]) -> Evaluation {
    let spreads: Vec<Spread> = targets.iter().map(|t| Spread::of(reports.iter().map(|r| t.value(r)).collect())).collect();
    let score = targets.iter().zip(&spreads).map(|(t, sp)| ppm(sp.max, t.limit_ns)).max().unwrap_or(0);
    let met = targets.iter().zip(&spreads).all(|(t, sp)| sp.max <= t.limit_ns);
    let names: Vec<&str> = s.spec.tasks.iter().filter(|t| !t.machine_background).map(|t| t.name.as_str()).collect();
    let tasks = names
        .iter()
        .map(|name| {
            let per = |f: &dyn Fn(&RunReport) -> u64| median(reports.iter().map(f).collect());
            let runtime = |r: &RunReport| r.tasks.iter().filter(|t| t.name == *name).map(|t| t.runtime_ns).sum::<u64>();
            let delay = |r: &RunReport| r.task_delays.iter().find(|d| d.name == *name).map(|d| d.delay);
            let has_jobs = reports.iter().any(|r| r.tasks.iter().any(|t| t.name == *name && t.response.is_some()));
            TaskLot {
                name: name.to_string(),
                cpu_ppm: per(&|r| ppm(runtime(r), r.sim_time_ns)),
                completed: has_jobs.then(|| {
                    per(&|r| {
                        r.tasks.iter().filter(|t| t.name == *name).filter_map(|t| t.response.map(|x| x.count)).sum()
                    })
                }),
                p99_ns: per(&|r| delay(r).map_or(0, |d| d.p99_ns.max(d.open_max_ns))),
                max_ns: per(&|r| delay(r).map_or(0, |d| d.worst_ns())),
                io_max_ns: reports.iter().any(|r| r.tasks.iter().any(|t| t.name == *name && t.io_stall.is_some())).then(
                    || {
                        per(&|r| {
                            r.tasks
                                .iter()
                                .filter(|t| t.name == *name)
                                .filter_map(|t| t.io_stall.map(|d| d.worst_ns()))
                                .max()
                                .unwrap_or(0)
                        })
                    },
                ),
            }
        })
        .collect();
    let utilisation_ppm = median(
        reports
            .iter()
            .map(|r| ppm(r.tasks.iter().map(|t| t.runtime_ns).sum(), r.sim_time_ns.saturating_mul(u64::from(r.settings.cpus))))
            .collect(),
    );
    Evaluation { targets: spreads, met, score, tasks, utilisation_ppm }
}

/// What a fix does to one other task, against the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideEffect {
    pub task: String,
    pub before: TaskLot,
    pub after: TaskLot,
    /// Its p99 or max delay, or its longest I/O stall, grew by more than 25 % (and 100 µs): the fix
    /// moved delay onto it.
    pub delay_moved: bool,
    /// Its CPU share fell by more than 10 % of what it had.
    pub share_lost: bool,
}

/// Delay growth below this is noise, whatever the ratio.
const DELAY_FLOOR_NS: u64 = 100_000;

fn grew(before: u64, after: u64) -> bool {
    after > before.saturating_add(DELAY_FLOOR_NS) && u128::from(after) * 4 > u128::from(before) * 5
}

/// Per task other than `victim`: before and after, flagged.
pub fn side_effects(before: &Evaluation, after: &Evaluation, victim: &str) -> Vec<SideEffect> {
    after
        .tasks
        .iter()
        .filter(|t| t.name != victim)
        .filter_map(|a| {
            let b = before.tasks.iter().find(|b| b.name == a.name)?;
            Some(SideEffect {
                task: a.name.clone(),
                delay_moved: grew(b.p99_ns, a.p99_ns)
                    || grew(b.max_ns, a.max_ns)
                    || grew(b.io_max_ns.unwrap_or(0), a.io_max_ns.unwrap_or(0)),
                share_lost: a.cpu_ppm * 10 < b.cpu_ppm * 9,
                before: b.clone(),
                after: a.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_take_the_lower_median() {
        assert_eq!(Spread::of(vec![5, 1, 9, 3]), Spread { median: 3, min: 1, max: 9 });
        assert_eq!(Spread::of(Vec::new()), Spread::default());
    }

    #[test]
    fn growth_needs_both_the_ratio_and_the_floor() {
        assert!(!grew(1_000, 90_000), "under the 100 µs floor");
        assert!(grew(1_000, 102_000));
        assert!(!grew(1_000_000, 1_200_000), "20 % is not 25 %");
        assert!(grew(1_000_000, 1_260_000));
    }
}
