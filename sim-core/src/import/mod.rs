//! Traces of a real machine read into the simulator's terms. `sched_text`
//! parses the text of `perf sched script` (and `perf script`, ftrace,
//! `trace-cmd report`) into scheduler records and summarises them per thread
//! and CPU, for `sim-cli measure`. The rest is `sim-cli import`: a streaming
//! pass over the records (`track`), fitted into declarations (`fit`,
//! `build`), written as a scenario with its evidence (`emit`), and judged
//! against a replay (`report::import`, above this layer). Pure: text in, values out.

pub mod build;
pub mod calibrate;
pub mod emit;
pub mod fit;
pub mod sched_text;
pub mod sketch;
pub mod track;

use std::fmt;

use sched_text::{SchedEvent, SchedLine, SchedRecord, TraceHeader};
use track::Tracker;

use crate::sched::model::KernelModel;
use crate::sched::tunables::{HZ_CHOICES, tick_nsec};
use crate::time::format_duration as dur;

/// What `sim-cli import` was asked.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The trace's name, for messages and the scenario's name.
    pub source: String,
    /// Only records in `[from, to)`, nanoseconds after the trace's first record.
    pub window: Option<(u64, u64)>,
    /// `[kernel] version` to model (else the trace's `os release`, else the latest).
    pub kernel: Option<String>,
    /// The tick rate, when it should not be inferred.
    pub hz: Option<u32>,
    /// The thread (comm, or its family) the report explains.
    pub victim: Option<String>,
}

/// A trace the importer cannot use: where, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportError {
    pub source: String,
    /// The line (from 1), when one line is to blame.
    pub line: Option<usize>,
    pub text: String,
    pub why: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(n) => {
                let shown: String = self.text.chars().take(80).collect();
                let more = if self.text.chars().count() > 80 { "…" } else { "" };
                write!(f, "{} line {n}: {}: `{shown}{more}`", self.source, self.why)
            }
            None => write!(f, "{}: {}", self.source, self.why),
        }
    }
}

impl std::error::Error for ImportError {}

/// Delay figures of one declaration's threads, trace or replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DelayFigures {
    pub count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl DelayFigures {
    fn of(s: &sketch::Sketch) -> DelayFigures {
        DelayFigures { count: s.count(), p50_ns: s.quantile(0.5), p99_ns: s.quantile(0.99), max_ns: s.max() }
    }
}

/// One declaration of the import and the trace's own figures for its threads.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportedTask {
    pub name: String,
    /// (tid, comm) of the threads it stands for; empty for host background.
    pub threads: Vec<(u32, String)>,
    pub background: bool,
    pub runtime_ns: u64,
    /// Wake-up and preemption delays together, as `perf sched latency` and the report's per-task delays merge them.
    pub delay: DelayFigures,
    pub wakeup: DelayFigures,
    pub preempt: DelayFigures,
}

/// The scenario built from a trace, and what it was built from.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Import {
    pub toml: String,
    pub kernel: &'static str,
    pub cpus: usize,
    pub hz: u32,
    /// Whether `hz` was read from the trace (else the flag or the default).
    pub hz_inferred: bool,
    pub victim: Option<String>,
    pub lines: u64,
    pub records: u64,
    pub lost_events: u64,
    pub window_ns: u64,
    pub tasks: Vec<ImportedTask>,
    /// Assumptions and warnings, one sentence each.
    pub notes: Vec<String>,
}

/// Reads a trace line by line (memory bounded by its threads), then builds the scenario.
pub struct Importer {
    opts: ImportOptions,
    tracker: Tracker,
    line: usize,
    release: Option<String>,
    cpus_online: Option<u16>,
    lost: u64,
    /// The window in trace time, once the first record fixes the origin.
    window_abs: Option<(u64, u64)>,
    first_record: Option<u64>,
    last_record: u64,
    out_of_order: u64,
}

impl Importer {
    pub fn new(opts: ImportOptions) -> Importer {
        Importer {
            opts,
            tracker: Tracker::default(),
            line: 0,
            release: None,
            cpus_online: None,
            lost: 0,
            window_abs: None,
            first_record: None,
            last_record: 0,
            out_of_order: 0,
        }
    }

    fn error(&self, line: Option<usize>, text: &str, why: impl Into<String>) -> ImportError {
        ImportError { source: self.opts.source.clone(), line, text: text.to_string(), why: why.into() }
    }

    /// One line of the trace (without or with its newline).
    pub fn push_line(&mut self, raw: &str) -> Result<(), ImportError> {
        self.line += 1;
        let kind = sched_text::parse_line_kind(raw).map_err(|why| self.error(Some(self.line), raw.trim(), why))?;
        match kind {
            // The builder fits what the switches and wake-ups show; the
            // kernel's charges (sched_stat_runtime) are for `measure`, so the
            // line counts as skipped, as it did before it was parsed.
            SchedLine::Record(SchedRecord { event: SchedEvent::StatRuntime { .. }, .. }) => {}
            SchedLine::Record(r) => {
                let first = *self.first_record.get_or_insert(r.time_ns);
                let (from, to) = *self.window_abs.get_or_insert_with(|| match self.opts.window {
                    Some((a, b)) => (first.saturating_add(a), first.saturating_add(b)),
                    None => (first, u64::MAX),
                });
                if r.time_ns + 1_000 < self.last_record {
                    // perf sorts its output; ftrace's per-CPU buffers interleave within a few µs.
                    self.out_of_order += 1;
                }
                self.last_record = self.last_record.max(r.time_ns);
                if r.time_ns >= from && r.time_ns < to {
                    self.tracker.push(&r);
                }
            }
            SchedLine::Header(TraceHeader::OsRelease(v)) => self.release = Some(v),
            SchedLine::Header(TraceHeader::CpusOnline(n)) => self.cpus_online = Some(n),
            SchedLine::Lost(n) => self.lost += n,
            SchedLine::Skipped => {}
        }
        Ok(())
    }

    /// Lines read so far.
    pub fn lines(&self) -> usize {
        self.line
    }

    /// The threads as tracked to the trace's end, and the window they span
    /// (`finish` builds the scenario from them; `calibrate` its background).
    pub(crate) fn finish_tracker(&mut self) -> Result<(Tracker, u64), ImportError> {
        let Some(first) = self.first_record else {
            return Err(self.error(
                None,
                "",
                format!(
                    "no scheduler events in {} lines: not a `perf sched script` or ftrace sched trace (record with `perf sched record`, then `perf sched script`)",
                    self.line
                ),
            ));
        };
        let Some(origin) = self.tracker.first_ns else {
            let (a, b) = self.opts.window.unwrap_or((0, 0));
            return Err(self.error(
                None,
                "",
                format!(
                    "the window {}..{} holds no event: the trace spans 0..{} from its first record",
                    dur(a),
                    dur(b),
                    dur(self.last_record - first)
                ),
            ));
        };
        if self.tracker.switches == 0 {
            return Err(self.error(
                None,
                "",
                format!(
                    "{} scheduler events but no sched_switch: cannot tell who ran (record sched:sched_switch too)",
                    self.tracker.records
                ),
            ));
        }
        let end = self.tracker.last_ns;
        self.tracker.finish(end);
        let window = end.saturating_sub(origin).max(1);
        Ok((std::mem::take(&mut self.tracker), window))
    }

    /// The scenario, or why the trace cannot give one.
    pub fn finish(mut self) -> Result<Import, ImportError> {
        let (tracker, window) = self.finish_tracker()?;
        self.tracker = tracker;
        let origin = self.tracker.first_ns.unwrap_or(0);
        let mut notes = Vec::new();
        if self.lost > 0 {
            notes.push(format!("the tracer lost {} events: delays around them may be wrong", self.lost));
        }
        if self.out_of_order > 0 {
            notes.push(format!("{} records were out of time order by more than 1us", self.out_of_order));
        }
        let (kernel, kernel_why) = self.kernel()?;
        let cpus = self.cpus_online.map_or(self.tracker.cpus_seen(), usize::from).max(self.tracker.cpus_seen()).max(1);
        let cpus_why = match self.cpus_online {
            Some(n) => format!("{n} CPUs online (trace header); {} seen in records", self.tracker.cpus_seen()),
            None => format!("{} CPUs: the highest CPU the records name, plus one (no header)", self.tracker.cpus_seen()),
        };
        if let Some(hz) = self.opts.hz.filter(|h| !HZ_CHOICES.contains(h)) {
            return Err(self.error(None, "", format!("--hz {hz}: allowed: 100, 250, 300, 1000 (the kernel's CONFIG_HZ choices)")));
        }
        let tick = infer_hz(&self.tracker.tick_candidates, origin, self.opts.hz);
        let frame = build::Frame { origin, window, cpus, victim: self.opts.victim.as_deref() };
        let decls = build::declarations(&self.tracker, &frame);
        if decls.is_empty() {
            return Err(self.error(None, "", format!("no thread ran in the {} the trace covers: nothing to model", dur(window))));
        }
        let victim = self.victim_name(&decls);
        if let (Some(v), None) = (&self.opts.victim, &victim) {
            let names: Vec<&str> = decls.iter().filter(|d| !d.background).map(|d| d.name.as_str()).take(20).collect();
            return Err(self.error(
                None,
                "",
                format!("--victim `{v}`: no thread of that comm or family in the trace; its tasks: {}", names.join(", ")),
            ));
        }
        // Declarations stay in the order their threads appeared (fork order
        // matters to placement); `[report] victim` names the victim instead.
        let duration = window.div_ceil(1_000_000) * 1_000_000;
        let m = emit::MachineText {
            cpus,
            cpus_why,
            hz: tick.hz,
            tick_offset: tick.offset,
            hz_why: tick.why.clone(),
            kernel: kernel.version(),
            kernel_why,
            duration,
        };
        notes.push(
            "groups: a trace without cgroup ids says nothing of sessions or cgroups; every task is in the root group (as one session with autogroup)".into(),
        );
        let header = vec![
            format!("Imported by `sim-cli import` from {}: {} lines, {} scheduler records over {}.", self.opts.source, self.line, self.tracker.records, dur(window)),
            "Every inference is stated beside the key it sets. Replay with `sim-cli run`, or `sim-cli import --replay`.".to_string(),
        ];
        let name = fit::sanitize(self.opts.source.rsplit('/').next().unwrap_or("import"));
        let toml = emit::scenario(&format!("import-{name}"), &[header, notes.clone()].concat(), &m, victim.as_deref(), &decls);
        // The scenario must load: a failure here is the importer's bug, said as such.
        if let Err(e) = crate::scenario::Scenario::from_toml(&self.opts.source, &toml) {
            return Err(self.error(None, "", format!("the imported scenario does not load (an importer bug; please report it): {e}")));
        }
        let tasks = decls.iter().map(|d| self.imported(d)).collect();
        Ok(Import {
            toml,
            kernel: kernel.version(),
            cpus,
            hz: tick.hz,
            hz_inferred: tick.inferred,
            victim,
            lines: self.line as u64,
            records: self.tracker.records,
            lost_events: self.lost,
            window_ns: window,
            tasks,
            notes,
        })
    }

    fn kernel(&self) -> Result<(KernelModel, String), ImportError> {
        if let Some(k) = &self.opts.kernel {
            return KernelModel::parse(k).map(|m| (m, format!("kernel model {} (--kernel)", m.label()))).ok_or_else(|| {
                let allowed: Vec<&str> = KernelModel::ALL.iter().map(|m| m.version()).collect();
                self.error(None, "", format!("--kernel `{k}`: allowed: {}", allowed.join(", ")))
            });
        }
        if let Some(r) = &self.release
            && let Some(m) = KernelModel::for_release(r)
        {
            return Ok((m, format!("kernel model {} for the trace's `os release : {r}`", m.label())));
        }
        let m = KernelModel::LATEST;
        Ok((m, format!("kernel model {}: the default (the trace names no release; set one with --kernel)", m.label())))
    }

    fn victim_name(&self, decls: &[fit::Decl]) -> Option<String> {
        match &self.opts.victim {
            // Of the declarations with that name or family, the one woken most
            // often (cyclictest's measuring thread, not its main thread; both are `cyclictest`).
            Some(v) => {
                let wakes = |d: &&fit::Decl| {
                    d.members.iter().filter_map(|t| self.tracker.threads.get(t)).map(|t| t.wakes()).sum::<u64>()
                };
                decls.iter().filter(|d| d.name == *v || d.family == fit::family(v)).max_by_key(wakes).map(|d| d.name.clone())
            }
            None => decls.iter().find(|d| !d.background).map(|d| d.name.clone()),
        }
    }

    fn imported(&self, d: &fit::Decl) -> ImportedTask {
        let ths: Vec<&track::ThreadTrack> = d.members.iter().filter_map(|t| self.tracker.threads.get(t)).collect();
        let wake = fit::merged(ths.iter().map(|t| &t.wakeup_delay));
        let pre = fit::merged(ths.iter().map(|t| &t.preempt_delay));
        let mut all = wake.clone();
        all.merge(&pre);
        ImportedTask {
            name: d.name.clone(),
            threads: ths.iter().map(|t| (t.tid, t.comm.clone())).collect(),
            background: d.background,
            runtime_ns: ths.iter().map(|t| t.runtime_ns).sum(),
            delay: DelayFigures::of(&all),
            wakeup: DelayFigures::of(&wake),
            preempt: DelayFigures::of(&pre),
        }
    }

    /// Imports a whole text (tests, the explorer): every line, then `finish`.
    pub fn import_text(opts: ImportOptions, text: &str) -> Result<Import, ImportError> {
        let mut im = Importer::new(opts);
        for line in text.lines() {
            im.push_line(line)?;
        }
        im.finish()
    }
}

/// How well the tick-driven preemptions fit the grid of `hz`: the share
/// within ±20 µs of the commonest phase (≥ 60 % to fit) and the grid's
/// offset from `origin` (the mean phase of those samples).
fn phase_fit(times: &[u64], origin: u64, hz: u32) -> Option<(f64, u64)> {
    const BIN: u64 = 20_000;
    let period = tick_nsec(hz);
    let bins = period.div_ceil(BIN) as usize;
    let mut h = vec![0u32; bins];
    for &t in times {
        h[((t % period) / BIN) as usize] += 1;
    }
    let (peak, _) = h.iter().enumerate().max_by_key(|(_, n)| **n)?;
    let around: u32 = (0..3).map(|k| h[(peak + bins + k - 1) % bins]).sum();
    let share = f64::from(around) / times.len().max(1) as f64;
    if share < 0.6 {
        return None;
    }
    // The phase: the mean of the samples in the peak's three bins (circular around 0).
    let (lo, hi) = ((peak + bins - 1) % bins, (peak + 1) % bins);
    let inside = |b: usize| if lo <= hi { (lo..=hi).contains(&b) } else { b >= lo || b <= hi };
    let (mut sum, mut n) = (0i128, 0i128);
    let centre = (peak as u64 * BIN + BIN / 2) as i128;
    let p = i128::from(period as i64);
    for &t in times {
        let ph = (t % period) as i128;
        if inside((ph as u64 / BIN) as usize) {
            sum += (ph - centre + p + p / 2) % p - p / 2;
            n += 1;
        }
    }
    let phase = (centre + sum / n.max(1)).rem_euclid(p) as u64;
    Some((share, (phase + period - origin % period) % period))
}

struct Tick {
    hz: u32,
    offset: u64,
    inferred: bool,
    why: String,
}

/// The tick rate from the phases of tick-driven preemptions (a switch-out
/// in `R` in favour of a task that was already waiting, with no wake-up or
/// migration aimed at that CPU in the 20 µs before): a rate fits when ≥ 60 %
/// of ≥ 30 such switches fall within ±20 µs of one phase of its grid. The
/// slowest fitting rate is the answer when two of its switches came less
/// than 1.5 periods apart (a faster tick would then have shown other
/// phases); else the switches cannot tell the fitting rates apart (they all
/// came a multiple of a longer period apart) and 250 is assumed among them.
fn infer_hz(times: &[u64], origin: u64, flag: Option<u32>) -> Tick {
    if let Some(hz) = flag {
        return Tick { hz, offset: 0, inferred: false, why: format!("HZ {hz} (--hz); tick phase 0 assumed") };
    }
    let fits: Vec<(u32, f64, u64)> = if times.len() >= 30 {
        HZ_CHOICES.into_iter().filter_map(|hz| phase_fit(times, origin, hz).map(|(s, o)| (hz, s, o))).collect()
    } else {
        Vec::new()
    };
    if let Some(&(hz, share, offset)) = fits.first() {
        let period = tick_nsec(hz);
        // Gaps between the switches on the grid (within 40 µs of its phase).
        let on_grid = |t: u64| {
            let d = (t % period + period - (origin + offset) % period) % period;
            d.min(period - d) <= 40_000
        };
        let mut sorted: Vec<u64> = times.iter().copied().filter(|&t| on_grid(t)).collect();
        sorted.sort_unstable();
        let min_gap = sorted.windows(2).map(|w| w[1] - w[0]).filter(|&g| g > 100_000).min().unwrap_or(u64::MAX);
        if (min_gap as f64) < 1.5 * period as f64 {
            let why = format!(
                "HZ {hz} inferred: {:.0} % of {} tick-driven preemptions fall within 20us of one phase of a {} grid",
                share * 100.0,
                times.len(),
                dur(period)
            );
            return Tick { hz, offset, inferred: true, why };
        }
        let (hz, _, offset) = fits.iter().copied().find(|f| f.0 == 250).unwrap_or(fits[fits.len() - 1]);
        let list: Vec<String> = fits.iter().map(|f| f.0.to_string()).collect();
        let why = format!(
            "HZ not inferred: {} tick-driven preemptions, at least {} apart, fit HZ {} alike; {hz} assumed with their phase; set it with --hz",
            times.len(),
            dur(min_gap),
            list.join(", ")
        );
        return Tick { hz, offset, inferred: false, why };
    }
    Tick {
        hz: 250,
        offset: 0,
        inferred: false,
        why: format!(
            "HZ not inferred ({} tick-driven preemptions, no common phase): 250 assumed; set it with --hz",
            times.len()
        ),
    }
}
