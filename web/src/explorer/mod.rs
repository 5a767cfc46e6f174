//! The explorer's state between calls from the page: the run in progress
//! (advanced in chunks so the page stays responsive), the latest finished
//! report, and the pinned baseline the charts compare it with. Everything
//! here is plain Rust, tested natively; `lib.rs` only binds it for JS.
//!
//! The page runs the simulation in a Web Worker (web/www/worker.js: its own
//! `Explorer`, `start`/`step`/`finish`), and draws on the main thread: each
//! report reaches the page as a [`View`] (chart data, table figures, the
//! summary's words) in JSON, which the page's `Explorer` loads with
//! [`Explorer::load_view`] after [`Explorer::prepare`] named its source.

use crate::controls;

mod band;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sim_core::{
    Bands, CurveBand, DelayChart, EventBudget, IoChart, LatencySummary, LimiterChart, OccupancyChart, RunReport,
    Scenario, ScenarioError, Secs, Simulation, StopReason, Timeline, io_charts, limiter_charts, partial_warning,
    report_json,
};

/// Splits the page's overrides, one `key=value` per line as after `--set`.
pub fn parse_overrides(text: &str) -> Result<Vec<(&str, &str)>, String> {
    let mut pairs = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("override `{line}`: expected KEY=VALUE, e.g. cfs.sched_latency_ns=6ms"))?;
        pairs.push((k.trim(), v.trim()));
    }
    Ok(pairs)
}

/// The scenario as the page asks for it: the file and variant, the same
/// with the overrides applied, the overrides applied, and a note for each
/// one dropped (see [`applicable`]).
pub struct Built<'a> {
    pub base: Scenario,
    pub cur: Scenario,
    pub applied: Vec<(&'a str, &'a str)>,
    pub notes: Vec<String>,
}

/// The scenario as the page asks for it (file, variant, overrides), or the
/// error as the page shows it.
pub fn build<'a>(file: &str, toml: &str, variant: Option<&str>, overrides: &'a str) -> Result<Built<'a>, Value> {
    let plain = Scenario::from_toml(file, toml).map_err(|e| error_json(&e))?;
    let base = match variant {
        Some(v) if !v.is_empty() => plain.with_variant(v).map_err(|e| error_json(&e))?,
        _ => plain.clone(),
    };
    let pairs = parse_overrides(overrides)
        .map_err(|m| json!({ "file": file, "key": "", "origin": "override", "message": m, "text": m }))?;
    let (applied, notes) = applicable(&plain, &base, pairs);
    let cur =
        if applied.is_empty() { base.clone() } else { base.with_overrides(&applied).map_err(|e| error_json(&e))? };
    Ok(Built { base, cur, applied, notes })
}

/// The scenario as the page asks for it, over `phases` tick phases and
/// `seeds` seeds, run point by point: point 0's report JSON with the
/// `bands` object, the bytes of `sim-cli run FILE --phases N --seeds K
/// --json`; or the error's text.
pub fn bands_report(
    file: &str,
    toml: &str,
    variant: Option<&str>,
    overrides: &str,
    phases: u32,
    seeds: u32,
) -> Result<String, String> {
    let plan = sim_core::BandPlan::new(phases, seeds)?;
    let text = |v: Value| v["text"].as_str().unwrap_or("the scenario was refused").to_string();
    let built = build(file, toml, variant, overrides).map_err(text)?;
    let (reports, b) = sim_core::run_bands(&built.cur, &plan).map_err(|e| e.to_string())?;
    Ok(sim_core::report_json_with_bands(&reports[0], &b) + "\n")
}

/// The overrides to apply to a variant, and a note for each one dropped:
/// a setting of the file's kernel model that the variant's model lacks
/// (`KernelModel::lacks_setting`: a 4.4 CFS slider, then Compare, whose
/// variants run 6.18) is not applied to that run, which says so (`cfs.sched_latency_ns
/// not in Linux 6.18 (EEVDF): not applied`). It stays an error when the
/// overrides choose the kernel themselves, or the file's own model lacks it.
pub fn applicable<'a>(
    plain: &Scenario,
    variant: &Scenario,
    pairs: Vec<(&'a str, &'a str)>,
) -> (Vec<(&'a str, &'a str)>, Vec<String>) {
    let (from, to) = (plain.spec.kernel, variant.spec.kernel);
    if from == to || pairs.iter().any(|(k, _)| *k == "kernel.version") {
        return (pairs, Vec::new());
    }
    let (dropped, kept): (Vec<_>, Vec<_>) =
        pairs.into_iter().partition(|(k, _)| to.lacks_setting(k) && !from.lacks_setting(k));
    let notes = dropped.iter().map(|(k, _)| format!("{k} not in {}: not applied", to.describe())).collect();
    (kept, notes)
}

/// A scenario error as the page shows it inline: file, key, origin, message.
pub fn error_json(e: &ScenarioError) -> Value {
    let text = e.to_string();
    let (origin, message) = match e {
        ScenarioError::Syntax { message, .. } => ("file".to_string(), format!("TOML syntax error: {message}")),
        ScenarioError::Invalid { origin, message, .. } => (
            match origin {
                sim_core::Origin::File => "file".to_string(),
                sim_core::Origin::Variant(v) => format!("variant {v}"),
                sim_core::Origin::Override => "override".to_string(),
            },
            message.clone(),
        ),
        _ => ("input".to_string(), text.clone()),
    };
    let file = match e {
        ScenarioError::Syntax { file, .. } | ScenarioError::Invalid { file, .. } => file.clone(),
        _ => String::new(),
    };
    json!({ "file": file, "key": e.key(), "origin": origin, "message": message, "text": text })
}

/// The name a scenario edited in the page goes by in errors and legends:
/// its `name = "…"` if the text declares one before its first table, else
/// what it was based on (`edited scenario (based on scenarios/jmx.toml)`).
pub fn edited_name(toml: &str, based_on: &str) -> String {
    let declared = toml
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| {
            l.strip_prefix("name")?.trim_start().strip_prefix('=')?.trim().strip_prefix('"')?.split_once('"')
        })
        .map(|(name, _)| name.trim())
        .find(|name| !name.is_empty() && !name.contains('\\'));
    match (declared, based_on.is_empty()) {
        (Some(name), _) => format!("{name} (edited)"),
        (None, false) => format!("edited scenario (based on {based_on})"),
        (None, true) => "edited scenario".to_string(),
    }
}

/// Which scenario a run came from: a baseline is only comparable with runs
/// of the same scenario text (variants and overrides may differ).
#[derive(Clone, Debug, PartialEq)]
struct Source {
    file: String,
    text: String,
    /// The scenario's `name`, or the file when it has none.
    name: String,
    variant: Option<String>,
    overrides: Vec<(String, String)>,
}

impl Source {
    fn same_scenario(&self, other: &Source) -> bool {
        self.file == other.file && self.text == other.text
    }

    /// `baseline: jmx, variant tuned, sched_latency_ns="9.6ms"`: what a
    /// legend or a table calls the pinned run. Overrides are named by their
    /// last key segment; more than two are only counted.
    fn label(&self) -> String {
        let mut s = format!("baseline: {}", self.name);
        if let Some(v) = &self.variant {
            s += &format!(", variant {v}");
        }
        match self.overrides.as_slice() {
            [] => {}
            few @ ([_] | [_, _]) => {
                for (k, v) in few {
                    let short = k.rsplit('.').next().unwrap_or(k);
                    s += &format!(", {short}={v}");
                }
            }
            many => s += &format!(", {} overrides", many.len()),
        }
        s
    }
}

/// What the page shows of one report, computed where the run ran: the
/// series each chart draws, the figures of the tables, and the summary's
/// words about this run. It crosses from the Web Worker to the page as JSON
/// (`serde`); the report JSON itself travels beside it unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct View {
    /// The victim's name (the charts' titles).
    pub victim: String,
    /// The victim's delays, labelled `current` (relabelled for the baseline).
    pub delay: DelayChart,
    pub delay_summary: LatencySummary,
    /// The kernel model the run used, as `compare --kernels` names runs
    /// (`linux-6.18-eevdf`).
    pub model: String,
    pub events: u64,
    pub sim_time_ns: u64,
    /// A preview of a run still in progress.
    pub partial: bool,
    /// The summary's opening (`So far (…): `, `Partial report (…): ` or empty)
    /// and its words about this run (victim, worst delay, holder, I/O).
    pub summary_head: String,
    pub summary_body: String,
    /// Why a finished report is partial, in the CLI's words.
    pub notice: Option<String>,
    pub timeline: Option<Timeline>,
    pub occupancy: OccupancyChart,
    pub limiters: Vec<LimiterChart>,
    /// Each device's Q2D and Q2C, labelled `current: dev (elevator)`, and its
    /// Q2D figures for the table.
    pub io: Vec<IoChart>,
    pub io_q2d: Vec<LatencySummary>,
    /// The CPU table's rows (see `tables`).
    pub cpus: Vec<Value>,
    /// The victim's delay percentiles over `band_points` tick phases
    /// (`TaskBand::curve`; empty until the worker's band is done), and the
    /// chart's caption for it (`band::caption`).
    #[serde(default)]
    pub band: Vec<CurveBand>,
    #[serde(default)]
    pub band_points: u32,
    #[serde(default)]
    pub band_caption: String,
}

impl View {
    pub fn new(r: &RunReport, partial: bool) -> View {
        let v = &r.victim;
        let mut head = String::new();
        if partial {
            head += &format!(
                "So far ({:.2} s of {:.2} s simulated): ",
                r.sim_time_ns as f64 / 1e9,
                r.settings.duration_ns as f64 / 1e9
            );
        } else if let Some(why) = match r.stop {
            StopReason::EventLimit => Some("the event budget ran out"),
            StopReason::Stalled => Some("simulated time stalled"),
            _ => None,
        } {
            head += &format!(
                "Partial report ({} s of {} s simulated; {why}): ",
                Secs(r.sim_time_ns),
                Secs(r.settings.duration_ns)
            );
        }
        let timeline = Timeline::from_report(r);
        let mut body = format!("{}: worst scheduling delay {}", v.name, max_ms(&v.delay));
        // `worst` is the longest finished wait: it describes the maximum
        // shown only when no open wait is longer.
        if let Some(w) = v.worst.as_ref().filter(|_| v.delay.max_ns > 0 && !v.delay.worst_is_open()) {
            body += &format!(" ({} on CPU {} at {:.6} s", w.kind.name(), w.cpu, w.start_ns as f64 / 1e9);
            if let Some((who, ns)) = timeline.as_ref().and_then(holder) {
                body += &format!("; CPU held by {who} for {} of it", ms(ns));
            }
            body += ")";
        }
        body += &format!(", p99 {}, {} delays", ms(v.delay.p99_ns), v.delay.count);
        body += &io_summary(r);
        let notice = if partial {
            None
        } else {
            partial_warning(r).and_then(|w| {
                let mut chars = w.chars();
                let first = chars.next()?;
                Some(format!("{}{}.", first.to_uppercase(), chars.as_str()))
            })
        };
        let occupancy = OccupancyChart::from_report(r);
        // Per CPU: busy share, balance gap, migrations, and its occupancy
        // row (socket, core, thread, isolated) for the table.
        let cpus = r
            .cpus
            .iter()
            .map(|c| {
                let row = occupancy.rows.iter().find(|x| x.cpu == c.cpu);
                json!({
                    "cpu": c.cpu,
                    "label": row.map(|x| x.label.clone()).unwrap_or_else(|| format!("cpu {}", c.cpu)),
                    "isolated": row.is_some_and(|x| x.isolated),
                    "busy_ns": c.busy_ns,
                    "sim_time_ns": r.sim_time_ns,
                    "switches": c.switches,
                    "migrations_in": c.migrations_in,
                    "migrations_out": c.migrations_out,
                    "balance_gap_ns": c.balance_gap_ns,
                })
            })
            .collect();
        View {
            victim: v.name.clone(),
            delay: DelayChart::from_report(r, "current"),
            delay_summary: v.delay,
            model: r.settings.kernel.label(),
            events: r.events,
            sim_time_ns: r.sim_time_ns,
            partial,
            summary_head: head,
            summary_body: body,
            notice,
            timeline,
            occupancy,
            limiters: limiter_charts(r),
            io: io_charts(r, "current"),
            io_q2d: r.io.as_ref().map(|io| io.devices.iter().map(|d| d.q2d).collect()).unwrap_or_default(),
            cpus,
            band: Vec::new(),
            band_points: 0,
            band_caption: String::new(),
        }
    }

    /// Takes the victim's band from `b`, over `points` runs.
    pub fn set_band(&mut self, b: &Bands, points: u32) {
        let Some(t) = b.tasks.iter().find(|t| t.name == self.victim) else { return };
        self.band = t.curve.clone();
        self.band_points = points;
        self.band_caption = band::caption(points, &t.stats);
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The view as the worker sent it; `None` for text that is not one.
    pub fn from_json(text: &str) -> Option<View> {
        serde_json::from_str(text).ok()
    }

    /// This run's delays, under another label (a legend entry).
    fn delay_chart(&self, label: &str) -> DelayChart {
        DelayChart { label: label.to_string(), ..self.delay.clone() }
    }

    /// Each device's Q2D and Q2C, labelled as `io_charts` labels them.
    pub fn io_charts(&self, label: &str) -> Vec<IoChart> {
        self.io
            .iter()
            .map(|c| IoChart { label: format!("{label}: {} ({})", c.device, c.elevator), ..c.clone() })
            .collect()
    }

    /// The figures of one row of the page's compare table.
    pub fn figures(&self) -> Value {
        json!({
            "victim": self.victim, "model": self.model, "events": self.events, "sim_time_ns": self.sim_time_ns,
            "partial": self.partial, "delay": percentiles(&self.delay_summary),
        })
    }
}

#[derive(Default)]
pub struct Explorer {
    run: Option<Simulation>,
    /// Where the run in progress, the current report and the baseline came from.
    run_source: Option<Source>,
    current_source: Option<Source>,
    current: Option<View>,
    /// `current` is a preview of the run still in progress.
    partial: bool,
    baseline: Option<(View, Source)>,
    /// The finished run's report (point 0 of a band), and the band in progress.
    last_report: Option<RunReport>,
    band: Option<band::BandRun>,
}

impl Explorer {
    /// Starts a run (dropping one in progress). Returns `{"ok": description}`
    /// for the controls, or `{"error": …}` and keeps the last report.
    ///
    /// A run of another scenario (another file, or edited text) clears the
    /// pinned baseline: its delays are not comparable with the new ones.
    pub fn start(&mut self, file: &str, toml: &str, variant: Option<&str>, overrides: &str) -> Value {
        self.begin(file, toml, variant, overrides, true)
    }

    /// `start` without the simulation: the description (or the error), the
    /// source the next loaded views belong to, and the baseline dropped on
    /// another scenario. The page calls it and runs the simulation in a
    /// worker, whose views it then loads (`load_view`).
    pub fn prepare(&mut self, file: &str, toml: &str, variant: Option<&str>, overrides: &str) -> Value {
        self.begin(file, toml, variant, overrides, false)
    }

    fn begin(&mut self, file: &str, toml: &str, variant: Option<&str>, overrides: &str, simulate: bool) -> Value {
        self.run = None;
        self.run_source = None;
        self.band = None;
        match build(file, toml, variant, overrides) {
            Ok(Built { base, cur, applied: pairs, notes }) => {
                let mut description = controls::describe(&base, &cur);
                description["notes"] = notes.into();
                if simulate {
                    self.run = Some(Simulation::new(&cur));
                }
                let source = Source {
                    file: file.to_string(),
                    text: toml.to_string(),
                    name: if cur.spec.name.is_empty() { file.to_string() } else { cur.spec.name.clone() },
                    variant: cur.variant().map(str::to_string),
                    overrides: pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect(),
                };
                if self.baseline.as_ref().is_some_and(|(_, b)| !b.same_scenario(&source)) {
                    self.baseline = None;
                }
                self.run_source = Some(source);
                json!({ "ok": description })
            }
            Err(e) => json!({ "error": e }),
        }
    }

    /// Advances the run by at most `events` events; returns its progress in
    /// [0, 1] (1 once it has stopped), or -1 with no run in progress.
    ///
    /// Progress is the larger of the simulated time and the event budget
    /// used: an explosive scenario, whose clock barely moves, still shows how
    /// close it is to stopping at `events_max`.
    pub fn step(&mut self, events: u64) -> f64 {
        let Some(sim) = &mut self.run else { return -1.0 };
        if sim.advance(EventBudget(events.max(1))).is_final() {
            return 1.0;
        }
        let spec = sim.spec();
        let time = sim.now().ns() as f64 / spec.duration_ns.max(1) as f64;
        let budget = sim.events() as f64 / spec.events_max.max(1) as f64;
        time.max(budget).min(0.999)
    }

    /// Ends the run: its report becomes the current one. Returns the report
    /// as `sim-cli run --json` prints it.
    pub fn finish(&mut self) -> Option<String> {
        let sim = self.run.take()?;
        let report = sim.report();
        let json = report_json(&report) + "\n";
        self.current = Some(View::new(&report, false));
        self.last_report = Some(report);
        self.current_source = self.run_source.take();
        self.partial = false;
        Some(json)
    }

    /// Makes a view computed elsewhere (the worker's `finish` or `preview`)
    /// the current report, from the source `prepare` named. A final view
    /// ends that source's run; false (nothing changed) for text that is not
    /// a view, or with nothing prepared.
    pub fn load_view(&mut self, json: &str) -> bool {
        let Some(view) = View::from_json(json) else { return false };
        let Some(source) = &self.run_source else { return false };
        self.current_source = Some(source.clone());
        if !view.partial {
            self.run_source = None;
        }
        self.partial = view.partial;
        self.current = Some(view);
        true
    }

    /// Takes the band of a view the worker sent (`band_step` done) into the
    /// current finished report, which is the band's point 0; false for text
    /// that is not a view, or with no finished report of the same victim.
    pub fn load_band(&mut self, json: &str) -> bool {
        let Some(v) = View::from_json(json) else { return false };
        match &mut self.current {
            Some(cur) if !self.partial && cur.victim == v.victim && v.band_points > 0 => {
                cur.band = v.band;
                cur.band_points = v.band_points;
                cur.band_caption = v.band_caption;
                true
            }
            _ => false,
        }
    }

    /// Makes the run in progress, so far, the current report, so the charts
    /// can show where a change is heading long before a long run ends.
    /// `finish` replaces it; `pin` refuses it. False with no run.
    pub fn preview(&mut self) -> bool {
        let Some(sim) = &self.run else { return false };
        self.current = Some(View::new(&sim.report(), true));
        self.current_source.clone_from(&self.run_source);
        self.partial = true;
        true
    }

    pub fn cancel(&mut self) {
        self.run = None;
        self.band = None;
    }

    /// Events simulated so far by the run in progress (0 with none).
    pub fn events(&self) -> u64 {
        self.run.as_ref().map_or(0, Simulation::events)
    }

    /// Pins the current report as the baseline; false if there is none or
    /// it is only a preview.
    pub fn pin(&mut self) -> bool {
        if self.partial {
            return false;
        }
        self.baseline = self.current.clone().zip(self.current_source.clone());
        self.baseline.is_some()
    }

    pub fn unpin(&mut self) {
        self.baseline = None;
    }

    pub fn current(&self) -> Option<&View> {
        self.current.as_ref()
    }

    pub fn baseline(&self) -> Option<&View> {
        self.baseline.as_ref().map(|(r, _)| r)
    }

    /// What legends and tables call the baseline: its scenario, variant and
    /// overrides (`baseline: jmx, variant tuned`).
    pub fn baseline_label(&self) -> Option<String> {
        self.baseline.as_ref().map(|(_, s)| s.label())
    }

    /// The current run and the baseline, each with its label.
    fn runs(&self) -> Vec<(String, &View)> {
        let mut out = Vec::new();
        if let Some(r) = &self.current {
            out.push(("current".to_string(), r));
        }
        if let Some((r, s)) = &self.baseline {
            out.push((s.label(), r));
        }
        out
    }

    /// The delay series to draw: current first, then the baseline.
    pub fn delay_charts(&self) -> Vec<DelayChart> {
        self.runs().into_iter().map(|(label, r)| r.delay_chart(&label)).collect()
    }

    /// Why the finished run's report is partial (its event budget ran out,
    /// or simulated time stalled), in the CLI's words; `None` for a complete
    /// report or a preview (which the summary already calls "so far").
    pub fn notice(&self) -> Option<String> {
        if self.partial {
            return None;
        }
        self.current.as_ref()?.notice.clone()
    }

    /// The one-line summary the page announces (`aria-live`).
    pub fn summary(&self) -> String {
        let Some(r) = &self.current else { return String::new() };
        let mut s = format!("{}{}", r.summary_head, r.summary_body);
        if let Some((b, source)) = &self.baseline {
            let label = source.label();
            let name = label.strip_prefix("baseline: ").unwrap_or(&label);
            s +=
                &format!(". Baseline ({name}): worst {}, p99 {}", max_ms(&b.delay_summary), ms(b.delay_summary.p99_ns));
        }
        s + "."
    }

    /// The numbers behind every chart, for the page's tables.
    pub fn tables(&self) -> Value {
        let runs = self.runs();
        let delay: Vec<Value> = runs
            .iter()
            .map(|(label, r)| {
                let bars: Vec<Value> = r
                    .delay
                    .histogram
                    .iter()
                    .map(|b| json!({ "low_ns": b.low_ns, "high_ns": b.high_ns, "count": b.count }))
                    .collect();
                json!({ "label": label, "summary": percentiles(&r.delay_summary), "histogram": bars })
            })
            .collect();
        let timeline = self.current.as_ref().and_then(|r| r.timeline.as_ref()).map(|t| {
            let span = |s: &sim_core::Span| json!({ "task": t.rows[s.row], "start_ns": s.start_ns, "end_ns": s.end_ns });
            json!({
                "cpu": t.cpu,
                "running": t.running.iter().map(span).collect::<Vec<_>>(),
                "runnable": t.runnable.iter().map(span).collect::<Vec<_>>(),
                "wakeups": t.wakeups.iter().map(|w| json!({ "task": t.rows[w.row], "at_ns": w.at_ns, "preempt": w.preempt })).collect::<Vec<_>>(),
                "lag": t.lag.iter().map(|l| json!({ "task": t.rows[l.row], "at_ns": l.at_ns, "lag_ns": l.lag_ns })).collect::<Vec<_>>(),
                // The table: every span and wakeup once, in time order.
                "entries": t.entries().iter().map(|e| json!({
                    "task": t.rows[e.row], "start_ns": e.start_ns, "end_ns": e.end_ns, "state": e.state.label(),
                })).collect::<Vec<_>>(),
                // The chart's colour key, for the HTML key beside the canvas.
                "key": sim_core::draw::timeline_key(t).iter().map(|k| json!({
                    "label": k.label, "colour": k.colour_hex(), "glyph": format!("{:?}", k.glyph),
                })).collect::<Vec<_>>(),
            })
        });
        let io: Vec<Value> = runs
            .iter()
            .flat_map(|(label, r)| {
                r.io_charts(label)
                    .into_iter()
                    .zip(&r.io_q2d)
                    .map(|(c, q)| json!({ "label": c.label, "summary": percentiles(q) }))
            })
            .collect();
        let cpus = self.current.as_ref().map(|r| r.cpus.clone()).unwrap_or_default();
        let occupancy = self.current.as_ref().map(|r| {
            let c = &r.occupancy;
            json!({ "rows": c.rows.len(), "buckets": c.buckets(), "bucket_ns": c.bucket_ns })
        });
        json!({ "delay": delay, "timeline": timeline, "io": io, "cpus": cpus, "occupancy": occupancy })
    }

    /// The current run's figures for the compare table (`View::figures`).
    pub fn figures(&self) -> Option<Value> {
        self.current.as_ref().map(View::figures)
    }

    /// The current view as JSON, for the page (the worker's side).
    pub fn view_json(&self) -> Option<String> {
        self.current.as_ref().map(View::to_json)
    }
}

/// A summary for the page's tables; `open_*`: waits still open at the end,
/// not in the other figures (the page shows them next to the maximum).
fn percentiles(s: &LatencySummary) -> Value {
    json!({
        "count": s.count, "p50_ns": s.p50_ns, "p90_ns": s.p90_ns, "p99_ns": s.p99_ns, "p999_ns": s.p999_ns,
        "max_ns": s.max_ns, "open_count": s.open_count, "open_max_ns": s.open_max_ns,
    })
}

fn ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

/// A maximum counting the waits still open at the end, as the CLI writes it.
fn max_ms(s: &LatencySummary) -> String {
    s.max_text(ms)
}

/// The I/O part of the summary: the victim's longest stall on I/O, and each
/// device's longest Q2D and whose bio it was.
fn io_summary(r: &RunReport) -> String {
    let Some(io) = &r.io else { return String::new() };
    let mut s = String::new();
    let stall =
        r.tasks.iter().filter(|t| t.name == r.victim.name).filter_map(|t| t.io_stall).max_by_key(|l| l.worst_ns());
    if let Some(l) = stall {
        s += &format!("; longest I/O stall {}", max_ms(&l));
    }
    for d in &io.devices {
        if let Some(w) = &d.worst {
            let open = if w.open { " (still queued)" } else { "" };
            s += &format!("; {} ({}) worst Q2D {}{open}, {}", d.name, d.elevator, ms(w.q2d_ns), w.comm);
        }
    }
    s
}

/// The task that ran longest on the victim's CPU during its worst delay.
fn holder(t: &Timeline) -> Option<(String, u64)> {
    let mut per_row = vec![0u64; t.rows.len()];
    for s in &t.running {
        let overlap = s.end_ns.min(t.worst.end_ns).saturating_sub(s.start_ns.max(t.worst.start_ns));
        per_row[s.row] += overlap;
    }
    let (row, ns) = per_row.iter().enumerate().max_by_key(|&(i, &ns)| (ns, std::cmp::Reverse(i)))?;
    (*ns > 0).then(|| (t.rows[row].clone(), *ns))
}

#[cfg(test)]
mod tests;
