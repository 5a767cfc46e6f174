//! 4.4 fair.c's CPU capacity as RT and deadline time lowers it:
//! `scale_rt_capacity`, `update_cpu_capacity`, `update_group_capacity` and
//! `check_cpu_capacity` (fair.c:6134-6251). Reading note:
//! docs/kernel/rt-capacity.md.
//!
//! `rq->cpu_capacity` is `topo.cpu_capacity` and `sgc->capacity` the
//! groups' `capacity` in this policy's copy of the topology; both start at
//! the boot values (`init_sched_groups_capacity`) and change only when a
//! load balance refreshes its local group. Without RT or deadline time
//! `rt_avg` is 0 and every refresh writes the boot value again.

use super::Smp44;
use crate::ids::CpuId;
use crate::sched::balance::Machine;
use crate::sched::rt_pressure::SCHED_AVG_PERIOD_NS;
use crate::sched::topology::{DomainId, SCHED_CAPACITY_SCALE, SD_OVERLAP};

impl Smp44 {
    /// `capacity_of` (4.4 fair.c): `rq->cpu_capacity`.
    pub(super) fn capacity_of(&self, cpu: CpuId) -> u64 {
        self.topo.cpu_capacity[cpu.index()]
    }

    /// `capacity_orig_of` (4.4 fair.c): `rq->cpu_capacity_orig`,
    /// `arch_scale_cpu_capacity` of the lowest domain (589 on SMT).
    pub(super) fn capacity_orig_of(&self, cpu: CpuId) -> u64 {
        self.topo.cpu_capacity_orig[cpu.index()]
    }

    /// `scale_rt_capacity` (4.4 fair.c:6134-6159): the share of
    /// SCHED_CAPACITY_SCALE left after `rt_avg` over the averaging window
    /// (`sched_avg_period() + rq_clock − age_stamp`); at least 1.
    pub(super) fn scale_rt_capacity(m: &impl Machine, cpu: CpuId) -> u64 {
        let p = m.rt_pressure(cpu);
        // __rq_clock_broken(rq) − age_stamp, 0 if negative.
        let delta = m.clock_ns().saturating_sub(p.age_stamp);
        let total = SCHED_AVG_PERIOD_NS + delta;
        let used = p.rt_avg / total;
        if used < SCHED_CAPACITY_SCALE { SCHED_CAPACITY_SCALE - used } else { 1 }
    }

    /// `update_cpu_capacity` (4.4 fair.c:6161-6176): `cpu_capacity =
    /// capacity_orig · scale_rt_capacity >> SCHED_CAPACITY_SHIFT` (at least
    /// 1), also the capacity of the lowest domain's local group.
    fn update_cpu_capacity(&mut self, m: &impl Machine, d: DomainId, sdg: usize, cpu: CpuId) {
        let capacity = ((self.capacity_orig_of(cpu) * Self::scale_rt_capacity(m, cpu)) >> 10).max(1);
        self.topo.cpu_capacity[cpu.index()] = capacity;
        self.topo.domains[d.0 as usize].groups[sdg].capacity = capacity;
    }

    /// `update_group_capacity(sd, cpu)` (4.4 fair.c:6178-6238) for
    /// `this_cpu`'s domain at `level` (`sd->groups`: its local group) and
    /// `cpu`'s run queue: the next refresh time, then the lowest domain's
    /// CPU capacity, or the sum of the child domain's groups (of each CPU's
    /// lowest local group under an SD_OVERLAP child).
    pub(super) fn update_group_capacity(&mut self, m: &impl Machine, this_cpu: CpuId, level: usize, cpu: CpuId) {
        let d = self.dom(this_cpu, level);
        let sdg = self.topo.local_group(d, this_cpu);
        let interval = super::super::msecs_to_jiffies(self.sd[this_cpu.index()][level].balance_interval, m.hz())
            .clamp(1, self.max_load_balance_interval);
        self.sgc_next_update[d.0 as usize][sdg] = m.jiffies() + interval;
        if level == 0 {
            self.update_cpu_capacity(m, d, sdg, cpu);
            return;
        }
        let child = self.dom(this_cpu, level - 1);
        let capacity = if self.topo.domain(child).flags & SD_OVERLAP != 0 {
            // rq->sd->groups->sgc->capacity of each CPU in the group.
            let span = self.topo.domain(d).groups[sdg].span.clone();
            span.iter()
                .map(|c| match self.topo.cpu_domains[c.index()].first() {
                    Some(&low) => self.topo.domain(low).groups[self.topo.local_group(low, c)].capacity,
                    None => self.capacity_of(c),
                })
                .sum()
        } else {
            self.topo.domain(child).groups.iter().map(|g| g.capacity).sum()
        };
        self.topo.domains[d.0 as usize].groups[sdg].capacity = capacity;
    }

    /// `check_cpu_capacity` (4.4 fair.c:6246-6251): RT, deadline (or IRQ)
    /// time has cut the CPU's capacity by more than the domain's
    /// `imbalance_pct` allows.
    pub(super) fn check_cpu_capacity(&self, cpu: CpuId, d: DomainId) -> bool {
        self.capacity_of(cpu) * u64::from(self.topo.domain(d).imbalance_pct) < self.capacity_orig_of(cpu) * 100
    }
}
