//! Every setting of the scenario accounted for in one place: the spec's
//! structs destructured without `..`, so a new setting does not compile
//! until the export expresses or warns it.

use sim_core::{ScenarioSpec, TaskSpec};

/// The one place that goes through every setting of the scenario spec and
/// says what the export does with it: expressed in the JSON, warned here,
/// or warned where its events are built. Each struct is destructured
/// without `..`, so a setting added to the spec does not compile until it
/// is given its line here: nothing is dropped silently. Returns the
/// warnings of the settings not warned elsewhere. `omitted`: tasks left out.
pub(super) fn unexpressed_settings(spec: &ScenarioSpec, omitted: &[String]) -> Vec<String> {
    let fmt = sim_core::format_duration;
    let mut w = Vec::new();
    let ScenarioSpec {
        name: _,        // expressed: global.log_basename
        description: _, // prose, not a setting
        seed: _,        // what it draws is warned per step (distributions become means)
        duration_ns: _, // expressed: global.duration (warned when not whole seconds)
        cpus: _,        // machine warning
        machine,
        hz: _,              // machine warning
        kernel: _,          // machine warning
        bandwidth_rules: _, // machine warning ("bandwidth rules")
        bandwidth_slice_us,
        context_switch_ns: _, // machine warning (the host's own cost)
        tunables: _,          // machine warning
        features: _,          // machine warning
        eevdf: _,             // machine warning
        eevdf_features: _,    // machine warning
        tasks,
        sources: _, // each warned as a periodic thread (`export`)
        groups,
        rt: _, // RT sysctls and the fair server: the host's (rt-app sets none)
        devices,
        device_mq: _,         // with `devices`
        events_max: _,        // a simulator budget, not a workload setting
        victim: _,            // which task the report explains, not a workload setting
        history_window_ns: _, // report setting
        warmup_ns: _,         // report setting: which part of the run the statistics cover
        limiters,
        io_queues,
    } = spec;
    // shape, isolcpus, nohz: the machine warning (machine.describe());
    // tick_offset, wakeup_latency: warned in `export`.
    let sim_core::MachineSpec { shape: _, isolcpus: _, nohz_idle: _, tick_offset_ns: _, wakeup_latency: _, noise: _ } =
        machine;
    if *bandwidth_slice_us != 5000 {
        w.push(format!(
            "cfs.sched_cfs_bandwidth_slice_us = {bandwidth_slice_us}: a sysctl of the host \
             (/proc/sys/kernel/sched_cfs_bandwidth_slice_us); rt-app does not set it"
        ));
    }
    let sim_core::Groups { groups: list, autogroup: _, group_load } = groups; // autogroup: machine warning
    if *group_load != Default::default() {
        w.push(format!("groups: the group load model ({group_load:?}) is a model input: the host has its own"));
    }
    let kept = |t: &TaskSpec| !omitted.contains(&t.name);
    for (i, g) in list.iter().enumerate().skip(1) {
        let sim_core::GroupSpec { path, parent: _, shares: _, session: _, cpus, bandwidth, bfq_weight } = g;
        // shares: warned per task in `export`; session: the autogroup warning.
        let used = tasks.iter().filter(|t| kept(t)).any(|t| {
            let mut gi = Some(t.cgroup);
            // Bounded: the group tree has no cycles and at most `list.len()` levels.
            for _ in 0..list.len() {
                match gi {
                    Some(x) if x == i => return true,
                    Some(x) => gi = list[x].parent,
                    None => break,
                }
            }
            false
        });
        if !used {
            continue;
        }
        if let Some(b) = bandwidth {
            let quota = b.quota_ns.map_or("max".to_string(), |q| (q / 1000).to_string());
            w.push(format!(
                "taskgroup {path}: cpu.max = \"{quota} {}\"{} in the scenario; rt-app creates the group but cannot \
                 set its quota: write it to {path}/cpu.max (cgroup v2) before the run, or the threads run unthrottled",
                b.period_ns / 1000,
                if b.burst_ns > 0 { format!(" (cpu.max.burst {})", b.burst_ns / 1000) } else { String::new() }
            ));
        }
        if cpus.len() != usize::from(spec.cpus) {
            w.push(format!(
                "taskgroup {path}: cpuset.cpus {} in the scenario; rt-app does not write cpusets: set it before the run",
                cpus.iter().map(|c| c.0.to_string()).collect::<Vec<_>>().join(",")
            ));
        }
        if *bfq_weight != sim_core::BFQ_GROUP_WEIGHT_DEFAULT {
            w.push(format!("taskgroup {path}: io.bfq.weight {bfq_weight} is not kept: rt-app has no block I/O"));
        }
    }
    for t in tasks.iter().filter(|t| kept(t)) {
        let TaskSpec {
            name,
            count: _,              // expressed: instance (or one object per instance)
            machine_background: _, // warned in `export` (a model input)
            first: _,              // ids, not a setting
            affinity: _,           // expressed: cpus
            nice: _,               // expressed: priority
            policy: _,             // expressed: policy
            rt_priority: _,        // expressed: priority
            dl: _,                 // expressed: dl-runtime, dl-deadline, dl-period
            group: _,              // autogroup warning in `export`
            cgroup: _,             // expressed: taskgroup
            session: _,            // warned in `export`
            start_ns: _,           // expressed: delay
            slice_ns,
            program: _,  // each step in `task_events`
            forward: _,  // expressed: resume of the next hop (`task_events`)
            hop_work: _, // expressed: the next hop's run (its mean)
            limiter,
            ionice,
        } = t;
        if let Some(ns) = slice_ns {
            w.push(format!(
                "task {name}: slice {} (sched_attr.sched_runtime, 6.12+) is not kept: rt-app sets no slice for \
                 SCHED_OTHER threads; the host's default slice applies",
                fmt(*ns)
            ));
        }
        if let Some(l) = limiter {
            let lname = limiters.get(l.0 as usize).map_or("?", |x| x.name.as_str());
            w.push(format!(
                "task {name}: limiter = {lname} is not kept: rt-app has no elastic CPU limiter, so its run steps \
                 are not throttled by grants"
            ));
        }
        if ionice.is_some() {
            w.push(format!("task {name}: ionice is not kept: rt-app has no block I/O"));
        }
    }
    if !devices.is_empty() {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        w.push(format!("devices: {} (block devices and their elevators) are not in rt-app", names.join(", ")));
    }
    for q in io_queues {
        w.push(format!("io_queues.{}: a userspace I/O scheduler; rt-app has no block I/O", q.name));
    }
    w
}
