//! Task groups of a scenario: declared cgroups (`[groups."/path"]`), the
//! autogroups that sessions get, and which group each task runs in.

use super::error::KeyError;
use super::file::ScenarioFile;
use super::spec::{GroupSpec, Groups, TaskSpec};
use super::values::check_name;
use crate::cpuset::CpuSet;
use crate::sched::group::{GroupLoad, MAX_SHARES, MIN_SHARES, autogroup_shares};
use crate::sched::weights::NICE_0_LOAD;

/// Limits on group declarations.
pub mod limits {
    /// Declared groups plus autogroups.
    pub const GROUPS_MAX: usize = 10_000;
    /// Levels below the root.
    pub const GROUP_DEPTH_MAX: usize = 32;
    /// Per-CPU group run queues (each with its group entity) in all.
    pub const GROUP_QUEUES_MAX: usize = 1_000_000;
}

/// Autogroup paths look like the kernel's `/proc/<pid>/autogroup` names.
const AUTOGROUP_PREFIX: &str = "/autogroup-";

/// `io.bfq.weight` (v2) or `blkio.bfq.weight` (v1): BFQ's group weight.
/// 6.18 bfq-cgroup.c reads these two files (`bfq_io_set_weight`,
/// `bfq_io_set_weight_legacy`), not the generic `io.weight`; it refuses a
/// value outside [BFQ_MIN_WEIGHT, BFQ_MAX_WEIGHT] = [1, 1000].
fn bfq_weight(g: &super::file::GroupFile, key: &str) -> Result<u16, KeyError> {
    use crate::block::bfq::{GROUP_WEIGHT_DEFAULT, WEIGHT_MAX, WEIGHT_MIN};
    let (name, v) = match (g.io_bfq_weight, g.blkio_bfq_weight) {
        (Some(_), Some(_)) => {
            return Err(KeyError::new(
                format!("{key}.blkio.bfq.weight"),
                "set `io.bfq.weight` (cgroup v2) or `blkio.bfq.weight` (v1), not both",
            ));
        }
        (Some(v), None) => ("io.bfq.weight", v),
        (None, Some(v)) => ("blkio.bfq.weight", v),
        (None, None) => return Ok(GROUP_WEIGHT_DEFAULT),
    };
    if v < i64::from(WEIGHT_MIN) || v > i64::from(WEIGHT_MAX) {
        return Err(KeyError::new(
            format!("{key}.{name}"),
            format!("{v} is not allowed: {WEIGHT_MIN} to {WEIGHT_MAX} (BFQ_MIN_WEIGHT to BFQ_MAX_WEIGHT)"),
        ));
    }
    Ok(v as u16)
}

/// More groups than `GROUPS_MAX`, not counting the root (index 0), which
/// every scenario has and none declares.
fn too_many(groups: &[GroupSpec]) -> bool {
    groups.len() - 1 > limits::GROUPS_MAX
}

fn check_path(path: &str, key: &str) -> Result<(), KeyError> {
    // `.` and `..` would make a path name a group other than the one it
    // spells (a cycle back to an ancestor, or itself); cgroupfs has no such
    // directories to create.
    if let Some(seg) = path.split('/').find(|s| *s == "." || *s == "..") {
        return Err(KeyError::new(
            key,
            format!(
                "`{path}` is not a group path: `{seg}` cannot name a group (a path may not lead back to itself or an ancestor)"
            ),
        ));
    }
    let ok = path.len() <= 255
        && path.starts_with('/')
        && path[1..]
            .split('/')
            .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:@".contains(c)));
    if ok {
        Ok(())
    } else {
        Err(KeyError::new(
            key,
            format!(
                "`{path}` is not a group path: write `/name` or `/parent/name`, with names of letters, digits, \
                 `-`, `_`, `.`, `:` or `@`"
            ),
        ))
    }
}

/// Resolves the declared groups and autogroups, and sets each task's group.
pub fn resolve(f: &ScenarioFile, tasks: &mut [TaskSpec], cpus: u16) -> Result<Groups, KeyError> {
    let group_load = match f.cfs.group_load.as_deref() {
        None | Some("pelt") => GroupLoad::Pelt,
        Some("instantaneous") => GroupLoad::Instantaneous,
        Some(other) => {
            return Err(KeyError::new("cfs.group_load", format!("`{other}`: allowed: pelt, instantaneous")));
        }
    };
    let autogroup = f.autogroup.enabled.unwrap_or(true);
    let mut groups = declared_groups(f, cpus)?;
    place_tasks(f, tasks, &mut groups, autogroup, cpus)?;
    for session in f.autogroup.nice.keys() {
        if !f.tasks.iter().any(|t| t.session.as_deref() == Some(session)) {
            return Err(KeyError::new(format!("autogroup.nice.{session}"), "no task has this session"));
        }
    }

    // Each group covers its tasks' CPUs and its children's.
    for t in tasks.iter() {
        for set in &t.affinity {
            let mut g = Some(t.group);
            while let Some(i) = g {
                groups[i].cpus.union_with(set);
                g = groups[i].parent;
            }
        }
    }
    let queues: usize = groups[1..].iter().map(|g| g.cpus.len()).sum();
    if queues > limits::GROUP_QUEUES_MAX {
        return Err(KeyError::new(
            "groups",
            format!(
                "{queues} per-CPU group run queues (groups × the CPUs their tasks may use); at most {}",
                limits::GROUP_QUEUES_MAX
            ),
        ));
    }
    Ok(Groups { groups, autogroup, group_load })
}

/// The root and the `[groups."/path"]` declarations, parents first.
fn declared_groups(f: &ScenarioFile, cpus: u16) -> Result<Vec<GroupSpec>, KeyError> {
    let root = GroupSpec {
        path: "/".into(),
        parent: None,
        shares: NICE_0_LOAD,
        session: None,
        cpus: CpuSet::empty(cpus),
        bandwidth: None,
        bfq_weight: crate::block::bfq::GROUP_WEIGHT_DEFAULT,
    };
    let mut groups = vec![root];
    // BTreeMap order puts every parent before its children (a prefix sorts first).
    for (path, g) in &f.groups {
        let key = format!("groups.\"{path}\"");
        if path == "/" {
            return Err(KeyError::new(key, "the root group is implicit and its cpu.shares cannot be set"));
        }
        check_path(path, &key)?;
        if path.starts_with(AUTOGROUP_PREFIX) {
            return Err(KeyError::new(key, "paths starting with /autogroup- are reserved for autogroups"));
        }
        let parent_path = &path[..path.rfind('/').unwrap_or(0)];
        let parent = if parent_path.is_empty() {
            0
        } else {
            groups.iter().position(|p| p.path == parent_path).ok_or_else(|| {
                KeyError::new(&key, format!("its parent `{parent_path}` is not declared; declare it first"))
            })?
        };
        if path.matches('/').count() > limits::GROUP_DEPTH_MAX {
            return Err(KeyError::new(key, format!("deeper than {} levels", limits::GROUP_DEPTH_MAX)));
        }
        let shares = match g.shares {
            None => NICE_0_LOAD,
            Some(s) if s < 0 => {
                return Err(KeyError::new(format!("{key}.shares"), format!("{s}: cpu.shares is a positive integer")));
            }
            // sched_group_set_shares (4.4 core.c) clamps to [MIN_SHARES, MAX_SHARES].
            Some(s) => (s as u64).clamp(MIN_SHARES, MAX_SHARES),
        };
        let bandwidth = super::bandwidth::group_bandwidth(g, &key)?;
        let bfq_weight = bfq_weight(g, &key)?;
        groups.push(GroupSpec {
            path: path.clone(),
            parent: Some(parent),
            shares,
            session: None,
            cpus: CpuSet::empty(cpus),
            bandwidth,
            bfq_weight,
        });
        if too_many(&groups) {
            return Err(KeyError::new(
                "groups",
                format!(
                    "{} groups declared: at most {} (the root is implicit and not counted)",
                    groups.len() - 1,
                    limits::GROUPS_MAX
                ),
            ));
        }
    }
    Ok(groups)
}

/// Each task's cgroup (`group`) and the group it runs in: its session's
/// autogroup when it is left in the root group and autogroup is on.
fn place_tasks(
    f: &ScenarioFile,
    tasks: &mut [TaskSpec],
    groups: &mut Vec<GroupSpec>,
    autogroup: bool,
    cpus: u16,
) -> Result<(), KeyError> {
    let declared = |groups: &[GroupSpec]| groups.iter().map(|g| g.path.as_str()).collect::<Vec<_>>().join(", ");

    for (i, t) in f.tasks.iter().enumerate() {
        let key = super::values::task_key(&t.name);
        let mut group = match &t.group {
            None => 0,
            Some(path) => groups.iter().position(|g| &g.path == path).ok_or_else(|| {
                KeyError::new(format!("{key}.group"), format!("no group `{path}`; groups: {}", declared(groups)))
            })?,
        };
        tasks[i].cgroup = group;
        if let Some(session) = &t.session {
            check_name(session, &format!("{key}.session"))?;
            // autogroup_task_group (4.4 auto_group.h): only tasks left in the root group.
            if autogroup && group == 0 {
                let path = format!("{AUTOGROUP_PREFIX}{session}");
                group = match groups.iter().position(|g| g.path == path) {
                    Some(g) => g,
                    None => {
                        let nice = f.autogroup.nice.get(session).copied().unwrap_or(0);
                        if !(-20..=19).contains(&nice) {
                            return Err(KeyError::new(
                                format!("autogroup.nice.{session}"),
                                format!("{nice} is not a nice value: -20 to 19"),
                            ));
                        }
                        groups.push(GroupSpec {
                            path,
                            parent: Some(0),
                            shares: autogroup_shares(nice as i8),
                            session: Some(session.clone()),
                            cpus: CpuSet::empty(cpus),
                            bandwidth: None,
                            bfq_weight: crate::block::bfq::GROUP_WEIGHT_DEFAULT,
                        });
                        if too_many(groups) {
                            return Err(KeyError::new(
                                key,
                                format!(
                                    "its autogroup makes {} groups (declared and autogroups): at most {}",
                                    groups.len() - 1,
                                    limits::GROUPS_MAX
                                ),
                            ));
                        }
                        groups.len() - 1
                    }
                };
            }
        }
        tasks[i].group = group;
    }
    Ok(())
}
