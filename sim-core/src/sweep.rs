//! Parameter sweeps: a grid of override values (`--vary KEY=SPEC`), one run
//! per grid point through the one API (`with_overrides` → `run`), and the
//! figures a sweep is read for: the target task's scheduling delay and the
//! context switches that buy it.
//!
//! Pure like the rest of the core: this module parses specs, enumerates points
//! and runs one point at a time. Running points in parallel, sharding and
//! printing belong to the front end (`sim-cli sweep`); every point is a
//! deterministic run, so the order they are run in changes nothing.

use crate::metrics::LatencySummary;
use crate::workload::dist::parse_duration;
use crate::engine::StopReason;
use crate::report::RunReport;
use crate::scenario::{Scenario, ScenarioError};

/// Most values one `--vary` axis may take.
pub const AXIS_POINTS_MAX: usize = 64;
/// Most points a grid may have (the product of its axes' lengths).
pub const GRID_POINTS_MAX: usize = 10_000;
/// Significant digits generated range points are rounded to at least (more
/// when needed to keep neighbouring points apart), so a point reads `3.91ms`
/// and can be typed back into `--set` as printed.
const SIGNIFICANT_DIGITS_MIN: u32 = 3;

/// One varied key and the values it takes, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// The `--vary` text this axis came from (named in errors and fingerprints).
    pub spec: String,
    /// An override key path, e.g. `cfs.sched_latency_ns`.
    pub key: String,
    /// Override value texts, as `--set` takes them: `"3.91ms"`, `"1000"`,
    /// `"true"`, `"\"scylla\""`.
    pub values: Vec<String>,
    /// Generated on a logarithmic scale (charts use a log axis).
    pub log: bool,
}

/// How the ends of a range were written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EndKind {
    Duration,
    Integer,
}

impl Axis {
    /// Parses `KEY=A..B:log:N`, `KEY=A..B:lin:N`, `KEY=A..B:N` (linear) or
    /// `KEY=v1,v2,...`.
    ///
    /// Range ends are durations with a unit (`500us`, `1ms`) or plain
    /// integers; both ends are included, `A < B`, `N` is 2 to
    /// [`AXIS_POINTS_MAX`], and a log range needs `A > 0`. Interior points are
    /// rounded to whole nanoseconds (or units) and to three significant
    /// digits, more if that would merge neighbours; equal points are merged.
    /// List items are passed to the override unchanged, so `true`,
    /// `"scylla"`, `250` and `0.5ms` all work.
    pub fn parse(spec: &str) -> Result<Axis, String> {
        let err = |what: String| format!("--vary {spec}: {what}");
        let Some((key, rhs)) = split_outside_quotes(spec, '=').map(|(k, v)| (k.trim(), v.trim())) else {
            return Err(err("expected KEY=A..B:log:N, KEY=A..B:lin:N or KEY=v1,v2,... \
                 (e.g. cfs.sched_latency_ns=1ms..24ms:log:8)"
                .into()));
        };
        if key.is_empty() {
            return Err(err("the key is empty (write e.g. cfs.sched_latency_ns=1ms..24ms:log:8)".into()));
        }
        if rhs.is_empty() {
            return Err(err("no values (write A..B:log:N, A..B:lin:N or v1,v2,...)".into()));
        }
        let is_range = rhs.contains("..") && !rhs.contains(',') && !rhs.contains('"');
        let (values, log) =
            if is_range { range_values(rhs).map_err(err)? } else { (list_values(rhs).map_err(err)?, false) };
        Ok(Axis { spec: spec.to_string(), key: key.to_string(), values, log })
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values as numbers, if every one is a duration (`Some((ns, true))`)
    /// or every one a plain number (`Some((n, false))`); charts place points
    /// by these. `None` for other values (booleans, strings, mixed).
    pub fn numbers(&self) -> Option<(Vec<f64>, bool)> {
        let durations: Option<Vec<f64>> =
            self.values.iter().map(|v| parse_duration(v).ok().map(|n| n as f64)).collect();
        if let Some(d) = durations {
            return Some((d, true));
        }
        let plain: Option<Vec<f64>> = self.values.iter().map(|v| v.trim().parse::<f64>().ok()).collect();
        plain.filter(|p| p.iter().all(|x| x.is_finite())).map(|p| (p, false))
    }
}

/// Splits at the first `sep` outside double quotes, so a quoted key segment
/// may contain it: `groups."/a=b".shares=2`.
fn split_outside_quotes(text: &str, sep: char) -> Option<(&str, &str)> {
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == sep && !quoted => return Some((&text[..i], &text[i + c.len_utf8()..])),
            _ => {}
        }
    }
    None
}

/// The number a list item stands for, to find items that name the same
/// value in different words (`1ms` and `1000us`, `5` and `05`).
fn item_value(item: &str) -> Option<i128> {
    if let Ok(n) = item.parse::<i64>() {
        return Some(i128::from(n));
    }
    // Durations are kept apart from plain integers (`1000` is not `1us`).
    parse_duration(item).ok().map(|ns| -(i128::from(ns)) - (1 << 80))
}

fn list_values(rhs: &str) -> Result<Vec<String>, String> {
    let mut items: Vec<String> = Vec::new();
    let mut rest = rhs;
    // Bounded: each turn consumes one item and the list has at most
    // AXIS_POINTS_MAX of them.
    loop {
        let (item, next) = match split_outside_quotes(rest, ',') {
            Some((a, b)) => (a, Some(b)),
            None => (rest, None),
        };
        let item = item.trim();
        if item.is_empty() {
            return Err("an empty item in the list (write v1,v2,...)".into());
        }
        // A repeated value would silently shrink the sweep.
        if let Some(seen) =
            items.iter().find(|v| *v == item || item_value(v).is_some_and(|x| Some(x) == item_value(item)))
        {
            return Err(if seen == item {
                format!("`{item}` is listed twice; give each value once")
            } else {
                format!("`{item}` is the same value as `{seen}`; give each value once")
            });
        }
        items.push(item.to_string());
        if items.len() > AXIS_POINTS_MAX {
            return Err(format!("more than {AXIS_POINTS_MAX} values; the limit is {AXIS_POINTS_MAX} per axis"));
        }
        match next {
            Some(n) => rest = n,
            None => break,
        }
    }
    Ok(items)
}

/// A range end: a duration with a unit (ns, never negative) or a plain
/// integer, which may be negative (`nice=-20..19`).
fn range_end(text: &str) -> Result<(i64, EndKind), String> {
    let t = text.trim();
    // Override values are TOML integers (i64): larger ends could not be set.
    let too_large = || format!("`{t}` is out of range: range ends are {} to {}", i64::MIN, i64::MAX);
    let digits = t.strip_prefix('-').unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i64>().map(|n| (n, EndKind::Integer)).map_err(|_| too_large());
    }
    let ns = parse_duration(t).map_err(|e| format!("range end {e}; or write a plain integer such as 5 or -20"))?;
    let ns = i64::try_from(ns).map_err(|_| too_large())?;
    Ok((ns, EndKind::Duration))
}

fn range_values(rhs: &str) -> Result<(Vec<String>, bool), String> {
    let mut parts = rhs.split(':');
    let ends = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.map(str::trim).collect();
    let (log, count) = match rest.as_slice() {
        [n] => (false, *n),
        ["log", n] => (true, *n),
        ["lin", n] => (false, *n),
        [scale, _] => return Err(format!("unknown scale `{scale}`; allowed: log, lin")),
        [] => return Err("the number of points is missing (write A..B:log:N, A..B:lin:N or A..B:N)".into()),
        _ => return Err("expected A..B:log:N, A..B:lin:N or A..B:N".into()),
    };
    let count: usize = count
        .parse()
        .ok()
        .filter(|n| (2..=AXIS_POINTS_MAX).contains(n))
        .ok_or_else(|| format!("the number of points `{count}` must be an integer from 2 to {AXIS_POINTS_MAX}"))?;
    let Some((a, b)) = ends.split_once("..") else {
        return Err("expected A..B".into());
    };
    let ((lo, kind_a), (hi, kind_b)) = (range_end(a)?, range_end(b)?);
    if kind_a != kind_b {
        return Err("write both range ends with a unit (1ms..24ms) or both as plain integers".into());
    }
    if lo >= hi {
        return Err(format!("the range must go up: `{}` is not below `{}`", a.trim(), b.trim()));
    }
    if log && lo <= 0 {
        return Err(format!("a log range needs a start above 0, not `{}`", a.trim()));
    }
    // i128: `hi - lo` of two i64 cannot overflow there.
    let (lo, hi) = (i128::from(lo), i128::from(hi));
    if hi - lo + 1 < count as i128 {
        return Err(format!(
            "`{}..{}` holds only {} whole {}, fewer than the {count} points asked for; ask for at most {}",
            a.trim(),
            b.trim(),
            hi - lo + 1,
            if kind_a == EndKind::Duration { "nanoseconds" } else { "numbers" },
            hi - lo + 1
        ));
    }
    let exact: Vec<i128> = (0..count)
        .map(|i| {
            if i == 0 {
                return lo;
            }
            if i + 1 == count {
                return hi;
            }
            let f = i as f64 / (count - 1) as f64;
            let x =
                if log { lo as f64 * libm::pow(hi as f64 / lo as f64, f) } else { lo as f64 + (hi - lo) as f64 * f };
            // Strictly inside the ends, so rounding cannot step past them.
            (libm::round(x) as i128).clamp(lo, hi)
        })
        .collect();
    let mut full = exact.clone();
    full.dedup();
    if full.len() < count {
        // A log range crowds its low end: neighbours that round to one value.
        return Err(format!(
            "only {} of the {count} points are distinct once rounded to whole units; ask for at most {}, or use \
             :lin:",
            full.len(),
            full.len()
        ));
    }
    // The fewest significant digits (from three) that keep every point distinct.
    let points = (SIGNIFICANT_DIGITS_MIN..=20)
        .map(|digits| {
            let mut p: Vec<i128> = exact
                .iter()
                .enumerate()
                .map(|(i, &x)| if i == 0 || i + 1 == count { x } else { round_significant(x, digits).clamp(lo, hi) })
                .collect();
            p.dedup();
            p
        })
        .find(|p| p.len() == full.len())
        .unwrap_or(full);
    let text = |n: i128| match kind_a {
        // Duration ends are at least 0 and at most i64::MAX.
        EndKind::Duration => crate::time::format_duration(u64::try_from(n).unwrap_or(0)),
        EndKind::Integer => n.to_string(),
    };
    Ok((points.into_iter().map(text).collect(), log))
}

/// `x` rounded to `digits` significant decimal digits (half away from 0).
fn round_significant(x: i128, digits: u32) -> i128 {
    let m = x.unsigned_abs();
    let len = m.checked_ilog10().map_or(1, |l| l + 1);
    if len <= digits {
        return x;
    }
    let p = 10u128.pow(len - digits);
    let r = ((m / p + u128::from(m % p >= p / 2)) * p) as i128;
    if x < 0 { -r } else { r }
}

/// The cartesian product of the axes, first axis slowest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    pub axes: Vec<Axis>,
}

impl Grid {
    /// Checks there is at least one axis, no key is varied twice, and the
    /// product has at most [`GRID_POINTS_MAX`] points.
    pub fn new(axes: Vec<Axis>) -> Result<Grid, String> {
        if axes.is_empty() {
            return Err("a sweep needs at least one --vary KEY=SPEC".into());
        }
        for (i, a) in axes.iter().enumerate() {
            if let Some(b) = axes[..i].iter().find(|b| b.key == a.key) {
                return Err(format!("--vary {} and --vary {} vary the same key `{}`", b.spec, a.spec, a.key));
            }
        }
        let mut len: usize = 1;
        for a in &axes {
            len = len.saturating_mul(a.len());
        }
        if len > GRID_POINTS_MAX {
            let sizes: Vec<String> = axes.iter().map(|a| a.len().to_string()).collect();
            return Err(format!(
                "the grid has {} = {len} points; the limit is {GRID_POINTS_MAX} (use fewer values, or shard a larger study into several sweeps)",
                sizes.join(" × ")
            ));
        }
        Ok(Grid { axes })
    }

    pub fn len(&self) -> usize {
        self.axes.iter().map(Axis::len).product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each axis's value index at point `index` (first axis slowest).
    pub fn coords(&self, index: usize) -> Vec<usize> {
        assert!(index < self.len(), "point {index} of a {}-point grid", self.len());
        let mut rest = index;
        let mut out = vec![0; self.axes.len()];
        for (slot, axis) in out.iter_mut().zip(&self.axes).rev() {
            *slot = rest % axis.len();
            rest /= axis.len();
        }
        out
    }

    /// The overrides of point `index`, in axis order.
    pub fn point(&self, index: usize) -> Vec<(&str, &str)> {
        self.coords(index).into_iter().zip(&self.axes).map(|(i, a)| (a.key.as_str(), a.values[i].as_str())).collect()
    }
}

/// Which figure of the target's scheduling delays a sweep ranks by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    P99,
    P999,
    Max,
    Avg,
    /// The p99 end-to-end latency of the requests of the first source whose
    /// requests cross a hop (`report.requests[0]`), not a scheduling delay.
    RequestP99,
}

impl Metric {
    pub const NAMES: &'static str = "p99, p99.9, max, avg or request-p99";

    pub fn parse(text: &str) -> Result<Metric, String> {
        match text.trim() {
            "p99" => Ok(Metric::P99),
            "p99.9" | "p999" => Ok(Metric::P999),
            "max" => Ok(Metric::Max),
            "avg" => Ok(Metric::Avg),
            "request-p99" => Ok(Metric::RequestP99),
            other => Err(format!("--metric {other}: allowed: {}", Metric::NAMES)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
            Metric::Max => "max",
            Metric::Avg => "avg",
            Metric::RequestP99 => "request-p99",
        }
    }

    pub fn of(self, d: &LatencySummary) -> u64 {
        match self {
            Metric::P99 => d.p99_ns,
            Metric::P999 => d.p999_ns,
            // A wait still open at the end counts when it is the longest.
            Metric::Max => d.worst_ns(),
            Metric::Avg => d.avg_ns,
            Metric::RequestP99 => d.p99_ns,
        }
    }

    /// The ranked figure of a run: `of` the victim's delays, or for
    /// `RequestP99` the p99 latency of the first source with hops (0 when
    /// the run has none; `sim-cli sweep` refuses such a scenario first).
    pub fn of_report(self, r: &RunReport) -> u64 {
        match self {
            Metric::RequestP99 => r.requests.first().map_or(0, |q| q.latency.p99_ns),
            _ => self.of(&r.victim.delay),
        }
    }
}

/// `base` with `report.victim` set to `task`, so the report's victim (whose
/// delays a sweep measures) is that task; an unknown name gets the core's
/// own error listing the tasks.
pub fn with_target(base: &Scenario, task: &str) -> Result<Scenario, ScenarioError> {
    let quoted = toml::Value::String(task.to_string()).to_string();
    base.with_overrides(&[("report.victim", quoted.as_str())])
}

/// Applies every point's overrides without running anything, so a bad key or
/// value fails before the first run. Returns the first error, by index.
pub fn validate(base: &Scenario, grid: &Grid) -> Result<(), ScenarioError> {
    (0..grid.len()).try_for_each(|i| base.with_overrides(&grid.point(i)).map(drop))
}

/// The figures of one grid point's run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointResult {
    pub index: usize,
    /// `(key, value text)` in axis order.
    pub settings: Vec<(String, String)>,
    /// The ranked figure (`Metric::of` the target's delays).
    pub metric_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub avg_ns: u64,
    /// Scheduling delays measured (all instances of the target merged).
    pub count: u64,
    /// The target's waits still open at the end (in none of the figures
    /// above but `max_ns`), and the longest so far: a starved target has
    /// few or no delays measured, so its percentiles alone look good.
    pub open_count: u64,
    pub open_max_ns: u64,
    /// Context switches on all CPUs: the cost of shorter slices.
    pub switches: u64,
    pub events: u64,
    pub sim_time_ns: u64,
    pub stop: StopReason,
    /// The run's seed (a sweep may vary it).
    pub seed: u64,
}

impl PointResult {
    /// The figures of `report` for grid point `index`.
    pub fn from_report(grid: &Grid, index: usize, metric: Metric, report: &RunReport) -> PointResult {
        let d = &report.victim.delay;
        PointResult {
            index,
            settings: grid.point(index).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            metric_ns: metric.of_report(report),
            p99_ns: d.p99_ns,
            max_ns: d.worst_ns(),
            avg_ns: d.avg_ns,
            count: d.count,
            open_count: d.open_count,
            open_max_ns: d.open_max_ns,
            switches: report.cpus.iter().map(|c| c.switches).sum(),
            events: report.events,
            sim_time_ns: report.sim_time_ns,
            stop: report.stop,
            seed: report.seed,
        }
    }
}

/// Runs grid point `index` of `base` (which carries the variant, `--set`
/// overrides and target) and extracts its figures.
pub fn run_point(base: &Scenario, grid: &Grid, index: usize, metric: Metric) -> Result<PointResult, ScenarioError> {
    let scenario = base.with_overrides(&grid.point(index))?;
    // A point is judged on its figures: no history, occupancy or CDFs recorded.
    let report = crate::report::run_recording(&scenario, crate::report::ReportSections::FIGURES);
    Ok(PointResult::from_report(grid, index, metric, &report))
}

/// Best first: metric ascending, then fewer context switches, then grid order.
pub fn sort_by_metric(results: &mut [PointResult]) {
    results.sort_by_key(|r| (r.metric_ns, r.switches, r.index));
}

/// The points whose metric is at most `budget_ns`, and none of whose waits
/// still open at the end has already outlasted it, cheapest in context
/// switches first (then lower metric, then grid order).
pub fn within_budget(results: &[PointResult], budget_ns: u64) -> Vec<&PointResult> {
    let mut out: Vec<&PointResult> =
        results.iter().filter(|r| r.metric_ns <= budget_ns && r.open_max_ns <= budget_ns).collect();
    out.sort_by_key(|r| (r.switches, r.metric_ns, r.index));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(spec: &str) -> Vec<String> {
        Axis::parse(spec).unwrap().values
    }

    #[test]
    fn log_range_includes_both_ends_rounded_to_three_digits() {
        let a = Axis::parse("cfs.sched_latency_ns=1ms..24ms:log:8").unwrap();
        assert_eq!(a.key, "cfs.sched_latency_ns");
        assert!(a.log);
        // 1ms · 24^(i/7): 1, 1.575, 2.479, 3.904, 6.147, 9.680, 15.24, 24 ms.
        assert_eq!(a.values, ["1ms", "1.57ms", "2.48ms", "3.9ms", "6.15ms", "9.68ms", "15.2ms", "24ms"]);
        // Every value reads back as the nanoseconds it stands for.
        assert!(a.values.iter().all(|v| crate::time::format_duration(parse_duration(v).unwrap()) == *v));
    }

    #[test]
    fn linear_ranges_and_plain_integers() {
        assert_eq!(values("machine.hz=100..1000:lin:4"), ["100", "400", "700", "1000"]);
        assert_eq!(values("x=0ms..3ms:4"), ["0ns", "1ms", "2ms", "3ms"]);
        assert_eq!(values("x=1ns..3ns:lin:3"), ["1ns", "2ns", "3ns"]);
        // More digits when three would merge neighbours.
        assert_eq!(values("x=1000..1003:lin:4"), ["1000", "1001", "1002", "1003"]);
        assert!(!Axis::parse("x=1..2:2").unwrap().log);
    }

    #[test]
    fn lists_pass_values_through() {
        let a = Axis::parse(r#"tasks.a.name="x,y", "z""#).unwrap();
        assert_eq!(a.values, [r#""x,y""#, r#""z""#]);
        assert_eq!(values("features.HRTICK=true,false"), ["true", "false"]);
        assert_eq!(values("cfs.sched_wakeup_granularity_ns=0.5ms,1ms,4ms"), ["0.5ms", "1ms", "4ms"]);
        assert_eq!(values(r#"groups."/a=b".shares=2"#), ["2"]);
        assert_eq!(Axis::parse(r#"groups."/a=b".shares=2"#).unwrap().key, r#"groups."/a=b".shares"#);
    }

    #[test]
    fn bad_specs_name_the_spec_and_what_is_allowed() {
        let cases = [
            ("cfs.sched_latency_ns", "expected KEY=A..B:log:N"),
            ("=1..2:2", "the key is empty"),
            ("k=", "no values"),
            ("k=1ms..2ms", "number of points is missing"),
            ("k=1ms..2ms:1", "from 2 to 64"),
            ("k=1ms..2ms:65", "from 2 to 64"),
            ("k=1ms..2ms:cube:4", "allowed: log, lin"),
            ("k=0ms..2ms:log:4", "start above 0"),
            ("k=2ms..1ms:4", "must go up"),
            ("k=1..2ms:4", "both range ends with a unit"),
            ("k=1ms..2furlongs:4", "unknown time unit"),
            ("k=a,,b", "empty item"),
        ];
        for (spec, needle) in cases {
            let e = Axis::parse(spec).unwrap_err();
            assert!(e.starts_with(&format!("--vary {spec}: ")) && e.contains(needle), "{spec}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    /// Defect: `--vary nice=-20..19` was refused with "write a plain
    /// integer", which it is. Negative integer ends now work.
    #[test]
    fn negative_integer_ranges() {
        assert_eq!(values("tasks.a.nice=-20..19:lin:4"), ["-20", "-7", "6", "19"]);
        assert_eq!(values("x=-3..-1:3"), ["-3", "-2", "-1"]);
        let big = format!("x={}..{}:2", i64::MIN, i64::MAX);
        assert_eq!(values(&big), [i64::MIN.to_string(), i64::MAX.to_string()]);
        for (spec, want) in [
            ("x=-5..5:log:3", "a log range needs a start above 0, not `-5`"),
            ("x=-1ms..1ms:3", "range end"),
            ("x=1.5..3:3", "or write a plain integer such as 5 or -20"),
            ("x=-99999999999999999999..1:3", "out of range"),
        ] {
            let e = Axis::parse(spec).unwrap_err();
            assert!(e.starts_with(&format!("--vary {spec}: ")) && e.contains(want), "{spec}: {e}");
        }
    }

    /// Defect: `--vary x=1ms,1ms` silently became a one-point sweep, and a
    /// range with fewer whole values than points silently shrank. Both are
    /// refused, naming the value.
    #[test]
    fn duplicate_points_are_refused() {
        for (spec, want) in [
            ("x=1ms,1ms", "`1ms` is listed twice; give each value once"),
            ("x=1ms,2ms,1000us", "`1000us` is the same value as `1ms`"),
            ("x=5,05", "`05` is the same value as `5`"),
            ("x=1ns..3ns:lin:5", "`1ns..3ns` holds only 3 whole nanoseconds, fewer than the 5 points asked for"),
            ("x=1..5:log:5", "only 4 of the 5 points are distinct"),
        ] {
            let e = Axis::parse(spec).unwrap_err();
            assert!(e.starts_with(&format!("--vary {spec}: ")) && e.contains(want), "{spec}: {e}");
        }
        // `1000` (a number) and `1us` (a duration) are different values.
        assert_eq!(values("x=1000,1us"), ["1000", "1us"]);
    }

    #[test]
    fn grid_is_the_product_first_axis_slowest() {
        let g = Grid::new(vec![Axis::parse("a=1,2").unwrap(), Axis::parse("b=x,y,z").unwrap()]).unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g.point(0), [("a", "1"), ("b", "x")]);
        assert_eq!(g.point(1), [("a", "1"), ("b", "y")]);
        assert_eq!(g.point(5), [("a", "2"), ("b", "z")]);
        assert_eq!(g.coords(4), [1, 1]);
    }

    #[test]
    fn grid_limits() {
        assert!(Grid::new(vec![]).unwrap_err().contains("at least one"));
        let e = Grid::new(vec![Axis::parse("a=1,2").unwrap(), Axis::parse("a=3,4").unwrap()]).unwrap_err();
        assert!(e.contains("same key `a`"), "{e}");
        let big = |k: &str| Axis::parse(&format!("{k}=1..64:64")).unwrap();
        let e = Grid::new(vec![big("a"), big("b"), big("c")]).unwrap_err();
        assert!(e.contains("64 × 64 × 64 = 262144 points; the limit is 10000"), "{e}");
    }

    #[test]
    fn budget_prefers_fewer_switches_then_lower_metric() {
        let p = |index, metric_ns, switches| PointResult {
            index,
            settings: Vec::new(),
            metric_ns,
            p99_ns: metric_ns,
            max_ns: metric_ns,
            avg_ns: 0,
            count: 1,
            open_count: 0,
            open_max_ns: 0,
            switches,
            events: 0,
            sim_time_ns: 1,
            stop: StopReason::TimeLimit,
            seed: 1,
        };
        let mut r = vec![p(0, 3, 10), p(1, 1, 40), p(2, 2, 20), p(3, 2, 20), p(4, 1, 30)];
        let picked: Vec<usize> = within_budget(&r, 2).iter().map(|r| r.index).collect();
        assert_eq!(picked, [2, 3, 4, 1]);
        // A target starved at the end (a wait open for longer than the
        // budget) does not meet it, however good its finished delays look.
        let mut starved = p(5, 0, 1);
        (starved.open_count, starved.open_max_ns) = (1, 3);
        let with_starved = [r.clone(), vec![starved]].concat();
        let picked: Vec<usize> = within_budget(&with_starved, 2).iter().map(|r| r.index).collect();
        assert_eq!(picked, [2, 3, 4, 1]);
        sort_by_metric(&mut r);
        let order: Vec<usize> = r.iter().map(|r| r.index).collect();
        assert_eq!(order, [4, 1, 2, 3, 0]);
    }

    /// A point's max counts the target's wait still open at the end when it
    /// is the longest, and the open wait is carried to the table and lines.
    #[test]
    fn a_point_counts_the_wait_still_open_at_the_end() {
        let toml = r#"
            schema = 1
            seed = 1
            duration = "59ms"
            [kernel]
            version = "4.4"
            [machine]
            cpus = 1
            hz = 100
            [features]
            WAKEUP_PREEMPTION = false
            [report]
            victim = "s"
            [[tasks]]
            name = "s"
            iterations = 1
            program = [{ sleep = "4ms" }, { run = "50us" }, { sleep_until = "51ms" }, { run = "50us" }]
            [[tasks]]
            name = "hog"
            program = [{ run = "1s" }]
        "#;
        let base = Scenario::from_toml("t.toml", toml).unwrap();
        let grid = Grid::new(vec![Axis::parse("seed=1,2").unwrap()]).unwrap();
        let r = run_point(&base, &grid, 0, Metric::Max).unwrap();
        assert_eq!((r.open_count, r.open_max_ns), (1, 8_000_000), "{r:?}");
        assert_eq!((r.max_ns, r.metric_ns), (8_000_000, 8_000_000), "{r:?}");
        assert!(within_budget(&[r], 7_000_000).is_empty());
    }

    /// `request-p99` ranks by the end-to-end latency of the first source
    /// with hops; the other columns stay the target's scheduling delays.
    #[test]
    fn request_p99_ranks_by_end_to_end_latency() {
        assert_eq!(Metric::parse("request-p99"), Ok(Metric::RequestP99));
        assert!(Metric::parse("request").unwrap_err().contains("request-p99"));
        let toml = r#"
            schema = 1
            seed = 1
            duration = "50ms"
            [machine]
            cpus = 1
            [[tasks]]
            name = "a"
            program = ["serve"]
            forward = "b"
            [[tasks]]
            name = "b"
            program = ["serve"]
            hop_work = "300us"
            [[sources]]
            name = "req"
            target = "a"
            interval = "1ms"
            work = "100us"
        "#;
        let base = Scenario::from_toml("t.toml", toml).unwrap();
        let grid = Grid::new(vec![Axis::parse("seed=1").unwrap()]).unwrap();
        let r = run_point(&base, &grid, 0, Metric::RequestP99).unwrap();
        let report = crate::report::run_to_report(&base);
        assert_eq!(r.metric_ns, report.requests[0].latency.p99_ns);
        assert!(r.metric_ns >= 390_000 && r.p99_ns < r.metric_ns, "{r:?}");
    }
}
