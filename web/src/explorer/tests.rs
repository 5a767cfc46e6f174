//! Tests of the explorer: its JSON is the CLI's bytes, errors name the
//! file, key and origin, and controls re-run with the same seed.

use super::*;

const TOML: &str = "schema = 1\nseed = 3\nduration = \"200ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 250\n[features]\nWAKEUP_PREEMPTION = false\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n[[tasks]]\nname = \"s\"\nsession = \"x\"\nprogram = [{ sleep = \"exp(5ms)\" }, { run = \"50us\" }]\n[variants.fast]\n\"machine.hz\" = 1000\n";

#[test]
fn chunked_run_reports_what_one_call_does() {
    let mut e = Explorer::default();
    let d = e.start("t.toml", TOML, Some("fast"), "seed=9\n");
    assert_eq!(d["ok"]["variants"][0], "fast");
    let mut chunks = 0;
    while e.step(20) < 1.0 {
        chunks += 1;
        assert!(chunks < 100_000);
        if chunks == 5 {
            assert!(e.preview());
            // 100 events in: partway through the 0.2 s (how far depends on how
            // many ticks are elided).
            assert!(e.summary().starts_with("So far (0.") && e.summary().contains("of 0.20 s"), "{}", e.summary());
            assert!(!e.pin(), "a preview cannot be pinned");
        }
    }
    assert!(chunks > 5, "the run took several chunks");
    let json = e.finish().unwrap();
    let s = Scenario::from_toml("t.toml", TOML).unwrap().with_variant("fast").unwrap();
    let s = s.with_overrides(&[("seed", "9")]).unwrap();
    assert_eq!(json, report_json(&sim_core::run(&s)) + "\n");
    assert_eq!(e.step(1), -1.0, "no run in progress");
    assert!(e.pin());
    assert!(e.summary().starts_with("s: worst scheduling delay "), "{}", e.summary());
    assert!(e.summary().contains("CPU held by hog"), "{}", e.summary());
    assert!(e.summary().contains("Baseline (t.toml, variant fast, seed=9): worst"), "{}", e.summary());
    assert!(!e.summary().contains("Q2D"), "no devices, no I/O summary");
    let t = e.tables();
    assert_eq!(t["delay"].as_array().map(Vec::len), Some(2));
    assert_eq!(t["delay"][0]["summary"]["count"], t["delay"][1]["summary"]["count"]);
}

/// Compare after a 4.4 slider: a variant that runs another model gets
/// the overrides its model has, and a note for each one it lacks, not
/// an error row. Its run is the variant's without that override, and
/// its figures name its model. An override its own file's model lacks,
/// a misspelt feature, or a kernel chosen by the overrides themselves
/// stay errors.
#[test]
fn a_setting_the_variants_model_lacks_is_not_applied_with_a_note() {
    let text = format!("{TOML}[variants.new]\n\"kernel.version\" = \"6.18\"\n");
    let sets = "cfs.sched_latency_ns=\"6ms\"\nfeatures.START_DEBIT=false\nseed=9";
    let mut e = Explorer::default();
    let d = e.start("t.toml", &text, Some("new"), sets);
    assert_eq!(
        d["ok"]["notes"],
        json!([
            "cfs.sched_latency_ns not in Linux 6.18 (EEVDF): not applied",
            "features.START_DEBIT not in Linux 6.18 (EEVDF): not applied"
        ]),
        "{d}"
    );
    while e.step(100_000) < 1.0 {}
    let json = e.finish().unwrap();
    let s = Scenario::from_toml("t.toml", &text).unwrap().with_variant("new").unwrap();
    assert_eq!(json, report_json(&sim_core::run(&s.with_overrides(&[("seed", "9")]).unwrap())) + "\n");
    assert_eq!(e.figures().unwrap()["model"], "linux-6.18-eevdf");
    assert!(e.pin());
    assert_eq!(e.baseline_label().as_deref(), Some("baseline: t.toml, variant new, seed=9"));
    // The base and the 4.4 variant take every override, with no note.
    for variant in [None, Some("fast")] {
        let d = e.start("t.toml", &text, variant, sets);
        assert_eq!(d["ok"]["notes"], json!([]), "{variant:?}: {d}");
        while e.step(100_000) < 1.0 {}
        e.finish().unwrap();
        assert_eq!(e.figures().unwrap()["model"], "linux-4.4-cfs");
    }
    let refused = [
        (text.clone(), "features.START_DEBTI=false", "features.START_DEBTI"),
        (text.clone(), "cfs.sched_latency_ns=\"6ms\"\nkernel.version=\"6.18\"", "cfs.sched_latency_ns"),
        (text.replace("version = \"4.4\"", "version = \"6.6\""), sets, "cfs.sched_latency_ns"),
    ];
    for (text, sets, key) in refused {
        let r = e.start("t.toml", &text, Some("new"), sets);
        assert_eq!(r["error"]["key"], key, "{sets}: {r}");
    }
}

/// The page runs in a worker and draws on the main thread: a view sent
/// as JSON and loaded into another Explorer reads exactly as the
/// explorer that ran it (summary, tables, charts, notice, pin), previews
/// included; text that is not a view, or a view with nothing prepared,
/// changes nothing.
#[test]
fn a_view_loaded_from_the_worker_reads_as_the_run_itself() {
    let text = include_str!("../../../scenarios/cfq-starvation.toml");
    let (mut worker, mut page) = (Explorer::default(), Explorer::default());
    assert!(!page.load_view("{}"), "nothing prepared");
    let d = page.prepare("cfq-starvation.toml", text, Some("cfq-4.4"), "seed=4");
    assert!(d.get("ok").is_some(), "{d}");
    assert_eq!(page.step(1), -1.0, "prepare starts no simulation");
    assert_eq!(d, worker.start("cfq-starvation.toml", text, Some("cfq-4.4"), "seed=4"), "the same description");
    assert!(worker.step(1_000) < 1.0, "a run of more than a chunk");
    assert!(worker.events() > 0);
    assert!(worker.preview());
    assert!(page.load_view(&worker.view_json().unwrap()));
    assert!(page.summary().starts_with("So far ("), "{}", page.summary());
    assert_eq!(page.summary(), worker.summary());
    assert!(!page.pin(), "a preview cannot be pinned");
    while worker.step(1_000_000) < 1.0 {}
    worker.finish().unwrap();
    assert!(!page.load_view("not json") && !page.load_view("{\"victim\": 3}"));
    assert!(page.load_view(&worker.view_json().unwrap()));
    assert_eq!(page.current(), worker.current());
    assert_eq!((page.summary(), page.tables(), page.notice()), (worker.summary(), worker.tables(), worker.notice()));
    assert!(page.tables()["io"].as_array().is_some_and(|io| !io.is_empty()));
    // Pinned on the page, the baseline labels the next run's legends.
    assert!(page.pin());
    page.prepare("cfq-starvation.toml", text, None, "");
    worker.start("cfq-starvation.toml", text, None, "");
    while worker.step(1_000_000) < 1.0 {}
    worker.finish().unwrap();
    assert!(page.load_view(&worker.view_json().unwrap()));
    assert!(
        page.summary().contains(". Baseline (cfq-starvation, variant cfq-4.4, seed=4): worst"),
        "{}",
        page.summary()
    );
    assert_eq!(page.tables()["io"].as_array().map(Vec::len), Some(2), "current and baseline Q2D rows");
    let f = page.figures().unwrap();
    assert_eq!(f["events"], worker.current().unwrap().events);
    assert_eq!(f["partial"], false);
    assert!(!page.load_view(&worker.view_json().unwrap()), "a final view ends the prepared run");
}

/// The page's Q2D table and summary get the waits still open at the
/// end: under 4.4's CFQ the flusher's write has waited 19.9 s, never
/// dispatched, while the finished Q2Ds are all 0 ns.
/// When the longest wait is still open, the summary does not describe
/// the longest finished wait (CPU, time, holder) as if it were that one.
#[test]
fn an_open_worst_wait_is_not_explained_by_a_finished_one() {
    let toml = "schema = 1\nseed = 1\nduration = \"59ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 100\n[features]\nWAKEUP_PREEMPTION = false\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"s\"\niterations = 1\nprogram = [{ sleep = \"4ms\" }, { run = \"50us\" }, { sleep_until = \"51ms\" }, { run = \"50us\" }]\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n";
    let mut e = Explorer::default();
    assert!(e.start("t.toml", toml, None, "").get("ok").is_some());
    while e.step(100_000) < 1.0 {}
    e.finish().unwrap();
    let summary = e.summary();
    assert!(summary.contains("> 8.00 ms, still waiting at end"), "{summary}");
    assert!(!summary.contains(" on CPU "), "{summary}");
}

#[test]
fn q2d_table_and_summary_count_the_writes_still_queued() {
    let mut e = Explorer::default();
    let text = include_str!("../../../scenarios/cfq-starvation.toml");
    assert!(e.start("cfq-starvation.toml", text, Some("cfq-4.4"), "").get("ok").is_some());
    while e.step(1_000_000) < 1.0 {}
    e.finish().unwrap();
    let q = &e.tables()["io"][0]["summary"];
    assert_eq!((q["max_ns"].as_u64(), q["open_max_ns"].as_u64()), (Some(0), Some(19_900_000_000)), "{q}");
    assert!(q["open_count"].as_u64().unwrap() > 0, "{q}");
    let summary = e.summary();
    assert!(summary.contains("longest I/O stall > 19899."), "{summary}");
    assert!(summary.contains(", still waiting at end"), "{summary}");
}

/// Issue 21 in the explorer: the elevators of the scenario's kernel, the device
/// presets, and the userspace I/O queue's policy, limit and shares; the
/// policy control changes the answer as the CLI's variant does (the
/// reader's longest I/O stall: ~1 ms with the capacity limit, ~8 ms with
/// max-io-requests = 32).
#[test]
fn io_controls_offer_blk_mq_presets_and_the_userspace_queue() {
    let text = include_str!("../../../scenarios/scylla-io.toml");
    let mut e = Explorer::default();
    let d = e.start("scylla-io.toml", text, None, "");
    let elv = control(&d, "devices.ssd.elevator").expect("an elevator select");
    let names: Vec<&str> = elv["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect();
    // scylla-io runs under 6.18: the blk-mq elevators only (the legacy
    // ones were removed in 5.0).
    assert_eq!(names, ["\"none\"", "\"mq-deadline\"", "\"kyber\"", "\"bfq\""]);
    assert_eq!(elv["value"], "\"mq-deadline\"");
    let preset = control(&d, "devices.ssd.preset").expect("a preset select");
    assert_eq!(preset["value"], "\"sata-ssd\"");
    assert!(preset["options"].as_array().unwrap().iter().any(|o| o["value"] == "\"nvme-pm9a3\""));
    assert!(control(&d, "devices.ssd.mq-deadline.read_expire").is_some());
    let policy = control(&d, "io_queues.disk.policy").expect("the I/O queue's policy");
    assert_eq!(policy["value"], "\"capacity\"");
    assert_eq!(control(&d, "io_queues.disk.classes.latency_reads.shares").expect("shares")["value"], 100);
    assert!(control(&d, "io_queues.disk.max_io_requests").is_some());
    let stall = |e: &Explorer| {
        let s = e.summary();
        let at = s.find("longest I/O stall ").unwrap_or_else(|| panic!("{s}")) + "longest I/O stall ".len();
        s[at..].split_whitespace().next().unwrap().parse::<f64>().unwrap()
    };
    run_to_end(&mut e, "scylla-io.toml", text, None, "");
    let capacity = stall(&e);
    run_to_end(&mut e, "scylla-io.toml", text, None, "io_queues.disk.policy=\"max-io-requests\"");
    let fixed = stall(&e);
    assert!(capacity < 2.0 && fixed > 6.0, "capacity {capacity} ms, max-io-requests {fixed} ms");
    // Switching the elevator to a blk-mq scheduler keeps its tunables in view.
    let d = e.start("scylla-io.toml", text, None, "devices.ssd.elevator=\"kyber\"");
    assert!(control(&d, "devices.ssd.kyber.read_lat_nsec").is_some(), "{d}");
}

fn run_to_end(e: &mut Explorer, file: &str, text: &str, variant: Option<&str>, overrides: &str) {
    assert!(e.start(file, text, variant, overrides).get("ok").is_some());
    while e.step(100_000) < 1.0 {}
    e.finish().unwrap();
}

#[test]
fn the_baseline_names_its_scenario_and_is_dropped_on_another_scenario() {
    let named = TOML.replacen("seed = 3", "name = \"sleeper\"\nseed = 3", 1);
    let mut e = Explorer::default();
    run_to_end(&mut e, "a.toml", &named, Some("fast"), "cfs.sched_latency_ns=\"6ms\"");
    assert!(e.pin());
    let label = "baseline: sleeper, variant fast, sched_latency_ns=\"6ms\"";
    assert_eq!(e.baseline_label().as_deref(), Some(label));
    // Another variant and other overrides of the same scenario keep the pin,
    // and every chart series and table column names where it came from.
    run_to_end(&mut e, "a.toml", &named, None, "seed=5\nmachine.hz=1000\ncfs.sched_latency_ns=\"3ms\"");
    assert_eq!(e.baseline_label().as_deref(), Some(label));
    let charts: Vec<String> = e.delay_charts().into_iter().map(|c| c.label).collect();
    assert_eq!(charts, ["current", label]);
    assert_eq!(e.tables()["delay"][1]["label"], label);
    assert!(
        e.summary().contains(". Baseline (sleeper, variant fast, sched_latency_ns=\"6ms\"): worst"),
        "{}",
        e.summary()
    );
    assert!(e.pin());
    assert_eq!(e.baseline_label().as_deref(), Some("baseline: sleeper, 3 overrides"));
    // Edited text is another scenario: the pin goes, even before the run ends.
    let edited = named.replace("exp(5ms)", "exp(6ms)");
    assert!(e.start("a.toml", &edited, None, "").get("ok").is_some());
    assert_eq!(e.baseline_label(), None);
    assert_eq!(e.delay_charts().len(), 1);
    // So does another file; a failed start changes nothing.
    run_to_end(&mut e, "a.toml", &edited, None, "");
    assert!(e.pin());
    assert!(e.start("a.toml", "schema = ", None, "").get("error").is_some());
    assert!(e.baseline().is_some(), "a broken text keeps the charts and their baseline");
    run_to_end(&mut e, "b.toml", &edited, None, "");
    assert!(e.baseline().is_none());
    assert!(!e.summary().contains("Baseline"), "{}", e.summary());
}

#[test]
fn an_edited_scenario_goes_by_its_declared_name() {
    assert_eq!(edited_name("schema = 1\nname = \"jmx\" # x\n", "scenarios/jmx.toml"), "jmx (edited)");
    assert_eq!(
        edited_name("schema = 1\nseed = \n[[tasks]]\nname = \"hog\"\n", "scenarios/jmx.toml"),
        "edited scenario (based on scenarios/jmx.toml)"
    );
    assert_eq!(edited_name("name = 3", ""), "edited scenario");
    assert_eq!(edited_name("  name=\"x y\"", ""), "x y (edited)");
}

#[test]
fn an_explosive_scenario_stops_at_its_budget_with_a_notice() {
    let text = include_str!("../../../tests/explosive/flicker.toml");
    let mut e = Explorer::default();
    assert!(e.start("custom.toml", text, None, "").get("ok").is_some());
    // Simulated time barely moves; progress follows the event budget.
    let first = e.step(250_000);
    assert!((0.2..0.3).contains(&first), "progress after a quarter of the budget: {first}");
    let mut chunks = 0;
    while e.step(100_000) < 1.0 {
        chunks += 1;
        assert!(chunks < 100);
    }
    let json = e.finish().unwrap();
    let s = Scenario::from_toml("tests/explosive/flicker.toml", text).unwrap();
    assert_eq!(json, report_json(&sim_core::run(&s)) + "\n", "the CLI's bytes");
    let notice = e.notice().unwrap_or_default();
    assert!(
        notice.starts_with("The event budget (limits.events_max = 1000000) ran out at 0.0000")
            && notice.contains(" s of 10.000000 s: this report is partial (")
            && notice.ends_with(" events)."),
        "{notice}"
    );
    let summary = e.summary();
    assert!(
        summary.starts_with("Partial report (0.0000")
            && summary.contains("s simulated; the event budget ran out): flicker: worst scheduling delay"),
        "{summary}"
    );
    // A complete run has no notice.
    e.start("t.toml", TOML, None, "");
    while e.step(100_000) < 1.0 {}
    e.finish();
    assert_eq!(e.notice(), None);
    assert!(e.summary().starts_with("s: worst"), "{}", e.summary());
}

#[test]
fn errors_name_file_key_and_origin() {
    let mut e = Explorer::default();
    let r = e.start("t.toml", TOML, None, "machine.hz=7");
    assert_eq!(r["error"]["key"], "machine.hz");
    assert_eq!(r["error"]["origin"], "override");
    assert_eq!(r["error"]["file"], "t.toml");
    assert!(r["error"]["message"].as_str().unwrap().contains("100, 250, 300 or 1000"));
    let r = e.start("bad.toml", "schema = 1\nseed = ", None, "");
    assert_eq!(r["error"]["file"], "bad.toml");
    assert!(r["error"]["message"].as_str().unwrap().contains("TOML syntax error"), "{r}");
    let r = e.start("t.toml", TOML, None, "cfs.sched_latency_ns");
    assert!(r["error"]["message"].as_str().unwrap().contains("expected KEY=VALUE"));
    assert_eq!(e.step(1), -1.0, "a failed start leaves no run");
}

#[test]
fn controls_write_keys_the_core_accepts() {
    // Every control's current value, sent back as an override, is accepted
    // and changes nothing: the controls and the override keys agree,
    // under the scenario's own kernel and under each model.
    let kernels = std::iter::once(String::new())
        .chain(crate::kernel_versions().into_iter().map(|v| format!("kernel.version=\"{v}\"\n")));
    for (kernel, (file, text)) in kernels.flat_map(|k| crate::SCENARIOS.iter().map(move |s| (k.clone(), s))) {
        let mut e = Explorer::default();
        let d = e.start(file, text, None, &kernel);
        // A scenario naming an elevator the kernel lacks is refused
        // (`KernelModel::elevators`: cfq under 6.x, mq-deadline under 4.4).
        if d["error"]["key"].as_str().is_some_and(|k| k.ends_with(".elevator")) {
            assert!(!kernel.is_empty(), "{file} under its own kernel: {d}");
            continue;
        }
        let controls = d["ok"]["controls"].as_array().unwrap_or_else(|| panic!("{file}: {d}"));
        let mut lines = String::new();
        // A disabled control (a fair task's RT priority) sends nothing.
        for c in controls.iter().filter(|c| c["disabled"] != true) {
            let v = &c["value"];
            let text = match c["kind"].as_str().unwrap() {
                "select" => v.as_str().unwrap().to_string(),
                "log-ns" => format!("\"{}ns\"", v.as_u64().unwrap()),
                _ => v.to_string(),
            };
            if c["kind"] == "select" && text.is_empty() {
                continue;
            }
            lines += &format!("{}={}\n", c["key"].as_str().unwrap(), text);
        }
        let again = e.start(file, text, None, &lines);
        let same: Vec<&Value> =
            again["ok"]["controls"].as_array().unwrap_or_else(|| panic!("{file}: {again}\n{lines}")).iter().collect();
        for (a, b) in controls.iter().zip(same) {
            assert_eq!(a["value"], b["value"], "{file}: {}", a["key"]);
        }
    }
}

fn control<'a>(d: &'a Value, key: &str) -> Option<&'a Value> {
    d["ok"]["controls"].as_array()?.iter().find(|c| c["key"] == key)
}

/// The kernel selector offers every model, preselects the scenario's own,
/// and the tunables and features follow the model chosen: the CFS knobs
/// on 4.4, base_slice_ns (its default scaled by the CPU count) and the
/// model's EEVDF features on 6.x, each left alone sending no override.
#[test]
fn the_kernel_selector_switches_the_tunables_and_features_shown() {
    use sim_core::EevdfFeatures;
    use sim_core::KernelModel;
    let text = TOML.replace("cpus = 1", "cpus = 4");
    let mut e = Explorer::default();
    let d = e.start("t.toml", &text, None, "");
    let k = control(&d, "kernel.version").expect("a kernel selector");
    assert_eq!((k["value"].as_str(), k["default"].as_str()), (Some("\"4.4\""), Some("\"4.4\"")));
    assert_eq!(k["switches_model"], true);
    let options: Vec<&str> = k["options"].as_array().unwrap().iter().filter_map(|o| o["value"].as_str()).collect();
    assert_eq!(options, ["\"4.4\"", "\"6.6\"", "\"6.12\"", "\"6.18\""]);
    assert_eq!(d["ok"]["model"], "linux-4.4-cfs");
    let latency = control(&d, "cfs.sched_latency_ns").expect("CFS sliders on 4.4");
    assert_eq!(latency["model_specific"], true);
    assert!(control(&d, "cfs.base_slice_ns").is_none());
    assert!(control(&d, "features.GENTLE_FAIR_SLEEPERS").is_some());
    // 4 CPUs: factor 1 + ilog2(4) = 3.
    for (version, slice_ns) in [("6.6", 3 * 750_000), ("6.12", 3 * 750_000), ("6.18", 3 * 700_000)] {
        let model = KernelModel::parse(version).unwrap();
        let d = e.start("t.toml", &text, None, &format!("kernel.version=\"{version}\""));
        assert_eq!(d["ok"]["kernel"], version, "{d}");
        let k = control(&d, "kernel.version").unwrap();
        assert_eq!(
            (k["value"].as_str(), k["default"].as_str()),
            (Some(format!("\"{version}\"").as_str()), Some("\"4.4\""))
        );
        assert!(control(&d, "cfs.sched_latency_ns").is_none(), "{version}: no CFS knob");
        let slice = control(&d, "cfs.base_slice_ns").expect("base_slice on 6.x");
        assert_eq!((slice["value"].as_u64(), slice["default"].as_u64()), (Some(slice_ns), Some(slice_ns)), "{version}");
        let features: Vec<&str> = d["ok"]["controls"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["key"].as_str()?.strip_prefix("features."))
            .collect();
        assert_eq!(features, EevdfFeatures::names(model), "{version}");
        assert_eq!(crate::kernel_features(version).unwrap(), features);
        // The file's WAKEUP_PREEMPTION = false holds on 6.x too: value and
        // default agree, so the toggle left alone sends nothing.
        let wp = control(&d, "features.WAKEUP_PREEMPTION").unwrap();
        assert_eq!((wp["value"].as_bool(), wp["default"].as_bool()), (Some(false), Some(false)));
        let defaults = EevdfFeatures::defaults(model).iter(model);
        for (name, on) in defaults.into_iter().filter(|(n, _)| *n != "WAKEUP_PREEMPTION") {
            assert_eq!(control(&d, &format!("features.{name}")).unwrap()["default"], on, "{version} {name}");
        }
        // The run is the CLI's `--set kernel.version=X`.
        while e.step(100_000) < 1.0 {}
        let json = e.finish().unwrap();
        let s = Scenario::from_toml("t.toml", &text).unwrap().with_overrides(&[("kernel.version", version)]).unwrap();
        assert_eq!(json, report_json(&sim_core::run(&s)) + "\n");
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["settings"]["kernel"], version);
    }
    assert_eq!(crate::kernel_features("4.4").unwrap(), sim_core::SchedFeatures::NAMES);
    assert_eq!(crate::kernel_features("5.10"), None);
    assert_eq!(crate::kernel_versions(), ["4.4", "6.6", "6.12", "6.18"]);
    // A CFS knob left over on 6.x is the core's error, named by its key.
    let r = e.start("t.toml", &text, None, "cfs.sched_latency_ns=\"6ms\"\nkernel.version=\"6.18\"");
    assert_eq!(r["error"]["key"], "cfs.sched_latency_ns", "{r}");
}

/// The machine controls: topology, isolcpus and nohz write `machine.*`
/// keys; a bad combination is refused with the key at fault.
#[test]
fn machine_controls_write_topology_keys_and_bad_combos_name_their_key() {
    let text = include_str!("../../../scenarios/two-hogs.toml");
    let mut e = Explorer::default();
    let d = e.start("two-hogs.toml", text, None, "");
    let keys: Vec<&str> = d["ok"]["controls"].as_array().unwrap().iter().filter_map(|c| c["key"].as_str()).collect();
    for k in [
        "machine.cpus",
        "machine.sockets",
        "machine.cores_per_socket",
        "machine.threads_per_core",
        "machine.numa_nodes",
        "machine.isolcpus",
        "machine.nohz",
    ] {
        assert!(keys.contains(&k), "{k} not offered: {keys:?}");
    }
    let cpus = d["ok"]["controls"].as_array().unwrap().iter().find(|c| c["key"] == "machine.cpus").unwrap()["value"]
        .as_u64()
        .unwrap();
    // Cores per socket that do not multiply to cpus: the core names machine.cpus.
    let r = e.start("two-hogs.toml", text, None, &format!("machine.cores_per_socket={}", cpus + 1));
    assert_eq!(r["error"]["key"], "machine.cpus", "{r}");
    assert_eq!(r["error"]["origin"], "override");
    let r = e.start("two-hogs.toml", text, None, &format!("machine.isolcpus=\"0-{}\"", cpus - 1));
    assert_eq!(r["error"]["key"], "machine.isolcpus", "{r}");
    let r = e.start("two-hogs.toml", text, None, "machine.cpus=4\nmachine.sockets=2\nmachine.numa_nodes=3");
    assert_eq!(r["error"]["key"], "machine.numa_nodes", "{r}");
}

/// The cluster control exists under the 6.x models only (4.4 has no CLS
/// level) and is dropped with the model; unset it reads as one cluster per
/// core; a count that does not divide the cores is the core's error.
#[test]
fn the_cluster_control_follows_the_model() {
    let text = TOML.replace("cpus = 1", "cpus = 8");
    let mut e = Explorer::default();
    let d = e.start("t.toml", &text, None, "");
    assert!(control(&d, "machine.clusters_per_socket").is_none(), "4.4 has no cluster level");
    for version in ["6.6", "6.12", "6.18"] {
        let d = e.start("t.toml", &text, None, &format!("kernel.version=\"{version}\""));
        let c = control(&d, "machine.clusters_per_socket").expect("a cluster control on 6.x");
        assert_eq!((c["value"].as_u64(), c["default"].as_u64(), c["max"].as_i64()), (Some(8), Some(8), Some(8)));
        assert_eq!(c["model_specific"], true);
        let d = e.start("t.toml", &text, None, &format!("kernel.version=\"{version}\"\nmachine.clusters_per_socket=2"));
        assert_eq!(control(&d, "machine.clusters_per_socket").unwrap()["value"], 2, "{d}");
        let r = e.start("t.toml", &text, None, &format!("kernel.version=\"{version}\"\nmachine.clusters_per_socket=3"));
        assert_eq!(r["error"]["key"], "machine.clusters_per_socket", "{r}");
    }
    let r = e.start("t.toml", &text, None, "machine.clusters_per_socket=2");
    assert_eq!(r["error"]["key"], "machine.clusters_per_socket", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("Linux 4.4 (CFS) model has no cluster"), "{r}");
}

/// The CPU table and the occupancy chart's size come with every report.
#[test]
fn tables_list_each_cpu_with_busy_time_gap_and_migrations() {
    let toml = TOML.replace("cpus = 1", "cpus = 2\nthreads_per_core = 2\nisolcpus = \"1\"");
    let mut e = Explorer::default();
    run_to_end(&mut e, "t.toml", &toml, None, "");
    let t = e.tables();
    let cpus = t["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 2, "{t}");
    assert_eq!(cpus[1]["label"], "cpu 1 · s0 c0 t1 (isolated)");
    assert_eq!(cpus[1]["isolated"], true);
    assert!(cpus[0]["busy_ns"].as_u64().unwrap() > 0);
    assert_eq!(cpus[1]["busy_ns"], 0, "no task may run on the isolated CPU");
    for k in ["migrations_in", "migrations_out", "balance_gap_ns", "switches"] {
        assert!(cpus[0][k].is_u64(), "{k}");
    }
    assert_eq!(t["occupancy"]["rows"], 2);
    assert!(t["occupancy"]["buckets"].as_u64().unwrap() > 0);
}

/// The overrides after the page's select `key` takes `value`, as main.js
/// applies it: the key's own override (dropped at the default), then the
/// option's `also` (set, or dropped for null).
fn select_option(d: &Value, overrides: &str, key: &str, value: &str) -> String {
    let c = control(d, key).unwrap_or_else(|| panic!("no control {key}: {d}"));
    let mut pairs: Vec<(String, String)> =
        parse_overrides(overrides).unwrap().into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    // A JS Map: a key set again keeps its place.
    let mut set = |k: &str, v: Option<&str>| match (pairs.iter().position(|(x, _)| x == k), v) {
        (Some(i), Some(v)) => pairs[i].1 = v.to_string(),
        (Some(i), None) => drop(pairs.remove(i)),
        (None, Some(v)) => pairs.push((k.to_string(), v.to_string())),
        (None, None) => {}
    };
    set(key, (c["default"] != value).then_some(value));
    let option = c["options"].as_array().unwrap().iter().find(|o| o["value"] == value);
    let option = option.unwrap_or_else(|| panic!("{key} offers no {value}: {c}"));
    for pair in option["also"].as_array().unwrap() {
        set(pair[0].as_str().unwrap(), pair[1].as_str());
    }
    pairs.iter().map(|(k, v)| format!("{k}={v}\n")).collect()
}

/// Runs to the end and checks the report is `sim-cli run --set`'s with
/// these overrides, byte for byte; returns it parsed.
fn run_as_cli(e: &mut Explorer, file: &str, text: &str, overrides: &str) -> Value {
    let d = e.start(file, text, None, overrides);
    assert!(d.get("ok").is_some(), "{overrides}: {d}");
    while e.step(100_000) < 1.0 {}
    let json = e.finish().unwrap();
    let pairs = parse_overrides(overrides).unwrap();
    let s = Scenario::from_toml(file, text).unwrap().with_overrides(&pairs).unwrap();
    assert_eq!(json, report_json(&sim_core::run(&s)) + "\n", "{overrides}");
    serde_json::from_str(&json).unwrap()
}

/// The CPU time a task's instances got, from a report.
fn runtime_ns(report: &Value, task: &str) -> u64 {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == task)
        .map(|t| t["runtime_ns"].as_u64().unwrap())
        .sum()
}

fn option_values(c: &Value) -> Vec<&str> {
    c["options"].as_array().unwrap().iter().map(|o| o["value"].as_str().unwrap()).collect()
}

/// Issue 34 in the explorer: each task's policy, with its RT priority
/// (enabled for fifo and rr only) and, for deadline, its reservation; stop
/// for a task pinned to one CPU.
/// Choosing fifo brings a priority along and choosing normal again drops
/// it (the page's overrides end empty); deadline brings a runtime and a
/// deadline. Each run is the CLI's with the same `--set`s; bad values are
/// the core's errors, named by their key. A policy the file's own keys
/// rule out (an override cannot remove a key) is not offered.
#[test]
fn a_task_policy_brings_its_rt_priority_or_reservation_along() {
    let (file, text) = ("two-hogs.toml", include_str!("../../../scenarios/two-hogs.toml"));
    let mut e = Explorer::default();
    let d = e.start(file, text, None, "");
    let policy = control(&d, "tasks.hog-b.policy").expect("a policy select");
    assert_eq!((policy["value"].as_str(), policy["default"].as_str()), (Some("\"normal\""), Some("\"normal\"")));
    assert_eq!(
        option_values(policy),
        ["\"normal\"", "\"batch\"", "\"idle\"", "\"fifo\"", "\"rr\"", "\"deadline\"", "\"stop\""]
    );
    assert_eq!(policy["options"][6]["label"], "stop (stop_sched_class)");
    assert_eq!(policy["options"][3]["label"], "fifo (SCHED_FIFO)");
    let prio = control(&d, "tasks.hog-b.rt_priority").expect("an RT priority control");
    assert_eq!(
        (prio["value"].as_u64(), prio["disabled"].as_bool(), prio["min"].as_i64()),
        (Some(0), Some(true), Some(1))
    );
    assert!(control(&d, "tasks.hog-b.dl_runtime").is_none(), "no deadline sliders for a fair task");
    let fair = runtime_ns(&run_as_cli(&mut e, file, text, ""), "hog-a");

    // fifo: priority 50 along; on one CPU, hog-a gets what RT throttling
    // leaves (4.4: 50 ms of each 1 s, against half the CPU before).
    let fifo = select_option(&d, "", "tasks.hog-b.policy", "\"fifo\"");
    assert_eq!(fifo, "tasks.hog-b.policy=\"fifo\"\ntasks.hog-b.rt_priority=50\n");
    let r = run_as_cli(&mut e, file, text, &fifo);
    let throttled = runtime_ns(&r, "hog-a");
    assert!(
        fair > 900_000_000 && (90_000_000..=110_000_000).contains(&throttled),
        "hog-a ran {fair} ns, then {throttled} ns"
    );
    let d = e.start(file, text, None, &fifo);
    let prio = control(&d, "tasks.hog-b.rt_priority").unwrap();
    assert_eq!((prio["value"].as_u64(), prio["default"].as_u64(), prio.get("disabled")), (Some(50), Some(0), None));
    assert_eq!(control(&d, "tasks.hog-b.policy").unwrap()["value"], "\"fifo\"");
    // rr keeps the priority; normal again drops it: no override left.
    let rr = select_option(&d, &fifo, "tasks.hog-b.policy", "\"rr\"");
    assert_eq!(rr, "tasks.hog-b.policy=\"rr\"\ntasks.hog-b.rt_priority=50\n");
    assert_eq!(select_option(&d, &fifo, "tasks.hog-b.policy", "\"normal\""), "");
    assert_eq!(select_option(&d, &fifo, "tasks.hog-b.policy", "\"batch\""), "tasks.hog-b.policy=\"batch\"\n");
    // stop (hog-b is pinned to one CPU): no priority along; above every
    // class and never throttled, the spinner leaves hog-a nothing.
    let stop = select_option(&d, &fifo, "tasks.hog-b.policy", "\"stop\"");
    assert_eq!(stop, "tasks.hog-b.policy=\"stop\"\n");
    assert_eq!(runtime_ns(&run_as_cli(&mut e, file, text, &stop), "hog-a"), 0);
    // A priority out of range is the core's error, on that key.
    let r = e.start(file, text, None, &fifo.replace("=50", "=100"));
    assert_eq!(r["error"]["key"], "tasks.hog-b.rt_priority", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("100 is not an RT priority: 1 to 99"), "{r}");

    // deadline: 1 ms every 10 ms along (the period follows the deadline);
    // hog-b gets its 10 %, hog-a the rest.
    let dl = select_option(&d, &fifo, "tasks.hog-b.policy", "\"deadline\"");
    assert_eq!(
        dl,
        "tasks.hog-b.policy=\"deadline\"\ntasks.hog-b.dl_runtime=\"1ms\"\ntasks.hog-b.dl_deadline=\"10ms\"\n"
    );
    let r = run_as_cli(&mut e, file, text, &dl);
    let (a, b) = (runtime_ns(&r, "hog-a"), runtime_ns(&r, "hog-b"));
    assert!(a > 1_700_000_000 && (150_000_000..=250_000_000).contains(&b), "hog-a {a} ns, hog-b {b} ns");
    let d = e.start(file, text, None, &dl);
    assert_eq!(control(&d, "tasks.hog-b.rt_priority").unwrap()["disabled"], true);
    for (key, value) in [("dl_runtime", 1_000_000), ("dl_deadline", 10_000_000), ("dl_period", 10_000_000)] {
        let c = control(&d, &format!("tasks.hog-b.{key}")).unwrap_or_else(|| panic!("{key}: {d}"));
        // No default: the file gives none, so every position sends its value.
        assert_eq!(
            (c["kind"].as_str(), c["value"].as_u64(), c["default"].as_u64()),
            (Some("log-ns"), Some(value), Some(0))
        );
    }
    assert_eq!(select_option(&d, &dl, "tasks.hog-b.policy", "\"normal\""), "");
    assert_eq!(
        select_option(&d, &dl, "tasks.hog-b.policy", "\"rr\""),
        "tasks.hog-b.policy=\"rr\"\ntasks.hog-b.rt_priority=50\n"
    );
    let r = e.start(file, text, None, &dl.replace("\"1ms\"", "\"20ms\""));
    assert_eq!(r["error"]["key"], "tasks.hog-b.dl_runtime", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("runtime ≤ deadline ≤ period"), "{r}");
    // Two CPUs: a root domain the model cannot run EDF on, in the core's words.
    let r = e.start(file, text, None, &format!("{dl}machine.cpus=2"));
    assert_eq!(r["error"]["key"], "tasks.hog-b.cpus", "{r}");

    // A task the file makes fifo keeps an rt_priority: fifo or rr only;
    // a deadline task keeps its parameters: deadline only, its sliders'
    // defaults the file's.
    let rt_text = text.replace("name = \"hog-b\"\n", "name = \"hog-b\"\npolicy = \"fifo\"\nrt_priority = 10\n");
    let d = e.start(file, &rt_text, None, "");
    let policy = control(&d, "tasks.hog-b.policy").unwrap();
    assert_eq!(option_values(policy), ["\"fifo\"", "\"rr\""]);
    assert!(policy["options"].as_array().unwrap().iter().all(|o| o["also"] == json!([])), "{policy}");
    assert!(policy["help"].as_str().unwrap().contains("edit the scenario's text"), "{policy}");
    assert_eq!(option_values(control(&d, "tasks.hog-a.policy").unwrap()).len(), 7);
    assert_eq!(control(&d, "tasks.hog-b.rt_priority").unwrap()["default"], 10);
    let dl_text = text.replace(
        "name = \"hog-b\"\n",
        "name = \"hog-b\"\npolicy = \"deadline\"\ndl_runtime = \"2ms\"\ndl_deadline = \"5ms\"\ndl_period = \"20ms\"\n",
    );
    let d = e.start(file, &dl_text, None, "");
    assert_eq!(option_values(control(&d, "tasks.hog-b.policy").unwrap()), ["\"deadline\""]);
    assert_eq!(control(&d, "tasks.hog-b.dl_period").unwrap()["default"], 20_000_000);
    run_as_cli(&mut e, file, &dl_text, "tasks.hog-b.dl_runtime=\"4ms\"");
}

/// The RT sysctls under every model, `rt_group_sched` and the fair server
/// from 6.12 only (model-specific: the kernel selector drops them). The
/// RR slice is shown in the ms its ticks make, which sent back gives the
/// same ticks. With the fair server off (its slider's 0) a fifo hog starves
/// hog-a on 6.18, where RT throttling needs rt_group_sched.
#[test]
fn rt_sysctls_in_every_model_and_the_fair_server_from_6_12() {
    let (file, text) = ("two-hogs.toml", include_str!("../../../scenarios/two-hogs.toml"));
    let fifo = "tasks.hog-b.policy=\"fifo\"\ntasks.hog-b.rt_priority=50\n";
    let mut e = Explorer::default();
    let d = e.start(file, text, None, fifo);
    for (key, value, unit) in [
        ("rt.sched_rt_runtime_us", 950_000, "µs"),
        ("rt.sched_rt_period_us", 1_000_000, "µs"),
        ("rt.sched_rr_timeslice_ms", 100, "ms"),
    ] {
        let c = control(&d, key).unwrap_or_else(|| panic!("{key}: {d}"));
        assert_eq!(
            (c["value"].as_i64(), c["default"].as_i64(), c["unit"].as_str()),
            (Some(value), Some(value), Some(unit)),
            "{key}"
        );
        assert_eq!((c["section"].as_str(), c.get("model_specific")), (Some("RT and deadline"), None), "{key}");
    }
    assert!(control(&d, "fair_server.runtime").is_none() && control(&d, "rt.rt_group_sched").is_none(), "4.4");
    // 7 ms at HZ 300: 3 ticks, 10 ms.
    let d = e.start(file, text, None, "machine.hz=300\nrt.sched_rr_timeslice_ms=7");
    assert_eq!(control(&d, "rt.sched_rr_timeslice_ms").unwrap()["value"], 10);
    // No RT throttling (-1): hog-a never runs.
    let r = run_as_cli(&mut e, file, text, &format!("{fifo}rt.sched_rt_runtime_us=-1"));
    assert_eq!(runtime_ns(&r, "hog-a"), 0);
    for (sets, key) in [
        ("rt.sched_rt_runtime_us=1000001", "rt.sched_rt_runtime_us"),
        ("rt.sched_rt_period_us=0", "rt.sched_rt_period_us"),
        ("fair_server.runtime=\"10ms\"", "fair_server.runtime"),
        ("rt.rt_group_sched=true", "rt.rt_group_sched"),
    ] {
        let r = e.start(file, text, None, sets);
        assert_eq!(r["error"]["key"], key, "{sets}: {r}");
    }
    let r = e.start(file, text, None, "fair_server.runtime=\"10ms\"");
    assert!(r["error"]["message"].as_str().unwrap().contains("has no fair server"), "{r}");

    for version in ["6.12", "6.18"] {
        let kernel = format!("kernel.version=\"{version}\"\n");
        let d = e.start(file, text, None, &format!("{kernel}{fifo}"));
        let runtime = control(&d, "fair_server.runtime").unwrap_or_else(|| panic!("{version}: {d}"));
        assert_eq!((runtime["value"].as_u64(), runtime["default"].as_u64()), (Some(50_000_000), Some(50_000_000)));
        assert_eq!((runtime["zero"].as_str(), runtime["model_specific"].as_bool()), (Some("0 (off)"), Some(true)));
        let period = control(&d, "fair_server.period").unwrap();
        assert_eq!((period["value"].as_u64(), period["min"].as_u64()), (Some(1_000_000_000), Some(100_000)));
        let group = control(&d, "rt.rt_group_sched").unwrap();
        assert_eq!((group["value"].as_bool(), group["model_specific"].as_bool()), (Some(false), Some(true)));
        let r = e.start(file, text, None, &format!("{kernel}fair_server.runtime=\"2s\""));
        assert_eq!(r["error"]["key"], "fair_server.runtime", "{r}");
    }
    // The server's 50 ms per second keeps hog-a running; off, it starves.
    let kernel = "kernel.version=\"6.18\"\n";
    let served = runtime_ns(&run_as_cli(&mut e, file, text, &format!("{kernel}{fifo}")), "hog-a");
    assert!((90_000_000..=110_000_000).contains(&served), "hog-a ran {served} ns under the fair server");
    let off = format!("{kernel}{fifo}fair_server.runtime=\"0ms\"");
    assert_eq!(runtime_ns(&run_as_cli(&mut e, file, text, &off), "hog-a"), 0);
    let d = e.start(file, text, None, &off);
    assert_eq!(control(&d, "fair_server.runtime").unwrap()["value"], 0);
}

/// Compare from a 6.18 file: a variant on 4.4 or 6.6 runs without the
/// fair server and rt_group_sched overrides, with a note each; the 6.12
/// variant and the base take them.
#[test]
fn the_fair_server_is_not_applied_to_a_variant_before_6_12() {
    let text = include_str!("../../../scenarios/two-hogs.toml").replace("version = \"4.4\"", "version = \"6.18\"")
        + "\n[variants.old]\n\"kernel.version\" = \"4.4\"\n[variants.mid]\n\"kernel.version\" = \"6.6\"\n\
           [variants.new]\n\"kernel.version\" = \"6.12\"\n";
    let sets = "fair_server.runtime=\"100ms\"\nrt.rt_group_sched=true\nrt.sched_rt_runtime_us=900000";
    let mut e = Explorer::default();
    for (variant, model) in [("old", "Linux 4.4 (CFS)"), ("mid", "Linux 6.6 (EEVDF)")] {
        let d = e.start("t.toml", &text, Some(variant), sets);
        assert_eq!(
            d["ok"]["notes"],
            json!([
                format!("fair_server.runtime not in {model}: not applied"),
                format!("rt.rt_group_sched not in {model}: not applied")
            ]),
            "{d}"
        );
        assert_eq!(control(&d, "rt.sched_rt_runtime_us").unwrap()["value"], 900_000);
    }
    for variant in [None, Some("new")] {
        let d = e.start("t.toml", &text, variant, sets);
        assert_eq!(d["ok"]["notes"], json!([]), "{variant:?}: {d}");
        assert_eq!(control(&d, "fair_server.runtime").unwrap()["value"], 100_000_000);
    }
}

/// The shipped rt-hog.toml: the spinner (fifo in the file) is offered fifo
/// and rr only, its priority enabled; a variant's class is the select's
/// default (fifo-reactor, deadline-reactor); the fair server's controls
/// show each variant's values; Compare with a fair-server override runs
/// the 4.4 and 6.6 variants without it, with a note.
#[test]
fn rt_hog_offers_each_tasks_class_and_its_variants_fair_server() {
    let (file, text) = ("rt-hog.toml", include_str!("../../../scenarios/rt-hog.toml"));
    let mut e = Explorer::default();
    let d = e.start(file, text, None, "");
    assert_eq!(option_values(control(&d, "tasks.spinner.policy").unwrap()), ["\"fifo\"", "\"rr\""]);
    let prio = control(&d, "tasks.spinner.rt_priority").unwrap();
    assert_eq!((prio["value"].as_u64(), prio.get("disabled")), (Some(10), None));
    // One CPU: every task may be a stop task, the seventh option.
    assert_eq!(option_values(control(&d, "tasks.reactor.policy").unwrap()).len(), 7);
    assert_eq!(control(&d, "fair_server.runtime").unwrap()["value"], 50_000_000);
    let d = e.start(file, text, Some("fifo-reactor"), "");
    let policy = control(&d, "tasks.reactor.policy").unwrap();
    assert_eq!((policy["default"].as_str(), option_values(policy)), (Some("\"fifo\""), vec!["\"fifo\"", "\"rr\""]));
    let d = e.start(file, text, Some("deadline-reactor"), "");
    assert_eq!(control(&d, "tasks.reactor.dl_period").unwrap()["default"], 5_000_000);
    let d = e.start(file, text, Some("no-server"), "");
    let runtime = control(&d, "fair_server.runtime").unwrap();
    assert_eq!((runtime["value"].as_u64(), runtime["default"].as_u64()), (Some(0), Some(0)));
    let d = e.start(file, text, Some("small-server"), "");
    assert_eq!(control(&d, "fair_server.period").unwrap()["value"], 100_000_000);
    for (variant, notes) in [
        ("linux44", json!(["fair_server.runtime not in Linux 4.4 (CFS): not applied"])),
        ("rt-unlimited", json!(["fair_server.runtime not in Linux 6.6 (EEVDF): not applied"])),
        ("linux612", json!([])),
    ] {
        let d = e.start(file, text, Some(variant), "fair_server.runtime=\"100ms\"");
        assert_eq!(d["ok"]["notes"], notes, "{variant}: {d}");
    }
}

#[test]
fn the_band_runs_phase_by_phase_and_equals_run_bands() {
    let mut e = Explorer::default();
    assert!(e.band_start(4).is_err(), "no finished run");
    e.start("t.toml", TOML, None, "");
    while e.step(100_000) < 1.0 {}
    e.finish().unwrap();
    assert_eq!(e.band_start(1), Ok(1), "one phase: nothing more to run");
    assert!(e.band_start(0).unwrap_err().starts_with("--phases 0: allowed 1 to "));
    assert_eq!(e.band_start(4), Ok(4));
    let mut steps = vec![];
    loop {
        let p = e.band_step();
        steps.push(p);
        if p >= 1.0 {
            break;
        }
    }
    assert_eq!(steps, [0.5, 0.75, 1.0], "point 0 is the run shown; one phase per step");
    assert_eq!(e.band_step(), -1.0, "no band in progress");
    let s = Scenario::from_toml("t.toml", TOML).unwrap();
    let (_, b) = sim_core::run_bands(&s, &sim_core::BandPlan::new(4, 1).unwrap()).unwrap();
    let v = e.current().unwrap();
    assert_eq!(v.band, b.tasks.iter().find(|t| t.name == "s").unwrap().curve);
    assert_eq!((v.band.len(), v.band_points), (9, 4));
    assert!(v.band_caption.starts_with("Delay percentiles over 4 tick phases: median line, min–max shaded."));
    // The page takes the band from the worker's view into its own finished report.
    let mut page = Explorer::default();
    page.prepare("t.toml", TOML, None, "");
    let mut plain = v.clone();
    plain.band = Vec::new();
    plain.band_points = 0;
    assert!(page.load_view(&plain.to_json()));
    assert!(page.load_band(&v.to_json()));
    assert_eq!(page.current().unwrap().band, v.band);
    // A new run drops a band in progress.
    assert_eq!(e.band_start(4), Ok(4));
    e.start("t.toml", TOML, None, "");
    assert_eq!(e.band_step(), -1.0);
}

#[test]
fn the_caption_flags_a_wide_p99_or_max_as_phase_sensitive() {
    let stat = |stat, min_ns, max_ns, phase_sensitive| sim_core::StatBand {
        stat,
        base_ns: 100,
        own_phase_ns: 100,
        median_ns: 100,
        min_ns,
        max_ns,
        phase_sensitive,
        seed_sensitive: false,
    };
    let calm = band::caption(8, &[stat("p50", 10, 900, true), stat("p99", 90, 110, false)]);
    assert_eq!(calm, "Delay percentiles over 8 tick phases: median line, min–max shaded.");
    let wide = band::caption(8, &[stat("p99", 90, 110, false), stat("max", 40, 200, true)]);
    assert!(wide.ends_with(" phase-sensitive: max ±100 % (wider than ±25 %)."), "{wide}");
}
