//! Bad input gets an error naming the file, the key and what is allowed.

use sim_core::Scenario;

const GOOD: &str = r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "4.4"
[machine]
cpus = 2
[[tasks]]
name = "t"
program = [{ run = "1ms" }, { sleep = "1ms" }]
"#;

fn err(text: &str) -> String {
    Scenario::from_toml("bad.toml", text).map(|_| ()).unwrap_err().to_string()
}

/// Each case edits `GOOD` (replacing `from` by `to`) and expects a one-line
/// error containing every `wants` fragment.
fn assert_errors(cases: &[(&str, &str, &[&str])]) {
    for (from, to, wants) in cases {
        assert!(GOOD.contains(from), "fixture lacks {from}");
        let msg = err(&GOOD.replacen(from, to, 1));
        assert_eq!(msg.lines().count(), 1, "one line: {msg}");
        for w in *wants {
            assert!(msg.contains(w), "error for `{to}` lacks `{w}`: {msg}");
        }
    }
}

#[test]
fn errors_name_file_key_and_what_is_allowed() {
    assert!(Scenario::from_toml("good.toml", GOOD).is_ok());
    let cases: &[(&str, &str, &[&str])] = &[
        ("[machine]\ncpus = 2", "[machine]\ncpus = 2\nhz = 500", &["bad.toml", "machine.hz", "100, 250, 300 or 1000"]),
        ("duration = \"1s\"", "duration = \"1 fortnight\"", &["bad.toml", "duration", "unknown time unit"]),
        ("duration = \"1s\"", "duration = \"0s\"", &["duration", "positive"]),
        ("cpus = 2", "cpus = 1000000", &["machine.cpus", "1 to 4096"]),
        ("name = \"t\"", "name = \"t\"\nnice = 40", &["tasks.t.nice", "-20 to 19"]),
        ("name = \"t\"", "name = \"t\"\ncpus = \"5\"", &["tasks.t.cpus", "CPU 5 does not exist"]),
        ("name = \"t\"", "name = \"t\"\ncount = 1000000000", &["tasks.t.count", "1 to 100000"]),
        (
            "{ run = \"1ms\" }",
            "{ run = \"uniform(5ms, 1ms)\" }",
            &["tasks.t.program[0].run", "low must not exceed high"],
        ),
        ("{ run = \"1ms\" }", "{ jog = \"1ms\" }", &["tasks.t.program[0]", "run, sleep"]),
        ("seed = 1", "seed = 1\nsedd = 2", &["bad.toml", "unknown field `sedd`"]),
        ("[machine]", "[cfs]\nsched_latency_ns = \"50us\"\n[machine]", &["cfs.sched_latency_ns", "sysctl range"]),
        ("[machine]", "[features]\nFAST = true\n[machine]", &["features.FAST", "GENTLE_FAIR_SLEEPERS"]),
        ("seed = 1", "seed = \"one\"", &["seed", "invalid type"]),
    ];
    assert_errors(cases);
    let syntax = err("schema = 1\nseed = [");
    assert!(syntax.contains("bad.toml") && syntax.contains("TOML syntax error"), "{syntax}");
    assert_eq!(err(""), "bad.toml: missing field `schema`");
}

#[test]
fn override_errors_say_where_they_came_from() {
    let s = Scenario::from_toml("good.toml", GOOD).unwrap();
    let e = s.with_overrides(&[("cfs.sched_latency", "1ms")]).unwrap_err().to_string();
    assert!(e.contains("--set") && e.contains("cfs") && e.contains("unknown field `sched_latency`"), "{e}");
    let e = s.with_overrides(&[("tasks.nope.nice", "1")]).unwrap_err().to_string();
    assert!(e.contains("tasks.nope") && e.contains("names: t"), "{e}");
    let e = s.with_variant("fast").unwrap_err().to_string();
    assert!(e.contains("no variant `fast`"), "{e}");
    let bad_variant = format!("{GOOD}\n[variants.broken]\n\"machine.hz\" = 7\n");
    let e = Scenario::from_toml("v.toml", &bad_variant).unwrap_err().to_string();
    assert!(e.contains("v.toml") && e.contains("variant `broken`") && e.contains("machine.hz"), "{e}");
}

/// Group declarations and placements: bad paths, undeclared parents and
/// groups, negative shares, unknown sessions and models each name their key.
#[test]
fn group_errors_name_the_key() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("[machine]", "[groups.\"scylla\"]\n[machine]", &["bad.toml", "groups.\"scylla\"", "not a group path"]),
        ("[machine]", "[groups.\"/a//b\"]\n[machine]", &["groups.\"/a//b\"", "not a group path"]),
        ("[machine]", "[groups.\"/a/b\"]\n[machine]", &["groups.\"/a/b\"", "parent `/a` is not declared"]),
        ("[machine]", "[groups.\"/\"]\nshares = 5\n[machine]", &["groups.\"/\"", "root group is implicit"]),
        ("[machine]", "[groups.\"/a\"]\nshares = -1\n[machine]", &["groups.\"/a\".shares", "positive integer"]),
        ("[machine]", "[groups.\"/a\"]\nweight = 1\n[machine]", &["unknown field `weight`", "shares"]),
        ("[machine]", "[groups.\"/autogroup-x\"]\n[machine]", &["reserved for autogroups"]),
        ("name = \"t\"", "name = \"t\"\ngroup = \"/nope\"", &["tasks.t.group", "no group `/nope`", "groups: /"]),
        ("name = \"t\"", "name = \"t\"\nsession = \"a.b\"", &["tasks.t.session", "letters, digits"]),
        (
            "[machine]",
            "[autogroup]\nnice = { ghost = 1 }\n[machine]",
            &["autogroup.nice.ghost", "no task has this session"],
        ),
        ("[machine]", "[cfs]\ngroup_load = \"magic\"\n[machine]", &["cfs.group_load", "pelt, instantaneous"]),
    ];
    assert_errors(cases);
    // Shares are clamped as the kernel clamps them; overrides reach groups by
    // path, quoted when the path has dots.
    let grouped = GOOD.replacen("[machine]", "[groups.\"/sys.slice\"]\n[groups.\"/a\"]\nshares = 1\n[machine]", 1);
    let s = Scenario::from_toml("g.toml", &grouped).unwrap();
    assert_eq!(s.spec.groups.groups[1].shares, 2, "MIN_SHARES");
    let s = s.with_overrides(&[("groups.\"/sys.slice\".shares", "1000000"), ("tasks.t.group", "/a")]).unwrap();
    let sys = s.spec.groups.groups.iter().find(|g| g.path == "/sys.slice").unwrap();
    assert_eq!(sys.shares, 1 << 18, "MAX_SHARES");
    assert_eq!(s.spec.tasks[0].group, 1);
}

/// Devices, elevators, their tunables and I/O steps: each mistake names the
/// key and what is allowed.
#[test]
fn io_errors_name_the_key() {
    let dev = "[devices.sda]\nkind = \"hdd\"\n[machine]";
    let io = |step: &str| format!("program = [{step}, {{ run = \"1ms\" }}]");
    let prog = "program = [{ run = \"1ms\" }, { sleep = \"1ms\" }]";
    let with_dev = |extra: &str| format!("[devices.sda]\nkind = \"hdd\"\n{extra}\n[machine]");
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "[machine]",
            with_dev("elevator = \"anticipatory\""),
            vec!["bad.toml", "devices.sda.elevator", "noop, deadline, cfq"],
        ),
        (
            "[machine]",
            with_dev("kind = \"tape\"").replacen("kind = \"hdd\"\n", "", 1),
            vec!["devices.sda.kind", "ssd, hdd"],
        ),
        ("[machine]", with_dev("queue_depth = 0"), vec!["devices.sda.queue_depth", "1 to 4096"]),
        ("[machine]", with_dev("rpm = 100"), vec!["devices.sda.rpm", "3600 to 20000"]),
        ("[machine]", with_dev("write_latency = \"1ms\""), vec!["devices.sda.write_latency", "ssd"]),
        ("[machine]", with_dev("bandwidth = \"fast\""), vec!["devices.sda.bandwidth", "500MiB/s"]),
        ("[machine]", with_dev("cfq_behaviour = \"4.9\""), vec!["devices.sda.cfq_behaviour", "\"4.4\" or \"fixed\""]),
        (
            "[machine]",
            with_dev("[devices.sda.cfq]\nslice_idel = 8"),
            vec!["devices.sda.cfq.slice_idel", "allowed: quantum"],
        ),
        ("[machine]", with_dev("[devices.sda.cfq]\nslice_sync = 0"), vec!["devices.sda.cfq.slice_sync", "at least 1"]),
        ("[machine]", with_dev("[devices.sda.cfq]\nlow_latency = 2"), vec!["devices.sda.cfq.low_latency", "0 or 1"]),
        (
            "[machine]",
            with_dev("[devices.sda.deadline]\nfifo_batch = -1"),
            vec!["devices.sda.deadline.fifo_batch", "0 to 2147483647"],
        ),
        (
            "[machine]",
            with_dev("[devices.sda.deadline]\nread_expiry = 5"),
            vec!["devices.sda.deadline.read_expiry", "read_expire"],
        ),
        ("[machine]", with_dev("capacity = \"1KiB\""), vec!["devices.sda.capacity", "at least 1MiB"]),
        ("[machine]", with_dev("speed = 1"), vec!["unknown field `speed`"]),
        (prog, io("{ read = \"4KiB\" }"), vec!["tasks.t.program[0]", "needs a device"]),
    ];
    for (from, to, wants) in &cases {
        assert!(GOOD.contains(from), "fixture lacks {from}");
        let msg = err(&GOOD.replacen(from, to, 1));
        assert_eq!(msg.lines().count(), 1, "one line: {msg}");
        for w in wants {
            assert!(msg.contains(w), "error for `{to}` lacks `{w}`: {msg}");
        }
    }
    // Step errors, with one device declared.
    let good = GOOD.replacen("[machine]", dev, 1);
    assert!(Scenario::from_toml("good.toml", &good).is_ok());
    let steps: &[(&str, &[&str])] = &[
        ("{ read = \"4 parsecs\" }", &["tasks.t.program[0].read", "unknown size unit"]),
        ("{ read = 4096 }", &["tasks.t.program[0].read", "\"4KiB\""]),
        ("{ read = \"4KiB\", sync = false }", &["tasks.t.program[0].sync", "always synchronous"]),
        ("{ write = \"4KiB\", depth = 4 }", &["tasks.t.program[0].depth", "wait = false"]),
        ("{ write = \"4KiB\", wait = false, depth = 0 }", &["tasks.t.program[0].depth", "1 to 4096"]),
        ("{ write = \"4KiB\", device = \"sdb\" }", &["tasks.t.program[0].device", "no device named `sdb`", "sda"]),
        ("{ write = \"4KiB\", pattern = \"zigzag\" }", &["tasks.t.program[0].pattern", "sequential"]),
        ("{ write = \"4KiB\", colour = 1 }", &["tasks.t.program[0].colour", "allowed: device"]),
        ("{ write = \"128MiB\" }", &["tasks.t.program[0].write", "1 byte to 64 MiB"]),
        ("{ write = \"4KiB\", offset = \"3TiB\" }", &["tasks.t.program[0].span", "within the device"]),
        ("{ read = \"4KiB\", write = \"4KiB\" }", &["tasks.t.program[0]", "exactly one of"]),
        ("{ wait_io = \"nobody\" }", &["tasks.t.program[0].wait_io", "no task named `nobody`"]),
    ];
    for (step, wants) in steps {
        let text = good.replacen(prog, &io(step), 1);
        assert_ne!(text, good, "fixture lacks the program");
        let msg = err(&text);
        assert_eq!(msg.lines().count(), 1, "one line: {msg}");
        for w in *wants {
            assert!(msg.contains(w), "error for `{step}` lacks `{w}`: {msg}");
        }
    }
}

/// Messages name a task as `--set` addresses it (`tasks.NAME.key`), say that
/// durations cannot be negative (not that `-5ms` has an unknown unit), list
/// the tick rates for a word (not serde's "expected u64"), and suggest the
/// nearest step or key for a typo.
#[test]
fn messages_name_tasks_and_suggest_fixes() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("duration = \"1s\"", "duration = \"-5ms\"", &["bad.toml: duration: `-5ms`: durations cannot be negative"]),
        ("duration = \"1s\"", "duration = -5", &["bad.toml: duration: -5: durations cannot be negative"]),
        (
            "{ sleep = \"1ms\" }",
            "{ sleep = \"uniform(-1ms, 2ms)\" }",
            &["tasks.t.program[1].sleep: ", "cannot be negative"],
        ),
        (
            "[machine]\ncpus = 2",
            "[machine]\ncpus = 2\nhz = \"fast\"",
            &["bad.toml: machine.hz: ", "found string \"fast\"", "100, 250, 300 or 1000"],
        ),
        ("{ sleep = \"1ms\" }", "\"wiat\"", &["tasks.t.program[1]: `wiat` is not a step (did you mean `wait`?)"]),
        (
            "{ sleep = \"1ms\" }",
            "{ sleep_untl = \"1ms\" }",
            &["tasks.t.program[1].sleep_untl: `sleep_untl` is not a step (did you mean `sleep_until`?)", "run, sleep"],
        ),
        ("{ sleep = \"1ms\" }", "{ jog = \"1ms\" }", &["tasks.t.program[1].jog: `jog` is not a step;"]),
        (
            "name = \"t\"",
            "name = \"t\"\nnicee = 1",
            &["tasks.t.nicee: unknown field `nicee`", "(did you mean `nice`?)"],
        ),
        ("cpus = 2", "cpus = \"two\"", &["machine.cpus: ", "expected an integer of 0 or more"]),
    ];
    assert_errors(cases);
    // No suggestion for a word far from every step.
    assert!(!err(&GOOD.replacen("{ sleep = \"1ms\" }", "{ jog = \"1ms\" }", 1)).contains("did you mean"));
    // The key of a message is the `--set` path of the value to fix.
    let base = Scenario::from_toml("good.toml", GOOD).unwrap();
    let e = base.with_overrides(&[("tasks.t.nice", "40")]).unwrap_err();
    assert_eq!(e.key(), "tasks.t.nice");
    assert!(base.with_overrides(&[(e.key(), "5")]).is_ok());
    let two = GOOD.replacen(
        "[[tasks]]",
        "[[tasks]]\nname = \"first\"\nprogram = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n[[tasks]]",
        1,
    );
    let e = err(&two.replacen("name = \"t\"", "name = \"t\"\nnice = 40", 1));
    assert!(e.contains("tasks.t.nice: 40") && !e.contains("tasks[1]"), "{e}");
}

#[test]
fn machine_topology_keys_validate_and_overrides_revalidate() {
    let topo = GOOD.replacen(
        "cpus = 2",
        "sockets = 2\ncores_per_socket = 4\nthreads_per_core = 2\nnuma_nodes = 2\nisolcpus = \"2-3\"",
        1,
    );
    let s = Scenario::from_toml("topo.toml", &topo).unwrap();
    assert_eq!(s.spec.cpus, 16);
    assert_eq!(
        s.spec.machine.describe(),
        "2 sockets x 4 cores x 2 threads = 16 CPUs, 2 NUMA nodes, isolcpus 2-3, nohz idle"
    );
    // A task without `cpus` gets every CPU but the isolated ones (4.4 sched_init_smp: non_isolated_cpus).
    let aff: Vec<u16> = s.spec.tasks[0].affinity[0].iter().map(|c| c.0).collect();
    assert_eq!(aff, [0, 1].into_iter().chain(4..16).collect::<Vec<_>>());
    // A task may still name isolated CPUs (taskset).
    let pinned = s.with_overrides(&[("tasks.t.cpus", "2-3")]).unwrap();
    assert_eq!(pinned.spec.tasks[0].affinity[0].iter().map(|c| c.0).collect::<Vec<_>>(), vec![2, 3]);

    // Overriding the topology goes through validation again.
    let wider = s.with_overrides(&[("machine.sockets", "4")]).unwrap();
    assert_eq!(wider.spec.cpus, 32);
    assert_eq!(wider.spec.machine.shape.numa_nodes, 2);
    let e = s.with_overrides(&[("machine.numa_nodes", "3")]).unwrap_err().to_string();
    assert!(e.contains("--set: machine.numa_nodes: 3 does not divide sockets = 2"), "{e}");
    let e = s.with_overrides(&[("machine.cpus", "8")]).unwrap_err().to_string();
    assert!(e.contains("machine.cpus: cpus = 8") && e.contains("= 16"), "{e}");
    let e = s.with_overrides(&[("machine.isolcpus", "0-15")]).unwrap_err().to_string();
    assert!(e.contains("machine.isolcpus") && e.contains("isolates every CPU"), "{e}");

    // From a plain `cpus = 2`: the topology keys default around it.
    let base = Scenario::from_toml("good.toml", GOOD).unwrap();
    assert_eq!(base.spec.machine.describe(), "1 socket x 2 cores x 1 thread = 2 CPUs, 1 NUMA node, nohz idle");
    let smt = base.with_overrides(&[("machine.threads_per_core", "2"), ("machine.nohz", "false")]).unwrap();
    assert_eq!(smt.spec.machine.describe(), "1 socket x 1 core x 2 threads = 2 CPUs, 1 NUMA node, periodic tick");
    let iso = base.with_overrides(&[("machine.isolcpus", "1")]).unwrap();
    assert_eq!(iso.spec.tasks[0].affinity[0].iter().map(|c| c.0).collect::<Vec<_>>(), vec![0]);
    assert!(base.with_overrides(&[("machine.sockets", "3")]).unwrap_err().to_string().contains("split evenly"));
}

/// Shapes the kernel model cannot express are refused with the shapes it
/// can: clusters that do not split a socket's cores evenly, and clusters
/// under 4.4, whose sched domains have no CLS level (x86 builds it since
/// 5.16); the error names the model and the versions that have one.
#[test]
fn cluster_shapes_are_refused_where_the_model_cannot_build_them() {
    let six =
        GOOD.replacen("version = \"4.4\"", "version = \"6.12\"", 1).replacen("cpus = 2", "cores_per_socket = 8", 1);
    let s = Scenario::from_toml("c.toml", &six).unwrap();
    let clustered = s.with_overrides(&[("machine.clusters_per_socket", "2")]).unwrap();
    assert_eq!(clustered.spec.machine.shape.clusters_per_socket, Some(2));
    assert_eq!(
        clustered.spec.machine.describe(),
        "1 socket x 8 cores in 2 clusters x 1 thread = 8 CPUs, 1 NUMA node, nohz idle"
    );
    // SMT inside a cluster is what x86 builds: allowed.
    assert!(clustered.with_overrides(&[("machine.threads_per_core", "2")]).is_ok());
    for k in ["3", "0", "16"] {
        let e = s.with_overrides(&[("machine.clusters_per_socket", k)]).unwrap_err().to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains(&format!(
                "c.toml: --set: machine.clusters_per_socket: {k} does not divide cores_per_socket = 8"
            )) && e.contains("allowed: 1, 2, 4, 8"),
            "{e}"
        );
    }
    // Cores derived from `cpus` are checked the same way.
    let e = err(&GOOD.replacen("version = \"4.4\"", "version = \"6.18\"", 1).replacen(
        "cpus = 2",
        "cpus = 12\nsockets = 2\nclusters_per_socket = 4",
        1,
    ));
    assert!(
        e.contains("machine.clusters_per_socket: 4 does not divide cores_per_socket = 6") && e.contains("1, 2, 3, 6"),
        "{e}"
    );
    // Under 4.4, in the file or by switching the model of a clustered scenario.
    let e = err(&GOOD.replacen("cpus = 2", "cpus = 2\nclusters_per_socket = 1", 1));
    assert!(
        e.contains("bad.toml: machine.clusters_per_socket: the Linux 4.4 (CFS) model has no cluster (CLS)")
            && e.contains("kernel.version \"6.6\", \"6.12\", \"6.18\""),
        "{e}"
    );
    let e = clustered.with_overrides(&[("kernel.version", "4.4")]).unwrap_err().to_string();
    assert!(e.contains("machine.clusters_per_socket: the Linux 4.4 (CFS) model"), "{e}");
}

/// Feature bits of one balancer are refused under the other, naming the
/// model; the model's own balancer features are named as not offered as
/// switches (they run at the kernel's defaults).
#[test]
fn balancer_features_are_refused_under_the_other_balancer() {
    let under = |version: &str, feature: &str| {
        err(&GOOD.replacen("version = \"4.4\"", &format!("version = \"{version}\""), 1).replacen(
            "[machine]",
            &format!("[features]\n{feature} = false\n[machine]"),
            1,
        ))
    };
    let e = under("6.18", "LB_BIAS");
    assert!(
        e.contains("bad.toml: features.LB_BIAS: a load-balancer feature of Linux 4.4 only, not in the Linux 6.18 (EEVDF) model's balancer")
            && e.contains("PLACE_LAG"),
        "{e}"
    );
    for f in ["WA_IDLE", "SIS_UTIL", "UTIL_EST"] {
        let e = under("4.4", f);
        assert!(
            e.contains(&format!("features.{f}: a load-balancer feature of Linux 6.6, 6.12, 6.18 only, not in the Linux 4.4 (CFS) model's balancer"))
                && e.contains("GENTLE_FAIR_SLEEPERS"),
            "{e}"
        );
    }
    let e = under("6.12", "SIS_PROP");
    assert!(
        e.contains("features.SIS_PROP: a load-balancer feature of Linux 6.6 only, not in the Linux 6.12 (EEVDF)"),
        "{e}"
    );
    let e = under("6.6", "WA_WEIGHT");
    assert!(
        e.contains(
            "a load-balancer feature of the Linux 6.6 (EEVDF) model, which this build runs as the kernel's default"
        ),
        "{e}"
    );
    let e = under("4.4", "CACHE_HOT_BUDDY");
    assert!(e.contains("a load-balancer feature of the Linux 4.4 (CFS) model"), "{e}");
}

/// A key path of 30,000 segments, in a variant or in `--set`, and arrays or
/// inline tables nested 30,000 deep, are refused with one line; none of them
/// overflows the stack (once every command that loaded such a file aborted).
/// Run on a 256 KiB stack, so a recursion on the user's depth would abort.
#[test]
fn deep_key_paths_and_nesting_are_refused_not_overflowing() {
    let worker = std::thread::Builder::new().stack_size(256 * 1024).spawn(|| {
        let deep = vec!["a"; 30_000].join(".");
        let file = format!("{GOOD}\n[variants.deep]\n\"{deep}\" = 1\n");
        let e = Scenario::from_toml("v.toml", &file).unwrap_err().to_string();
        assert!(e.contains("v.toml: variant `deep`") && e.contains("more than 16 segments") && e.len() < 400, "{e}");
        let s = Scenario::from_toml("good.toml", GOOD).unwrap();
        let e = s.with_overrides(&[(deep.as_str(), "1")]).unwrap_err().to_string();
        assert!(e.contains("--set") && e.contains("more than 16 segments") && e.len() < 400, "{e}");
        let e = Scenario::from_toml_with("good.toml", GOOD, &[(deep.as_str(), "1")]).unwrap_err().to_string();
        assert!(e.contains("more than 16 segments"), "{e}");
        for (open, close) in [("[", "]"), ("{a=", "}"), ("[{a=", "}]")] {
            let nested = format!("{}1{}", open.repeat(30_000), close.repeat(30_000));
            let e = err(&GOOD.replacen("seed = 1", &format!("x = {nested}\nseed = 1"), 1));
            assert!(e.contains("nested deeper than 32 levels") && e.lines().count() == 1, "{e}");
            let e = s.with_overrides(&[("seed", nested.as_str())]).unwrap_err().to_string();
            assert!(e.contains("deeper than 32 levels") && e.len() < 400, "{e}");
        }
        let e = err(&GOOD.replacen("seed = 1", &format!("{deep} = 1\nseed = 1"), 1));
        assert!(e.contains("nested deeper than 32 levels"), "{e}");
        let e = err(&GOOD.replacen("[machine]", &format!("[{deep}]\n[machine]"), 1));
        assert!(e.contains("nested deeper than 32 levels"), "{e}");
    });
    worker.unwrap().join().expect("refused without overflowing a 256 KiB stack");
}

const K8S: &str = r#"
schema = 1
seed = 1
duration = "1s"
[kernel]
version = "6.18"
[machine]
cpus = 2
[groups."/kubepods"]
[groups."/kubepods/pod-api"]
"cpu.max" = "50000 100000"
[devices.sda]
kind = "ssd"
[[tasks]]
name = "t"
group = "/kubepods/pod-api"
program = [{ run = "1ms" }, { sleep = "1ms" }]
"#;

/// A misspelt group, device, limiter or I/O queue in `--set` (and so in a
/// sweep, which goes through the same overrides) is an error naming the
/// ones the file has, not a new, empty object.
#[test]
fn set_cannot_create_named_objects() {
    let s = Scenario::from_toml("k.toml", K8S).unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        (
            r#"groups."/kubepods/pod-apl"."cpu.max""#,
            "max",
            &[
                "k.toml: --set: groups.\"/kubepods/pod-apl\": no group `/kubepods/pod-apl`",
                "did you mean `/kubepods/pod-api`",
            ],
        ),
        ("devices.sdb.elevator", "noop", &["devices.sdb: no device `sdb`", "did you mean `sda`", "device: sda"]),
        ("limiters.backup.floor", "0.3", &["limiters.backup", "this file declares no limiter"]),
        ("io_queues.disk.policy", "none", &["io_queues.disk", "declares no I/O queue"]),
        ("groups", "{ \"/new\" = { shares = 5 } }", &["groups.\"/new\"", "no group `/new`"]),
    ];
    for (key, value, wants) in cases {
        let e = s.with_overrides(&[(key, value)]).unwrap_err().to_string();
        for w in *wants {
            assert!(e.contains(w), "--set {key}={value}: lacks `{w}`: {e}");
        }
    }
    // The real pod's quota is changed through its own name.
    let lifted = s.with_overrides(&[(r#"groups."/kubepods/pod-api"."cpu.max""#, "max")]).unwrap();
    assert_ne!(lifted.spec, s.spec);
    // A sweep checks every point through the same code.
    let grid = sim_core::sweep::Grid::new(vec![
        sim_core::sweep::Axis::parse(r#"groups."/kubepods/pod-apl"."cpu.max"="max","20000 100000""#).unwrap(),
    ])
    .unwrap();
    let e = sim_core::sweep::validate(&s, &grid).unwrap_err().to_string();
    assert!(e.contains("no group `/kubepods/pod-apl`"), "{e}");
}

/// `--set` applies before anything is validated: a file written before the
/// kernel selector (no `[kernel]`, 4.4 tunables in a variant) loads with
/// `--set kernel.version=4.4`, and without it says how to fix the file.
#[test]
fn set_applies_before_validation() {
    let old =
        GOOD.replace("[kernel]\nversion = \"4.4\"\n", "") + "[variants.tight]\n\"cfs.sched_latency_ns\" = \"3ms\"\n";
    let e = Scenario::from_toml("old.toml", &old).unwrap_err().to_string();
    assert!(e.contains("old.toml: variant `tight`: cfs.sched_latency_ns"), "{e}");
    assert!(e.contains("add [kernel] version = \"4.4\" to the file"), "{e}");
    let s = Scenario::from_toml_with("old.toml", &old, &[("kernel.version", "4.4")]).unwrap();
    let tight = s.with_variant("tight").unwrap();
    assert_eq!(tight.spec.tunables.sched_latency_ns, 3_000_000);
    assert_eq!(tight.spec.kernel.version(), "4.4");
    // A mistake of the --set is blamed on it, one of the file on the file.
    let e = Scenario::from_toml_with("g.toml", GOOD, &[("machine.hz", "7")]).unwrap_err().to_string();
    assert!(e.contains("g.toml: --set: machine.hz"), "{e}");
    let bad = GOOD.replace("cpus = 2", "cpus = 2\nhz = 7");
    let e = Scenario::from_toml_with("g.toml", &bad, &[("seed", "3")]).unwrap_err().to_string();
    assert!(e.starts_with("g.toml: machine.hz"), "{e}");
    // The other way round: a 4.4 file whose variant sets a 4.4 tunable runs
    // its base under `--set kernel.version=6.18`; the variant the override
    // breaks is refused when it is chosen, blamed on the --set.
    let file44 = GOOD.to_string() + "[variants.tight]\n\"cfs.sched_latency_ns\" = \"3ms\"\n";
    let s = Scenario::from_toml_with("f.toml", &file44, &[("kernel.version", "6.18")]).unwrap();
    assert_eq!(s.spec.kernel.version(), "6.18");
    let e = s.with_variant("tight").unwrap_err().to_string();
    assert!(e.contains("f.toml: --set: cfs.sched_latency_ns: does not exist in the Linux 6.18"), "{e}");
    // A variant broken as written is still refused at load, --set or not.
    let broken = GOOD.to_string() + "[variants.bad]\n\"machine.hz\" = 7\n";
    let e = Scenario::from_toml_with("b.toml", &broken, &[("seed", "3")]).unwrap_err().to_string();
    assert!(e.contains("b.toml: variant `bad`: machine.hz"), "{e}");
}

/// One key twice in one batch of `--set`s (any spelling) is refused; a later
/// batch (a later call) may replace an earlier one's key.
#[test]
fn one_key_twice_is_refused_in_a_batch() {
    let s = Scenario::from_toml("good.toml", GOOD).unwrap();
    let e = s.with_overrides(&[("seed", "2"), ("seed", "3")]).unwrap_err().to_string();
    assert!(e.contains("--set: seed: set twice"), "{e}");
    let e =
        s.with_overrides(&[("kernel.version", "4.4"), ("kernel", "{ version = \"6.18\" }")]).unwrap_err().to_string();
    assert!(e.contains("set twice, as `kernel.version=4.4` and as `kernel={ version = \"6.18\" }`"), "{e}");
    let later = s.with_overrides(&[("seed", "2")]).unwrap().with_overrides(&[("seed", "3")]).unwrap();
    assert_eq!(later.spec.seed, 3);
}

/// Messages about keys: the index range of a list, a file without variants,
/// key paths quoted as `--set` needs them, and user text echoed bounded and
/// with control characters escaped.
#[test]
fn key_messages_are_exact_bounded_and_inert() {
    let s = Scenario::from_toml("good.toml", GOOD).unwrap();
    let e = s.with_overrides(&[("tasks.t.program.5.run", "1ms")]).unwrap_err().to_string();
    assert!(e.contains("tasks.t.program.5: no entry `5` in `tasks.t.program`; its entries are numbered 0..=1"), "{e}");
    let e = s.with_variant("fast").unwrap_err().to_string();
    assert!(e.ends_with("no variant `fast`; this file has no variants"), "{e}");
    let grouped = GOOD.replacen("[machine]", "[groups.\"/g\"]\n[machine]", 1);
    let g = Scenario::from_toml("g.toml", &grouped).unwrap();
    let e = g.with_overrides(&[(r#"groups."/g"."cpu.max.burst""#, "\"x\"")]).unwrap_err().to_string();
    assert!(e.contains(r#"groups."/g"."cpu.max.burst""#), "{e}");
    // A 3 MB unknown key and a 309-digit number are echoed cut short.
    let huge = "k".repeat(3_000_000);
    let e = s.with_overrides(&[(huge.as_str(), "1")]).unwrap_err().to_string();
    assert!(e.len() < 1000 && e.contains("(3000000 bytes)"), "{}", e.len());
    let e = err(&GOOD.replacen("seed = 1", &format!("seed = 1\n{huge} = 1"), 1));
    assert!(e.len() < 1000 && e.contains("(3000000 bytes)"), "{}", e.len());
    let digits = "9".repeat(309);
    let e = s.with_overrides(&[("tasks.t.nice", digits.as_str())]).unwrap_err().to_string();
    assert!(e.len() < 1000, "{e}");
    // Escape sequences in a value, a key or a name are shown, not obeyed.
    for (key, value) in [("name", "\"\\u001b]0;pwned\\u0007\""), ("tasks.t.name", "\"\\u001b[2J\""), ("a\u{1b}b", "1")]
    {
        let e = s.with_overrides(&[(key, value)]).unwrap_err().to_string();
        assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
        assert!(e.contains("U+001B") || e.contains("\\u{1b}"), "{e}");
    }
}
