//! What every subcommand reads from the user, in one place: files read
//! through one bounded reader, `--set KEY=VALUE` pairs, and scenarios loaded
//! with them (the base, a batch of overrides on top). The subcommands import
//! this module; it imports none of them.
//!
//! At most `limit` bytes of a user's input file (scenario TOML, fio JSON,
//! sweep JSON lines) are ever read, so `/dev/zero`, a FIFO fed by a runaway
//! producer or a huge file is refused after `limit + 1` bytes instead of
//! growing memory until the allocator fails. File metadata cannot be trusted
//! for this: it says 0 bytes for `/dev/zero` and for a FIFO.

use crate::args::Common;
use anyhow::{Context, Result, anyhow};
use sim_core::Scenario;
use std::io::Read;
use std::path::Path;

/// Largest fio JSON file `fit-device` reads (fio's `json+` output with
/// latency bins of many jobs stays well below).
pub const FIO_JSON_MAX: u64 = 64 << 20;
/// Largest JSON-lines file `merge` reads: a full 10 000-point sweep's lines
/// are about 6 MB.
pub const SWEEP_LINES_MAX: u64 = 64 << 20;

/// Reads `path` as UTF-8 text of at most `limit` bytes. `what` names the
/// kind of file in the messages ("scenario file"). Errors name the file and:
/// the limit, when there is more; the byte offset of the first byte that is
/// not UTF-8.
pub fn read_text_bounded(path: &Path, limit: u64, what: &str) -> Result<String> {
    let p = path.display();
    let file = std::fs::File::open(path).map_err(|e| anyhow!("cannot read {p}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| anyhow!("cannot read {p}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(anyhow!(
            "{p}: the {what} is larger than {limit} bytes (reading stopped there); the limit is {limit}"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{p}: the {what} is not UTF-8 text: byte {} (offset from 0) is not valid UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Reads and parses a scenario file with the `--set` overrides applied
/// before anything is validated (`Scenario::from_toml_with`), so every
/// command loads a file the same way; also returns its text (`sweep`
/// fingerprints it, `measure` hands it to its workers).
pub fn load_text(path: &Path, sets: &[String]) -> Result<(String, Scenario)> {
    let text = read_text_bounded(path, sim_core::SCENARIO_FILE_SIZE_MAX as u64, "scenario file")?;
    let scenario = Scenario::from_toml_with(&path.display().to_string(), &text, &set_pairs(sets)?)?;
    Ok((text, scenario))
}

/// The scenario file of `common` with the overrides `sets` (`run`, `compare`).
pub fn load(common: &Common, sets: &[String]) -> Result<Scenario> {
    load_text(&common.file, sets).map(|(_, s)| s)
}

/// `s` with one more batch of `KEY=VALUE` overrides (a later batch may set
/// a key an earlier one set; one batch may not set a key twice).
pub fn with_sets(s: &Scenario, sets: &[String]) -> Result<Scenario> {
    if sets.is_empty() {
        return Ok(s.clone());
    }
    Ok(s.with_overrides(&set_pairs(sets)?)?)
}

/// A `--noise` file (`[machine.noise]`, as `sim-cli calibrate` writes it),
/// read once through the bounded reader and applied to as many scenarios
/// as a command predicts.
pub struct NoiseFile {
    name: String,
    text: String,
}

impl NoiseFile {
    pub fn read(path: &Path) -> Result<NoiseFile> {
        let text = read_text_bounded(path, sim_core::SCENARIO_FILE_SIZE_MAX as u64, "noise file")
            .context("--noise: a [machine.noise] file, as `sim-cli calibrate` writes it")?;
        Ok(NoiseFile { name: path.display().to_string(), text })
    }

    /// `s` with this file's `[machine.noise]` replacing its own.
    pub fn apply(&self, s: Scenario) -> Result<Scenario> {
        Ok(s.with_noise(&self.name, &self.text)?)
    }
}

/// `s` with the noise file `path` (`--noise`), if one is given.
pub fn with_noise(s: Scenario, path: Option<&Path>) -> Result<Scenario> {
    match path {
        Some(p) => NoiseFile::read(p)?.apply(s),
        None => Ok(s),
    }
}

/// `--set KEY=VALUE` texts split at the first `=`.
pub fn set_pairs(sets: &[String]) -> Result<Vec<(&str, &str)>> {
    sets.iter()
        .map(|kv| {
            kv.split_once('=').ok_or_else(|| {
                anyhow!("--set {}: expected KEY=VALUE, e.g. --set cfs.sched_latency_ns=1ms", sim_core::echo_input(kv))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("sim-cli-input-{}-{name}", std::process::id()))
    }

    /// Defect: `run /dev/zero` read until memory ran out (metadata says 0
    /// bytes for it). Now reading stops one byte past the limit.
    #[test]
    fn dev_zero_is_refused_at_the_limit() {
        let e = read_text_bounded(Path::new("/dev/zero"), 1 << 20, "scenario file").unwrap_err().to_string();
        assert!(e.starts_with("/dev/zero: the scenario file is larger than 1048576 bytes"), "{e}");
        assert!(e.contains("the limit is 1048576"), "{e}");
    }

    #[test]
    fn one_byte_over_the_limit_is_refused_and_the_limit_itself_is_read() {
        let f = temp("over");
        std::fs::write(&f, "x".repeat(101)).unwrap();
        let e = read_text_bounded(&f, 100, "fio JSON file").unwrap_err().to_string();
        assert!(e.contains("fio JSON file is larger than 100 bytes") && e.contains(&f.display().to_string()), "{e}");
        assert_eq!(read_text_bounded(&f, 101, "x").unwrap().len(), 101);
        std::fs::remove_file(&f).ok();
    }

    #[test]
    fn non_utf8_is_refused_with_its_offset() {
        let f = temp("latin1");
        std::fs::write(&f, b"name = \"caf\xe9\"\n").unwrap();
        let e = read_text_bounded(&f, 100, "scenario file").unwrap_err().to_string();
        assert!(e.contains("not UTF-8 text: byte 11"), "{e}");
        std::fs::remove_file(&f).ok();
        let e = read_text_bounded(&temp("missing"), 100, "x").unwrap_err().to_string();
        assert!(e.starts_with("cannot read") && e.contains("missing"), "{e}");
    }

    /// A FIFO whose writer never stops: the read ends at the limit, the
    /// writer then gets EPIPE (Rust ignores SIGPIPE) and ends too.
    #[test]
    fn a_fifo_fed_forever_is_cut_at_the_limit() {
        let f = temp("fifo");
        let made = std::process::Command::new("mkfifo").arg(&f).status().expect("mkfifo(1) runs");
        assert!(made.success(), "mkfifo {}", f.display());
        let path = f.clone();
        let writer = std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let chunk = [b'#'; 4096];
            let mut written = 0u64;
            // Bounded: stops at the reader's EPIPE, or after 1 GiB at worst.
            while written < 1 << 30 {
                if w.write_all(&chunk).is_err() {
                    break;
                }
                written += 4096;
            }
            written
        });
        let e = read_text_bounded(&f, 256 << 10, "scenario file").unwrap_err().to_string();
        assert!(e.contains("larger than 262144 bytes"), "{e}");
        let written = writer.join().unwrap();
        assert!(written < 1 << 30, "the writer was cut off: {written}");
        std::fs::remove_file(&f).ok();
    }
}
