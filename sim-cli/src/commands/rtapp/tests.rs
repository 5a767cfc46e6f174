//! Tests of `export --rt-app`: the JSON written for each kind of task,
//! the warnings, the refusals, and every scenario of the repository.

use super::*;

fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml("test.toml", toml).expect("the test scenario is valid")
}

/// A thread's events in the order rt-app runs them (phases in key order,
/// events in key order within each).
fn events(t: &Value) -> Vec<(String, Value)> {
    let obj = t.as_object().expect("a thread object");
    let phases: Vec<&Map<String, Value>> = match obj.get("phases") {
        Some(p) => p.as_object().expect("phases").values().map(|v| v.as_object().expect("a phase")).collect(),
        None => vec![obj],
    };
    const PROPS: &[&str] = &[
        "instance",
        "cpus",
        "policy",
        "priority",
        "dl-runtime",
        "dl-period",
        "dl-deadline",
        "taskgroup",
        "delay",
        "loop",
        "phases",
    ];
    phases
        .into_iter()
        .flat_map(|p| p.iter().filter(|(k, _)| !PROPS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())))
        .collect()
}

fn ev(list: &[(&str, Value)]) -> Vec<(String, Value)> {
    list.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

const PERIODIC: &str = r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[groups."/a"]
shares = 256
[[tasks]]
name = "tick"
cpus = "0"
nice = -5
group = "/a"
program = [{ run = "50us" }, { sleep_until = "1ms" }]
"#;

#[test]
fn model_only_machine_keys_are_said() {
    let text =
        PERIODIC.replace("cpus = 2\n", "cpus = 2\ntick_offset = \"1ms\"\nwakeup_latency = \"lognormal(20us, 0.5)\"\n");
    let (_, warnings) = export(&scenario(&text)).expect("exports");
    assert!(warnings.iter().any(|w| w.starts_with("machine.tick_offset: 1ms is not kept")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.starts_with("machine.wakeup_latency is a model input")), "{warnings:?}");
    let (_, plain) = export(&scenario(PERIODIC)).expect("exports");
    assert!(!plain.iter().any(|w| w.contains("tick_offset") || w.contains("wakeup_latency")), "{plain:?}");
}

#[test]
fn periodic_task_exports_exactly() {
    let (doc, warnings) = export(&scenario(PERIODIC)).expect("exports");
    assert_eq!(
        doc["tasks"]["tick"],
        json!({
            "cpus": [0],
            "policy": "SCHED_OTHER",
            "priority": -5,
            "taskgroup": "/a",
            "run0": 50,
            "timer1": { "ref": "unique", "period": 1000 },
        })
    );
    assert_eq!(doc["global"]["duration"], json!(1));
    assert_eq!(doc["global"]["calibration"], json!("CPU0"));
    assert!(warnings[0].ends_with("name CPUs up to 0, which the host must have"), "{warnings:#?}");
    // The shares cannot be said in rt-app: warned, naming task and group.
    assert!(
        warnings.iter().any(|w| w.contains("task tick") && w.contains("/a") && w.contains("cpu.shares 256")),
        "{warnings:#?}"
    );
    // Nothing else about the task is approximate.
    assert_eq!(warnings.iter().filter(|w| w.contains("tick")).count(), 1, "{warnings:#?}");
    // rt-app runs events in file order: run before timer, global first.
    let text = serde_json::to_string_pretty(&doc).expect("serializes");
    let at = |k: &str| text.find(k).unwrap_or(usize::MAX);
    assert!(at("\"global\"") < at("\"tasks\""));
    assert!(at("\"run0\"") < at("\"timer1\""), "{text}");
}

#[test]
fn events_whose_keys_do_not_sort_go_into_ordered_phases() {
    let toml = PERIODIC
        .replace(r#"[{ run = "50us" }, { sleep_until = "1ms" }]"#, r#"[{ sleep_until = "1ms" }, { run = "50us" }]"#)
        .replace("program", "iterations = 3\nprogram");
    let (doc, _) = export(&scenario(&toml)).expect("exports");
    let t = &doc["tasks"]["tick"];
    assert_eq!(t["phases"]["p0"], json!({ "timer0": { "ref": "unique", "period": 1000 } }));
    assert_eq!(t["phases"]["p1"], json!({ "run1": 50 }));
    assert_eq!(t["loop"], json!(3));
    assert_eq!(t.get("run1"), None);
}

#[test]
fn wake_and_wait_become_resume_and_suspend() {
    let (doc, warnings) = export(&scenario(
        r#"
schema = 1
seed = 1
duration = "2500ms"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "waker"
program = [{ sleep = "exp(1ms)" }, { wake = "sleeper" }]
[[tasks]]
name = "sleeper"
policy = "batch"
program = ["wait", { run = "100us" }, "yield"]
"#,
    ))
    .expect("exports");
    let tasks = &doc["tasks"];
    assert_eq!(events(&tasks["waker"]), ev(&[("sleep0", json!(1000)), ("resume1", json!("sleeper"))]));
    assert_eq!(
        events(&tasks["sleeper"]),
        ev(&[("suspend0", json!("sleeper")), ("run1", json!(100)), ("yield2", json!(""))])
    );
    assert_eq!(tasks["sleeper"]["policy"], json!("SCHED_BATCH"));
    assert_eq!(doc["global"]["duration"], json!(3));
    for want in ["task waker step 0 (sleep): exp(1ms) becomes its mean", "task sleeper step 0 (wait)", "duration"] {
        assert!(warnings.iter().any(|w| w.starts_with(want)), "{want}: {warnings:#?}");
    }
}

#[test]
fn instances_woken_one_by_one_get_their_own_objects() {
    let (doc, _) = export(&scenario(
        r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "waker"
count = 2
program = [{ sleep = "1ms" }, { wake = "sleeper" }]
[[tasks]]
name = "sleeper"
count = 2
program = ["wait", { run = "100us" }]
[[tasks]]
name = "pinned"
count = 2
cpus = "0-1"
pin_each = true
program = [{ run = "1ms" }, { sleep = "1ms" }]
"#,
    ))
    .expect("exports");
    let tasks = doc["tasks"].as_object().expect("an object");
    let names: Vec<&str> = tasks.keys().map(String::as_str).collect();
    assert_eq!(names, ["pinned_0", "pinned_1", "sleeper_0", "sleeper_1", "waker_0", "waker_1"]);
    assert_eq!(events(&tasks["waker_1"]), ev(&[("sleep0", json!(1000)), ("resume1", json!("sleeper_1"))]));
    assert_eq!(events(&tasks["sleeper_1"]), ev(&[("suspend0", json!("sleeper_1")), ("run1", json!(100))]));
    assert_eq!(tasks["pinned_1"]["cpus"], json!([1]));
    assert_eq!(tasks["pinned_1"].get("instance"), None);
}

#[test]
fn a_source_becomes_a_periodic_thread_with_a_warning() {
    let (doc, warnings) = export(&scenario(
        r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "server"
count = 3
program = ["serve"]
[[sources]]
name = "req"
target = "server"
rate_per_s = 1000
burst = 2
work = "exp(20us)"
start = "5ms"
"#,
    ))
    .expect("exports");
    let tasks = &doc["tasks"];
    for i in 0..3 {
        assert_eq!(
            tasks[format!("source-req_{i}")],
            json!({
                "delay": 5000,
                "resume0": format!("server_{i}"),
                "timer1": { "ref": "unique", "period": 1000 },
            })
        );
        // One arrival: a burst of 2 items of 20 us mean work.
        assert_eq!(
            events(&tasks[format!("server_{i}")]),
            ev(&[("suspend0", json!(format!("server_{i}"))), ("run1", json!(40))])
        );
    }
    assert!(
        warnings.iter().any(|w| w.starts_with("source req: random arrivals") && w.contains("every 1000 us")),
        "{warnings:#?}"
    );
    assert!(warnings.iter().any(|w| w.starts_with("task server step 0 (serve)")), "{warnings:#?}");
}

#[test]
fn io_only_scenario_is_refused_and_io_steps_are_left_out() {
    let io = |tasks: &str| {
        format!(
            r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[devices.sda]
kind = "ssd"
{tasks}
"#
        )
    };
    let only_io = io(r#"
[[tasks]]
name = "writer"
program = [{ write = "128KiB", wait = false, depth = 4 }, { run = "10us" }]
[[tasks]]
name = "syncer"
program = [{ write = "4KiB" }, "fdatasync"]
"#);
    let err = export(&scenario(&only_io)).expect_err("refused").to_string();
    assert!(err.contains("every task is I/O-only (writer, syncer)"), "{err}");

    let (doc, warnings) = export(&scenario(&io(r#"
[[tasks]]
name = "reader"
program = [{ read = "4KiB" }, { run = "50us" }, { sleep_until = "10ms" }]
"#)))
    .expect("exports");
    assert_eq!(
        events(&doc["tasks"]["reader"]),
        ev(&[("run0", json!(50)), ("timer1", json!({ "ref": "unique", "period": 10_000 }))])
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("task reader step 0 (read 4096 bytes, waited for): left out")),
        "{warnings:#?}"
    );
}

/// Every shipped scenario and variant exports; which tasks rt-app gets.
#[test]
fn every_shipped_scenario_exports() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let base = Scenario::from_toml(&f.display().to_string(), &text).expect("valid");
        let variants: Vec<Scenario> =
            base.variant_names().iter().map(|v| base.with_variant(v).expect("valid variant")).collect();
        let runs = std::iter::once(base.clone()).chain(variants);
        for s in runs {
            let what = format!("{} {:?}", f.display(), s.variant());
            let (doc, warnings) = export(&s).unwrap_or_else(|e| panic!("{what}: {e:#}"));
            assert!(warnings[0].starts_with("machine:"), "{what}");
            let tasks = doc["tasks"].as_object().expect("tasks");
            assert!(!tasks.is_empty(), "{what}");
            for (name, t) in tasks {
                check_thread(&format!("{what} {name}"), t, tasks);
            }
            check_settings_said(&what, &s, &doc, &warnings);
            // The I/O-bound tasks are left out, and said so.
            let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let left_out: &[&str] = match stem {
                "cfq-starvation" => &["commitlog"],
                "mixed-rw" => &["writer"],
                _ => &[],
            };
            for t in left_out {
                assert!(!tasks.contains_key(*t), "{what}: {t}");
                assert!(warnings.iter().any(|w| w.starts_with(&format!("task {t}: left out"))), "{what}");
            }
        }
    }
}

/// Defect: settings the export cannot express were dropped without a
/// warning (a pod's `cpu.max`, a limiter, a task's slice), and `forward`
/// hops became threads that suspend forever. Checked here from the spec,
/// independently of `unexpressed_settings`: each non-default setting
/// appears in the JSON or in a warning, and every thread that suspends
/// is resumed by another.
fn check_settings_said(what: &str, s: &Scenario, doc: &Value, warnings: &[String]) {
    let spec = &s.spec;
    let tasks = doc["tasks"].as_object().expect("tasks");
    let said = |needles: &[&str]| warnings.iter().any(|w| needles.iter().all(|n| w.contains(n)));
    let exported =
        |name: &str| tasks.keys().any(|k| k == name || k.strip_prefix(name).is_some_and(|r| r.starts_with('_')));
    for t in spec.tasks.iter().filter(|t| exported(&t.name)) {
        let mut gi = Some(t.cgroup);
        while let Some(i) = gi.filter(|&i| i != 0) {
            let g = &spec.groups.groups[i];
            if g.bandwidth.is_some() {
                assert!(said(&[&format!("taskgroup {}:", g.path), "cpu.max"]), "{what}: {} {warnings:#?}", g.path);
            }
            gi = g.parent;
        }
        if t.limiter.is_some() {
            assert!(said(&[&format!("task {}: limiter", t.name)]), "{what}: {}", t.name);
        }
        if t.slice_ns.is_some() {
            assert!(said(&[&format!("task {}: slice", t.name)]), "{what}: {}", t.name);
        }
        if let Some(next) = t.forward {
            let next = &spec.tasks[next].name;
            let resumes_next =
                tasks.iter().filter(|(k, _)| k.split('_').next() == Some(t.name.as_str())).any(|(_, o)| {
                    events(o).iter().any(|(k, v)| {
                        k.starts_with("resume") && v.as_str().is_some_and(|x| x.starts_with(next.as_str()))
                    })
                });
            assert!(resumes_next, "{what}: {} forwards to {next}", t.name);
        }
    }
    let resumed: Vec<String> = tasks
        .values()
        .flat_map(events)
        .filter(|(k, _)| k.starts_with("resume"))
        .filter_map(|(_, v)| v.as_str().map(str::to_string))
        .collect();
    for (name, t) in tasks {
        if events(t).iter().any(|(k, _)| k.starts_with("suspend")) {
            assert!(resumed.contains(name), "{what}: {name} suspends and nothing resumes it");
        }
    }
}

#[test]
fn quotas_limiters_slices_and_hops_are_said_or_expressed() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let load = |f: &str| {
        let text = std::fs::read_to_string(repo.join(f)).expect("readable");
        Scenario::from_toml(f, &text).expect("valid")
    };
    let (_, w) = export(&load("k8s-cpu-limit.toml")).expect("exports");
    assert!(w.iter().any(|w| w.starts_with("taskgroup /kubepods/pod-api: cpu.max = \"200000 100000\"")), "{w:#?}");
    let (doc, w) = export(&load("elastic-backup.toml")).expect("exports");
    assert!(w.iter().any(|w| w.starts_with("task backup: limiter = backup is not kept")), "{w:#?}");
    // wal (2 instances) forwards to respond (4): each wal thread resumes
    // two respond threads in turn, so all four are reached.
    let wal0: Vec<String> = events(&doc["tasks"]["wal_0"])
        .into_iter()
        .filter(|(k, _)| k.starts_with("resume"))
        .map(|(_, v)| v.as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(wal0, ["respond_0", "respond_2"]);
    // A slice (6.12+) is not in rt-app's grammar for SCHED_OTHER.
    let sliced =
        PERIODIC.replace("version = \"4.4\"", "version = \"6.18\"").replace("nice = -5", "nice = -5\nslice = \"1ms\"");
    let (_, w) = export(&scenario(&sliced)).expect("exports");
    assert!(w.iter().any(|w| w.starts_with("task tick: slice 1ms")), "{w:#?}");
    // A thread nothing resumes is refused, not exported to hang.
    let lonely = PERIODIC
        .replace(r#"program = [{ run = "50us" }, { sleep_until = "1ms" }]"#, r#"program = ["wait", { run = "50us" }]"#);
    let e = export(&scenario(&lonely)).expect_err("refused").to_string();
    assert!(e.contains("thread tick suspends") && e.contains("rt-app would block it forever"), "{e}");
}

/// Each thread object: event keys rt-app knows, a step that lets time
/// pass, resume targets that exist.
fn check_thread(what: &str, t: &Value, tasks: &Map<String, Value>) {
    let mut timed = false;
    let list = events(t);
    assert!(!list.is_empty(), "{what}: no events");
    for (n, (k, v)) in list.iter().enumerate() {
        let kind = ["run", "sleep", "timer", "suspend", "resume", "yield"]
            .into_iter()
            .find(|e| k.starts_with(e) && k[e.len()..].chars().all(|c| c.is_ascii_digit()))
            .unwrap_or_else(|| panic!("{what}: unknown key {k}"));
        // The order rt-app meets the keys in is the program's order.
        assert_eq!(k[kind.len()..].parse::<usize>().ok(), Some(n), "{what}: {k} out of order");
        timed |= matches!(kind, "run" | "sleep" | "timer" | "suspend");
        if kind == "resume" {
            let target = v.as_str().expect("a thread name");
            assert!(tasks.contains_key(target), "{what}: resume {target}");
        }
    }
    assert!(timed, "{what}: no event takes time");
}

/// A stop task has no system call: written as SCHED_FIFO 99 (what
/// sched_set_stop_task makes it look like), with a warning saying how it differs.
#[test]
fn a_stop_task_becomes_fifo_99_with_a_warning() {
    let toml = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 2\n\
                [[tasks]]\nname = \"migration\"\ncount = 2\ncpus = \"0-1\"\npin_each = true\npolicy = \"stop\"\n\
                program = [{ sleep = \"10ms\" }, { run = \"5us\" }]\n";
    let (doc, warnings) = export(&scenario(toml)).expect("exports");
    let tasks = doc["tasks"].as_object().expect("tasks");
    assert!(!tasks.is_empty());
    for (name, t) in tasks {
        assert_eq!((&t["policy"], &t["priority"]), (&json!("SCHED_FIFO"), &json!(99)), "{name}: {t}");
    }
    let said: Vec<&String> = warnings.iter().filter(|w| w.contains("policy \"stop\"")).collect();
    assert_eq!(said.len(), 1, "{warnings:#?}");
    assert!(said[0].contains("SCHED_FIFO 99") && said[0].contains("sched_rt_runtime_us"), "{}", said[0]);
}
