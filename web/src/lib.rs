//! The WebAssembly adapter: the browser explorer's entry point into
//! `sim-core`'s one API (parse scenario → apply overrides → run → report).
//!
//! This crate holds no model logic; the page (issue 5) will add chunked
//! runs and charts on top of these functions.

use sim_core::{Scenario, report_json};
use wasm_bindgen::prelude::*;

/// Runs `toml` (named `file` in error messages), with an optional variant and
/// `key=value` overrides one per line, and returns the `--json` report:
/// byte-identical to `sim-cli run --json` for the same input.
pub fn simulate_json(file: &str, toml: &str, variant: Option<&str>, overrides: &str) -> Result<String, String> {
    let base = Scenario::from_toml(file, toml).map_err(|e| e.to_string())?;
    let s = match variant {
        Some(v) if !v.is_empty() => base.with_variant(v).map_err(|e| e.to_string())?,
        _ => base,
    };
    let mut pairs = Vec::new();
    for line in overrides.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (k, v) = line.split_once('=').ok_or_else(|| format!("override `{line}`: expected KEY=VALUE"))?;
        pairs.push((k, v));
    }
    let s = if pairs.is_empty() { s } else { s.with_overrides(&pairs).map_err(|e| e.to_string())? };
    Ok(report_json(&sim_core::run(&s)) + "\n")
}

/// JavaScript entry point for `simulate_json`.
#[wasm_bindgen]
pub fn simulate(file: &str, toml: &str, variant: Option<String>, overrides: &str) -> Result<String, JsError> {
    simulate_json(file, toml, variant.as_deref(), overrides).map_err(|e| JsError::new(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOML: &str = "schema = 1\nseed = 3\nduration = \"50ms\"\n[machine]\ncpus = 1\n[[tasks]]\nname = \"a\"\ncount = 2\nprogram = [{ run = \"1s\" }]\n[variants.fast]\n\"machine.hz\" = 1000\n";

    #[test]
    fn same_report_as_the_core() {
        let s = Scenario::from_toml("t.toml", TOML).unwrap().with_variant("fast").unwrap();
        let s = s.with_overrides(&[("seed", "9")]).unwrap();
        let want = report_json(&sim_core::run(&s)) + "\n";
        assert_eq!(simulate_json("t.toml", TOML, Some("fast"), "seed=9\n").unwrap(), want);
        let e = simulate_json("t.toml", TOML, None, "machine.hz=7").unwrap_err();
        assert!(e.contains("t.toml") && e.contains("machine.hz"), "{e}");
    }
}
