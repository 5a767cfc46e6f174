//! The slow path of 6.x placement (fair.c), taken at fork (and at a
//! wake-up only under a domain with `SD_BALANCE_WAKE`, which `sd_init`
//! never sets): `find_idlest_cpu` (6.12 `sched_balance_find_dst_cpu`) walks
//! down from the highest domain with the balance flag, choosing a group by
//! `find_idlest_group` (`update_sg_wakeup_stats`: group types from
//! has_spare to overloaded, then idle CPUs, utilisation or load, with the
//! NUMA allowance) and a CPU in it by `find_idlest_group_cpu`.

use super::Smp6x;
use super::wake::{available_idle_cpu, sched_idle_cpu};
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::{Machine, TaskSignals};
use crate::sched::topology::{DomainId, SCHED_CAPACITY_SCALE, SD_NUMA};

/// `NUMA_IMBALANCE_MIN` (6.x fair.c).
const NUMA_IMBALANCE_MIN: u32 = 2;

/// `enum group_type` (6.x fair.c), from the least to the most loaded, as
/// the wake-up statistics can classify a group: `group_misfit_task`,
/// `group_smt_balance` and `group_asym_packing` (between fully busy and
/// imbalanced) need asymmetric capacities or flags the memset clears.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    Imbalanced,
    Overloaded,
}

/// `struct sg_lb_stats` as `update_sg_wakeup_stats` fills it (the fields
/// the wake-up comparisons read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SgWakeupStats {
    /// `group_load * SCHED_CAPACITY_SCALE / group_capacity`, only for a
    /// fully busy or overloaded group (else 0).
    pub avg_load: u64,
    pub group_load: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub group_capacity: u64,
    pub group_weight: u32,
    pub sum_nr_running: u32,
    pub idle_cpus: u32,
    pub group_type: GroupType,
}

impl Smp6x {
    /// `find_idlest_cpu` (6.6 fair.c; 6.12 `sched_balance_find_dst_cpu`)
    /// from `cpu`'s domain at `level`: choose a group and a CPU in it; stay
    /// and try the child domain when none is better; after a move, go on
    /// from the highest domain of the new CPU smaller than the last one.
    /// `p_new`: a forked task (`se.avg.last_update_time == 0`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn find_idlest_cpu(
        &self,
        m: &mut impl Machine,
        level: usize,
        p: TaskId,
        cpu: CpuId,
        prev_cpu: CpuId,
        sd_flag: u32,
        p_new: bool,
    ) -> CpuId {
        // A fork runs in the parent, which is running on the forking CPU
        // (`wake_up_new_task` in its context): that CPU is not idle and
        // carries one more task than the engine's queue shows (the engine
        // keeps the parent implicit).
        let parent = (p_new && m.fork_parent_implicit()).then_some(cpu);
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        let top = self.topo.cpu_domains[cpu.index()][level];
        if !self.topo.domain(top).span.intersects(m.cpus_allowed(p)) {
            return prev_cpu;
        }
        // A wake-up would sync_entity_load_avg(&p->se) here; the engine's
        // averages of a sleeping task are as of its dequeue (no decay kept).
        let mut sd = Some(level);
        // Each step goes to a child or to a smaller domain of the new CPU.
        let bound = 4 * self.topo.cpu_domains[cpu.index()].len() + 4;
        for _ in 0..bound {
            let Some(level) = sd else { break };
            let d = self.topo.cpu_domains[cpu.index()][level];
            let dom = self.topo.domain(d);
            let child = level.checked_sub(1);
            if dom.flags & sd_flag == 0 {
                sd = child;
                continue;
            }
            let Some(group) = self.find_idlest_group(m, d, p, cpu, p_new, parent) else {
                sd = child;
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(m, d, group, p, cpu, parent);
            if new_cpu == cpu {
                // Now try balancing at a lower domain level of cpu.
                sd = child;
                continue;
            }
            // Now try balancing at a lower domain level of new_cpu.
            cpu = new_cpu;
            let weight = dom.span_weight;
            sd = None;
            for (l, &t) in self.topo.cpu_domains[cpu.index()].iter().enumerate() {
                let td = self.topo.domain(t);
                if weight <= td.span_weight {
                    break;
                }
                if td.flags & sd_flag != 0 {
                    sd = Some(l);
                }
            }
        }
        new_cpu
    }

    /// `find_idlest_group` (6.6 fair.c; 6.12 `sched_balance_find_dst_group`):
    /// the least busy group of `d` with an allowed CPU, by group type, then
    /// by type-specific keys (ties keep the earlier group, in `sd->groups`
    /// order from the local group); `None` keeps the task in the local
    /// group. Returns the group's index in the domain.
    fn find_idlest_group(
        &self,
        m: &mut impl Machine,
        d: DomainId,
        p: TaskId,
        this_cpu: CpuId,
        p_new: bool,
        parent: Option<CpuId>,
    ) -> Option<usize> {
        let dom = self.topo.domain(d);
        let start = self.topo.local_group(d, this_cpu);
        let n = dom.groups.len();
        let mut idlest: Option<usize> = None;
        let mut idlest_sgs = SgWakeupStats { avg_load: u64::from(u32::MAX), group_type: GroupType::Overloaded, ..SgWakeupStats::default() };
        let mut local: Option<(usize, SgWakeupStats)> = None;
        for k in 0..n {
            let gi = (start + k) % n;
            // Skip over this group if it has no CPUs allowed (no core-sched cookies).
            if !dom.groups[gi].span.intersects(m.cpus_allowed(p)) {
                continue;
            }
            let sgs = self.update_sg_wakeup_stats(m, d, gi, p, p_new, parent);
            if dom.groups[gi].span.contains(this_cpu) {
                local = Some((gi, sgs));
            } else if update_pick_idlest(&idlest_sgs, &sgs) {
                idlest = Some(gi);
                idlest_sgs = sgs;
            }
        }
        // There is no idlest group to push tasks to.
        let idlest = idlest?;
        // The local group has been skipped because of CPU affinity.
        let Some((local_gi, local_sgs)) = local else { return Some(idlest) };
        if local_sgs.group_type < idlest_sgs.group_type {
            return None;
        }
        if local_sgs.group_type > idlest_sgs.group_type {
            return Some(idlest);
        }
        let pct = u64::from(dom.imbalance_pct);
        match local_sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                // Allowed imbalance: scale_load_down(NICE_0_LOAD) * (pct - 100) / 100 (174 at 117).
                let imbalance = SCHED_CAPACITY_SCALE * (pct - 100) / 100;
                // Across NUMA nodes, count the imbalance against the remote node.
                if dom.flags & SD_NUMA != 0 && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load {
                    return None;
                }
                if idlest_sgs.avg_load >= local_sgs.avg_load + imbalance {
                    return None;
                }
                if 100 * local_sgs.avg_load <= pct * idlest_sgs.avg_load {
                    return None;
                }
            }
            // Not used in the slow wake-up path.
            GroupType::Imbalanced => return None,
            GroupType::HasSpare => {
                if dom.flags & SD_NUMA != 0 {
                    // CONFIG_NUMA_BALANCING: p->numa_preferred_nid is NUMA_NO_NODE
                    // (no NUMA faults modelled), so neither preferred-node test fires.
                    // p->nr_cpus_allowed != NR_CPUS (NR_CPUS is the build's maximum):
                    // imb_numa_nr = min(weight(local ∩ p->cpus_ptr), sd->imb_numa_nr).
                    let allowed = m.cpus_allowed(p);
                    let local_allowed = dom.groups[local_gi].span.iter_and(allowed).count() as u32;
                    // sd->imb_numa_nr of this_cpu's copy of the domain.
                    let imb_numa_nr = local_allowed.min(self.topo.imb_numa_nr(this_cpu, self.topo.level_of(this_cpu, d)));
                    let imbalance = local_sgs.idle_cpus.abs_diff(idlest_sgs.idle_cpus);
                    if adjust_numa_imbalance(imbalance, local_sgs.sum_nr_running + 1, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                // Select the group with the most idle CPUs.
                if local_sgs.idle_cpus >= idlest_sgs.idle_cpus {
                    return None;
                }
            }
        }
        Some(idlest)
    }

    /// `update_sg_wakeup_stats` (6.x fair.c): group `gi` of `d` as it would
    /// be without `p` (its load, utilisation and runnable taken off its own
    /// CPU, unless it is new).
    fn update_sg_wakeup_stats(
        &self,
        m: &mut impl Machine,
        d: DomainId,
        gi: usize,
        p: TaskId,
        p_new: bool,
        parent: Option<CpuId>,
    ) -> SgWakeupStats {
        let dom = self.topo.domain(d);
        let g = &dom.groups[gi];
        let task_cpu = m.task_cpu(p);
        let ts = m.task_signals(p);
        let mut sgs = SgWakeupStats::default();
        for i in g.span.iter() {
            let c = m.cpu_signals(i);
            // cpu_load_without etc.: p counts on its own CPU once it has an average.
            let own = i == task_cpu && !p_new;
            sgs.group_load += if own { c.load_avg.saturating_sub(m.task_h_load(p)) } else { c.load_avg };
            sgs.group_util += cpu_util_without(c.util_avg, c.util_est, own.then_some(ts));
            sgs.group_runnable += if own { c.runnable_avg.saturating_sub(ts.runnable_avg) } else { c.runnable_avg };
            // task_running_on_cpu is 0: p is not queued at a wake-up or fork
            // (EXEC is not modelled). sum_h_nr_running (6.18 h_nr_runnable)
            // is not read by the wake-up comparisons: not kept.
            let forking = parent == Some(i);
            let nr_running = m.nr_running(i) + u32::from(forking);
            sgs.sum_nr_running += nr_running;
            // idle_cpu_without: rq->curr is the idle task (p runs nowhere;
            // at a fork the parent runs on its CPU).
            if nr_running == 0 && m.curr(i).is_none() {
                sgs.idle_cpus += 1;
            }
        }
        sgs.group_capacity = g.capacity;
        sgs.group_weight = g.group_weight;
        let imbalanced = self.sgc_imbalance[d.0 as usize][gi];
        sgs.group_type = group_classify(dom.imbalance_pct, imbalanced, &sgs);
        // avg_load makes sense only when the group is fully busy or overloaded.
        if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
        }
        sgs
    }

    /// `find_idlest_group_cpu` (6.6 fair.c; 6.12
    /// `sched_balance_find_dst_group_cpu`): a SCHED_IDLE-only CPU at once;
    /// else the idle CPU of the smallest exit latency, then the latest
    /// `idle_stamp` — no cpuidle states are modelled (`idle_get_state` is
    /// NULL), so the CPU that went idle last, and an idle CPU whose stamp is
    /// 0 (none since boot or since a wake-up) is not taken; else the least
    /// loaded busy CPU, starting from `this_cpu`.
    fn find_idlest_group_cpu(
        &self,
        m: &impl Machine,
        d: DomainId,
        gi: usize,
        p: TaskId,
        this_cpu: CpuId,
        parent: Option<CpuId>,
    ) -> CpuId {
        let g = &self.topo.domain(d).groups[gi];
        // Check if we have any choice.
        if g.group_weight == 1 {
            return g.span.iter().next().unwrap_or(this_cpu);
        }
        let allowed = m.cpus_allowed(p);
        let mut min_load = u64::MAX;
        let mut least_loaded = this_cpu;
        let mut shallowest_idle: Option<CpuId> = None;
        let mut latest_idle_timestamp = 0u64;
        for i in g.span.iter_and(allowed) {
            let forking = parent == Some(i);
            if !forking && sched_idle_cpu(m, i) {
                return i;
            }
            if !forking && available_idle_cpu(m, i) {
                // rq->idle_stamp > latest_idle_timestamp: the kernel's stamp is a
                // clock, never 0 once set, so a stamp at 0 ns counts as 1.
                let stamp = self.rqs[i.index()].idle_stamp.map_or(0, |s| s.max(1));
                if stamp > latest_idle_timestamp {
                    latest_idle_timestamp = stamp;
                    shallowest_idle = Some(i);
                }
            } else if shallowest_idle.is_none() {
                let load = m.cpu_signals(i).load_avg;
                if load < min_load {
                    min_load = load;
                    least_loaded = i;
                }
            }
        }
        shallowest_idle.unwrap_or(least_loaded)
    }

}

/// `cpu_util(cpu, p, -1, 0)` (6.x fair.c) as `cpu_util_without` calls it:
/// `p` (its signals) only on its own CPU. util_avg without p's, util_est
/// as is (p is neither queued nor current), the larger (UTIL_EST), capped
/// at the CPU's original capacity.
fn cpu_util_without(util_avg: u64, util_est: u64, p: Option<TaskSignals>) -> u64 {
    let util = match p {
        Some(ts) => util_avg.saturating_sub(ts.util_avg),
        None => util_avg,
    };
    util.max(util_est).min(SCHED_CAPACITY_SCALE)
}

/// `group_has_capacity` (6.x fair.c).
fn group_has_capacity(pct: u32, sgs: &SgWakeupStats) -> bool {
    let pct = u64::from(pct);
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity * pct < sgs.group_runnable * 100 {
        return false;
    }
    sgs.group_capacity * 100 > sgs.group_util * pct
}

/// `group_is_overloaded` (6.x fair.c).
fn group_is_overloaded(pct: u32, sgs: &SgWakeupStats) -> bool {
    let pct = u64::from(pct);
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    sgs.group_capacity * 100 < sgs.group_util * pct || sgs.group_capacity * pct < sgs.group_runnable * 100
}

/// `group_classify` (6.x fair.c) for the wake-up statistics: no asym
/// packing, SMT balance or misfit (equal capacities, cleared by the memset).
fn group_classify(pct: u32, imbalanced: bool, sgs: &SgWakeupStats) -> GroupType {
    if group_is_overloaded(pct, sgs) {
        GroupType::Overloaded
    } else if imbalanced {
        GroupType::Imbalanced
    } else if !group_has_capacity(pct, sgs) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `update_pick_idlest` (6.x fair.c): whether `sgs` beats the idlest so far.
fn update_pick_idlest(idlest: &SgWakeupStats, sgs: &SgWakeupStats) -> bool {
    if sgs.group_type != idlest.group_type {
        return sgs.group_type < idlest.group_type;
    }
    match sgs.group_type {
        // Select the group with the lowest avg_load.
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > sgs.avg_load,
        // Not used in the slow wake-up path.
        GroupType::Imbalanced => false,
        // The most idle CPUs, then the lowest utilisation.
        GroupType::HasSpare => {
            idlest.idle_cpus < sgs.idle_cpus
                || (idlest.idle_cpus == sgs.idle_cpus && idlest.group_util > sgs.group_util)
        }
    }
}

/// `adjust_numa_imbalance` (6.x fair.c): a NUMA imbalance of at most
/// `NUMA_IMBALANCE_MIN` idle CPUs is allowed while the destination runs at
/// most `imb_numa_nr` tasks.
fn adjust_numa_imbalance(imbalance: u32, dst_running: u32, imb_numa_nr: u32) -> u32 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN { 0 } else { imbalance }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(sum_nr_running: u32, util: u64, runnable: u64) -> SgWakeupStats {
        SgWakeupStats {
            group_capacity: 2048,
            group_weight: 2,
            sum_nr_running,
            group_util: util,
            group_runnable: runnable,
            ..SgWakeupStats::default()
        }
    }

    #[test]
    fn group_classify_by_task_count_then_utilisation_and_runnable() {
        // Two tasks on two CPUs (2048): has_capacity needs 2048·100 >
        // util·117, i.e. util < 1751 (204,800 > 1750·117 = 204,750).
        assert_eq!(group_classify(117, false, &busy(2, 1750, 0)), GroupType::HasSpare);
        assert_eq!(group_classify(117, false, &busy(2, 1751, 0)), GroupType::FullyBusy);
        // runnable·100 > 2048·117 = 239,616 (2397 and up) makes it fully busy too.
        assert_eq!(group_classify(117, false, &busy(2, 0, 2397)), GroupType::FullyBusy);
        // Three tasks overload it only with util or runnable past the margin.
        assert_eq!(group_classify(117, false, &busy(3, 1751, 0)), GroupType::Overloaded);
        assert_eq!(group_classify(117, false, &busy(3, 100, 100)), GroupType::HasSpare);
        // sgc->imbalance (set by load_balance) ranks between the two.
        assert_eq!(group_classify(117, true, &busy(1, 0, 0)), GroupType::Imbalanced);
    }

    #[test]
    fn numa_imbalance_allows_two_idle_cpus_while_the_destination_is_light() {
        assert_eq!(adjust_numa_imbalance(2, 1, 1), 0);
        assert_eq!(adjust_numa_imbalance(3, 1, 1), 3);
        assert_eq!(adjust_numa_imbalance(1, 2, 1), 1);
    }
}
