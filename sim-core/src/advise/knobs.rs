//! The knobs `sim-cli advise` may turn: a catalogue built per scenario and
//! kernel model. Each knob is a setting the scenario format has (its `--set`
//! keys), the values tried, what applying it costs, and how to apply it on a
//! real machine (`apply.rs`). What a model has is asked of the model
//! (`KernelModel::rules().tunables`, its feature names, `has_custom_slices`),
//! never decided here by version number.

use crate::cpuset::CpuSet;
use crate::sched::model::KernelModel;
use crate::sched::policy::Policy;
use crate::sched::tunables::SchedFeatures;
use crate::scenario::Scenario;

/// A group of knobs, as `--knobs` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Groups, sessions, shares, affinity, isolcpus.
    Placement,
    /// Nice, policy, a custom slice.
    Task,
    /// The fair class's tunables and features.
    Tunables,
    /// `cpu.max` quota, period and burst.
    Quota,
    /// The elevator.
    Io,
    /// `CONFIG_HZ` (a kernel rebuild): only when asked.
    Hz,
    /// The kernel version itself: only when asked.
    Kernel,
}

impl Family {
    pub const ALL: [Family; 7] =
        [Family::Placement, Family::Task, Family::Tunables, Family::Quota, Family::Io, Family::Hz, Family::Kernel];
    /// Searched unless `--knobs` says otherwise: all but a rebuild or an upgrade.
    pub const DEFAULT: [Family; 5] = [Family::Placement, Family::Task, Family::Tunables, Family::Quota, Family::Io];

    pub fn name(self) -> &'static str {
        match self {
            Family::Placement => "placement",
            Family::Task => "task",
            Family::Tunables => "tunables",
            Family::Quota => "quota",
            Family::Io => "io",
            Family::Hz => "hz",
            Family::Kernel => "kernel",
        }
    }

    /// `--knobs placement,task` (or `all`, or `default,hz`).
    pub fn parse_list(text: &str) -> Result<Vec<Family>, String> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim) {
            match word {
                "all" => out.extend(Family::ALL),
                "default" => out.extend(Family::DEFAULT),
                _ => match Family::ALL.into_iter().find(|f| f.name() == word) {
                    Some(f) => out.push(f),
                    None => {
                        let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
                        return Err(format!(
                            "--knobs {}: unknown family `{}`; allowed: {}, default, all",
                            crate::scenario::error::echo(text),
                            crate::scenario::error::echo(word),
                            names.join(", ")
                        ));
                    }
                },
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// What it takes to apply a change on a real machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Needs {
    /// The task's owner can do it at run time (raising nice, SCHED_BATCH/IDLE).
    Owner,
    /// Root at run time (sysctl, debugfs, cgroup files, RT policies, lowering nice).
    Root,
    /// A boot parameter and a reboot.
    Reboot,
    /// A kernel rebuild (`CONFIG_HZ`).
    Rebuild,
    /// Another kernel version.
    Upgrade,
}

impl Needs {
    pub fn name(self) -> &'static str {
        match self {
            Needs::Owner => "runtime",
            Needs::Root => "root",
            Needs::Reboot => "reboot",
            Needs::Rebuild => "rebuild",
            Needs::Upgrade => "kernel upgrade",
        }
    }
}

/// How one knob is applied on a machine; `apply::commands` spells it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Apply {
    /// A fair-class tunable by its name (`sched_latency_ns`, `base_slice_ns`).
    Tunable(&'static str),
    /// A `features.h` bit.
    Feature(&'static str),
    Autogroup,
    /// `/proc/PID/autogroup`: the session's autogroup nice.
    AutogroupNice { session: String },
    /// Start the task in another session (`setsid`): another autogroup.
    Session { task: String, session: String },
    /// Move the task's threads into a cgroup.
    Cgroup { task: String, path: String },
    Shares { path: String },
    Quota { path: String },
    Burst { path: String },
    /// `taskset`: each task's new CPUs.
    Affinity { tasks: Vec<(String, String)> },
    /// `isolcpus=` and the victim's affinity.
    Isolcpus { cpus: String, task: String },
    Nice { task: String },
    Policy { task: String },
    /// `chrt --deadline` with the setting's runtime, deadline and period.
    Deadline { task: String },
    Ionice { task: String },
    Slice { task: String },
    Elevator { device: String },
    Hz,
    Kernel,
}

/// One value of a knob: the overrides it makes, as `--set` takes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// How the report prints it: `nice 10`, `base_slice_ns=0.3ms`.
    pub label: String,
    pub sets: Vec<(String, String)>,
}

/// One knob with the values a search tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    /// `nice of jvm-gc`, `base_slice_ns`, `cpu.max of /pod`.
    pub name: String,
    pub family: Family,
    pub needs: Needs,
    /// It changes other tasks' share of the CPU by design (a weight, a
    /// policy, a quota), so the side effects deserve a look.
    pub shifts_share: bool,
    pub apply: Apply,
    pub settings: Vec<Setting>,
}

/// The catalogue: the knobs that apply to this scenario, and the settings
/// left out because the scenario refused them (with the reason).
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    pub knobs: Vec<Knob>,
    pub skipped: Vec<String>,
}

/// Features that bear on a waiting task's delay, by `features.h` name; the
/// catalogue keeps those the model has.
const LATENCY_FEATURES: [&str; 11] = [
    "GENTLE_FAIR_SLEEPERS",
    "START_DEBIT",
    "WAKEUP_PREEMPTION",
    "NEXT_BUDDY",
    "LAST_BUDDY",
    "HRTICK",
    "PLACE_LAG",
    "RUN_TO_PARITY",
    "PREEMPT_SHORT",
    "DELAY_DEQUEUE",
    "PLACE_REL_DEADLINE",
];

/// The values tried per tunable (effective values, as the sysctl or
/// debugfs file takes them); the current value is left out.
fn tunable_values(name: &str) -> &'static [&'static str] {
    match name {
        "sched_latency_ns" => &["1ms", "3ms", "6ms", "12ms"],
        "sched_min_granularity_ns" => &["100us", "300us", "750us", "1500us"],
        "sched_wakeup_granularity_ns" => &["0ns", "500us", "1ms", "2ms"],
        "base_slice_ns" => &["100us", "300us", "750us", "1500us", "3ms"],
        _ => &[],
    }
}

/// A TOML string value for `--set`.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A key path segment for `--set`: bare when it can be (`jvm-gc`), quoted
/// when it holds anything else (`"/pod"`, a dot).
fn segment(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        name.to_string()
    } else {
        quoted(name)
    }
}

fn task_key(name: &str, key: &str) -> String {
    format!("tasks.{}.{key}", segment(name))
}

fn group_key(path: &str, key: &str) -> String {
    format!("groups.{}.{key}", segment(path))
}

fn set(key: String, value: impl Into<String>) -> (String, String) {
    (key, value.into())
}

fn one(label: impl Into<String>, sets: Vec<(String, String)>) -> Setting {
    Setting { label: label.into(), sets }
}

/// Who the catalogue is built around: the target's task and the tasks that
/// held the CPU while it waited (from the baseline's report), most first.
pub struct Roles<'a> {
    pub victim: &'a str,
    pub culprits: Vec<&'a str>,
    /// The victim's CPU time per activation and time between activations
    /// in the baseline (mean over its instances' wake-ups), for a
    /// SCHED_DEADLINE reservation; None when it did not wake.
    pub activation: Option<(u64, u64)>,
}

/// The knobs of `families` for `s`. Every setting is tried on the scenario
/// once: one it refuses (a key the model lacks, a value out of range) goes
/// to `skipped` with the reason, and a knob with no setting left is dropped.
pub fn catalogue(s: &Scenario, roles: &Roles, families: &[Family]) -> Catalogue {
    let mut knobs = Vec::new();
    for f in families {
        match f {
            Family::Placement => placement(s, roles, &mut knobs),
            Family::Task => task_knobs(s, roles, &mut knobs),
            Family::Tunables => tunables(s, &mut knobs),
            Family::Quota => quotas(s, &mut knobs),
            Family::Io => io(s, &mut knobs),
            Family::Hz => hz(s, &mut knobs),
            Family::Kernel => kernels(s, &mut knobs),
        }
    }
    let mut skipped = Vec::new();
    for k in &mut knobs {
        k.settings.retain(|st| {
            let pairs: Vec<(&str, &str)> = st.sets.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            match s.with_overrides(&pairs) {
                Ok(_) => true,
                Err(e) => {
                    skipped.push(format!("{}: {} ({e})", k.name, st.label));
                    false
                }
            }
        });
    }
    knobs.retain(|k| !k.settings.is_empty());
    Catalogue { knobs, skipped }
}

fn declared<'a>(s: &'a Scenario, name: &str) -> Option<&'a crate::scenario::TaskSpec> {
    s.spec.tasks.iter().find(|t| t.name == name && !t.machine_background)
}

fn placement(s: &Scenario, roles: &Roles, out: &mut Vec<Knob>) {
    let spec = &s.spec;
    let Some(v) = declared(s, roles.victim) else { return };
    let groups = &spec.groups;
    // Autogroup: a task in the root cgroup runs in its session's group
    // (4.4/6.x autogroup.c, `task_wants_autogroup`); off, all share the root.
    let sessions: std::collections::BTreeSet<&str> =
        spec.tasks.iter().filter(|t| !t.machine_background).filter_map(|t| t.session.as_deref()).collect();
    if groups.autogroup && sessions.len() >= 2 {
        out.push(Knob {
            name: "autogroup".into(),
            family: Family::Placement,
            needs: Needs::Root,
            shifts_share: true,
            apply: Apply::Autogroup,
            settings: vec![one("off", vec![set("autogroup.enabled".into(), "false")])],
        });
        for (session, nice) in [(v.session.as_deref(), -10), (None, 10)] {
            let mut targets: Vec<&str> = match session {
                Some(sv) => vec![sv],
                None => roles
                    .culprits
                    .iter()
                    .filter_map(|c| declared(s, c).and_then(|t| t.session.as_deref()))
                    .filter(|c| Some(*c) != v.session.as_deref())
                    .collect(),
            };
            // Two culprits of one session: one knob.
            let mut seen = std::collections::BTreeSet::new();
            targets.retain(|x| seen.insert(*x));
            for sess in targets {
                out.push(Knob {
                    name: format!("autogroup nice of session {sess}"),
                    family: Family::Placement,
                    needs: Needs::Root,
                    shifts_share: true,
                    apply: Apply::AutogroupNice { session: sess.to_string() },
                    settings: [nice / 2, nice]
                        .iter()
                        .map(|n| one(format!("nice {n}"), vec![set(format!("autogroup.nice.{}", segment(sess)), n.to_string())]))
                        .collect(),
                });
            }
        }
        if let Some(vs) = &v.session {
            for c in &roles.culprits {
                let Some(t) = declared(s, c) else { continue };
                if t.session.as_deref().is_some_and(|x| x != vs) {
                    out.push(Knob {
                        name: format!("session of {c}"),
                        family: Family::Placement,
                        needs: Needs::Owner,
                        shifts_share: true,
                        apply: Apply::Session { task: c.to_string(), session: vs.clone() },
                        settings: vec![one(format!("{c} in session {vs}"), vec![set(task_key(c, "session"), quoted(vs))])],
                    });
                }
            }
        }
    }
    // Declared cgroups: a culprit into the victim's group, and the groups' shares.
    let declared_groups: Vec<&crate::scenario::GroupSpec> =
        groups.groups.iter().filter(|g| g.session.is_none() && g.path != "/").collect();
    let vpath = groups.groups.get(v.cgroup).map(|g| g.path.clone()).unwrap_or_else(|| "/".into());
    for c in &roles.culprits {
        let Some(t) = declared(s, c) else { continue };
        let cpath = groups.groups.get(t.cgroup).map_or("/", |g| g.path.as_str());
        if !declared_groups.is_empty() && cpath != vpath {
            out.push(Knob {
                name: format!("cgroup of {c}"),
                family: Family::Placement,
                needs: Needs::Root,
                shifts_share: true,
                apply: Apply::Cgroup { task: c.to_string(), path: vpath.clone() },
                settings: vec![one(format!("{c} into {vpath}"), vec![set(task_key(c, "group"), quoted(&vpath))])],
            });
        }
    }
    for g in &declared_groups {
        let up = g.path == vpath || vpath.starts_with(&format!("{}/", g.path));
        let values: Vec<u64> = if up {
            vec![(g.shares * 4).min(262_144), (g.shares * 16).min(262_144)]
        } else {
            vec![(g.shares / 4).max(2), (g.shares / 16).max(2)]
        };
        let mut values = values;
        values.dedup();
        values.retain(|&x| x != g.shares);
        out.push(Knob {
            name: format!("cpu.shares of {}", g.path),
            family: Family::Placement,
            needs: Needs::Root,
            shifts_share: true,
            apply: Apply::Shares { path: g.path.clone() },
            settings: values
                .into_iter()
                .map(|x| one(format!("shares {x}"), vec![set(group_key(&g.path, "shares"), x.to_string())]))
                .collect(),
        });
    }
    affinity(s, roles, v, out);
}

/// Pin the culprits off the victim's CPUs, and `isolcpus` for the victim.
fn affinity(s: &Scenario, roles: &Roles, v: &crate::scenario::TaskSpec, out: &mut Vec<Knob>) {
    let n = s.spec.cpus;
    if n < 2 {
        return;
    }
    let all = s.spec.machine.default_affinity();
    let vset = v.affinity.first().cloned().unwrap_or_else(|| all.clone());
    // An unpinned victim gets the last CPU of its set, apart from the rest.
    let (vset, pin_victim) = if vset.len() >= all.len() && v.count == 1 {
        let last = vset.iter().last().map(|c| c.0).unwrap_or(n - 1);
        let mut one_cpu = CpuSet::empty(n);
        one_cpu.insert(crate::ids::CpuId(last));
        (one_cpu, true)
    } else {
        (vset, false)
    };
    let rest: Vec<u16> = all.iter().map(|c| c.0).filter(|c| !vset.contains(crate::ids::CpuId(*c))).collect();
    if rest.is_empty() || roles.culprits.is_empty() {
        return;
    }
    let vtext = crate::sched::topology::cpu_list(&vset);
    let rtext = crate::sched::topology::cpus_text(rest.iter().copied());
    let mut sets = Vec::new();
    let mut tasks = Vec::new();
    if pin_victim {
        sets.push(set(task_key(roles.victim, "cpus"), quoted(&vtext)));
        tasks.push((roles.victim.to_string(), vtext.clone()));
    }
    for c in &roles.culprits {
        sets.push(set(task_key(c, "cpus"), quoted(&rtext)));
        tasks.push((c.to_string(), rtext.clone()));
    }
    out.push(Knob {
        name: "affinity".into(),
        family: Family::Placement,
        needs: Needs::Owner,
        shifts_share: true,
        apply: Apply::Affinity { tasks },
        settings: vec![one(format!("{} on {vtext}, culprits on {rtext}", roles.victim), sets)],
    });
    if s.spec.machine.isolcpus.is_empty() && v.count == 1 {
        out.push(Knob {
            name: "isolcpus".into(),
            family: Family::Placement,
            needs: Needs::Reboot,
            shifts_share: true,
            apply: Apply::Isolcpus { cpus: vtext.clone(), task: roles.victim.to_string() },
            settings: vec![one(
                format!("isolcpus={vtext}, {} pinned there", roles.victim),
                vec![set("machine.isolcpus".into(), quoted(&vtext)), set(task_key(roles.victim, "cpus"), quoted(&vtext))],
            )],
        });
    }
}

fn task_knobs(s: &Scenario, roles: &Roles, out: &mut Vec<Knob>) {
    let Some(v) = declared(s, roles.victim) else { return };
    let fair = |t: &crate::scenario::TaskSpec| matches!(t.policy, Policy::Normal | Policy::Batch | Policy::Idle);
    if fair(v) {
        let nices: Vec<i8> = [-5i8, -10, -20].into_iter().filter(|&n| n < v.nice).collect();
        out.push(Knob {
            name: format!("nice of {}", roles.victim),
            family: Family::Task,
            needs: Needs::Root,
            shifts_share: true,
            apply: Apply::Nice { task: roles.victim.to_string() },
            settings: nices
                .iter()
                .map(|n| one(format!("nice {n}"), vec![set(task_key(roles.victim, "nice"), n.to_string())]))
                .collect(),
        });
        // RT for the victim: it then preempts every fair task, which RT
        // throttling or the fair server bound (the side effects show it).
        out.push(Knob {
            name: format!("policy of {}", roles.victim),
            family: Family::Task,
            needs: Needs::Root,
            shifts_share: true,
            apply: Apply::Policy { task: roles.victim.to_string() },
            settings: vec![one(
                "SCHED_FIFO 50",
                vec![set(task_key(roles.victim, "policy"), "fifo"), set(task_key(roles.victim, "rt_priority"), "50")],
            )],
        });
        if let Some((run, period)) = roles.activation {
            out.push(deadline_knob(roles.victim, run, period));
        }
        if s.spec.kernel.has_custom_slices() {
            out.push(Knob {
                name: format!("slice of {}", roles.victim),
                family: Family::Task,
                needs: Needs::Owner,
                shifts_share: false,
                apply: Apply::Slice { task: roles.victim.to_string() },
                settings: ["100us", "300us", "1ms"]
                    .iter()
                    .map(|x| one(format!("slice {x}"), vec![set(task_key(roles.victim, "slice"), *x)]))
                    .collect(),
            });
        }
    }
    if !s.spec.devices.is_empty() {
        // I/O priority (`ioprio_set`): the victim's I/O first, culprits' last.
        let mut ionice = vec![(roles.victim, "rt/4", Needs::Root)];
        ionice.extend(roles.culprits.iter().map(|c| (*c, "idle", Needs::Owner)));
        for (t, class, needs) in ionice {
            out.push(Knob {
                name: format!("ionice of {t}"),
                family: Family::Io,
                needs,
                shifts_share: true,
                apply: Apply::Ionice { task: t.to_string() },
                settings: vec![one(format!("ionice {class}"), vec![set(task_key(t, "ionice"), class)])],
            });
        }
    }
    for c in &roles.culprits {
        let Some(t) = declared(s, c) else { continue };
        if !fair(t) {
            continue;
        }
        let nices: Vec<i8> = [5i8, 10, 19].into_iter().filter(|&n| n > t.nice).collect();
        out.push(Knob {
            name: format!("nice of {c}"),
            family: Family::Task,
            needs: Needs::Owner,
            shifts_share: true,
            apply: Apply::Nice { task: c.to_string() },
            settings: nices.iter().map(|n| one(format!("nice {n}"), vec![set(task_key(c, "nice"), n.to_string())])).collect(),
        });
        let policies: Vec<&str> = [("batch", Policy::Batch), ("idle", Policy::Idle)]
            .into_iter()
            .filter(|(_, p)| *p != t.policy)
            .map(|(n, _)| n)
            .collect();
        out.push(Knob {
            name: format!("policy of {c}"),
            family: Family::Task,
            needs: Needs::Owner,
            shifts_share: true,
            apply: Apply::Policy { task: c.to_string() },
            settings: policies
                .iter()
                .map(|p| one(format!("SCHED_{}", p.to_uppercase()), vec![set(task_key(c, "policy"), *p)]))
                .collect(),
        });
    }
}

/// SCHED_DEADLINE for the victim: a reservation of its measured CPU time
/// per activation with a margin (×1.25 and ×2, rounded up to 10 µs) every
/// activation period, deadline = period (implicit deadline, as `chrt
/// --deadline` is usually given). The model's admission test
/// (`__dl_overflow`) refuses what does not fit, and the catalogue drops it.
fn deadline_knob(victim: &str, run_ns: u64, period_ns: u64) -> Knob {
    let round = |ns: u64| ns.div_ceil(10_000) * 10_000;
    let period = round(period_ns).max(10_000);
    let settings = [(5u64, 4u64), (2, 1)]
        .iter()
        .map(|&(num, den)| {
            let runtime = round(run_ns * num / den).min(period);
            one(
                format!("SCHED_DEADLINE {}/{}", crate::time::format_duration(runtime), crate::time::format_duration(period)),
                vec![
                    set(task_key(victim, "policy"), "deadline"),
                    set(task_key(victim, "dl_runtime"), format!("{runtime}ns")),
                    set(task_key(victim, "dl_deadline"), format!("{period}ns")),
                    set(task_key(victim, "dl_period"), format!("{period}ns")),
                ],
            )
        })
        .collect();
    Knob {
        name: format!("deadline of {victim}"),
        family: Family::Task,
        needs: Needs::Root,
        shifts_share: true,
        apply: Apply::Deadline { task: victim.to_string() },
        settings,
    }
}

/// The current features of the scenario's model, `(name, on)`.
fn features_now(s: &Scenario) -> Vec<(&'static str, bool)> {
    let spec = &s.spec;
    if spec.kernel.tuned_by_base_slice() {
        spec.eevdf_features.iter(spec.kernel)
    } else {
        let f: &SchedFeatures = &spec.features;
        f.iter().collect()
    }
}

fn tunables(s: &Scenario, out: &mut Vec<Knob>) {
    let model: KernelModel = s.spec.kernel;
    for &name in model.rules().tunables {
        let now = match name {
            "sched_latency_ns" => s.spec.tunables.sched_latency_ns,
            "sched_min_granularity_ns" => s.spec.tunables.sched_min_granularity_ns,
            "sched_wakeup_granularity_ns" => s.spec.tunables.sched_wakeup_granularity_ns,
            "base_slice_ns" => s.spec.eevdf.base_slice_ns,
            _ => 0,
        };
        let settings = tunable_values(name)
            .iter()
            .filter(|v| crate::workload::dist::parse_duration(v).ok() != Some(now))
            .map(|v| one(format!("{name}={v}"), vec![set(format!("cfs.{name}"), *v)]))
            .collect();
        out.push(Knob {
            name: name.to_string(),
            family: Family::Tunables,
            needs: Needs::Root,
            shifts_share: false,
            apply: Apply::Tunable(name),
            settings,
        });
    }
    for (name, on) in features_now(s) {
        if !LATENCY_FEATURES.contains(&name) {
            continue;
        }
        let label = if on { format!("NO_{name}") } else { name.to_string() };
        out.push(Knob {
            name: format!("feature {name}"),
            family: Family::Tunables,
            needs: Needs::Root,
            shifts_share: false,
            apply: Apply::Feature(name),
            settings: vec![one(label, vec![set(format!("features.{name}"), (!on).to_string())])],
        });
    }
}

fn quotas(s: &Scenario, out: &mut Vec<Knob>) {
    for g in &s.spec.groups.groups {
        let Some(b) = g.bandwidth else { continue };
        let Some(q) = b.quota_ns else { continue };
        let (q_us, p_us) = (q / 1000, b.period_ns / 1000);
        // The same share of a CPU over a shorter period throttles for less at a time.
        let forms = |quota: &str, period: u64| -> Vec<(String, String)> {
            vec![set(group_key(&g.path, "\"cpu.max\""), quoted(&format!("{quota} {period}")))]
        };
        let mut settings = vec![
            one(format!("cpu.max {} {p_us}", q_us * 3 / 2), forms(&(q_us * 3 / 2).to_string(), p_us)),
            one(format!("cpu.max {} {p_us}", q_us * 2), forms(&(q_us * 2).to_string(), p_us)),
            one(format!("cpu.max max {p_us}"), forms("max", p_us)),
        ];
        for period in [10_000u64, 20_000] {
            if period < p_us {
                let quota = (q_us * period / p_us).max(1000);
                settings.push(one(format!("cpu.max {quota} {period}"), forms(&quota.to_string(), period)));
            }
        }
        out.push(Knob {
            name: format!("cpu.max of {}", g.path),
            family: Family::Quota,
            needs: Needs::Root,
            shifts_share: true,
            apply: Apply::Quota { path: g.path.clone() },
            settings,
        });
        if b.burst_ns < q {
            out.push(Knob {
                name: format!("cpu.max.burst of {}", g.path),
                family: Family::Quota,
                needs: Needs::Root,
                shifts_share: true,
                apply: Apply::Burst { path: g.path.clone() },
                settings: vec![one(
                    format!("cpu.max.burst {q_us}"),
                    vec![set(group_key(&g.path, "\"cpu.max.burst\""), q_us.to_string())],
                )],
            });
        }
    }
}

fn io(s: &Scenario, out: &mut Vec<Knob>) {
    for d in &s.spec.devices {
        let now = d.elevator.name();
        let settings = s
            .spec
            .kernel
            .elevators()
            .iter()
            .filter(|e| **e != now)
            .map(|e| one(format!("elevator {e}"), vec![set(format!("devices.{}.elevator", segment(&d.name)), quoted(e))]))
            .collect();
        out.push(Knob {
            name: format!("elevator of {}", d.name),
            family: Family::Io,
            needs: Needs::Root,
            shifts_share: false,
            apply: Apply::Elevator { device: d.name.clone() },
            settings,
        });
    }
}

fn hz(s: &Scenario, out: &mut Vec<Knob>) {
    let settings = crate::sched::tunables::HZ_CHOICES
        .iter()
        .filter(|&&h| h != s.spec.hz)
        .map(|h| one(format!("HZ={h}"), vec![set("machine.hz".into(), h.to_string())]))
        .collect();
    out.push(Knob { name: "HZ".into(), family: Family::Hz, needs: Needs::Rebuild, shifts_share: false, apply: Apply::Hz, settings });
}

fn kernels(s: &Scenario, out: &mut Vec<Knob>) {
    let settings = KernelModel::ALL
        .iter()
        .filter(|m| **m != s.spec.kernel)
        .map(|m| one(format!("Linux {}", m.version()), vec![set("kernel.version".into(), m.version())]))
        .collect();
    out.push(Knob {
        name: "kernel".into(),
        family: Family::Kernel,
        needs: Needs::Upgrade,
        shifts_share: false,
        apply: Apply::Kernel,
        settings,
    });
}
