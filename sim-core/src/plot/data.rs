//! The series behind each chart, extracted from a `RunReport`: the victim's
//! delay distribution, the scheduling picture of the victim's CPU around its
//! worst delay (who ran, who waited, wakeups, vruntime lag), and each block
//! device's Q2D distribution.

use crate::metrics::CdfPoint;
use crate::metrics::history::PrevState;
use crate::report::RunReport;
use crate::report::run::HistoryRow;
// Chart data crosses Web Workers in the explorer (web crate) as JSON.
use serde::{Deserialize, Serialize};

/// One bar of a delay histogram (1-2-5 buckets per decade).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bar {
    pub low_ns: u64,
    pub high_ns: u64,
    pub count: u64,
}

/// The victim's scheduling delays in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DelayChart {
    /// Names the run in legends ("current", "baseline", a variant).
    pub label: String,
    pub histogram: Vec<Bar>,
    pub cdf: Vec<CdfPoint>,
    pub count: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Waits still open at the end (not in the distribution), the longest so far.
    pub open_count: u64,
    pub open_max_ns: u64,
}

impl DelayChart {
    pub fn from_report(r: &RunReport, label: &str) -> DelayChart {
        let v = &r.victim;
        DelayChart {
            label: label.to_string(),
            histogram: v
                .histogram
                .iter()
                .map(|b| Bar { low_ns: b.low_ns, high_ns: b.high_ns, count: b.count })
                .collect(),
            cdf: v.delay_cdf.clone(),
            count: v.delay.count,
            p99_ns: v.delay.p99_ns,
            max_ns: v.delay.max_ns,
            open_count: v.delay.open_count,
            open_max_ns: v.delay.open_max_ns,
        }
    }

    /// One declared task's delays (all instances merged).
    pub fn from_named(d: &crate::report::run::NamedDelay, label: &str) -> DelayChart {
        DelayChart {
            label: label.to_string(),
            histogram: d.histogram.iter().map(|&(low_ns, high_ns, count)| Bar { low_ns, high_ns, count }).collect(),
            cdf: d.cdf.clone(),
            count: d.delay.count,
            p99_ns: d.delay.p99_ns,
            max_ns: d.delay.max_ns,
            open_count: d.delay.open_count,
            open_max_ns: d.delay.open_max_ns,
        }
    }

    /// Delays of exactly 0 ns (they cannot sit on a log axis).
    pub fn zero_count(&self) -> u64 {
        self.histogram.iter().filter(|b| b.high_ns <= 1).map(|b| b.count).sum()
    }
}

/// A span of time one task spent in one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub row: usize,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A wakeup (`sched_wakeup`): `preempt` if it preempted the running task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakeMark {
    pub row: usize,
    pub at_ns: u64,
    pub preempt: bool,
}

/// A task's standing in its queue, where the history knows it: at its
/// wakeup (after `place_entity`) and when it was picked. 4.4: vruntime
/// relative to `min_vruntime` (negative: ahead of the queue, sleeper
/// credit). EEVDF (`Timeline::eevdf`): its lag V − vruntime (`entity_lag`;
/// ≥ 0: eligible).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LagPoint {
    pub row: usize,
    pub at_ns: u64,
    pub lag_ns: i64,
}

/// The victim's CPU around its worst delay, one row per task: when each ran
/// (`sched_switch`), waited runnable, and woke (`perf sched timehist -w`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub cpu: u16,
    /// Task labels (`comm[tid]`); the victim that waited longest is row 0.
    pub rows: Vec<String>,
    pub running: Vec<Span>,
    pub runnable: Vec<Span>,
    pub wakeups: Vec<WakeMark>,
    pub lag: Vec<LagPoint>,
    /// The lag points are EEVDF lags (`entity_lag`: V − vruntime, ≥ 0 when
    /// eligible); otherwise (4.4) vruntime − min_vruntime.
    #[serde(default)]
    pub eevdf: bool,
    pub worst: Span,
    pub from_ns: u64,
    pub to_ns: u64,
}

/// Whether a history label (`comm[tid]`) names a task with this comm: the
/// whole comm, so `reactor/27[28]` is not `reactor/2`.
fn is_label_of(label: &str, comm: &str) -> bool {
    label.strip_prefix(comm).is_some_and(|rest| rest.starts_with('['))
}

/// Rows kept in a timeline; further tasks are left out (never the victim).
pub const TIMELINE_ROWS_MAX: usize = 16;

impl Timeline {
    /// The timeline of the victim's worst delay; `None` when it never waited
    /// (no delay, or a worst delay of 0 ns: nothing to explain).
    pub fn from_report(r: &RunReport) -> Option<Timeline> {
        let worst = r.victim.worst.as_ref().filter(|w| w.end_ns > w.start_ns)?;
        let mut rows: Vec<String> = Vec::new();
        let victim_label = r.victim.history.iter().find_map(|h| match h {
            HistoryRow::Switch { next, victim: true, .. } if is_label_of(next, &worst.comm) => Some(next.clone()),
            HistoryRow::Wakeup { task, victim: true, .. } => Some(task.clone()),
            _ => None,
        });
        rows.push(victim_label.unwrap_or_else(|| worst.comm.clone()));
        let mut row_of = |name: &str| -> Option<usize> {
            if name == "<idle>" {
                return None;
            }
            if let Some(i) = rows.iter().position(|r| r == name) {
                return Some(i);
            }
            if rows.len() >= TIMELINE_ROWS_MAX {
                return None;
            }
            rows.push(name.to_string());
            Some(rows.len() - 1)
        };
        let mut t = Timeline {
            cpu: worst.cpu,
            rows: Vec::new(),
            running: Vec::new(),
            runnable: Vec::new(),
            wakeups: Vec::new(),
            lag: Vec::new(),
            eevdf: r.settings.kernel.picks_by_lag_and_deadline(),
            worst: Span { row: 0, start_ns: worst.start_ns, end_ns: worst.end_ns },
            from_ns: worst.start_ns,
            to_ns: worst.end_ns,
        };
        // Runnable since (per row), from a wakeup or a preemption.
        let mut since: Vec<Option<u64>> = vec![None; TIMELINE_ROWS_MAX];
        // Whether the wait that ended at the row's last switch-in is drawn:
        // not when that switch-in lies before the history, or when the task
        // became runnable before it (then the switch-out row's sch delay
        // gives the wait's length).
        let mut wait_drawn: Vec<bool> = vec![false; TIMELINE_ROWS_MAX];
        for h in &r.victim.history {
            match h {
                HistoryRow::Wakeup { at_ns, task, vruntime, preempt, min_vruntime, eevdf, .. } => {
                    t.from_ns = t.from_ns.min(*at_ns);
                    t.to_ns = t.to_ns.max(*at_ns);
                    if let Some(row) = row_of(task) {
                        t.wakeups.push(WakeMark { row, at_ns: *at_ns, preempt: *preempt });
                        let lag_ns = eevdf.map_or(vruntime - min_vruntime, |e| e.lag);
                        t.lag.push(LagPoint { row, at_ns: *at_ns, lag_ns });
                        since[row] = Some(*at_ns);
                    }
                }
                HistoryRow::Switch {
                    at_ns,
                    task,
                    run_ns,
                    sch_delay_ns,
                    state,
                    next,
                    next_vruntime,
                    min_vruntime,
                    next_eevdf,
                    ..
                } => {
                    let start = at_ns.saturating_sub(*run_ns);
                    t.from_ns = t.from_ns.min(start);
                    t.to_ns = t.to_ns.max(*at_ns);
                    if let Some(row) = row_of(task) {
                        t.running.push(Span { row, start_ns: start, end_ns: *at_ns });
                        // A wait that began before the window: the switch row knows its length.
                        if !wait_drawn[row] && *sch_delay_ns > 0 {
                            let from = start.saturating_sub(*sch_delay_ns);
                            t.runnable.push(Span { row, start_ns: from, end_ns: start });
                            t.from_ns = t.from_ns.min(from);
                        }
                        since[row] = (*state == PrevState::Preempted).then_some(*at_ns);
                    }
                    if let Some(row) = row_of(next) {
                        let since_wakeup = since[row].take();
                        if let Some(s) = since_wakeup
                            && *at_ns > s
                        {
                            t.runnable.push(Span { row, start_ns: s, end_ns: *at_ns });
                        }
                        wait_drawn[row] = since_wakeup.is_some();
                        let lag_ns = next_eevdf.map_or(next_vruntime - min_vruntime, |e| e.lag);
                        t.lag.push(LagPoint { row, at_ns: *at_ns, lag_ns });
                    }
                }
                // A move to or from this CPU changes no run or wait drawn here
                // (the wakeup or switch that follows it does).
                HistoryRow::Migrate { .. } | HistoryRow::Throttle { .. } => {}
            }
        }
        // Still running or waiting at the window's end.
        for (row, s) in since.iter().enumerate() {
            if let Some(s) = *s
                && t.to_ns > s
            {
                t.runnable.push(Span { row, start_ns: s, end_ns: t.to_ns });
            }
        }
        t.rows = rows;
        Some(t)
    }
}

/// What one timeline entry shows, in the order of the chart's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimelineState {
    /// On the CPU (`sched_switch` in to out).
    Running,
    /// Runnable and waiting for the CPU (wakeup or preemption to switch-in).
    Runnable,
    /// The victim's worst wait (also a runnable span).
    WorstWait,
    /// A wakeup that preempted the running task.
    WakeupPreempt,
    /// A wakeup that did not preempt.
    Wakeup,
}

impl TimelineState {
    /// The words the page's table and the chart's key use.
    pub fn label(self) -> &'static str {
        match self {
            TimelineState::Running => "running",
            TimelineState::Runnable => "runnable (waiting)",
            TimelineState::WorstWait => "runnable: the worst wait",
            TimelineState::WakeupPreempt => "▲ wakeup, preempted the running task (filled)",
            TimelineState::Wakeup => "△ wakeup, no preemption (hollow)",
        }
    }
}

/// One row of the timeline's table: a span (`end_ns` set) or an instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineEntry {
    pub start_ns: u64,
    pub end_ns: Option<u64>,
    pub row: usize,
    pub state: TimelineState,
}

impl Timeline {
    /// Every span and wakeup once, in time order (then by row and state):
    /// the table beside the chart. Times are absolute simulated time, so
    /// they read like the report's history and never go negative.
    pub fn entries(&self) -> Vec<TimelineEntry> {
        let w = &self.worst;
        let span = |s: &Span, state| TimelineEntry { start_ns: s.start_ns, end_ns: Some(s.end_ns), row: s.row, state };
        let mut v: Vec<TimelineEntry> = self
            .running
            .iter()
            .map(|s| span(s, TimelineState::Running))
            .chain(self.runnable.iter().map(|s| {
                let worst = s.row == w.row && s.start_ns == w.start_ns && s.end_ns == w.end_ns;
                span(s, if worst { TimelineState::WorstWait } else { TimelineState::Runnable })
            }))
            .chain(self.wakeups.iter().map(|m| TimelineEntry {
                start_ns: m.at_ns,
                end_ns: None,
                row: m.row,
                state: if m.preempt { TimelineState::WakeupPreempt } else { TimelineState::Wakeup },
            }))
            .collect();
        v.sort_by_key(|e| (e.start_ns, e.end_ns, e.row, e.state));
        v
    }
}

/// One device's Q2D distribution in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoChart {
    /// `run label: device (elevator)`.
    pub label: String,
    pub device: String,
    pub elevator: String,
    pub cdf: Vec<CdfPoint>,
    pub count: u64,
    pub max_ns: u64,
    /// Q2C (queued to completed): the latency the submitter sees.
    pub q2c_cdf: Vec<CdfPoint>,
    pub q2c_count: u64,
    /// Bios still waiting at the end (not in the distributions): not yet
    /// dispatched (Q2D) and not yet completed (Q2C), with the oldest's wait.
    pub open_count: u64,
    pub open_max_ns: u64,
    pub q2c_open_count: u64,
    pub q2c_open_max_ns: u64,
}

/// The Q2D and Q2C distributions of every block device of a run.
pub fn io_charts(r: &RunReport, label: &str) -> Vec<IoChart> {
    let Some(io) = &r.io else { return Vec::new() };
    io.devices
        .iter()
        .map(|d| {
            let elevator = match d.cfq_behaviour {
                Some(b) => format!("{} {b}", d.elevator),
                None => d.elevator.to_string(),
            };
            IoChart {
                label: format!("{label}: {} ({elevator})", d.name),
                device: d.name.clone(),
                elevator,
                cdf: d.q2d_cdf.clone(),
                count: d.q2d.count,
                max_ns: d.q2d.max_ns,
                q2c_cdf: d.q2c_cdf.clone(),
                q2c_count: d.q2c.count,
                open_count: d.q2d.open_count,
                open_max_ns: d.q2d.open_max_ns,
                q2c_open_count: d.q2c.open_count,
                q2c_open_max_ns: d.q2c.open_max_ns,
            }
        })
        .collect()
}

/// One CPU's row of the occupancy heat map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OccupancyRow {
    pub cpu: u16,
    pub socket: u16,
    pub core: u16,
    pub thread: u16,
    pub isolated: bool,
    /// `cpu 17 · s0 c1 t1`, with ` (isolated)` for an isolated CPU.
    pub label: String,
    /// Busy share of each bucket, in per mille of the bucket's length.
    pub permille: Vec<u16>,
    /// Busy share of the whole run (per mille), from the same buckets.
    pub total_permille: u16,
}

/// Per-CPU occupancy over time: one row per CPU, SMT siblings next to each
/// other, cores in socket order; time in `bucket_ns` buckets up to `end_ns`.
/// Busy means `nr_running > 0` (see `metrics::occupancy`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OccupancyChart {
    pub bucket_ns: u64,
    pub end_ns: u64,
    pub rows: Vec<OccupancyRow>,
}

fn permille(part: u64, whole: u64) -> u16 {
    if whole == 0 { 0 } else { (u128::from(part.min(whole)) * 1000 / u128::from(whole)) as u16 }
}

impl OccupancyChart {
    pub fn from_report(r: &RunReport) -> OccupancyChart {
        let o = &r.occupancy;
        let mut rows: Vec<OccupancyRow> = o
            .busy
            .iter()
            .enumerate()
            .map(|(cpu, busy)| {
                let p = o.places.get(cpu).copied().unwrap_or_default();
                let mut label = format!("cpu {cpu} · s{} c{} t{}", p.socket, p.core, p.thread);
                if p.isolated {
                    label.push_str(" (isolated)");
                }
                OccupancyRow {
                    cpu: cpu as u16,
                    socket: p.socket,
                    core: p.core,
                    thread: p.thread,
                    isolated: p.isolated,
                    label,
                    permille: busy.iter().enumerate().map(|(i, &b)| permille(b, o.bucket_len_ns(i))).collect(),
                    total_permille: permille(busy.iter().sum(), o.end_ns),
                }
            })
            .collect();
        rows.sort_by_key(|r| (r.socket, r.core, r.thread, r.cpu));
        OccupancyChart { bucket_ns: o.bucket_ns, end_ns: o.end_ns, rows }
    }

    /// Buckets per row.
    pub fn buckets(&self) -> usize {
        self.rows.first().map_or(0, |r| r.permille.len())
    }
}

/// The caption of a chart of `runs` (labelled): the seed, what was
/// simulated and each run's effective settings, so a chart that travels
/// without its command line still says what produced it. One line per entry.
pub fn caption(runs: &[(&str, &RunReport)]) -> Vec<String> {
    let Some((_, first)) = runs.first() else { return Vec::new() };
    let secs = |ns: u64| crate::time::format_duration(ns);
    let mut lines = vec![format!(
        "schedlab {} · scenario {} · seed {} · {} simulated · {} CPUs",
        env!("CARGO_PKG_VERSION"),
        if first.scenario.is_empty() { "(unnamed)" } else { &first.scenario },
        first.seed,
        secs(first.sim_time_ns),
        first.settings.cpus,
    )];
    for (label, r) in runs {
        let s = &r.settings;
        // The model's own settings (Settings::model_line), as the text header shows them.
        let mut line =
            format!("{label}: HZ={} autogroup={} {}", s.hz, if s.autogroup { "on" } else { "off" }, s.model_line());
        if let Some(io) = &r.io {
            for d in &io.devices {
                line.push_str(&format!(" {}={}", d.name, d.elevator));
            }
        }
        if r.seed != first.seed {
            line.push_str(&format!(" seed={}", r.seed));
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn a_label_belongs_to_a_comm_only_as_a_whole() {
        assert!(is_label_of("reactor/2[3]", "reactor/2"));
        assert!(!is_label_of("reactor/27[28]", "reactor/2"));
        assert!(!is_label_of("<idle>", "reactor/2"));
    }

    #[test]
    fn timeline_accounts_for_the_worst_delay() {
        let s = Scenario::from_toml("t.toml", super::super::CHART_TEST_SCENARIO).unwrap();
        let r = crate::run(&s);
        let t = Timeline::from_report(&r).expect("the sleeper waited");
        let w = r.victim.worst.as_ref().unwrap();
        assert_eq!((t.worst.start_ns, t.worst.end_ns), (w.start_ns, w.end_ns));
        assert!(t.rows[0].starts_with("sleeper"), "{:?}", t.rows);
        assert_eq!(t.rows.len(), 3, "{:?}", t.rows);
        // The victim's worst wait shows as a runnable span ending when it ran.
        assert!(t.runnable.iter().any(|s| s.row == 0 && s.start_ns == w.start_ns && s.end_ns == w.end_ns));
        assert!(t.running.iter().any(|s| s.row == 0 && s.start_ns == w.end_ns));
        // Running spans on one CPU never overlap.
        let mut run = t.running.clone();
        run.sort_by_key(|s| s.start_ns);
        assert!(run.windows(2).all(|p| p[0].end_ns <= p[1].start_ns), "{run:?}");
        // The pick that ended the wait shows the victim's vruntime lag.
        assert!(t.lag.iter().any(|l| l.row == 0 && l.at_ns == w.end_ns), "{:?}", t.lag);
        let d = DelayChart::from_report(&r, "x");
        assert_eq!(d.cdf.last().map(|p| (p.value_ns, p.count)), Some((d.max_ns, d.count)));
        timeline_entries_are_each_shown_once(&t);
        assert_eq!(d.histogram.iter().map(|b| b.count).sum::<u64>(), d.count);
    }

    /// The table beside the timeline: no span twice, nothing before the
    /// window, runnable spans of one task never overlap (a task waits once at
    /// a time), and the worst wait is there exactly once.
    fn timeline_entries_are_each_shown_once(t: &Timeline) {
        let e = t.entries();
        assert!(!e.is_empty());
        for p in e.windows(2) {
            assert_ne!(p[0], p[1], "a row is repeated: {:?}", p[0]);
        }
        assert!(
            e.iter().all(|x| x.start_ns >= t.from_ns && x.end_ns.is_none_or(|end| end <= t.to_ns && end >= x.start_ns))
        );
        assert_eq!(e.iter().filter(|x| x.state == TimelineState::WorstWait).count(), 1, "{e:?}");
        for row in 0..t.rows.len() {
            let mut waits: Vec<&Span> = t.runnable.iter().filter(|s| s.row == row).collect();
            waits.sort_by_key(|s| s.start_ns);
            assert!(waits.windows(2).all(|p| p[0].end_ns <= p[1].start_ns), "row {row}: {waits:?}");
        }
    }

    /// A task preempted inside the window and picked again: its wait was
    /// drawn twice (once at the switch-in, once more from the sch delay of
    /// its next switch-out), so the page's table repeated it.
    #[test]
    fn a_preempted_wait_inside_the_window_is_drawn_once() {
        // 20 ms: a hog preempted and picked again inside the window (its wait
        // was drawn twice). 1 ms: the other hog became runnable before the
        // window and is first seen switching in (its wait must still show).
        for window in ["20ms", "1ms"] {
            let s = Scenario::from_toml(
                "t.toml",
                &format!(
                    r#"
                    schema = 1
                    seed = 1
                    duration = "100ms"
                    [kernel]
                    version = "4.4"
                    [machine]
                    cpus = 1
                    hz = 1000
                    [report]
                    victim = "hog-a"
                    history_window = "{window}"
                    [[tasks]]
                    name = "hog-a"
                    program = [{{ run = "1s" }}]
                    [[tasks]]
                    name = "hog-b"
                    start = "50ms"
                    program = [{{ run = "1s" }}]
                    "#
                ),
            )
            .unwrap();
            let r = crate::run(&s);
            let t = Timeline::from_report(&r).expect("the hogs take turns");
            assert_eq!(t.rows.len(), 2, "{:?}", t.rows);
            timeline_entries_are_each_shown_once(&t);
            // Each hog waits while the other runs: every turn but the first of
            // the run is preceded by a wait (exactly one: no repeats, checked
            // above), also a turn whose wait began before the window (its
            // switch-out's sch delay gives it).
            let turns: Vec<&Span> = t.running.iter().filter(|s| s.start_ns > 0).collect();
            assert!(turns.iter().any(|s| s.row == 1), "{window}: {:?}", t.running);
            for turn in turns {
                assert!(
                    t.runnable.iter().any(|w| w.row == turn.row && w.end_ns == turn.start_ns),
                    "{window}: no wait before {turn:?}: {:?}",
                    t.runnable
                );
            }
        }
    }

    /// Hand timeline through the report's series: shares per bucket in per
    /// mille of each bucket (the last one short), rows grouped by core.
    #[test]
    fn occupancy_rows_are_shares_grouped_by_core() {
        use crate::metrics::occupancy::{CpuPlace, OccupancySeries};
        let s = Scenario::from_toml("t.toml", super::super::CHART_TEST_SCENARIO).unwrap();
        let mut r = crate::run(&s);
        // 2 cores x 2 threads: cpu 1 is core 1 thread 0, cpu 2 core 0 thread 1.
        let place = |core, thread, isolated| CpuPlace { socket: 0, core, thread, isolated };
        r.occupancy = OccupancySeries {
            bucket_ns: 1_000,
            end_ns: 2_500,
            busy: vec![vec![1_000, 250, 0], vec![0, 0, 500], vec![500, 0, 0], vec![0; 3]],
            places: vec![place(0, 0, false), place(1, 0, false), place(0, 1, true), place(1, 1, false)],
        };
        let c = OccupancyChart::from_report(&r);
        assert_eq!(c.rows.iter().map(|r| r.cpu).collect::<Vec<_>>(), [0, 2, 1, 3], "siblings together");
        assert_eq!(c.rows[0].permille, [1000, 250, 0]);
        assert_eq!(c.rows[2].permille, [0, 0, 1000], "the last bucket is 500 ns long");
        assert_eq!(c.rows[0].total_permille, 500);
        assert!(c.rows[1].isolated && c.rows[1].label.ends_with("(isolated)"), "{:?}", c.rows[1]);
        assert_eq!(c.rows[1].label, "cpu 2 · s0 c0 t1 (isolated)");
        assert_eq!(c.buckets(), 3);
    }

    /// From a real run: a hog alone on one of two CPUs keeps its CPU busy
    /// in every bucket (nr_running > 0 all along); the other CPU idles.
    #[test]
    fn a_lone_hog_fills_its_row() {
        let toml = "schema = 1\nseed = 1\nduration = \"50ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 2\n[[tasks]]\nname = \"hog\"\ncpus = \"1\"\nprogram = [{ run = \"1s\" }]\n";
        let r = crate::run(&Scenario::from_toml("t.toml", toml).unwrap());
        let c = OccupancyChart::from_report(&r);
        assert_eq!(c.end_ns, 50_000_000);
        assert!(c.bucket_ns * c.buckets() as u64 >= c.end_ns && c.buckets() <= 256);
        let hog = c.rows.iter().find(|r| r.cpu == 1).unwrap();
        assert!(hog.permille[1..].iter().all(|&p| p == 1000), "{:?}", hog.permille);
        assert!(hog.total_permille >= 999);
        let idle = c.rows.iter().find(|r| r.cpu == 0).unwrap();
        assert_eq!(idle.total_permille, 0, "{:?}", idle.permille);
        // The series agrees with the exact busy time to within a bucket.
        let busy: u64 = r.occupancy.busy[1].iter().sum();
        assert!(busy.abs_diff(r.cpus[1].busy_ns) <= c.bucket_ns, "{busy} vs {}", r.cpus[1].busy_ns);
    }
}

// ---------------------------------------------------------------- elastic CPU limiters

/// One point of a limiter chart: shares of one CPU and of the machine as
/// fractions (0 to 1), the watched tasks' delay percentile in ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimiterPoint {
    pub at_ns: u64,
    /// The limit set at `at_ns` (a share of each CPU).
    pub limit: f64,
    /// Elastic CPU used over the controller's window ending at `at_ns`
    /// (the window the controller reads), as a share of the machine.
    pub used: f64,
    /// The delay percentile over that window; `None` with no delay in it.
    pub observed_ns: Option<u64>,
}

/// A limiter over time: its limit and the elastic CPU used (one axis,
/// shares) and the foreground delay percentile against its target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimiterChart {
    pub name: String,
    /// `"99"` for the p99.
    pub percentile: String,
    pub target_ns: u64,
    pub floor: f64,
    pub ceiling: f64,
    pub end_ns: u64,
    pub points: Vec<LimiterPoint>,
}

/// One chart per limiter of the run (none without limiters).
pub fn limiter_charts(r: &RunReport) -> Vec<LimiterChart> {
    r.limiters
        .iter()
        .map(|l| {
            // The elastic CPU over the controller's window: a rolling sum of
            // the samples covering it (single periods swing between 0 and
            // a whole grant).
            let span = (l.window_ns.div_ceil(l.adjust_every_ns.max(1)) / l.stride.max(1)).max(1) as usize;
            let mut points = Vec::with_capacity(l.samples.len());
            let (mut used, mut len) = (0u64, 0u64);
            for (i, s) in l.samples.iter().enumerate() {
                used += s.used_ns;
                len += s.interval_ns;
                if i >= span {
                    used -= l.samples[i - span].used_ns;
                    len -= l.samples[i - span].interval_ns;
                }
                let machine = len as f64 * f64::from(l.cpus);
                points.push(LimiterPoint {
                    at_ns: s.at_ns,
                    limit: f64::from(s.limit_ppm) / 1e6,
                    used: if machine > 0.0 { used as f64 / machine } else { 0.0 },
                    observed_ns: s.observed_ns,
                });
            }
            LimiterChart {
                name: l.name.clone(),
                percentile: l.percentile.clone(),
                target_ns: l.target_ns,
                floor: f64::from(l.floor_ppm) / 1e6,
                ceiling: f64::from(l.ceiling_ppm) / 1e6,
                end_ns: r.sim_time_ns,
                points,
            }
        })
        .collect()
}
