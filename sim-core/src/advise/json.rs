//! The JSON form of an answer (`sim-cli advise --json`): integers, strings
//! and booleans only. Each fix's `set` list is usable verbatim as
//! `--set KEY=VALUE` with `sim-cli run`.

use super::effects::{Evaluation, SideEffect, Spread, TaskLot};
use super::{Advice, Fix, WorstWait};
use serde_json::{Value, json};

fn spread(s: &Spread) -> Value {
    json!({ "median_ns": s.median, "min_ns": s.min, "max_ns": s.max })
}

fn eval(a: &Advice, e: &Evaluation) -> Value {
    json!({
        "met": e.met,
        "score_ppm": e.score,
        "targets": a.targets.iter().zip(&e.targets).map(|(t, s)| {
            let mut v = spread(s);
            v["target"] = json!(t.text);
            v["met"] = json!(s.max <= t.limit_ns);
            v
        }).collect::<Vec<_>>(),
        "tasks": e.tasks.iter().map(lot).collect::<Vec<_>>(),
        "utilisation_ppm": e.utilisation_ppm,
    })
}

fn lot(t: &TaskLot) -> Value {
    json!({ "task": t.name, "cpu_ppm": t.cpu_ppm, "completed": t.completed, "p99_ns": t.p99_ns, "max_ns": t.max_ns, "io_max_ns": t.io_max_ns })
}

fn effect(e: &SideEffect) -> Value {
    json!({
        "task": e.task, "before": lot(&e.before), "after": lot(&e.after),
        "delay_moved": e.delay_moved, "share_lost": e.share_lost,
    })
}

fn fix(a: &Advice, f: &Fix) -> Value {
    json!({
        "changes": f.changes.iter().map(|c| json!({
            "knob": c.knob, "setting": c.setting, "family": c.family.name(), "needs": c.needs.name(),
            "shifts_share": c.shifts_share, "set": c.set, "apply": c.apply,
        })).collect::<Vec<_>>(),
        "set": f.set(),
        "needs": f.needs.name(),
        "eval": eval(a, &f.eval),
        "side_effects": f.side_effects.iter().map(effect).collect::<Vec<_>>(),
        "moves_cost": f.moves_cost(),
    })
}

fn worst(w: &WorstWait) -> Value {
    json!({
        "delay_ns": w.delay_ns, "kind": w.kind, "cpu": w.cpu, "at_ns": w.at_ns,
        "held_by": w.held_by.iter().map(|(n, ns)| json!({ "task": n, "ns": ns })).collect::<Vec<_>>(),
        "one_hog_bound_ns": w.one_hog_bound_ns,
    })
}

/// The answer as pretty JSON.
pub fn advice_json(a: &Advice) -> String {
    let v = json!({
        "scenario": a.scenario,
        "model": a.model,
        "victim": a.victim,
        "culprits": a.culprits,
        "targets": a.targets.iter().map(|t| json!({ "text": t.text, "stat": t.stat.name(), "limit_ns": t.limit_ns })).collect::<Vec<_>>(),
        "phases": a.phases,
        "seeds": a.seeds,
        "budget_runs": a.budget_runs,
        "runs": a.runs,
        "stopped": a.stopped.text(),
        "families": a.families.iter().map(|f| f.name()).collect::<Vec<_>>(),
        "knobs": a.knobs,
        "settings": a.settings,
        "skipped": a.skipped,
        "baseline": eval(a, &a.baseline),
        "sensitivity": a.sensitivity.iter().map(|r| json!({
            "knob": r.knob, "family": r.family.name(), "best": r.best, "tried": r.tried,
            "targets": r.targets.iter().map(spread).collect::<Vec<_>>(), "score_ppm": r.score, "met": r.met,
        })).collect::<Vec<_>>(),
        "fixes": a.fixes.iter().map(|f| fix(a, f)).collect::<Vec<_>>(),
        "why": a.why.as_ref().map(|w| json!({
            "task": w.task,
            "before": w.before.as_ref().map(worst),
            "after": w.after.as_ref().map(worst),
            "bound_rule": w.bound_rule,
        })),
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
