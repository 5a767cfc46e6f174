//! Text rendering of the elastic CPU limiters of a report: one table per
//! limiter with its adjustments over time (at most `ROWS_MAX` rows, evenly
//! spaced for long runs) and its totals.

use sim_core::RunReport;
use sim_core::report::limiter::{LimiterReport, percent, percent_fine};
use sim_core::time::format_duration;
use std::fmt::Write;

/// Rows of the time series shown per limiter.
pub const ROWS_MAX: usize = 20;

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// The limiters' section (nothing when the scenario has none).
pub fn limiter_text(r: &RunReport, out: &mut String) {
    for l in &r.limiters {
        one(r, l, out);
    }
}

fn one(r: &RunReport, l: &LimiterReport, out: &mut String) {
    let _ = writeln!(
        out,
        "\nElastic CPU limiter `{}` (limits {}; reads p{} of {}'s scheduling delays over {}, target {}; every {}; \
         floor {}, ceiling {}, steps +{} / -{}; grants of {})",
        l.name,
        if l.tasks.is_empty() { "no task".to_string() } else { l.tasks.join(", ") },
        l.percentile,
        l.watch.join(", "),
        format_duration(l.window_ns),
        format_duration(l.target_ns),
        format_duration(l.adjust_every_ns),
        percent(u64::from(l.floor_ppm)),
        percent(u64::from(l.ceiling_ppm)),
        percent_fine(u64::from(l.step_up_ppm)),
        percent_fine(u64::from(l.step_down_ppm)),
        format_duration(l.grant_ns),
    );
    let p = format!("p{} (window)", l.percentile);
    let _ = writeln!(out, "  {:>10} {:>8} {:>13} {:>12} {:>14}", "time", "limit", "granted", "elastic CPU", p);
    let rows = l.downsampled(ROWS_MAX);
    for s in &rows {
        let observed = s.observed_ns.map_or_else(|| "no delays".to_string(), ms);
        let _ = writeln!(
            out,
            "  {:>10} {:>8} {:>13} {:>12} {:>14}",
            secs(s.at_ns),
            percent(u64::from(s.limit_ppm)),
            secs(s.granted_ns),
            percent(l.used_share_ppm(s)),
            observed
        );
    }
    let periods = l.samples.len() as u64 * l.stride;
    if rows.len() < l.samples.len() || l.stride > 1 {
        let _ = writeln!(
            out,
            "  ({periods} adjustments in {} rows: each row sums CPU granted and used since the row before, with the \
             limit and window percentile at its time)",
            rows.len()
        );
    } else if rows.is_empty() {
        let _ = writeln!(
            out,
            "  (no adjustment before the end: the first comes after {})",
            format_duration(l.adjust_every_ns)
        );
    }
    let machine = u128::from(r.sim_time_ns) * u128::from(l.cpus);
    let share = (u128::from(l.used_ns) * 1_000_000).checked_div(machine).unwrap_or(0) as u64;
    let _ = writeln!(
        out,
        "  totals: elastic CPU {} ({} of the machine); {} grants ({}), {} returned unused; {} waited for grants{}; \
         limit at the end {}",
        secs(l.used_ns),
        percent(share),
        l.grants,
        secs(l.granted_ns),
        secs(l.returned_ns),
        secs(l.wait_ns),
        if l.waiting > 0 { format!(" ({} still waiting)", l.waiting) } else { String::new() },
        percent(u64::from(l.limit_ppm)),
    );
}

/// Rows of `compare`: per limiter of the first run, what it limits, its
/// limit at the end, the elastic CPU used and the time spent waiting for
/// grants ("-" in a run without it; "none" where a variant lifted it).
pub fn compare_rows(runs: &[RunReport], line: &mut dyn FnMut(&str, Vec<String>)) {
    for l0 in &runs[0].limiters {
        let cell = |f: &dyn Fn(&LimiterReport) -> String| {
            runs.iter().map(|r| r.limiters.iter().find(|l| l.name == l0.name).map_or("-".into(), f)).collect::<Vec<_>>()
        };
        let limited = |l: &LimiterReport| !l.tasks.is_empty();
        line(
            &format!("limiter {}: limits", l0.name),
            cell(&|l| if limited(l) { l.tasks.join(", ") } else { "none".into() }),
        );
        line("  limit at the end", cell(&|l| if limited(l) { percent(u64::from(l.limit_ppm)) } else { "-".into() }));
        line("  elastic CPU used", cell(&|l| if limited(l) { secs(l.used_ns) } else { "-".into() }));
        line("  waited for grants", cell(&|l| if limited(l) { secs(l.wait_ns) } else { "-".into() }));
    }
}

#[cfg(test)]
mod tests {
    use sim_core::Scenario;

    #[test]
    fn the_table_is_short_and_says_it_was_downsampled() {
        let toml = "schema = 1\nseed = 1\nduration = \"10s\"\n[machine]\ncpus = 1\n[limiters.l]\nwatch = [\"hog\"]\n\
                    floor = 0.5\nceiling = 0.5\n[[tasks]]\nname = \"hog\"\nlimiter = \"l\"\nprogram = [{ run = \"2s\" }]\n";
        let r = sim_core::run(&Scenario::from_toml("t.toml", toml).unwrap());
        let mut out = String::new();
        super::limiter_text(&r, &mut out);
        let rows = out.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).count();
        assert_eq!(rows, super::ROWS_MAX, "{out}");
        assert!(out.contains("99 adjustments in 20 rows"), "{out}");
        assert!(out.contains("elastic CPU 5.000 s (50.0% of the machine); 50 grants"), "{out}");
        assert!(out.contains("50.0%"), "{out}");
        let free = sim_core::run(
            &Scenario::from_toml("t.toml", toml).unwrap().with_overrides(&[("tasks.hog.limiter", "\"\"")]).unwrap(),
        );
        let mut rows = Vec::new();
        super::compare_rows(&[r, free], &mut |label, cells| rows.push(format!("{label}: {}", cells.join(" | "))));
        assert_eq!(
            rows,
            [
                "limiter l: limits: hog | none",
                "  limit at the end: 50.0% | -",
                "  elastic CPU used: 5.000 s | -",
                // 49 waits of 100 ms, and the one open at the end (9.9 s to 10 s).
                "  waited for grants: 5.000 s | -"
            ]
        );
    }
}
