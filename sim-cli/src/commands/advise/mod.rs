//! `sim-cli advise`: the core's search (`sim_core::advise_with`) with a
//! runner that runs each batch's band runs on worker threads, then prints the answer
//! (`table.rs`) or its JSON (`sim_core::advice_json`). Threads decide only
//! when a run happens: each batch's reports go back in the batch's order.

mod table;
#[cfg(test)]
mod tests;

use crate::args::AdviseArgs;
use anyhow::{Result, anyhow};
use sim_core::{AdviseOptions, BandPlan, KnobFamily, ReportSections, RunReport, Scenario, Target};

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
    let bar = crate::progress::bar(a.budget, "runs", !a.common.json);
    // Threads decide only when a run happens: the reports go back per
    // candidate, in the batch's order.
    let mut run = |batch: &[Vec<Scenario>], sections: ReportSections| -> Vec<Vec<RunReport>> {
        let flat: Vec<(usize, &Scenario)> =
            batch.iter().enumerate().flat_map(|(i, v)| v.iter().map(move |s| (i, s))).collect();
        let reports = crate::parallel::map_in_order(&flat, jobs, "advise", |(_, s)| {
            let r = sim_core::run_recording(s, sections);
            bar.inc(1);
            r
        });
        let mut per: Vec<Vec<RunReport>> = vec![Vec::new(); batch.len()];
        for ((i, _), r) in flat.iter().zip(reports) {
            per[*i].push(r);
        }
        per
    };
    let advice =
        sim_core::advise_with(&base, opts, &mut run).map_err(|e| anyhow!("{}: {e}", a.common.file.display()))?;
    bar.finish_and_clear();
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
