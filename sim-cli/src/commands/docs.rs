//! Documents generated from the program's own definitions, so they cannot
//! drift from it: shell completions and man pages from the clap definitions
//! (`clap_complete`, `clap_mangen`), and JSON Schemas from the serde types
//! (`schemars`: the scenario format and the report from sim-core's `schema`
//! feature, the sweep line from `sweep.rs`).

use crate::args::{Cli, SchemaKind};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::path::{Path, PathBuf};

/// The completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "sim-cli", &mut out);
    String::from_utf8(out).expect("clap_complete writes UTF-8")
}

fn render(cmd: clap::Command) -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("clap_mangen writes UTF-8")
}

/// `sim-cli(1)`: synopsis, options and the list of subcommands.
pub fn man_page() -> String {
    render(Cli::command())
}

/// `sim-cli.1` and one `sim-cli-COMMAND.1` per subcommand, into `dir`.
pub fn write_man_pages(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("--out-dir: cannot create {}", dir.display()))?;
    let mut cmd = Cli::command();
    cmd.build();
    let mut pages = vec![("sim-cli".to_string(), render(cmd.clone()))];
    // No page for `help` or for hidden internals (`__measure-worker`).
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help" && !s.is_hide_set()) {
        let name = format!("sim-cli-{}", sub.get_name());
        pages.push((name.clone(), render(sub.clone().name(name))));
    }
    let mut files = Vec::with_capacity(pages.len());
    for (name, text) in pages {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, text).with_context(|| format!("--out-dir: cannot write {}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

/// The JSON Schema of `what`, pretty-printed with a final newline (the
/// bytes committed under docs/schema/).
pub fn schema(what: SchemaKind) -> String {
    let value = match what {
        SchemaKind::Scenario => sim_core::scenario_schema(),
        SchemaKind::Report => sim_core::report_schema(),
        SchemaKind::SweepLine => crate::commands::sweep::lines::line_schema(),
    };
    serde_json::to_string_pretty(&value).expect("a schema serializes") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subcommands() -> Vec<String> {
        Cli::command().get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name().to_string()).collect()
    }

    #[test]
    fn completions_know_every_subcommand_and_option() {
        let names = subcommands();
        assert!(names.len() >= 8 && names.contains(&"completions".to_string()), "{names:?}");
        for shell in [clap_complete::Shell::Bash, clap_complete::Shell::Zsh, clap_complete::Shell::Fish] {
            let script = completions(shell);
            for n in &names {
                assert!(script.contains(n.as_str()), "{shell}: no `{n}` in the script");
            }
            for opt in ["--vary", "--set", "--json", "--shard", "--hgrm"] {
                assert!(script.contains(opt.trim_start_matches('-')), "{shell}: no `{opt}`");
            }
        }
    }

    /// Defect: `--help`, the man page and the completions called the tool
    /// a simulator of "the Linux CFS scheduler", while a scenario runs under
    /// EEVDF 6.18 unless it says otherwise. They now name both classes and
    /// the default, from the one clap definition they are generated from.
    #[test]
    fn help_and_man_page_name_the_default_model() {
        let latest = sim_core::KernelModel::LATEST;
        let help = Cli::command().render_long_help().to_string();
        let page = man_page();
        for text in [&help, &page] {
            assert!(!text.contains("CFS scheduler"), "{text}");
        }
        assert!(help.contains(&format!("newest, {}", latest.describe())), "{help}");
        assert!(page.contains("EEVDF") && page.contains(latest.version()), "{page}");
        let short = Cli::command().get_about().map(|a| a.to_string()).unwrap_or_default();
        assert!(short.contains("EEVDF") && short.contains("CFS of 4.4"), "{short}");
    }

    #[test]
    fn man_pages_have_name_synopsis_and_the_subcommands() {
        let page = man_page();
        for section in [".TH sim-cli 1", ".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS", ".SH VERSION"] {
            assert!(page.contains(section), "no `{section}`:\n{page}");
        }
        for n in subcommands() {
            assert!(page.contains(&format!("sim\\-cli\\-{}", n.replace('-', "\\-"))), "no `{n}` in the man page");
        }
        let dir = std::env::temp_dir().join(format!("sim-cli-man-{}", std::process::id()));
        let files = write_man_pages(&dir).unwrap();
        let sweep = std::fs::read_to_string(dir.join("sim-cli-sweep.1")).unwrap();
        assert!(sweep.contains(".SH SYNOPSIS") && sweep.contains("\\-\\-vary"), "{sweep}");
        assert_eq!(files.len(), subcommands().iter().filter(|n| *n != "help").count() + 1);
        std::fs::remove_dir_all(&dir).ok();
    }

    const SCHEMAS: [(SchemaKind, &str); 3] =
        [(SchemaKind::Scenario, "scenario"), (SchemaKind::Report, "report"), (SchemaKind::SweepLine, "sweep-line")];

    fn repo(path: &str) -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
    }

    /// The schemas under docs/schema/ are what the code generates, so they
    /// cannot drift from the serde types.
    #[test]
    fn committed_schemas_are_what_the_code_generates() {
        for (kind, name) in SCHEMAS {
            let path = repo(&format!("docs/schema/{name}.schema.json"));
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == schema(kind),
                "{} is stale: regenerate it with `sim-cli schema {name} > docs/schema/{name}.schema.json`",
                path.display()
            );
        }
    }

    fn validator(kind: SchemaKind) -> jsonschema::Validator {
        let value: serde_json::Value = serde_json::from_str(&schema(kind)).unwrap();
        jsonschema::validator_for(&value).expect("a valid JSON Schema")
    }

    fn errors(v: &jsonschema::Validator, doc: &serde_json::Value) -> Vec<String> {
        v.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect()
    }

    /// Every shipped scenario (and the test-only ones) validates against the
    /// scenario schema read as JSON, as an editor reads TOML; what the parser
    /// refuses for its shape, the schema refuses too.
    /// Scenario files of the repository: `.toml` files under `dirs`
    /// (recursively) that declare `schema =`.
    fn scenario_files(dirs: &[&str]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack: Vec<PathBuf> = dirs.iter().map(|d| repo(d)).collect();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "toml")
                    && std::fs::read_to_string(&p).unwrap().lines().any(|l| l.starts_with("schema ="))
                {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// The ```toml blocks of the README and docs/ that are whole scenarios.
    fn doc_scenarios() -> Vec<(String, String)> {
        let mut pages = vec![repo("README.md"), repo("ARCHITECTURE.md")];
        let mut stack = vec![repo("docs")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "md") {
                    pages.push(p);
                }
            }
        }
        let mut out = Vec::new();
        for page in pages {
            let text = std::fs::read_to_string(&page).unwrap();
            for (i, block) in text.split("```toml\n").skip(1).enumerate() {
                let body = block.split("```").next().unwrap_or("");
                if body.lines().any(|l| l.starts_with("schema =")) {
                    out.push((format!("{} block {i}", page.display()), body.to_string()));
                }
            }
        }
        out
    }

    /// A scenario's documents as an editor sees them: the file, and the file
    /// with each variant applied (as `Scenario::with_variant` applies it).
    fn documents(name: &str, text: &str) -> Vec<(String, serde_json::Value)> {
        let mut doc: toml::Table = toml::from_str(text).unwrap();
        let mut out = vec![(name.to_string(), serde_json::to_value(&doc).unwrap())];
        let Some(toml::Value::Table(variants)) = doc.remove("variants") else { return out };
        for (vname, body) in variants {
            let toml::Value::Table(body) = body else { panic!("{name}: variant {vname} is not a table") };
            let mut d = doc.clone();
            sim_core::apply_overrides(&mut d, &sim_core::flatten_overrides(&body).unwrap()).unwrap();
            out.push((format!("{name} variant {vname}"), serde_json::to_value(&d).unwrap()));
        }
        out
    }

    /// Every scenario the parser accepts in the repository (shipped ones and
    /// each of their variants, the calibration set, test and bench fixtures,
    /// the scenarios in the README and docs/) validates against the schema.
    #[test]
    fn scenarios_validate_against_the_scenario_schema() {
        let v = validator(SchemaKind::Scenario);
        let files = scenario_files(&["scenarios", "tests/explosive", "tests/perfetto", "sim-core/benches"]);
        assert!(files.len() >= 29, "{files:?}");
        let mut inputs: Vec<(String, String)> =
            files.iter().map(|f| (f.display().to_string(), std::fs::read_to_string(f).unwrap())).collect();
        // Of the docs' blocks, those the parser accepts (today none: the
        // README's key reference lists alternatives side by side).
        let docs: Vec<(String, String)> =
            doc_scenarios().into_iter().filter(|(_, t)| sim_core::Scenario::from_toml("f", t).is_ok()).collect();
        inputs.extend(docs);
        let mut checked = 0;
        for (name, text) in &inputs {
            let s = sim_core::Scenario::from_toml("f", text).unwrap_or_else(|e| panic!("{name}: {e}"));
            for variant in s.variant_names() {
                s.with_variant(variant).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            for (what, doc) in documents(name, text) {
                assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{what}");
                checked += 1;
            }
        }
        assert!(checked > inputs.len(), "variants were checked too ({checked} documents)");
        let base = std::fs::read_to_string(repo("scenarios/two-hogs.toml")).unwrap();
        for (from, to) in [
            ("[machine]", "[machine]\nbogus = 1"),
            ("hz = 250", "hz = \"fast\""),
            ("duration = \"2s\"", "duration = \"-5ms\""),
            ("[machine]", "[[tasks]]\nname = \"x\"\nprogram = [\"wiat\"]\n[machine]"),
        ] {
            assert!(base.contains(from), "{from}");
            let doc: serde_json::Value = toml::from_str(&base.replacen(from, to, 1)).unwrap();
            assert!(!v.is_valid(&doc), "the schema accepts `{to}`");
        }
        // Where the parser and the schema could disagree, they agree: the
        // README's enter_kernel_every, one isolated CPU as a number, cpu.max
        // as a number of µs (all accepted), a version as a float (refused by
        // both: 6.10 would read as 6.1).
        for (from, to, ok) in [
            ("program = [", "program = [{ run = \"1s\", enter_kernel_every = \"10us\" }, ", true),
            ("cpus = 1 ", "isolcpus = 1\ncpus = 2 ", true),
            ("[machine]", "[groups.\"/a\"]\n\"cpu.max\" = 50000\n[machine]", true),
            ("version = \"4.4\"", "version = 6.12", false),
            ("version = \"4.4\"", "version = \"4.4\"\ncfs_bandwidth = 5.4", false),
            ("version = \"4.4\"", "version = \"4.4\"\ncfs_bandwidth = \"5.4\"", true),
        ] {
            assert!(base.contains(from), "{from}");
            let text = base.replacen(from, to, 1);
            let parsed = sim_core::Scenario::from_toml("f", &text);
            let doc: serde_json::Value = toml::from_str(&text).unwrap();
            assert_eq!(parsed.is_ok(), ok, "the parser on `{to}`: {:?}", parsed.err());
            assert_eq!(v.is_valid(&doc), ok, "the schema on `{to}`: {:?}", errors(&v, &doc));
        }
    }

    /// `run --json` reports (with and without I/O, with request hops) validate against the report schema.
    #[test]
    fn reports_validate_against_the_report_schema() {
        let v = validator(SchemaKind::Report);
        for (file, duration) in [
            ("scenarios/two-hogs.toml", "100ms"),
            ("scenarios/mixed-rw.toml", "200ms"),
            ("scenarios/request-hops.toml", "100ms"),
            ("scenarios/scylla-io.toml", "100ms"),
        ] {
            let text = std::fs::read_to_string(repo(file)).unwrap();
            let s =
                sim_core::Scenario::from_toml(file, &text).unwrap().with_overrides(&[("duration", duration)]).unwrap();
            let doc: serde_json::Value = serde_json::from_str(&sim_core::report_json(&sim_core::run(&s))).unwrap();
            assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{file}");
            let mut broken = doc.clone();
            broken["seed"] = "forty-two".into();
            assert!(!v.is_valid(&broken));
        }
        // A measured machine model adds `noise` to every task and a background row.
        let file = "scenarios/calibration/idle.toml";
        let text = std::fs::read_to_string(repo(file)).unwrap();
        let noise = "[machine.noise]\nwakeup_idle = \"14us\"\nkernel_per_activation = \"5us\"\n\
                     [[machine.noise.background]]\nname = \"kw\"\ncpu = 0\nevery = \"exp(10ms)\"\nrun = \"100us\"\n";
        let s = sim_core::Scenario::from_toml(file, &text)
            .unwrap()
            .with_overrides(&[("duration", "100ms")])
            .unwrap()
            .with_noise("noise.toml", noise)
            .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&sim_core::report_json(&sim_core::run(&s))).unwrap();
        assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{file} with noise");
        assert_eq!(doc["tasks"][1]["background"], true);
        assert!(doc["tasks"][0]["noise"]["wakeup_idle"]["count"].as_u64().unwrap() > 0);
    }
}
