//! `sim-cli advise`: which setting fixes it. A search over the settings the
//! scenario format has, run in the simulator: each knob alone (a
//! sensitivity table), then combinations of the best, fewest changes first,
//! each judged over a band of tick phases and seeds. Every fix carries what
//! it does to the other tasks, what applying it needs, the commands that
//! apply it, and (for the best) the victim's worst delay before and after.
//!
//! - `target.rs`: `--target 'TASK STAT <= DURATION'`.
//! - `knobs.rs`: the catalogue per scenario and kernel model.
//! - `search.rs`: `Advisor`, the stepwise search.
//! - `effects.rs`: a candidate's figures and its side effects.
//! - `apply.rs`: the commands for a real machine.

pub mod apply;
pub mod effects;
pub mod json;
pub mod knobs;
pub mod search;
pub mod target;

use crate::report::RunReport;
use crate::report::ReportSections;
use crate::scenario::Scenario;
use effects::{Evaluation, SideEffect, Spread, side_effects};
use knobs::{Family, Needs};
use search::{Advisor, Judged, Stopped};

/// One change of a fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub knob: String,
    pub setting: String,
    pub family: Family,
    pub needs: Needs,
    pub shifts_share: bool,
    /// `KEY=VALUE`, as `--set` takes it.
    pub set: Vec<String>,
    /// Shell commands for a real machine (`#` lines: what to do by hand).
    pub apply: Vec<String>,
}

/// A candidate as the report shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// The catalogue's picks (`Advisor::scenario` runs it again).
    pub candidate: search::Candidate,
    pub changes: Vec<Change>,
    pub eval: Evaluation,
    /// The most any change needs.
    pub needs: Needs,
    pub side_effects: Vec<SideEffect>,
}

impl Fix {
    /// Every change's `--set`s, in order.
    pub fn set(&self) -> Vec<String> {
        self.changes.iter().flat_map(|c| c.set.iter().cloned()).collect()
    }
    /// Some other task's delay grew or its CPU share fell.
    pub fn moves_cost(&self) -> bool {
        self.side_effects.iter().any(|e| e.delay_moved || e.share_lost)
    }
}

/// A knob's best setting alone, against the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SensitivityRow {
    pub knob: String,
    pub family: Family,
    pub best: String,
    /// Tried settings of this knob.
    pub tried: usize,
    pub targets: Vec<Spread>,
    pub score: u64,
    pub met: bool,
}

/// One side of the why: the victim's worst delay in one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorstWait {
    pub delay_ns: u64,
    /// `wakeup`, `preempt` or `throttled`.
    pub kind: &'static str,
    pub cpu: u16,
    pub at_ns: u64,
    /// Who held its CPU while it waited that long (its histogram bucket's
    /// culprits, time held), most first.
    pub held_by: Vec<(String, u64)>,
    /// The one-hog bound of the run's settings, and the kernel rule behind it.
    pub one_hog_bound_ns: u64,
}

/// The best fix's why: the victim's worst delay before and after, at the
/// scenario's own phase and seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub task: String,
    pub before: Option<WorstWait>,
    pub after: Option<WorstWait>,
    pub bound_rule: &'static str,
}

impl WorstWait {
    pub fn of(r: &RunReport) -> Option<WorstWait> {
        let v = &r.victim;
        let w = v.worst.as_ref()?;
        let delay = w.end_ns.saturating_sub(w.start_ns);
        if delay == 0 {
            return None;
        }
        let held_by = v
            .histogram
            .iter()
            .find(|b| b.low_ns <= delay && delay < b.high_ns.max(b.low_ns + 1))
            .or(v.histogram.iter().rev().find(|b| b.count > 0))
            .map(|b| b.culprits.clone())
            .unwrap_or_default();
        Some(WorstWait {
            delay_ns: delay,
            kind: w.kind.name(),
            cpu: w.cpu,
            at_ns: w.start_ns,
            held_by,
            one_hog_bound_ns: v.one_hog_bound_ns,
        })
    }
}

/// The search's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Advice {
    pub scenario: String,
    pub model: String,
    pub victim: String,
    pub culprits: Vec<String>,
    pub targets: Vec<target::Target>,
    pub phases: u32,
    pub seeds: u32,
    pub budget_runs: u64,
    pub runs: u64,
    pub stopped: Stopped,
    pub families: Vec<Family>,
    pub knobs: usize,
    pub settings: usize,
    /// Settings the scenario refused, with why.
    pub skipped: Vec<String>,
    pub baseline: Evaluation,
    pub sensitivity: Vec<SensitivityRow>,
    /// The candidates that meet every target, ranked (fewest changes, then
    /// the least needed, then those moving no delay or CPU onto another
    /// task, then the fewest shifted shares, then the margin);
    /// when none does, the closest ones, marked not met.
    pub fixes: Vec<Fix>,
    pub why: Option<Why>,
}

/// How many fixes the answer lists.
pub const FIXES_SHOWN: usize = 10;

fn change(adv: &Advisor, k: usize, s: usize) -> Change {
    let knob = adv.knob(k);
    let st = &knob.settings[s];
    Change {
        knob: knob.name.clone(),
        setting: st.label.clone(),
        family: knob.family,
        needs: knob.needs,
        shifts_share: knob.shifts_share,
        set: st.sets.iter().map(|(a, b)| format!("{a}={b}")).collect(),
        apply: apply::commands(adv.base(), &knob.apply, st),
    }
}

fn fix(adv: &Advisor, j: &Judged, baseline: &Evaluation) -> Fix {
    let changes: Vec<Change> = j.candidate.picks.iter().map(|&(k, s)| change(adv, k, s)).collect();
    Fix {
        candidate: j.candidate.clone(),
        needs: changes.iter().map(|c| c.needs).max().unwrap_or(Needs::Owner),
        side_effects: side_effects(baseline, &j.eval, adv.victim()),
        changes,
        eval: j.eval.clone(),
    }
}

/// The answer of a finished search. Its why has no *after* yet: `advise_with`
/// runs the first fix once and fills it in.
fn advice(adv: &Advisor) -> Option<Advice> {
    let baseline = adv.baseline()?.eval.clone();
    let judged = adv.judged();
    let mut ranked: Vec<&Judged> = judged.iter().filter(|j| j.eval.met).collect();
    let met_any = !ranked.is_empty();
    if !met_any {
        ranked = judged.iter().filter(|j| j.eval.score < baseline.score).collect();
    }
    let mut fixes: Vec<Fix> = ranked.iter().map(|j| fix(adv, j, &baseline)).collect();
    // Fixes: fewest changes, least needed, fewest shares shifted, no cost
    // moved, then the margin. Without a fix: the closest first.
    fixes.sort_by_key(|f| {
        let changes = f.changes.len() as u64;
        let needs = f.needs as u64;
        let shifted = f.changes.iter().filter(|c| c.shifts_share).count() as u64;
        let moves = u64::from(f.moves_cost());
        if met_any {
            [changes, needs, moves, shifted, f.eval.score]
        } else {
            [f.eval.score, changes, needs, moves, shifted]
        }
    });
    fixes.truncate(FIXES_SHOWN);
    let sensitivity = adv
        .sensitivity()
        .into_iter()
        .map(|(k, j)| {
            let knob = adv.knob(k);
            SensitivityRow {
                knob: knob.name.clone(),
                family: knob.family,
                best: knob.settings[j.candidate.picks[0].1].label.clone(),
                tried: judged.iter().filter(|x| x.candidate.picks.len() == 1 && x.candidate.picks[0].0 == k).count(),
                targets: j.eval.targets.clone(),
                score: j.eval.score,
                met: j.eval.met,
            }
        })
        .collect();
    let spec = &adv.base().spec;
    let why = adv.baseline_report().map(|before| Why {
        task: adv.victim().to_string(),
        before: WorstWait::of(before),
        after: None,
        bound_rule: spec.kernel.one_hog_bound_rule(),
    });
    let opts = adv.options();
    Some(Advice {
        scenario: spec.name.clone(),
        model: spec.kernel.label(),
        victim: adv.victim().to_string(),
        culprits: adv.culprits().to_vec(),
        targets: opts.targets.clone(),
        phases: opts.band.phases,
        seeds: opts.band.seeds,
        budget_runs: opts.budget_runs,
        runs: adv.runs(),
        stopped: adv.stopped().unwrap_or(Stopped::Exhausted),
        families: opts.families.clone(),
        knobs: adv.catalogue().knobs.len(),
        settings: adv.catalogue().knobs.iter().map(|k| k.settings.len()).sum(),
        skipped: adv.catalogue().skipped.clone(),
        baseline,
        sensitivity,
        fixes,
        why,
    })
}

/// Runs a batch: per candidate its band's scenarios in, its reports out,
/// each recording the given sections (`crate::run_recording`).
pub type BatchRunner<'a> = dyn FnMut(&[Vec<Scenario>], ReportSections) -> Vec<Vec<RunReport>> + 'a;

/// The whole search: `Advisor` step by step until it hands out no batch;
/// `run` runs a batch's band scenarios (one list per candidate, in order)
/// and returns their reports in the same shape, on as many threads as it
/// likes. Then the answer, with the first fix run once more at the
/// scenario's own phase and seed for the why.
pub fn advise_with(
    base: &Scenario,
    opts: search::AdviseOptions,
    run: &mut BatchRunner,
) -> Result<Advice, String> {
    let mut adv = Advisor::new(base, opts)?;
    // Bounded: each batch spends at least one run of the finite budget, and
    // an empty batch ends the search.
    loop {
        let batch = adv.next_batch();
        if batch.is_empty() {
            break;
        }
        let scenarios =
            batch.iter().map(|c| adv.band_scenarios(c)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
        let reports = run(&scenarios, adv.sections());
        adv.record(&batch, reports);
    }
    let mut answer = advice(&adv).ok_or_else(|| "the search recorded no baseline".to_string())?;
    if let (Some(first), Some(why)) = (answer.fixes.first(), answer.why.as_mut()) {
        let s = adv.scenario(&first.candidate).map_err(|e| e.to_string())?;
        why.after = WorstWait::of(&crate::report::run_to_report(&s));
    }
    Ok(answer)
}

/// The whole search on one thread (tests, library users): each band run in
/// turn. The answer is the same as with threads.
pub fn advise(base: &Scenario, opts: search::AdviseOptions) -> Result<Advice, String> {
    advise_with(base, opts, &mut |batch, sections| {
        batch
            .iter()
            .map(|scenarios| scenarios.iter().map(|s| crate::report::run_recording(s, sections)).collect())
            .collect()
    })
}
