//! The scenario's task groups as real cgroups for `sim-cli measure`: a
//! dedicated parent `schedlab-measure-<pid>` under the root of the `cpu`
//! hierarchy, the scenario's group paths under it with their shares, and
//! guaranteed cleanup (processes moved back where they came from, directories
//! removed deepest first) by `remove`, by `Drop`, or — after a SIGKILL — by
//! `remove_stale` on the next run.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};

use super::host::{CgroupVersion, HostInfo};
use sim_core::BandwidthSpec;

/// The name prefix of our parent groups; the suffix is the creating pid.
const PARENT_PREFIX: &str = "schedlab-measure-";
/// kernel/sched/sched.h MIN_SHARES and MAX_SHARES (1 << 1, 1 << 18): the
/// range `cpu.shares` accepts (sched_group_set_shares clamps to it).
const SHARES_MIN: u64 = 2;
const SHARES_MAX: u64 = 262_144;

/// Where `move_process` puts a process.
#[derive(Clone, Copy, Debug)]
pub enum CgTarget<'a> {
    /// The real root cgroup of the hierarchy.
    HostRoot,
    /// Our `schedlab-measure-<pid>` parent, which stands for the scenario's `/`.
    Parent,
    /// A scenario group path (`/a/b`), created by `create`; `/` is the parent.
    Group(&'a str),
}

/// The cgroups one measurement created; removed by `remove` or on drop.
#[derive(Debug)]
pub struct Cgroups {
    v2: bool,
    /// The root of the hierarchy carrying `cpu`.
    root: PathBuf,
    /// `root/schedlab-measure-<pid>`.
    parent: PathBuf,
    /// Directories we created, parents first.
    created: Vec<PathBuf>,
    /// v2 directories whose cgroup.subtree_control we gave `+cpu`.
    subtree_enabled: Vec<PathBuf>,
    /// Each moved pid and the cgroup it was in before its first move
    /// (a Mutex because `move_process` takes `&self`).
    moved: Mutex<Vec<(u32, PathBuf)>>,
    removed: bool,
}

/// kernel/sched/sched.h sched_weight_to_cgroup (6.x; read by
/// core.c cpu_weight_read_u64): the v2 `cpu.weight` that shows a group whose
/// weight is `shares`: clamp(DIV_ROUND_CLOSEST(shares * 100, 1024), 1, 10000).
/// Writing it back gives sched_weight_from_cgroup(w) = round(w * 1024 / 100),
/// so shares below 10 or above 1 024 000 do not survive the trip.
pub fn shares_to_weight(shares: u64) -> u64 {
    let rounded = (shares.saturating_mul(100) + 512) / 1024;
    rounded.clamp(1, 10_000)
}

/// `/a/b` → ["a", "b"]; `/` → []. Names are restricted to what is safe as a
/// directory name and cannot collide with control files.
fn group_components(path: &str) -> anyhow::Result<Vec<&str>> {
    let Some(rest) = path.strip_prefix('/') else {
        bail!("cgroup path {path:?}: must start with `/` (like `/scylla` or `/a/b`)");
    };
    let mut components = Vec::new();
    for component in rest.split('/').filter(|c| !c.is_empty()) {
        let allowed = component.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
        if !allowed {
            bail!("cgroup path {path:?}: component {component:?} may hold only letters, digits, `_` and `-`");
        }
        components.push(component);
    }
    Ok(components)
}

fn hierarchy(host_cgroup: &CgroupVersion) -> Result<(PathBuf, bool), String> {
    match host_cgroup {
        CgroupVersion::V1 { cpu } => Ok((cpu.clone(), false)),
        CgroupVersion::V2 { root } => Ok((root.clone(), true)),
        CgroupVersion::None => Err("no cgroup hierarchy carries the `cpu` controller: mount one \
             (v1: `mkdir -p /sys/fs/cgroup/cpu && mount -t cgroup -o cpu cgroup /sys/fs/cgroup/cpu`) \
             or enable it on v2 (`echo +cpu > /sys/fs/cgroup/cgroup.subtree_control`)"
            .to_string()),
    }
}

/// The cgroup of `pid` in this hierarchy, relative to its root, from
/// /proc/<pid>/cgroup: v1 lines `N:cpu,cpuacct:/path`, the v2 line `0::/path`.
fn parse_proc_cgroup(text: &str, v2: bool) -> Option<String> {
    text.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let ours = if v2 { id == "0" && controllers.is_empty() } else { controllers.split(',').any(|c| c == "cpu") };
        ours.then(|| path.to_string())
    })
}

fn write_file(path: &Path, value: &str) -> std::io::Result<()> {
    std::fs::write(path, value)
}

/// The pids (or tids) listed in a cgroup.procs / tasks file; none if absent.
fn read_pids(path: &Path) -> anyhow::Result<Vec<u32>> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .split_whitespace()
            .map(|pid| pid.parse().with_context(|| format!("reading {}: {pid:?} is not a pid", path.display())))
            .collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

fn pid_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// rmdir, retried briefly: a cgroup stays busy for a moment after its last
/// task left (the exit path drops the css_set asynchronously).
fn rmdir_retrying(dir: &Path) -> anyhow::Result<()> {
    let mut last = None;
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => last = Some(error),
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let error = last.map_or_else(|| anyhow!("unknown error"), anyhow::Error::from);
    Err(error.context(format!("removing cgroup {} (still has tasks or children?)", dir.display())))
}

/// Moves every process (and, in v1, every leftover thread) out of `dir` to
/// `destination(pid)`; processes that exited meanwhile are skipped.
fn evacuate(dir: &Path, v2: bool, destination: &dyn Fn(u32) -> PathBuf) -> anyhow::Result<()> {
    let mut files = vec!["cgroup.procs"];
    if !v2 {
        files.push("tasks");
    }
    for file in files {
        for pid in read_pids(&dir.join(file))? {
            let target = destination(pid).join(file);
            if let Err(error) = write_file(&target, &pid.to_string())
                && pid_alive(pid)
            {
                return Err(error)
                    .with_context(|| format!("moving pid {pid} out of {} into {}", dir.display(), target.display()));
            }
        }
    }
    Ok(())
}

/// The files, in the order they are written, and the values that give a
/// cgroup the quota `b`: v1 `cpu.cfs_period_us` then `cpu.cfs_quota_us`
/// (`-1` for no quota) then `cpu.cfs_burst_us` (only when the burst is not
/// 0); v2 `cpu.max` (`QUOTA PERIOD`, `max PERIOD`) then `cpu.max.burst`.
/// The period goes first so a quota is never checked against the default
/// period; the burst last, as the kernel checks it against the quota
/// (tg_set_cfs_bandwidth: burst ≤ quota).
pub fn bandwidth_files(v2: bool, b: &BandwidthSpec) -> Vec<(&'static str, String)> {
    let period_us = b.period_ns / 1_000;
    let burst_us = b.burst_ns / 1_000;
    let mut files = Vec::new();
    if v2 {
        let quota = b.quota_ns.map_or_else(|| "max".to_string(), |q| (q / 1_000).to_string());
        files.push(("cpu.max", format!("{quota} {period_us}")));
        if burst_us > 0 {
            files.push(("cpu.max.burst", burst_us.to_string()));
        }
    } else {
        files.push(("cpu.cfs_period_us", period_us.to_string()));
        files.push(("cpu.cfs_quota_us", b.quota_ns.map_or_else(|| "-1".to_string(), |q| (q / 1_000).to_string())));
        if burst_us > 0 {
            files.push(("cpu.cfs_burst_us", burst_us.to_string()));
        }
    }
    files
}

/// The bandwidth counters of a cgroup's `cpu.stat`, times in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStatCounts {
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_time_ns: u64,
    /// 0 on kernels without burst (before 5.14 v1 has no such line; 6.6+ adds them).
    pub nr_bursts: u64,
    pub burst_time_ns: u64,
}

impl CpuStatCounts {
    /// What was counted between `before` and `self` (cpu.stat counts from
    /// the cgroup's creation).
    pub fn since(&self, before: &CpuStatCounts) -> CpuStatCounts {
        CpuStatCounts {
            nr_periods: self.nr_periods.saturating_sub(before.nr_periods),
            nr_throttled: self.nr_throttled.saturating_sub(before.nr_throttled),
            throttled_time_ns: self.throttled_time_ns.saturating_sub(before.throttled_time_ns),
            nr_bursts: self.nr_bursts.saturating_sub(before.nr_bursts),
            burst_time_ns: self.burst_time_ns.saturating_sub(before.burst_time_ns),
        }
    }
}

/// A `cpu.stat` text: v1 (`nr_periods`, `nr_throttled`, `throttled_time`
/// in ns, 6.x `nr_bursts`, `burst_time` in ns) or v2 (`usage_usec`, …,
/// `nr_periods`, `nr_throttled`, `throttled_usec`, `nr_bursts`,
/// `burst_usec`). Other lines are skipped; `nr_periods`, `nr_throttled` and
/// a throttled time must be there (the kernel prints them only with
/// CONFIG_CFS_BANDWIDTH). `file` names the file in errors.
pub fn parse_cpu_stat(text: &str, file: &str) -> anyhow::Result<CpuStatCounts> {
    let mut c = CpuStatCounts::default();
    let (mut periods, mut throttled, mut time) = (false, false, false);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        let (Some(key), Some(value), None) = (fields.next(), fields.next(), fields.next()) else {
            bail!("reading {file}: line {line:?} is not `KEY VALUE`");
        };
        let parse = || -> anyhow::Result<u64> {
            value.parse().with_context(|| format!("reading {file}: {key} {value:?} is not a count"))
        };
        match key {
            "nr_periods" => (c.nr_periods, periods) = (parse()?, true),
            "nr_throttled" => (c.nr_throttled, throttled) = (parse()?, true),
            "throttled_time" => (c.throttled_time_ns, time) = (parse()?, true),
            "throttled_usec" => (c.throttled_time_ns, time) = (parse()?.saturating_mul(1_000), true),
            "nr_bursts" => c.nr_bursts = parse()?,
            "burst_time" => c.burst_time_ns = parse()?,
            "burst_usec" => c.burst_time_ns = parse()?.saturating_mul(1_000),
            _ => {}
        }
    }
    if !(periods && throttled && time) {
        bail!(
            "reading {file}: no nr_periods, nr_throttled and throttled_time/throttled_usec lines (kernel built \
             without CONFIG_CFS_BANDWIDTH?)"
        );
    }
    Ok(c)
}

impl Cgroups {
    /// Checks we may write cgroups (root or writable hierarchy); Err names
    /// what is missing and how to fix it.
    pub fn check_permission(host: &HostInfo) -> Result<(), String> {
        let (root, v2) = hierarchy(&host.cgroup)?;
        let mut needed = vec![root.clone(), root.join("cgroup.procs")];
        if v2 {
            needed.push(root.join("cgroup.subtree_control"));
        }
        for path in needed {
            if let Err(error) = rustix::fs::access(&path, rustix::fs::Access::WRITE_OK) {
                return Err(format!(
                    "cannot write {}: {error}; run `sim-cli measure` as root (sudo), or delegate the \
                     hierarchy to this user (chown -R $USER {}), or remount it read-write",
                    path.display(),
                    root.display()
                ));
            }
        }
        Ok(())
    }

    /// Creates `schedlab-measure-<pid>` under the root of the cpu hierarchy
    /// and under it each scenario group path (parents first) with its shares:
    /// v1 `cpu.shares`, v2 `cpu.weight` via `shares_to_weight`, enabling
    /// `+cpu` in cgroup.subtree_control along the way (undone by `remove`).
    /// The scenario's `/` is the parent itself; its shares are not written
    /// (the root task group has none: fair.c __sched_group_set_shares
    /// refuses the root).
    pub fn create(host: &HostInfo, groups: &[(String, u64)]) -> anyhow::Result<Cgroups> {
        let (root, v2) = hierarchy(&host.cgroup).map_err(|message| anyhow!("creating cgroups: {message}"))?;
        Cgroups::create_at(&root, v2, &format!("{PARENT_PREFIX}{}", std::process::id()), groups)
    }

    fn create_at(root: &Path, v2: bool, parent_name: &str, groups: &[(String, u64)]) -> anyhow::Result<Cgroups> {
        // Check every group before touching the host.
        let mut parsed = Vec::new();
        for (path, shares) in groups {
            let components = group_components(path)?;
            if !(SHARES_MIN..=SHARES_MAX).contains(shares) {
                bail!("cgroup {path:?}: cpu.shares {shares} is outside {SHARES_MIN}..={SHARES_MAX}");
            }
            parsed.push((path.as_str(), components, *shares));
        }
        let parent = root.join(parent_name);
        if parent.exists() {
            bail!(
                "creating cgroups: {} already exists (created earlier by this process; remove it first)",
                parent.display()
            );
        }
        // From here on, Drop cleans up whatever was made if a step fails.
        let mut cgroups = Cgroups {
            v2,
            root: root.to_path_buf(),
            parent: parent.clone(),
            created: Vec::new(),
            subtree_enabled: Vec::new(),
            moved: Mutex::new(Vec::new()),
            removed: false,
        };
        cgroups.make_dir(&parent)?;
        for (_, components, _) in &parsed {
            let mut dir = parent.clone();
            for component in components {
                let child = dir.join(component);
                if !child.exists() {
                    cgroups.make_dir(&child)?;
                }
                dir = child;
            }
        }
        for (path, components, shares) in &parsed {
            if components.is_empty() {
                continue;
            }
            let dir = components.iter().fold(parent.clone(), |dir, c| dir.join(c));
            let (file, value) = if v2 { ("cpu.weight", shares_to_weight(*shares)) } else { ("cpu.shares", *shares) };
            let file = dir.join(file);
            write_file(&file, &value.to_string())
                .with_context(|| format!("cgroup {path:?}: writing {value} to {}", file.display()))?;
        }
        Ok(cgroups)
    }

    /// mkdir one cgroup; on v2 first gives its parent `+cpu` in
    /// cgroup.subtree_control so the new group gets cpu.weight.
    fn make_dir(&mut self, dir: &Path) -> anyhow::Result<()> {
        if self.v2
            && let Some(up) = dir.parent()
        {
            let control = up.join("cgroup.subtree_control");
            let enabled =
                std::fs::read_to_string(&control).with_context(|| format!("reading {}", control.display()))?;
            if !enabled.split_whitespace().any(|c| c == "cpu") {
                write_file(&control, "+cpu")
                    .with_context(|| format!("enabling the cpu controller: writing `+cpu` to {}", control.display()))?;
                self.subtree_enabled.push(up.to_path_buf());
            }
        }
        std::fs::create_dir(dir).with_context(|| format!("creating cgroup {}", dir.display()))?;
        self.created.push(dir.to_path_buf());
        Ok(())
    }

    fn target_dir(&self, target: CgTarget<'_>) -> anyhow::Result<PathBuf> {
        Ok(match target {
            CgTarget::HostRoot => self.root.clone(),
            CgTarget::Parent => self.parent.clone(),
            CgTarget::Group(path) => {
                let dir = group_components(path)?.iter().fold(self.parent.clone(), |dir, c| dir.join(c));
                if dir != self.parent && !self.created.contains(&dir) {
                    bail!("cgroup {path:?} was not created by this measurement (not in the scenario's groups)");
                }
                dir
            }
        })
    }

    /// Gives the scenario group `path` (created by `create`) its quota:
    /// the files of `bandwidth_files`, in order. A v1 burst needs
    /// `cpu.cfs_burst_us` (5.14+): refused, naming the file, when absent.
    pub fn set_bandwidth(&self, path: &str, b: &BandwidthSpec) -> anyhow::Result<()> {
        let dir = self.target_dir(CgTarget::Group(path))?;
        if dir == self.parent {
            bail!("cgroup {path:?}: the scenario's root group stands for the host's parent group; it takes no quota");
        }
        for (name, value) in bandwidth_files(self.v2, b) {
            let file = dir.join(name);
            if !file.exists() {
                bail!(
                    "cgroup {path:?}: {} does not exist: this kernel cannot apply {name} (a burst needs Linux \
                     5.14+, a quota CONFIG_CFS_BANDWIDTH)",
                    file.display()
                );
            }
            write_file(&file, &value)
                .with_context(|| format!("cgroup {path:?}: writing {value:?} to {}", file.display()))?;
        }
        Ok(())
    }

    /// The bandwidth counters of the scenario group `path`'s `cpu.stat`.
    pub fn read_cpu_stat(&self, path: &str) -> anyhow::Result<CpuStatCounts> {
        let file = self.target_dir(CgTarget::Group(path))?.join("cpu.stat");
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        parse_cpu_stat(&text, &file.display().to_string())
    }

    /// Moves a whole process (all its threads) into the target (`cgroup.procs`).
    pub fn move_process(&self, target: CgTarget<'_>, pid: u32) -> anyhow::Result<()> {
        let dir = self.target_dir(target)?;
        let mut moved = self.moved.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !moved.iter().any(|(moved, _)| *moved == pid) {
            let proc_cgroup = format!("/proc/{pid}/cgroup");
            let text = std::fs::read_to_string(&proc_cgroup)
                .with_context(|| format!("moving pid {pid}: reading {proc_cgroup} (no such process?)"))?;
            let relative = parse_proc_cgroup(&text, self.v2).unwrap_or_default();
            let origin = self.root.join(relative.trim_start_matches('/'));
            moved.push((pid, origin));
        }
        let procs = dir.join("cgroup.procs");
        write_file(&procs, &pid.to_string()).with_context(|| format!("moving pid {pid} into {}", procs.display()))
    }

    /// Moves any process still inside back to where it was (or the root),
    /// rmdirs deepest first, and takes back the `+cpu` it enabled (v2).
    pub fn remove(mut self) -> anyhow::Result<()> {
        self.removed = true;
        self.remove_all()
    }

    fn remove_all(&mut self) -> anyhow::Result<()> {
        let mut first_error = None;
        let moved = self.moved.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let destination = |pid: u32| -> PathBuf {
            moved
                .iter()
                .find(|(moved, _)| *moved == pid)
                .map(|(_, origin)| origin.clone())
                .filter(|origin| !origin.starts_with(&self.parent) && origin.is_dir())
                .unwrap_or_else(|| self.root.clone())
        };
        for dir in self.created.iter().rev() {
            let result = evacuate(dir, self.v2, &destination).and_then(|()| rmdir_retrying(dir));
            if let Err(error) = result {
                first_error.get_or_insert(error);
            }
        }
        for dir in self.subtree_enabled.iter().rev() {
            let control = dir.join("cgroup.subtree_control");
            if control.exists()
                && let Err(error) = write_file(&control, "-cpu")
            {
                first_error.get_or_insert(
                    anyhow::Error::from(error).context(format!(
                        "disabling the cpu controller again: writing `-cpu` to {}",
                        control.display()
                    )),
                );
            }
        }
        self.created.clear();
        self.subtree_enabled.clear();
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        if !self.removed
            && let Err(error) = self.remove_all()
        {
            eprintln!("warning: cleaning up cgroups under {}: {error:#}", self.parent.display());
        }
    }
}

/// Removes `schedlab-measure-<pid>` groups left by a process that no longer
/// exists (a SIGKILLed run); returns what it removed. Never touches a group
/// whose pid is alive.
pub fn remove_stale() -> anyhow::Result<Vec<PathBuf>> {
    match super::host::detect_cgroup(Path::new("/")) {
        CgroupVersion::V1 { cpu } => remove_stale_in(&cpu, false),
        CgroupVersion::V2 { root } => remove_stale_in(&root, true),
        CgroupVersion::None => Ok(Vec::new()),
    }
}

fn remove_stale_in(root: &Path, v2: bool) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(root).with_context(|| format!("listing stale cgroups in {}", root.display()))?;
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("listing stale cgroups in {}", root.display()))?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PARENT_PREFIX)).and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid_alive(pid) || !entry.path().is_dir() {
            continue;
        }
        // Children before parents: a post-order list of the subtree.
        let mut dirs = Vec::new();
        collect_dirs(&entry.path(), &mut dirs)?;
        for dir in &dirs {
            evacuate(dir, v2, &|_| root.to_path_buf())?;
            rmdir_retrying(dir)?;
        }
        removed.push(entry.path());
    }
    Ok(removed)
}

fn collect_dirs(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            collect_dirs(&entry.path(), out)?;
        }
    }
    out.push(dir.to_path_buf());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::host::tests::TempDir;
    use super::*;

    /// include/linux/threads.h PID_MAX_LIMIT is 4 194 304 on 64-bit: a pid
    /// above it never belongs to a live process.
    const DEAD_PID: u32 = 4_194_399;

    #[test]
    fn shares_to_weight_as_the_kernel_shows_it() {
        assert_eq!(shares_to_weight(2), 1);
        assert_eq!(shares_to_weight(1024), 100);
        assert_eq!(shares_to_weight(262_144), 10_000);
        assert_eq!(shares_to_weight(512), 50);
    }

    #[test]
    fn group_paths_and_proc_cgroup_lines() {
        assert_eq!(group_components("/a/b").expect("path"), vec!["a", "b"]);
        assert!(group_components("/").expect("root").is_empty());
        assert!(group_components("a").is_err());
        assert!(group_components("/a/../b").is_err());
        assert!(group_components("/cpu.shares").is_err());
        let text = "5:cpuacct:/\n4:cpu:/user.slice\n0::/init.scope\n";
        assert_eq!(parse_proc_cgroup(text, false).as_deref(), Some("/user.slice"));
        assert_eq!(parse_proc_cgroup(text, true).as_deref(), Some("/init.scope"));
        assert_eq!(parse_proc_cgroup("3:cpu,cpuacct:/x\n", false).as_deref(), Some("/x"));
    }

    #[test]
    fn remove_stale_in_a_fake_tree_spares_the_living() {
        let tree = TempDir::new("stale-cgroups");
        let dead = tree.0.join(format!("{PARENT_PREFIX}{DEAD_PID}"));
        let live = tree.0.join(format!("{PARENT_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(dead.join("a/b")).expect("mkdir");
        std::fs::create_dir_all(live.join("a")).expect("mkdir");
        std::fs::create_dir_all(tree.0.join("other")).expect("mkdir");
        let removed = remove_stale_in(&tree.0, false).expect("remove_stale");
        assert_eq!(removed, vec![dead.clone()]);
        assert!(!dead.exists());
        assert!(live.join("a").is_dir());
        assert!(tree.0.join("other").is_dir());
    }

    #[test]
    fn quota_file_values_v1_and_v2() {
        let b = BandwidthSpec { quota_ns: Some(50_000_000), period_ns: 100_000_000, burst_ns: 0 };
        assert_eq!(
            bandwidth_files(false, &b),
            vec![("cpu.cfs_period_us", "100000".to_string()), ("cpu.cfs_quota_us", "50000".to_string())]
        );
        assert_eq!(bandwidth_files(true, &b), vec![("cpu.max", "50000 100000".to_string())]);
        let burst = BandwidthSpec { quota_ns: Some(20_000_000), period_ns: 10_000_000, burst_ns: 5_000_000 };
        assert_eq!(bandwidth_files(false, &burst)[2], ("cpu.cfs_burst_us", "5000".to_string()));
        assert_eq!(
            bandwidth_files(true, &burst),
            vec![("cpu.max", "20000 10000".to_string()), ("cpu.max.burst", "5000".to_string())]
        );
        let unlimited = BandwidthSpec { quota_ns: None, period_ns: 250_000_000, burst_ns: 0 };
        assert_eq!(bandwidth_files(true, &unlimited)[0].1, "max 250000");
        assert_eq!(bandwidth_files(false, &unlimited)[1].1, "-1");
    }

    #[test]
    fn quota_written_into_a_fake_v1_tree() {
        let tree = TempDir::new("quota-files");
        let groups = vec![("/pod".to_string(), 1024)];
        let mut cgroups = Cgroups::create_at(&tree.0, false, "p", &groups).expect("create in a fake tree");
        let dir = tree.0.join("p/pod");
        // A fake v1 group has the files a real one shows (a real kernel creates them).
        for f in ["cpu.cfs_period_us", "cpu.cfs_quota_us"] {
            std::fs::write(dir.join(f), "x").expect("seed file");
        }
        let b = BandwidthSpec { quota_ns: Some(50_000_000), period_ns: 100_000_000, burst_ns: 0 };
        cgroups.set_bandwidth("/pod", &b).expect("set quota");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("read back");
        assert_eq!((read("cpu.cfs_period_us"), read("cpu.cfs_quota_us")), ("100000".into(), "50000".into()));
        assert_eq!(read("cpu.shares"), "1024");
        // A burst without cpu.cfs_burst_us (before 5.14) is refused, naming the file.
        let burst = BandwidthSpec { burst_ns: 10_000_000, ..b };
        let e = format!("{:#}", cgroups.set_bandwidth("/pod", &burst).expect_err("no burst file"));
        assert!(e.contains("cpu.cfs_burst_us") && e.contains("does not exist"), "{e}");
        assert!(cgroups.set_bandwidth("/", &b).is_err(), "the root takes no quota");
        assert!(cgroups.set_bandwidth("/other", &b).is_err(), "not created here");
        std::fs::write(dir.join("cpu.stat"), "nr_periods 7\nnr_throttled 3\nthrottled_time 9000\n").expect("stat");
        let st = cgroups.read_cpu_stat("/pod").expect("read cpu.stat");
        assert_eq!((st.nr_periods, st.nr_throttled, st.throttled_time_ns), (7, 3, 9000));
        // Not a real hierarchy: the temp dir goes with its files.
        cgroups.removed = true;
    }

    #[test]
    fn cpu_stat_v1_and_v2_text() {
        let v1 = "nr_periods 120\nnr_throttled 45\nthrottled_time 2250000000\nnr_bursts 2\nburst_time 3000000\n";
        let c = parse_cpu_stat(v1, "cpu.stat").expect("v1");
        assert_eq!(
            c,
            CpuStatCounts {
                nr_periods: 120,
                nr_throttled: 45,
                throttled_time_ns: 2_250_000_000,
                nr_bursts: 2,
                burst_time_ns: 3_000_000
            }
        );
        // 5.4-era v1: no burst lines.
        let old = parse_cpu_stat("nr_periods 1\nnr_throttled 0\nthrottled_time 0\n", "f").expect("old v1");
        assert_eq!((old.nr_bursts, old.burst_time_ns), (0, 0));
        let v2 = "usage_usec 5000000\nuser_usec 4900000\nsystem_usec 100000\ncore_sched.force_idle_usec 0\n\
                  nr_periods 50\nnr_throttled 25\nthrottled_usec 1250000\nnr_bursts 1\nburst_usec 700\n";
        let c = parse_cpu_stat(v2, "cpu.stat").expect("v2");
        assert_eq!((c.nr_periods, c.nr_throttled, c.throttled_time_ns), (50, 25, 1_250_000_000));
        assert_eq!((c.nr_bursts, c.burst_time_ns), (1, 700_000));
        // The difference over a run.
        let before = CpuStatCounts { nr_periods: 10, nr_throttled: 5, throttled_time_ns: 1_000, ..Default::default() };
        assert_eq!(c.since(&before).nr_periods, 40);
        assert_eq!(c.since(&before).throttled_time_ns, 1_249_999_000);
        // Without bandwidth lines (no CONFIG_CFS_BANDWIDTH), or with garbage: an error naming the file.
        let e = parse_cpu_stat("usage_usec 5\n", "/x/cpu.stat").expect_err("missing").to_string();
        assert!(e.contains("/x/cpu.stat") && e.contains("CONFIG_CFS_BANDWIDTH"), "{e}");
        let e = parse_cpu_stat("nr_periods many\n", "f").expect_err("garbage").to_string();
        assert!(e.contains("nr_periods") && e.contains("many"), "{e}");
        assert!(parse_cpu_stat("nr_periods 1 2\n", "f").is_err());
    }

    fn host_cgroups_or_skip() -> Option<HostInfo> {
        let host = match super::super::host::probe() {
            Ok(host) => host,
            Err(error) => {
                println!("SKIPPED: host probe failed: {error:#}");
                return None;
            }
        };
        if !rustix::process::geteuid().is_root() {
            println!("SKIPPED: not root");
            return None;
        }
        if let Err(why) = Cgroups::check_permission(&host) {
            println!("SKIPPED: {why}");
            return None;
        }
        Some(host)
    }

    fn cgroup_of(pid: u32, v2: bool) -> String {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("read /proc/pid/cgroup");
        parse_proc_cgroup(&text, v2).expect("cgroup line")
    }

    #[test]
    fn host_create_move_remove() {
        let Some(host) = host_cgroups_or_skip() else { return };
        let (root, v2) = hierarchy(&host.cgroup).expect("hierarchy");
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("spawn sleep");
        let before = cgroup_of(child.id(), v2);
        let groups = vec![("/a".to_string(), 2048), ("/a/b".to_string(), 512)];
        let cgroups = Cgroups::create(&host, &groups).expect("create");
        let parent = cgroups.parent.clone();
        let (file, a, b) = if v2 { ("cpu.weight", "200", "50") } else { ("cpu.shares", "2048", "512") };
        let read = |dir: &Path| std::fs::read_to_string(dir.join(file)).expect("read weight").trim().to_string();
        assert_eq!(read(&parent.join("a")), a);
        assert_eq!(read(&parent.join("a/b")), b);
        cgroups.move_process(CgTarget::Group("/a/b"), child.id()).expect("move");
        let inside = cgroup_of(child.id(), v2);
        assert!(inside.ends_with(&format!("{PARENT_PREFIX}{}/a/b", std::process::id())), "{inside}");
        assert!(cgroups.move_process(CgTarget::Group("/nope"), child.id()).is_err());
        let removed = cgroups.remove();
        let after = cgroup_of(child.id(), v2);
        let _ = child.kill();
        let _ = child.wait();
        removed.expect("remove");
        assert_eq!(after, before, "the child must be moved back before rmdir");
        assert!(!parent.exists(), "{} must be gone", parent.display());
        assert!(root.is_dir());
    }

    #[test]
    fn host_quota_written_and_cpu_stat_read() {
        let Some(host) = host_cgroups_or_skip() else { return };
        let (root, v2) = hierarchy(&host.cgroup).expect("hierarchy");
        // Its own parent name: host_create_move_remove may hold `schedlab-measure-<pid>` meanwhile.
        let name = format!("{PARENT_PREFIX}{}-quota", std::process::id());
        let cgroups = Cgroups::create_at(&root, v2, &name, &[("/q".to_string(), 1024)]).expect("create");
        let dir = cgroups.parent.join("q");
        let b = BandwidthSpec { quota_ns: Some(30_000_000), period_ns: 60_000_000, burst_ns: 0 };
        cgroups.set_bandwidth("/q", &b).expect("set quota");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("read back").trim().to_string();
        if v2 {
            assert_eq!(read("cpu.max"), "30000 60000");
        } else {
            assert_eq!((read("cpu.cfs_quota_us"), read("cpu.cfs_period_us")), ("30000".into(), "60000".into()));
        }
        // A fresh group has counted nothing.
        assert_eq!(cgroups.read_cpu_stat("/q").expect("cpu.stat"), CpuStatCounts::default());
        cgroups.remove().expect("remove");
        assert!(!dir.exists());
    }

    #[test]
    fn host_remove_stale_on_a_dead_pid() {
        let Some(host) = host_cgroups_or_skip() else { return };
        let (root, _) = hierarchy(&host.cgroup).expect("hierarchy");
        let dead = root.join(format!("{PARENT_PREFIX}{DEAD_PID}"));
        std::fs::create_dir_all(dead.join("x/y")).expect("mkdir stale cgroups");
        let removed = remove_stale().expect("remove_stale");
        assert!(removed.contains(&dead), "{removed:?}");
        assert!(!dead.exists());
        // Our own (live) pid is never touched: nothing named after it is removed.
        let ours = root.join(format!("{PARENT_PREFIX}{}", std::process::id()));
        assert!(!removed.contains(&ours));
    }
}
