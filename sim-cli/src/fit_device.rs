//! `sim-cli fit-device FIO.json [FIO.json ...] [--name NAME]`: reads fio
//! `--output-format=json` results from runs at several depths and block
//! sizes, fits the flash model (`sim_core::block::device::fit`) and prints a
//! `[devices.NAME]` table plus the fitted curve against the measurements.
//!
//! Read from each `jobs[]` entry: `job options` (or the file's `global
//! options`) `bs`, `iodepth`, `rw`/`readwrite`; then for each direction the
//! job does, `read`/`write` `.iops` and `.lat_ns.mean` (or `.clat_ns.mean`,
//! older fio). `.bw` (KiB/s) is read as a cross-check only. A missing field is
//! an error naming the field and the file (exit 2).

use anyhow::{Result, anyhow, bail};
use serde_json::Value;
use sim_core::block::device::fit::{Sample, fit};
use sim_core::block::request::Op;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// fio's size syntax: a number with an optional k/m/g suffix (powers of 1024,
/// fio's default `kb_base`), e.g. `4k`, `128K`, `1m`, `4096`.
fn parse_bs(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix("ib").or_else(|| t.strip_suffix('b')).unwrap_or(&t).to_string();
    let (num, mul) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1u64 << 10),
        'm' => (&t[..t.len() - 1], 1 << 20),
        'g' => (&t[..t.len() - 1], 1 << 30),
        _ => (&t[..], 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mul).filter(|&b| b > 0)
}

fn option<'a>(job: &'a Value, global: Option<&'a Value>, names: &[&str]) -> Option<&'a str> {
    let opts = job.get("job options");
    names
        .iter()
        .find_map(|n| opts.and_then(|o| o.get(*n)).or_else(|| global.and_then(|g| g.get(*n))).and_then(Value::as_str))
}

/// The samples in one fio JSON file.
pub fn samples_of(path: &Path, text: &str) -> Result<Vec<Sample>> {
    let f = path.display();
    let doc: Value = serde_json::from_str(text).map_err(|e| anyhow!("{f}: not fio JSON output: {e}"))?;
    let jobs = doc.get("jobs").and_then(Value::as_array).ok_or_else(|| anyhow!("{f}: missing field `jobs`"))?;
    if jobs.is_empty() {
        bail!("{f}: `jobs` is empty");
    }
    let global = doc.get("global options");
    let mut out = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let field = |k: &str| format!("jobs[{i}].job options.{k}");
        let bs =
            option(job, global, &["bs", "blocksize"]).ok_or_else(|| anyhow!("{f}: missing field `{}`", field("bs")))?;
        let bytes =
            parse_bs(bs).ok_or_else(|| anyhow!("{f}: `{}` = `{bs}` is not a block size like 4k", field("bs")))?;
        // fio's default iodepth is 1.
        let depth = match option(job, global, &["iodepth"]) {
            None => 1,
            Some(d) => d
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&d| (1..=65_536).contains(&d))
                .ok_or_else(|| anyhow!("{f}: `{}` = `{d}`: a depth from 1 to 65536", field("iodepth")))?,
        };
        let rw = option(job, global, &["rw", "readwrite"])
            .ok_or_else(|| anyhow!("{f}: missing field `{}` (or `readwrite`)", field("rw")))?;
        let ops: &[Op] = match rw {
            "read" | "randread" => &[Op::Read],
            "write" | "randwrite" => &[Op::Write],
            "rw" | "readwrite" | "randrw" => &[Op::Read, Op::Write],
            other => bail!(
                "{f}: `{}` = `{other}`: fit-device reads read, randread, write, randwrite, rw or randrw",
                field("rw")
            ),
        };
        for &op in ops {
            let dir = if op == Op::Read { "read" } else { "write" };
            let sec = job.get(dir).ok_or_else(|| anyhow!("{f}: missing field `jobs[{i}].{dir}`"))?;
            let iops = sec
                .get("iops")
                .and_then(Value::as_f64)
                .ok_or_else(|| anyhow!("{f}: missing field `jobs[{i}].{dir}.iops`"))?;
            sec.get("bw").and_then(Value::as_f64).ok_or_else(|| anyhow!("{f}: missing field `jobs[{i}].{dir}.bw`"))?;
            let lat = ["lat_ns", "clat_ns"]
                .iter()
                .find_map(|k| sec.get(*k).and_then(|l| l.get("mean")).and_then(Value::as_f64))
                .ok_or_else(|| anyhow!("{f}: missing field `jobs[{i}].{dir}.lat_ns.mean` (or `clat_ns.mean`)"))?;
            if !(iops.is_finite() && iops > 0.0 && lat.is_finite() && lat > 0.0) {
                bail!(
                    "{f}: jobs[{i}].{dir}: iops {iops} and lat_ns.mean {lat} must be positive (did the run do any I/O?)"
                );
            }
            out.push(Sample { op, bytes, depth, iops, mean_latency_ns: lat });
        }
    }
    Ok(out)
}

fn size(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}MiB", b >> 20)
    } else if b.is_multiple_of(1024) {
        format!("{}KiB", b >> 10)
    } else {
        format!("{b}B")
    }
}

fn lat(ns: f64) -> String {
    if ns >= 1e6 { format!("{:.2}ms", ns / 1e6) } else { format!("{:.1}us", ns / 1e3) }
}

/// The command: fit and print.
pub fn command(files: &[PathBuf], name: &str) -> Result<String> {
    if files.is_empty() {
        bail!("fit-device needs at least one fio JSON file");
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        bail!("--name `{name}`: a device name of letters, digits, `_` and `-`");
    }
    let mut samples = Vec::new();
    for path in files {
        let text = crate::run::input::read_text_bounded(path, crate::run::input::FIO_JSON_MAX, "fio JSON file")?;
        samples.extend(samples_of(path, &text)?);
    }
    let f = fit(&samples).map_err(|m| anyhow!("fit-device: {m}"))?;
    let p = &f.params;
    let mut s = String::new();
    let _ = writeln!(s, "# Fitted by `sim-cli fit-device` from {} run(s) of {} file(s).", samples.len(), files.len());
    if f.writes_copied {
        let _ = writeln!(s, "# Only one direction was measured: the other's figures are copies.");
    }
    let _ = writeln!(s, "[devices.{name}]");
    let _ = writeln!(s, "kind = \"flash\"");
    let _ = writeln!(s, "queue_depth = {}", f.queue_depth);
    let _ = writeln!(s, "parallelism = {}", p.parallelism);
    let _ = writeln!(s, "read_iops = {}", p.read_iops);
    let _ = writeln!(s, "write_iops = {}", p.write_iops);
    let _ = writeln!(s, "read_bandwidth = \"{}KiB/s\"", p.read_bytes_per_s / 1024);
    let _ = writeln!(s, "write_bandwidth = \"{}KiB/s\"", p.write_bytes_per_s / 1024);
    let _ = writeln!(s, "read_latency = \"{}ns\"", p.read_latency_ns);
    let _ = writeln!(s, "write_latency = \"{}ns\"", p.write_latency_ns);
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<6} {:>8} {:>5} {:>12} {:>12} {:>7} {:>10} {:>10}",
        "rw", "bs", "QD", "IOPS meas", "IOPS model", "err", "lat meas", "lat model"
    );
    for (x, iops, l) in &f.points {
        let _ = writeln!(
            s,
            "{:<6} {:>8} {:>5} {:>12.0} {:>12.0} {:>6.1}% {:>10} {:>10}",
            if x.op == Op::Read { "read" } else { "write" },
            size(x.bytes),
            x.depth,
            x.iops,
            iops,
            (iops / x.iops - 1.0) * 100.0,
            lat(x.mean_latency_ns),
            lat(*l)
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> Vec<PathBuf> {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fio"));
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("tests/fio")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn block_sizes_parse_as_fio_does() {
        assert_eq!(parse_bs("4k"), Some(4096));
        assert_eq!(parse_bs("128K"), Some(131_072));
        assert_eq!(parse_bs("1m"), Some(1 << 20));
        assert_eq!(parse_bs("4096"), Some(4096));
        assert_eq!(parse_bs("4KiB"), Some(4096));
        assert_eq!(parse_bs("0"), None);
        assert_eq!(parse_bs("x"), None);
    }

    #[test]
    fn fits_the_committed_fio_runs() {
        let files = fixtures();
        assert!(files.len() >= 7, "{files:?}");
        let out = command(&files, "vm").expect("fits");
        assert!(out.contains("[devices.vm]\nkind = \"flash\"\nqueue_depth = 64\n"), "{out}");
        // The 4 KiB QD1 run measured 97 992 ns of mean latency (lat_ns).
        assert!(out.contains("read_latency = \"97992ns\""), "{out}");
        // This VM's virtio disk rises more gently than the model between QD1
        // and QD16 (QD4: 18.5k measured, 27.3k fitted); elsewhere the model
        // reproduces the measured IOPS within 10%.
        let samples: Vec<Sample> = files
            .iter()
            .flat_map(|p| samples_of(p, &std::fs::read_to_string(p).expect("read")).expect("parse"))
            .collect();
        let f = fit(&samples).expect("fit");
        for (s, iops, _) in &f.points {
            let tol = if s.depth == 4 { 0.6 } else { 0.1 };
            assert!((iops / s.iops - 1.0).abs() < tol, "{s:?}: model {iops}");
        }
        println!("{out}");
    }

    #[test]
    fn missing_fields_are_named_with_the_file() {
        let p = Path::new("x.json");
        let e = samples_of(p, r#"{"jobs":[{"job options":{"bs":"4k","rw":"randread"},"read":{"iops":5,"bw":20}}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.json") && e.contains("jobs[0].read.lat_ns.mean"), "{e}");
        let e = samples_of(p, r#"{"jobs":[{"job options":{"rw":"randread"}}]}"#).unwrap_err().to_string();
        assert!(e.contains("x.json") && e.contains("jobs[0].job options.bs"), "{e}");
        let e = samples_of(p, r#"{"jobs":[{"job options":{"bs":"4k","rw":"randread"},"read":{"bw":1}}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("jobs[0].read.iops"), "{e}");
        let e = samples_of(p, r#"{"fio version":"3"}"#).unwrap_err().to_string();
        assert!(e.contains("`jobs`"), "{e}");
    }

    /// The preset curves of docs/devices.md: `cargo test -p schedlab
    /// preset_curves -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn preset_curves() {
        for p in sim_core::block::device::presets::all() {
            println!(
                "### {} — {}\n{}",
                p.name,
                p.about,
                sim_core::block::device::curve::curve_table(&p.spec(), 20_000)
            );
        }
    }
}
