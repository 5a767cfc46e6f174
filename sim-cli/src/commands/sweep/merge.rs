//! `sim-cli merge`: the JSON lines of a sharded sweep (`sweep --shard K/N
//! --json`) read back, checked to be one sweep with every point once, and
//! printed as `sweep` prints them (the table, JSON lines or the chart).

use super::lines::{json_lines, merge_texts};
use super::table::{parse_budget, table, write_plot};
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

pub fn merge(files: &[PathBuf], budget: Option<&str>, json: bool, plot: Option<&Path>) -> Result<String> {
    let budget = budget.map(parse_budget).transpose()?;
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        let text = crate::input::read_text_bounded(f, crate::input::SWEEP_LINES_MAX, "file of `sweep --json` lines")?;
        inputs.push((f.display().to_string(), text));
    }
    let (info, results) = merge_texts(&inputs)?;
    if let Some(dir) = plot {
        if info.grid.axes.len() > 2 {
            bail!("--plot: a sweep chart needs one or two varied keys; this sweep varies {}", info.grid.axes.len());
        }
        write_plot(dir, &info, &results)?;
    }
    if json {
        return Ok(json_lines(&info, &results));
    }
    let scope = format!("{} points merged from {} files", results.len(), files.len());
    Ok(table(&info, results, budget, &scope))
}
