//! Value errors name the file, the key as `--set` spells it, the value the
//! user wrote and what is allowed; values a model can run are accepted; the
//! elevators a device can have follow `[kernel] version`.

use sim_core::Scenario;

/// A scenario of one task `t` on 2 CPUs under `kernel`, with `task` lines
/// added to the task, and `tail` (tables) after it.
fn scenario(kernel: &str, task: &str, tail: &str) -> String {
    format!(
        "schema = 1\nseed = 1\nduration = \"100ms\"\n[kernel]\n{kernel}\n[machine]\ncpus = 2\n\
         [[tasks]]\nname = \"t\"\n{task}\n{tail}\n"
    )
}

const RUN: &str = "program = [{ run = \"1ms\" }, { sleep = \"1ms\" }]";

fn with_tail(tail: &str) -> String {
    scenario("version = \"6.18\"", RUN, tail)
}

fn error(text: &str) -> String {
    match Scenario::from_toml("v.toml", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// (scenario, fragments the one-line error must contain, fragments it must not).
type Case = (String, Vec<&'static str>, Vec<&'static str>);

#[test]
fn bad_values_are_named_with_the_key_and_what_is_allowed() {
    let v618 = "version = \"6.18\"";
    let v44 = "version = \"4.4\"";
    let huge = format!("1{}", "0".repeat(308));
    let cases: Vec<Case> = vec![
        (
            scenario(v618, RUN, "[devices.sda]\nelevator = \"noop\""),
            vec!["devices.sda.elevator", "`noop`", "Linux 6.18", "removed in 5.0", "none, mq-deadline, kyber, bfq"],
            vec![],
        ),
        (
            scenario(v618, RUN, "[devices.sda]\nelevator = \"cfq\""),
            vec!["devices.sda.elevator", "`cfq`", "has: none, mq-deadline, kyber, bfq", "kernel.version = \"4.4\""],
            vec![],
        ),
        (
            scenario(v44, RUN, "[devices.sda]\nelevator = \"mq-deadline\""),
            vec!["devices.sda.elevator", "`mq-deadline`", "Linux 4.4", "has: noop, deadline, cfq", "\"6.18\""],
            vec![],
        ),
        (
            scenario(v44, RUN, "[devices.sda]\nelevator = \"anticipatory\""),
            vec!["devices.sda.elevator", "unknown elevator `anticipatory`", "noop, deadline, cfq"],
            vec![],
        ),
        (
            scenario("version = \"6.18\"\ncfs_bandwidth = \"5.14\"", RUN, ""),
            vec!["kernel.cfs_bandwidth", "\"5.14\"", "\"6.6\", \"6.12\", \"6.18\""],
            vec![],
        ),
        (
            scenario("version = \"4.4\"\ncfs_bandwidth = \"6.6\"", RUN, ""),
            vec!["kernel.cfs_bandwidth", "\"6.6\"", "\"4.4\", \"4.18\", \"5.4\", \"5.14\""],
            vec![],
        ),
        (scenario("version = 6.12", RUN, ""), vec!["kernel.version", "6.12", "write it as a string: \"6.12\""], vec![]),
        (
            scenario("version = \"4.4\"\ncfs_bandwidth = 5.4", RUN, ""),
            vec!["kernel.cfs_bandwidth", "5.4", "write it as a string: \"5.4\""],
            vec![],
        ),
        (
            scenario(v618, &format!("slice = \"exp(1ms)\"\n{RUN}"), ""),
            vec!["tasks.t.slice", "exp(1ms)", "not a distribution"],
            vec!["unit `"],
        ),
        (
            scenario(v618, "program = [{ run = \"1ms\", enter_kernel_every = \"exp(10us)\" }]", ""),
            vec!["tasks.t.program[0].enter_kernel_every", "exp(10us)", "not a distribution"],
            vec!["unit `"],
        ),
        (scenario(v618, &format!("cpus = -1\n{RUN}"), ""), vec!["tasks.t.cpus", "`-1`", "0-1"], vec!["``"]),
        (scenario(v618, &format!("cpus = \"0-\"\n{RUN}"), ""), vec!["tasks.t.cpus", "`0-`", "0-1"], vec!["``"]),
        (
            scenario(v618, RUN, "[limiters.l]\nwatch = [\"t\"]\nfloor = 4e-7"),
            vec!["limiters.l.floor", "0.0000004", "0 to 1"],
            vec!["0 would stop"],
        ),
        (
            scenario(v618, RUN, "[limiters.l]\nwatch = [\"t\"]\nfloor = 0.0"),
            vec!["limiters.l.floor", "0 is not allowed", "at least 0.000001"],
            vec![],
        ),
        (
            scenario(v618, RUN, "[limiters.l]\nwatch = [\"t\"]\ngrant = \"1ns\""),
            vec!["limiters.l.grant", "\"1ns\"", "1us to 10s"],
            vec![],
        ),
        (
            scenario(v618, RUN, "[limiters.l]\nwatch = [\"t\"]\ngrant = 999"),
            vec!["limiters.l.grant", "999", "1us to 10s"],
            vec![],
        ),
        (
            scenario(
                v618,
                RUN,
                "[devices.sda]\n[io_queues.q]\ndevice = \"sda\"\nread_iops = 1000\nwrite_iops = 1000\n\
                 read_bandwidth = \"100MiB/s\"\nwrite_bandwidth = \"100MiB/s\"\ntask_quota = \"0ns\"\n\
                 [io_queues.q.classes.c]\nshares = 1",
            ),
            vec!["io_queues.q.task_quota", "\"0ns\"", "10us to 100ms"],
            vec![],
        ),
        (
            scenario(v618, "program = [{ read = \"-4KiB\" }, { run = \"1ms\" }]", "[devices.sda]"),
            vec!["tasks.t.program[0].read", "-4KiB", "sizes cannot be negative"],
            vec!["unit `"],
        ),
        (
            scenario(v618, &format!("program = [{{ run = \"{huge}ms\" }}]"), ""),
            vec!["tasks.t.program[0].run", "out of range (allowed: 0 to 86400 s"],
            vec![],
        ),
        (
            scenario(v618, RUN, &format!("[devices.sda]\ncapacity = \"{huge}B\"")),
            vec!["devices.sda.capacity", "out of range (allowed: 0 to"],
            vec![],
        ),
        (
            scenario(v618, "program = [{ run = \"1ms\", enter_kernel_every = \"10ns\" }]", ""),
            vec!["tasks.t.program[0].enter_kernel_every", "\"10ns\"", "1us to"],
            vec![],
        ),
        (
            scenario(v618, &format!("cpus = \"{huge}\"\n{RUN}"), ""),
            vec!["tasks.t.cpus", "out of range (allowed: 0-1)"],
            vec![],
        ),
    ];
    let mut failures = Vec::new();
    for (text, wants, not) in &cases {
        let msg = error(text);
        if msg.lines().count() != 1 || !msg.starts_with("v.toml: ") {
            failures.push(format!("not one line naming the file: {msg}"));
        }
        for w in wants {
            if !msg.contains(w) {
                failures.push(format!("lacks `{w}`: {msg}"));
            }
        }
        for n in not {
            if msg.contains(n) {
                failures.push(format!("has `{n}`: {msg}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_model_accepts_the_bandwidth_rules_it_runs() {
    for (kernel, rules) in [
        ("6.18", "6.18"),
        ("6.18", "6.12"),
        ("6.18", "6.6"),
        ("6.12", "6.12"),
        ("6.6", "6.6"),
        ("4.4", "4.4"),
        ("4.4", "5.14"),
    ] {
        let text = scenario(&format!("version = \"{kernel}\"\ncfs_bandwidth = \"{rules}\""), RUN, "");
        let s = Scenario::from_toml("v.toml", &text).unwrap_or_else(|e| panic!("{kernel}/{rules}: {e}"));
        assert_eq!(s.spec.kernel.version(), kernel);
    }
}

#[test]
fn versions_set_bare_keep_their_text() {
    let s = Scenario::from_toml("v.toml", &with_tail("")).unwrap();
    let t = s.with_overrides(&[("kernel.version", "6.12")]).expect("a bare version from --set");
    assert_eq!(t.spec.kernel.version(), "6.12");
    let t = s.with_overrides(&[("kernel.version", "4.4"), ("kernel.cfs_bandwidth", "5.4")]).expect("bare");
    assert_eq!(t.spec.bandwidth_rules.version(), "5.4");
    // 6.10 is not read as the float 6.1.
    let e = s.with_overrides(&[("kernel.version", "6.10")]).unwrap_err().to_string();
    assert!(e.contains("\"6.10\""), "{e}");
}

#[test]
fn default_elevators_follow_the_kernel() {
    let elevator = |kernel: &str, device: &str| {
        let text = scenario(&format!("version = \"{kernel}\""), RUN, &format!("[devices.sda]\n{device}"));
        let s = Scenario::from_toml("v.toml", &text).unwrap_or_else(|e| panic!("{kernel} {device}: {e}"));
        s.spec.devices[0].elevator.name()
    };
    // 4.4: CONFIG_DEFAULT_IOSCHED; 6.x: elevator_get_default / elevator_set_default.
    assert_eq!(elevator("4.4", ""), "cfq");
    for k in ["6.6", "6.12", "6.18"] {
        assert_eq!(elevator(k, ""), "mq-deadline", "{k}");
        assert_eq!(elevator(k, "nr_hw_queues = 1"), "mq-deadline", "{k}");
        assert_eq!(elevator(k, "nr_hw_queues = 4"), "none", "{k}");
        assert_eq!(elevator(k, "elevator = \"bfq\""), "bfq", "{k}");
    }
    assert_eq!(elevator("4.4", "elevator = \"noop\""), "noop");
    // A variant switching the kernel must switch the elevator too.
    let text = scenario(
        "version = \"4.4\"",
        RUN,
        "[devices.sda]\nelevator = \"cfq\"\n[variants.new]\n\"kernel.version\" = \"6.18\"",
    );
    let e = Scenario::from_toml("v.toml", &text).unwrap_err().to_string();
    assert!(e.contains("variant `new`") && e.contains("devices.sda.elevator") && e.contains("`cfq`"), "{e}");
}

#[test]
fn the_group_limit_does_not_count_the_root() {
    use sim_core::scenario::groups::limits::GROUPS_MAX;
    let groups = |n: usize| (0..n).map(|i| format!("[groups.\"/g{i}\"]\n")).collect::<String>();
    let text = with_tail(&groups(GROUPS_MAX));
    let s = Scenario::from_toml("v.toml", &text).unwrap_or_else(|e| panic!("{GROUPS_MAX} groups: {e}"));
    assert_eq!(s.spec.groups.groups.len(), GROUPS_MAX + 1, "declared groups and the root");
    let e = error(&with_tail(&groups(GROUPS_MAX + 1)));
    assert!(e.contains("groups") && e.contains(&format!("{} groups", GROUPS_MAX + 1)) && e.contains("10000"), "{e}");
}
