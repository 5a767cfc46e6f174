//! debugfs at /sys/kernel/debug, mounted for as long as a `DebugfsMount`
//! lives: the host probe reads the scheduler's debug files through it, and
//! the sysctl guard writes the 5.13+ tunables and features there. A leaf of
//! `measure`, so the probe and the guard do not import each other.

use anyhow::{Context as _, bail};
use std::sync::Mutex;

/// Where debugfs is mounted.
pub(super) const DEBUGFS: &str = "/sys/kernel/debug";

fn proc_mounts_has_debugfs() -> bool {
    std::fs::read_to_string("/proc/mounts").is_ok_and(|mounts| {
        mounts.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&DEBUGFS) && fields.get(2) == Some(&"debugfs")
        })
    })
}

/// Users of debugfs in this process, and whether this process mounted it:
/// threads (and parallel tests) share one mount, unmounted by the last user.
static DEBUGFS_USERS: Mutex<(usize, bool)> = Mutex::new((0, false));

/// debugfs at /sys/kernel/debug for as long as this lives; unmounted when the
/// last guard of this process goes, and only if this process mounted it.
/// `mount(8)` because rustix's mount feature is not enabled in the workspace.
#[derive(Debug)]
pub(super) struct DebugfsMount {
    /// False once `unmount` ran, so Drop does nothing more.
    held: bool,
    /// Unmount at the end even if this process did not mount it (a dead
    /// run's journal says that run mounted it).
    pub(super) unmount_anyway: bool,
}

impl DebugfsMount {
    pub(super) fn ensure() -> anyhow::Result<DebugfsMount> {
        let mut users = DEBUGFS_USERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if users.0 == 0 && !proc_mounts_has_debugfs() {
            let status = std::process::Command::new("mount")
                .args(["-t", "debugfs", "debugfs", DEBUGFS])
                .status()
                .with_context(|| format!("mounting debugfs at {DEBUGFS}: running mount(8)"))?;
            if !status.success() {
                bail!("mounting debugfs at {DEBUGFS} failed ({status}); are we root?");
            }
            users.1 = true;
        }
        users.0 += 1;
        Ok(DebugfsMount { held: true, unmount_anyway: false })
    }

    /// Whether this process mounted debugfs (recorded in the journal).
    pub(super) fn mounted_by_this_process() -> bool {
        DEBUGFS_USERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).1
    }

    pub(super) fn unmount(&mut self) -> anyhow::Result<()> {
        if !std::mem::take(&mut self.held) {
            return Ok(());
        }
        let mut users = DEBUGFS_USERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        users.0 = users.0.saturating_sub(1);
        if users.0 > 0 || !(users.1 || self.unmount_anyway) {
            return Ok(());
        }
        users.1 = false;
        if !proc_mounts_has_debugfs() {
            return Ok(());
        }
        let status = std::process::Command::new("umount")
            .arg(DEBUGFS)
            .status()
            .with_context(|| format!("unmounting debugfs at {DEBUGFS}: running umount(8)"))?;
        if !status.success() {
            bail!("unmounting debugfs at {DEBUGFS} failed ({status})");
        }
        Ok(())
    }
}

impl Drop for DebugfsMount {
    fn drop(&mut self) {
        if let Err(error) = self.unmount() {
            eprintln!("warning: {error:#}");
        }
    }
}
