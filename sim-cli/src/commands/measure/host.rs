//! What the host kernel is, read before a measurement: kernel release and
//! scheduler (CFS before 6.6, EEVDF since), CONFIG_HZ, CPUs and topology, the
//! preemption model, which cgroup hierarchy carries the `cpu` controller and
//! whether we run under a hypervisor, and the kernel command line's options
//! that bear on scheduling (a `sched_*` option upstream Linux does not have
//! marks a patched scheduler). The report prints it beside the
//! simulator's model (Linux 4.4 CFS) so a reader sees what differs.
//!
//! The readers take a root path (`/` on the host, a temp dir in tests) so the
//! parsing is tested on fake sysfs trees.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::{Serialize, Serializer};

/// Where the `cpu` controller lives. Serializes as "v1", "v2" or "none".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CgroupVersion {
    /// A v1 hierarchy with the `cpu` controller mounted at `cpu`.
    V1 {
        cpu: PathBuf,
    },
    /// The v2 hierarchy at `root`, whose `cgroup.controllers` lists `cpu`.
    V2 {
        root: PathBuf,
    },
    None,
}

impl Serialize for CgroupVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(match self {
            CgroupVersion::V1 { .. } => "v1",
            CgroupVersion::V2 { .. } => "v2",
            CgroupVersion::None => "none",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostTopology {
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    pub numa_nodes: u16,
}

#[derive(Clone, Debug, Serialize)]
pub struct HostInfo {
    /// `uname -r`.
    pub kernel_release: String,
    /// Major and minor parsed from the release.
    pub kernel_version: (u32, u32),
    /// "eevdf" for >= 6.6 (commit 147f3efaa241 "sched/fair: Implement an
    /// EEVDF-like scheduling policy"), else "cfs".
    pub scheduler: &'static str,
    pub hz: u32,
    /// "config" (/proc/config.gz or /boot/config-<release>) or "measured".
    pub hz_source: &'static str,
    /// CONFIG_NO_HZ_IDLE or CONFIG_NO_HZ_FULL from the config, if readable.
    pub nohz_idle: Option<bool>,
    /// /sys/devices/system/cpu/online.
    pub cpus_online: Vec<u16>,
    pub topology: HostTopology,
    /// /sys/devices/system/cpu/isolated ("" if none).
    pub isolcpus: String,
    /// none, voluntary, full, lazy, rt, or "unknown".
    pub preempt: String,
    /// "debugfs" (sched/preempt), "cmdline" (preempt= with PREEMPT_DYNAMIC),
    /// "config", "uname" (uname -v) or "unknown".
    pub preempt_source: &'static str,
    pub cgroup: CgroupVersion,
    /// /proc/sys/kernel/sched_autogroup_enabled (None if absent).
    pub autogroup: Option<bool>,
    /// /proc/cpuinfo "model name", "" if none.
    pub cpu_model: String,
    /// The hypervisor, if detectable.
    pub virtualized: Option<String>,
    /// /proc/cmdline's options that bear on scheduling, as written
    /// (`parse_sched_cmdline`).
    pub sched_cmdline: Vec<String>,
    /// Those that are `sched_*` options upstream Linux does not have.
    pub sched_cmdline_non_upstream: Vec<String>,
    /// The RT and deadline classes' settings (`host_rt`).
    pub rt: super::host_rt::HostRt,
    /// What this process may ask of the scheduler (CAP_SYS_NICE, RLIMIT_RTPRIO).
    pub privilege: super::host_rt::Privilege,
}

/// Kernel command-line options that bear on scheduling, by name (the part
/// before `=`): CPU isolation and the tick (isolcpus, nohz, nohz_full,
/// rcu_nocbs, irqaffinity, skew_tick), the preemption model, SMT, CPU counts
/// and speculation mitigations (their cost is paid at every context switch),
/// idle states (they set the wake-up latency of an idle CPU; haltpoll is the
/// guest's polling idle), threaded interrupts, NUMA balancing, the sched
/// domains' relax level, schedstats, autogroup and the cgroup hierarchy.
/// Every `sched_*` option counts too (`SCHED_PREFIX`).
const SCHED_CMDLINE_OPTIONS: &[&str] = &[
    "isolcpus",
    "nohz",
    "nohz_full",
    "rcu_nocbs",
    "irqaffinity",
    "skew_tick",
    "preempt",
    "nosmt",
    "nr_cpus",
    "maxcpus",
    "mitigations",
    "idle",
    "intel_idle.max_cstate",
    "processor.max_cstate",
    "cpuidle.off",
    "cpuidle_haltpoll.force",
    "haltpoll.guest_halt_poll_ns",
    "threadirqs",
    "numa_balancing",
    "relax_domain_level",
    "schedstats",
    "noautogroup",
    "cgroup_disable",
    "systemd.unified_cgroup_hierarchy",
];

/// Any option named so is a scheduler option.
const SCHED_PREFIX: &str = "sched_";

/// The `sched_*` boot options of upstream Linux
/// (Documentation/admin-guide/kernel-parameters.txt, the `__setup()`s of
/// kernel/sched/): `sched_debug` (up to 5.12), `sched_verbose` (its name
/// since 5.13), `sched_thermal_decay_shift` (5.7 on, ignored since 6.10) and
/// `sched_proxy_exec` (6.17). Any other `sched_*` option is a patched
/// kernel's, such as `sched_vcpu_pack=` on the development VMs.
const UPSTREAM_SCHED_OPTIONS: &[&str] =
    &["sched_debug", "sched_verbose", "sched_thermal_decay_shift", "sched_proxy_exec"];

/// The command line's words as the kernel splits them (kernel/params.c
/// `next_arg`: at whitespace outside double quotes), up to a lone `--`,
/// after which the words are init's arguments, not the kernel's.
fn cmdline_words(cmdline: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = None;
    let mut quoted = false;
    for (i, c) in cmdline.char_indices() {
        if c == '"' {
            quoted = !quoted;
        }
        if c.is_whitespace() && !quoted {
            if let Some(s) = start.take() {
                words.push(&cmdline[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&cmdline[s..]);
    }
    words.into_iter().take_while(|w| *w != "--").collect()
}

/// The options of a kernel command line that bear on scheduling
/// (`SCHED_CMDLINE_OPTIONS` and every `sched_*`), as written and in order,
/// and those of them that are `sched_*` options upstream Linux does not
/// have (`UPSTREAM_SCHED_OPTIONS`).
pub fn parse_sched_cmdline(cmdline: &str) -> (Vec<String>, Vec<String>) {
    let mut options = Vec::new();
    let mut non_upstream = Vec::new();
    for word in cmdline_words(cmdline) {
        let name = word.split_once('=').map_or(word, |(name, _)| name).trim_matches('"');
        // kernel/params.c parameq: `-` and `_` are the same in a name.
        let name = name.replace('-', "_");
        let sched = name.starts_with(SCHED_PREFIX);
        if sched || SCHED_CMDLINE_OPTIONS.contains(&name.as_str()) {
            options.push(word.to_string());
            if sched && !UPSTREAM_SCHED_OPTIONS.contains(&name.as_str()) {
                non_upstream.push(word.to_string());
            }
        }
    }
    (options, non_upstream)
}

/// Reads the host. Errs only if this is not Linux or /proc, /sys are
/// unreadable; everything else degrades to a default with its source said.
pub fn probe() -> anyhow::Result<HostInfo> {
    if !cfg!(target_os = "linux") {
        bail!("host probe: `sim-cli measure` runs only on Linux (this build is not for Linux)");
    }
    let uname = rustix::system::uname();
    let sysname = uname.sysname().to_string_lossy().into_owned();
    if sysname != "Linux" {
        bail!("host probe: uname reports the system {sysname:?}; `sim-cli measure` runs only on Linux");
    }
    let root = Path::new("/");
    for needed in ["proc/self/stat", "sys/devices/system/cpu/online"] {
        let path = root.join(needed);
        std::fs::read_to_string(&path)
            .with_context(|| format!("host probe: reading {} (are /proc and /sys mounted?)", path.display()))?;
    }
    let kernel_release = uname.release().to_string_lossy().into_owned();
    let uname_version = uname.version().to_string_lossy().into_owned();
    let kernel_version = parse_kernel_version(&kernel_release).unwrap_or((0, 0));
    let scheduler = if kernel_version >= (6, 6) { "eevdf" } else { "cfs" };

    let config = read_kernel_config(root, &kernel_release);
    let (hz, hz_source) = match config.as_deref().and_then(parse_config_hz) {
        Some(hz) => (hz, "config"),
        // No config: measure; 0 says "unknown" if even that fails (not root).
        None => (measure_hz().unwrap_or(0), "measured"),
    };
    let nohz_idle = config.as_deref().and_then(parse_config_nohz);
    let online_text = read_trimmed(&root.join("sys/devices/system/cpu/online")).unwrap_or_default();
    let cpus_online = parse_cpu_list(&online_text).unwrap_or_default();
    let topology = read_topology(root, &cpus_online);
    let isolcpus = read_trimmed(&root.join("sys/devices/system/cpu/isolated")).unwrap_or_default();
    let cmdline = read_trimmed(&root.join("proc/cmdline")).unwrap_or_default();
    // debugfs is mounted for the reads below if it was not (and unmounted
    // again when `debugfs` drops); only root can mount it.
    let debugfs = if rustix::process::geteuid().is_root() {
        super::debugfs::DebugfsMount::ensure().map_err(|e| format!("unreadable: {e:#}"))
    } else {
        Err("unreadable: debugfs needs root".to_string())
    };
    let (preempt, preempt_source) = preempt_model(config.as_deref(), &cmdline, &uname_version);
    let cgroup = detect_cgroup(root);
    let rt = super::host_rt::read(
        root,
        &super::host_rt::Known {
            kernel_version,
            config: config.as_deref(),
            cmdline: &cmdline,
            cgroup: &cgroup,
            cpus_online: &cpus_online,
            isolcpus: &isolcpus,
            debugfs: debugfs.as_ref().map(|_| ()).map_err(Clone::clone),
        },
    );
    drop(debugfs);
    let autogroup = read_trimmed(&root.join("proc/sys/kernel/sched_autogroup_enabled")).ok().map(|text| text != "0");
    let cpuinfo = std::fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
    let cpu_model = parse_cpu_model(&cpuinfo);
    let virtualized = detect_hypervisor(root, &cpuinfo);
    let (sched_cmdline, sched_cmdline_non_upstream) = parse_sched_cmdline(&cmdline);
    Ok(HostInfo {
        kernel_release,
        kernel_version,
        scheduler,
        hz,
        hz_source,
        nohz_idle,
        cpus_online,
        topology,
        isolcpus,
        preempt,
        preempt_source,
        cgroup,
        autogroup,
        cpu_model,
        virtualized,
        sched_cmdline,
        sched_cmdline_non_upstream,
        rt,
        privilege: super::host_rt::Privilege::probe(),
    })
}

/// CONFIG_HZ measured when no config is readable: the jiffies counter that
/// /proc/timer_list prints (root only; kernel/time/timer_list.c print_cpu
/// prints `jiffies:` per CPU under CONFIG_TICK_ONESHOT) is read twice around
/// a 300 ms CLOCK_MONOTONIC interval (`Instant`). With NO_HZ idle jiffies may
/// lag while every CPU idles, but the reading CPU catches them up on idle exit
/// (kernel/time/tick-sched.c tick_do_update_jiffies64), so the difference is
/// exact to a tick. 300 ms gives 30/75/90/300 ticks, far enough apart to round
/// to the nearest of 100, 250, 300, 1000.
pub fn measure_hz() -> anyhow::Result<u32> {
    let path = Path::new("/proc/timer_list");
    let read = || -> anyhow::Result<(u64, Instant)> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("measuring HZ: reading {} (needs root)", path.display()))?;
        let at = Instant::now();
        let jiffies = parse_timer_list_jiffies(&text)
            .with_context(|| format!("measuring HZ: no `jiffies:` line in {}", path.display()))?;
        Ok((jiffies, at))
    };
    let (j0, t0) = read()?;
    std::thread::sleep(Duration::from_millis(300));
    let (j1, t1) = read()?;
    let seconds = t1.duration_since(t0).as_secs_f64();
    if j1 < j0 || seconds <= 0.0 {
        bail!("measuring HZ: jiffies went from {j0} to {j1} over {seconds} s");
    }
    Ok(nearest_hz((j1 - j0) as f64 / seconds))
}

/// The nearest of the HZ values Kconfig offers (kernel/Kconfig.hz).
fn nearest_hz(rate: f64) -> u32 {
    let mut best = 100;
    for hz in [100u32, 250, 300, 1000] {
        if (f64::from(hz) - rate).abs() < (f64::from(best) - rate).abs() {
            best = hz;
        }
    }
    best
}

fn parse_timer_list_jiffies(text: &str) -> Option<u64> {
    text.lines().find_map(|line| line.strip_prefix("jiffies:")).and_then(|value| value.trim().parse().ok())
}

fn read_trimmed(path: &Path) -> std::io::Result<String> {
    std::fs::read_to_string(path).map(|text| text.trim().to_string())
}

/// "6.18.44-fc-v657" → (6, 18).
pub fn parse_kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor_text: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
    Some((major, minor_text.parse().ok()?))
}

/// The kernel's build config: /proc/config.gz (CONFIG_IKCONFIG_PROC; gunzipped
/// with `gzip -dc`, the workspace has no gzip crate) or /boot/config-<release>.
fn read_kernel_config(root: &Path, release: &str) -> Option<String> {
    let gz = root.join("proc/config.gz");
    if gz.exists() {
        let output = std::process::Command::new("gzip").arg("-dc").arg(&gz).output();
        if let Ok(output) = output
            && output.status.success()
            && let Ok(text) = String::from_utf8(output.stdout)
        {
            return Some(text);
        }
    }
    std::fs::read_to_string(root.join("boot").join(format!("config-{release}"))).ok()
}

fn config_value<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
}

fn config_enabled(config: &str, key: &str) -> bool {
    config_value(config, key) == Some("y")
}

/// `CONFIG_HZ=250`.
pub fn parse_config_hz(config: &str) -> Option<u32> {
    config_value(config, "CONFIG_HZ")?.trim().parse().ok()
}

/// Some(true) if CONFIG_NO_HZ_IDLE or CONFIG_NO_HZ_FULL is set, Some(false) if
/// the config says neither (periodic tick), None if it says nothing of NO_HZ.
pub fn parse_config_nohz(config: &str) -> Option<bool> {
    if config_enabled(config, "CONFIG_NO_HZ_IDLE") || config_enabled(config, "CONFIG_NO_HZ_FULL") {
        return Some(true);
    }
    let mentions = config.lines().any(|line| line.contains("CONFIG_NO_HZ_IDLE") || line.contains("CONFIG_HZ_PERIODIC"));
    mentions.then_some(false)
}

/// "0-3,8" → [0, 1, 2, 3, 8]; "" → [].
pub fn parse_cpu_list(text: &str) -> anyhow::Result<Vec<u16>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|part| !part.is_empty()) {
        let parse = |number: &str| -> anyhow::Result<u16> {
            number
                .trim()
                .parse()
                .with_context(|| format!("CPU list {text:?}: {number:?} is not a CPU number (0..=65535)"))
        };
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (parse(first)?, parse(last)?);
                if first > last {
                    bail!("CPU list {text:?}: range {part:?} runs backwards");
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(parse(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Sockets, cores and threads from sys/devices/system/cpu/cpuN/topology
/// (physical_package_id, core_id) of the online CPUs, NUMA nodes from the
/// nodeN directories of sys/devices/system/node (1 when absent, !CONFIG_NUMA).
/// Unreadable CPUs count as package 0, core N.
pub fn read_topology(root: &Path, cpus_online: &[u16]) -> HostTopology {
    let cpu_dir = root.join("sys/devices/system/cpu");
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for &cpu in cpus_online {
        let topology = cpu_dir.join(format!("cpu{cpu}/topology"));
        let read_id = |name: &str| -> Option<i64> { read_trimmed(&topology.join(name)).ok()?.parse().ok() };
        let package = read_id("physical_package_id").unwrap_or(0);
        let core = read_id("core_id").unwrap_or(i64::from(cpu));
        packages.insert(package);
        cores.insert((package, core));
    }
    let count = |n: usize| u16::try_from(n).unwrap_or(u16::MAX).max(1);
    let sockets = count(packages.len());
    let total_cores = count(cores.len());
    let numa_nodes = std::fs::read_dir(root.join("sys/devices/system/node"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    name.strip_prefix("node").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                })
                .count()
        })
        .unwrap_or(0);
    HostTopology {
        sockets,
        cores_per_socket: (total_cores / sockets).max(1),
        threads_per_core: (count(cpus_online.len()) / total_cores).max(1),
        numa_nodes: count(numa_nodes),
    }
}

/// debugfs sched/preempt: "none (voluntary) full lazy" → "voluntary"
/// (kernel/sched/debug.c sched_dynamic_show brackets the current mode).
pub fn parse_debugfs_preempt(text: &str) -> Option<String> {
    text.split_whitespace().find_map(|word| word.strip_prefix('(')?.strip_suffix(')')).map(str::to_string)
}

/// The preemption model: debugfs sched/preempt when readable (debugfs
/// mounted, by `probe` if need be, and not locked down), else `preempt=` on the command line of a
/// PREEMPT_DYNAMIC kernel (kernel/sched/core.c setup_preempt_mode), else the
/// config's choice, else the flags of `uname -v` (init/Makefile
/// build-version: "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT").
fn preempt_model(config: Option<&str>, cmdline: &str, uname_version: &str) -> (String, &'static str) {
    // A locked-down kernel refuses the read (EPERM) and we fall through.
    let preempt_file = Path::new("/sys/kernel/debug/sched/preempt");
    let debugfs_text = std::fs::read_to_string(preempt_file);
    if let Ok(text) = debugfs_text
        && let Some(mode) = parse_debugfs_preempt(&text)
    {
        return (mode, "debugfs");
    }
    let dynamic =
        config.map_or(uname_version.contains("PREEMPT_DYNAMIC"), |c| config_enabled(c, "CONFIG_PREEMPT_DYNAMIC"));
    if dynamic
        && let Some(mode) = cmdline.split_whitespace().find_map(|arg| arg.strip_prefix("preempt="))
        && ["none", "voluntary", "full", "lazy"].contains(&mode)
    {
        return (mode.to_string(), "cmdline");
    }
    if let Some(config) = config
        && let Some(mode) = parse_config_preempt(config)
    {
        return (mode.to_string(), "config");
    }
    let flags: Vec<&str> = uname_version.split_whitespace().collect();
    let mode = if flags.contains(&"PREEMPT_RT") {
        "rt"
    } else if flags.contains(&"PREEMPT_LAZY") {
        "lazy"
    } else if flags.contains(&"PREEMPT") {
        "full"
    } else {
        // PREEMPT_DYNAMIC (the boot mode is not in uname) or no flag at all
        // (PREEMPT_NONE or PREEMPT_VOLUNTARY, uname cannot tell which).
        return ("unknown".to_string(), "unknown");
    };
    (mode.to_string(), "uname")
}

/// The preemption model chosen in kernel/Kconfig.preempt.
pub fn parse_config_preempt(config: &str) -> Option<&'static str> {
    [
        ("CONFIG_PREEMPT_RT", "rt"),
        ("CONFIG_PREEMPT_LAZY", "lazy"),
        ("CONFIG_PREEMPT", "full"),
        ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
        ("CONFIG_PREEMPT_NONE", "none"),
    ]
    .into_iter()
    .find(|(key, _)| config_enabled(config, key))
    .map(|(_, mode)| mode)
}

/// Prefers a v1 hierarchy with the `cpu` controller (hybrid hosts), else the
/// v2 hierarchy if its cgroup.controllers lists `cpu`.
pub(crate) fn detect_cgroup(root: &Path) -> CgroupVersion {
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).unwrap_or_default();
    parse_cgroup_mounts(&mounts, |v2_root| {
        read_trimmed(&root.join(v2_root.strip_prefix("/").unwrap_or(v2_root)).join("cgroup.controllers"))
            .unwrap_or_default()
    })
}

/// /proc/mounts lines → the cgroup hierarchy carrying `cpu`; `controllers`
/// reads a v2 mount's cgroup.controllers.
pub fn parse_cgroup_mounts(mounts: &str, controllers: impl Fn(&Path) -> String) -> CgroupVersion {
    let mut v2 = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, mount_point, fs_type, options, ..] = fields[..] else {
            continue;
        };
        // /proc/mounts escapes spaces as \040; cgroup mount points have none.
        let mount_point = PathBuf::from(mount_point);
        if fs_type == "cgroup" && options.split(',').any(|option| option == "cpu") {
            return CgroupVersion::V1 { cpu: mount_point };
        }
        if fs_type == "cgroup2" && v2.is_none() {
            v2 = Some(mount_point);
        }
    }
    match v2 {
        Some(root) if controllers(&root).split_whitespace().any(|c| c == "cpu") => CgroupVersion::V2 { root },
        _ => CgroupVersion::None,
    }
}

fn parse_cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_string())
        })
        .unwrap_or_default()
}

/// /sys/hypervisor/type (Xen), then DMI vendor/product (KVM, VMware, …), then
/// the `hypervisor` CPUID flag in /proc/cpuinfo (any guest; type unknown).
fn detect_hypervisor(root: &Path, cpuinfo: &str) -> Option<String> {
    if let Ok(kind) = read_trimmed(&root.join("sys/hypervisor/type"))
        && !kind.is_empty()
    {
        return Some(kind);
    }
    let flagged = cpuinfo.lines().any(|line| {
        line.split_once(':').is_some_and(|(key, value)| {
            key.trim() == "flags" && value.split_whitespace().any(|flag| flag == "hypervisor")
        })
    });
    if !flagged {
        return None;
    }
    for name in ["sys_vendor", "product_name"] {
        if let Ok(text) = read_trimmed(&root.join("sys/class/dmi/id").join(name))
            && !text.is_empty()
        {
            return Some(text);
        }
    }
    Some("unknown (cpuinfo flag `hypervisor`)".to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh empty directory under the system temp dir, removed on drop.
    pub(crate) struct TempDir(pub PathBuf);

    impl TempDir {
        pub(crate) fn new(tag: &str) -> TempDir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let n = NEXT.fetch_add(1, Ordering::SeqCst);
            let path = std::env::temp_dir().join(format!("schedlab-test-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).expect("create temp dir");
            TempDir(path)
        }

        pub(crate) fn write(&self, relative: &str, text: &str) {
            let path = self.0.join(relative);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A host as this development VM reads, for plans made in tests: Linux
    /// 6.18, HZ 250, 2 CPUs, cgroup v1, RT group scheduling on, root.
    pub(crate) fn vm_host() -> HostInfo {
        HostInfo {
            kernel_release: "6.18.44-test".into(),
            kernel_version: (6, 18),
            scheduler: "eevdf",
            hz: 250,
            hz_source: "config",
            nohz_idle: Some(true),
            cpus_online: vec![0, 1],
            topology: HostTopology { sockets: 1, cores_per_socket: 2, threads_per_core: 1, numa_nodes: 1 },
            isolcpus: String::new(),
            preempt: "none".into(),
            preempt_source: "config",
            cgroup: CgroupVersion::V1 { cpu: PathBuf::from("/sys/fs/cgroup/cpu") },
            autogroup: Some(true),
            cpu_model: String::new(),
            virtualized: None,
            sched_cmdline: Vec::new(),
            sched_cmdline_non_upstream: Vec::new(),
            rt: super::super::host_rt::tests::vm(),
            privilege: super::super::host_rt::Privilege { cap_sys_nice: true, rlimit_rtprio: 0 },
        }
    }

    #[test]
    fn config_hz_nohz_and_preempt_lines() {
        let config = "# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n\
                      CONFIG_NO_HZ_IDLE=y\n# CONFIG_NO_HZ_FULL is not set\n\
                      CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n";
        assert_eq!(parse_config_hz(config), Some(250));
        assert_eq!(parse_config_hz("CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n"), Some(1000));
        assert_eq!(parse_config_hz("CONFIG_HZ_250=y\n"), None);
        assert_eq!(parse_config_nohz(config), Some(true));
        assert_eq!(parse_config_nohz("CONFIG_HZ_PERIODIC=y\n# CONFIG_NO_HZ_IDLE is not set\n"), Some(false));
        assert_eq!(parse_config_nohz("CONFIG_HZ=100\n"), None);
        assert_eq!(parse_config_preempt(config), Some("none"));
        assert_eq!(parse_config_preempt("CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\n"), Some("rt"));
        // A dynamic kernel booted with preempt=full reports the command line.
        let (mode, source) = preempt_model(Some(config), "quiet preempt=full", "#1 SMP PREEMPT_DYNAMIC");
        if source != "debugfs" {
            assert_eq!((mode.as_str(), source), ("full", "cmdline"));
        }
    }

    #[test]
    fn sched_options_of_the_kernel_command_line() {
        // The development VMs' patched option, among options that are not the scheduler's.
        let (options, non_upstream) =
            parse_sched_cmdline("BOOT_IMAGE=/boot/vmlinuz-6.18 root=/dev/vda1 sched_vcpu_pack=15 console=ttyS0");
        assert_eq!(options, vec!["sched_vcpu_pack=15"]);
        assert_eq!(non_upstream, vec!["sched_vcpu_pack=15"]);
        // This VM's whole line: the words after `--` are init's, not the kernel's.
        let vm = "mitigations=auto,no_guest_host,no_guest_guest console=ttyS0 quiet reboot=k panic=1 psi=1 \
                  cpuidle_haltpoll.force=1 haltpoll.guest_halt_poll_ns=0 sched_vcpu_pack=15 rdinit=/process_api \
                  -- --firecracker-init sched_fake=1 isolcpus=1\n";
        let (options, non_upstream) = parse_sched_cmdline(vm);
        assert_eq!(
            options,
            vec![
                "mitigations=auto,no_guest_host,no_guest_guest",
                "cpuidle_haltpoll.force=1",
                "haltpoll.guest_halt_poll_ns=0",
                "sched_vcpu_pack=15"
            ]
        );
        assert_eq!(non_upstream, vec!["sched_vcpu_pack=15"]);
        // Every named option, and the upstream sched_* ones: none is flagged.
        let upstream = "isolcpus=domain,managed_irq,2-3 nohz_full=2-3 nohz=off rcu_nocbs irqaffinity=0-1 \
                        skew_tick=1 preempt=full nosmt nr_cpus=4 maxcpus=2 mitigations=off idle=poll \
                        intel_idle.max_cstate=1 processor.max_cstate=1 cpuidle.off=1 threadirqs \
                        numa_balancing=disable relax_domain_level=1 schedstats=enable noautogroup \
                        cgroup_disable=memory systemd.unified_cgroup_hierarchy=0 sched_verbose sched_debug \
                        sched_thermal_decay_shift=2 sched_proxy_exec=1";
        let (options, non_upstream) = parse_sched_cmdline(upstream);
        assert_eq!(options.len(), upstream.split_whitespace().count(), "{options:?}");
        assert!(non_upstream.is_empty(), "{non_upstream:?}");
        // Names that only begin like a listed one are not it; `-` is `_` in a
        // name; a quoted value keeps its spaces.
        let (options, non_upstream) = parse_sched_cmdline(
            "nohz_fullx=1 idle_poll=1 schedstatsx sched-vcpu-pack=3 dyndbg=\"file sched.c +p\" isolcpus=1",
        );
        assert_eq!(options, vec!["sched-vcpu-pack=3", "isolcpus=1"]);
        assert_eq!(non_upstream, vec!["sched-vcpu-pack=3"]);
        assert_eq!(cmdline_words("a=\"b c\" d"), vec!["a=\"b c\"", "d"]);
        // Nothing to read.
        for empty in ["", "   \n", "--", "-- sched_x=1", "\""] {
            assert_eq!(parse_sched_cmdline(empty), (Vec::new(), Vec::new()), "{empty:?}");
        }
    }

    #[test]
    fn kernel_versions_and_hz_rounding() {
        assert_eq!(parse_kernel_version("6.18.44-fc-v657"), Some((6, 18)));
        assert_eq!(parse_kernel_version("4.4.0-210-generic"), Some((4, 4)));
        assert_eq!(parse_kernel_version("6.6-rc1"), Some((6, 6)));
        assert_eq!(parse_kernel_version("garbage"), None);
        assert_eq!(nearest_hz(247.0), 250);
        assert_eq!(nearest_hz(296.6), 300);
        assert_eq!(nearest_hz(101.0), 100);
        assert_eq!(nearest_hz(990.0), 1000);
        assert_eq!(parse_timer_list_jiffies("now at 1 nsecs\n\njiffies: 4300120896\n"), Some(4300120896));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8\n").expect("list"), vec![0, 1, 2, 3, 8]);
        assert_eq!(parse_cpu_list("0").expect("list"), vec![0]);
        assert_eq!(parse_cpu_list("\n").expect("list"), Vec::<u16>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("0-x").is_err());
    }

    #[test]
    fn debugfs_preempt_line() {
        assert_eq!(parse_debugfs_preempt("none (voluntary) full lazy\n").as_deref(), Some("voluntary"));
        assert_eq!(parse_debugfs_preempt("(none) voluntary full").as_deref(), Some("none"));
        assert_eq!(parse_debugfs_preempt("none voluntary full"), None);
    }

    #[test]
    fn topology_from_a_fake_sysfs_tree() {
        // 2 sockets × 2 cores × 2 threads, 2 NUMA nodes; cpu8 offline.
        let tree = TempDir::new("topology");
        for cpu in 0..8u16 {
            let (package, core) = (cpu / 4, (cpu % 4) / 2);
            tree.write(
                &format!("sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"),
                &format!("{package}\n"),
            );
            tree.write(&format!("sys/devices/system/cpu/cpu{cpu}/topology/core_id"), &format!("{core}\n"));
        }
        tree.write("sys/devices/system/node/node0/cpulist", "0-3\n");
        tree.write("sys/devices/system/node/node1/cpulist", "4-7\n");
        tree.write("sys/devices/system/node/online", "0-1\n");
        let online = parse_cpu_list("0-7").expect("list");
        let topology = read_topology(&tree.0, &online);
        assert_eq!(topology, HostTopology { sockets: 2, cores_per_socket: 2, threads_per_core: 2, numa_nodes: 2 });
        // No topology files and no node dir: one socket, a core per CPU.
        let empty = TempDir::new("topology-empty");
        let topology = read_topology(&empty.0, &[0, 1]);
        assert_eq!(topology, HostTopology { sockets: 1, cores_per_socket: 2, threads_per_core: 1, numa_nodes: 1 });
    }

    #[test]
    fn cgroup_mounts_prefer_v1_cpu() {
        let hybrid = "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n\
                      cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        assert_eq!(
            parse_cgroup_mounts(hybrid, |_| String::new()),
            CgroupVersion::V1 { cpu: PathBuf::from("/sys/fs/cgroup/cpu") }
        );
        let v2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";
        assert_eq!(
            parse_cgroup_mounts(v2, |_| "cpuset cpu io memory".to_string()),
            CgroupVersion::V2 { root: PathBuf::from("/sys/fs/cgroup") }
        );
        assert_eq!(parse_cgroup_mounts(v2, |_| "memory".to_string()), CgroupVersion::None);
        assert_eq!(serde_json::to_string(&CgroupVersion::None).expect("json"), "\"none\"");
    }

    #[test]
    fn measured_hz_matches_the_config() {
        if !rustix::process::geteuid().is_root() {
            return println!("SKIPPED: /proc/timer_list needs root");
        }
        let release = rustix::system::uname().release().to_string_lossy().into_owned();
        let Some(config_hz) = read_kernel_config(Path::new("/"), &release).as_deref().and_then(parse_config_hz) else {
            return println!("SKIPPED: no readable kernel config to compare with");
        };
        let started = Instant::now();
        assert_eq!(measure_hz().expect("measure_hz"), config_hz);
        assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());
    }

    #[test]
    fn probe_reads_this_host() {
        let host = probe().expect("probe");
        assert!(host.kernel_version.0 >= 3, "{host:?}");
        assert!(!host.cpus_online.is_empty(), "{host:?}");
        assert!([100, 250, 300, 1000, 0].contains(&host.hz), "{host:?}");
        let cores = u32::from(host.topology.sockets)
            * u32::from(host.topology.cores_per_socket)
            * u32::from(host.topology.threads_per_core);
        assert!(cores <= host.cpus_online.len() as u32, "{host:?}");
        let json = serde_json::to_value(&host).expect("json");
        println!("{json}");
        assert!(json["cgroup"].is_string(), "{json}");
        assert!(json["sched_cmdline"].is_array(), "{json}");
        assert!(host.sched_cmdline_non_upstream.iter().all(|o| host.sched_cmdline.contains(o)), "{host:?}");
    }
}
