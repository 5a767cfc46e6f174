//! The statistics half of 6.x `load_balance` (6.12+ `sched_balance_rq`):
//! `update_sg_lb_stats` with the 5.5+ group types (`group_classify`),
//! `update_sd_pick_busiest`, `update_sd_lb_stats` (with SIS_UTIL's
//! `update_idle_cpu_scan` and the root domain's overload flag),
//! `sched_balance_find_src_group` (6.6 `find_busiest_group`) and
//! `calculate_imbalance` with its migration types and the NUMA allowance.
//!
//! Read from 6.6.9, 6.12.0 and 6.18.0 fair.c: this half is the same code in
//! all three but for the count of runnable tasks (6.18 `h_nr_runnable`, a
//! rule) and for asymmetric-capacity and asym-packing branches, which a
//! machine of equal CPUs never takes (each is named where it is left out).

use super::Smp6x;
use super::load_balance::LbEnv;
use crate::ids::CpuId;
use crate::sched::balance::{CpuIdleType, CpuSignals, Machine};
use crate::sched::topology::{
    SCHED_CAPACITY_SCALE, SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_PKG_RESOURCES,
};

/// `SD_SHARE_LLC` (6.12+; 6.6 `SD_SHARE_PKG_RESOURCES`, the same bit here).
pub(super) const SD_SHARE_LLC: u32 = SD_SHARE_PKG_RESOURCES;
/// `NUMA_IMBALANCE_MIN` (6.x fair.c).
const NUMA_IMBALANCE_MIN: i64 = 2;
/// Feature `SIS_UTIL` (6.x features.h: on).
const SIS_UTIL: bool = true;

/// `enum group_type` (6.x fair.c), in the order the balancer pulls from.
/// `group_asym_packing` (between `group_smt_balance` and
/// `group_imbalanced`) is left out: it needs SD_ASYM_PACKING, which x86
/// sets only with ITMT, not modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    MisfitTask,
    SmtBalance,
    Imbalanced,
    Overloaded,
}

/// `enum migration_type` (6.x fair.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum MigrationType {
    #[default]
    Load,
    Util,
    Task,
    Misfit,
}

/// `struct sg_lb_stats` (6.x fair.c; no NUMA-balancing counts: the model
/// has no NUMA balancing, so `fbq_type` never filters a queue).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SgLbStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: GroupType,
    pub group_smt_balance: bool,
    pub group_misfit_task_load: u64,
}

/// `struct sd_lb_stats` (6.x fair.c); groups by index in the domain.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SdLbStats {
    pub busiest: Option<usize>,
    pub local: Option<usize>,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: bool,
    pub busiest_stat: SgLbStats,
    pub local_stat: SgLbStats,
}

/// `adjust_numa_imbalance` (6.x fair.c): a small imbalance between NUMA
/// groups is allowed while the destination runs at most `imb_numa_nr` tasks.
pub(super) fn adjust_numa_imbalance(imbalance: i64, dst_running: i64, imb_numa_nr: i64) -> i64 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    // Allow a small imbalance based on a simple pair of communicating tasks
    // that remain local when the destination is lightly loaded.
    if imbalance <= NUMA_IMBALANCE_MIN {
        return 0;
    }
    imbalance
}

impl Smp6x {
    /// `cpu_util(cpu, NULL, -1, boost)` (6.x fair.c): `cpu_util_cfs`, or
    /// `cpu_util_cfs_boost` with `runnable_avg`; UTIL_EST on; capped at the
    /// CPU's original capacity (`arch_scale_cpu_capacity`).
    pub(super) fn cpu_util(&self, m: &impl Machine, cpu: CpuId, boost: bool) -> u64 {
        self.util_of(&m.cpu_signals(cpu), cpu, boost)
    }

    /// `cpu_util` from signals already read.
    fn util_of(&self, s: &CpuSignals, cpu: CpuId, boost: bool) -> u64 {
        let mut util = s.util_avg;
        if boost {
            util = util.max(s.runnable_avg);
        }
        util.max(s.util_est).min(self.capacity_orig_of(cpu))
    }

    /// `rq->cfs.h_nr_running` (6.6/6.12, delayed tasks included) or
    /// `rq->cfs.h_nr_runnable` (6.18), where the balancer counts CFS tasks.
    pub(super) fn h_nr_runnable(&self, m: &impl Machine, cpu: CpuId) -> u32 {
        self.runnable_of(&m.cpu_signals(cpu))
    }

    /// `h_nr_runnable` from signals already read.
    pub(super) fn runnable_of(&self, s: &CpuSignals) -> u32 {
        if self.rules.runnable_excludes_delayed { s.h_nr_queued - s.h_nr_delayed } else { s.h_nr_queued }
    }

    /// `sched_idle_cpu` (6.x fair.c): only SCHED_IDLE tasks are queued.
    pub(super) fn sched_idle_cpu(&self, m: &impl Machine, cpu: CpuId) -> bool {
        let nr = m.nr_running(cpu);
        nr > 0 && nr == m.h_nr_idle(cpu)
    }

    /// `group_has_capacity` (6.x fair.c).
    fn group_has_capacity(pct: u64, sgs: &SgLbStats) -> bool {
        if sgs.sum_nr_running < sgs.group_weight {
            return true;
        }
        if sgs.group_capacity * pct < sgs.group_runnable * 100 {
            return false;
        }
        sgs.group_capacity * 100 > sgs.group_util * pct
    }

    /// `group_is_overloaded` (6.x fair.c).
    fn group_is_overloaded(pct: u64, sgs: &SgLbStats) -> bool {
        if sgs.sum_nr_running <= sgs.group_weight {
            return false;
        }
        if sgs.group_capacity * 100 < sgs.group_util * pct {
            return true;
        }
        sgs.group_capacity * pct < sgs.group_runnable * 100
    }

    /// `group_classify` (6.x fair.c), first match wins. `group_asym_packing`
    /// (after `group_imbalanced`) needs SD_ASYM_PACKING: never chosen here.
    /// `group_misfit_task` on equal CPUs means a CPU of the group runs one
    /// CFS task with its capacity cut by RT or deadline time.
    fn group_classify(&self, env: &LbEnv, group: usize, sgs: &SgLbStats) -> GroupType {
        let pct = u64::from(self.topo.domain(env.d).imbalance_pct);
        if Self::group_is_overloaded(pct, sgs) {
            return GroupType::Overloaded;
        }
        if self.sgc_imbalance[env.d.0 as usize][group] {
            return GroupType::Imbalanced;
        }
        if sgs.group_smt_balance {
            return GroupType::SmtBalance;
        }
        if sgs.group_misfit_task_load != 0 {
            return GroupType::MisfitTask;
        }
        if !Self::group_has_capacity(pct, sgs) {
            return GroupType::FullyBusy;
        }
        GroupType::HasSpare
    }

    /// `update_sg_lb_stats` (6.x fair.c) of group `group` of `env.d`;
    /// `sg_overloaded` collects `nr_running > 1` (6.18 counts it only at
    /// the root, the one level whose flag is kept: the same answer).
    /// No `cpu_overutilized` (6.12+: false without EAS; 6.6's value is read
    /// only by EAS). Inlined into its one caller (fewer instructions per event).
    #[inline(always)]
    fn update_sg_lb_stats(
        &self,
        m: &impl Machine,
        env: &LbEnv,
        group: usize,
        sg_overloaded: &mut bool,
    ) -> SgLbStats {
        let g = &self.topo.domain(env.d).groups[group];
        let local_group = g.span.contains(env.dst_cpu);
        let mut sgs = SgLbStats::default();
        for i in g.span.iter_and(&env.cpus) {
            // One read of the queue's signals serves cpu_util and the counts.
            let s = m.cpu_signals(i);
            let nr_running = m.nr_running(i);
            let idle = nr_running == 0 && m.idle_cpu(i);
            sgs.group_load += s.load_avg;
            sgs.group_util += self.util_of(&s, i, false);
            sgs.group_runnable += s.runnable_avg;
            sgs.sum_h_nr_running += self.runnable_of(&s);
            sgs.sum_nr_running += nr_running;
            if nr_running > 1 {
                *sg_overloaded = true;
            }
            if idle {
                sgs.idle_cpus += 1;
                continue;
            }
            if local_group {
                continue;
            }
            // Not SD_ASYM_CPUCAPACITY (equal CPUs): a task running on a CPU
            // with reduced capacity (6.6 fair.c:9807-9812, 6.12 10362-10365,
            // 6.18 10421-10424), for an idle or newly idle destination.
            if env.idle != CpuIdleType::NotIdle && self.sched_reduced_capacity(&s, i, env.d) {
                sgs.group_misfit_task_load = sgs.group_misfit_task_load.max(s.load_avg);
            }
        }
        sgs.group_capacity = g.capacity;
        sgs.group_weight = g.group_weight;
        // smt_balance: a loaded SMT group to be balanced to an idle dst
        // (the group's flags read only when the rest holds).
        sgs.group_smt_balance = !local_group
            && env.idle != CpuIdleType::NotIdle
            && sgs.sum_h_nr_running > 1
            && self.topo.group_flags_at(env.this_cpu, env.level, group) & SD_SHARE_CPUCAPACITY != 0;
        sgs.group_type = self.group_classify(env, group, &sgs);
        // Computing avg_load makes sense only when the group is overloaded.
        if sgs.group_type == GroupType::Overloaded {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
        }
        sgs
    }

    /// `smt_vs_nonsmt_groups` (6.x fair.c): one group is SMT, the other not.
    fn smt_vs_nonsmt_groups(&self, env: &LbEnv, g1: Option<usize>, g2: Option<usize>) -> bool {
        let (Some(a), Some(b)) = (g1, g2) else { return false };
        let f = |g| self.topo.group_flags_at(env.this_cpu, env.level, g);
        (f(a) & SD_SHARE_CPUCAPACITY) != (f(b) & SD_SHARE_CPUCAPACITY)
    }

    /// `update_sd_pick_busiest` (6.x fair.c): whether group `sg` is busier
    /// than the busiest so far. The SD_ASYM_CPUCAPACITY tests and the
    /// asym_packing/misfit ties are not reachable on equal CPUs.
    fn update_sd_pick_busiest(&self, env: &LbEnv, sds: &SdLbStats, sg: usize, sgs: &SgLbStats) -> bool {
        let busiest = &sds.busiest_stat;
        // Make sure that there is at least one task to pull.
        if sgs.sum_h_nr_running == 0 {
            return false;
        }
        if sgs.group_type != busiest.group_type {
            return sgs.group_type > busiest.group_type;
        }
        let flags = |g| self.topo.group_flags_at(env.this_cpu, env.level, g);
        let busiest_smt = || sds.busiest.is_some_and(|b| flags(b) & SD_SHARE_CPUCAPACITY != 0);
        let has_spare = |sgs: &SgLbStats| {
            // Fewest idle CPUs, then most tasks.
            !(sgs.idle_cpus > busiest.idle_cpus
                || (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running))
        };
        match sgs.group_type {
            // 6.6 `<=` → false then the final test: the same on equal CPUs.
            GroupType::Overloaded => sgs.avg_load > busiest.avg_load,
            // Select the first imbalanced group.
            GroupType::Imbalanced => false,
            // If there is more than one misfit group, go with the biggest
            // misfit: 6.6 keeps looking on a tie (`<` → false, else true);
            // 6.12+ takes a strictly bigger one (`>`).
            GroupType::MisfitTask => {
                if self.rules.misfit_tie_replaces {
                    sgs.group_misfit_task_load >= busiest.group_misfit_task_load
                } else {
                    sgs.group_misfit_task_load > busiest.group_misfit_task_load
                }
            }
            GroupType::SmtBalance if sgs.idle_cpus != 0 || busiest.idle_cpus != 0 => has_spare(sgs),
            // avg_load is 0 for both: the first one wins unless @sg is SMT
            // and the busiest so far is not ("SMT sched groups need more help").
            GroupType::SmtBalance | GroupType::FullyBusy => {
                !(sgs.avg_load < busiest.avg_load || (sgs.avg_load == busiest.avg_load && busiest_smt()))
            }
            GroupType::HasSpare => {
                // Do not pick an SMT group with one task over a non-SMT one.
                if self.smt_vs_nonsmt_groups(env, sds.busiest, Some(sg)) {
                    return !(flags(sg) & SD_SHARE_CPUCAPACITY != 0 && sgs.sum_h_nr_running <= 1);
                }
                has_spare(sgs)
            }
        }
    }

    /// `update_sd_lb_stats` (6.x fair.c): every group of the domain, in the
    /// ring from the local group; the busiest non-local one is kept. At the
    /// root the overload flag is written (`set_rd_overloaded`); at the LLC
    /// SIS_UTIL's scan depth (`update_idle_cpu_scan`).
    pub(super) fn update_sd_lb_stats(&mut self, m: &impl Machine, env: &LbEnv) -> SdLbStats {
        let mut sds = SdLbStats { busiest_stat: SgLbStats { idle_cpus: u32::MAX, ..Default::default() }, ..Default::default() };
        let mut sg_overloaded = false;
        let mut sum_util = 0u64;
        let n = self.topo.domain(env.d).groups.len();
        let start = self.topo.local_group(env.d, env.this_cpu);
        // gi = (start + k) % n for k in 0..n, without dividing.
        let mut next = start.checked_rem(n).unwrap_or(0);
        for _ in 0..n {
            let gi = next;
            next = if gi + 1 == n { 0 } else { gi + 1 };
            let local = self.topo.domain(env.d).groups[gi].span.contains(env.dst_cpu);
            // The local group's capacity is refreshed, by a newly idle CPU
            // only once sgc->next_update has passed (6.x update_sd_lb_stats).
            if local && (env.idle != CpuIdleType::NewlyIdle || m.jiffies() >= self.sgc_next_update[env.d.0 as usize][gi]) {
                self.update_group_capacity(m, env.this_cpu, env.level, env.dst_cpu);
            }
            let sgs = self.update_sg_lb_stats(m, env, gi, &mut sg_overloaded);
            if local {
                sds.local = Some(gi);
                sds.local_stat = sgs;
            } else if self.update_sd_pick_busiest(env, &sds, gi, &sgs) {
                sds.busiest = Some(gi);
                sds.busiest_stat = sgs;
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
            sum_util += sgs.group_util;
        }
        // The child domain of the busiest group prefers tasks go to siblings
        // first (the flags of a group are those of its child domain).
        if let Some(b) = sds.busiest {
            sds.prefer_sibling = self.topo.group_flags_at(env.this_cpu, env.level, b) & SD_PREFER_SIBLING != 0;
        }
        // SD_NUMA: fbq_classify_group gives `all` without NUMA balancing.
        if env.level + 1 == self.topo.cpu_domains[env.this_cpu.index()].len() {
            // set_rd_overloaded at the root domain (6.6 WRITE_ONCE(rd->overload)).
            self.overloaded = sg_overloaded;
        }
        self.update_idle_cpu_scan(env, sum_util);
        sds
    }

    /// `update_idle_cpu_scan` (6.x fair.c, SIS_UTIL): at the LLC domain of a
    /// periodic (not newidle) balance, the number of CPUs `select_idle_cpu`
    /// scans falls with the LLC's utilization, to 0 at 85% (1/1.17):
    /// `y = 1024 − x²·pct²/(10000·1024)` with `x = sum_util / llc_weight`,
    /// then `nr_idle_scan = y · llc_weight / 1024`.
    fn update_idle_cpu_scan(&mut self, env: &LbEnv, sum_util: u64) {
        if !SIS_UTIL || env.idle == CpuIdleType::NewlyIdle {
            return;
        }
        let dst = env.dst_cpu.index();
        let llc_weight = u64::from(self.topo.llc_size[dst]);
        let sd = self.topo.domain(env.d);
        if u64::from(sd.span_weight) != llc_weight || self.topo.sd_llc[dst].is_none() {
            return;
        }
        let x = sum_util / llc_weight;
        let pct = u64::from(sd.imbalance_pct);
        let tmp = (x * x * pct * pct / (10_000 * SCHED_CAPACITY_SCALE)).min(SCHED_CAPACITY_SCALE);
        let y = (SCHED_CAPACITY_SCALE - tmp) * llc_weight / SCHED_CAPACITY_SCALE;
        self.llc_shared[self.topo.llc_id[dst].index()].nr_idle_scan = y as u32;
    }

    /// `sibling_imbalance` (6.x fair.c): tasks to move so that both groups
    /// run the same number of tasks per core (rounded), at least 2 when
    /// local is empty and busiest runs more than one.
    pub(super) fn sibling_imbalance(&self, env: &LbEnv, sds: &SdLbStats) -> i64 {
        let (busiest, local) = (&sds.busiest_stat, &sds.local_stat);
        if env.idle == CpuIdleType::NotIdle || busiest.sum_nr_running == 0 {
            return 0;
        }
        let groups = &self.topo.domain(env.d).groups;
        let ncores_busiest = i64::from(sds.busiest.map_or(1, |b| groups[b].cores));
        let ncores_local = i64::from(sds.local.map_or(1, |l| groups[l].cores));
        let (b_nr, l_nr) = (i64::from(busiest.sum_nr_running), i64::from(local.sum_nr_running));
        if ncores_busiest == ncores_local {
            return (b_nr - l_nr).max(0);
        }
        // Balance such that nr_running/ncores ratios are the same on both groups.
        let mut imbalance = (ncores_local * b_nr - ncores_busiest * l_nr).max(0);
        imbalance = (2 * imbalance + ncores_local + ncores_busiest) / (ncores_local + ncores_busiest);
        // Take advantage of resource in an empty sched group.
        if imbalance <= 1 && l_nr == 0 && b_nr > 1 {
            imbalance = 2;
        }
        imbalance
    }

    /// `calculate_imbalance` (6.x fair.c): how much, and what, to move from
    /// the busiest group (`env.migration_type`, `env.imbalance`).
    fn calculate_imbalance(&self, env: &mut LbEnv, sds: &mut SdLbStats) {
        let busiest = sds.busiest_stat;
        let sd = self.topo.domain(env.d);
        match busiest.group_type {
            // Not on equal CPUs (SD_ASYM_CPUCAPACITY: migrate_misfit 1; else
            // migrate_load of the reduced-capacity CPU's load).
            GroupType::MisfitTask => {
                env.migration_type = MigrationType::Load;
                env.imbalance = busiest.group_misfit_task_load as i64;
                return;
            }
            // group_asym_packing (migrate_task of every CFS task) is not chosen here.
            // Reduce the number of tasks sharing CPU capacity; in the
            // imbalanced case move any task (cpus_ptr constraints).
            GroupType::SmtBalance | GroupType::Imbalanced => {
                env.migration_type = MigrationType::Task;
                env.imbalance = 1;
                return;
            }
            _ => {}
        }
        let local = &mut sds.local_stat;
        // Try to use spare capacity of local group without overloading it or emptying busiest.
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && sd.flags & SD_SHARE_LLC == 0 {
                // Busiest is overloaded: fill the local spare capacity.
                env.migration_type = MigrationType::Util;
                env.imbalance = (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                // Utilization at or over capacity while dst is (newly) idle: pull one task.
                if env.idle != CpuIdleType::NotIdle && env.imbalance == 0 {
                    env.migration_type = MigrationType::Task;
                    env.imbalance = 1;
                }
                return;
            }
            env.migration_type = MigrationType::Task;
            env.imbalance = if busiest.group_weight == 1 || sds.prefer_sibling {
                // When prefer sibling, evenly spread running tasks on groups.
                self.sibling_imbalance(env, sds)
            } else {
                // No overload: even the number of idle CPUs. C subtracts two
                // `unsigned int`s and widens: a negative difference wraps.
                i64::from(sds.local_stat.idle_cpus.wrapping_sub(busiest.idle_cpus)).max(0)
            };
            if sd.flags & SD_NUMA != 0 {
                // Consider allowing a small imbalance between NUMA groups.
                let imb_numa_nr = i64::from(self.topo.imb_numa_nr(env.this_cpu, env.level));
                let dst_running = i64::from(sds.local_stat.sum_nr_running) + 1;
                env.imbalance = adjust_numa_imbalance(env.imbalance, dst_running, imb_numa_nr);
            }
            // Number of tasks to move to restore balance.
            env.imbalance >>= 1;
            return;
        }
        // Local is fully busy but has to take more load to relieve the busiest group.
        if local.group_type < GroupType::Overloaded {
            local.avg_load = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity;
            if local.avg_load >= busiest.avg_load {
                env.imbalance = 0;
                return;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity;
            if sds.local_stat.avg_load >= sds.avg_load {
                env.imbalance = 0;
                return;
            }
        }
        // Both groups are or will become overloaded: bring them to the
        // average, no further (unsigned long arithmetic, as in C).
        let local = &sds.local_stat;
        env.migration_type = MigrationType::Load;
        let pull = busiest.avg_load.wrapping_sub(sds.avg_load).wrapping_mul(busiest.group_capacity);
        let push = sds.avg_load.wrapping_sub(local.avg_load).wrapping_mul(local.group_capacity);
        env.imbalance = (pull.min(push) / SCHED_CAPACITY_SCALE) as i64;
    }

    /// `sched_balance_find_src_group` (6.6 `find_busiest_group`): the busiest
    /// group if the domain is out of balance, with `env.imbalance` set.
    /// Misfit and asym_packing are never the busiest type here, and the EAS
    /// test (`!rd->overutilized && rd->pd`) needs a perf domain: none.
    pub(super) fn find_src_group(&mut self, m: &impl Machine, env: &mut LbEnv) -> Option<usize> {
        let mut sds = self.update_sd_lb_stats(m, env);
        let pct = u64::from(self.topo.domain(env.d).imbalance_pct);
        let (local, busiest) = (sds.local_stat, sds.busiest_stat);
        let force = 'decide: {
            // There is no busy sibling group to pull tasks from.
            if sds.busiest.is_none() {
                break 'decide false;
            }
            // Misfit tasks regardless of the avg load, asym_packing (not chosen here) and imbalanced.
            if matches!(busiest.group_type, GroupType::MisfitTask | GroupType::Imbalanced) {
                break 'decide true;
            }
            // The local group is busier than the selected busiest group.
            if local.group_type > busiest.group_type {
                break 'decide false;
            }
            // When groups are overloaded, use avg_load to ensure fairness between tasks.
            if local.group_type == GroupType::Overloaded {
                if local.avg_load >= busiest.avg_load {
                    break 'decide false;
                }
                sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity;
                if local.avg_load >= sds.avg_load || 100 * busiest.avg_load <= pct * local.avg_load {
                    break 'decide false;
                }
            }
            // Try to move all excess tasks to a sibling domain of the busiest group's child domain.
            if sds.prefer_sibling && local.group_type == GroupType::HasSpare && self.sibling_imbalance(env, &sds) > 1 {
                break 'decide true;
            }
            if busiest.group_type != GroupType::Overloaded {
                // Busy dst: let an idle CPU pull.
                if env.idle == CpuIdleType::NotIdle {
                    break 'decide false;
                }
                // Let a non-SMT CPU pull from an SMT core shared with a sibling.
                if busiest.group_type == GroupType::SmtBalance && self.smt_vs_nonsmt_groups(env, sds.local, sds.busiest) {
                    break 'decide true;
                }
                // No imbalance of idle CPUs worth more than one between the groups.
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    break 'decide false;
                }
                // busiest doesn't have any tasks waiting to run.
                if busiest.sum_h_nr_running == 1 {
                    break 'decide false;
                }
            }
            true
        };
        if !force {
            env.imbalance = 0;
            return None;
        }
        self.calculate_imbalance(env, &mut sds);
        if env.imbalance != 0 { sds.busiest } else { None }
    }
}
