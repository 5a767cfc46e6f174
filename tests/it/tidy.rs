//! Tidy checks on the source tree (rust-analyzer's `TidyDocs` idea).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target" && n != "pkg" && n != "node_modules") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every Rust file opens with a `//!` comment saying what it is and why.
#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["sim-core", "sim-cli", "web", "tests"] {
        rust_files(&root.join(krate), &mut files);
    }
    assert!(files.len() > 20);
    let missing: Vec<String> = files
        .iter()
        .filter(|p| !std::fs::read_to_string(p).unwrap().trim_start().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` doc: {missing:?}");
}

/// The core stays free of I/O, wall clocks, OS randomness and hash maps.
#[test]
fn core_has_no_io_clock_or_unseeded_randomness() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim-core/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let banned = [
        "std::fs",
        "println!",
        "eprintln!",
        "Instant::now",
        "SystemTime",
        "HashMap",
        "HashSet",
        "thread_rng",
        "from_os_rng",
        "std::env",
        "std::thread",
    ];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for b in banned {
            assert!(!text.contains(b), "{} uses `{b}`", f.display());
        }
    }
}
