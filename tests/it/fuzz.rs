//! Mutation fuzzing of scenario text: the shipped scenarios with lines
//! dropped, duplicated or swapped, values replaced by extremes (0, -1, huge
//! integers, NaN, ±inf, 1e308, empty and odd strings, wrong types) and bytes
//! flipped. Whatever comes out, `Scenario::from_toml` returns `Ok` or a
//! one-line error naming the file, never panics; what parses, runs for a
//! bounded number of events without panicking. A second property feeds
//! arbitrary text, and arbitrary keys and TOML values appended to a valid
//! scenario, to the parser.

use proptest::prelude::*;
use sim_core::{EventBudget, Scenario, Simulation};

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
            Err(e) => {
                let msg = e.to_string();
                prop_assert_eq!(msg.lines().count(), 1, "{}", msg);
                prop_assert!(msg.starts_with(&format!("{file}: ")), "{}", msg);
            }
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
                let msg = e.to_string();
                prop_assert_eq!(msg.lines().count(), 1, "{}", msg);
                prop_assert!(msg.starts_with(&format!("{file}: ")), "{}", msg);
            }
        }
    }
}
