//! The search: a baseline, each knob alone over its values (the screening,
//! ranked into a sensitivity table), then combinations of the best knobs,
//! fewest changes first, until the targets are met or the budget of runs is
//! spent. Every candidate is judged over a band of tick phases and seeds.
//!
//! Pure and stepwise: `Advisor::next_batch` hands out a batch of candidates, the
//! front end runs their band points (in parallel if it likes) and hands the
//! reports back through `Advisor::record`. The order runs finish in changes
//! nothing: a batch's results go back in the batch's order.

use super::effects::{Evaluation, evaluate};
use super::knobs::{Catalogue, Family, Knob, Roles, catalogue};
use super::target::Target;
use crate::report::RunReport;
use crate::report::ReportSections;
use crate::report::bands::BandPlan;
use crate::scenario::{Scenario, ScenarioError};

/// Most changes one candidate combines.
pub const CHANGES_MAX: usize = 3;
/// How many of the best candidates of n changes are extended to n + 1.
pub const BEAM: usize = 3;
/// How many of each knob's settings (its best alone) an extension tries.
pub const SETTINGS_PER_KNOB: usize = 2;
/// Most culprits the catalogue builds per-task knobs for.
pub const CULPRITS_MAX: usize = 3;
/// The budget's bounds, in simulation runs.
pub const BUDGET_MAX: u64 = 100_000;

/// What to search.
#[derive(Clone, Debug)]
pub struct AdviseOptions {
    pub targets: Vec<Target>,
    pub families: Vec<Family>,
    /// Simulation runs the search may spend (each candidate costs the band's points).
    pub budget_runs: u64,
    pub band: BandPlan,
}

/// Settings picked from the catalogue: `(knob, setting)` indices, by knob.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Candidate {
    pub picks: Vec<(usize, usize)>,
}

/// A candidate with its band's figures.
#[derive(Clone, Debug)]
pub struct Judged {
    pub candidate: Candidate,
    pub eval: Evaluation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Baseline,
    Screen,
    Combine(usize),
    Done,
}

/// Why the search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Some candidates of the fewest changes that could meet the targets met them.
    Met,
    /// The budget ran out first.
    Budget,
    /// Every combination up to `CHANGES_MAX` changes was tried.
    Exhausted,
    /// The baseline already meets the targets.
    AlreadyMet,
}

impl Stopped {
    pub fn text(self) -> &'static str {
        match self {
            Stopped::Met => "targets met",
            Stopped::Budget => "budget spent",
            Stopped::Exhausted => "every combination tried",
            Stopped::AlreadyMet => "the scenario as given already meets the targets",
        }
    }
}

/// The search's state.
pub struct Advisor {
    base: Scenario,
    opts: AdviseOptions,
    stage: Stage,
    catalogue: Catalogue,
    baseline: Option<Judged>,
    baseline_report: Option<RunReport>,
    judged: Vec<Judged>,
    runs: u64,
    stopped: Option<Stopped>,
    victim: String,
    culprits: Vec<String>,
}

impl Advisor {
    /// Checks the targets against `base` (a scenario with its `--set`s
    /// applied) and makes the target's task the report's victim, so the
    /// culprits and the why are about it.
    pub fn new(base: &Scenario, opts: AdviseOptions) -> Result<Advisor, String> {
        if opts.targets.is_empty() {
            return Err("advise needs at least one --target 'TASK STAT <= DURATION'".into());
        }
        if opts.targets.len() > super::target::TARGETS_MAX {
            return Err(format!("--target: at most {} targets, {} given", super::target::TARGETS_MAX, opts.targets.len()));
        }
        if opts.budget_runs == 0 || opts.budget_runs > BUDGET_MAX {
            return Err(format!("--budget {}: allowed 1 to {BUDGET_MAX} simulation runs", opts.budget_runs));
        }
        for t in &opts.targets {
            t.check(base)?;
        }
        let victim = opts.targets[0].task(base).ok_or("the target names no task")?.to_string();
        let base = crate::sweep::with_target(base, &victim).map_err(|e| format!("--target {}: {e}", opts.targets[0].text))?;
        Ok(Advisor {
            base,
            opts,
            stage: Stage::Baseline,
            catalogue: Catalogue::default(),
            baseline: None,
            baseline_report: None,
            judged: Vec::new(),
            runs: 0,
            stopped: None,
            victim,
            culprits: Vec::new(),
        })
    }

    pub fn base(&self) -> &Scenario {
        &self.base
    }

    pub fn options(&self) -> &AdviseOptions {
        &self.opts
    }

    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    pub fn runs(&self) -> u64 {
        self.runs
    }

    pub fn victim(&self) -> &str {
        &self.victim
    }

    /// The tasks the baseline's victim waited behind, most first.
    pub fn culprits(&self) -> &[String] {
        &self.culprits
    }

    pub fn baseline(&self) -> Option<&Judged> {
        self.baseline.as_ref()
    }

    /// The baseline's first run (the scenario as given), for the why.
    /// What the next batch's runs must record: the baseline's first run
    /// gives the culprits and the why (its history); a candidate is judged
    /// on its figures alone.
    pub fn sections(&self) -> ReportSections {
        match self.stage {
            Stage::Baseline => ReportSections::PRINTED,
            _ => ReportSections::FIGURES,
        }
    }

    pub fn baseline_report(&self) -> Option<&RunReport> {
        self.baseline_report.as_ref()
    }

    pub fn judged(&self) -> &[Judged] {
        &self.judged
    }

    pub fn stopped(&self) -> Option<Stopped> {
        self.stopped
    }

    fn points(&self) -> u64 {
        u64::from(self.opts.band.phases) * u64::from(self.opts.band.seeds)
    }

    /// The `--set` pairs of a candidate, in knob order.
    pub fn sets(&self, c: &Candidate) -> Vec<(String, String)> {
        c.picks.iter().flat_map(|&(k, s)| self.catalogue.knobs[k].settings[s].sets.clone()).collect()
    }

    /// The scenario of a candidate (the base with its settings).
    pub fn scenario(&self, c: &Candidate) -> Result<Scenario, ScenarioError> {
        let sets = self.sets(c);
        if sets.is_empty() {
            return Ok(self.base.clone());
        }
        let pairs: Vec<(&str, &str)> = sets.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        self.base.with_overrides(&pairs)
    }

    /// The band's scenarios of a candidate, in `BandPlan::points` order.
    pub fn band_scenarios(&self, c: &Candidate) -> Result<Vec<Scenario>, ScenarioError> {
        let s = self.scenario(c)?;
        self.opts.band.points(&s).iter().map(|p| self.opts.band.scenario(&s, p)).collect()
    }

    /// The next batch to run; empty when the search is over.
    pub fn next_batch(&mut self) -> Vec<Candidate> {
        loop {
            let batch = match self.stage {
                Stage::Done => return Vec::new(),
                Stage::Baseline => vec![Candidate { picks: Vec::new() }],
                Stage::Screen => {
                    let mut v = Vec::new();
                    for (k, knob) in self.catalogue.knobs.iter().enumerate() {
                        for s in 0..knob.settings.len() {
                            v.push(Candidate { picks: vec![(k, s)] });
                        }
                    }
                    v
                }
                Stage::Combine(n) => self.combinations(n),
            };
            // Within the budget: as many of the batch as it pays for.
            let left = self.opts.budget_runs.saturating_sub(self.runs) / self.points().max(1);
            if batch.is_empty() {
                self.advance_stage();
                continue;
            }
            if left == 0 {
                self.finish(Stopped::Budget);
                return Vec::new();
            }
            let take = usize::try_from(left).unwrap_or(usize::MAX).min(batch.len());
            if take < batch.len() {
                // The rest is never tried: the search ends after this batch.
                self.stopped = Some(Stopped::Budget);
            }
            return batch.into_iter().take(take).collect();
        }
    }

    /// Ends the search. Meeting the targets says more than a budget cut
    /// short in the same batch, so it wins.
    fn finish(&mut self, why: Stopped) {
        self.stage = Stage::Done;
        match why {
            Stopped::Met | Stopped::AlreadyMet => self.stopped = Some(why),
            _ => {
                self.stopped.get_or_insert(why);
            }
        }
    }

    fn advance_stage(&mut self) {
        self.stage = match self.stage {
            Stage::Baseline => Stage::Screen,
            Stage::Screen => Stage::Combine(2),
            Stage::Combine(n) if n < CHANGES_MAX => Stage::Combine(n + 1),
            _ => {
                self.finish(Stopped::Exhausted);
                Stage::Done
            }
        };
    }

    /// Hands back a batch's reports: `reports[i]` are candidate `i`'s band
    /// runs in `band_scenarios` order.
    pub fn record(&mut self, batch: &[Candidate], reports: Vec<Vec<RunReport>>) {
        for (c, r) in batch.iter().zip(reports) {
            self.runs += r.len() as u64;
            let eval = evaluate(&self.opts.targets, &self.base, &r);
            if self.stage == Stage::Baseline {
                self.baseline_report = r.into_iter().next();
                self.baseline = Some(Judged { candidate: c.clone(), eval });
            } else {
                self.judged.push(Judged { candidate: c.clone(), eval });
            }
        }
        match self.stage {
            Stage::Baseline => {
                if self.baseline.as_ref().is_some_and(|b| b.eval.met) {
                    self.finish(Stopped::AlreadyMet);
                    return;
                }
                self.culprits = culprits(self.baseline_report.as_ref(), &self.base, &self.victim);
                let roles = Roles {
                    victim: &self.victim,
                    culprits: self.culprits.iter().map(String::as_str).collect(),
                    activation: activation(self.baseline_report.as_ref(), &self.base, &self.victim),
                };
                self.catalogue = catalogue(&self.base, &roles, &self.opts.families);
            }
            Stage::Screen | Stage::Combine(_) => {
                if self.judged.iter().any(|j| j.eval.met) {
                    self.finish(Stopped::Met);
                    return;
                }
            }
            Stage::Done => {}
        }
        if self.stopped == Some(Stopped::Budget) {
            self.stage = Stage::Done;
            return;
        }
        self.advance_stage();
    }

    /// Each knob's best setting alone (lowest worst-target score), best knobs first.
    pub fn sensitivity(&self) -> Vec<(usize, &Judged)> {
        let mut best: Vec<(usize, &Judged)> = Vec::new();
        for j in self.judged.iter().filter(|j| j.candidate.picks.len() == 1) {
            let k = j.candidate.picks[0].0;
            match best.iter_mut().find(|(kk, _)| *kk == k) {
                Some(slot) if j.eval.score < slot.1.eval.score => slot.1 = j,
                Some(_) => {}
                None => best.push((k, j)),
            }
        }
        best.sort_by_key(|(k, j)| (j.eval.score, *k));
        best
    }

    /// Candidates of `n` changes: each of the `BEAM` best candidates of
    /// `n - 1` changes (forward selection from the best singles), extended
    /// by one setting of another knob (each knob's `SETTINGS_PER_KNOB` best
    /// settings alone), in order of the parent's score plus the added
    /// setting's score alone. Two settings of the same key do not combine;
    /// nothing is tried twice.
    fn combinations(&self, n: usize) -> Vec<Candidate> {
        let Some(base) = self.baseline.as_ref() else { return Vec::new() };
        let mut parents: Vec<&Judged> =
            self.judged.iter().filter(|j| j.candidate.picks.len() + 1 == n && j.eval.score < base.eval.score).collect();
        parents.sort_by_key(|j| (j.eval.score, j.candidate.clone()));
        parents.truncate(BEAM);
        let mut singles: Vec<&Judged> = self.judged.iter().filter(|j| j.candidate.picks.len() == 1).collect();
        singles.sort_by_key(|j| (j.eval.score, j.candidate.clone()));
        let mut per_knob: Vec<(usize, usize, u64)> = Vec::new();
        for j in singles {
            let (k, st) = j.candidate.picks[0];
            if per_knob.iter().filter(|(kk, _, _)| *kk == k).count() < SETTINGS_PER_KNOB {
                per_knob.push((k, st, j.eval.score));
            }
        }
        let keys = |picks: &[(usize, usize)]| -> Vec<&String> {
            picks.iter().flat_map(|&(k, s)| self.catalogue.knobs[k].settings[s].sets.iter().map(|(key, _)| key)).collect()
        };
        let mut out: Vec<(u64, Candidate)> = Vec::new();
        for p in parents {
            for &(k, st, score) in &per_knob {
                if p.candidate.picks.iter().any(|&(pk, _)| pk == k) {
                    continue;
                }
                let mut picks = p.candidate.picks.clone();
                picks.push((k, st));
                picks.sort_unstable();
                let all = keys(&picks);
                let mut unique = all.clone();
                unique.sort();
                unique.dedup();
                let c = Candidate { picks };
                // A pair the scenario refuses (a slice on a FIFO task) is not a candidate.
                if unique.len() == all.len()
                    && !self.judged.iter().any(|j| j.candidate == c)
                    && !out.iter().any(|(_, o)| *o == c)
                    && self.scenario(&c).is_ok()
                {
                    out.push((p.eval.score.saturating_add(score), c));
                }
            }
        }
        out.sort();
        out.into_iter().map(|(_, c)| c).collect()
    }

    pub fn knob(&self, k: usize) -> &Knob {
        &self.catalogue.knobs[k]
    }
}

/// The victim's mean CPU time per wake-up in a run, and its period: the
/// program's `sleep_until` period when it has one (delays in the baseline
/// make releases run late or merge, so counting wake-ups overstates it),
/// else the mean time between its wake-ups per instance. None without wake-ups.
fn activation(r: Option<&RunReport>, s: &Scenario, victim: &str) -> Option<(u64, u64)> {
    let r = r?;
    let declared_period = s.spec.tasks.iter().find(|t| t.name == victim).and_then(|t| {
        t.program.steps.iter().find_map(|st| match st {
            crate::workload::program::Step::SleepUntil { period_ns, .. } => Some(*period_ns),
            _ => None,
        })
    });
    let mine: Vec<&crate::report::run::TaskReport> = r.tasks.iter().filter(|t| t.name == victim).collect();
    let wakeups: u64 = mine.iter().map(|t| t.wakeup_delay.count).sum();
    let runtime: u64 = mine.iter().map(|t| t.runtime_ns).sum();
    if wakeups == 0 {
        return None;
    }
    let per_instance = wakeups / (mine.len() as u64).max(1);
    Some((runtime / wakeups, declared_period.unwrap_or(r.sim_time_ns / per_instance.max(1))))
}

/// The tasks that held the victim's CPU while it waited, by time held
/// (its delay histogram's culprits, summed over buckets), most first; the
/// victim and host background threads left out. Without waits: the other
/// declared tasks by CPU time.
fn culprits(r: Option<&RunReport>, s: &Scenario, victim: &str) -> Vec<String> {
    let declared = |n: &str| s.spec.tasks.iter().any(|t| t.name == n && !t.machine_background && t.name != victim);
    let mut held: Vec<(String, u64)> = Vec::new();
    if let Some(r) = r {
        for b in &r.victim.histogram {
            for (name, ns) in &b.culprits {
                if !declared(name) {
                    continue;
                }
                match held.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 += ns,
                    None => held.push((name.clone(), *ns)),
                }
            }
        }
        if held.is_empty() {
            for d in &r.tasks {
                if declared(&d.name) {
                    match held.iter_mut().find(|(n, _)| *n == d.name) {
                        Some(slot) => slot.1 += d.runtime_ns,
                        None => held.push((d.name.clone(), d.runtime_ns)),
                    }
                }
            }
        }
    }
    held.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    held.into_iter().take(CULPRITS_MAX).map(|(n, _)| n).collect()
}
