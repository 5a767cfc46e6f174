//! The host's side of the RT and deadline classes, read before a
//! measurement (before the run writes anything): the `kernel.sched_rt_*` and
//! `sched_rr_timeslice_ms` sysctls, whether RT group scheduling is on (and
//! the root RT group's own runtime, which is what throttles then), the 6.12+
//! fair servers from debugfs, the root domains a SCHED_DEADLINE task's
//! affinity must cover, and what this process may ask for (CAP_SYS_NICE,
//! RLIMIT_RTPRIO). `plan` decides from these what the host can reproduce.
//!
//! The readers take a root path (`/` on the host, a temp dir in tests).

use std::path::Path;

use serde::Serialize;

use super::host::{CgroupVersion, parse_cpu_list};

/// One CPU's fair server (6.12+ debugfs `sched/fair_server/cpuN/{runtime,period}`, ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FairServer {
    pub cpu: u16,
    pub runtime_ns: u64,
    pub period_ns: u64,
}

/// The fair servers of the host's online CPUs, or why they were not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FairServers {
    /// A kernel before 6.12 has none (6.12 fair.c:fair_server_init; 6.6 has
    /// no `fair_server`).
    Absent,
    Read(Vec<FairServer>),
    /// "unreadable: why" (debugfs not mounted and not mountable here, not
    /// root, or kernel lockdown).
    Unreadable(String),
}

impl FairServers {
    /// The server of host CPU `cpu`, when read.
    pub fn of(&self, cpu: u16) -> Option<FairServer> {
        match self {
            FairServers::Read(v) => v.iter().copied().find(|s| s.cpu == cpu),
            _ => None,
        }
    }
}

/// The RT and deadline settings of the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostRt {
    /// `kernel.sched_rt_runtime_us` (-1: no limit); None if unreadable.
    pub sched_rt_runtime_us: Option<i64>,
    pub sched_rt_period_us: Option<i64>,
    pub sched_rr_timeslice_ms: Option<i64>,
    /// Whether RT group scheduling is on: CONFIG_RT_GROUP_SCHED, and from
    /// 6.16 not switched off at boot (`rt_group_sched=0`,
    /// CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED). None: could not tell.
    pub rt_group_sched: Option<bool>,
    /// Where `rt_group_sched` was read.
    pub rt_group_sched_source: String,
    /// The root cpu cgroup's `cpu.rt_runtime_us` and `cpu.rt_period_us`
    /// (cgroup v1), read when RT group scheduling is on: with it, these
    /// throttle the root RT group, not the sysctls.
    pub root_rt_runtime_us: Option<i64>,
    pub root_rt_period_us: Option<i64>,
    /// `cpu.rt_runtime_us` of the cpu cgroup this process runs in, when that
    /// is not the root and RT group scheduling is on: its threads start there.
    pub own_rt_runtime_us: Option<(String, i64)>,
    pub fair_server: FairServers,
    /// The root domains (each a CPU list), as far as they can be told from
    /// isolcpus and the cpuset hierarchy; None when they cannot.
    pub root_domains: Option<Vec<Vec<u16>>>,
    /// How `root_domains` was found, or why not.
    pub root_domains_source: String,
}

/// What this process may ask of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Privilege {
    /// CAP_SYS_NICE in the effective set (root has it unless a container dropped it).
    pub cap_sys_nice: bool,
    /// RLIMIT_RTPRIO's soft limit: without CAP_SYS_NICE, the highest FIFO/RR
    /// priority this process may take (6.18 syscalls.c:user_check_sched_setscheduler).
    pub rlimit_rtprio: u64,
}

impl Privilege {
    /// This process's.
    pub fn probe() -> Privilege {
        let cap_sys_nice = rustix::thread::capabilities(None)
            .is_ok_and(|c| c.effective.contains(rustix::thread::CapabilitySet::SYS_NICE));
        let rlimit_rtprio = rustix::process::getrlimit(rustix::process::Resource::Rtprio).current.unwrap_or(u64::MAX);
        Privilege { cap_sys_nice, rlimit_rtprio }
    }
}

fn read_i64(path: &Path) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// What the rest of the host probe already read, which this one needs.
pub struct Known<'a> {
    pub kernel_version: (u32, u32),
    /// The kernel's build config, if readable.
    pub config: Option<&'a str>,
    pub cmdline: &'a str,
    pub cgroup: &'a CgroupVersion,
    pub cpus_online: &'a [u16],
    /// /sys/devices/system/cpu/isolated.
    pub isolcpus: &'a str,
    /// Whether debugfs is mounted for the fair servers' read, or why not.
    pub debugfs: Result<(), String>,
}

/// Reads the host's RT and deadline settings under `root`.
pub fn read(root: &Path, known: &Known<'_>) -> HostRt {
    let Known { kernel_version, config, cmdline, cgroup, cpus_online, isolcpus, debugfs } = known;
    let kernel_version = *kernel_version;
    let sysctl = |name: &str| read_i64(&root.join("proc/sys/kernel").join(name));
    let v1_cpu = match cgroup {
        CgroupVersion::V1 { cpu } => Some(root.join(cpu.strip_prefix("/").unwrap_or(cpu))),
        _ => None,
    };
    let (rt_group_sched, rt_group_sched_source) =
        rt_group_sched(kernel_version, *config, cmdline, v1_cpu.as_ref().map(|d| d.join("cpu.rt_runtime_us").exists()));
    let group_file =
        |file: &str| v1_cpu.as_ref().filter(|_| rt_group_sched == Some(true)).and_then(|d| read_i64(&d.join(file)));
    let own_rt_runtime_us = match (&v1_cpu, rt_group_sched) {
        (Some(dir), Some(true)) => {
            let own = std::fs::read_to_string(root.join("proc/self/cgroup")).unwrap_or_default();
            own_v1_cpu_cgroup(&own).filter(|p| p != "/").and_then(|p| {
                let file = dir.join(p.trim_start_matches('/')).join("cpu.rt_runtime_us");
                read_i64(&file).map(|v| (p, v))
            })
        }
        _ => None,
    };
    let fair_server = if kernel_version < (6, 12) {
        FairServers::Absent
    } else {
        match debugfs {
            Ok(()) => read_fair_servers(&root.join("sys/kernel/debug/sched/fair_server"), cpus_online),
            Err(why) => FairServers::Unreadable(why.clone()),
        }
    };
    let isolated = parse_cpu_list(isolcpus).unwrap_or_default();
    let (root_domains, root_domains_source) = root_domains(cpus_online, &isolated, &cpuset_view(root));
    HostRt {
        sched_rt_runtime_us: sysctl("sched_rt_runtime_us"),
        sched_rt_period_us: sysctl("sched_rt_period_us"),
        sched_rr_timeslice_ms: sysctl("sched_rr_timeslice_ms"),
        rt_group_sched,
        rt_group_sched_source,
        root_rt_runtime_us: group_file("cpu.rt_runtime_us"),
        root_rt_period_us: group_file("cpu.rt_period_us"),
        own_rt_runtime_us,
        fair_server,
        root_domains,
        root_domains_source,
    }
}

/// The v1 `cpu` controller's path in a `/proc/self/cgroup` text.
fn own_v1_cpu_cgroup(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.split(':').nth(1).is_some_and(|c| c.split(',').any(|c| c == "cpu")))
        .and_then(|l| l.splitn(3, ':').nth(2))
        .map(str::to_string)
}

/// Whether RT group scheduling is on, and where that was read.
/// - The config says whether CONFIG_RT_GROUP_SCHED is built in.
/// - Built in, a v1 cpu hierarchy tells whether it is on: its root has
///   `cpu.rt_runtime_us` exactly then (6.16+ core.c:cpu_rt_group_init adds
///   the RT files only when `rt_group_sched_enabled()`; before 6.16 they
///   are always there with the option).
/// - Built in, without a v1 cpu hierarchy (v2 has no RT files): from 6.16
///   the boot switch `rt_group_sched=0|1` (core.c:setup_rt_group_sched)
///   over CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED; before, on.
/// - No config: the v1 file alone, if there is a v1 cpu hierarchy.
pub fn rt_group_sched(
    version: (u32, u32),
    config: Option<&str>,
    cmdline: &str,
    v1_rt_file: Option<bool>,
) -> (Option<bool>, String) {
    let built = config.map(|c| c.lines().any(|l| l.trim() == "CONFIG_RT_GROUP_SCHED=y"));
    match (built, v1_rt_file) {
        (Some(false), _) => (Some(false), "config: CONFIG_RT_GROUP_SCHED is not set".into()),
        (Some(true), Some(on)) => (
            Some(on),
            format!(
                "config: CONFIG_RT_GROUP_SCHED=y; cgroup v1 cpu.rt_runtime_us {}",
                if on { "present" } else { "absent (switched off at boot)" }
            ),
        ),
        (Some(true), None) if version < (6, 16) => (Some(true), "config: CONFIG_RT_GROUP_SCHED=y".into()),
        (Some(true), None) => {
            let arg = cmdline.split_whitespace().find_map(|w| w.strip_prefix("rt_group_sched="));
            let default_off =
                config.is_some_and(|c| c.lines().any(|l| l.trim() == "CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED=y"));
            match arg {
                Some("0") => (Some(false), "config: CONFIG_RT_GROUP_SCHED=y; switched off by rt_group_sched=0".into()),
                Some("1") => (Some(true), "config: CONFIG_RT_GROUP_SCHED=y; rt_group_sched=1".into()),
                _ => (
                    Some(!default_off),
                    format!(
                        "config: CONFIG_RT_GROUP_SCHED=y{}",
                        if default_off { ", CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED=y" } else { "" }
                    ),
                ),
            }
        }
        (None, Some(on)) => (
            Some(on),
            format!(
                "cgroup v1 cpu.rt_runtime_us {} (no kernel config readable)",
                if on { "present" } else { "absent" }
            ),
        ),
        (None, None) => (None, "unknown: no kernel config readable and no cgroup v1 cpu hierarchy".into()),
    }
}

/// Reads `dir/cpuN/{runtime,period}` for each CPU.
pub fn read_fair_servers(dir: &Path, cpus: &[u16]) -> FairServers {
    let mut out = Vec::new();
    for &cpu in cpus {
        let file = |name: &str| -> Result<u64, String> {
            let path = dir.join(format!("cpu{cpu}")).join(name);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                // Root refused: kernel lockdown (security/lockdown, LOCKDOWN_DEBUGFS;
                // dmesg says "Lockdown: …: debugfs access is restricted").
                let hint = match e.kind() {
                    std::io::ErrorKind::PermissionDenied if rustix::process::geteuid().is_root() => {
                        " (kernel lockdown restricts debugfs)"
                    }
                    std::io::ErrorKind::PermissionDenied => " (debugfs needs root)",
                    _ => "",
                };
                format!("unreadable: {}: {e}{hint}", path.display())
            })?;
            text.trim()
                .parse()
                .map_err(|_| format!("unreadable: {}: {:?} is not a number", path.display(), text.trim()))
        };
        match (file("runtime"), file("period")) {
            (Ok(runtime_ns), Ok(period_ns)) => out.push(FairServer { cpu, runtime_ns, period_ns }),
            (Err(e), _) | (_, Err(e)) => return FairServers::Unreadable(e),
        }
    }
    FairServers::Read(out)
}

/// The cpuset hierarchy as far as root domains go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpusetView {
    /// No cpuset controller mounted: no partitions.
    None,
    /// v1: the root cpuset's `cpuset.sched_load_balance`.
    V1 { sched_load_balance: Option<bool> },
    /// v2: the root's `cpuset.cpus.effective` (CPUs given to child
    /// partitions are not in it).
    V2 { root_effective: Option<Vec<u16>> },
}

fn cpuset_view(root: &Path) -> CpusetView {
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).unwrap_or_default();
    let mut v2 = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, mount_point, fs_type, options, ..] = f[..] else { continue };
        let dir = root.join(mount_point.trim_start_matches('/'));
        if fs_type == "cgroup" && options.split(',').any(|o| o == "cpuset") {
            let balance = std::fs::read_to_string(dir.join("cpuset.sched_load_balance")).ok();
            return CpusetView::V1 { sched_load_balance: balance.map(|t| t.trim() == "1") };
        }
        if fs_type == "cgroup2" && v2.is_none() {
            v2 = Some(dir);
        }
    }
    let Some(dir) = v2 else { return CpusetView::None };
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "cpuset") {
        return CpusetView::None;
    }
    let effective =
        std::fs::read_to_string(dir.join("cpuset.cpus.effective")).ok().and_then(|t| parse_cpu_list(&t).ok());
    CpusetView::V2 { root_effective: effective }
}

/// The host's root domains: the CPUs outside isolcpus form one (the
/// scheduling domains' span; 6.18 topology.c:partition_sched_domains gives
/// each domain set a root domain) unless cpusets partition them, and the
/// isolated CPUs share `def_root_domain` (topology.c:rq_attach_root for CPUs
/// without a domain). None, with why, when cpusets partition the CPUs.
pub fn root_domains(online: &[u16], isolated: &[u16], cpuset: &CpusetView) -> (Option<Vec<Vec<u16>>>, String) {
    let housekeeping: Vec<u16> = online.iter().copied().filter(|c| !isolated.contains(c)).collect();
    let isolated: Vec<u16> = online.iter().copied().filter(|c| isolated.contains(c)).collect();
    let source = match cpuset {
        CpusetView::None => "no cpuset hierarchy: the CPUs outside isolcpus, and the isolated ones".to_string(),
        CpusetView::V1 { sched_load_balance: Some(true) } => {
            "cgroup v1 root cpuset.sched_load_balance=1: the CPUs outside isolcpus, and the isolated ones".to_string()
        }
        CpusetView::V1 { sched_load_balance: _ } => {
            return (
                None,
                "cgroup v1 root cpuset.sched_load_balance is not 1: child cpusets partition the CPUs".to_string(),
            );
        }
        CpusetView::V2 { root_effective: Some(eff) } => {
            let taken: Vec<u16> = housekeeping.iter().copied().filter(|c| !eff.contains(c)).collect();
            if !taken.is_empty() {
                return (
                    None,
                    format!(
                        "cgroup v2 cpuset partitions hold CPUs {} (not in the root's cpuset.cpus.effective)",
                        super::plan::list_text(&taken)
                    ),
                );
            }
            "cgroup v2 cpuset, no partitions: the CPUs outside isolcpus, and the isolated ones".to_string()
        }
        CpusetView::V2 { root_effective: None } => {
            return (None, "cgroup v2 cpuset: the root's cpuset.cpus.effective is unreadable".to_string());
        }
    };
    (Some([housekeeping, isolated].into_iter().filter(|d| !d.is_empty()).collect()), source)
}

impl HostRt {
    /// The report's host record of these settings (`HostFacts::rt`, in
    /// `measure --json`'s `measurement.host.rt`).
    pub fn facts(&self) -> sim_core::HostRtFacts {
        let (fair_servers, fair_servers_missing) = match &self.fair_server {
            FairServers::Absent => (Vec::new(), Some("absent: a kernel before 6.12 has no fair server".to_string())),
            // The probe's reason already says "unreadable: …".
            FairServers::Unreadable(why) if why.starts_with("unreadable") => (Vec::new(), Some(why.clone())),
            FairServers::Unreadable(why) => (Vec::new(), Some(format!("unreadable: {why}"))),
            FairServers::Read(v) => (
                v.iter()
                    .map(|s| sim_core::HostFairServer { cpu: s.cpu, runtime_ns: s.runtime_ns, period_ns: s.period_ns })
                    .collect(),
                None,
            ),
        };
        sim_core::HostRtFacts {
            sched_rt_runtime_us: self.sched_rt_runtime_us,
            sched_rt_period_us: self.sched_rt_period_us,
            sched_rr_timeslice_ms: self.sched_rr_timeslice_ms,
            rt_group_sched: self.rt_group_sched,
            rt_group_sched_source: self.rt_group_sched_source.clone(),
            root_rt_runtime_us: self.root_rt_runtime_us,
            root_rt_period_us: self.root_rt_period_us,
            fair_servers,
            fair_servers_missing,
            root_domains: self.root_domains.as_ref().map(|d| d.iter().map(|d| super::plan::list_text(d)).collect()),
            root_domains_source: self.root_domains_source.clone(),
        }
    }

    /// The root domain host CPU `cpu` is in, when known.
    pub fn root_domain_of(&self, cpu: u16) -> Option<&[u16]> {
        self.root_domains.as_ref()?.iter().find(|d| d.contains(&cpu)).map(Vec::as_slice)
    }

    /// What the report shows of it, one line.
    pub fn line(&self) -> String {
        let v = |x: Option<i64>| x.map_or("unreadable".to_string(), |x| x.to_string());
        let group = match (self.rt_group_sched, self.root_rt_runtime_us, self.root_rt_period_us) {
            (Some(true), Some(r), Some(p)) => {
                format!("RT group scheduling on, root cpu.rt_runtime_us={r} cpu.rt_period_us={p}")
            }
            (Some(true), _, _) => "RT group scheduling on".to_string(),
            (Some(false), _, _) => "RT group scheduling off".to_string(),
            (None, _, _) => "RT group scheduling unknown".to_string(),
        };
        let servers = match &self.fair_server {
            FairServers::Absent => "no fair server (before 6.12)".to_string(),
            FairServers::Unreadable(why) => format!("fair server {why}"),
            FairServers::Read(v) => {
                let mut by_value: Vec<((u64, u64), Vec<u16>)> = Vec::new();
                for s in v {
                    match by_value.iter_mut().find(|(k, _)| *k == (s.runtime_ns, s.period_ns)) {
                        Some((_, cpus)) => cpus.push(s.cpu),
                        None => by_value.push(((s.runtime_ns, s.period_ns), vec![s.cpu])),
                    }
                }
                let parts: Vec<String> = by_value
                    .iter()
                    .map(|((r, p), cpus)| {
                        format!(
                            "{} per {} on CPUs {}",
                            sim_core::format_duration(*r),
                            sim_core::format_duration(*p),
                            super::plan::list_text(cpus)
                        )
                    })
                    .collect();
                format!("fair server {}", parts.join(", "))
            }
        };
        let domains = match &self.root_domains {
            Some(d) => d.iter().map(|d| super::plan::list_text(d)).collect::<Vec<_>>().join(" | "),
            None => format!("unknown ({})", self.root_domains_source),
        };
        format!(
            "host RT/DL: sched_rt_runtime_us={} sched_rt_period_us={} sched_rr_timeslice_ms={} · {} ({}) · {} · root domains {}",
            v(self.sched_rt_runtime_us),
            v(self.sched_rt_period_us),
            v(self.sched_rr_timeslice_ms),
            group,
            self.rt_group_sched_source,
            servers,
            domains
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::host::tests::TempDir;
    use super::*;
    use std::path::PathBuf;

    /// A host record as this development VM reads (6.18, RT group
    /// scheduling on, default fair servers on CPUs 0-1).
    pub(crate) fn vm() -> HostRt {
        HostRt {
            sched_rt_runtime_us: Some(950_000),
            sched_rt_period_us: Some(1_000_000),
            sched_rr_timeslice_ms: Some(100),
            rt_group_sched: Some(true),
            rt_group_sched_source: "config".into(),
            root_rt_runtime_us: Some(950_000),
            root_rt_period_us: Some(1_000_000),
            own_rt_runtime_us: None,
            fair_server: FairServers::Read(vec![
                FairServer { cpu: 0, runtime_ns: 50_000_000, period_ns: 1_000_000_000 },
                FairServer { cpu: 1, runtime_ns: 50_000_000, period_ns: 1_000_000_000 },
            ]),
            root_domains: Some(vec![vec![0, 1]]),
            root_domains_source: "test".into(),
        }
    }

    #[test]
    fn rt_group_sched_from_config_cgroup_and_cmdline() {
        let on =
            "CONFIG_CGROUP_SCHED=y\nCONFIG_RT_GROUP_SCHED=y\n# CONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED is not set\n";
        let off = "CONFIG_CGROUP_SCHED=y\n# CONFIG_RT_GROUP_SCHED is not set\n";
        let default_off = "CONFIG_RT_GROUP_SCHED=y\nCONFIG_RT_GROUP_SCHED_DEFAULT_DISABLED=y\n";
        // This VM: built in, and the v1 root shows cpu.rt_runtime_us.
        let (v, why) = rt_group_sched((6, 18), Some(on), "", Some(true));
        assert_eq!(v, Some(true), "{why}");
        assert!(why.contains("present"), "{why}");
        assert_eq!(rt_group_sched((6, 18), Some(off), "", Some(false)).0, Some(false));
        // Built in but switched off at boot: the v1 files are gone.
        let (v, why) = rt_group_sched((6, 18), Some(on), "rt_group_sched=0", Some(false));
        assert_eq!(v, Some(false), "{why}");
        // No v1 hierarchy: the boot switch and the default (6.16+).
        assert_eq!(rt_group_sched((6, 18), Some(on), "quiet rt_group_sched=0", None).0, Some(false));
        assert_eq!(rt_group_sched((6, 18), Some(default_off), "", None).0, Some(false));
        assert_eq!(rt_group_sched((6, 18), Some(default_off), "rt_group_sched=1", None).0, Some(true));
        assert_eq!(rt_group_sched((6, 12), Some(default_off), "rt_group_sched=0", None).0, Some(true));
        // No config.
        assert_eq!(rt_group_sched((6, 18), None, "", Some(true)).0, Some(true));
        let (v, why) = rt_group_sched((6, 18), None, "", None);
        assert_eq!(v, None);
        assert!(why.starts_with("unknown"), "{why}");
    }

    #[test]
    fn root_domains_from_isolcpus_and_cpusets() {
        let all = [0u16, 1, 2, 3];
        let (d, _) = root_domains(&all, &[], &CpusetView::None);
        assert_eq!(d, Some(vec![vec![0, 1, 2, 3]]));
        let (d, _) = root_domains(&all, &[2, 3], &CpusetView::V1 { sched_load_balance: Some(true) });
        assert_eq!(d, Some(vec![vec![0, 1], vec![2, 3]]));
        let (d, why) = root_domains(&all, &[], &CpusetView::V1 { sched_load_balance: Some(false) });
        assert!(d.is_none() && why.contains("sched_load_balance"), "{why}");
        let (d, _) = root_domains(&all, &[3], &CpusetView::V2 { root_effective: Some(vec![0, 1, 2]) });
        assert_eq!(d, Some(vec![vec![0, 1, 2], vec![3]]));
        let (d, why) = root_domains(&all, &[], &CpusetView::V2 { root_effective: Some(vec![0, 1]) });
        assert!(d.is_none() && why.contains("2-3"), "{why}");
    }

    #[test]
    fn host_rt_from_a_fake_tree() {
        let tree = TempDir::new("host-rt");
        tree.write("proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        tree.write("proc/sys/kernel/sched_rt_period_us", "1000000\n");
        tree.write("proc/sys/kernel/sched_rr_timeslice_ms", "100\n");
        tree.write("sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n");
        tree.write("sys/fs/cgroup/cpu/cpu.rt_period_us", "1000000\n");
        tree.write("sys/fs/cgroup/cpu/app/cpu.rt_runtime_us", "0\n");
        tree.write("sys/fs/cgroup/cpuset/cpuset.sched_load_balance", "1\n");
        tree.write(
            "proc/mounts",
            "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\ncgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n",
        );
        tree.write("proc/self/cgroup", "3:cpuset:/\n1:cpu:/app\n0::/\n");
        for cpu in 0..2 {
            tree.write(&format!("sys/kernel/debug/sched/fair_server/cpu{cpu}/runtime"), "50000000\n");
            tree.write(&format!("sys/kernel/debug/sched/fair_server/cpu{cpu}/period"), "1000000000\n");
        }
        let cgroup = CgroupVersion::V1 { cpu: PathBuf::from("/sys/fs/cgroup/cpu") };
        let known = |version, config, debugfs| Known {
            kernel_version: version,
            config,
            cmdline: "",
            cgroup: &cgroup,
            cpus_online: &[0, 1],
            isolcpus: "",
            debugfs,
        };
        let config = Some("CONFIG_RT_GROUP_SCHED=y\n");
        let rt = read(&tree.0, &known((6, 18), config, Ok(())));
        let want = HostRt {
            rt_group_sched_source: rt.rt_group_sched_source.clone(),
            root_domains_source: rt.root_domains_source.clone(),
            own_rt_runtime_us: Some(("/app".into(), 0)),
            ..vm()
        };
        assert_eq!(rt, want);
        let line = rt.line();
        assert!(line.contains("sched_rt_runtime_us=950000") && line.contains("50ms per 1s on CPUs 0-1"), "{line}");
        assert!(line.contains("root cpu.rt_runtime_us=950000") && line.contains("root domains 0-1"), "{line}");
        // Before 6.12 there is no fair server; debugfs refused: said so.
        let old = read(&tree.0, &known((6, 6), config, Ok(())));
        assert_eq!(old.fair_server, FairServers::Absent);
        let locked = read(&tree.0, &known((6, 18), config, Err("unreadable: lockdown".into())));
        assert_eq!(locked.fair_server, FairServers::Unreadable("unreadable: lockdown".into()));
        assert!(locked.line().contains("fair server unreadable: lockdown"), "{}", locked.line());
        // A CPU whose files are missing makes the whole read unreadable, naming the file.
        let FairServers::Unreadable(why) =
            read_fair_servers(&tree.0.join("sys/kernel/debug/sched/fair_server"), &[0, 5])
        else {
            panic!("cpu5 has no files")
        };
        assert!(why.contains("cpu5/runtime"), "{why}");
        // RT group scheduling off: no root group values read.
        let off = read(&tree.0, &known((6, 18), Some("# CONFIG_RT_GROUP_SCHED is not set\n"), Ok(())));
        assert_eq!((off.rt_group_sched, off.root_rt_runtime_us, off.own_rt_runtime_us), (Some(false), None, None));
        let json = serde_json::to_value(&rt).expect("json");
        assert_eq!(json["fair_server"]["read"][0]["runtime_ns"], 50_000_000);
        assert_eq!(serde_json::to_value(&locked.fair_server).expect("json")["unreadable"], "unreadable: lockdown");
    }
}

#[cfg(test)]
mod json_tests {
    use super::*;
    use sim_core::{HostFacts, MeasuredCpu, MeasuredInfo, MeasuredTask, Measurement};

    /// A measured report of a 1-CPU scenario whose host record is `rt`.
    fn report_json_with(rt: &HostRt) -> serde_json::Value {
        let toml = "schema = 1\nseed = 1\nduration = \"1s\"\n[machine]\ncpus = 1\n[[tasks]]\nname = \"t\"\n\
                    program = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n";
        let scenario = sim_core::Scenario::from_toml("s.toml", toml).expect("scenario");
        let host = HostFacts { cpu_map: vec![0], rt: Some(rt.facts()), ..HostFacts::default() };
        let m = Measurement {
            info: MeasuredInfo { host, delays_from: "threads".into(), ..MeasuredInfo::default() },
            duration_ns: 1_000_000_000,
            tasks: vec![MeasuredTask::default()],
            cpus: vec![MeasuredCpu::default()],
            cpu_stats: Vec::new(),
        };
        let json = sim_core::report_json(&sim_core::RunReport::measured(&scenario, m));
        serde_json::from_str(&json).expect("the report is JSON")
    }

    /// `measure --json` carries this host's RT record in
    /// `measurement.host.rt`, read as measure reads it (only /proc and
    /// /sys: debugfs is not mounted here, so the fair servers of a 6.12+
    /// host are "unreadable: …").
    #[test]
    fn the_json_report_carries_this_hosts_rt_record() {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let version = super::super::host::parse_kernel_version(release.trim()).unwrap_or((0, 0));
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_else(|_| "0".into());
        let cpus = parse_cpu_list(online.trim()).unwrap_or_else(|_| vec![0]);
        let isolated = std::fs::read_to_string("/sys/devices/system/cpu/isolated").unwrap_or_default();
        let known = Known {
            kernel_version: version,
            config: None,
            cmdline: "",
            cgroup: &CgroupVersion::None,
            cpus_online: &cpus,
            isolcpus: isolated.trim(),
            debugfs: Err("unreadable: not mounted by this test".into()),
        };
        let rt = read(Path::new("/"), &known);
        let v = report_json_with(&rt);
        let h = &v["measurement"]["host"]["rt"];
        assert!(h.is_object(), "{v}");
        let sysctl = |name: &str| read_i64(&Path::new("/proc/sys/kernel").join(name));
        for name in ["sched_rt_runtime_us", "sched_rt_period_us", "sched_rr_timeslice_ms"] {
            assert_eq!(h[name].as_i64(), sysctl(name), "{name}: {h}");
        }
        assert!(h["rt_group_sched"].is_boolean() || h["rt_group_sched"].is_null(), "{h}");
        assert!(!h["rt_group_sched_source"].as_str().unwrap_or_default().is_empty(), "{h}");
        assert_eq!(h["fair_servers"].as_array().map(Vec::len), Some(0), "{h}");
        let missing = h["fair_servers_missing"].as_str().unwrap_or_default();
        if version >= (6, 12) {
            assert_eq!(missing, "unreadable: not mounted by this test", "{h}");
        } else {
            assert!(missing.starts_with("absent"), "{h}");
        }
    }

    /// Read fair servers reach the JSON per CPU, with no reason given.
    #[test]
    fn read_fair_servers_reach_the_json() {
        let rt = HostRt {
            sched_rt_runtime_us: Some(-1),
            sched_rt_period_us: Some(1_000_000),
            sched_rr_timeslice_ms: Some(100),
            rt_group_sched: Some(false),
            rt_group_sched_source: "config".into(),
            root_rt_runtime_us: None,
            root_rt_period_us: None,
            own_rt_runtime_us: None,
            fair_server: FairServers::Read(vec![FairServer {
                cpu: 0,
                runtime_ns: 50_000_000,
                period_ns: 1_000_000_000,
            }]),
            root_domains: Some(vec![vec![0, 1, 2, 3]]),
            root_domains_source: "isolcpus".into(),
        };
        let h = report_json_with(&rt)["measurement"]["host"]["rt"].clone();
        assert_eq!(h["sched_rt_runtime_us"], -1);
        assert_eq!(
            h["fair_servers"],
            serde_json::json!([{ "cpu": 0, "runtime_ns": 50_000_000, "period_ns": 1_000_000_000 }])
        );
        assert!(h["fair_servers_missing"].is_null(), "{h}");
        assert_eq!(h["root_domains"], serde_json::json!(["0-3"]));
    }
}
