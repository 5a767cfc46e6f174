//! Carries out a command: reads the file, builds scenarios through the core's
//! one API, runs them, and returns the text to print.

use crate::args::{Cli, Command, Common};
use crate::output;
use anyhow::{Context, Result, bail};
use sim_core::{RunReport, Scenario, report_json, runs_json};

pub fn execute(cli: Cli) -> Result<String> {
    match cli.command {
        Command::Run { common, variant, per_task, blkparse } => {
            let base = load(&common)?;
            let scenario = match &variant {
                Some(v) => base.with_variant(v)?,
                None => base,
            };
            let scenario = with_sets(&scenario, &common.set)?;
            let report = crate::progress::run(&scenario, !common.json);
            if common.json {
                return Ok(report_json(&report) + "\n");
            }
            let mut text = output::run_text(&report, per_task);
            if blkparse {
                text.push('\n');
                text.push_str(&crate::io_output::blkparse_text(&report));
            }
            Ok(text)
        }
        Command::Compare { common } => {
            let base = load(&common)?;
            let mut runs: Vec<RunReport> = Vec::new();
            let names: Vec<Option<String>> =
                std::iter::once(None).chain(base.variant_names().into_iter().map(|v| Some(v.to_string()))).collect();
            for name in names {
                let s = match &name {
                    Some(v) => base.with_variant(v)?,
                    None => base.clone(),
                };
                runs.push(crate::progress::run(&with_sets(&s, &common.set)?, !common.json));
            }
            Ok(if common.json { runs_json(&runs) + "\n" } else { output::compare_text(&runs) })
        }
        Command::Sweep(args) => crate::sweep::sweep(args),
        Command::Merge { files, budget, json, plot } => {
            crate::sweep::merge(&files, budget.as_deref(), json, plot.as_deref())
        }
        Command::Serve { dir, port } => crate::serve::serve(&dir, port).map(|()| String::new()),
    }
}

fn load(common: &Common) -> Result<Scenario> {
    load_text(&common.file).map(|(_, s)| s)
}

/// Reads and parses a scenario file; also returns its text (`sweep`
/// fingerprints it).
pub fn load_text(path: &std::path::Path) -> Result<(String, Scenario)> {
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.len() > sim_core::scenario::FILE_SIZE_MAX as u64 {
        bail!(
            "{}: the file is {} bytes; the limit is {}",
            path.display(),
            meta.len(),
            sim_core::scenario::FILE_SIZE_MAX
        );
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
    let scenario = Scenario::from_toml(&path.display().to_string(), &text)?;
    Ok((text, scenario))
}

pub fn with_sets(s: &Scenario, sets: &[String]) -> Result<Scenario> {
    if sets.is_empty() {
        return Ok(s.clone());
    }
    let mut pairs = Vec::with_capacity(sets.len());
    for kv in sets {
        let Some((k, v)) = kv.split_once('=') else {
            bail!("--set {kv}: expected KEY=VALUE, e.g. --set cfs.sched_latency_ns=1ms");
        };
        pairs.push((k, v));
    }
    Ok(s.with_overrides(&pairs)?)
}
