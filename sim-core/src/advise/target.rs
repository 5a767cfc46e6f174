//! `--target 'TASK STAT <= DURATION'`: one goal of `sim-cli advise`, read as
//! `sweep --budget` reads a duration, and judged on a band of runs.

use crate::report::RunReport;
use crate::scenario::Scenario;
use crate::workload::dist::parse_duration;

/// A statistic of a delay distribution a target bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    P50,
    P90,
    P99,
    P999,
    Max,
}

impl Stat {
    pub const ALL: [Stat; 5] = [Stat::P50, Stat::P90, Stat::P99, Stat::P999, Stat::Max];

    pub fn name(self) -> &'static str {
        match self {
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
            Stat::P999 => "p999",
            Stat::Max => "max",
        }
    }

    pub fn parse(text: &str) -> Option<Stat> {
        Stat::ALL.into_iter().find(|s| s.name() == text)
    }

    /// The statistic of the waits that ended, raised to the longest wait
    /// still open at the end: a task starved until the run stopped (three
    /// SCHED_FIFO hogs on one CPU) has few or no finished waits, and must not
    /// read as undelayed (`sweep --budget` judges the same way).
    pub fn of(self, d: &crate::metrics::LatencySummary) -> u64 {
        let ended = match self {
            Stat::P50 => d.p50_ns,
            Stat::P90 => d.p90_ns,
            Stat::P99 => d.p99_ns,
            Stat::P999 => d.p999_ns,
            Stat::Max => d.max_ns,
        };
        ended.max(d.open_max_ns)
    }
}

/// What a target bounds: a task declaration's scheduling delay (every
/// wake-up and preemption wait, its instances merged, as `task_delays`), or
/// the end-to-end latency of a source's requests across their hops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    Task(String),
    Requests(String),
    /// A task declaration's I/O stalls: from blocking on block I/O to
    /// running again (`io_stall`), the worst instance's figure.
    TaskIo(String),
}

/// One goal: `reactor p99 <= 1ms`, `request queries p99 <= 5ms`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// As the user wrote it, for messages and the report.
    pub text: String,
    pub subject: Subject,
    pub stat: Stat,
    pub limit_ns: u64,
}

/// The most targets one search takes.
pub const TARGETS_MAX: usize = 8;

const TARGET_FORMS: &str = "expected 'TASK STAT <= DURATION', 'io TASK STAT <= DURATION' or 'request SOURCE STAT <= DURATION', \
     STAT one of p50, p90, p99, p999, max (e.g. --target 'reactor p99 <= 1ms')";

impl Target {
    /// Parses `TASK STAT <= DURATION` or `request SOURCE STAT <= DURATION`.
    /// The error names the flag and the text and says what is allowed.
    pub fn parse(text: &str) -> Result<Target, String> {
        let err = |what: String| format!("--target {}: {what}", crate::scenario::error::echo(text));
        let words: Vec<&str> = text.split_whitespace().collect();
        let (subject, rest) = match words.as_slice() {
            ["request", source, rest @ ..] => (Subject::Requests((*source).to_string()), rest),
            ["io", task, rest @ ..] => (Subject::TaskIo((*task).to_string()), rest),
            [task, rest @ ..] => (Subject::Task((*task).to_string()), rest),
            [] => return Err(err(TARGET_FORMS.into())),
        };
        let [stat, op, limit] = rest else { return Err(err(TARGET_FORMS.into())) };
        let stat = Stat::parse(stat).ok_or_else(|| err(format!("unknown statistic `{stat}`; {TARGET_FORMS}")))?;
        if *op != "<=" {
            return Err(err(format!("`{op}`: a target is an upper bound, written `<=`")));
        }
        let limit_ns = parse_duration(limit).map_err(err)?;
        if limit_ns == 0 {
            return Err(err("a bound of 0 cannot be met by any delay distribution with a wait in it".into()));
        }
        Ok(Target { text: words.join(" "), subject, stat, limit_ns })
    }

    /// Refuses a target the scenario cannot report: an unknown task (or a
    /// host background thread), a source without hops. Names what exists.
    pub fn check(&self, s: &Scenario) -> Result<(), String> {
        let spec = &s.spec;
        match &self.subject {
            Subject::Task(name) | Subject::TaskIo(name) => {
                let declared: Vec<&str> =
                    spec.tasks.iter().filter(|t| !t.machine_background).map(|t| t.name.as_str()).collect();
                if !declared.contains(&name.as_str()) {
                    return Err(format!(
                        "--target {}: no task `{}` in scenario {} (its tasks: {})",
                        self.text,
                        crate::scenario::error::echo(name),
                        spec.name,
                        declared.join(", ")
                    ));
                }
            }
            Subject::Requests(name) => {
                let with_hops: Vec<&str> =
                    spec.sources.iter().filter(|x| x.route.len() >= 2).map(|x| x.name.as_str()).collect();
                if !with_hops.contains(&name.as_str()) {
                    return Err(format!(
                        "--target {}: no source `{}` whose requests cross a hop (sources with hops: {})",
                        self.text,
                        crate::scenario::error::echo(name),
                        if with_hops.is_empty() { "none".to_string() } else { with_hops.join(", ") }
                    ));
                }
            }
        }
        Ok(())
    }

    /// The statistic in one run's report (0 when the subject had no delay).
    pub fn value(&self, r: &RunReport) -> u64 {
        match &self.subject {
            Subject::Task(name) => r.task_delays.iter().find(|d| &d.name == name).map_or(0, |d| self.stat.of(&d.delay)),
            Subject::Requests(name) => {
                r.requests.iter().find(|q| &q.source == name).map_or(0, |q| self.stat.of(&q.latency))
            }
            Subject::TaskIo(name) => r
                .tasks
                .iter()
                .filter(|t| &t.name == name)
                .filter_map(|t| t.io_stall.as_ref().map(|d| self.stat.of(d)))
                .max()
                .unwrap_or(0),
        }
    }

    /// The task the report's victim section should explain: the target's
    /// task, or a request route's first task.
    pub fn task<'a>(&'a self, s: &'a Scenario) -> Option<&'a str> {
        match &self.subject {
            Subject::Task(n) | Subject::TaskIo(n) => Some(n),
            Subject::Requests(src) => s.spec.sources.iter().find(|x| &x.name == src).and_then(|x| {
                x.route.first().and_then(|&i| s.spec.tasks.get(i)).map(|t| t.name.as_str())
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_refuse_with_the_flag_and_the_form() {
        let t = Target::parse("reactor  p99 <= 1ms").unwrap();
        assert_eq!((t.text.as_str(), t.stat, t.limit_ns), ("reactor p99 <= 1ms", Stat::P99, 1_000_000));
        assert_eq!(t.subject, Subject::Task("reactor".into()));
        let io = Target::parse("io open max <= 50ms").unwrap();
        assert_eq!((io.subject, io.limit_ns), (Subject::TaskIo("open".into()), 50_000_000));
        let r = Target::parse("request queries max <= 4.5ms").unwrap();
        assert_eq!((r.subject, r.stat, r.limit_ns), (Subject::Requests("queries".into()), Stat::Max, 4_500_000));
        for (bad, says) in [
            ("reactor p98 <= 1ms", "unknown statistic `p98`"),
            ("reactor p99 < 1ms", "written `<=`"),
            ("reactor p99 <= 1", "--target reactor p99 <= 1:"),
            ("reactor p99 <= 0ms", "a bound of 0"),
            ("reactor", "expected 'TASK STAT <= DURATION'"),
            ("", "expected"),
            ("reactor p99 <= 1ms extra", "expected"),
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert!(e.starts_with("--target") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_wait_still_open_at_the_end_counts() {
        let d = crate::metrics::LatencySummary { p50_ns: 10, p99_ns: 20, max_ns: 30, ..Default::default() };
        assert_eq!((Stat::P99.of(&d), Stat::Max.of(&d)), (20, 30));
        let starved = d.with_open(1, 5_000);
        assert_eq!((Stat::P50.of(&starved), Stat::Max.of(&starved)), (5_000, 5_000));
    }
}
