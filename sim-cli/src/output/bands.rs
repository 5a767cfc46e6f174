//! The text of a band: `run --phases/--seeds`'s "Bands" table (per task,
//! victim first, per statistic: the value at the scenario's own phase and
//! seed, the median, min–max, the band's ±% and its flags) and `compare`'s
//! cells (median [min–max] and a flag).

use sim_core::{Bands, StatBand, format_duration};
use std::fmt::Write;

/// The flags of a statistic as words (empty when neither is set).
fn flags(s: &StatBand) -> String {
    let mut f = Vec::new();
    if s.phase_sensitive {
        f.push("phase-sensitive");
    }
    if s.seed_sensitive {
        f.push("seed-sensitive");
    }
    f.join(", ")
}

/// `median [min–max]` with a short flag, for a `compare` cell.
pub fn cell(s: &StatBand) -> String {
    let mut c =
        format!("{} [{}–{}]", format_duration(s.median_ns), format_duration(s.min_ns), format_duration(s.max_ns));
    match (s.phase_sensitive, s.seed_sensitive) {
        (true, true) => c.push_str(" (phase, seed)"),
        (true, false) => c.push_str(" (phase)"),
        (false, true) => c.push_str(" (seed)"),
        (false, false) => {}
    }
    c
}

/// The plan in one line: the phases' tick offsets and the seeds.
pub fn header(b: &Bands, tick_ns: u64) -> String {
    let first_seed = b.points.first().map_or(0, |p| p.seed);
    let offsets: Vec<String> =
        b.points.iter().filter(|p| p.seed_index == 0).map(|p| format_duration(p.tick_offset_ns)).collect();
    let seeds = if b.seeds == 1 {
        format!("1 seed ({first_seed})")
    } else {
        format!("{} seeds ({first_seed} to {})", b.seeds, first_seed.wrapping_add(u64::from(b.seeds) - 1))
    };
    format!(
        "Bands: {} tick phase{} across one tick of {} (machine.tick_offset {}) × {seeds}: {} runs",
        b.phases,
        if b.phases == 1 { "" } else { "s" },
        format_duration(tick_ns),
        offsets.join(", "),
        b.points.len()
    )
}

/// The "Bands" table: per task (`victim` first, then name order), per
/// statistic.
pub fn table(b: &Bands, victim: &str, tick_ns: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", header(b, tick_ns));
    let _ = writeln!(
        out,
        "  a flag: the band over the phases (at some seed) or over the seeds (at some phase) is wider than ±25 % of its median"
    );
    let mut rows: Vec<[String; 7]> = vec![[
        "task".into(),
        "stat".into(),
        "this run".into(),
        "median".into(),
        "min–max".into(),
        "band".into(),
        "flags".into(),
    ]];
    let order = b.tasks.iter().filter(|t| t.name == victim).chain(b.tasks.iter().filter(|t| t.name != victim));
    for t in order {
        for s in &t.stats {
            rows.push([
                t.name.clone(),
                s.stat.to_string(),
                format_duration(s.base_ns),
                format_duration(s.median_ns),
                format!("{}–{}", format_duration(s.min_ns), format_duration(s.max_ns)),
                s.spread_pct().map_or_else(|| "-".to_string(), |p| format!("±{p}%")),
                flags(s),
            ]);
        }
    }
    let mut widths = [0usize; 7];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    for r in &rows {
        let mut l = format!("  {:<w0$}  {:<w1$}", r[0], r[1], w0 = widths[0], w1 = widths[1]);
        for (c, w) in r[2..6].iter().zip(&widths[2..6]) {
            let _ = write!(l, "  {c:>w$}");
        }
        let _ = write!(l, "  {}", r[6]);
        let _ = writeln!(out, "{}", l.trim_end());
    }
    out
}
