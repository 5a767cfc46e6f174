//! The scenario's scheduler tunables on the real kernel: where each one lives
//! on the running kernel (or why it cannot be set there), and a guard that
//! changes them and always puts the old values back — on `restore`, on drop,
//! or, after a SIGKILL, from the journal it wrote before changing anything
//! (`restore_stale` on the next run).
//!
//! History of the knobs (the model is 4.4 CFS):
//! - before 5.13: /proc/sys/kernel/sched_* (CONFIG_SCHED_DEBUG), features in
//!   debugfs `sched_features`;
//! - 5.13: commit 8a99b6833c88 "sched: Move SCHED_DEBUG sysctl to debugfs"
//!   moved them to /sys/kernel/debug/sched/{latency_ns, min_granularity_ns,
//!   wakeup_granularity_ns, tunable_scaling, features};
//! - 6.6 (EEVDF): commit e4ec3318a17f "sched/debug: Rename
//!   sysctl_sched_min_granularity to sysctl_sched_base_slice" made
//!   min_granularity_ns `base_slice_ns`, and commit 5e963f2bd465
//!   "sched/fair: Commit to EEVDF" removed latency_ns and
//!   wakeup_granularity_ns.
//!
//! The EEVDF models' `base_slice_ns` is the 6.6+ debugfs file of that name,
//! and their features are in the same debugfs `features` file.
//!
//! `sched_autogroup_enabled` stays in /proc/sys/kernel (kernel/sched/autogroup.c),
//! as do the RT class's `sched_rt_runtime_us`, `sched_rt_period_us` (since
//! 2.6.25) and `sched_rr_timeslice_ms` (since 3.9; 6.18 rt.c:sched_rt_sysctls).
//! The 6.12+ fair servers are per CPU in debugfs,
//! `sched/fair_server/cpuN/{runtime,period}` in ns (6.18
//! debug.c:debugfs_fair_server_init), named here `fair_server:cpuN:runtime`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context as _, anyhow, bail};
use serde::{Deserialize, Serialize};

use super::debugfs::{DEBUGFS, DebugfsMount};
use super::host::HostInfo;

const PROC_KERNEL: &str = "/proc/sys/kernel";
/// Where journals go; the temp dir's `schedlab` if /run is not writable.
const JOURNAL_DIR: &str = "/run/schedlab";

/// The file for a scenario name on a kernel of `version`, before checking that
/// it exists. Errs for names the kernel does not have.
fn kernel_path(name: &str, version: (u32, u32)) -> Result<PathBuf, String> {
    let debugfs_sched = version >= (5, 13);
    let eevdf = version >= (6, 6);
    let (major, minor) = version;
    let proc_path = |file: &str| Path::new(PROC_KERNEL).join(file);
    let debug_path = |file: &str| Path::new(DEBUGFS).join("sched").join(file);
    if let Some(feature) = name.strip_prefix("feature:") {
        if feature.is_empty() || !feature.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
            return Err(format!(
                "{name}: a sched feature name is upper case letters, digits and `_` (like feature:GENTLE_FAIR_SLEEPERS)"
            ));
        }
        return Ok(if debugfs_sched { debug_path("features") } else { Path::new(DEBUGFS).join("sched_features") });
    }
    if let Some(rest) = name.strip_prefix("fair_server:") {
        let parsed = rest.split_once(':').and_then(|(cpu, file)| {
            let n: u16 = cpu.strip_prefix("cpu")?.parse().ok()?;
            ["runtime", "period"].contains(&file).then_some((n, file))
        });
        let Some((cpu, file)) = parsed else {
            return Err(format!(
                "{name}: a fair server setting is fair_server:cpuN:runtime or fair_server:cpuN:period"
            ));
        };
        if version < (6, 12) {
            return Err(format!(
                "{name}: Linux {major}.{minor} has no fair server (it came with 6.12: fair.c:fair_server_init), so \
                 the scenario's value cannot be applied here"
            ));
        }
        return Ok(debug_path("fair_server").join(format!("cpu{cpu}")).join(file));
    }
    match name {
        "sched_autogroup_enabled" | "sched_rt_runtime_us" | "sched_rt_period_us" | "sched_rr_timeslice_ms" => {
            Ok(proc_path(name))
        }
        // The EEVDF base slice (6.6+ debug.c:sched_init_debug, a plain u32).
        "base_slice_ns" if eevdf => Ok(debug_path(name)),
        "base_slice_ns" => Err(format!(
            "base_slice_ns does not exist on Linux {major}.{minor} (CFS): the EEVDF base slice came with 6.6 \
             (commit e4ec3318a17f), so the scenario's value cannot be applied here"
        )),
        "sched_latency_ns" | "sched_wakeup_granularity_ns" if eevdf => {
            let why = if name == "sched_latency_ns" {
                "has no latency target; a task's slice is base_slice_ns"
            } else {
                "preempts on eligibility and deadline, not on a wake-up granularity"
            };
            Err(format!(
                "{name} does not exist on Linux {major}.{minor} (EEVDF, 6.6+, {why}); it was removed by commit \
                 5e963f2bd465 \"sched/fair: Commit to EEVDF\", so the scenario's value cannot be applied here"
            ))
        }
        "sched_latency_ns" | "sched_wakeup_granularity_ns" | "sched_min_granularity_ns" | "sched_tunable_scaling" => {
            if !debugfs_sched {
                return Ok(proc_path(name));
            }
            let file = match name {
                // e4ec3318a17f: the same knob, now the EEVDF request size.
                "sched_min_granularity_ns" if eevdf => "base_slice_ns",
                "sched_tunable_scaling" => "tunable_scaling",
                other => other.trim_start_matches("sched_"),
            };
            Ok(debug_path(file))
        }
        other => Err(format!(
            "{other}: not a scheduler setting schedlab knows (sched_latency_ns, sched_min_granularity_ns, \
             sched_wakeup_granularity_ns, sched_tunable_scaling, base_slice_ns, sched_autogroup_enabled, \
             sched_rt_runtime_us, sched_rt_period_us, sched_rr_timeslice_ms, fair_server:cpuN:runtime|period, \
             feature:NAME)"
        )),
    }
}

/// Where a scenario setting lives on THIS kernel, or why it cannot be set.
/// `sched_min_granularity_ns` maps to `base_slice_ns` on 6.6+ (renamed, and
/// its meaning changed: the EEVDF request size, not a minimum). debugfs files
/// are checked by reading them (debugfs is mounted for the check if it was
/// not, and unmounted again).
pub fn locate(name: &str, host: &HostInfo) -> Result<PathBuf, String> {
    let path = kernel_path(name, host.kernel_version)?;
    let (major, minor) = host.kernel_version;
    if !path.starts_with(DEBUGFS) {
        return if path.exists() {
            Ok(path)
        } else {
            Err(format!(
                "{name}: {} does not exist on Linux {major}.{minor} (kernel built without {})",
                path.display(),
                match name {
                    "sched_autogroup_enabled" => "CONFIG_SCHED_AUTOGROUP",
                    n if n.starts_with("sched_r") => "CONFIG_SYSCTL",
                    _ => "CONFIG_SCHED_DEBUG",
                }
            ))
        };
    }
    let _mount = DebugfsMount::ensure().map_err(|error| format!("{name}: {error:#}"))?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(format!(
                "{name}: reading {} was refused ({error}): kernel lockdown restricts debugfs on this host \
                 (dmesg shows \"Lockdown: … debugfs access is restricted\"); it cannot be set without booting \
                 with lockdown off",
                path.display()
            ));
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{name}: {} does not exist on Linux {major}.{minor} (kernel built without CONFIG_SCHED_DEBUG?)",
                path.display()
            ));
        }
        Err(error) => return Err(format!("{name}: reading {}: {error}", path.display())),
    };
    if let Some(feature) = name.strip_prefix("feature:")
        && feature_state(&text, feature).is_none()
    {
        return Err(format!(
            "{name}: Linux {major}.{minor} has no sched feature {feature} (its features: {})",
            text.trim()
        ));
    }
    Ok(path)
}

/// True for the sched features file, which is written one `NAME` / `NO_NAME`
/// at a time (kernel/sched/debug.c sched_feat_write) and read as a list.
fn is_features_file(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == "features" || name == "sched_features")
}

/// The token (`NAME` or `NO_NAME`) for `feature` in a features listing.
fn feature_state<'a>(listing: &'a str, feature: &str) -> Option<&'a str> {
    listing.split_whitespace().find(|token| token.strip_prefix("NO_").unwrap_or(token) == feature)
}

/// The current value in the form that writing it back restores: for the
/// features file, the state of the feature `new_value` names.
fn read_current(path: &Path, new_value: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    if is_features_file(path) {
        let feature = new_value.trim();
        let feature = feature.strip_prefix("NO_").unwrap_or(feature);
        return feature_state(&text, feature)
            .map(str::to_string)
            .ok_or_else(|| anyhow!("{}: no sched feature {feature}", path.display()));
    }
    Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Writes and reads back: the kernel may clamp or refuse silently.
fn write_checked(path: &Path, value: &str) -> anyhow::Result<()> {
    std::fs::write(path, value).with_context(|| format!("writing {value:?} to {}", path.display()))?;
    let now = read_current(path, value)?;
    let wanted = value.split_whitespace().collect::<Vec<_>>().join(" ");
    if now != wanted {
        bail!("wrote {value:?} to {} but it reads back {now:?}", path.display());
    }
    Ok(())
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Saved {
    path: PathBuf,
    old: String,
}

/// What `restore_stale` needs if this process dies without restoring.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    pid: u32,
    mounted_debugfs: bool,
    entries: Vec<Saved>,
}

/// Settings changed by `apply`; the old values come back on `restore` or drop.
#[derive(Debug)]
pub struct SysctlGuard {
    saved: Vec<Saved>,
    journal: Option<PathBuf>,
    journal_dir: Option<PathBuf>,
    debugfs: Option<DebugfsMount>,
    restored: bool,
}

fn journal_dir() -> PathBuf {
    let run = PathBuf::from(JOURNAL_DIR);
    if std::fs::create_dir_all(&run).is_ok() && rustix::fs::access(&run, rustix::fs::Access::WRITE_OK).is_ok() {
        run
    } else {
        std::env::temp_dir().join("schedlab")
    }
}

fn write_journal(dir: &Path, journal: &Journal) -> anyhow::Result<PathBuf> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    std::fs::create_dir_all(dir).with_context(|| format!("creating the sysctl journal dir {}", dir.display()))?;
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let path = dir.join(format!("sysctl-{}-{n}.json", journal.pid));
    let partial = path.with_extension("json.partial");
    let text = serde_json::to_string_pretty(journal).context("encoding the sysctl journal")?;
    std::fs::write(&partial, text).with_context(|| format!("writing the sysctl journal {}", partial.display()))?;
    std::fs::rename(&partial, &path).with_context(|| format!("writing the sysctl journal {}", path.display()))?;
    Ok(path)
}

/// Writes each old value back, newest change first; returns the first error
/// after trying them all.
fn restore_entries(entries: &[Saved]) -> anyhow::Result<()> {
    let mut first_error = None;
    for saved in entries.iter().rev() {
        if let Err(error) = write_checked(&saved.path, &saved.old) {
            first_error.get_or_insert(error.context(format!("restoring {}", saved.path.display())));
        }
    }
    first_error.map_or(Ok(()), Err)
}

impl SysctlGuard {
    /// Reads each old value, writes the new one; on failure restores what it
    /// already set and errors. Writes a journal (/run/schedlab/sysctl-<pid>-<n>.json,
    /// else in the temp dir) of the old values before changing anything, and
    /// mounts debugfs if a path needs it (unmounted on restore).
    pub fn apply(settings: &[(PathBuf, String)]) -> anyhow::Result<SysctlGuard> {
        SysctlGuard::apply_journaled(settings, &journal_dir())
    }

    fn apply_journaled(settings: &[(PathBuf, String)], dir: &Path) -> anyhow::Result<SysctlGuard> {
        let mut guard =
            SysctlGuard { saved: Vec::new(), journal: None, journal_dir: None, debugfs: None, restored: false };
        if settings.is_empty() {
            return Ok(guard);
        }
        if settings.iter().any(|(path, _)| path.starts_with(DEBUGFS)) {
            guard.debugfs = Some(DebugfsMount::ensure().context("applying scheduler settings")?);
        }
        let mut old = Vec::new();
        for (path, value) in settings {
            let current = read_current(path, value).context("applying scheduler settings: saving the old value")?;
            old.push(Saved { path: path.clone(), old: current });
        }
        let journal = Journal {
            pid: std::process::id(),
            mounted_debugfs: guard.debugfs.is_some() && DebugfsMount::mounted_by_this_process(),
            entries: old.clone(),
        };
        guard.journal = Some(write_journal(dir, &journal)?);
        guard.journal_dir = Some(dir.to_path_buf());
        for ((path, value), saved) in settings.iter().zip(old) {
            // Saved before the write: a write that lands but reads back
            // clamped is undone too (restoring an unchanged value is harmless).
            guard.saved.push(saved);
            if let Err(error) = write_checked(path, value) {
                // A refused write left the value as it was: nothing to undo there.
                if guard.saved.last().is_some_and(|last| read_current(path, value).is_ok_and(|now| now == last.old)) {
                    guard.saved.pop();
                }
                let undo = guard.restore_inner();
                guard.restored = true;
                let error = error.context("applying scheduler settings");
                return Err(match undo {
                    Ok(()) => error.context("(the settings already changed were restored)"),
                    Err(undo) => error.context(format!("and restoring the others failed: {undo:#}")),
                });
            }
        }
        Ok(guard)
    }

    /// Writes the old values back, removes the journal and unmounts debugfs
    /// if `apply` mounted it.
    pub fn restore(mut self) -> anyhow::Result<()> {
        self.restored = true;
        self.restore_inner()
    }

    fn restore_inner(&mut self) -> anyhow::Result<()> {
        let mut result = restore_entries(&self.saved);
        // Keep the journal if a value could not be restored: restore_stale
        // retries it once this process is gone.
        if result.is_ok()
            && let Some(journal) = self.journal.take()
            && let Err(error) = std::fs::remove_file(&journal)
        {
            result = Err(anyhow::Error::from(error).context(format!("removing the journal {}", journal.display())));
        } else if result.is_ok()
            && let Some(dir) = self.journal_dir.take()
        {
            // Leave no empty /run/schedlab behind; fails harmlessly while
            // another run's journal is in it.
            let _ = std::fs::remove_dir(dir);
        }
        if let Some(mut mount) = self.debugfs.take()
            && let Err(error) = mount.unmount()
            && result.is_ok()
        {
            result = Err(error);
        }
        self.saved.clear();
        result
    }
}

impl Drop for SysctlGuard {
    fn drop(&mut self) {
        if !self.restored
            && let Err(error) = self.restore_inner()
        {
            eprintln!("warning: restoring scheduler settings: {error:#}");
        }
    }
}

/// Restores values from journals of dead processes (SIGKILLed runs); returns
/// what it restored (`path = value`).
pub fn restore_stale() -> anyhow::Result<Vec<String>> {
    let mut restored = Vec::new();
    let mut dirs = vec![PathBuf::from(JOURNAL_DIR), std::env::temp_dir().join("schedlab")];
    dirs.dedup();
    for dir in dirs {
        restored.extend(restore_stale_in(&dir)?);
    }
    Ok(restored)
}

/// The pid in `sysctl-<pid>-<n>.json` (or `sysctl-<pid>.json`).
fn journal_pid(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_prefix("sysctl-")?.strip_suffix(".json")?;
    stem.split('-').next()?.parse().ok()
}

fn restore_stale_in(dir: &Path) -> anyhow::Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).with_context(|| format!("listing sysctl journals in {}", dir.display())),
    };
    let mut restored = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("listing sysctl journals in {}", dir.display()))?;
        let Some(pid) = entry.file_name().to_str().and_then(journal_pid) else {
            continue;
        };
        if Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let journal: Journal = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a schedlab sysctl journal", path.display()))?;
        let needs_debugfs = journal.entries.iter().any(|saved| saved.path.starts_with(DEBUGFS));
        let mut mount = if needs_debugfs { Some(DebugfsMount::ensure()?) } else { None };
        if let Some(mount) = mount.as_mut() {
            // The dead run mounted it: leave the host as it found it.
            mount.unmount_anyway = journal.mounted_debugfs;
        }
        restore_entries(&journal.entries).with_context(|| format!("restoring from {}", path.display()))?;
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        if let Some(mut mount) = mount {
            mount.unmount()?;
        }
        restored.extend(journal.entries.iter().map(|saved| {
            format!("{} = {} (from {} of dead pid {pid})", saved.path.display(), saved.old, path.display())
        }));
    }
    if !restored.is_empty() {
        // Fails harmlessly while other journals remain.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(restored)
}

#[cfg(test)]
mod tests {
    use super::super::host::tests::TempDir;
    use super::*;

    #[test]
    fn knob_paths_across_kernel_history() {
        let path = |name, version| kernel_path(name, version).map(|p| p.display().to_string());
        assert_eq!(path("sched_latency_ns", (4, 4)).as_deref(), Ok("/proc/sys/kernel/sched_latency_ns"));
        assert_eq!(path("sched_latency_ns", (5, 15)).as_deref(), Ok("/sys/kernel/debug/sched/latency_ns"));
        let gone = path("sched_latency_ns", (6, 18)).expect_err("no latency on EEVDF");
        assert!(gone.starts_with("sched_latency_ns does not exist on Linux 6.18 (EEVDF, 6.6+"), "{gone}");
        assert!(path("sched_wakeup_granularity_ns", (6, 6)).is_err());
        assert_eq!(
            path("sched_wakeup_granularity_ns", (6, 5)).as_deref(),
            Ok("/sys/kernel/debug/sched/wakeup_granularity_ns")
        );
        assert_eq!(path("sched_min_granularity_ns", (6, 18)).as_deref(), Ok("/sys/kernel/debug/sched/base_slice_ns"));
        assert_eq!(
            path("sched_min_granularity_ns", (6, 1)).as_deref(),
            Ok("/sys/kernel/debug/sched/min_granularity_ns")
        );
        assert_eq!(path("sched_tunable_scaling", (6, 18)).as_deref(), Ok("/sys/kernel/debug/sched/tunable_scaling"));
        assert_eq!(path("base_slice_ns", (6, 6)).as_deref(), Ok("/sys/kernel/debug/sched/base_slice_ns"));
        let cfs = path("base_slice_ns", (6, 5)).expect_err("no base slice before EEVDF");
        assert!(cfs.contains("Linux 6.5") && cfs.contains("6.6"), "{cfs}");
        assert_eq!(path("sched_tunable_scaling", (5, 4)).as_deref(), Ok("/proc/sys/kernel/sched_tunable_scaling"));
        assert_eq!(path("feature:PLACE_LAG", (6, 18)).as_deref(), Ok("/sys/kernel/debug/sched/features"));
        assert_eq!(path("feature:START_DEBIT", (4, 4)).as_deref(), Ok("/sys/kernel/debug/sched_features"));
        assert!(path("feature:bad name", (6, 18)).is_err());
        assert_eq!(path("sched_autogroup_enabled", (6, 18)).as_deref(), Ok("/proc/sys/kernel/sched_autogroup_enabled"));
        assert!(path("sched_nr_migrate", (4, 4)).is_err());
        assert_eq!(path("sched_rt_runtime_us", (4, 4)).as_deref(), Ok("/proc/sys/kernel/sched_rt_runtime_us"));
        assert_eq!(path("sched_rt_period_us", (6, 18)).as_deref(), Ok("/proc/sys/kernel/sched_rt_period_us"));
        assert_eq!(path("sched_rr_timeslice_ms", (6, 18)).as_deref(), Ok("/proc/sys/kernel/sched_rr_timeslice_ms"));
        assert_eq!(
            path("fair_server:cpu3:runtime", (6, 12)).as_deref(),
            Ok("/sys/kernel/debug/sched/fair_server/cpu3/runtime")
        );
        assert_eq!(
            path("fair_server:cpu0:period", (6, 18)).as_deref(),
            Ok("/sys/kernel/debug/sched/fair_server/cpu0/period")
        );
        let old = path("fair_server:cpu0:runtime", (6, 6)).expect_err("no fair server on 6.6");
        assert!(old.contains("6.12"), "{old}");
        assert!(path("fair_server:cpu0:deadline", (6, 18)).is_err());
        assert!(path("fair_server:0:runtime", (6, 18)).is_err());
    }

    #[test]
    fn feature_tokens() {
        let listing = "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY\n";
        assert_eq!(feature_state(listing, "NEXT_BUDDY"), Some("NO_NEXT_BUDDY"));
        assert_eq!(feature_state(listing, "START_DEBIT"), Some("START_DEBIT"));
        assert_eq!(feature_state(listing, "BUDDY"), None);
        assert_eq!(journal_pid("sysctl-123-4.json"), Some(123));
        assert_eq!(journal_pid("sysctl-123.json"), Some(123));
        assert_eq!(journal_pid("sysctl-123-4.json.partial"), None);
    }

    #[test]
    fn apply_restore_round_trip_on_plain_files() {
        let tree = TempDir::new("sysctl");
        tree.write("knob_a", "1\n");
        tree.write("knob_b", "6000000\n");
        let journals = tree.0.join("journals");
        let settings = vec![(tree.0.join("knob_a"), "0".to_string()), (tree.0.join("knob_b"), "3000000".to_string())];
        let guard = SysctlGuard::apply_journaled(&settings, &journals).expect("apply");
        assert_eq!(std::fs::read_to_string(tree.0.join("knob_a")).expect("read"), "0");
        assert_eq!(std::fs::read_to_string(tree.0.join("knob_b")).expect("read"), "3000000");
        let journal = guard.journal.clone().expect("journal");
        let text = std::fs::read_to_string(&journal).expect("journal written");
        assert!(text.contains("6000000"), "{text}");
        guard.restore().expect("restore");
        assert_eq!(std::fs::read_to_string(tree.0.join("knob_a")).expect("read"), "1");
        assert_eq!(std::fs::read_to_string(tree.0.join("knob_b")).expect("read"), "6000000");
        assert!(!journal.exists());
    }

    #[test]
    fn a_failed_write_restores_what_was_already_set() {
        let tree = TempDir::new("sysctl-fail");
        tree.write("knob_a", "1\n");
        let journals = tree.0.join("journals");
        // /proc/version reads fine, takes no writes, and does not change
        // between reads (/proc/self/stat did: its CPU times move, so the
        // refused write looked like a change to undo, and the undo failed).
        let settings =
            vec![(tree.0.join("knob_a"), "0".to_string()), (PathBuf::from("/proc/version"), "1".to_string())];
        let error = SysctlGuard::apply_journaled(&settings, &journals).expect_err("the second write fails");
        assert!(format!("{error:#}").contains("/proc/version"), "{error:#}");
        assert_eq!(std::fs::read_to_string(tree.0.join("knob_a")).expect("read"), "1");
        // The journal and its then empty dir are gone.
        assert!(!journals.exists(), "journal must be removed");
    }

    #[test]
    fn restore_stale_uses_journals_of_dead_pids_only() {
        let tree = TempDir::new("sysctl-stale");
        tree.write("knob", "99\n");
        let dead_pid = 4_194_399; // above PID_MAX_LIMIT (include/linux/threads.h): never alive
        let journal = Journal {
            pid: dead_pid,
            mounted_debugfs: false,
            entries: vec![Saved { path: tree.0.join("knob"), old: "7".to_string() }],
        };
        let dead = write_journal(&tree.0, &journal).expect("journal");
        let live = write_journal(&tree.0, &Journal { pid: std::process::id(), ..journal }).expect("journal");
        let restored = restore_stale_in(&tree.0).expect("restore_stale");
        assert_eq!(restored.len(), 1, "{restored:?}");
        assert_eq!(std::fs::read_to_string(tree.0.join("knob")).expect("read"), "7");
        assert!(!dead.exists());
        assert!(live.exists(), "a live pid's journal is not touched");
    }

    #[test]
    fn host_autogroup_round_trip_and_no_latency_on_eevdf() {
        let host = match super::super::host::probe() {
            Ok(host) => host,
            Err(error) => return println!("SKIPPED: host probe failed: {error:#}"),
        };
        if host.kernel_version >= (6, 6) {
            let error = locate("sched_latency_ns", &host).expect_err("EEVDF has no latency_ns");
            assert!(error.contains("EEVDF"), "{error}");
        }
        // On a locked-down kernel this errs naming lockdown.
        let feature = locate("feature:PLACE_LAG", &host);
        println!("locate(feature:PLACE_LAG) = {feature:?}");
        if !rustix::process::geteuid().is_root() {
            return println!("SKIPPED: autogroup round trip needs root");
        }
        let path = match locate("sched_autogroup_enabled", &host) {
            Ok(path) => path,
            Err(why) => return println!("SKIPPED: {why}"),
        };
        let current = std::fs::read_to_string(&path).expect("read autogroup").trim().to_string();
        let guard = SysctlGuard::apply(&[(path.clone(), current.clone())]).expect("apply");
        let journal = guard.journal.clone().expect("journal");
        assert!(journal.exists());
        guard.restore().expect("restore");
        assert_eq!(std::fs::read_to_string(&path).expect("read").trim(), current);
        assert!(!journal.exists(), "journal {} must be removed", journal.display());
    }
}
