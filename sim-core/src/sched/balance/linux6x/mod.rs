//! Linux 6.6 / 6.12 / 6.18's SMP half of the fair class (kernel/sched/fair.c,
//! topology.c): wake-up and fork placement (`wake.rs`: `select_task_rq_fair`,
//! `wake_affine_idle`/`_weight`, `select_idle_sibling` with
//! `recent_used_cpu`, `select_idle_core`/`_smt`/`_cpu` and SIS_UTIL,
//! `find_idlest_group`/`_cpu`), `load_balance` with the 5.5+ group and
//! migration types (`load_balance.rs`), and the entry points that run it —
//! `sched_balance_trigger`, `sched_balance_softirq`/`rebalance_domains`,
//! `sched_balance_newidle`, NO_HZ idle balancing with stats-only kicks and
//! active balancing (this file).
//!
//! One code path serves the three versions; where they differ the code asks
//! a named rule of `Balance6xRules` (the version table, `sched/model.rs`),
//! never the version. Names follow 6.12 (`sched_balance_*`); 6.6's older
//! names are given beside them.
//!
//! State the kernel keeps in `struct rq`, `struct sched_domain`,
//! `struct sched_domain_shared` and `struct sched_group_capacity` for
//! balancing lives in `Smp6x`; the engine owns the run queues themselves
//! and is reached through `Machine`. There is no `cpu_load[]`: the balancer
//! reads PELT (`Machine::cpu_signals`, `task_signals`).

mod capacity;
mod idlest;
mod lb_stats;
mod load_balance;
mod nohz;
mod rebalance;
mod wake;

#[cfg(test)]
mod lb_tests;
#[cfg(test)]
mod mock;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wake_tests;

use super::{Machine, PlaceKind, Placement};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::topology::{DomainId, DomainLevel, Topology, Topology6xRules};

/// 6.12.0 and 6.18.0 features.h bits of fair.c's SMP half, run at their
/// defaults (not `[features]` switches): select_idle_cpu's SIS_UTIL,
/// wake_affine's WA_IDLE/WA_WEIGHT/WA_BIAS, UTIL_EST, CACHE_HOT_BUDDY,
/// LB_MIN, NONTASK_CAPACITY.
pub const SMP_FEATURES: &[&str] =
    &["CACHE_HOT_BUDDY", "NONTASK_CAPACITY", "SIS_UTIL", "LB_MIN", "WA_IDLE", "WA_WEIGHT", "WA_BIAS", "UTIL_EST"];
/// 6.6.0's: the same with SIS_PROP (off; removed in 6.8) and UTIL_EST_FASTUP (removed in 6.7).
pub const SMP_FEATURES_66: &[&str] = &[
    "CACHE_HOT_BUDDY",
    "NONTASK_CAPACITY",
    "SIS_PROP",
    "SIS_UTIL",
    "LB_MIN",
    "WA_IDLE",
    "WA_WEIGHT",
    "WA_BIAS",
    "UTIL_EST",
    "UTIL_EST_FASTUP",
];

/// `sysctl_sched_migration_cost` (6.x fair.c): 0.5 ms.
pub const SYSCTL_SCHED_MIGRATION_COST_NS: u64 = 500_000;
/// `sysctl_sched_nr_migrate` (6.x core.c; 32 without PREEMPT_RT).
pub const SYSCTL_SCHED_NR_MIGRATE: u32 = 32;
/// `MAX_PINNED_INTERVAL` (6.x fair.c), in ms.
pub const MAX_PINNED_INTERVAL: u64 = 512;

/// The ways 6.6, 6.12 and 6.18 differ in placement and balancing, each a
/// named rule; the version table (`sched/model.rs`) holds one value per
/// version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Balance6xRules {
    /// The version, for the trace and tests only (no code branches on it).
    pub version: &'static str,
    /// DELAY_DEQUEUE exists (6.12+): delayed tasks are queued but asleep;
    /// `can_migrate_task` and `detach_tasks` treat them apart.
    pub delayed_tasks: bool,
    /// 6.18 counts runnable tasks without the delayed ones
    /// (`h_nr_runnable`) where 6.12 counts `h_nr_running`/`h_nr_queued`
    /// (`update_sg_lb_stats`, `wake_affine_idle`'s sync test,
    /// `sched_balance_newidle`'s pull test).
    pub runnable_excludes_delayed: bool,
    /// UTIL_EST_FASTUP exists and is on (6.6; removed in 6.7).
    pub util_est_fastup: bool,
    /// The cluster level's flags: 6.6 `SD_SHARE_PKG_RESOURCES`; 6.12+
    /// `SD_CLUSTER | SD_SHARE_LLC` (`cpu_cluster_flags`).
    pub cluster_flag: bool,
    /// 6.6.0–6.6.40 (b0defa7ae03e "Make sure to try to detach at least one
    /// movable task", reverted in 6.10 and 6.6.41): `detach_tasks` goes past
    /// `loop_max` while `LBF_ALL_PINNED`, and LBF_NEED_BREAK goes back to
    /// `more_balance` only `if (env.loop < busiest->nr_running)`.
    pub try_one_movable_task: bool,
    /// `detach_tasks` migrate_util: `shr_bound(util, nr_balance_failed)`
    /// is compared with the imbalance (6.12+), the plain util in 6.6.
    pub util_shr_bound: bool,
    /// `can_migrate_task` (6.18): a delayed-dequeue task moves only when
    /// migrating load (`p->se.sched_delayed && migration_type != migrate_load`).
    pub delayed_only_migrate_load: bool,
    /// `can_migrate_task` (6.18): `task_is_ineligible_on_dst_cpu` keeps an
    /// ineligible task while the domain's `nr_balance_failed` is 0.
    pub ineligible_soft_limit: bool,
    /// `sched_balance_newidle` (6.18.0): a failed pass charges
    /// `3/2 · max_newidle_lb_cost`, and `update_newidle_cost` caps the cost
    /// at `sysctl_sched_migration_cost + 200`. In 6.18.0-6.18.2 only: the
    /// stable 6.18.3 reverted it, so a current 6.18.y host runs more
    /// newidle passes than this model of 6.18.0.
    pub newidle_fail_bump: bool,
    /// 6.12+ `select_idle_smt` skips SMT siblings outside `sd_llc` and
    /// `select_idle_core` takes only CPUs of the scan mask (LLC ∩ allowed);
    /// 6.6 takes any allowed sibling, an isolated one (no domain) too.
    pub idle_smt_in_llc: bool,
    /// The package level's name: DIE (6.6) or PKG (6.7's rename); same mask
    /// and flags (x86 `build_sched_topology`).
    pub package_level: DomainLevel,
    /// NUMA levels carry SD_OVERLAP (`SDTL_OVERLAP`: 6.6, 6.12); 6.18
    /// removed the flag and builds overlapping groups for SD_NUMA.
    pub numa_overlap: bool,
    /// `update_sd_pick_busiest` between two `group_misfit_task` groups: 6.6
    /// takes the later one unless its misfit load is smaller (`<` → false,
    /// 6.6 fair.c:9905-9912); 6.12+ only a strictly bigger one (`return
    /// sgs > busiest`, 6.12 fair.c:10453-10458, 6.18 10513-10518).
    pub misfit_tie_replaces: bool,
}

impl Balance6xRules {
    /// The rules `Topology::build_6x` follows.
    pub fn topology(&self) -> Topology6xRules {
        Topology6xRules {
            cluster_flag: self.cluster_flag,
            package_level: self.package_level,
            numa_overlap: self.numa_overlap,
        }
    }
}

/// Per CPU, what 6.x keeps in `struct rq` for balancing.
#[derive(Clone, Debug)]
pub struct RqSmp {
    /// `rq->next_balance` (jiffies).
    pub next_balance: u64,
    /// `rq->idle_stamp` (ns; None = 0 in the kernel).
    pub idle_stamp: Option<u64>,
    /// `rq->avg_idle` (ns).
    pub avg_idle: u64,
    /// `rq->max_idle_balance_cost` (ns).
    pub max_idle_balance_cost: u64,
    /// `rq->idle_balance`: the CPU was idle at its last tick.
    pub idle_balance: bool,
    /// `rq->nohz_tick_stopped`.
    pub nohz_tick_stopped: bool,
    /// `rq->nohz_flags`: NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK
    /// (and NOHZ_NEWILB_KICK).
    pub nohz_flags: u32,
    /// `rq->nohz_idle_balance`: the kick's flags, handed from
    /// `nohz_csd_func` to the softirq.
    pub nohz_idle_balance: u32,
    /// `rq->has_blocked_load` and `rq->last_blocked_load_update_tick`.
    pub has_blocked_load: bool,
    pub last_blocked_load_update_tick: u64,
    /// `rq->active_balance` and `rq->push_cpu`.
    pub active_balance: bool,
    pub push_cpu: CpuId,
    /// `rq->misfit_task_load` (0 on a machine of equal capacities).
    pub misfit_task_load: u64,
}

/// Per CPU and domain level, the mutable half of `struct sched_domain`.
#[derive(Clone, Debug)]
pub struct DomainState {
    pub last_balance: u64,
    /// ms, as `sd->balance_interval`.
    pub balance_interval: u64,
    pub nr_balance_failed: u32,
    pub max_newidle_lb_cost: u64,
    /// `sd->last_decay_max_lb_cost` (jiffies).
    pub last_decay_max_lb_cost: u64,
    /// `sd->nohz_idle` (kept on `sd_llc`).
    pub nohz_idle: bool,
}

/// `struct sched_domain_shared` of one LLC (`sd_llc_shared`), by LLC id.
#[derive(Clone, Copy, Debug, Default)]
pub struct LlcShared {
    pub nr_busy_cpus: u32,
    pub has_idle_cores: bool,
    /// SIS_UTIL's scan depth (`update_idle_cpu_scan`); 0 until the first
    /// LLC-level `update_sd_lb_stats` (kzalloc'ed at domain build).
    pub nr_idle_scan: u32,
}

/// `task_struct`'s placement fields (6.x): wakee flips, `recent_used_cpu`,
/// `wake_cpu` is the engine's task CPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskSmp {
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<TaskId>,
    /// `p->recent_used_cpu` (set from `select_idle_sibling`'s prev).
    pub recent_used_cpu: Option<CpuId>,
}

/// The 6.x SMP policy and its state.
#[derive(Clone, Debug)]
pub struct Smp6x {
    pub rules: Balance6xRules,
    pub topo: Topology,
    pub rqs: Vec<RqSmp>,
    /// Per CPU, per entry of `topo.cpu_domains[cpu]`.
    pub sd: Vec<Vec<DomainState>>,
    /// `sgc->imbalance`, per domain and group.
    pub sgc_imbalance: Vec<Vec<bool>>,
    /// `sgc->next_update` (jiffies), per domain and group: a newly idle
    /// balance refreshes the local group's capacity only from then on.
    pub sgc_next_update: Vec<Vec<u64>>,
    /// `sd_llc_shared`, indexed by the LLC id's CPU index (`topo.llc_id`);
    /// a CPU has one only where `topo.llc_shared[cpu]` is Some.
    pub llc_shared: Vec<LlcShared>,
    /// `nohz.idle_cpus_mask`, `nohz.nr_cpus`, `nohz.has_blocked`,
    /// `nohz.next_balance`, `nohz.next_blocked`, `nohz.needs_update`.
    pub nohz_idle_cpus: CpuSet,
    pub nohz_nr_cpus: u32,
    pub nohz_has_blocked: bool,
    pub nohz_next_balance: u64,
    pub nohz_next_blocked: u64,
    pub nohz_needs_update: bool,
    /// `rd->overloaded` and `rd->overutilized` of the one root domain.
    pub overloaded: bool,
    pub overutilized: bool,
    /// Per task, and per CPU for its idle task (`current` of an interrupt
    /// that arrives while the CPU idles).
    pub tasks: Vec<TaskSmp>,
    pub idle_wakee: Vec<TaskSmp>,
    /// `max_load_balance_interval` = HZ · online CPUs / 10 (jiffies).
    pub max_load_balance_interval: u64,
    /// CONFIG_NO_HZ_COMMON with idle CPUs stopping their tick.
    pub nohz: bool,
    /// `cpu_active_mask` less the isolated CPUs.
    pub active_cpus: CpuSet,
    /// `load_balance_mask` / `select_rq_mask` scratch sets.
    pub lb_scratch: CpuSet,
    pub sis_scratch: CpuSet,
}

impl Smp6x {
    pub fn new(rules: Balance6xRules, topo: Topology, hz: u64, tasks: usize, nohz: bool) -> Smp6x {
        let n = usize::from(topo.cpus());
        let sd = (0..n)
            .map(|c| {
                topo.cpu_domains[c]
                    .iter()
                    .map(|&d| DomainState {
                        last_balance: 0,
                        balance_interval: topo.domain(d).balance_interval,
                        nr_balance_failed: 0,
                        max_newidle_lb_cost: 0,
                        last_decay_max_lb_cost: 0,
                        nohz_idle: false,
                    })
                    .collect()
            })
            .collect();
        let sgc_imbalance = topo.domains.iter().map(|d| vec![false; d.groups.len()]).collect();
        // init_sched_groups_capacity → update_group_capacity at boot (jiffies 0).
        let max_interval = (hz * n as u64 / 10).max(1);
        let sgc_next_update = super::sgc_next_update_at_boot(&topo, hz, max_interval);
        let rq = RqSmp {
            next_balance: 0,
            idle_stamp: None,
            // sched_init: avg_idle = 2 * migration cost, max_idle_balance_cost = migration cost.
            avg_idle: 2 * SYSCTL_SCHED_MIGRATION_COST_NS,
            max_idle_balance_cost: SYSCTL_SCHED_MIGRATION_COST_NS,
            idle_balance: false,
            nohz_tick_stopped: false,
            nohz_flags: 0,
            nohz_idle_balance: 0,
            has_blocked_load: false,
            last_blocked_load_update_tick: 0,
            active_balance: false,
            push_cpu: CpuId(0),
            misfit_task_load: 0,
        };
        let mut active_cpus = CpuSet::all(topo.cpus());
        for c in topo.isolated.iter() {
            active_cpus.remove(c);
        }
        let mut smp = Smp6x {
            rules,
            rqs: vec![rq; n],
            sd,
            sgc_imbalance,
            sgc_next_update,
            llc_shared: vec![LlcShared::default(); n],
            nohz_idle_cpus: CpuSet::empty(topo.cpus()),
            nohz_nr_cpus: 0,
            nohz_has_blocked: false,
            nohz_next_balance: 0,
            nohz_next_blocked: 0,
            nohz_needs_update: false,
            overloaded: false,
            overutilized: false,
            tasks: vec![TaskSmp::default(); tasks],
            idle_wakee: vec![TaskSmp::default(); n],
            // update_max_interval (6.x fair.c).
            max_load_balance_interval: (hz * n as u64 / 10).max(1),
            nohz,
            active_cpus,
            lb_scratch: CpuSet::empty(topo.cpus()),
            sis_scratch: CpuSet::empty(topo.cpus()),
            topo,
        };
        smp.boot();
        smp
    }

    fn dom(&self, cpu: CpuId, level: usize) -> DomainId {
        self.topo.cpu_domains[cpu.index()][level]
    }

    /// `on_null_domain`: an isolated CPU (or a machine of one CPU).
    pub fn on_null_domain(&self, cpu: CpuId) -> bool {
        self.topo.cpu_domains[cpu.index()].is_empty()
    }

    // The entry points below are the engine's (through `Smp`); the bodies
    // are filled in by the balancing half (load_balance.rs) and the
    // placement half (wake.rs).

    /// `sched_tick` → `rq->idle_balance = idle_cpu(cpu)`, `sched_balance_trigger`.
    pub fn scheduler_tick(&mut self, m: &mut impl Machine, cpu: CpuId) {
        self.sched_tick(m, cpu);
    }

    /// Whether `cpu`'s tick at `jiffies` raises SCHED_SOFTIRQ
    /// (`sched_balance_trigger`: `time_after_eq(jiffies, rq->next_balance)`).
    pub fn balance_due(&self, cpu: CpuId, jiffies: u64) -> bool {
        !self.on_null_domain(cpu) && jiffies >= self.rqs[cpu.index()].next_balance
    }

    /// The NO_HZ kick arrives at `ilb` (`nohz_csd_func` → SCHED_SOFTIRQ).
    pub fn nohz_kick_received(&mut self, m: &mut impl Machine, ilb: CpuId) {
        self.nohz_csd_func(m, ilb);
    }

    /// `active_load_balance_cpu_stop` on `busiest`.
    pub fn active_load_balance_cpu_stop(&mut self, m: &mut impl Machine, busiest: CpuId) {
        self.active_stop(m, busiest);
    }

    /// `sched_balance_newidle` (6.6 `newidle_balance`): whether it pulled.
    pub fn idle_balance(&mut self, m: &mut impl Machine, cpu: CpuId) -> bool {
        self.sched_balance_newidle(m, cpu)
    }

    /// `ttwu_do_activate` (6.x core.c): a task woken onto a CPU that went
    /// idle ends its idle period, which feeds `avg_idle`.
    pub fn ttwu_do_wakeup(&mut self, now: u64, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        if let Some(stamp) = rq.idle_stamp.take() {
            let delta = now.saturating_sub(stamp);
            let max = 2 * rq.max_idle_balance_cost;
            // update_avg: `*avg += diff / 8` (C division truncates toward 0),
            // then the cap: `if (rq->avg_idle > max) rq->avg_idle = max`.
            let avg = rq.avg_idle as i64;
            rq.avg_idle = (avg + (delta as i64 - avg) / 8) as u64;
            if rq.avg_idle > max {
                rq.avg_idle = max;
            }
        }
    }

    /// `add_nr_running` (6.x sched.h): `set_rd_overloaded(rq->rd, 1)` when
    /// a run queue goes from fewer than two tasks to two or more (isolated
    /// CPUs sit in the default root domain, whose flag no balancer reads).
    pub fn add_nr_running(&mut self, cpu: CpuId, prev_nr: u32, nr_running: u32) {
        if prev_nr < 2 && nr_running >= 2 && !self.on_null_domain(cpu) {
            self.overloaded = true;
        }
    }

    /// An idle CPU stops its tick (`tick_nohz_idle_stop_tick` →
    /// `nohz_balance_enter_idle`, called when the tick goes from running to
    /// stopped).
    pub fn tick_stopped(&mut self, cpu: CpuId) {
        if self.nohz {
            self.nohz_balance_enter_idle(cpu);
        }
    }

    /// A CPU leaves NO_HZ idle (`tick_nohz_idle_exit`): 6.x has no
    /// `cpu_load[]` to catch up, and `nohz_balance_exit_idle` waits for
    /// the CPU's next busy tick (`nohz_balancer_kick`), so nothing happens here.
    pub fn tick_restarted(&mut self, jiffies: u64, cpu: CpuId) -> bool {
        let _ = (jiffies, cpu);
        false
    }

    /// `record_wakee` (6.x fair.c, from `select_task_rq_fair` for WF_TTWU):
    /// `current` (the task running where the wake-up runs, or that CPU's
    /// idle task) counts how often it switches wakees.
    pub fn record_wakee(&mut self, jiffies: u64, hz: u64, current: Option<TaskId>, waker_cpu: CpuId, p: TaskId) {
        let w = match current {
            Some(t) => &mut self.tasks[t.index()],
            None => &mut self.idle_wakee[waker_cpu.index()],
        };
        wake::record_wakee(w, jiffies, hz, p);
    }

    /// `select_task_rq_fair` (6.x fair.c).
    pub fn select_task_rq_fair(
        &mut self,
        m: &mut impl Machine,
        task: TaskId,
        prev_cpu: CpuId,
        kind: PlaceKind,
        this_cpu: CpuId,
        current: Option<TaskId>,
    ) -> Placement {
        wake::select_task_rq_fair(self, m, task, prev_cpu, kind, this_cpu, current)
    }
}
