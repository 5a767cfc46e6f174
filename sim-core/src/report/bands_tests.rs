//! Tests of the bands: the points' offsets and seeds, the fold's median,
//! minimum and maximum, both flags, and the plan's error texts.

use super::*;

/// One CPU at HZ=250 (a 4 ms tick) with the grid at 500 us; a hog and a
/// 1 ms reactor.
const TOML: &str = "schema = 1\nseed = 7\nduration = \"200ms\"\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 1\nhz = 250\ntick_offset = \"500us\"\n[report]\nvictim = \"r\"\n[[tasks]]\nname = \"r\"\nprogram = [{ sleep_until = \"1ms\" }, { run = \"50us\" }]\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n";

fn scenario() -> Scenario {
    Scenario::from_toml("t.toml", TOML).unwrap()
}

#[test]
fn points_spread_the_phases_across_one_tick_seed_major() {
    let s = scenario();
    let plan = BandPlan::new(8, 2).unwrap();
    let points = plan.points(&s);
    assert_eq!(points.len(), 16);
    // Point 0 is the scenario as given.
    assert_eq!(points[0], BandPoint { phase: 0, seed_index: 0, tick_offset_ns: 500_000, seed: 7 });
    let offsets: Vec<u64> = points[..8].iter().map(|p| p.tick_offset_ns / 1000).collect();
    // 500 us + k × 4 ms / 8, wrapped below 4 ms.
    assert_eq!(offsets, [500, 1000, 1500, 2000, 2500, 3000, 3500, 0]);
    assert!(points[..8].iter().all(|p| p.seed == 7 && p.seed_index == 0));
    assert_eq!(points[9], BandPoint { phase: 1, seed_index: 1, tick_offset_ns: 1_000_000, seed: 8 });
    // HZ=300: TICK_NSEC = 3333333, three phases in integer ns.
    let s300 = s.with_overrides(&[("machine.hz", "300"), ("machine.tick_offset", "0")]).unwrap();
    let p3: Vec<u64> = BandPlan::new(3, 1).unwrap().points(&s300).iter().map(|p| p.tick_offset_ns).collect();
    assert_eq!(p3, [0, 1_111_111, 2_222_222]);
}

#[test]
fn a_point_is_the_scenario_with_its_offset_and_seed_set() {
    let s = scenario();
    let plan = BandPlan::new(4, 3).unwrap();
    let points = plan.points(&s);
    assert_eq!(plan.scenario(&s, &points[0]).unwrap().spec, s.spec);
    let p = &points[6]; // phase 2 of seed 1
    let t = plan.scenario(&s, p).unwrap();
    assert_eq!((t.spec.machine.tick_offset_ns, t.spec.seed), (2_500_000, 8));
    let by_set = s.with_overrides(&[("machine.tick_offset", "2500us"), ("seed", "8")]).unwrap();
    assert_eq!(t.spec, by_set.spec);
}

#[test]
fn plan_errors_name_the_flag_the_value_and_the_range() {
    assert_eq!(BandPlan::new(0, 1).unwrap_err().split(" (").next(), Some("--phases 0: allowed 1 to 64"));
    assert!(BandPlan::new(65, 1).unwrap_err().starts_with("--phases 65: allowed 1 to 64"));
    assert!(BandPlan::new(1, 0).unwrap_err().starts_with("--seeds 0: allowed 1 to 32"));
    assert!(BandPlan::new(64, 33).unwrap_err().starts_with("--seeds 33: allowed 1 to 32"));
    assert!(BandPlan::new(64, 32).is_ok() && BandPlan::new(1, 1).unwrap().is_single());
}

#[test]
fn a_stat_band_has_the_lower_median_and_its_extremes() {
    let plan = BandPlan { phases: 4, seeds: 1 };
    let b = stat_band("max", &[30, 10, 40, 20], &plan);
    assert_eq!((b.base_ns, b.median_ns, b.min_ns, b.max_ns), (30, 20, 10, 40));
    // 10 < 0.75 × 20: wider than ±25 % over the phases; one seed cannot vary.
    assert!(b.phase_sensitive && !b.seed_sensitive);
    assert_eq!(b.spread_pct(), Some(100));
    assert_eq!(b.own_phase_ns, 30, "one seed: phase 0's own value");
    // Seed-major: phase 0 is values[0], values[2], values[4]; their median 7.
    let seeds = stat_band("max", &[9, 1, 5, 1, 7, 1], &BandPlan { phases: 2, seeds: 3 });
    assert_eq!((seeds.base_ns, seeds.own_phase_ns), (9, 7));
    let narrow = stat_band("p99", &[100, 110, 90, 124], &plan);
    assert_eq!(narrow.median_ns, 100);
    assert!(!narrow.phase_sensitive, "{narrow:?}");
    // Exactly ±25 % is inside; just past it is not.
    assert!(!stat_band("p99", &[75, 100, 125], &BandPlan { phases: 3, seeds: 1 }).phase_sensitive);
    assert!(stat_band("p99", &[74, 100, 125], &BandPlan { phases: 3, seeds: 1 }).phase_sensitive);
    assert!(stat_band("p99", &[75, 100, 126], &BandPlan { phases: 3, seeds: 1 }).phase_sensitive);
    // A zero median with a positive maximum counts.
    assert!(stat_band("max", &[0, 0, 5], &BandPlan { phases: 3, seeds: 1 }).phase_sensitive);
    assert!(!stat_band("max", &[0, 0, 0], &BandPlan { phases: 3, seeds: 1 }).phase_sensitive);
}

#[test]
fn the_flags_tell_phases_from_seeds() {
    // Two phases × three seeds, seed-major: [s0p0, s0p1, s1p0, s1p1, s2p0, s2p1].
    let plan = BandPlan { phases: 2, seeds: 3 };
    // Phase 1 is always 4× phase 0; seeds change nothing.
    let by_phase = stat_band("max", &[1, 4, 1, 4, 1, 4], &plan);
    assert!(by_phase.phase_sensitive && !by_phase.seed_sensitive, "{by_phase:?}");
    // Seed 2 doubles both phases; within a seed the phases agree.
    let by_seed = stat_band("max", &[10, 10, 10, 10, 20, 20], &plan);
    assert!(!by_seed.phase_sensitive && by_seed.seed_sensitive, "{by_seed:?}");
    assert_eq!((by_seed.median_ns, by_seed.min_ns, by_seed.max_ns), (10, 10, 20));
}

#[test]
fn cdf_values_read_as_the_summary_quantiles() {
    use crate::metrics::latency::CdfPoint;
    let cdf = [CdfPoint { value_ns: 10, count: 90 }, CdfPoint { value_ns: 20, count: 99 }, CdfPoint {
        value_ns: 50,
        count: 100,
    }];
    assert_eq!(cdf_value_at(&cdf, 500_000), 10);
    assert_eq!(cdf_value_at(&cdf, 900_000), 10);
    assert_eq!(cdf_value_at(&cdf, 950_000), 20);
    assert_eq!(cdf_value_at(&cdf, 990_000), 20);
    assert_eq!(cdf_value_at(&cdf, 999_000), 50);
    assert_eq!(cdf_value_at(&cdf, 1_000_000), 50);
    assert_eq!(cdf_value_at(&[], 500_000), 0);
}

/// A real fold: the reports' summaries and curves, point 0 as base; the
/// curve's p50/p99/max agree with each report's summary.
#[test]
fn bands_fold_the_reports_of_the_points() {
    let s = scenario();
    let plan = BandPlan::new(4, 2).unwrap();
    let (reports, b) = run_bands(&s, &plan).unwrap();
    assert_eq!(reports.len(), 8);
    assert_eq!(b.points, plan.points(&s));
    let names: Vec<&str> = b.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["r", "hog"], "as in task_delays");
    let r = &b.tasks[0];
    let maxes: Vec<u64> = reports.iter().map(|x| x.task_delays[0].delay.max_ns).collect();
    let max = r.stats.iter().find(|s| s.stat == "max").unwrap();
    assert_eq!(max.base_ns, maxes[0]);
    assert_eq!(max.min_ns, *maxes.iter().min().unwrap());
    assert_eq!(max.max_ns, *maxes.iter().max().unwrap());
    let mut sorted = maxes.clone();
    sorted.sort_unstable();
    assert_eq!(max.median_ns, sorted[3]);
    for (ppm, read) in [(500_000, 0usize), (990_000, 2), (1_000_000, 4)] {
        let c = r.curve.iter().find(|c| c.ppm == ppm).unwrap();
        let st = &r.stats[read];
        assert_eq!((c.min_ns, c.median_ns, c.max_ns), (st.min_ns, st.median_ns, st.max_ns), "{ppm}");
    }
    // The reports differ by their tick offsets: the runs really moved the grid.
    assert!(reports.iter().any(|x| x.task_delays[0].delay != reports[0].task_delays[0].delay));
    assert_eq!(reports[5].seed, 8);
}
