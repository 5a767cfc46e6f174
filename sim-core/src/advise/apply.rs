//! How a fix is applied on a real machine: shell commands for each knob's
//! setting, for the machine and kernel the scenario describes. A command
//! names threads as `<tid of NAME>` (every thread of a declaration with
//! `count`), which the user fills in (`pgrep -x`, `ps -eLo tid,comm`).
//!
//! Where the files are, by kernel:
//! - 4.4: the fair tunables are sysctls under /proc/sys/kernel
//!   (kernel/sysctl.c, CONFIG_SCHED_DEBUG) and the features are
//!   /sys/kernel/debug/sched_features (core.c, `sched_init_debug`).
//! - 5.13 and later: both moved to debugfs, /sys/kernel/debug/sched/
//!   (`base_slice_ns`, `features`: 6.x debug.c, `sched_init_debug`).
//!
//! The model's `TunablesAt` rule says which.

use super::knobs::{Apply, Setting};
use crate::sched::model::TunablesAt;
use crate::scenario::Scenario;
use crate::workload::dist::parse_duration;

/// cgroup v2 `cpu.weight` for a v1 `cpu.shares` value: the kernel maps a
/// weight w to shares `DIV_ROUND_CLOSEST(w × 1024, 100)`
/// (`sched_weight_from_cgroup`, 6.x core.c), so the weight nearest a share
/// value is `round(shares × 100 / 1024)`, clamped to [1, 10000].
pub fn weight_of_shares(shares: u64) -> u64 {
    ((shares * 100 + 512) / 1024).clamp(1, 10_000)
}

/// `µs` text of a duration setting.
fn ns_of(v: &str) -> u64 {
    parse_duration(v.trim_matches('"')).unwrap_or(0)
}

fn value<'a>(st: &'a Setting, key_end: &str) -> Option<&'a str> {
    st.sets.iter().find(|(k, _)| k.ends_with(key_end)).map(|(_, v)| v.trim_matches('"'))
}

fn tids(task: &str) -> String {
    format!("<tid of {task}>")
}

/// The commands that apply `st` (a setting of a knob applied by `how`) on a
/// machine running `s`'s kernel, one per line, `#` lines saying what they need.
pub fn commands(s: &Scenario, how: &Apply, st: &Setting) -> Vec<String> {
    let at = s.spec.kernel.rules().tunables_at;
    let v = |end: &str| value(st, end).unwrap_or("").to_string();
    match how {
        Apply::Tunable(name) => {
            let ns = ns_of(&v(name));
            match at {
                TunablesAt::ProcSysKernel => vec![format!("sysctl -w kernel.{name}={ns}")],
                TunablesAt::DebugfsSched => vec![format!("echo {ns} > /sys/kernel/debug/sched/{name}")],
            }
        }
        Apply::Feature(name) => {
            let token = if v(name) == "true" { name.to_string() } else { format!("NO_{name}") };
            match at {
                TunablesAt::ProcSysKernel => vec![format!("echo {token} > /sys/kernel/debug/sched_features")],
                TunablesAt::DebugfsSched => vec![format!("echo {token} > /sys/kernel/debug/sched/features")],
            }
        }
        Apply::Autogroup => vec![
            "sysctl -w kernel.sched_autogroup_enabled=0".into(),
            "# a task changes group when it forks or calls setsid: restart the services after it".into(),
        ],
        Apply::AutogroupNice { session } => {
            let nice = st.sets.first().map_or("0", |(_, x)| x.as_str());
            vec![format!("echo {nice} > /proc/<pid of a process in session {session}>/autogroup")]
        }
        Apply::Session { task, session } => vec![format!(
            "# start {task} from session {session} (the same systemd unit or shell); autogroup follows the session (setsid)"
        )],
        Apply::Cgroup { task, path } => {
            let rel = path.trim_start_matches('/');
            vec![
                format!("echo {} > /sys/fs/cgroup/{rel}/cgroup.threads   # cgroup v2 (threaded), or cgroup.procs for the process", tids(task)),
                format!("echo {} > /sys/fs/cgroup/cpu/{rel}/tasks   # cgroup v1", tids(task)),
            ]
        }
        Apply::Shares { path } => {
            let rel = path.trim_start_matches('/');
            let shares: u64 = v("shares").parse().unwrap_or(1024);
            vec![
                format!("echo {} > /sys/fs/cgroup/{rel}/cpu.weight   # cgroup v2", weight_of_shares(shares)),
                format!("echo {shares} > /sys/fs/cgroup/cpu/{rel}/cpu.shares   # cgroup v1"),
                format!("systemctl set-property <unit of {path}> CPUWeight={}", weight_of_shares(shares)),
            ]
        }
        Apply::Quota { path } => quota_commands(path, &v("cpu.max\"")),
        Apply::Burst { path } => {
            let rel = path.trim_start_matches('/');
            let us = v("cpu.max.burst\"");
            vec![
                format!("echo {us} > /sys/fs/cgroup/{rel}/cpu.max.burst   # cgroup v2 (5.14+)"),
                format!("echo {us} > /sys/fs/cgroup/cpu/{rel}/cpu.cfs_burst_us   # cgroup v1 (5.14+)"),
                "# Kubernetes: no pod field sets a CFS burst".into(),
            ]
        }
        Apply::Affinity { tasks } => {
            let mut v: Vec<String> = tasks.iter().map(|(t, cpus)| format!("taskset -pc {cpus} {}", tids(t))).collect();
            v.push(
                "# Kubernetes: kubelet cpuManagerPolicy: static gives a Guaranteed pod with an integer CPU request exclusive CPUs"
                    .into(),
            );
            v
        }
        Apply::Isolcpus { cpus, task } => vec![
            format!("# add isolcpus={cpus} to the kernel command line (GRUB_CMDLINE_LINUX), update-grub, reboot"),
            format!("taskset -pc {cpus} {}", tids(task)),
        ],
        Apply::Nice { task } => vec![format!("renice -n {} -p {}", v("nice"), tids(task))],
        Apply::Policy { task } => match v("policy").as_str() {
            "batch" => vec![format!("chrt --batch -p 0 {}", tids(task))],
            "idle" => vec![format!("chrt --idle -p 0 {}", tids(task))],
            "fifo" => vec![format!("chrt --fifo -p {} {}", v("rt_priority"), tids(task))],
            other => vec![format!("# policy {other}")],
        },
        Apply::Deadline { task } => vec![format!(
            "chrt --deadline --sched-runtime {} --sched-deadline {} --sched-period {} -p 0 {}",
            ns_of(&v("dl_runtime")),
            ns_of(&v("dl_deadline")),
            ns_of(&v("dl_period")),
            tids(task)
        )],
        Apply::Ionice { task } => match v("ionice").as_str() {
            "idle" => vec![format!("ionice -c 3 -p {}", tids(task))],
            other => {
                let (class, level) = other.split_once('/').unwrap_or(("be", "4"));
                let c = if class == "rt" { 1 } else { 2 };
                vec![format!("ionice -c {c} -n {level} -p {}", tids(task))]
            }
        },
        Apply::Slice { task } => slice_commands(s, task, ns_of(&v("slice"))),
        Apply::Elevator { device } => vec![format!("echo {} > /sys/block/<{device}>/queue/scheduler", v("elevator"))],
        Apply::Hz => vec![format!("# rebuild the kernel with CONFIG_HZ_{0}=y (CONFIG_HZ={0}) and boot it", v("machine.hz"))],
        Apply::Kernel => vec![format!("# boot a Linux {} kernel", v("kernel.version"))],
    }
}

/// `cpu.max` as cgroup v2, v1 and a Kubernetes limit.
fn quota_commands(path: &str, cpu_max: &str) -> Vec<String> {
    let rel = path.trim_start_matches('/');
    let mut parts = cpu_max.split_whitespace();
    let (quota, period) = (parts.next().unwrap_or("max"), parts.next().unwrap_or("100000"));
    let v1_quota = if quota == "max" { "-1".to_string() } else { quota.to_string() };
    let mut out = vec![
        format!("echo \"{quota} {period}\" > /sys/fs/cgroup/{rel}/cpu.max   # cgroup v2"),
        format!(
            "echo {period} > /sys/fs/cgroup/cpu/{rel}/cpu.cfs_period_us; echo {v1_quota} > /sys/fs/cgroup/cpu/{rel}/cpu.cfs_quota_us   # cgroup v1"
        ),
    ];
    match (quota.parse::<u64>(), period.parse::<u64>()) {
        (Ok(q), Ok(p)) if p > 0 => {
            out.push(format!("# Kubernetes: resources: {{ limits: {{ cpu: \"{}m\" }} }}", q * 1000 / p));
            if p != 100_000 {
                out.push(format!(
                    "# Kubernetes: kubelet --cpu-cfs-quota-period={}ms (feature gate CustomCPUCFSQuotaPeriod)",
                    p / 1000
                ));
            }
        }
        _ => out.push(
            "# Kubernetes: no CPU limit (resources.limits.cpu unset; or cpuManagerPolicy: static with a whole-CPU request)".into(),
        ),
    }
    out
}

/// A custom slice is `sched_attr.sched_runtime` of a SCHED_OTHER task
/// (6.12+ `__setscheduler_params`), set with `sched_setattr(2)`; util-linux
/// `chrt` has no option for it on a fair task, so a small helper (x86-64
/// syscall 314) does it. The task's nice goes in too, as `sched_setattr`
/// sets it.
fn slice_commands(s: &Scenario, task: &str, ns: u64) -> Vec<String> {
    let nice = s.spec.tasks.iter().find(|t| t.name == task).map_or(0, |t| t.nice);
    vec![format!(
        "python3 -c 'import ctypes,struct,sys; a=struct.pack(\"<IIQiIQQQ\",48,0,0,{nice},0,{ns},0,0); \
         r=ctypes.CDLL(None,use_errno=True).syscall(314,int(sys.argv[1]),a,0); sys.exit(r and ctypes.get_errno())' {}   # sched_setattr, x86-64",
        tids(task)
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_the_kernels_mapping() {
        // sched_weight_from_cgroup(100) = 1024: the default weight.
        assert_eq!(weight_of_shares(1024), 100);
        assert_eq!(weight_of_shares(2), 1);
        assert_eq!(weight_of_shares(262_144), 10_000);
        assert_eq!(weight_of_shares(4096), 400);
    }

    #[test]
    fn quota_commands_give_v2_v1_and_kubernetes() {
        let c = quota_commands("/pod", "150000 100000");
        assert!(c[0].starts_with("echo \"150000 100000\" > /sys/fs/cgroup/pod/cpu.max"), "{c:?}");
        assert!(c[1].contains("cpu.cfs_quota_us") && c[1].contains("echo 150000"), "{c:?}");
        assert!(c[2].contains("cpu: \"1500m\""), "{c:?}");
        let unlimited = quota_commands("/pod", "max 100000");
        assert!(unlimited[1].contains("echo -1 >") && unlimited[2].contains("no CPU limit"), "{unlimited:?}");
        assert!(quota_commands("/a", "2000 10000").iter().any(|l| l.contains("--cpu-cfs-quota-period=10ms")));
    }
}
