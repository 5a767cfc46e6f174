//! `--plot DIR`: the charts of `sim_core::plot` (the same drawing code as the
//! web page's canvases) rendered to SVG files, each with a caption giving the
//! seed and the effective settings.

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use sim_core::draw::{self, CdfSeries, DrawResult, IoStage};
use sim_core::{DelayChart, IoChart, OccupancyChart, RunReport, Timeline, caption, io_charts};
use std::path::{Path, PathBuf};

const SIZE: (u32, u32) = (960, 560);

/// Draws one chart, with `caption` under it, into `dir/name`.
fn write_svg(
    dir: &Path,
    name: &str,
    size: (u32, u32),
    caption: &[String],
    f: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> DrawResult,
) -> Result<PathBuf> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (size.0, size.1 + 16 * caption.len() as u32)).into_drawing_area();
        let area = draw::with_caption(&root, caption).map_err(|e| anyhow!("{name}: {e}"))?;
        f(&area).map_err(|e| anyhow!("{name}: {e}"))?;
        root.present().map_err(|e| anyhow!("{name}: {e}"))?;
    }
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

pub fn make_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("--plot {}: cannot create the directory", dir.display()))
}

/// A label usable in a file name.
fn file_part(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

fn run_label(r: &RunReport) -> String {
    r.variant.clone().unwrap_or_else(|| "base".into())
}

/// The charts of one run; returns the files written.
pub fn run_charts(dir: &Path, r: &RunReport) -> Result<Vec<PathBuf>> {
    make_dir(dir)?;
    let label = run_label(r);
    let cap = caption(&[(&label, r)]);
    let mut files = Vec::new();
    for d in r.task_delays.iter().filter(|d| d.delay.count > 0) {
        let chart = DelayChart::from_named(d, &label);
        files.push(write_svg(dir, &format!("delay-hist-{}.svg", file_part(&d.name)), SIZE, &cap, |a| {
            draw::delay_histogram(a, &d.name, &[&chart])
        })?);
    }
    files.extend(comparison_charts(dir, &[r], std::slice::from_ref(&label))?);
    if let Some(t) = Timeline::from_report(r) {
        files.push(write_svg(dir, "timeline.svg", (SIZE.0, 640), &cap, |a| draw::timeline(a, &t))?);
    }
    let occupancy = OccupancyChart::from_report(r);
    let height = (120 + 16 * occupancy.rows.len() as u32).clamp(300, 1200);
    files.push(write_svg(dir, "occupancy.svg", (SIZE.0, height), &cap, |a| draw::occupancy(a, &occupancy))?);
    let limiters = sim_core::limiter_charts(r);
    if !limiters.is_empty() {
        let size = (SIZE.0, 480 * limiters.len() as u32);
        files.push(write_svg(dir, "limiter.svg", size, &cap, |a| draw::limiter(a, &limiters))?);
    }
    Ok(files)
}

/// The charts comparing runs (the base and its variants); returns the files.
#[cfg(test)]
pub fn compare_charts(dir: &Path, runs: &[RunReport]) -> Result<Vec<PathBuf>> {
    let labels: Vec<String> = runs.iter().map(run_label).collect();
    compare_charts_labelled(dir, runs, &labels)
}

/// The charts comparing runs, each named by its label in `labels` (`base`
/// and the variants, or the kernel models of `compare --kernels`).
pub fn compare_charts_labelled(dir: &Path, runs: &[RunReport], labels: &[String]) -> Result<Vec<PathBuf>> {
    make_dir(dir)?;
    let mut files = comparison_charts(dir, &runs.iter().collect::<Vec<_>>(), labels)?;
    for (r, label) in runs.iter().zip(labels) {
        let cap = caption(&[(label, r)]);
        let chart = DelayChart::from_report(r, label);
        files.push(write_svg(dir, &format!("delay-hist-{}.svg", file_part(label)), SIZE, &cap, |a| {
            draw::delay_histogram(a, &r.victim.name, &[&chart])
        })?);
        if let Some(t) = Timeline::from_report(r) {
            files.push(write_svg(dir, &format!("timeline-{}.svg", file_part(label)), (SIZE.0, 640), &cap, |a| {
                draw::timeline(a, &t)
            })?);
        }
    }
    Ok(files)
}

/// Charts with one line per run: the victim's delay CDF, and Q2D/Q2C.
fn comparison_charts(dir: &Path, runs: &[&RunReport], labels: &[String]) -> Result<Vec<PathBuf>> {
    let Some(first) = runs.first() else { return Ok(Vec::new()) };
    let labelled: Vec<(&str, &RunReport)> = labels.iter().map(String::as_str).zip(runs.iter().copied()).collect();
    let cap = caption(&labelled);
    let charts: Vec<DelayChart> = runs.iter().zip(labels).map(|(r, l)| DelayChart::from_report(r, l)).collect();
    let series: Vec<CdfSeries> = charts.iter().enumerate().map(|(i, c)| c.series(i)).collect();
    let title = format!("Scheduling delay of {}: distribution", first.victim.name);
    let mut files = vec![write_svg(dir, "delay-cdf.svg", SIZE, &cap, |a| {
        draw::cdf(a, &title, "delay (wakeup or preemption to running)", &series)
    })?];
    if first.io.is_some() {
        let io: Vec<Vec<IoChart>> = runs.iter().zip(labels).map(|(r, l)| io_charts(r, l)).collect();
        let refs: Vec<&[IoChart]> = io.iter().map(Vec::as_slice).collect();
        files.push(write_svg(dir, "q2d.svg", SIZE, &cap, |a| draw::io_cdf(a, IoStage::Q2D, &refs))?);
        files.push(write_svg(dir, "q2c.svg", SIZE, &cap, |a| draw::io_cdf(a, IoStage::Q2C, &refs))?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The core's chart scenario (seed 1), with two variants.
    fn scenario() -> sim_core::Scenario {
        let text = format!(
            "{}\n[variants.noop]\n\"devices.sda.elevator\" = \"noop\"\n[variants.no-wakeup-preemption]\n\"features.WAKEUP_PREEMPTION\" = false\n",
            sim_core::CHART_TEST_SCENARIO
        );
        sim_core::Scenario::from_toml("charts.toml", &text).unwrap()
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sim-cli-charts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn read(files: &[PathBuf], name: &str) -> String {
        let f = files.iter().find(|f| f.ends_with(name)).unwrap_or_else(|| panic!("{name} not written: {files:?}"));
        std::fs::read_to_string(f).unwrap()
    }

    #[test]
    fn run_charts_have_titles_units_series_and_caption() {
        let r = sim_core::run(&scenario());
        let d = dir("run");
        let files = run_charts(&d, &r).unwrap();
        let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            [
                "delay-hist-hog.svg",
                "delay-hist-sleeper.svg",
                "delay-cdf.svg",
                "q2d.svg",
                "q2c.svg",
                "timeline.svg",
                "occupancy.svg"
            ]
        );
        for f in &names {
            let svg = read(&files, f);
            assert!(
                svg.contains("seed 1")
                    && svg.contains("base: HZ=1000 autogroup=on Linux 4.4 (CFS): sched_latency_ns=6ms"),
                "{f}: caption"
            );
        }
        let hist = read(&files, "delay-hist-hog.svg");
        assert!(hist.contains("Scheduling delay of hog: histogram") && hist.contains("base ("), "{hist}");
        let cdf = read(&files, "delay-cdf.svg");
        assert!(
            cdf.contains("Scheduling delay of sleeper") && cdf.contains("p99") && cdf.contains("\n1ms\n"),
            "tick labels carry units"
        );
        assert!(read(&files, "q2c.svg").contains("base: sda (deadline)"));
        assert!(read(&files, "timeline.svg").contains("CPU 0 around the worst delay"));
        assert!(
            read(&files, "occupancy.svg").contains("CPU occupancy")
                && read(&files, "occupancy.svg").contains("cpu 0 · s0 c0 t0")
        );
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn a_limiter_gets_its_chart() {
        let toml = "schema = 1\nseed = 1\nduration = \"2s\"\n[machine]\ncpus = 1\n[limiters.paced]\nwatch = [\"hog\"]\n\
                    target = \"3ms\"\n[[tasks]]\nname = \"hog\"\nlimiter = \"paced\"\nprogram = [{ run = \"1s\" }]\n";
        let r = sim_core::run(&sim_core::Scenario::from_toml("l.toml", toml).unwrap());
        let d = dir("limiter");
        let files = run_charts(&d, &r).unwrap();
        let svg = read(&files, "limiter.svg");
        for want in ["Elastic CPU limiter `paced`", "limit (share of each CPU)", "target 3ms", "p99 delay", "100%"] {
            assert!(svg.contains(want), "{want}");
        }
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn compare_charts_draw_one_line_per_variant() {
        let s = scenario();
        let runs: Vec<RunReport> = [None, Some("noop"), Some("no-wakeup-preemption")]
            .into_iter()
            .map(|v| sim_core::run(&v.map_or_else(|| s.clone(), |v| s.with_variant(v).unwrap())))
            .collect();
        let d = dir("compare");
        let files = compare_charts(&d, &runs).unwrap();
        let cdf = read(&files, "delay-cdf.svg");
        for label in ["base (n=", "noop (n=", "no-wakeup-preemption (n="] {
            assert_eq!(cdf.matches(label).count(), 1, "{label} once in the legend");
        }
        assert!(
            cdf.contains("no-wakeup-preemption: HZ=1000") && cdf.contains("NO_WAKEUP_PREEMPTION"),
            "caption per run"
        );
        let q2d = read(&files, "q2d.svg");
        assert!(q2d.contains("base: sda (deadline)") && q2d.contains("noop: sda (noop)"));
        for v in ["base", "noop", "no-wakeup-preemption"] {
            read(&files, &format!("timeline-{v}.svg"));
            read(&files, &format!("delay-hist-{v}.svg"));
        }
        std::fs::remove_dir_all(&d).ok();
    }

    /// cfq-4.4's Q2D line used to end at its finished 0 ns samples, as if
    /// that elevator were the fastest: its legend now counts the bios still
    /// queued and the oldest one's 19.9 s, and the axis reaches it.
    #[test]
    fn q2d_chart_marks_the_writes_still_queued_at_the_end() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/cfq-starvation.toml");
        let s = sim_core::Scenario::from_toml("cfq-starvation.toml", &std::fs::read_to_string(path).unwrap()).unwrap();
        let runs = vec![
            sim_core::run(&s.with_variant("cfq-4.4").unwrap()),
            sim_core::run(&s.with_variant("deadline").unwrap()),
        ];
        let q = runs[0].io.as_ref().unwrap().devices[0].q2d;
        // The finished Q2Ds are the commit log's, all 0 ns.
        assert!(q.count > 0 && q.max_ns == 0 && q.open_count > 0, "{q:?}");
        let d = dir("open");
        let files = compare_charts(&d, &runs).unwrap();
        let q2d = read(&files, "q2d.svg");
        let (n, open) = (q.count, q.open_count);
        let legend = format!(
            "cfq-4.4: nvme0 (cfq 4.4) (n={n}, {n} of 0 ns at the left edge; {open} still waiting at end, oldest 19.9s)"
        );
        assert!(q2d.contains(&legend), "{legend}\n{q2d}");
        assert!(q2d.contains("deadline: nvme0 (deadline) (n=") && q2d.contains("<polygon"), "{q2d}");
        std::fs::remove_dir_all(&d).ok();
    }
}
