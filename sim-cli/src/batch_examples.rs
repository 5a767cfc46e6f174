//! The batch examples of docs/sweeps/ run as written: the GNU parallel
//! script's command line for every shard, the Slurm array's for every task
//! id, the Kubernetes Indexed Job's for every completion index. Each set of
//! shards must merge into the unsharded sweep, point for point, so a
//! mistake in the index and count wiring (a 0-based index given as the
//! 1-based `--shard K`, an `--array` or `completions` that disagrees with
//! N, two shards writing one file) fails here. The command lines run in
//! process (clap parses the words, `run::execute` runs them): no batch
//! system, shell or sim-cli binary is needed, and the few shell forms the
//! examples use (`$X`, `${X}`, `${X:-d}`, `${X:?m}`, `"…"`, `> FILE`) are
//! expanded here; anything else makes the test fail rather than guess.

use crate::args::Cli;
use clap::Parser;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs `sim-cli WORDS...` in process; a scenario path is taken from the
/// repository root, as the examples run from there.
fn sim_cli(words: &[String]) -> String {
    let args = std::iter::once("sim-cli".to_string()).chain(
        words.iter().map(|w| if w.starts_with("scenarios/") { repo(w).display().to_string() } else { w.clone() }),
    );
    let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("sim-cli {}: {e}", words.join(" ")));
    crate::commands::execute(cli).unwrap_or_else(|e| panic!("sim-cli {}: {e:#}", words.join(" ")))
}

/// A word with `$NAME`, `${NAME}`, `${NAME:-default}` and `${NAME:?message}`
/// expanded from `vars` (an unset one without a default fails the test)
/// and double quotes removed.
fn expand(word: &str, vars: &BTreeMap<&str, String>) -> String {
    assert!(!word.contains('\'') && word.matches('"').count().is_multiple_of(2), "unsupported quoting: {word}");
    let word = word.replace('"', "");
    let mut out = String::new();
    let mut rest = word.as_str();
    while let Some(i) = rest.find('$') {
        out += &rest[..i];
        let after = &rest[i + 1..];
        let (name, default, len) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find('}').unwrap_or_else(|| panic!("no closing brace: {word}"));
            let inner = &inner[..end];
            match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default), end + 2),
                None => (inner.split(":?").next().unwrap_or(inner), None, end + 2),
            }
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], None, end)
        };
        let value = vars.get(name).cloned().or(default.map(str::to_string));
        out += &value.unwrap_or_else(|| panic!("${name} is not set where `{word}` is run"));
        rest = &after[len..];
    }
    out + rest
}

/// A simple command: its words (after `sim-cli`) and the file its stdout
/// is redirected to.
fn command(line: &str, vars: &BTreeMap<&str, String>) -> (Vec<String>, String) {
    let (cmd, target) = line.split_once(" > ").unwrap_or_else(|| panic!("no `> FILE` in {line}"));
    let words: Vec<String> = cmd.split_whitespace().map(|w| expand(w, vars)).collect();
    assert_eq!(words.first().map(String::as_str), Some("sim-cli"), "{line}");
    let target = target.split_whitespace().next().map(|t| expand(t, vars)).unwrap_or_default();
    (words[1..].to_vec(), target)
}

/// The value after `flag` among `words`.
fn value_of<'a>(words: &'a [String], flag: &str) -> &'a str {
    let i = words.iter().position(|w| w == flag).unwrap_or_else(|| panic!("no {flag} in {words:?}"));
    &words[i + 1]
}

/// `NAME=VALUE` at the start of a line of `script` (a trailing comment dropped).
fn assignment(script: &str, name: &str) -> String {
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {name}= line"))
        .to_string()
}

/// A directory for one test's shard files, removed when the test ends.
struct Scratch {
    name: String,
    path: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("schedlab-batch-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Scratch { name: name.to_string(), path }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Runs every shard's command (each writing the file it redirects to, all
/// distinct), merges the files with `sim-cli merge --json`, and checks the
/// merge is the unsharded sweep's JSON lines; returns the shard files.
/// `extra` names a shard file written twice (a retried shard), merged too.
fn merge_equals_unsharded(dir: &Scratch, shards: &[(Vec<String>, String)], extra: Option<usize>) -> Vec<PathBuf> {
    let (name, dir) = (&dir.name, &dir.path);
    let mut files = Vec::new();
    for (words, target) in shards {
        assert_eq!(value_of(words, "--jobs"), "1", "one core per shard");
        let file = dir.join(target.trim_start_matches('/').replace('/', "_"));
        assert!(!files.contains(&file), "{name}: two shards write {target}");
        std::fs::write(&file, sim_cli(words)).unwrap();
        files.push(file);
    }
    let mut inputs = files.clone();
    if let Some(k) = extra {
        let again = dir.join("retried.jsonl");
        std::fs::copy(&files[k], &again).unwrap();
        inputs.push(again);
    }
    let mut merge = vec!["merge".to_string()];
    merge.extend(inputs.iter().map(|f| f.display().to_string()));
    merge.push("--json".to_string());
    let merged = sim_cli(&merge);
    let mut whole = shards[0].0.clone();
    let at = whole.iter().position(|w| w == "--shard").unwrap();
    whole.drain(at..at + 2);
    let unsharded = sim_cli(&whole);
    assert_eq!(merged, unsharded, "{name}: the merged shards are the unsharded sweep");
    assert_eq!(merged.lines().count(), 8, "{merged}");
    files
}

/// GNU parallel runs the script's quoted command once per `{}` from
/// `seq 1 "$N"`; the script's own merge line prints the unsharded table.
#[test]
fn gnu_parallel_shards_merge_into_the_unsharded_sweep() {
    let script = read("docs/sweeps/gnu-parallel.sh");
    let n: usize = assignment(&script, "N").parse().unwrap();
    assert!(script.contains("seq 1 \"$N\" | parallel "), "parallel's {{}} runs 1..N");
    let line = script.lines().find(|l| l.trim_start().starts_with("\"sim-cli sweep ")).expect("the quoted command");
    let template = &line[line.find('"').unwrap() + 1..line.rfind('"').unwrap()];
    assert!(template.contains("--shard {}/$N"), "{template}");
    let shards: Vec<(Vec<String>, String)> = (1..=n)
        .map(|k| {
            let vars = BTreeMap::from([("N", n.to_string()), ("out", "out".to_string())]);
            command(&template.replace("{}", &k.to_string()), &vars)
        })
        .collect();
    let scratch = Scratch::new("parallel");
    let files = merge_equals_unsharded(&scratch, &shards, None);
    // The script's merge line, its glob being the shard files.
    let merge_line = script.lines().find(|l| l.starts_with("sim-cli merge ")).unwrap();
    let mut words = vec!["merge".to_string()];
    for w in merge_line.split_whitespace().skip(2) {
        if w.contains('*') {
            assert_eq!(w, "\"$out\"/shard-*.jsonl", "the glob names the shard files");
            words.extend(files.iter().map(|f| f.display().to_string()));
        } else {
            words.push(expand(w, &BTreeMap::new()));
        }
    }
    let table = sim_cli(&words);
    let mut whole = shards[0].0.clone();
    whole.retain(|w| w != "--json");
    let at = whole.iter().position(|w| w == "--shard").unwrap();
    whole.drain(at..at + 2);
    whole.extend(["--budget".to_string(), value_of(&words, "--budget").to_string()]);
    let unsharded = sim_cli(&whole);
    let head = table.lines().next().unwrap();
    assert!(head.ends_with(&format!("{n} points merged from {n} files")), "{head}");
    assert_eq!(table.lines().skip(1).collect::<Vec<_>>(), unsharded.lines().skip(1).collect::<Vec<_>>());
    assert!(table.contains("Settings meeting the budget"), "{table}");
}

/// `--array=A-B` runs task ids A..=B; the script's N is B, A is 1 (shards
/// are 1-based), and the task id is the shard.
#[test]
fn a_slurm_array_task_per_shard_covers_the_sweep() {
    let script = read("docs/sweeps/slurm-array.sh");
    let n: usize = assignment(&script, "N").parse().unwrap();
    let array = script.lines().find_map(|l| l.strip_prefix("#SBATCH --array=")).expect("an #SBATCH --array line");
    let range = array.split('%').next().unwrap().trim();
    let (first, last) = range.split_once('-').unwrap_or_else(|| panic!("--array={array}"));
    let (first, last): (usize, usize) = (first.parse().unwrap(), last.parse().unwrap());
    assert_eq!((first, last), (1, n), "--array={array} must run task ids 1..={n}, the shards of --shard K/{n}");
    assert!(script.contains("#SBATCH --cpus-per-task=1"), "one core per shard (--jobs follows it)");
    let line = script.lines().find(|l| l.starts_with("sim-cli sweep ")).unwrap();
    assert!(line.contains("--shard \"${SLURM_ARRAY_TASK_ID}/$N\""), "{line}");
    let shards: Vec<(Vec<String>, String)> = (first..=last)
        .map(|id| {
            let vars = BTreeMap::from([
                ("SLURM_ARRAY_TASK_ID", id.to_string()),
                ("N", n.to_string()),
                ("K", id.to_string()),
                ("out", "out".to_string()),
            ]);
            command(line, &vars)
        })
        .collect();
    merge_equals_unsharded(&Scratch::new("slurm"), &shards, None);
}

/// Line-based: the Job's spec keys (`completions`, `parallelism`,
/// `completionMode`, `restartPolicy`) and its folded `args` script, whose
/// `$$` Kubernetes turns into `$` before the shell runs it once per
/// JOB_COMPLETION_INDEX in 0..completions. A retried index (its shard
/// written twice) merges to the same points.
#[test]
fn a_kubernetes_indexed_job_covers_the_sweep_and_a_retried_index_merges() {
    let yaml = read("docs/sweeps/k8s-indexed-job.yaml");
    let key = |name: &str| -> String {
        let found: Vec<&str> = yaml
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(&format!("{name}:")))
            .map(|v| v.split('#').next().unwrap().trim())
            .collect();
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        found[0].to_string()
    };
    assert_eq!(key("kind"), "Job");
    assert_eq!(key("apiVersion"), "batch/v1");
    assert_eq!(key("completionMode"), "Indexed");
    assert!(["Never", "OnFailure"].contains(&key("restartPolicy").as_str()));
    let completions: usize = key("completions").parse().unwrap();
    let parallelism: usize = key("parallelism").parse().unwrap();
    assert!((1..=completions).contains(&parallelism), "parallelism {parallelism} of {completions}");
    // The folded block under `args:` (`- >-`), joined as YAML folds it.
    let lines: Vec<&str> = yaml.lines().collect();
    let start = lines.iter().position(|l| l.trim() == "- >-").expect("args as a folded block");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let script: Vec<&str> =
        lines[start + 1..].iter().take_while(|l| indent(l) > indent(lines[start])).map(|l| l.trim()).collect();
    let script = script.join(" ").replace("$$", "$");
    let steps: Vec<&str> = script.split(" && ").collect();
    assert_eq!(steps[0], "K=$((JOB_COMPLETION_INDEX + 1))", "the 1-based shard from the 0-based index");
    let sweep = steps.iter().find(|s| s.starts_with("sim-cli sweep ")).expect("the sweep");
    let mv = steps.iter().find(|s| s.starts_with("mv ")).expect("the rename when complete");
    let shards: Vec<(Vec<String>, String)> = (0..completions)
        .map(|index| {
            let vars = BTreeMap::from([("K", (index + 1).to_string()), ("HOSTNAME", format!("pod-{index}"))]);
            let (words, tmp) = command(sweep, &vars);
            assert_eq!(value_of(&words, "--shard"), format!("{}/{completions}", index + 1), "N is completions");
            let renamed: Vec<String> = mv.split_whitespace().skip(1).map(|w| expand(w, &vars)).collect();
            assert_eq!(renamed[0], tmp, "the file written is the one renamed");
            (words, renamed[1].clone())
        })
        .collect();
    merge_equals_unsharded(&Scratch::new("k8s"), &shards, Some(2));
}
