//! From per-thread summaries to declarations: what wakes each thread (a
//! timer, another thread, an interrupt), how long it runs, which threads
//! behave alike and merge into one declaration with `count`, and which are
//! the machine's own background. Every inference keeps its evidence as a
//! sentence, written beside it in the scenario.

use std::collections::{BTreeMap, BTreeSet};

use super::sketch::Sketch;
use super::track::{ThreadTrack, Waker};
use crate::time::format_duration as dur;
use crate::workload::dist::Dist;

/// Threads below this share of one CPU (and not named by `--victim`, and not
/// in a wake-up chain with a thread above it) are pooled as host background.
pub const BACKGROUND_SHARE: f64 = 0.005;
/// A waker family that made at least this share of a thread's wake-ups is its waker.
const EDGE_SHARE: f64 = 0.7;
/// Wake-up gaps within this fraction of a multiple of the period count as periodic.
const PERIOD_TOLERANCE: f64 = 0.1;
/// Share of gaps that must be periodic.
const PERIODIC_SHARE: f64 = 0.9;
/// Fewest gaps for a period.
const PERIOD_MIN_GAPS: u64 = 8;

#[derive(Clone, Debug, PartialEq)]
pub enum Trigger {
    /// Never blocks.
    Hog,
    /// `sleep_until`: a period and the phase of its grid.
    Periodic { period: u64, offset: u64 },
    /// Blocks until a thread of the family `by` wakes it.
    Wait { by: String },
    /// Sleeps a sampled time after each burst.
    Sleep(Dist),
}

/// One declaration of the scenario being built.
#[derive(Clone, Debug)]
pub struct Decl {
    pub name: String,
    pub family: String,
    /// Threads (tids), in instance order.
    pub members: Vec<u32>,
    pub trigger: Trigger,
    pub burst: Dist,
    /// Wake steps after the burst: the target as a scenario names it.
    pub wakes: Vec<String>,
    /// Starts with its burst (the initiator of a wait/wake cycle).
    pub starts_running: bool,
    pub nice: i32,
    /// `fifo` with a priority, for RT threads.
    pub rt_priority: Option<u8>,
    /// CPU list and whether each instance is pinned to one of them.
    pub cpus: Option<(String, bool)>,
    pub start_ns: u64,
    pub iterations: Option<u64>,
    /// Evidence, one sentence each.
    pub notes: Vec<String>,
    /// Pooled host background (one per CPU).
    pub background: bool,
    /// A pool stage (`serve`): items come from a source or a `forward`.
    pub serve: bool,
    /// The next stage of a request: the pool it hands each item to.
    pub forward: Option<String>,
    /// The head of a request chain: its arrivals as a source's `interval`.
    pub arrivals: Option<Dist>,
    /// Or, when the gaps look Poisson, the rate per instance.
    pub rate_per_s: Option<f64>,
}

/// Comm → a scenario name: letters, digits, `-`, `_`, `:`; others become `_`.
pub fn sanitize(comm: &str) -> String {
    let s: String = comm
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_:".contains(c) { c } else { '_' })
        .take(48)
        .collect();
    if s.is_empty() { "task".to_string() } else { s }
}

/// The family of a comm: without a trailing per-instance or per-CPU
/// suffix (`worker/3` → `worker`, `kworker/1:2` → `kworker`, `ksoftirqd/0` →
/// `ksoftirqd`, `pool-12` → `pool`).
pub fn family(comm: &str) -> String {
    let mut c = comm;
    if let Some(slash) = c.rfind('/') {
        // `kworker/u16:1-events`: what follows `-` is the work item, not the thread.
        let tail = c[slash + 1..].split('-').next().unwrap_or("");
        if slash > 0 && !tail.is_empty() && tail.chars().all(|ch| ch.is_ascii_digit() || ":uH".contains(ch)) {
            c = &c[..slash];
        }
    }
    if let Some((head, tail)) = c.rsplit_once('-')
        && !head.is_empty()
        && !tail.is_empty()
        && tail.chars().all(|ch| ch.is_ascii_digit())
    {
        c = head;
    }
    sanitize(c)
}

/// A period the wake-up gaps follow, if they do: the modal gap P̂, checked
/// against every gap (within ±10 % of a multiple), then refined over the
/// whole span (first to last wake-up / the number of periods in it).
pub fn period_of(th: &ThreadTrack) -> Option<(u64, String)> {
    let g = &th.wake_gaps;
    if g.count() < PERIOD_MIN_GAPS {
        return None;
    }
    let (mode, _) = g.bins().max_by_key(|&(_, n)| n)?;
    if mode == 0 {
        return None;
    }
    let near = |v: u64| {
        let k = (v as f64 / mode as f64).round().max(1.0);
        (v as f64 - k * mode as f64).abs() <= PERIOD_TOLERANCE * mode as f64
    };
    let periodic: u64 = g.bins().filter(|&(v, _)| near(v)).map(|(_, n)| n).sum();
    let share = periodic as f64 / g.count() as f64;
    if share < PERIODIC_SHARE {
        return None;
    }
    // The number of periods the gaps span (each gap is k periods), then the
    // period over the whole span: exact for a timer, whatever the bin width.
    let periods: u64 = g.bins().map(|(v, n)| n * (v as f64 / mode as f64).round().max(1.0) as u64).sum();
    let span = th.last_wake_ns? - th.first_wake_ns?;
    if periods == 0 {
        return None;
    }
    let p = (span as f64 / periods as f64).round() as u64;
    // Jitter: the spread of the gaps around their multiple of the period.
    let (mut sq, mut n) = (0.0, 0u64);
    for (v, c) in g.bins().filter(|&(v, _)| near(v)) {
        let k = (v as f64 / p as f64).round().max(1.0);
        sq += c as f64 * (v as f64 - k * p as f64).powi(2);
        n += c;
    }
    let sd = if n > 0 { libm::sqrt(sq / n as f64) } else { 0.0 };
    let why = format!(
        "period {} ± {} (bins of 1/32 octave) from {} wake-ups ({:.0} % of gaps within 10 % of a multiple)",
        dur(p),
        dur(sd.round() as u64),
        g.count() + 1,
        share * 100.0
    );
    Some((p, why))
}

/// The family that made most of the thread's wake-ups, when it made at least
/// EDGE_SHARE of them and is not the thread's own family member by itself.
/// `fam` names only threads that can be wakers: one that never blocks
/// cannot hand work off, and a trace shows it as the "waker" of every timer
/// or interrupt wake-up on its CPU (perf prints no interrupt flags).
pub fn dominant_waker(th: &ThreadTrack, fam: &BTreeMap<u32, String>) -> Option<(String, f64)> {
    let total = th.wakes();
    if total < 3 {
        return None;
    }
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for (w, n) in &th.wakers {
        if let Waker::Thread(tid) = w
            && let Some(f) = fam.get(tid)
        {
            *by.entry(f).or_default() += n;
        }
    }
    let (f, n) = by.into_iter().max_by_key(|&(_, n)| n)?;
    let share = n as f64 / total as f64;
    (share >= EDGE_SHARE).then(|| (f.to_string(), share))
}

/// nice or RT priority from `prio` as sched_switch prints it: 100-139 is
/// 120 + nice; 0-98 is 99 - sched_priority (FIFO and RR print alike: FIFO
/// assumed); -1 is SCHED_DEADLINE (parameters are not in the trace).
pub fn policy_of(prio: i32) -> (i32, Option<u8>, Option<String>) {
    match prio {
        100..=139 => (prio - 120, None, None),
        0..=98 => (
            0,
            Some((99 - prio) as u8),
            Some(format!("prio {prio}: SCHED_FIFO {} assumed (FIFO and RR print the same prio)", 99 - prio)),
        ),
        -1 => (0, Some(99), Some("prio -1: SCHED_DEADLINE, whose parameters a trace does not carry; FIFO 99 stands in".into())),
        _ => (0, None, Some(format!("prio {prio} is outside the kernel's range; nice 0 assumed"))),
    }
}

/// Pinned to one CPU, when the evidence says so: a long-lived thread that
/// never left that CPU though other CPUs sat idle while it waited.
pub fn pinned(th: &ThreadTrack, window: u64, cpus: usize) -> Option<(u16, String)> {
    let ran: Vec<u16> = th.cpus_run().collect();
    let life = th.last_ns.saturating_sub(th.first_ns);
    if cpus < 2 || ran.len() != 1 || life * 2 < window || th.missed_chances < 5 {
        return None;
    }
    Some((
        ran[0],
        format!(
            "pinned to CPU {} (assumed: a trace has no affinity): ran only there for {}, and {} times waited ≥ 50us while another CPU was idle",
            ran[0],
            dur(life),
            th.missed_chances
        ),
    ))
}

/// Bursts of a thread (its run per activation), or its whole run time when
/// no activation was seen complete.
pub fn burst_of(th: &ThreadTrack) -> Dist {
    if th.bursts.count() > 0 { th.bursts.dist() } else { Dist::Const(th.runtime_ns.max(1_000)) }
}

/// Merges sketches.
pub fn merged<'a>(parts: impl Iterator<Item = &'a Sketch>) -> Sketch {
    let mut s = Sketch::default();
    for p in parts {
        s.merge(p);
    }
    s
}

/// Whether two threads of one family behave alike enough to be one declaration.
pub fn alike(a: &ThreadTrack, b: &ThreadTrack, ta: &Trigger, tb: &Trigger) -> bool {
    let close = |x: f64, y: f64, tol: f64| (x - y).abs() <= tol * x.max(y).max(1.0);
    let same_kind = match (ta, tb) {
        (Trigger::Hog, Trigger::Hog) => true,
        (Trigger::Periodic { period: p, .. }, Trigger::Periodic { period: q, .. }) => close(*p as f64, *q as f64, 0.02),
        (Trigger::Wait { by: x }, Trigger::Wait { by: y }) => x == y,
        (Trigger::Sleep(x), Trigger::Sleep(y)) => close(x.mean_ns(), y.mean_ns(), 0.2),
        _ => false,
    };
    let bursts_close = matches!(ta, Trigger::Hog) || close(a.bursts.mean(), b.bursts.mean(), 0.2);
    same_kind && bursts_close && a.prio() == b.prio()
}

/// Threads that wake each other within a family must stay apart (a pipe
/// pair): a member whose wake-ups of other members number at least half its
/// activations. Fewer are interrupts that happened to land while it ran
/// (perf shows the interrupted thread as the waker).
pub fn wake_each_other(members: &BTreeSet<u32>, threads: &BTreeMap<u32, ThreadTrack>) -> bool {
    members.iter().any(|m| {
        threads.get(m).is_some_and(|t| {
            let inside: u64 = t.wakes_made.iter().filter(|(w, _)| members.contains(w) && *w != m).map(|(_, n)| n).sum();
            inside > 0 && inside * 2 >= t.bursts.count().max(1)
        })
    })
}

/// A distribution with every value multiplied by `k` (the importer's
/// correction of per-activation figures to per-item ones).
pub fn scaled(d: &Dist, k: f64) -> Dist {
    let m = |v: u64| (v as f64 * k).round() as u64;
    match d {
        Dist::Const(v) => Dist::Const(m(*v)),
        Dist::Empirical(p) => Dist::Empirical(p.iter().map(|&(q, v)| (q, m(v))).collect()),
        other => other.clone(),
    }
}
