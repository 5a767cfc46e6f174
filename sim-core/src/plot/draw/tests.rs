//! Chart tests: every chart draws its series, labels, open waits, steps,
//! ticks and captions (on the SVG backend).

use super::style::DrawResult;
use super::style::*;
use super::*;
use crate::Scenario;
use crate::metrics::CdfPoint;
use crate::plot::data::{DelayChart, IoChart, Timeline, io_charts};
use plotters::coord::Shift;
use plotters::prelude::*;

fn svg(w: u32, h: u32, f: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        f(&root).unwrap();
        root.present().unwrap();
    }
    out
}

#[test]
fn a_narrow_chart_names_its_series_without_counts() {
    // A phone's canvas is about 370 CSS px wide: "label (N delays, M of 0 ns)" would run off it.
    let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
    let a = DelayChart::from_report(&crate::run(&s), "current");
    let b = DelayChart::from_report(&crate::run(&s), "baseline: t, variant v");
    let narrow = svg(370, 260, |root| delay_histogram(root, "sleeper", &[&a, &b]));
    assert!(narrow.contains("\nbaseline: t, variant v\n") && !narrow.contains(" delays, "), "{narrow}");
    let series = [CdfSeries::new("current".into(), &a.cdf, a.count, 0)];
    let narrow = svg(370, 260, |root| cdf(root, "t", "delay", &series));
    assert!(narrow.contains("\ncurrent\n") && !narrow.contains("at the left edge"), "{narrow}");
    let wide = svg(600, 260, |root| delay_histogram(root, "sleeper", &[&a, &b]));
    assert!(wide.contains("\nbaseline: t, variant v (") && wide.contains(" delays, "), "{wide}");
}

#[test]
fn every_chart_draws_its_series_and_labels() {
    let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
    let cur = crate::run(&s);
    let base = crate::run(&s.with_overrides(&[("features.WAKEUP_PREEMPTION", "false")]).unwrap());
    let (a, b) = (DelayChart::from_report(&cur, "current"), DelayChart::from_report(&base, "baseline"));
    let h = svg(800, 400, |root| delay_histogram(root, "sleeper", &[&a, &b]));
    assert!(h.contains("Scheduling delay of sleeper") && h.contains("current (") && h.contains("baseline ("), "{h}");
    // One bar per non-zero bucket of each run.
    let bars = a.histogram.iter().chain(&b.histogram).filter(|b| b.low_ns > 0).count();
    assert!(h.matches("<rect").count() >= bars, "{bars} bars");
    let series =
        [CdfSeries::new("current".into(), &a.cdf, a.count, 0), CdfSeries::new("baseline".into(), &b.cdf, b.count, 1)];
    let c = svg(800, 400, |root| cdf(root, "CDF", "delay", &series));
    assert!(c.contains("p99") && c.contains("current (n="), "{c}");
    let t = Timeline::from_report(&cur).unwrap();
    let tl = svg(900, 500, |root| timeline(root, &t));
    assert!(tl.contains("CPU 0 around the worst delay") && tl.contains(&t.rows[0]), "{tl}");
    // The key names every task's colour and every state's glyph, and
    // each colour it names is one the chart uses.
    let key = timeline_key(&t);
    assert_eq!(key.len(), t.rows.len() + 4, "{key:?}");
    for (row, name) in t.rows.iter().enumerate() {
        let e = &key[row];
        assert!(e.glyph == KeyGlyph::Bar && e.label.starts_with(name.as_str()), "{e:?}");
        assert!(tl.contains(&e.label), "key entry {:?} not drawn", e.label);
        assert!(tl.contains(&format!("fill=\"{}\"", e.colour_hex())), "colour of {name} not drawn");
    }
    for state in [
        "runnable (waiting)",
        "runnable: the worst wait",
        "▲ wakeup, preempted the running task",
        "△ wakeup, no preemption (hollow)",
    ] {
        assert!(tl.contains(state), "key entry {state:?} not drawn");
    }
    let colours: std::collections::BTreeSet<String> = key.iter().map(KeyEntry::colour_hex).collect();
    assert!(colours.len() >= t.rows.len().min(7), "task colours repeat: {colours:?}");
    let q = svg(800, 400, |root| q2d(root, &io_charts(&cur, "current"), &io_charts(&base, "baseline")));
    assert!(q.contains("current: sda (deadline)") && q.contains("baseline: sda (deadline)"), "{q}");
    assert_eq!(fmt_ns(26_690_000.0), "26.69ms");
    let labels: Vec<String> = [0.0, 1.0, 2.0, 3.0, 5.0].into_iter().map(nines_label).collect();
    assert_eq!(labels, ["p0", "p90", "p99", "p99.9", "p99.999"]);
}

/// Strokes of the width CDF lines are drawn with, in `colour` (legend samples included).
fn lines_in(svg: &str, colour: RGBColor) -> usize {
    let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"2\"", colour.0, colour.1, colour.2);
    svg.lines().filter(|l| l.starts_with("<polyline") && l.contains(&stroke)).count()
}

fn io_chart(label: &str, cdf: Vec<CdfPoint>, open: (u64, u64)) -> IoChart {
    let count = cdf.last().map_or(0, |p| p.count);
    IoChart {
        label: label.into(),
        device: "sda".into(),
        elevator: "cfq 4.4".into(),
        max_ns: cdf.last().map_or(0, |p| p.value_ns),
        q2c_cdf: cdf.clone(),
        q2c_count: count,
        cdf,
        count,
        open_count: open.0,
        open_max_ns: open.1,
        q2c_open_count: open.0,
        q2c_open_max_ns: open.1,
    }
}

/// A device with no finished Q2D has no distribution: no line is drawn
/// for it (not even through zero samples), but a note says what is
/// there: how many bios are still queued and how long the oldest waited.
/// A device with finished ones and an older open wait gets a line, the
/// open waits in its legend and a ▶ at the oldest.
#[test]
fn io_charts_mark_open_waits_and_draw_no_line_without_completions() {
    let none = io_chart("cfq-4.4: sda (cfq 4.4)", Vec::new(), (3, 19_900_000_000));
    let some = io_chart(
        "fixed: sda (cfq fixed)",
        vec![CdfPoint { value_ns: 1_000_000, count: 90 }, CdfPoint { value_ns: 250_000_000, count: 100 }],
        (2, 2_000_000_000),
    );
    let runs: [&[IoChart]; 2] = [std::slice::from_ref(&none), std::slice::from_ref(&some)];
    let out = svg(900, 500, |root| io_cdf(root, IoStage::Q2D, &runs));
    assert!(out.contains("cfq-4.4: sda (cfq 4.4): no completions; 3 open, oldest 19.9s"), "{out}");
    assert_eq!(lines_in(&out, series_colour(0)), 0, "no line for a device without completions:\n{out}");
    assert!(!out.contains("cfq-4.4: sda (cfq 4.4) (n="), "no legend entry for a line not drawn");
    assert!(
        out.contains("fixed: sda (cfq fixed) (n=100, 0 of 0 ns at the left edge; 2 still waiting at end, oldest 2s)"),
        "{out}"
    );
    // The line itself plus its legend sample, and the ▶ at 2 s.
    assert!(lines_in(&out, series_colour(1)) >= 2, "{out}");
    assert!(out.contains("<polygon"), "the open-wait marker:\n{out}");
    // The x axis reaches the oldest open wait.
    assert!(out.contains("\n10s\n") || out.contains(">10s<"), "{out}");
}

#[test]
fn comparison_charts_carry_every_run_and_a_caption_with_seed_and_settings() {
    let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
    let runs: Vec<(&str, crate::RunReport)> = vec![
        ("base", crate::run(&s)),
        ("no-wakeup-preemption", crate::run(&s.with_overrides(&[("features.WAKEUP_PREEMPTION", "false")]).unwrap())),
        ("noop", crate::run(&s.with_overrides(&[("devices.sda.elevator", "\"noop\"")]).unwrap())),
    ];
    let labelled: Vec<(&str, &crate::RunReport)> = runs.iter().map(|(l, r)| (*l, r)).collect();
    let cap = crate::plot::data::caption(&labelled);
    assert!(cap[0].contains("seed 1") && cap[0].contains("300ms simulated"), "{cap:?}");
    assert!(
        cap[1].starts_with("base: HZ=1000 autogroup=on Linux 4.4 (CFS): sched_latency_ns=6ms")
            && cap[1].contains("features=defaults")
            && !cap[1].contains("NO_"),
        "{cap:?}"
    );
    assert!(cap[2].contains("NO_WAKEUP_PREEMPTION") && cap[3].contains("sda=noop"), "{cap:?}");

    let charts: Vec<DelayChart> = runs.iter().map(|(l, r)| DelayChart::from_report(r, l)).collect();
    let series: Vec<CdfSeries> = charts.iter().enumerate().map(|(i, c)| c.series(i)).collect();
    let out = svg(900, 600, |root| {
        let area = with_caption(root, &cap)?;
        cdf(&area, "Scheduling delay of sleeper: CDF", "delay", &series)
    });
    for (label, _) in &runs {
        assert!(out.contains(&format!("{label} (n=")), "{label} missing from the legend");
    }
    assert!(out.contains("NO_WAKEUP_PREEMPTION") && out.contains("seed 1"), "caption missing");

    let io: Vec<Vec<IoChart>> = runs.iter().map(|(l, r)| io_charts(r, l)).collect();
    let refs: Vec<&[IoChart]> = io.iter().map(Vec::as_slice).collect();
    let q2c = svg(900, 500, |root| io_cdf(root, IoStage::Q2C, &refs));
    assert!(q2c.contains("Q2C (queued to completed)") && q2c.contains("noop: sda (noop)"), "{q2c}");
    assert!(io[0][0].q2c_count > 0 && io[0][0].q2c_cdf.last().unwrap().count == io[0][0].q2c_count);
}

/// The heat map draws one shaded rectangle per run of equal shade, in
/// each row's colour, and names isolated CPUs.
#[test]
fn occupancy_shades_busy_buckets_and_marks_isolated_cpus() {
    use crate::plot::data::{OccupancyChart, OccupancyRow};
    let row = |cpu: u16, isolated: bool, permille: Vec<u16>| OccupancyRow {
        cpu,
        socket: cpu / 2,
        core: cpu,
        thread: 0,
        isolated,
        label: format!("cpu {cpu}{}", if isolated { " (isolated)" } else { "" }),
        total_permille: 0,
        permille,
    };
    let c = OccupancyChart {
        bucket_ns: 1_000_000,
        end_ns: 4_000_000,
        rows: vec![
            row(0, false, vec![1000, 1000, 1000, 1000]),
            row(1, false, vec![0, 500, 0, 0]),
            row(2, true, vec![0; 4]),
        ],
    };
    let out = svg(800, 300, |root| occupancy(root, &c));
    let full = occupancy_colour(1000, false);
    let half = occupancy_colour(500, false);
    let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
    // One rectangle for the busy row, one step of the colour scale.
    assert_eq!(out.matches(&format!("fill=\"{}\"", hex(full))).count(), 2, "one rectangle for the busy row");
    assert_eq!(out.matches(&format!("fill=\"{}\"", hex(half))).count(), 2, "{out}");
    assert!(out.contains("cpu 2 (isolated)"), "{out}");
    assert_eq!(out.matches(&format!("fill=\"{}\"", hex(ISOLATED_TINT))).count(), 1, "the isolated row tinted");
}

/// Defect: the heat map had no colour scale. It now has one, with its
/// unit, from 0 % to 100 %, every step in a shade the map uses, and an
/// orange one when a CPU is isolated.
#[test]
fn occupancy_has_a_colour_scale_with_its_unit() {
    use crate::plot::data::{OccupancyChart, OccupancyRow};
    let row = |cpu: u16, isolated: bool| OccupancyRow {
        cpu,
        socket: 0,
        core: cpu,
        thread: 0,
        isolated,
        label: format!("cpu {cpu}"),
        total_permille: 0,
        permille: vec![0, 0],
    };
    let hex = |c: RGBColor| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
    let c = OccupancyChart { bucket_ns: 1_000_000, end_ns: 2_000_000, rows: vec![row(0, false)] };
    let out = svg(800, 300, |root| occupancy(root, &c));
    for want in ["busy share", "(% of bucket)", "\n100%\n", "\n50%\n", "\n0%\n"] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    assert!(out.contains(&hex(occupancy_colour(1000, false))) && out.contains(&hex(occupancy_colour(50, false))));
    assert!(!out.contains("isolated") && !out.contains(&hex(occupancy_colour(1000, true))));
    let c = OccupancyChart { rows: vec![row(0, false), row(1, true)], ..c };
    let out = svg(800, 300, |root| occupancy(root, &c));
    assert!(out.contains(&hex(occupancy_colour(1000, true))) && out.contains("\nisolated\n"), "{out}");
}

/// The polyline points of every CDF line (`stroke-width="2"` in `colour`).
fn cdf_polylines(svg: &str, colour: RGBColor) -> Vec<Vec<(f64, f64)>> {
    let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"2\"", colour.0, colour.1, colour.2);
    svg.lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&stroke))
        .map(|l| {
            let pts = l.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
            pts.split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// Defect: the CDF joined its points with slanted lines, so between a
/// 1 ms and a 4 ms value it read (say) p70 at 3.1 ms, where no delay was
/// recorded. Now every segment is horizontal or vertical, and the line
/// stays at p50 until 4 ms.
#[test]
fn a_cdf_is_drawn_as_steps() {
    let pts = [CdfPoint { value_ns: 1_000_000, count: 50 }, CdfPoint { value_ns: 4_000_000, count: 100 }];
    let series = [CdfSeries::new("steps".into(), &pts, 100, 0)];
    let out = svg(800, 400, |root| cdf(root, "t", "delay", &series));
    let lines = cdf_polylines(&out, series_colour(0));
    let line = lines.iter().max_by_key(|l| l.len()).expect("the CDF line");
    assert!(line.len() >= 4, "{line:?}");
    for w in line.windows(2) {
        assert!(w[0].0 == w[1].0 || w[0].1 == w[1].1, "a slanted segment {w:?} in {line:?}");
    }
    // The run at the p50 level reaches the 4 ms value before rising.
    let right = line.iter().map(|p| p.0).fold(f64::MIN, f64::max);
    let p50 = line[1].1;
    assert!(line.contains(&(right, p50)), "{line:?}");
}

/// The x tick labels (centred on their tick) that lie in `svg`, with
/// their position and font size.
fn tick_labels(svg: &str) -> Vec<(f64, f64, String)> {
    let lines: Vec<&str> = svg.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("<text") && l.contains("text-anchor=\"middle\"") && i + 1 < lines.len() {
            let attr = |name: &str| -> f64 {
                l.split(&format!(" {name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
            };
            out.push((attr("x"), attr("font-size"), lines[i + 1].to_string()));
        }
    }
    out
}

/// Defect: the histogram's last tick label (`100ms`) sat centred on the
/// right edge of the image, half of it cut off. Every centred label now
/// fits inside the width, on the histogram and on the CDF.
#[test]
fn the_last_tick_label_fits_inside_the_image() {
    use crate::plot::data::Bar;
    let d = DelayChart {
        label: "t".into(),
        histogram: vec![Bar { low_ns: 20_000_000, high_ns: 50_000_000, count: 3 }],
        cdf: vec![CdfPoint { value_ns: 20_000_000, count: 1 }, CdfPoint { value_ns: 50_000_000, count: 3 }],
        count: 3,
        p99_ns: 50_000_000,
        max_ns: 50_000_000,
        open_count: 0,
        open_max_ns: 0,
    };
    let width = 960.0;
    for out in [
        svg(960, 560, |root| delay_histogram(root, "v", &[&d])),
        svg(960, 560, |root| cdf(root, "t", "delay", &[d.series(0)])),
    ] {
        let labels = tick_labels(&out);
        assert!(labels.iter().any(|l| l.2 == "100ms"), "{labels:?}");
        for (x, size, text) in labels {
            // Sans-serif digits and letters: at most about 0.62 em each.
            let half = text.chars().count() as f64 * size * 0.62 / 2.0;
            assert!(x + half <= width, "{text:?} at {x} runs past the right edge ({half} px each side)");
        }
    }
}

/// Defect: ▲ (a wakeup that preempted) and △ (one that did not) were
/// both drawn as filled triangles. The hollow one is now white inside,
/// and the key says what each means.
#[test]
fn preempting_and_other_wakeups_are_drawn_apart() {
    let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
    let t = Timeline::from_report(&crate::run(&s)).unwrap();
    let mut t = t.clone();
    // One of each, whatever the run did.
    t.wakeups = vec![
        crate::plot::data::WakeMark { row: 0, at_ns: t.from_ns, preempt: true },
        crate::plot::data::WakeMark { row: 0, at_ns: t.to_ns, preempt: false },
        crate::plot::data::WakeMark { row: 1, at_ns: t.to_ns, preempt: false },
    ];
    let out = svg(900, 500, |root| timeline(root, &t));
    let filled = out.lines().filter(|l| l.starts_with("<polygon") && l.contains("fill=\"#000000\"")).count();
    let hollow = out.lines().filter(|l| l.starts_with("<polygon") && l.contains("fill=\"#FFFFFF\"")).count();
    // The marks plus one of each in the key.
    assert_eq!((filled, hollow), (2, 3), "{out}");
    assert!(
        out.contains("▲ wakeup, preempted the running task (filled)")
            && out.contains("△ wakeup, no preemption (hollow)")
    );
    // Both panels say their time unit.
    assert_eq!(out.matches("ms from the start of the worst delay").count(), 2, "{out}");
}

/// Defect: the footer of a 6.18 run printed the 4.4 knobs
/// (`sched_latency=… wakeup_granularity=…`) and never named the kernel.
/// It now names the model and its own settings, the features changed
/// from that model's defaults and per-task slices.
#[test]
fn an_eevdf_footer_names_its_model_and_settings() {
    let s = Scenario::from_toml("t.toml", crate::plot::CHART_TEST_SCENARIO).unwrap();
    let s = s
        .with_overrides(&[
            ("kernel.version", "\"6.18\""),
            ("devices.sda.elevator", "\"mq-deadline\""),
            ("features.RUN_TO_PARITY", "false"),
            ("tasks.sleeper.slice", "\"300us\""),
        ])
        .unwrap();
    let r = crate::run(&s);
    let cap = crate::plot::data::caption(&[("short", &r)]);
    let line = &cap[1];
    assert!(line.starts_with("short: HZ=1000 autogroup=on Linux 6.18 (EEVDF): base_slice_ns=700us"), "{line}");
    assert!(line.contains("features=NO_RUN_TO_PARITY") && line.contains("slice_of_sleeper=300us"), "{line}");
    for old in ["sched_latency", "granularity", "nr_latency"] {
        assert!(!line.contains(old), "{old} in {line}");
    }
    // The text header's settings come from the same place.
    assert_eq!(r.settings.model_settings()[0], ("base_slice_ns".to_string(), "700us".to_string()));
}

#[test]
fn a_band_is_shaded_under_its_series_with_a_median_line() {
    use crate::report::bands::CurveBand;
    let pts = [CdfPoint { value_ns: 1_000_000, count: 50 }, CdfPoint { value_ns: 4_000_000, count: 100 }];
    let band: Vec<CurveBand> = crate::BAND_CURVE_PPM
        .iter()
        .map(|&ppm| CurveBand { ppm, min_ns: 500_000, median_ns: 1_000_000 + u64::from(ppm), max_ns: 90_000_000 })
        .collect();
    let plain = svg(800, 400, |root| cdf(root, "t", "delay", &[CdfSeries::new("s".into(), &pts, 100, 0)]));
    let banded =
        svg(800, 400, |root| cdf(root, "t", "delay", &[CdfSeries::new("s".into(), &pts, 100, 0).with_band(&band)]));
    assert_eq!(banded.matches("<polygon").count(), plain.matches("<polygon").count() + 1, "{banded}");
    // The band's 90 ms maximum widens the delay axis past the line's 4 ms.
    let last = |s: &str| tick_labels(s).into_iter().max_by(|a, b| a.0.total_cmp(&b.0)).map(|t| t.2);
    assert_ne!(last(&banded), last(&plain), "{banded}");
    // The median: a polyline in the series' colour at 0.7 (the axis's
    // own polylines change in number with its range, so they are not counted).
    let median = |s: &str| s.matches("<polyline fill=\"none\" opacity=\"0.7\"").count();
    assert_eq!((median(&plain), median(&banded)), (0, 1), "{banded}");
    // The shaded band: one polygon at 0.18.
    assert_eq!(banded.matches("<polygon opacity=\"0.18\"").count(), 1, "{banded}");
}
