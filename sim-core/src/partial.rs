//! Why a report is partial, in one sentence that every front end shows as
//! is: the CLI's warning line (stdout with the text report, stderr with
//! `--json`) and the browser explorer's notice. One wording, so a user sees
//! the same explanation wherever the run happened.

use crate::engine::StopReason;
use crate::report::RunReport;
use crate::time::Secs;

/// The explanation for a run that stopped before its duration and left a
/// partial report (`EventLimit`, `Stalled`); `None` for a complete run
/// (`TimeLimit`, `Quiescent`) and for a run still in progress.
///
/// For an event budget that ran out, it adds the rate at which the run was
/// spending events and what the whole duration would need at that rate, so
/// a user can tell a budget set too low from a scenario that explodes.
pub fn partial_warning(r: &RunReport) -> Option<String> {
    match r.stop {
        StopReason::EventLimit => {
            let mut s = format!(
                "the event budget (limits.events_max = {}) ran out at {} s of {} s: this report is partial",
                r.settings.events_max,
                Secs(r.sim_time_ns),
                Secs(r.settings.duration_ns)
            );
            if r.sim_time_ns > 0 {
                let per_ms = u128::from(r.events) * 1_000_000 / u128::from(r.sim_time_ns);
                let whole = r.events as f64 * r.settings.duration_ns as f64 / r.sim_time_ns as f64;
                s += &format!(
                    " ({} events per simulated ms; the whole run would need about {whole:.1e} events)",
                    grouped(per_ms)
                );
            }
            Some(s)
        }
        StopReason::Stalled => Some(format!(
            "simulated time stopped advancing at {} s (a program loops without taking time, e.g. a zero-length run with yield, or a wake/wait ping-pong): this report is partial",
            Secs(r.sim_time_ns)
        )),
        StopReason::TimeLimit | StopReason::Quiescent | StopReason::BudgetSpent => None,
    }
}

/// `96006144` as `96,006,144`.
fn grouped(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scenario, run};

    fn report(toml: &str) -> RunReport {
        run(&Scenario::from_toml("t.toml", toml).unwrap())
    }

    const HEAD: &str = "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 1000\n";

    #[test]
    fn an_event_budget_that_ran_out_is_explained_with_the_rate() {
        let r = report(&format!(
            "{HEAD}[limits]\nevents_max = 1000\n[[tasks]]\nname = \"t\"\ncount = 2\nprogram = [{{ run = \"1us\" }}, {{ sleep = \"1us\" }}]\n"
        ));
        assert_eq!(r.stop, StopReason::EventLimit);
        let w = partial_warning(&r).unwrap();
        assert!(
            w.starts_with("the event budget (limits.events_max = 1000) ran out at 0.000")
                && w.contains(" s of 1.000000 s: this report is partial ("),
            "{w}"
        );
        assert!(
            w.contains(" events per simulated ms; the whole run would need about ") && w.ends_with("e6 events)"),
            "{w}"
        );
    }

    #[test]
    fn large_numbers_are_grouped_by_thousands() {
        assert_eq!([0, 999, 1000, 96_006_144].map(grouped), ["0", "999", "1,000", "96,006,144"]);
    }

    #[test]
    fn complete_and_stalled_runs() {
        let hog = "[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1s\" }]\n";
        assert_eq!(partial_warning(&report(&format!("{HEAD}{hog}"))), None);
        // A wake/wait ping-pong that never takes time (see sched::tests).
        let pong = "[[tasks]]\nname = \"a\"\nstart = \"1ms\"\nprogram = [{ wake = \"b\" }, \"wait\"]\n[[tasks]]\nname = \"b\"\nprogram = [{ wake = \"a\" }, \"wait\"]\n";
        let r = report(&format!("{HEAD}{pong}"));
        assert_eq!(r.stop, StopReason::Stalled);
        let w = partial_warning(&r).unwrap();
        assert!(
            w.starts_with("simulated time stopped advancing at 0.001000 s (") && w.ends_with("this report is partial"),
            "{w}"
        );
    }
}
