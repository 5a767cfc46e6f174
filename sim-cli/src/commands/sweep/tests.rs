//! Tests of `sweep` and `merge`: shards, the JSON lines and their schema,
//! merging and its refusals, the table's units, the chart.

use super::lines::{LINE_SCHEMA, line_schema, merge_texts};
use super::merge::merge;
use super::*;
use sim_core::StopReason;
use std::path::PathBuf;

fn result(grid: &Grid, index: usize) -> PointResult {
    PointResult {
        index,
        settings: grid.point(index).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        metric_ns: 1_000_000 * (index as u64 + 1),
        p99_ns: 1_000_000 * (index as u64 + 1),
        max_ns: 2_000_000,
        avg_ns: 500_000,
        count: 10,
        open_count: 0,
        open_max_ns: 0,
        switches: 100 - index as u64,
        events: 1000,
        sim_time_ns: 1_000_000_000,
        stop: StopReason::TimeLimit,
        seed: 1,
    }
}

fn info(fingerprint: &str) -> Sweep {
    Sweep {
        fingerprint: fingerprint.into(),
        scenario: "two-hogs".into(),
        variant: None,
        seed: 1,
        sets: vec!["machine.hz=1000".into()],
        target: "hog-a".into(),
        metric: Metric::P99,
        grid: Grid::new(vec![Axis::parse("cfs.sched_latency_ns=1ms,2ms,4ms,8ms").unwrap()]).unwrap(),
    }
}

/// The JSON lines of points `indices` of a 4-point sweep.
fn shard(fingerprint: &str, indices: &[usize]) -> String {
    let i = info(fingerprint);
    let rs: Vec<PointResult> = indices.iter().map(|&k| result(&i.grid, k)).collect();
    json_lines(&i, &rs)
}

#[test]
fn shards_split_the_grid_without_overlap() {
    assert_eq!(shard_indices(10, Some((1, 3))), [0, 3, 6, 9]);
    assert_eq!(shard_indices(10, Some((3, 3))), [2, 5, 8]);
    assert_eq!(shard_indices(2, Some((3, 4))), Vec::<usize>::new());
    let mut all: Vec<usize> = (1..=4).flat_map(|k| shard_indices(10, Some((k, 4)))).collect();
    all.sort_unstable();
    assert_eq!(all, (0..10).collect::<Vec<_>>());
    assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
    for bad in ["0/4", "5/4", "x/4", "2", "1/0"] {
        assert!(parse_shard(bad).unwrap_err().to_string().contains("1 ≤ K ≤ N"), "{bad}");
    }
}

#[test]
fn merge_rebuilds_the_sweep_and_deduplicates() {
    let a = shard("f00d", &[0, 2]);
    // Shard 2 retried: its lines appear twice.
    let b = shard("f00d", &[1, 3]).repeat(2);
    let (sweep, results) = merge_texts(&[("a.jsonl".into(), a), ("b.jsonl".into(), b)]).unwrap();
    assert_eq!(sweep, info("f00d"));
    assert_eq!(results.iter().map(|r| r.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(results[3], result(&sweep.grid, 3));
    let table = table(&sweep, results, Some(2_000_000), "4 points");
    assert!(table.contains("cfs.sched_latency_ns=2ms  p99 2.000 ms  99 switches"), "{table}");
}

#[test]
fn merge_refuses_mixed_sweeps_gaps_conflicts_and_garbage() {
    let err = |inputs: &[(&str, String)]| {
        let owned: Vec<(String, String)> = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        format!("{:#}", merge_texts(&owned).unwrap_err())
    };
    let e = err(&[("a", shard("f00d", &[0, 2])), ("b", shard("beef", &[1, 3]))]);
    assert!(e.starts_with("b:1: sweep beef is not sweep f00d of a:1"), "{e}");
    let e = err(&[("a", shard("f00d", &[0])), ("b", shard("f00d", &[2]))]);
    assert!(e.contains("2 of 4 points are missing (first: 1, 3)"), "{e}");
    let changed = shard("f00d", &[1]).replace("\"switches\":99", "\"switches\":7");
    let e = err(&[("a", shard("f00d", &[0, 1, 2, 3])), ("b", changed)]);
    assert!(e.contains("b:1: point 1 differs from the same point at a:2"), "{e}");
    let e = err(&[("a", format!("{}{{\"schema\": 1, \"sweep\": 1}}\n", shard("f00d", &[0])))]);
    assert!(e.starts_with("a:2: not a line of `sim-cli sweep --json`"), "{e}");
    let e = err(&[("a", shard("f00d", &[0]).replace("\"stop\":\"time_limit\"", "\"stop\":\"bored\""))]);
    assert!(e.contains("a:1: `stop` = `bored` is not a stop reason; allowed: time_limit"), "{e}");
    let moved = shard("f00d", &[1]).replace("\"index\":1", "\"index\":2");
    let e = err(&[("a", moved)]);
    assert!(e.contains("a:1: the settings of point 2 are not the grid's"), "{e}");
}

#[test]
fn lines_carry_a_schema_that_merge_checks() {
    let lines = shard("f00d", &[0]);
    let v: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(v["schema"], LINE_SCHEMA);
    let err = |text: String| format!("{:#}", merge_texts(&[("a".into(), text)]).unwrap_err());
    let e = err(lines.replace("\"schema\":1,", "\"schema\":2,"));
    assert!(e.starts_with("a:1: sweep line schema 2; this sim-cli") && e.contains("reads schema 1"), "{e}");
    let e = err(lines.replace("\"schema\":1,", ""));
    assert!(e.starts_with("a:1: the line has no `schema` field") && e.contains("re-run that shard"), "{e}");
    // The schema describes the lines actually written.
    let schema = line_schema();
    let props = schema["properties"].as_object().unwrap();
    let mut written: Vec<&String> = v.as_object().unwrap().keys().collect();
    let mut described: Vec<&String> = props.keys().collect();
    written.sort();
    described.sort();
    assert_eq!(written, described);
}

/// Each figure column is printed in the unit of its largest value, named
/// in its header (not milliseconds with three decimals throughout).
#[test]
fn table_columns_choose_their_units() {
    let i = info("f00d");
    let mut rs: Vec<PointResult> = (0..4).map(|k| result(&i.grid, k)).collect();
    rs[0].max_ns = 3_500_000_000;
    let t = table(&i, rs, None, "4 points");
    let head = t.lines().find(|l| l.contains("▲")).unwrap();
    assert!(head.contains("p99 ms ▲") && head.contains("max s") && head.contains("avg us"), "{head}");
    let best = t.lines().find(|l| l.contains(" 1ms ")).unwrap();
    assert!(best.contains("1.000") && best.contains("3.500") && best.contains("500.000"), "{best}");
}

/// Defect: `sweep --plot` and `merge --plot` announced the chart on
/// stdout, after the table. Stdout is the table or the JSON lines alone.
#[test]
fn plot_writes_the_chart_and_keeps_stdout_for_the_output() {
    let dir = std::env::temp_dir().join(format!("sim-cli-sweep-plot-{}", std::process::id()));
    let file = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/two-hogs.toml"));
    let args = |json: bool| SweepArgs {
        common: crate::args::Common { file: file.clone(), set: vec!["duration=50ms".into()], json, warmup: None },
        vary: vec!["cfs.sched_latency_ns=2ms,4ms".into()],
        variant: None,
        target: None,
        metric: "p99".into(),
        budget: None,
        shard: None,
        jobs: Some(1u16),
        plot: Some(dir.clone()),
    };
    let out = sweep(args(false)).unwrap();
    assert!(dir.join("sweep.svg").is_file());
    assert!(!out.contains("chart") && !out.contains("sweep.svg"), "{out}");
    let lines = sweep(args(true)).unwrap();
    assert!(lines.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "{lines}");
    let shard = dir.join("all.jsonl");
    std::fs::write(&shard, &lines).unwrap();
    let merged = merge(&[shard], None, false, Some(&dir)).unwrap();
    assert!(merged.contains("2 points merged") && !merged.contains("sweep.svg"), "{merged}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fingerprints_separate_fields() {
    assert_ne!(fnv1a(&["ab", "c"]), fnv1a(&["a", "bc"]));
    assert_eq!(fnv1a(&[]), "cbf29ce484222325");
    assert_eq!(fnv1a(&["x"]).len(), 16);
}
