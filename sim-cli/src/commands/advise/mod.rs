//! `sim-cli advise`: drives the core's stepwise search (`sim_core::Advisor`),
//! running each batch's band runs on worker threads, then prints the answer
//! (`table.rs`) or its JSON (`sim_core::advice_json`). Threads decide only
//! when a run happens: each batch's reports go back in the batch's order.

mod table;
#[cfg(test)]
mod tests;

use crate::args::AdviseArgs;
use anyhow::{Context, Result, anyhow};
use sim_core::{AdviseOptions, Advisor, BandPlan, KnobFamily, RunReport, Target};

/// The answer's text (or JSON), and the first fix's `--set`s when it meets
/// every target (what `--verify` measures).
pub fn advise(a: &AdviseArgs) -> Result<(String, Option<Vec<String>>)> {
    let targets =
        a.target.iter().map(|t| Target::parse(t)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
    let families = KnobFamily::parse_list(&a.knobs).map_err(anyhow::Error::msg)?;
    let band = BandPlan::new(a.phases, a.seeds).map_err(anyhow::Error::msg)?;
    let mut base = crate::input::load(&a.common, &a.common.set)?;
    if let Some(v) = &a.variant {
        base = base.with_variant(v)?;
    }
    let base = crate::input::with_noise(base, a.noise.as_deref())?;
    let jobs = match a.jobs {
        Some(j) => usize::from(j),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let opts = AdviseOptions { targets, families, budget_runs: a.budget, band };
    let mut adv = Advisor::new(&base, opts).map_err(|e| anyhow!("{}: {e}", a.common.file.display()))?;
    let bar = crate::progress::bar(a.budget, "runs", !a.common.json);
    // Bounded: every batch spends runs of the finite budget; an empty batch ends it.
    loop {
        let batch = adv.next_batch();
        if batch.is_empty() {
            break;
        }
        let scenarios: Vec<(usize, sim_core::Scenario)> = batch
            .iter()
            .enumerate()
            .map(|(i, c)| adv.band_scenarios(c).map(|v| v.into_iter().map(move |s| (i, s))))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .flatten()
            .collect();
        let reports = crate::parallel::map_in_order(&scenarios, jobs, "advise", |(_, s)| {
            let r = sim_core::run(s);
            bar.inc(1);
            r
        });
        let mut per: Vec<Vec<RunReport>> = vec![Vec::new(); batch.len()];
        for ((i, _), r) in scenarios.iter().zip(reports) {
            per[*i].push(r);
        }
        adv.record(&batch, per);
    }
    bar.finish_and_clear();
    let after = match sim_core::best_met(&adv) {
        Some(c) => Some(sim_core::run(&adv.scenario(&c)?)),
        None => None,
    };
    let advice = sim_core::advice(&adv, after.as_ref()).context("the search recorded no baseline")?;
    let fix = advice.fixes.first().filter(|f| f.eval.met).map(|f| f.set());
    if a.common.json {
        return Ok((sim_core::advice_json(&advice) + "\n", fix));
    }
    Ok((table::render(&advice, &a.common.file.display().to_string()), fix))
}

/// The `--set`s that measure a fix: the user's, less any key the fix sets,
/// then the fix's (one batch may not set a key twice).
pub fn verify_sets(user: &[String], fix: &[String]) -> Vec<String> {
    let key = |kv: &String| kv.split_once('=').map_or(kv.clone(), |(k, _)| k.trim().to_string());
    let fixed: Vec<String> = fix.iter().map(key).collect();
    user.iter().filter(|kv| !fixed.contains(&key(kv))).chain(fix).cloned().collect()
}
