//! Mutation fuzzing of scenario text: the shipped scenarios with lines
//! dropped, duplicated or swapped, values replaced by extremes (0, -1, huge
//! integers, NaN, ±inf, 1e308, empty and odd strings, wrong types) and bytes
//! flipped. Whatever comes out, `Scenario::from_toml` returns `Ok` or a
//! one-line error naming the file, never panics; what parses, runs for a
//! bounded number of events without panicking. A second property feeds
//! arbitrary text, and arbitrary keys and TOML values appended to a valid
//! scenario, to the parser. A third feeds arbitrary bytes, and arbitrary key
//! paths (dots, quotes, brackets, control characters, up to 10,000
//! segments) with arbitrary values through `--set` and through a variant.
//! Every error is one line of at most 4 KiB without a control character.

use proptest::prelude::*;
use sim_core::{EventBudget, Scenario, ScenarioError, Simulation};

/// An error as the CLI prints it: one line, bounded, inert on a terminal.
fn check_message(file: &str, e: &ScenarioError) -> Result<(), TestCaseError> {
    let msg = e.to_string();
    prop_assert_eq!(msg.lines().count(), 1, "{}", msg);
    prop_assert!(msg.starts_with(&format!("{file}: ")), "{}", msg);
    prop_assert!(msg.len() < 4096, "{} bytes: {}", msg.len(), msg.chars().take(200).collect::<String>());
    prop_assert!(!msg.chars().any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)), "{:?}", msg);
    Ok(())
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out + "\""
}

/// One segment of a key path: a real key, a name, or something odd.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "tasks", "hog-a", "hog-b", "nice", "program", "0", "7", "run", "cfs", "sched_latency_ns", "groups",
            "\"/a.b\"", "devices", "sda", "kernel", "version", "features", "HRTICK", "machine", "hz", "seed",
            "variants", "report", "victim", "limiters", "io_queues", "sources", "program[0]", "[1]",
        ]).prop_map(str::to_string),
        2 => "[a-z0-9_\\-]{0,6}",
        2 => "[a-z.\"\\[\\]\\\\/ \u{1b}\u{202e}\n\t]{0,6}",
        1 => "\\PC{0,6}",
    ]
}

fn key_path() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::collection::vec(segment(), 1..20).prop_map(|s| s.join(".")),
        1 => (1usize..10_000).prop_map(|n| vec!["a"; n].join(".")),
        1 => (0usize..3).prop_map(|i| ["tasks.hog-a.nice", "groups.\"/x\".shares", "devices.sdb.elevator"][i].to_string()),
    ]
}

fn set_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        "\\PC{0,30}",
        "[ -~\u{1b}\n\u{9b}]{0,30}",
        (1usize..5_000).prop_map(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n))),
        (1usize..5_000).prop_map(|n| format!("{}1{}", "{a=".repeat(n), "}".repeat(n))),
        Just("{ version = \"4.4\" }".to_string()),
        Just("\"\\u001b]0;x\\u0007\"".to_string()),
        Just("9".repeat(400)),
    ]
}

const SHIPPED: [(&str, &str); 8] = [
    ("jmx.toml", include_str!("../../scenarios/jmx.toml")),
    ("two-hogs.toml", include_str!("../../scenarios/two-hogs.toml")),
    ("desktop-build.toml", include_str!("../../scenarios/desktop-build.toml")),
    ("autogroup-desktop.toml", include_str!("../../scenarios/autogroup-desktop.toml")),
    ("cfq-starvation.toml", include_str!("../../scenarios/cfq-starvation.toml")),
    ("mixed-rw.toml", include_str!("../../scenarios/mixed-rw.toml")),
    ("isolcpus.toml", include_str!("../../scenarios/isolcpus.toml")),
    ("threadpool.toml", include_str!("../../scenarios/threadpool.toml")),
];

/// Values a careless or hostile user might type.
const EXTREMES: [&str; 22] = [
    "0",
    "-1",
    "1",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-0.0",
    "\"\"",
    "\"0s\"",
    "\"-1ms\"",
    "\"1e30s\"",
    "\"exp(0ms)\"",
    "\"uniform(1ms, 0ms)\"",
    "\"lognormal(1ms, 1e9)\"",
    "\"nan ms\"",
    "true",
    "[]",
    "{}",
];

#[derive(Clone, Debug)]
enum Mutation {
    DropLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// Replace the value after `=` on a line by an extreme.
    Value(usize, usize),
    FlipByte(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<usize>().prop_map(Mutation::DropLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        4 => (any::<usize>(), 0..EXTREMES.len()).prop_map(|(l, v)| Mutation::Value(l, v)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::FlipByte(i, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match *m {
        Mutation::DropLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
        Mutation::Value(i, v) => {
            // Only lines that assign something.
            let with_eq: Vec<usize> = (0..lines.len()).filter(|&k| lines[k].contains(" = ")).collect();
            if let Some(&k) = with_eq.get(i % with_eq.len().max(1)) {
                let key = lines[k].split(" = ").next().unwrap_or("").to_string();
                lines[k] = format!("{key} = {}", EXTREMES[v]);
            }
        }
        Mutation::FlipByte(i, b) => {
            let mut bytes = lines.join("\n").into_bytes();
            let k = i % bytes.len().max(1);
            if let Some(x) = bytes.get_mut(k) {
                *x = b;
            }
            return String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenarios_are_refused_clearly_or_run(
        which in 0..SHIPPED.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let (file, original) = SHIPPED[which];
        let text = mutations.iter().fold(original.to_string(), |t, m| apply(&t, m));
        match Scenario::from_toml(file, &text) {
            Err(e) => check_message(file, &e)?,
            Ok(s) => {
                // Every variant must apply (they were validated with the file).
                for v in s.variant_names() {
                    prop_assert!(s.with_variant(v).is_ok(), "variant {} of an accepted file fails", v);
                }
                // Run what is small enough to run in a test, for a bounded number of events.
                let tasks: u64 = s.spec.tasks.iter().map(|t| u64::from(t.count)).sum();
                if s.spec.cpus <= 64 && tasks <= 2_000 {
                    let mut sim = Simulation::new(&s);
                    sim.advance(EventBudget(20_000));
                    let _ = sim.report();
                }
            }
        }
    }

    /// Arbitrary text, and arbitrary `key = value` lines (any string as the
    /// key, any TOML scalar as the value) appended to a valid scenario.
    #[test]
    fn arbitrary_text_and_values_are_refused_clearly(
        text in "\\PC{0,200}",
        key in "[a-z_.\"]{1,24}",
        value in prop_oneof![
            any::<i64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| format!("{v:?}")),
            "\\PC{0,20}".prop_map(|v| format!("{v:?}")),
            Just("true".to_string()),
            Just("[]".to_string()),
            Just("{}".to_string()),
        ],
    ) {
        for (file, t) in [("any.toml", text.clone()), ("two-hogs.toml", format!("{}\n{key} = {value}\n", SHIPPED[1].1))] {
            if let Err(e) = Scenario::from_toml(file, &t) {
                check_message(file, &e)?;
            }
        }
    }
}

proptest! {
    // Explicit, so `PROPTEST_CASES` does not change what CI runs (about 2 s).
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes as a file; arbitrary key paths and values through
    /// `--set` (after loading and at load) and as a variant's key.
    #[test]
    fn arbitrary_bytes_keys_and_values_are_refused_clearly(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        key in key_path(),
        value in set_value(),
    ) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Err(e) = Scenario::from_toml("bytes.toml", &text) {
            check_message("bytes.toml", &e)?;
        }
        let (file, good) = SHIPPED[1];
        let base = Scenario::from_toml(file, good).expect("shipped");
        match base.with_overrides(&[(key.as_str(), value.as_str())]) {
            Err(e) => check_message(file, &e)?,
            Ok(s) => prop_assert!(s.spec.tasks.len() <= 100_000),
        }
        if let Err(e) = Scenario::from_toml_with(file, good, &[(key.as_str(), value.as_str())]) {
            check_message(file, &e)?;
        }
        // The same as a variant: the key a TOML string, the value as typed
        // (a syntax error is checked like any other error).
        let toml_key = toml_string(&key);
        let toml_value = if value.contains(['\n', '\r']) { toml_string(&value) } else { value.clone() };
        let with_variant = format!("{good}\n[variants.v]\n{toml_key} = {toml_value}\n");
        match Scenario::from_toml(file, &with_variant) {
            Err(e) => check_message(file, &e)?,
            Ok(s) => prop_assert!(s.with_variant("v").is_ok()),
        }
    }
}
