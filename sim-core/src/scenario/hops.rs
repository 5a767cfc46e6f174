//! Requests across thread hops: each task declaration may name, with
//! `forward = "NAME"`, the declaration its served items go to next, and give
//! the work of items that arrive that way (`hop_work`). A task without
//! `forward` is a sink, where a request completes. Each declaration has at
//! most one `forward`, so the hops from any task form a chain that either
//! ends at a sink or runs into a cycle; cycles are refused here, so every
//! route ends.
//!
//! Instance choice (done by the engine, `Simulation::forward_item`): when the
//! target declaration has several instances, the item goes to the one with
//! the fewest items outstanding (queued, plus the one in service), skipping
//! exited instances; ties go round-robin from a per-declaration cursor that
//! moves past each chosen instance. Deterministic, and no RNG draw.

use super::error::{KeyError, did_you_mean};
use super::file::ScenarioFile;
use super::spec::TaskSpec;
use super::values::{dist_value, task_key};
use crate::workload::Step;

/// Fills `forward` and `hop_work` of every declaration (`tasks` in file
/// order) and refuses: an unknown `forward` name, `forward` on a task that
/// does not serve, a target that does not serve, hops that form a cycle,
/// and `hop_work` on a task no `forward` reaches.
pub(super) fn resolve(f: &ScenarioFile, tasks: &mut [TaskSpec]) -> Result<(), KeyError> {
    let names: Vec<&str> = f.tasks.iter().map(|t| t.name.as_str()).collect();
    let serves = |i: usize| tasks[i].program.steps.contains(&Step::Serve);
    let mut forward = vec![None; tasks.len()];
    for (i, t) in f.tasks.iter().enumerate() {
        let Some(target) = &t.forward else { continue };
        let key = format!("{}.forward", task_key(&t.name));
        let j = names.iter().position(|n| n == target).ok_or_else(|| {
            KeyError::new(
                &key,
                format!(
                    "no task named `{target}`{}; forward takes a task declaration's name: {}",
                    did_you_mean(target, &names),
                    names.join(", ")
                ),
            )
        })?;
        if !serves(i) {
            return Err(KeyError::new(
                &key,
                format!(
                    "task `{}` has no `serve` step, so it has no items to forward; forward is allowed only on a \
                     task whose program serves",
                    t.name
                ),
            ));
        }
        if !serves(j) {
            return Err(KeyError::new(
                &key,
                format!("task `{target}` has no `serve` step, so nothing would handle the forwarded items"),
            ));
        }
        forward[i] = Some(j);
    }
    if let Some(cycle) = first_cycle(&forward) {
        let path: Vec<&str> = cycle.iter().map(|&i| names[i]).collect();
        return Err(KeyError::new(
            format!("{}.forward", task_key(names[cycle[0]])),
            format!(
                "hops form a cycle without a sink: {}; a request must end at a task without `forward`",
                path.join(" → ")
            ),
        ));
    }
    for (i, t) in f.tasks.iter().enumerate() {
        tasks[i].forward = forward[i];
        let Some(v) = &t.hop_work else { continue };
        let key = format!("{}.hop_work", task_key(&t.name));
        if !forward.contains(&Some(i)) {
            return Err(KeyError::new(
                key,
                format!(
                    "no task forwards to `{}`: hop_work is the work of items arriving by `forward` (a source's \
                     items keep its `work`); add `forward = \"{}\"` to a task or remove hop_work",
                    t.name, t.name
                ),
            ));
        }
        tasks[i].hop_work = Some(dist_value(v, &key)?);
    }
    Ok(())
}

/// The first cycle met walking each declaration's hops in file order, as the
/// declarations on it with the first repeated at the end (`a → b → a`).
fn first_cycle(forward: &[Option<usize>]) -> Option<Vec<usize>> {
    for start in 0..forward.len() {
        let mut path = vec![start];
        let mut at = start;
        // A chain without a cycle visits each declaration at most once.
        while let Some(next) = forward[at] {
            if let Some(k) = path.iter().position(|&p| p == next) {
                let mut cycle = path[k..].to_vec();
                cycle.push(next);
                return Some(cycle);
            }
            path.push(next);
            at = next;
        }
    }
    None
}

/// The route of a source's requests: `target`, each `forward` after it, and
/// the sink. `resolve` has refused cycles, so the walk ends; it is bounded by
/// the number of declarations all the same.
pub fn route(tasks: &[TaskSpec], target: usize) -> Vec<usize> {
    let mut route = vec![target];
    let mut at = target;
    while let Some(next) = tasks[at].forward {
        if route.len() > tasks.len() {
            break;
        }
        route.push(next);
        at = next;
    }
    route
}

#[cfg(test)]
mod tests {
    use super::first_cycle;
    use crate::scenario::Scenario;

    fn chain(extra: &str) -> String {
        format!(
            r#"
            schema = 1
            seed = 1
            duration = "10ms"
            [machine]
            cpus = 1
            [[tasks]]
            name = "a"
            program = ["serve"]
            forward = "b"
            [[tasks]]
            name = "b"
            program = ["serve"]
            {extra}
            [[tasks]]
            name = "c"
            program = ["serve"]
            [[sources]]
            name = "req"
            target = "a"
            interval = "1ms"
            work = "10us"
            "#
        )
    }

    fn err(toml: &str) -> String {
        Scenario::from_toml("h.toml", toml).map(drop).unwrap_err().to_string()
    }

    #[test]
    fn routes_follow_forward_to_the_sink() {
        let s = Scenario::from_toml("h.toml", &chain("forward = \"c\"\nhop_work = \"5us\"")).unwrap();
        assert_eq!(s.spec.sources[0].route, vec![0, 1, 2]);
        assert_eq!(s.spec.tasks[1].hop_work.as_ref().map(|d| d.mean_ns() as u64), Some(5_000));
        assert_eq!(s.spec.tasks[2].forward, None);
        let s = Scenario::from_toml("h.toml", &chain("")).unwrap();
        assert_eq!(s.spec.sources[0].route, vec![0, 1]);
    }

    #[test]
    fn cycles_are_refused_naming_the_loop() {
        let e = err(&chain("forward = \"a\""));
        assert!(e.contains("tasks.a.forward") && e.contains("hops form a cycle without a sink: a → b → a"), "{e}");
        assert_eq!(first_cycle(&[Some(0)]), Some(vec![0, 0]));
        assert_eq!(first_cycle(&[Some(1), Some(2), Some(1)]), Some(vec![1, 2, 1]));
        assert_eq!(first_cycle(&[Some(1), Some(2), None]), None);
    }

    #[test]
    fn bad_forward_and_hop_work_are_refused() {
        let e = err(&chain("forward = \"cc\""));
        assert!(e.contains("tasks.b.forward") && e.contains("did you mean `c`") && e.contains("a, b, c"), "{e}");
        let e = err(&chain("hop_work = \"1us\"\n[[tasks]]\nname = \"d\"\nprogram = [\"serve\"]\nhop_work = \"1us\""));
        assert!(e.contains("tasks.d.hop_work") && e.contains("no task forwards to `d`"), "{e}");
        let hog = chain("forward = \"c\"").replace(
            "name = \"c\"\n            program = [\"serve\"]",
            "name = \"c\"\n            program = [{ run = \"1ms\" }]",
        );
        let e = err(&hog);
        assert!(e.contains("tasks.b.forward") && e.contains("`c` has no `serve` step"), "{e}");
    }
}
