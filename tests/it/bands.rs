//! Bands over tick phases and seeds (issue 36): reproducible (the same plan
//! gives the same band, bytes and all), and they find the phase-sensitive
//! case docs/validation.md describes ("The tick phase decides"): a reactor
//! beside a hog waits 1 ms or 4 ms at most depending on the tick phase alone,
//! while a reactor alone is not phase-sensitive.

use sim_core::{BandPlan, bands_json, report_json_with_bands, run_bands};
use sim_tests::load;

fn stat<'a>(b: &'a sim_core::Bands, task: &str, stat: &str) -> &'a sim_core::StatBand {
    let t = b.tasks.iter().find(|t| t.name == task).expect("task");
    t.stats.iter().find(|s| s.stat == stat).expect("stat")
}

#[test]
fn the_same_plan_gives_the_same_band_twice() {
    let s = load("validation/02-hog-same-group").with_overrides(&[("duration", "2s")]).unwrap();
    let plan = BandPlan::new(4, 3).unwrap();
    let (ra, a) = run_bands(&s, &plan).unwrap();
    let (rb, b) = run_bands(&s, &plan).unwrap();
    assert_eq!(a, b);
    assert_eq!(bands_json(&a), bands_json(&b));
    assert_eq!(report_json_with_bands(&ra[0], &a), report_json_with_bands(&rb[0], &b));
    // Point 0 is the scenario as given: its report is a plain run's.
    assert_eq!(sim_core::report_json(&ra[0]), sim_core::report_json(&sim_core::run(&s)));
    // Another seed range gives another band (the seeds are really used).
    let other = s.with_overrides(&[("seed", "40")]).unwrap();
    let (_, c) = run_bands(&other, &plan).unwrap();
    assert_ne!(bands_json(&a), bands_json(&c));
}

/// docs/validation.md's sweep at the host's 1.4 ms slice: max 1 ms at some
/// phases, 4 ms at others.
#[test]
fn the_tick_phase_decides_the_hog_case_and_not_the_lone_reactor() {
    let s = load("validation/02-hog-same-group").with_overrides(&[("cfs.base_slice_ns", "1400us")]).unwrap();
    let (_, b) = run_bands(&s, &BandPlan::new(8, 1).unwrap()).unwrap();
    let max = stat(&b, "reactor", "max");
    assert!(max.phase_sensitive && !max.seed_sensitive, "{max:?}");
    assert!((900_000..=1_100_000).contains(&max.min_ns), "{max:?}");
    assert!((3_900_000..=4_200_000).contains(&max.max_ns), "{max:?}");
    assert_eq!(max.base_ns, 3_500_000, "the file's own phase (500 us): {max:?}");
    assert!(stat(&b, "reactor", "p99").phase_sensitive);

    let alone = load("validation/01-alone");
    let (_, b) = run_bands(&alone, &BandPlan::new(8, 2).unwrap()).unwrap();
    for st in ["p50", "p99", "max"] {
        let x = stat(&b, "reactor", st);
        assert!(!x.phase_sensitive && !x.seed_sensitive, "{x:?}");
    }
}
