//! The binary as a user runs it (four subprocess tests, by design).

use std::process::Command;

fn sim_cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim-cli"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("sim-cli runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

#[test]
fn run_json_reports_the_variant_and_overrides_writes_charts_and_trace_and_survives_a_closed_pipe() {
    let dir = std::env::temp_dir().join(format!("sim-cli-export-{}", std::process::id()));
    let (trace, charts) = (dir.join("trace.json"), dir.join("charts"));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, out, err) = sim_cli(&[
        "run",
        "scenarios/jmx.toml",
        "--variant",
        "tuned",
        "--set",
        "duration=1s",
        "--set",
        "seed=5",
        "--json",
        "--plot",
        charts.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--window",
        "worst",
    ]);
    assert_eq!(code, 0, "{err}");
    // The files are announced on stderr; stdout stays one JSON document.
    assert!(err.contains("trace.json: window") && err.contains("charts to"), "{err}");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).expect("trace JSON");
    assert_eq!(t["otherData"]["seed"], 5);
    assert!(t["traceEvents"].as_array().unwrap().iter().any(|e| e["ph"] == "X"));
    let cdf = std::fs::read_to_string(charts.join("delay-cdf.svg")).unwrap();
    assert!(cdf.contains("tuned (n=") && cdf.contains("seed 5"), "the CDF names the run and its seed");
    assert!(charts.join("timeline.svg").exists() && charts.join("delay-hist-reactor.svg").exists());
    std::fs::remove_dir_all(&dir).ok();
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["variant"], "tuned");
    assert_eq!(v["seed"], 5);
    assert_eq!(v["sim_time_ns"], 1_000_000_000u64);
    assert_eq!(v["settings"]["sched_latency_ns"], 1_000_000);
    assert_eq!(v["settings"]["sched_nr_latency"], 2);

    // `sim-cli run … | head`: a reader that closes the pipe before the report
    // is written gets no panic and no error.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sim-cli"))
        .args(["run", "scenarios/two-hogs.toml"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sim-cli runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("sim-cli ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked") && err.is_empty(), "{:?}: {err}", out.status);
}

/// Hostile input: bad input exits 2 naming file and key; valid but explosive
/// input stops at its event budget with a partial report and exits 0.
#[test]
fn bad_input_exits_2_naming_file_and_key_and_explosive_input_stops_at_the_budget() {
    let dir = std::env::temp_dir().join(format!("sim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 2\nhz = 999\n[[tasks]]\nname = \"t\"\nprogram = [\"wait\"]\n").unwrap();
    let (code, out, err) = sim_cli(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("bad.toml") && err.contains("machine.hz") && err.contains("100, 250, 300 or 1000"), "{err}");
    let (code, _, err) = sim_cli(&["run", "scenarios/jmx.toml", "--set", "cfs.sched_latency_ns=-3"]);
    assert_eq!(code, 2);
    assert!(err.contains("cfs.sched_latency_ns"), "{err}");
    // A file written for 4.4 without `[kernel]` loads with --set (applied
    // before validation), variants included; a path from argv cannot drive
    // the terminal through the error line.
    let old = dir.join("old.toml");
    std::fs::write(&old, "schema = 1\nseed = 1\nduration = \"50ms\"\n[machine]\ncpus = 1\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n[variants.tight]\n\"cfs.sched_latency_ns\" = \"3ms\"\n").unwrap();
    let (code, _, err) = sim_cli(&["run", old.to_str().unwrap()]);
    assert!(code == 2 && err.contains("add [kernel] version = \"4.4\" to the file"), "{err}");
    let (code, _, err) = sim_cli(&["compare", old.to_str().unwrap(), "--set", "kernel.version=4.4"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = sim_cli(&["run", "no\u{1b}]0;pwned\u{7}.toml"]);
    assert!(code == 2 && !err.contains('\u{1b}') && err.contains("\\u{1b}]0;pwned\\u{7}"), "{err:?}");
    let (code, _, err) = sim_cli(&["run", "scenarios/two-hogs.toml", "--set", "devices.sdb.elevator=noop"]);
    assert!(code == 2 && err.contains("no device `sdb`"), "{err}");
    for (args, want) in [
        (&["--timehist", "--window", "5ms..1ms"][..], "--window 5ms..1ms: FROM is after TO"),
        (&["--timehist", "--trace-max", "0"][..], "--trace-max 0: allowed are 1 to"),
        (&["--timehist", "--window", "3s.."][..], "--window 3s..: the run ends at 2s"),
        (&["--timehist", "--cpus", "1"][..], "--cpus 1: CPU 1 does not exist"),
        (&["--window", "1ms.."][..], "it bounds --trace and --timehist"),
        (&["--json", "--cpus", "0"][..], "the text report's CPU table, not --json"),
        (&["--hgrm", "nobody"][..], "--hgrm nobody: no such task; the scenario's tasks are hog-a, hog-b"),
    ] {
        let (code, _, err) = sim_cli(&[&["run", "scenarios/two-hogs.toml"][..], args].concat());
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // The broken-scenario corpus (tests/broken, checked message by message
    // in tests/it/corpus.rs), and a file past the size limit: exit status 2,
    // one line on stderr naming the file, nothing on stdout, no panic.
    let huge = dir.join("huge.toml");
    std::fs::write(&huge, "# padding\n".repeat(500_000)).unwrap();
    let mut files: Vec<String> = std::fs::read_dir("../tests/broken")
        .or_else(|_| std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/broken")))
        .unwrap()
        .map(|e| format!("tests/broken/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    files.sort();
    assert!(files.len() >= 40);
    files.push(huge.to_str().unwrap().to_string());
    for f in &files {
        let (code, out, err) = sim_cli(&["run", f]);
        let name = std::path::Path::new(f).file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(code, 2, "{f}: {err}");
        assert!(out.is_empty() && err.lines().count() == 1 && err.contains(&name), "{f}: {err}");
        assert!(!err.contains("panicked"), "{f}: {err}");
    }
    let (code, _, err) = sim_cli(&["run", huge.to_str().unwrap()]);
    assert!(code == 2 && err.contains("the limit is 4194304"), "{err}");
    let (code, _, err) = sim_cli(&["run", "scenarios/no-such-file.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-file.toml"), "{err}");
    assert!(!err.contains("panicked"));
    let (code, out, err) = sim_cli(&["sweep", "scenarios/two-hogs.toml", "--vary", "cfs.sched_latency_ns=1ms..2ms:1"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("--vary cfs.sched_latency_ns=1ms..2ms:1") && err.contains("from 2 to 64"), "{err}");
    let (code, _, err) = sim_cli(&["sweep", "scenarios/two-hogs.toml", "--vary", "cfs.no_such=1,2"]);
    assert_eq!(code, 2);
    assert!(err.contains("two-hogs.toml") && err.contains("cfs.no_such"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
    // Valid but explosive (about 1e8 events per simulated ms): the run stops
    // at the file's events_max with a warning and a partial report. Exit 0,
    // as for a stalled run: the report is valid and says it is partial.
    let (code, out, err) = sim_cli(&["run", "tests/explosive/flicker.toml"]);
    assert_eq!(code, 0, "{err}");
    let warning = out.lines().nth(1).unwrap_or_default();
    assert!(
        warning.starts_with("warning: the event budget (limits.events_max = 1000000) ran out at 0.0000")
            && warning.contains(" s of 10.000000 s: this report is partial (")
            && out.lines().next().is_some_and(|l| l.contains("1000000 events · stop: event_limit")),
        "{out}"
    );
    assert!(out.contains("flicker:(128)"), "the partial report has the tasks table:\n{out}");
    let (code, out, err) = sim_cli(&["run", "tests/explosive/flicker.toml", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("warning: the event budget (limits.events_max = 1000000) ran out") && err.lines().count() == 1,
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is the JSON report alone");
    assert_eq!((v["stop_reason"].as_str(), v["events"].as_u64()), (Some("event_limit"), Some(1_000_000)));
    assert!(
        v["sim_time_ns"].as_u64().unwrap() < v["settings"]["duration_ns"].as_u64().unwrap() / 1000,
        "{}",
        v["sim_time_ns"]
    );
}

#[test]
fn compare_and_sweep_print_their_tables() {
    let (code, out, err) = sim_cli(&["compare", "scenarios/jmx.toml", "--set", "duration=2s"]);
    assert_eq!(code, 0, "{err}");
    for needle in ["base", "defaults", "tuned", "victim max wakeup delay", "one-hog bound", "2.5ms", "14ms"] {
        assert!(out.contains(needle), "compare output lacks `{needle}`:\n{out}");
    }
    // --jobs decides only when each run happens, not what it computes: the
    // same bytes on stdout with 1 and 4 threads (jmx: the base and its 7
    // variants, 8 runs of 300 ms simulated), as text and as JSON.
    for format in [&[][..], &["--json"][..]] {
        let compare = |jobs: &str| {
            let args = [&["compare", "scenarios/jmx.toml", "--set", "duration=300ms", "--jobs", jobs][..], format];
            let (code, out, err) = sim_cli(&args.concat());
            // No progress lines off a terminal, however many runs are in progress.
            assert_eq!((code, err.as_str()), (0, ""), "--jobs {jobs}");
            out
        };
        let one = compare("1");
        assert!(one.contains("tuned") && one.contains("linux618-short-slice"), "{one}");
        assert_eq!(one, compare("4"), "{format:?}");
    }
    let (code, out, err) = sim_cli(&["compare", "scenarios/jmx.toml", "--jobs", "0"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("invalid value '0' for '--jobs <N>': 0 is not in 1..=256"), "{err}");
    // One column per kernel model; an unknown version is refused with the allowed ones.
    let (code, out, err) =
        sim_cli(&["compare", "scenarios/two-hogs.toml", "--kernels", "4.4,6.18", "--set", "duration=200ms", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is the JSON document alone");
    let kernels: Vec<&str> =
        v["runs"].as_array().unwrap().iter().filter_map(|r| r["settings"]["kernel"].as_str()).collect();
    assert_eq!(kernels, ["4.4", "6.18"]);
    let (code, _, err) = sim_cli(&["compare", "scenarios/two-hogs.toml", "--kernels", "4.4,6.10"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("scenarios/two-hogs.toml")
            && err.contains("kernel.version")
            && err.contains("\"4.4\", \"6.6\", \"6.12\", \"6.18\""),
        "{err}"
    );
    // Bands: `run --phases/--seeds` prints point 0's report then the band;
    // without the flags the output is what it was (the same bytes as
    // `--phases 1 --seeds 1` minus the band table); --jobs changes nothing.
    let hog =
        ["scenarios/validation/02-hog-same-group.toml", "--set", "cfs.base_slice_ns=1400us", "--set", "duration=2s"];
    let (code, plain, err) = sim_cli(&[&["run"][..], &hog[..]].concat());
    assert_eq!(code, 0, "{err}");
    let banded = |extra: &[&str]| {
        let (code, out, err) = sim_cli(&[&["run"][..], &hog[..], &["--phases", "8"][..], extra].concat());
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = banded(&["--jobs", "1"]);
    assert_eq!(out, banded(&["--jobs", "3"]));
    let (report, table) = out.split_once("\nBands: 8 tick phases across one tick of 4ms").expect("a band table");
    assert_eq!(report.trim_end(), plain.trim_end(), "point 0's report is the plain run's");
    let max = table.lines().find(|l| l.trim_start().starts_with("reactor  max")).unwrap_or_default();
    assert!(max.contains("1ms–4ms") && max.ends_with("phase-sensitive"), "{table}");
    let (code, out, err) = sim_cli(&[&["run"][..], &hog[..], &["--phases", "2", "--json"][..]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("stdout is the JSON report alone");
    assert_eq!(v["bands"]["points"].as_array().map(Vec::len), Some(2));
    assert!(
        !plain.contains("Bands")
            && !sim_cli(&[&["run"][..], &hog[..], &["--json"][..]].concat()).1.contains("\"bands\"")
    );
    let (code, out, err) = sim_cli(&[&["compare"][..], &hog[..], &["--phases", "4", "--seeds", "2"][..]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("victim max band: median [min–max]") && out.contains("(phase)"), "{out}");
    for (flag, value, range) in [
        ("--phases", "0", "1 to 64"),
        ("--phases", "65", "1 to 64"),
        ("--seeds", "0", "1 to 32"),
        ("--seeds", "33", "1 to 32"),
    ] {
        for cmd in ["run", "compare"] {
            let (code, out, err) = sim_cli(&[cmd, "scenarios/validation/01-alone.toml", flag, value]);
            assert_eq!((code, out.as_str()), (2, ""), "{cmd} {flag} {value}");
            assert!(err.contains(&format!("{flag} {value}: allowed {range}")), "{err}");
        }
    }
    let sweep =
        ["sweep", "scenarios/two-hogs.toml", "--set", "machine.hz=1000", "--vary", "cfs.sched_latency_ns=2ms,4ms"];
    let (code, out, err) = sim_cli(&[&sweep[..], &["--budget", "1.5ms", "--jobs", "2"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Settings meeting the budget (p99 ≤ 1.5ms)") && out.contains("cfs.sched_latency_ns=2ms "),
        "{out}"
    );
    assert!(!out.contains("cfs.sched_latency_ns=4ms "), "{out}");
    // JSON lines: one per point, in grid order, quiet stderr (no progress bar off a terminal).
    let (code, out, err) = sim_cli(&[&sweep[..], &["--json", "--shard", "2/2"]].concat());
    assert_eq!((code, err.as_str()), (0, ""));
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(
        (lines[0]["index"].as_u64(), lines[0]["settings"]["cfs.sched_latency_ns"].as_str()),
        (Some(1), Some("4ms"))
    );
}

/// `--debug-no-elision` dispatches every tick as an event: the JSON report
/// is the same but for its event count, which is larger.
#[test]
fn debug_no_elision_changes_only_the_event_count() {
    let args = ["run", "scenarios/two-hogs.toml", "--variant", "hz1000", "--json"];
    let (code_on, on, _) = sim_cli(&args);
    let (code_off, off, _) = sim_cli(&[&args[..], &["--debug-no-elision"]].concat());
    assert_eq!((code_on, code_off), (0, 0));
    let events = |json: &str| -> u64 {
        let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
        v["events"].as_u64().expect("events")
    };
    // Two hogs on one CPU at HZ 1000 for 2 s: 1,999 ticks; with elision only
    // the ticks that preempt (every third: a 3 ms slice) are events.
    assert_eq!(events(&off), 2001);
    assert!(events(&on) < events(&off) / 2, "{} events with elision", events(&on));
    let strip =
        |json: &str| json.lines().filter(|l| !l.trim_start().starts_with("\"events\":")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&on), strip(&off));
}
