//! Tests of `validate` (a file of its own: validate.rs stays under the size tidy.rs allows).
use super::*;

#[test]
fn quota_rows_compare_cpu_stat_and_shares() {
    use sim_core::{GroupCpuStat, GroupReport};
    let toml = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 1\n[groups.\"/pod\"]\n\
                \"cpu.max\" = \"50000 100000\"\n[[tasks]]\nname = \"hog\"\ngroup = \"/pod\"\n\
                program = [{ run = \"1s\" }]\n";
    let s = Scenario::from_toml("q.toml", toml).expect("scenario");
    let predicted = sim_core::run(&s);
    let pc = predicted.groups[0].cpu_stat.expect("the prediction has cpu.stat");
    // 1 s at 50 ms per 100 ms: 10 periods, (nearly) each throttled, the hog at half the CPU.
    assert_eq!(pc.nr_periods, 10);
    assert!((9..=10).contains(&pc.nr_throttled), "{pc:?}");
    let measured = |periods: u64, throttled: u64, time_ms: u64, hog_ms: u64| {
        let mut r = predicted.clone();
        r.groups = vec![GroupReport {
            cpu_stat: Some(GroupCpuStat {
                nr_periods: periods,
                nr_throttled: throttled,
                throttled_time_ns: time_ms * 1_000_000,
                ..pc
            }),
            ..predicted.groups[0].clone()
        }];
        r.tasks[0].runtime_ns = hog_ms * 1_000_000;
        r
    };
    let runs = [measured(10, 9, 450, 500), measured(11, 10, 500, 520), measured(10, 10, 480, 480)];
    let rows = quota_rows(&predicted, &runs);
    let get = |what: &str, stat: &str| rows.iter().find(|r| r.what == what && r.stat == stat).expect("row").clone();
    let p = get("group /pod", "nr_periods");
    assert_eq!((p.predicted, p.measured, p.measured_min, p.measured_max), (10.0, 10.0, 10.0, 11.0));
    assert_eq!(p.verdict, "within ±25%");
    let t = get("group /pod", "throttled_ms_per_period");
    assert_eq!(t.measured, 500.0 / 11.0, "median of 45, 45.45…, 48");
    assert_eq!((t.measured_min, t.measured_max), (45.0, 48.0));
    assert_eq!(t.measured_each, vec![45.0, 500.0 / 11.0, 48.0]);
    let h = get("task hog", "cpu_pct");
    assert!((h.predicted - 50.0).abs() < 1.0, "{h:?}");
    assert_eq!(h.measured, 50.0);
    // No quota, no rows.
    let mut plain = predicted.clone();
    plain.groups.clear();
    assert!(quota_rows(&plain, &runs).is_empty());
    assert_eq!(quota_row("x".into(), "nr_periods", 30.0, vec![10.0]).verdict, "outside: 3.0x over");
}

/// The verdict's basis: at the aligned phase, the median over the seeds
/// there; unaligned, the band's median. A task without measured values
/// (a `[machine.noise]` background thread) has no row.
#[test]
fn rows_judge_the_aligned_phase_or_the_band_median() {
    let toml = "schema = 1\nseed = 1\nduration = \"2s\"\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 1\n\
                tick_offset = \"500us\"\n[machine.noise]\nwakeup_busy = \"lognormal(9us, 0.3)\"\n\
                [[machine.noise.background]]\nname = \"bg\"\ncpu = 0\nevery = \"exp(50ms)\"\nrun = \"exp(200us)\"\n\
                [[tasks]]\nname = \"reactor\"\ncpus = \"0\"\nprogram = [{ sleep_until = \"1ms\" }, { run = \"50us\" }]\n\
                [[tasks]]\nname = \"hog\"\ncpus = \"0\"\nprogram = [{ run = \"1s\" }]\n";
    let s = Scenario::from_toml("v.toml", toml).expect("scenario");
    let pred = Prediction { also_kernel: None, noise: None, phases: 4, seeds: 3, rejudge: None };
    let predictor = Predictor::new(&s, &[], &[], &pred).expect("predictor");
    let Predicted { reports, bands, also } = predictor.run().expect("band");
    assert_eq!(reports.len(), 12);
    assert!(also.is_none());
    let measured = |task: &str, _stat: &'static str| (task != "bg").then(|| vec![1_000, 2_000, 3_000]);
    let aligned = rows(&bands, true, None, &measured);
    let unaligned = rows(&bands, false, None, &measured);
    assert_eq!(aligned.len(), 8, "reactor and hog, 4 statistics each; no row for bg");
    assert!(aligned.iter().all(|r| r.task != "bg" && r.measured_ns == 2_000 && r.measured_min_ns == 1_000));
    for (a, u) in aligned.iter().zip(&unaligned) {
        let f = STATS.iter().find(|(st, _)| *st == a.stat).expect("stat").1;
        // The seeds at phase 0: points 0, 4 and 8 (seed-major).
        let at: Vec<u64> = [0, 4, 8]
            .iter()
            .map(|&i| f(&reports[i].task_delays.iter().find(|d| d.name == a.task).expect("task").delay))
            .collect();
        assert_eq!(a.predicted_ns, median(at), "{} {}", a.task, a.stat);
        assert_eq!((a.basis, u.basis), (BASIS_ALIGNED, BASIS_MEDIAN));
        assert_eq!(u.predicted_ns, u.band_median_ns);
        assert!(a.band_min_ns <= a.predicted_ns && a.predicted_ns <= a.band_max_ns);
    }
    // The same band twice: the same rows.
    let again = rows(&predictor.run().expect("band").bands, true, None, &measured);
    assert_eq!(format!("{again:?}"), format!("{aligned:?}"));
}

#[test]
fn verdicts() {
    assert_eq!(verdict(110, 100).1, "within ±25%");
    assert_eq!(verdict(75, 100).1, "within ±25%");
    assert_eq!(verdict(300, 100).1, "outside: 3.0x over");
    assert_eq!(verdict(50, 100).1, "outside: 2.0x under");
    assert_eq!(verdict(0, 100).1, "predicted 0");
    assert_eq!(verdict(0, 0).1, "within ±25%");
    assert_eq!(verdict(5, 0).1, "measured 0");
    assert_eq!(median(vec![5, 1, 3]), 3);
    assert_eq!(median(vec![4, 1, 3, 2]), 2);
}

#[test]
fn lognormal_from_median_and_p99() {
    // σ = ln(q/m)/2.326: a p99 e^2.326 times the median is σ = 1.
    let q = (20_000.0 * 2.326f64.exp()).round() as u64;
    assert_eq!(lognormal_fit(20_000, q).as_deref(), Some("lognormal(20000ns, 1.000)"));
    // ln(60/20)/2.326 = 0.4723…
    assert_eq!(lognormal_fit(20_000, 60_000).as_deref(), Some("lognormal(20000ns, 0.472)"));
    // No spread: a constant; no median: nothing.
    assert_eq!(lognormal_fit(20_000, 20_000).as_deref(), Some("20000ns"));
    assert_eq!(lognormal_fit(20_000, 10_000).as_deref(), Some("20000ns"));
    assert_eq!(lognormal_fit(0, 10_000), None);
    // What is printed parses as the scenario key's distribution, with that median.
    let d = sim_core::Dist::parse("lognormal(20000ns, 0.472)").expect("parses");
    assert_eq!(d, sim_core::Dist::LogNormal { median: 20_000, sigma: 0.472 });
}

fn measured(p50: u64, p99: u64, perf: bool) -> MeasuredInfo {
    use sim_core::DelayViews;
    let s = sim_core::LatencySummary { count: 10, p50_ns: p50, p99_ns: p99, ..Default::default() };
    let view =
        DelayViews { name: "reactor".into(), threads_wakeup: s, perf_wakeup: perf.then_some(s), ..Default::default() };
    MeasuredInfo { views: vec![view, DelayViews { name: "idle".into(), ..Default::default() }], ..Default::default() }
}

#[test]
fn wakeup_fits_take_medians_over_repeats() {
    let runs = [measured(10_000, 30_000, true), measured(20_000, 60_000, true), measured(90, 90, true)];
    let fits = wakeup_fits(&runs.iter().collect::<Vec<_>>());
    // Medians 10 µs and 30 µs; the task without wake-ups has no fit.
    assert_eq!(fits.len(), 1);
    assert_eq!(
        (fits[0].task.as_str(), fits[0].from.as_str(), fits[0].p50_ns, fits[0].p99_ns),
        ("reactor", "perf", 10_000, 30_000)
    );
    assert_eq!(fits[0].dist, "lognormal(10000ns, 0.472)");
    assert_eq!(wakeup_fits(&[&measured(10_000, 30_000, false)])[0].from, "threads");
    assert!(wakeup_fits(&[]).is_empty());
}

/// `--noise` is read once and reaches both predictions (the band's scenario
/// and the `--also-kernel` model's); a missing file is an error naming it.
#[test]
fn the_predictor_applies_the_noise_file_to_both_models() {
    let toml = "schema = 1\nseed = 1\nduration = \"200ms\"\n[kernel]\nversion = \"6.18\"\n[machine]\ncpus = 1\n\
                [[tasks]]\nname = \"reactor\"\ncpus = \"0\"\nprogram = [{ sleep_until = \"1ms\" }, { run = \"50us\" }]\n";
    let s = Scenario::from_toml("v.toml", toml).expect("scenario");
    let path = std::env::temp_dir().join(format!("sim-cli-predictor-noise-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "[machine.noise]\nwakeup_idle = \"lognormal(14us, 0.3)\"\n[[machine.noise.background]]\nname = \"kworker\"\n\
         cpu = 0\nevery = \"exp(20ms)\"\nrun = \"exp(30us)\"\n",
    )
    .expect("write");
    let pred = Prediction { also_kernel: Some("4.4"), noise: Some(&path), phases: 2, seeds: 1, rejudge: None };
    let p = Predictor::new(&s, &[], &[], &pred).expect("predictor");
    let bg = |s: &Scenario| s.spec.tasks.iter().filter(|t| t.machine_background).count();
    assert_eq!((bg(&p.sim), p.also.as_ref().map(bg)), (1, Some(1)));
    assert_eq!((p.also_kernel().as_deref(), p.also_model().as_deref()), (Some("4.4"), Some("linux-4.4-cfs")));
    let out = p.run().expect("run");
    assert_eq!(out.reports.len(), 2);
    assert!(out.also.expect("also").tasks.iter().any(|t| t.name == "kworker"));
    std::fs::remove_file(&path).expect("remove");
    let gone = Prediction { noise: Some(&path), ..pred };
    let e = format!("{:#}", Predictor::new(&s, &[], &[], &gone).err().expect("a missing file is refused"));
    assert!(e.starts_with("--noise") && e.contains("sim-cli-predictor-noise"), "{e}");
}
