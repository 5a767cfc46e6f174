//! HdrHistogram's percentile-distribution text (`.hgrm`) of a task's
//! scheduling delays, as `outputPercentileDistribution` prints it (5 ticks
//! per half-distance, values in milliseconds), so the usual HdrHistogram
//! plotter reads it. The histogram is the `hdrhistogram` crate's, filled
//! from the report's distribution (each bucket of the simulator's own
//! histogram, under 0.8% wide, recorded at its highest value).

use anyhow::{Result, bail};
use hdrhistogram::Histogram;
use sim_core::RunReport;
use std::fmt::Write;

/// Significant digits of the histogram (and decimals printed).
const SIGFIG: u8 = 3;
/// Nanoseconds per printed unit (milliseconds).
const SCALE: f64 = 1e6;

/// Checks that `task` (`""`: the victim) is one of `names` (the declared
/// tasks), before anything runs.
pub fn check<'a>(task: &str, mut names: impl Iterator<Item = &'a str> + Clone) -> Result<()> {
    if task.is_empty() || names.clone().any(|n| n == task) {
        return Ok(());
    }
    bail!("--hgrm {task}: no such task; the scenario's tasks are {}", names.by_ref().collect::<Vec<_>>().join(", "))
}

/// The `.hgrm` text of `task`'s delays (`""`: the report's victim).
pub fn hgrm(r: &RunReport, task: &str) -> Result<String> {
    check(task, r.task_delays.iter().map(|d| d.name.as_str()))?;
    let name = if task.is_empty() { r.victim.name.as_str() } else { task };
    let Some(d) = r.task_delays.iter().find(|d| d.name == name) else {
        bail!("--hgrm {name}: the report has no delays for it");
    };
    let high = d.delay.max_ns.max(2);
    let mut h = Histogram::<u64>::new_with_bounds(1, high, SIGFIG)?;
    let mut seen = 0;
    for p in &d.cdf {
        h.record_n(p.value_ns, p.count - seen)?;
        seen = p.count;
    }
    let mut out = String::new();
    let _ = writeln!(out, "{:>12} {:>14} {:>10} {:>14}\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    if h.is_empty() {
        let _ = writeln!(out, "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]", 0.0, 0.0);
        let _ = writeln!(out, "#[Max     = {:12.3}, Total count    = {:12}]", 0.0, 0);
    } else {
        let mut total = 0u64;
        for v in h.iter_quantiles(5) {
            total += v.count_since_last_iteration();
            let value = v.value_iterated_to() as f64 / SCALE;
            let q = v.quantile_iterated_to();
            if q < 1.0 {
                let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10} {:14.2}", 1.0 / (1.0 - q));
            } else {
                let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10}");
            }
        }
        let _ = writeln!(out, "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]", h.mean() / SCALE, h.stdev() / SCALE);
        let _ = writeln!(out, "#[Max     = {:12.3}, Total count    = {:12}]", h.max() as f64 / SCALE, h.len());
    }
    // HdrHistogram's layout: 2^ceil(log2(2·10^sigfig)) sub-buckets.
    let sub_buckets = (2 * 10u64.pow(u32::from(SIGFIG))).next_power_of_two();
    let _ = writeln!(out, "#[Buckets = {:12}, SubBuckets     = {:12}]", h.buckets(), sub_buckets);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// One CPU, HZ 1000, no wakeup preemption: a task waking every ~2 ms
    /// (exponential) next to a hog waits for a tick at which
    /// `check_preempt_tick` finds the hog past its slice or too far ahead in
    /// vruntime: delays spread over 0-2 ms, a distribution worth pinning.
    const SMALL: &str = r#"
        schema = 1
        seed = 3
        duration = "1s"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = 1000
        [report]
        victim = "sleeper"
        [features]
        WAKEUP_PREEMPTION = false
        [[tasks]]
        name = "hog"
        program = [{ run = "10s" }]
        [[tasks]]
        name = "sleeper"
        program = [{ sleep = "exp(2ms)" }, { run = "300us" }]
    "#;

    #[test]
    fn hgrm_is_hdrhistograms_percentile_distribution() {
        let r = sim_core::run(&sim_core::Scenario::from_toml("small.toml", SMALL).unwrap());
        let text = hgrm(&r, "").unwrap();
        // The footer agrees with the report's own figures (the histogram
        // rounds up to its bucket's top, within 0.1%).
        let d = &r.victim.delay;
        assert!(text.contains(&format!("Total count    = {:12}", d.count)), "{text}");
        expect![[r#"
           Value     Percentile TotalCount 1/(1-Percentile)

           0.004 0.000000000000          1           1.00
           0.144 0.100000000000         33           1.11
           0.322 0.200000000000         65           1.25
           0.461 0.300000000000         99           1.43
           0.586 0.400000000000        130           1.67
           0.725 0.500000000000        163           2.00
           0.791 0.550000000000        179           2.22
           0.856 0.600000000000        197           2.50
           0.905 0.650000000000        211           2.86
           0.971 0.700000000000        229           3.33
           1.098 0.750000000000        244           4.00
           1.196 0.775000000000        252           4.44
           1.245 0.800000000000        260           5.00
           1.303 0.825000000000        268           5.71
           1.343 0.850000000000        276           6.67
           1.409 0.875000000000        284           8.00
           1.466 0.887500000000        292           8.89
           1.466 0.900000000000        292          10.00
           1.491 0.912500000000        296          11.43
           1.516 0.925000000000        300          13.33
           1.540 0.937500000000        304          16.00
           1.556 0.943750000000        306          17.78
           1.581 0.950000000000        308          20.00
           1.606 0.956250000000        311          22.86
           1.622 0.962500000000        315          26.67
           1.622 0.968750000000        315          32.00
           1.622 0.971875000000        315          35.56
           1.630 0.975000000000        317          40.00
           1.630 0.978125000000        317          45.71
           1.663 0.981250000000        318          53.33
           1.679 0.984375000000        320          64.00
           1.679 0.985937500000        320          71.11
           1.679 0.987500000000        320          80.00
           1.688 0.989062500000        321          91.43
           1.688 0.990625000000        321         106.67
           1.695 0.992187500000        324         128.00
           1.695 1.000000000000        324
    #[Mean    =        0.764, StdDeviation   =        0.462]
    #[Max     =        1.695, Total count    =          324]
    #[Buckets =           11, SubBuckets     =         2048]
"#]]
        .assert_eq(&text);
        assert_eq!(hgrm(&r, "sleeper").unwrap(), text);
        assert!(hgrm(&r, "hog").unwrap() != text);
    }
}
