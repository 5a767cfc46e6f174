//! Fixtures shared by the integration tests in `it/`: locating and loading
//! the shipped scenarios, and running them.

use sim_core::{RunReport, Scenario};
use std::path::PathBuf;

/// The workspace's `scenarios/` folder.
pub fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("scenarios")
}

/// Every shipped scenario file, sorted by name.
pub fn scenario_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Loads `scenarios/NAME.toml`.
pub fn load(name: &str) -> Scenario {
    let path = scenarios_dir().join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Scenario::from_toml(&format!("scenarios/{name}.toml"), &text).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a scenario to the end.
pub fn run(s: &Scenario) -> RunReport {
    sim_core::run(s)
}

/// FNV-1a 64 of a text, printed as hex: a compact golden digest.
pub fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
