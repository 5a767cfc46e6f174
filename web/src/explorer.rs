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
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sim_core::{
    DelayChart, EventBudget, IoChart, LatencySummary, LimiterChart, OccupancyChart, RunReport, Scenario, ScenarioError,
    Secs, Simulation, StopReason, Timeline, io_charts, limiter_charts, partial_warning, report_json,
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
        }
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
mod tests {
    use super::*;

    const TOML: &str = "schema = 1\nseed = 3\nduration = \"200ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 250\n[features]\nWAKEUP_PREEMPTION = false\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n[[tasks]]\nname = \"s\"\nsession = \"x\"\nprogram = [{ sleep = \"exp(5ms)\" }, { run = \"50us\" }]\n[variants.fast]\n\"machine.hz\" = 1000\n";

    #[test]
    fn chunked_run_reports_what_one_call_does() {
        let mut e = Explorer::default();
        let d = e.start("t.toml", TOML, Some("fast"), "seed=9\n");
        assert_eq!(d["ok"]["variants"][0], "fast");
        let mut chunks = 0;
        while e.step(20) < 1.0 {
            chunks += 1;
            assert!(chunks < 100_000);
            if chunks == 5 {
                assert!(e.preview());
                // 100 events in: partway through the 0.2 s (how far depends on how
                // many ticks are elided).
                assert!(e.summary().starts_with("So far (0.") && e.summary().contains("of 0.20 s"), "{}", e.summary());
                assert!(!e.pin(), "a preview cannot be pinned");
            }
        }
        assert!(chunks > 5, "the run took several chunks");
        let json = e.finish().unwrap();
        let s = Scenario::from_toml("t.toml", TOML).unwrap().with_variant("fast").unwrap();
        let s = s.with_overrides(&[("seed", "9")]).unwrap();
        assert_eq!(json, report_json(&sim_core::run(&s)) + "\n");
        assert_eq!(e.step(1), -1.0, "no run in progress");
        assert!(e.pin());
        assert!(e.summary().starts_with("s: worst scheduling delay "), "{}", e.summary());
        assert!(e.summary().contains("CPU held by hog"), "{}", e.summary());
        assert!(e.summary().contains("Baseline (t.toml, variant fast, seed=9): worst"), "{}", e.summary());
        assert!(!e.summary().contains("Q2D"), "no devices, no I/O summary");
        let t = e.tables();
        assert_eq!(t["delay"].as_array().map(Vec::len), Some(2));
        assert_eq!(t["delay"][0]["summary"]["count"], t["delay"][1]["summary"]["count"]);
    }

    /// Compare after a 4.4 slider: a variant that runs another model gets
    /// the overrides its model has, and a note for each one it lacks, not
    /// an error row. Its run is the variant's without that override, and
    /// its figures name its model. An override its own file's model lacks,
    /// a misspelt feature, or a kernel chosen by the overrides themselves
    /// stay errors.
    #[test]
    fn a_setting_the_variants_model_lacks_is_not_applied_with_a_note() {
        let text = format!("{TOML}[variants.new]\n\"kernel.version\" = \"6.18\"\n");
        let sets = "cfs.sched_latency_ns=\"6ms\"\nfeatures.START_DEBIT=false\nseed=9";
        let mut e = Explorer::default();
        let d = e.start("t.toml", &text, Some("new"), sets);
        assert_eq!(
            d["ok"]["notes"],
            json!([
                "cfs.sched_latency_ns not in Linux 6.18 (EEVDF): not applied",
                "features.START_DEBIT not in Linux 6.18 (EEVDF): not applied"
            ]),
            "{d}"
        );
        while e.step(100_000) < 1.0 {}
        let json = e.finish().unwrap();
        let s = Scenario::from_toml("t.toml", &text).unwrap().with_variant("new").unwrap();
        assert_eq!(json, report_json(&sim_core::run(&s.with_overrides(&[("seed", "9")]).unwrap())) + "\n");
        assert_eq!(e.figures().unwrap()["model"], "linux-6.18-eevdf");
        assert!(e.pin());
        assert_eq!(e.baseline_label().as_deref(), Some("baseline: t.toml, variant new, seed=9"));
        // The base and the 4.4 variant take every override, with no note.
        for variant in [None, Some("fast")] {
            let d = e.start("t.toml", &text, variant, sets);
            assert_eq!(d["ok"]["notes"], json!([]), "{variant:?}: {d}");
            while e.step(100_000) < 1.0 {}
            e.finish().unwrap();
            assert_eq!(e.figures().unwrap()["model"], "linux-4.4-cfs");
        }
        let refused = [
            (text.clone(), "features.START_DEBTI=false", "features.START_DEBTI"),
            (text.clone(), "cfs.sched_latency_ns=\"6ms\"\nkernel.version=\"6.18\"", "cfs.sched_latency_ns"),
            (text.replace("version = \"4.4\"", "version = \"6.6\""), sets, "cfs.sched_latency_ns"),
        ];
        for (text, sets, key) in refused {
            let r = e.start("t.toml", &text, Some("new"), sets);
            assert_eq!(r["error"]["key"], key, "{sets}: {r}");
        }
    }

    /// The page runs in a worker and draws on the main thread: a view sent
    /// as JSON and loaded into another Explorer reads exactly as the
    /// explorer that ran it (summary, tables, charts, notice, pin), previews
    /// included; text that is not a view, or a view with nothing prepared,
    /// changes nothing.
    #[test]
    fn a_view_loaded_from_the_worker_reads_as_the_run_itself() {
        let text = include_str!("../../scenarios/cfq-starvation.toml");
        let (mut worker, mut page) = (Explorer::default(), Explorer::default());
        assert!(!page.load_view("{}"), "nothing prepared");
        let d = page.prepare("cfq-starvation.toml", text, Some("cfq-4.4"), "seed=4");
        assert!(d.get("ok").is_some(), "{d}");
        assert_eq!(page.step(1), -1.0, "prepare starts no simulation");
        assert_eq!(d, worker.start("cfq-starvation.toml", text, Some("cfq-4.4"), "seed=4"), "the same description");
        assert!(worker.step(1_000) < 1.0, "a run of more than a chunk");
        assert!(worker.events() > 0);
        assert!(worker.preview());
        assert!(page.load_view(&worker.view_json().unwrap()));
        assert!(page.summary().starts_with("So far ("), "{}", page.summary());
        assert_eq!(page.summary(), worker.summary());
        assert!(!page.pin(), "a preview cannot be pinned");
        while worker.step(1_000_000) < 1.0 {}
        worker.finish().unwrap();
        assert!(!page.load_view("not json") && !page.load_view("{\"victim\": 3}"));
        assert!(page.load_view(&worker.view_json().unwrap()));
        assert_eq!(page.current(), worker.current());
        assert_eq!(
            (page.summary(), page.tables(), page.notice()),
            (worker.summary(), worker.tables(), worker.notice())
        );
        assert!(page.tables()["io"].as_array().is_some_and(|io| !io.is_empty()));
        // Pinned on the page, the baseline labels the next run's legends.
        assert!(page.pin());
        page.prepare("cfq-starvation.toml", text, None, "");
        worker.start("cfq-starvation.toml", text, None, "");
        while worker.step(1_000_000) < 1.0 {}
        worker.finish().unwrap();
        assert!(page.load_view(&worker.view_json().unwrap()));
        assert!(
            page.summary().contains(". Baseline (cfq-starvation, variant cfq-4.4, seed=4): worst"),
            "{}",
            page.summary()
        );
        assert_eq!(page.tables()["io"].as_array().map(Vec::len), Some(2), "current and baseline Q2D rows");
        let f = page.figures().unwrap();
        assert_eq!(f["events"], worker.current().unwrap().events);
        assert_eq!(f["partial"], false);
        assert!(!page.load_view(&worker.view_json().unwrap()), "a final view ends the prepared run");
    }

    /// The page's Q2D table and summary get the waits still open at the
    /// end: under 4.4's CFQ the flusher's write has waited 19.9 s, never
    /// dispatched, while the finished Q2Ds are all 0 ns.
    /// When the longest wait is still open, the summary does not describe
    /// the longest finished wait (CPU, time, holder) as if it were that one.
    #[test]
    fn an_open_worst_wait_is_not_explained_by_a_finished_one() {
        let toml = "schema = 1\nseed = 1\nduration = \"59ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 100\n[features]\nWAKEUP_PREEMPTION = false\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"s\"\niterations = 1\nprogram = [{ sleep = \"4ms\" }, { run = \"50us\" }, { sleep_until = \"51ms\" }, { run = \"50us\" }]\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n";
        let mut e = Explorer::default();
        assert!(e.start("t.toml", toml, None, "").get("ok").is_some());
        while e.step(100_000) < 1.0 {}
        e.finish().unwrap();
        let summary = e.summary();
        assert!(summary.contains("> 8.00 ms, still waiting at end"), "{summary}");
        assert!(!summary.contains(" on CPU "), "{summary}");
    }

    #[test]
    fn q2d_table_and_summary_count_the_writes_still_queued() {
        let mut e = Explorer::default();
        let text = include_str!("../../scenarios/cfq-starvation.toml");
        assert!(e.start("cfq-starvation.toml", text, Some("cfq-4.4"), "").get("ok").is_some());
        while e.step(1_000_000) < 1.0 {}
        e.finish().unwrap();
        let q = &e.tables()["io"][0]["summary"];
        assert_eq!((q["max_ns"].as_u64(), q["open_max_ns"].as_u64()), (Some(0), Some(19_900_000_000)), "{q}");
        assert!(q["open_count"].as_u64().unwrap() > 0, "{q}");
        let summary = e.summary();
        assert!(summary.contains("longest I/O stall > 19899."), "{summary}");
        assert!(summary.contains(", still waiting at end"), "{summary}");
    }

    /// Issue 21 in the explorer: the elevators of the scenario's kernel, the device
    /// presets, and the userspace I/O queue's policy, limit and shares; the
    /// policy control changes the answer as the CLI's variant does (the
    /// reader's longest I/O stall: ~1 ms with the capacity limit, ~8 ms with
    /// max-io-requests = 32).
    #[test]
    fn io_controls_offer_blk_mq_presets_and_the_userspace_queue() {
        let text = include_str!("../../scenarios/scylla-io.toml");
        let mut e = Explorer::default();
        let d = e.start("scylla-io.toml", text, None, "");
        let elv = control(&d, "devices.ssd.elevator").expect("an elevator select");
        let names: Vec<&str> =
            elv["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect();
        // scylla-io runs under 6.18: the blk-mq elevators only (the legacy
        // ones were removed in 5.0).
        assert_eq!(names, ["\"none\"", "\"mq-deadline\"", "\"kyber\"", "\"bfq\""]);
        assert_eq!(elv["value"], "\"mq-deadline\"");
        let preset = control(&d, "devices.ssd.preset").expect("a preset select");
        assert_eq!(preset["value"], "\"sata-ssd\"");
        assert!(preset["options"].as_array().unwrap().iter().any(|o| o["value"] == "\"nvme-pm9a3\""));
        assert!(control(&d, "devices.ssd.mq-deadline.read_expire").is_some());
        let policy = control(&d, "io_queues.disk.policy").expect("the I/O queue's policy");
        assert_eq!(policy["value"], "\"capacity\"");
        assert_eq!(control(&d, "io_queues.disk.classes.latency_reads.shares").expect("shares")["value"], 100);
        assert!(control(&d, "io_queues.disk.max_io_requests").is_some());
        let stall = |e: &Explorer| {
            let s = e.summary();
            let at = s.find("longest I/O stall ").unwrap_or_else(|| panic!("{s}")) + "longest I/O stall ".len();
            s[at..].split_whitespace().next().unwrap().parse::<f64>().unwrap()
        };
        run_to_end(&mut e, "scylla-io.toml", text, None, "");
        let capacity = stall(&e);
        run_to_end(&mut e, "scylla-io.toml", text, None, "io_queues.disk.policy=\"max-io-requests\"");
        let fixed = stall(&e);
        assert!(capacity < 2.0 && fixed > 6.0, "capacity {capacity} ms, max-io-requests {fixed} ms");
        // Switching the elevator to a blk-mq scheduler keeps its tunables in view.
        let d = e.start("scylla-io.toml", text, None, "devices.ssd.elevator=\"kyber\"");
        assert!(control(&d, "devices.ssd.kyber.read_lat_nsec").is_some(), "{d}");
    }

    fn run_to_end(e: &mut Explorer, file: &str, text: &str, variant: Option<&str>, overrides: &str) {
        assert!(e.start(file, text, variant, overrides).get("ok").is_some());
        while e.step(100_000) < 1.0 {}
        e.finish().unwrap();
    }

    #[test]
    fn the_baseline_names_its_scenario_and_is_dropped_on_another_scenario() {
        let named = TOML.replacen("seed = 3", "name = \"sleeper\"\nseed = 3", 1);
        let mut e = Explorer::default();
        run_to_end(&mut e, "a.toml", &named, Some("fast"), "cfs.sched_latency_ns=\"6ms\"");
        assert!(e.pin());
        let label = "baseline: sleeper, variant fast, sched_latency_ns=\"6ms\"";
        assert_eq!(e.baseline_label().as_deref(), Some(label));
        // Another variant and other overrides of the same scenario keep the pin,
        // and every chart series and table column names where it came from.
        run_to_end(&mut e, "a.toml", &named, None, "seed=5\nmachine.hz=1000\ncfs.sched_latency_ns=\"3ms\"");
        assert_eq!(e.baseline_label().as_deref(), Some(label));
        let charts: Vec<String> = e.delay_charts().into_iter().map(|c| c.label).collect();
        assert_eq!(charts, ["current", label]);
        assert_eq!(e.tables()["delay"][1]["label"], label);
        assert!(
            e.summary().contains(". Baseline (sleeper, variant fast, sched_latency_ns=\"6ms\"): worst"),
            "{}",
            e.summary()
        );
        assert!(e.pin());
        assert_eq!(e.baseline_label().as_deref(), Some("baseline: sleeper, 3 overrides"));
        // Edited text is another scenario: the pin goes, even before the run ends.
        let edited = named.replace("exp(5ms)", "exp(6ms)");
        assert!(e.start("a.toml", &edited, None, "").get("ok").is_some());
        assert_eq!(e.baseline_label(), None);
        assert_eq!(e.delay_charts().len(), 1);
        // So does another file; a failed start changes nothing.
        run_to_end(&mut e, "a.toml", &edited, None, "");
        assert!(e.pin());
        assert!(e.start("a.toml", "schema = ", None, "").get("error").is_some());
        assert!(e.baseline().is_some(), "a broken text keeps the charts and their baseline");
        run_to_end(&mut e, "b.toml", &edited, None, "");
        assert!(e.baseline().is_none());
        assert!(!e.summary().contains("Baseline"), "{}", e.summary());
    }

    #[test]
    fn an_edited_scenario_goes_by_its_declared_name() {
        assert_eq!(edited_name("schema = 1\nname = \"jmx\" # x\n", "scenarios/jmx.toml"), "jmx (edited)");
        assert_eq!(
            edited_name("schema = 1\nseed = \n[[tasks]]\nname = \"hog\"\n", "scenarios/jmx.toml"),
            "edited scenario (based on scenarios/jmx.toml)"
        );
        assert_eq!(edited_name("name = 3", ""), "edited scenario");
        assert_eq!(edited_name("  name=\"x y\"", ""), "x y (edited)");
    }

    #[test]
    fn an_explosive_scenario_stops_at_its_budget_with_a_notice() {
        let text = include_str!("../../tests/explosive/flicker.toml");
        let mut e = Explorer::default();
        assert!(e.start("custom.toml", text, None, "").get("ok").is_some());
        // Simulated time barely moves; progress follows the event budget.
        let first = e.step(250_000);
        assert!((0.2..0.3).contains(&first), "progress after a quarter of the budget: {first}");
        let mut chunks = 0;
        while e.step(100_000) < 1.0 {
            chunks += 1;
            assert!(chunks < 100);
        }
        let json = e.finish().unwrap();
        let s = Scenario::from_toml("tests/explosive/flicker.toml", text).unwrap();
        assert_eq!(json, report_json(&sim_core::run(&s)) + "\n", "the CLI's bytes");
        let notice = e.notice().unwrap_or_default();
        assert!(
            notice.starts_with("The event budget (limits.events_max = 1000000) ran out at 0.0000")
                && notice.contains(" s of 10.000000 s: this report is partial (")
                && notice.ends_with(" events)."),
            "{notice}"
        );
        let summary = e.summary();
        assert!(
            summary.starts_with("Partial report (0.0000")
                && summary.contains("s simulated; the event budget ran out): flicker: worst scheduling delay"),
            "{summary}"
        );
        // A complete run has no notice.
        e.start("t.toml", TOML, None, "");
        while e.step(100_000) < 1.0 {}
        e.finish();
        assert_eq!(e.notice(), None);
        assert!(e.summary().starts_with("s: worst"), "{}", e.summary());
    }

    #[test]
    fn errors_name_file_key_and_origin() {
        let mut e = Explorer::default();
        let r = e.start("t.toml", TOML, None, "machine.hz=7");
        assert_eq!(r["error"]["key"], "machine.hz");
        assert_eq!(r["error"]["origin"], "override");
        assert_eq!(r["error"]["file"], "t.toml");
        assert!(r["error"]["message"].as_str().unwrap().contains("100, 250, 300 or 1000"));
        let r = e.start("bad.toml", "schema = 1\nseed = ", None, "");
        assert_eq!(r["error"]["file"], "bad.toml");
        assert!(r["error"]["message"].as_str().unwrap().contains("TOML syntax error"), "{r}");
        let r = e.start("t.toml", TOML, None, "cfs.sched_latency_ns");
        assert!(r["error"]["message"].as_str().unwrap().contains("expected KEY=VALUE"));
        assert_eq!(e.step(1), -1.0, "a failed start leaves no run");
    }

    #[test]
    fn controls_write_keys_the_core_accepts() {
        // Every control's current value, sent back as an override, is accepted
        // and changes nothing: the controls and the override keys agree,
        // under the scenario's own kernel and under each model.
        let kernels = std::iter::once(String::new())
            .chain(crate::kernel_versions().into_iter().map(|v| format!("kernel.version=\"{v}\"\n")));
        for (kernel, (file, text)) in kernels.flat_map(|k| crate::SCENARIOS.iter().map(move |s| (k.clone(), s))) {
            let mut e = Explorer::default();
            let d = e.start(file, text, None, &kernel);
            // A scenario naming an elevator the kernel lacks is refused
            // (`KernelModel::elevators`: cfq under 6.x, mq-deadline under 4.4).
            if d["error"]["key"].as_str().is_some_and(|k| k.ends_with(".elevator")) {
                assert!(!kernel.is_empty(), "{file} under its own kernel: {d}");
                continue;
            }
            let controls = d["ok"]["controls"].as_array().unwrap_or_else(|| panic!("{file}: {d}"));
            let mut lines = String::new();
            for c in controls {
                let v = &c["value"];
                let text = match c["kind"].as_str().unwrap() {
                    "select" => v.as_str().unwrap().to_string(),
                    "log-ns" => format!("\"{}ns\"", v.as_u64().unwrap()),
                    _ => v.to_string(),
                };
                if c["kind"] == "select" && text.is_empty() {
                    continue;
                }
                lines += &format!("{}={}\n", c["key"].as_str().unwrap(), text);
            }
            let again = e.start(file, text, None, &lines);
            let same: Vec<&Value> = again["ok"]["controls"]
                .as_array()
                .unwrap_or_else(|| panic!("{file}: {again}\n{lines}"))
                .iter()
                .collect();
            for (a, b) in controls.iter().zip(same) {
                assert_eq!(a["value"], b["value"], "{file}: {}", a["key"]);
            }
        }
    }

    fn control<'a>(d: &'a Value, key: &str) -> Option<&'a Value> {
        d["ok"]["controls"].as_array()?.iter().find(|c| c["key"] == key)
    }

    /// The kernel selector offers every model, preselects the scenario's own,
    /// and the tunables and features follow the model chosen: the CFS knobs
    /// on 4.4, base_slice_ns (its default scaled by the CPU count) and the
    /// model's EEVDF features on 6.x, each left alone sending no override.
    #[test]
    fn the_kernel_selector_switches_the_tunables_and_features_shown() {
        use sim_core::EevdfFeatures;
        use sim_core::KernelModel;
        let text = TOML.replace("cpus = 1", "cpus = 4");
        let mut e = Explorer::default();
        let d = e.start("t.toml", &text, None, "");
        let k = control(&d, "kernel.version").expect("a kernel selector");
        assert_eq!((k["value"].as_str(), k["default"].as_str()), (Some("\"4.4\""), Some("\"4.4\"")));
        assert_eq!(k["switches_model"], true);
        let options: Vec<&str> = k["options"].as_array().unwrap().iter().filter_map(|o| o["value"].as_str()).collect();
        assert_eq!(options, ["\"4.4\"", "\"6.6\"", "\"6.12\"", "\"6.18\""]);
        assert_eq!(d["ok"]["model"], "linux-4.4-cfs");
        let latency = control(&d, "cfs.sched_latency_ns").expect("CFS sliders on 4.4");
        assert_eq!(latency["model_specific"], true);
        assert!(control(&d, "cfs.base_slice_ns").is_none());
        assert!(control(&d, "features.GENTLE_FAIR_SLEEPERS").is_some());
        // 4 CPUs: factor 1 + ilog2(4) = 3.
        for (version, slice_ns) in [("6.6", 3 * 750_000), ("6.12", 3 * 750_000), ("6.18", 3 * 700_000)] {
            let model = KernelModel::parse(version).unwrap();
            let d = e.start("t.toml", &text, None, &format!("kernel.version=\"{version}\""));
            assert_eq!(d["ok"]["kernel"], version, "{d}");
            let k = control(&d, "kernel.version").unwrap();
            assert_eq!(
                (k["value"].as_str(), k["default"].as_str()),
                (Some(format!("\"{version}\"").as_str()), Some("\"4.4\""))
            );
            assert!(control(&d, "cfs.sched_latency_ns").is_none(), "{version}: no CFS knob");
            let slice = control(&d, "cfs.base_slice_ns").expect("base_slice on 6.x");
            assert_eq!(
                (slice["value"].as_u64(), slice["default"].as_u64()),
                (Some(slice_ns), Some(slice_ns)),
                "{version}"
            );
            let features: Vec<&str> = d["ok"]["controls"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|c| c["key"].as_str()?.strip_prefix("features."))
                .collect();
            assert_eq!(features, EevdfFeatures::names(model), "{version}");
            assert_eq!(crate::kernel_features(version).unwrap(), features);
            // The file's WAKEUP_PREEMPTION = false holds on 6.x too: value and
            // default agree, so the toggle left alone sends nothing.
            let wp = control(&d, "features.WAKEUP_PREEMPTION").unwrap();
            assert_eq!((wp["value"].as_bool(), wp["default"].as_bool()), (Some(false), Some(false)));
            let defaults = EevdfFeatures::defaults(model).iter(model);
            for (name, on) in defaults.into_iter().filter(|(n, _)| *n != "WAKEUP_PREEMPTION") {
                assert_eq!(control(&d, &format!("features.{name}")).unwrap()["default"], on, "{version} {name}");
            }
            // The run is the CLI's `--set kernel.version=X`.
            while e.step(100_000) < 1.0 {}
            let json = e.finish().unwrap();
            let s =
                Scenario::from_toml("t.toml", &text).unwrap().with_overrides(&[("kernel.version", version)]).unwrap();
            assert_eq!(json, report_json(&sim_core::run(&s)) + "\n");
            let v: Value = serde_json::from_str(&json).unwrap();
            assert_eq!(v["settings"]["kernel"], version);
        }
        assert_eq!(crate::kernel_features("4.4").unwrap(), sim_core::SchedFeatures::NAMES);
        assert_eq!(crate::kernel_features("5.10"), None);
        assert_eq!(crate::kernel_versions(), ["4.4", "6.6", "6.12", "6.18"]);
        // A CFS knob left over on 6.x is the core's error, named by its key.
        let r = e.start("t.toml", &text, None, "cfs.sched_latency_ns=\"6ms\"\nkernel.version=\"6.18\"");
        assert_eq!(r["error"]["key"], "cfs.sched_latency_ns", "{r}");
    }

    /// The machine controls: topology, isolcpus and nohz write `machine.*`
    /// keys; a bad combination is refused with the key at fault.
    #[test]
    fn machine_controls_write_topology_keys_and_bad_combos_name_their_key() {
        let text = include_str!("../../scenarios/two-hogs.toml");
        let mut e = Explorer::default();
        let d = e.start("two-hogs.toml", text, None, "");
        let keys: Vec<&str> =
            d["ok"]["controls"].as_array().unwrap().iter().filter_map(|c| c["key"].as_str()).collect();
        for k in [
            "machine.cpus",
            "machine.sockets",
            "machine.cores_per_socket",
            "machine.threads_per_core",
            "machine.numa_nodes",
            "machine.isolcpus",
            "machine.nohz",
        ] {
            assert!(keys.contains(&k), "{k} not offered: {keys:?}");
        }
        let cpus =
            d["ok"]["controls"].as_array().unwrap().iter().find(|c| c["key"] == "machine.cpus").unwrap()["value"]
                .as_u64()
                .unwrap();
        // Cores per socket that do not multiply to cpus: the core names machine.cpus.
        let r = e.start("two-hogs.toml", text, None, &format!("machine.cores_per_socket={}", cpus + 1));
        assert_eq!(r["error"]["key"], "machine.cpus", "{r}");
        assert_eq!(r["error"]["origin"], "override");
        let r = e.start("two-hogs.toml", text, None, &format!("machine.isolcpus=\"0-{}\"", cpus - 1));
        assert_eq!(r["error"]["key"], "machine.isolcpus", "{r}");
        let r = e.start("two-hogs.toml", text, None, "machine.cpus=4\nmachine.sockets=2\nmachine.numa_nodes=3");
        assert_eq!(r["error"]["key"], "machine.numa_nodes", "{r}");
    }

    /// The CPU table and the occupancy chart's size come with every report.
    #[test]
    fn tables_list_each_cpu_with_busy_time_gap_and_migrations() {
        let toml = TOML.replace("cpus = 1", "cpus = 2\nthreads_per_core = 2\nisolcpus = \"1\"");
        let mut e = Explorer::default();
        run_to_end(&mut e, "t.toml", &toml, None, "");
        let t = e.tables();
        let cpus = t["cpus"].as_array().unwrap();
        assert_eq!(cpus.len(), 2, "{t}");
        assert_eq!(cpus[1]["label"], "cpu 1 · s0 c0 t1 (isolated)");
        assert_eq!(cpus[1]["isolated"], true);
        assert!(cpus[0]["busy_ns"].as_u64().unwrap() > 0);
        assert_eq!(cpus[1]["busy_ns"], 0, "no task may run on the isolated CPU");
        for k in ["migrations_in", "migrations_out", "balance_gap_ns", "switches"] {
            assert!(cpus[0][k].is_u64(), "{k}");
        }
        assert_eq!(t["occupancy"]["rows"], 2);
        assert!(t["occupancy"]["buckets"].as_u64().unwrap() > 0);
    }
}
