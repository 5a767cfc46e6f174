//! Where a waking or new task is queued (4.4 fair.c): `select_task_rq_fair`
//! with `wake_wide`, `wake_affine` (`effective_load`), `select_idle_sibling`
//! and `find_idlest_group`/`find_idlest_cpu`; `record_wakee` from
//! `task_waking_fair`.

use super::{Smp44, Wakee};
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::{Machine, MigrateCause, PlaceKind, Placement};
use crate::sched::topology::{
    DomainId, SCHED_CAPACITY_SCALE, SD_BALANCE_FORK, SD_BALANCE_WAKE, SD_LOAD_BALANCE, SD_WAKE_AFFINE,
};

impl Smp44 {
    /// `record_wakee` (4.4 fair.c, from `task_waking_fair`): `current` (the
    /// task running where `try_to_wake_up` runs, or that CPU's idle task)
    /// counts how often it switches wakees; the count halves every second.
    pub fn record_wakee(&mut self, jiffies: u64, hz: u64, current: Option<TaskId>, waker_cpu: CpuId, p: TaskId) {
        let w = self.wakee_mut(current, waker_cpu);
        if jiffies > w.wakee_flip_decay_ts + hz {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_ts = jiffies;
        }
        if w.last_wakee != Some(p) {
            w.last_wakee = Some(p);
            w.wakee_flips += 1;
        }
    }

    fn wakee_mut(&mut self, current: Option<TaskId>, cpu: CpuId) -> &mut Wakee {
        match current {
            Some(t) => &mut self.wakee[t.index()],
            None => &mut self.idle_wakee[cpu.index()],
        }
    }

    fn wakee_of(&self, current: Option<TaskId>, cpu: CpuId) -> &Wakee {
        match current {
            Some(t) => &self.wakee[t.index()],
            None => &self.idle_wakee[cpu.index()],
        }
    }

    /// `wake_wide` (4.4 fair.c): a waker that switches between more wakees
    /// than the LLC has CPUs, with a wakee that does the same, spreads.
    fn wake_wide(&self, current: Option<TaskId>, this_cpu: CpuId, p: TaskId) -> bool {
        let mut master = self.wakee_of(current, this_cpu).wakee_flips;
        let mut slave = self.wakee[p.index()].wakee_flips;
        let factor = self.topo.llc_size[this_cpu.index()];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    /// `select_task_rq_fair` (4.4 fair.c) for a wake-up (`SD_BALANCE_WAKE`,
    /// `WF_SYNC` if `sync`) run on `this_cpu` by `current`, or a fork
    /// (`SD_BALANCE_FORK`) run on `this_cpu`. The core's `select_task_rq`
    /// (the engine) calls it only for a task allowed on more than one CPU.
    pub fn select_task_rq_fair(
        &self,
        m: &impl Machine,
        p: TaskId,
        prev_cpu: CpuId,
        kind: PlaceKind,
        this_cpu: CpuId,
        current: Option<TaskId>,
    ) -> Placement {
        let (sd_flag, sync) = match kind {
            PlaceKind::Wake { sync } => (SD_BALANCE_WAKE, sync),
            PlaceKind::Fork => (SD_BALANCE_FORK, false),
        };
        let mut cpu = this_cpu;
        let mut new_cpu = prev_cpu;
        let mut cause = if sd_flag & SD_BALANCE_FORK != 0 { MigrateCause::Fork } else { MigrateCause::IdleSibling };
        let want_affine =
            sd_flag & SD_BALANCE_WAKE != 0 && !self.wake_wide(current, this_cpu, p) && m.cpus_allowed(p).contains(cpu);
        let mut affine_sd: Option<DomainId> = None;
        // `sd` as a level index into cpu's domains (the walk below moves to
        // new_cpu's domains, so keep the CPU with it).
        let mut sd: Option<(CpuId, usize)> = None;
        for (level, &d) in self.topo.cpu_domains[cpu.index()].iter().enumerate() {
            let dom = self.topo.domain(d);
            if dom.flags & SD_LOAD_BALANCE == 0 {
                break;
            }
            // If both cpu and prev_cpu are part of this domain, cpu is a valid SD_WAKE_AFFINE target.
            if want_affine && dom.flags & SD_WAKE_AFFINE != 0 && dom.span.contains(prev_cpu) {
                affine_sd = Some(d);
                break;
            }
            if dom.flags & sd_flag != 0 {
                sd = Some((cpu, level));
            } else if !want_affine {
                break;
            }
        }
        if let Some(d) = affine_sd {
            sd = None; // Prefer wake_affine over balance flags.
            if cpu != prev_cpu && self.wake_affine(m, d, p, this_cpu, sync) {
                new_cpu = cpu;
                cause = MigrateCause::WakeAffine;
            }
        }
        if sd.is_none() {
            if sd_flag & SD_BALANCE_WAKE != 0 {
                let target = new_cpu;
                new_cpu = self.select_idle_sibling(m, p, new_cpu);
                if new_cpu != target {
                    cause = MigrateCause::IdleSibling;
                }
            }
            return Placement { cpu: new_cpu, cause };
        }
        if sd_flag & SD_BALANCE_WAKE != 0 {
            cause = MigrateCause::WakeIdlest;
        }
        // The find_idlest walk, bounded by the domain depth: each step goes
        // to a child domain or to a smaller domain of the new CPU.
        let mut steps = 0;
        while let Some((sd_cpu, level)) = sd {
            steps += 1;
            if steps > 4 * self.topo.cpu_domains[sd_cpu.index()].len() + 4 {
                break;
            }
            let d = self.topo.cpu_domains[sd_cpu.index()][level];
            let dom = self.topo.domain(d);
            let child = if level == 0 { None } else { Some((sd_cpu, level - 1)) };
            if dom.flags & sd_flag == 0 {
                sd = child;
                continue;
            }
            let Some(group) = self.find_idlest_group(m, d, p, cpu, sd_flag) else {
                sd = child;
                continue;
            };
            new_cpu = self.find_idlest_cpu(m, d, group, p, cpu);
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
                    sd = Some((cpu, l));
                }
            }
        }
        Placement { cpu: new_cpu, cause }
    }

    /// `wake_affine` (4.4 fair.c): wake on `this_cpu` if, with the wakee's
    /// load moved there, this CPU's capacity-scaled load stays within half
    /// the domain's imbalance margin of prev_cpu's.
    fn wake_affine(&self, m: &impl Machine, d: DomainId, p: TaskId, this_cpu: CpuId, sync: bool) -> bool {
        let dom = self.topo.domain(d);
        let idx = dom.wake_idx;
        let prev_cpu = m.task_cpu(p);
        let mut load = self.source_load(m, prev_cpu, idx) as i64;
        let mut this_load = self.target_load(m, this_cpu, idx) as i64;
        if sync && let Some(curr) = m.curr(this_cpu) {
            // The waker is about to sleep: subtract its load from this CPU.
            let weight = m.task_load_avg(curr) as i64;
            this_load += m.effective_load(curr, this_cpu, -weight, -weight);
            load += m.effective_load(curr, prev_cpu, 0, -weight);
        }
        let weight = m.task_load_avg(p) as i64;
        let mut this_eff_load = 100i64 * self.capacity_of(prev_cpu) as i64;
        let mut prev_eff_load = (100 + (i64::from(dom.imbalance_pct) - 100) / 2) * self.capacity_of(this_cpu) as i64;
        if this_load > 0 {
            this_eff_load *= this_load + m.effective_load(p, this_cpu, weight, weight);
            prev_eff_load *= load + m.effective_load(p, prev_cpu, 0, weight);
        }
        this_eff_load <= prev_eff_load
    }

    /// `select_idle_sibling` (4.4 fair.c): the target if idle; prev if it
    /// shares the target's cache and is idle; else, from `sd_llc` down, the
    /// first allowed CPU of the first group (other than the target's) whose
    /// CPUs are all idle — a whole idle core before a lone idle SMT thread.
    fn select_idle_sibling(&self, m: &impl Machine, p: TaskId, target: CpuId) -> CpuId {
        let i = m.task_cpu(p);
        if m.idle_cpu(target) {
            return target;
        }
        if i != target && self.topo.llc_id[i.index()] == self.topo.llc_id[target.index()] && m.idle_cpu(i) {
            return i;
        }
        let Some(llc) = self.topo.sd_llc[target.index()] else { return target };
        let allowed = m.cpus_allowed(p);
        for level in (0..=llc).rev() {
            let d = self.topo.domain(self.topo.cpu_domains[target.index()][level]);
            // sd->groups starts at the group of `target`; walk the ring from there.
            let start = self.topo.local_group(self.topo.cpu_domains[target.index()][level], target);
            let n = d.groups.len();
            for k in 0..n {
                let g = &d.groups[(start + k) % n];
                if !g.span.intersects(allowed) {
                    continue;
                }
                if g.span.iter().any(|c| c == target || !m.idle_cpu(c)) {
                    continue;
                }
                if let Some(c) = g.span.first_and(allowed) {
                    return c;
                }
            }
        }
        target
    }

    /// `find_idlest_group` (4.4 fair.c): the least loaded group (capacity
    /// scaled) with an allowed CPU, unless the local group is within half
    /// the imbalance margin. Returns the group's index in the domain.
    fn find_idlest_group(
        &self,
        m: &impl Machine,
        d: DomainId,
        p: TaskId,
        this_cpu: CpuId,
        sd_flag: u32,
    ) -> Option<usize> {
        let dom = self.topo.domain(d);
        let load_idx = if sd_flag & SD_BALANCE_WAKE != 0 { dom.wake_idx } else { dom.forkexec_idx };
        let imbalance = 100 + (u64::from(dom.imbalance_pct) - 100) / 2;
        let allowed = m.cpus_allowed(p);
        let mut idlest = None;
        let mut min_load = u64::MAX;
        let mut this_load = 0;
        let start = self.topo.local_group(d, this_cpu);
        let n = dom.groups.len();
        for k in 0..n {
            let gi = (start + k) % n;
            let g = &dom.groups[gi];
            if !g.span.intersects(allowed) {
                continue;
            }
            let local = g.span.contains(this_cpu);
            let mut avg_load = 0u64;
            for i in g.span.iter() {
                // Bias balancing toward cpus of our domain.
                avg_load += if local { self.source_load(m, i, load_idx) } else { self.target_load(m, i, load_idx) };
            }
            avg_load = avg_load * SCHED_CAPACITY_SCALE / g.capacity;
            if local {
                this_load = avg_load;
            } else if avg_load < min_load {
                min_load = avg_load;
                idlest = Some(gi);
            }
        }
        let idlest = idlest?;
        if 100 * this_load < imbalance * min_load {
            return None;
        }
        Some(idlest)
    }

    /// `find_idlest_cpu` (4.4 fair.c): in the group, the idle allowed CPU
    /// that went idle last (no cpuidle states are modelled, so every idle
    /// CPU has the same exit latency), else the least loaded allowed CPU.
    fn find_idlest_cpu(&self, m: &impl Machine, d: DomainId, group: usize, p: TaskId, this_cpu: CpuId) -> CpuId {
        let g = &self.topo.domain(d).groups[group];
        let allowed = m.cpus_allowed(p);
        let mut min_load = u64::MAX;
        let mut least_loaded = this_cpu;
        let mut shallowest_idle: Option<CpuId> = None;
        let mut latest_idle_timestamp = 0u64;
        for i in g.span.iter().filter(|&c| allowed.contains(c)) {
            if m.idle_cpu(i) {
                // rq->idle_stamp > latest_idle_timestamp: the kernel's stamp is
                // a clock that is never 0 once a CPU has idled, so store +1.
                let stamp = self.rqs[i.index()].idle_stamp.map_or(0, |s| s + 1);
                if stamp > latest_idle_timestamp {
                    latest_idle_timestamp = stamp;
                    shallowest_idle = Some(i);
                }
            } else if shallowest_idle.is_none() {
                let load = Self::weighted_cpuload(m, i);
                if load < min_load || (load == min_load && i == this_cpu) {
                    min_load = load;
                    least_loaded = i;
                }
            }
        }
        shallowest_idle.unwrap_or(least_loaded)
    }
}
