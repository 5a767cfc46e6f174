//! 6.x fair.c's CPU capacity as RT and deadline time lowers it:
//! `scale_rt_capacity`, `update_cpu_capacity`, `update_group_capacity`,
//! `check_cpu_capacity` and `sched_reduced_capacity` (6.6 fair.c:9368-9745,
//! 6.12 9934-10298, 6.18 9988-10352). Reading note: docs/kernel/rt-capacity.md.
//!
//! `rq->cpu_capacity` is `topo.cpu_capacity` and `sgc->capacity` the
//! groups' `capacity` in this policy's copy of the topology; both start at
//! the boot values and change only when a load balance refreshes its local
//! group. With no RT or deadline task `avg_rt` and `avg_dl` are 0 and each
//! refresh writes the boot value again. IRQ time and thermal/HW pressure
//! (`cpu_util_irq`, `thermal_load_avg`/`hw_load_avg`) are 0 here.

use super::Smp6x;
use crate::ids::CpuId;
use crate::sched::balance::{CpuSignals, Machine};
use crate::sched::topology::{DomainId, SD_NUMA};

impl Smp6x {
    /// `capacity_of` (6.x fair.c): `rq->cpu_capacity`.
    pub(super) fn capacity_of(&self, cpu: CpuId) -> u64 {
        self.topo.cpu_capacity[cpu.index()]
    }

    /// `arch_scale_cpu_capacity(cpu)` (6.6 `capacity_orig_of`): 1024 on
    /// equal CPUs.
    pub(super) fn capacity_orig_of(&self, cpu: CpuId) -> u64 {
        self.topo.cpu_capacity_orig[cpu.index()]
    }

    /// `scale_rt_capacity` (6.6 fair.c:9368-9396; 6.12 9934-9959; 6.18
    /// 9988-10013): the original capacity less `avg_rt` and `avg_dl`'s
    /// utilisation, at least 1 (`scale_irq_capacity` with no IRQ time
    /// leaves it as is).
    pub(super) fn scale_rt_capacity(&self, m: &impl Machine, cpu: CpuId) -> u64 {
        let max = self.capacity_orig_of(cpu);
        let p = m.rt_pressure(cpu);
        let used = p.avg_rt.util_avg + p.avg_dl.util_avg;
        if used >= max {
            return 1;
        }
        max - used
    }

    /// `update_cpu_capacity` (6.6 fair.c:9398-9414): `rq->cpu_capacity`
    /// (at least 1), also the lowest domain's local group capacity.
    fn update_cpu_capacity(&mut self, m: &impl Machine, d: DomainId, sdg: usize, cpu: CpuId) {
        let capacity = self.scale_rt_capacity(m, cpu).max(1);
        self.topo.cpu_capacity[cpu.index()] = capacity;
        self.topo.domains[d.0 as usize].groups[sdg].capacity = capacity;
    }

    /// `update_group_capacity(sd, cpu)` (6.6 fair.c:9416-9467; 6.12
    /// 9977-10030; 6.18 10031-10084) for `this_cpu`'s domain at `level`
    /// (`sd->groups`: its local group) and `cpu`'s run queue: the next
    /// refresh, then the lowest domain's CPU capacity, or the sum of the
    /// child's groups; under a NUMA child (6.6/6.12 `SD_OVERLAP`, which
    /// every NUMA level has there; 6.18 tests `SD_NUMA`) the sum of
    /// `capacity_of` over the group's CPUs.
    pub(super) fn update_group_capacity(&mut self, m: &impl Machine, this_cpu: CpuId, level: usize, cpu: CpuId) {
        let d = self.topo.cpu_domains[this_cpu.index()][level];
        let sdg = self.topo.local_group(d, this_cpu);
        let interval = super::super::msecs_to_jiffies(self.sd[this_cpu.index()][level].balance_interval, m.hz())
            .clamp(1, self.max_load_balance_interval);
        self.sgc_next_update[d.0 as usize][sdg] = m.jiffies() + interval;
        if level == 0 {
            self.update_cpu_capacity(m, d, sdg, cpu);
            return;
        }
        let child = self.topo.cpu_domains[this_cpu.index()][level - 1];
        let capacity = if self.topo.domain(child).flags & SD_NUMA != 0 {
            self.topo.domain(d).groups[sdg].span.iter().map(|c| self.capacity_of(c)).sum()
        } else {
            self.topo.domain(child).groups.iter().map(|g| g.capacity).sum()
        };
        self.topo.domains[d.0 as usize].groups[sdg].capacity = capacity;
    }

    /// `check_cpu_capacity` (6.6 fair.c:9476-9481; 6.12 10037-10042; 6.18
    /// 10091-10096): RT or deadline time has cut the CPU's capacity by more
    /// than the domain's `imbalance_pct` allows.
    pub(super) fn check_cpu_capacity(&self, cpu: CpuId, d: DomainId) -> bool {
        self.capacity_of(cpu) * u64::from(self.topo.domain(d).imbalance_pct) < self.capacity_orig_of(cpu) * 100
    }

    /// `sched_reduced_capacity` (6.6 fair.c:9734-9745; 6.12 10287-10298;
    /// 6.18 10341-10352): one CFS task (6.18 `h_nr_runnable`) on a CPU
    /// whose capacity is cut ("with more, group_overloaded takes care of it").
    /// Here from the CPU's signals already read.
    pub(super) fn sched_reduced_capacity(&self, s: &CpuSignals, cpu: CpuId, d: DomainId) -> bool {
        self.runnable_of(s) == 1 && self.check_cpu_capacity(cpu, d)
    }
}
