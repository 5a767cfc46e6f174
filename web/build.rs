//! Embeds every scenario shipped in `scenarios/` into the page at build time,
//! so the browser explorer needs no server-side listing.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenarios/ is readable")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = String::from(
        "/// Shipped scenarios: (file name as the CLI names it, text).\npub const SCENARIOS: &[(&str, &str)] = &[\n",
    );
    for n in &names {
        let path = dir.join(n).canonicalize().expect("scenario path");
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(out, "    (\"scenarios/{n}\", include_str!({:?})),", path.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("scenarios.rs");
    std::fs::write(dest, out).expect("write scenarios.rs");
}
