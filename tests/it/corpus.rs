//! The broken-scenario corpus (`tests/broken/*.toml`): every file is refused
//! with one line naming the file, the key and what is allowed, and nothing
//! panics. Each file says why it is broken and, in an `# expect:` line, the
//! fragments its error must contain (`a | b | c`).

use sim_core::Scenario;
use std::path::PathBuf;

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/broken"));
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .expect("tests/broken exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = String::from_utf8_lossy(&std::fs::read(&p).expect("readable file")).into_owned();
            (p, text)
        })
        .collect();
    files.sort();
    files
}

/// The fragments a file's error must contain.
fn expected(path: &std::path::Path, text: &str) -> Vec<String> {
    if text.is_empty() {
        return vec!["missing field `schema`".into()];
    }
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("# expect: "))
        .unwrap_or_else(|| panic!("{} has no `# expect:` line", path.display()));
    line.split(" | ").map(str::to_string).collect()
}

#[test]
fn every_broken_file_gets_one_clear_line_naming_file_and_key() {
    let files = corpus();
    assert!(files.len() >= 40, "the corpus has {} files", files.len());
    let mut failures = Vec::new();
    for (path, text) in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let result = std::panic::catch_unwind(|| Scenario::from_toml(&name, text).map(|_| ()));
        let msg = match result {
            Err(_) => {
                failures.push(format!("{name}: panicked"));
                continue;
            }
            Ok(Ok(())) => {
                failures.push(format!("{name}: accepted"));
                continue;
            }
            Ok(Err(e)) => e.to_string(),
        };
        if msg.lines().count() != 1 || !msg.starts_with(&format!("{name}: ")) {
            failures.push(format!("{name}: not one line starting with the file name: {msg}"));
        }
        for want in expected(path, text) {
            if !msg.contains(&want) {
                failures.push(format!("{name}: lacks `{want}`: {msg}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), files.len(), failures.join("\n"));
}

/// Sizes past the limits, built here rather than committed: a program of
/// more steps than allowed.
#[test]
fn oversized_programs_are_refused() {
    let steps = vec![r#"{ run = "1us" }"#; sim_core::scenario::limits::STEPS_MAX + 1].join(", ");
    let text = format!(
        "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\n[[tasks]]\nname = \"t\"\nprogram = [{steps}]\n"
    );
    let msg = Scenario::from_toml("long.toml", &text).map(|_| ()).unwrap_err().to_string();
    assert!(msg.contains("long.toml") && msg.contains("tasks.t.program") && msg.contains("1000"), "{msg}");
}
