//! Where a waking or new task is queued (6.6/6.12/6.18 fair.c, the fast
//! path): `select_task_rq_fair` with `record_wakee`/`wake_wide`,
//! `wake_affine` → `wake_affine_idle`/`wake_affine_weight`, and
//! `select_idle_sibling` with `recent_used_cpu`, `select_idle_smt`,
//! `select_idle_cpu` (SIS_UTIL's `nr_idle_scan` budget) and
//! `select_idle_core` over the LLC's `has_idle_cores` flag, which
//! `update_idle_core` sets when a CPU goes idle beside idle siblings. The
//! slow path (`find_idlest_cpu`, for fork) is in `idlest.rs`.
//!
//! What is not reachable on the machines modelled, and so not written:
//! energy-aware placement (`find_energy_efficient_cpu`: no EAS on equal
//! capacities), `sd_asym_cpucapacity`/`select_idle_capacity` (NULL on a
//! symmetric machine, `asym_fits_cpu` always true), `WF_CURRENT_CPU` (no
//! `complete_on_current_cpu`), the per-CPU kthread stacking case (no kernel
//! threads), SIS_PROP (6.6 only, off by default), core-scheduling cookies.

use super::{Smp6x, TaskSmp};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::{Machine, MigrateCause, PlaceKind, Placement};
use crate::sched::topology::{
    DomainId, SD_BALANCE_FORK, SD_BALANCE_WAKE, SD_CLUSTER, SD_WAKE_AFFINE,
};

/// features.h defaults, the same in 6.6, 6.12 and 6.18 (no scenario key
/// switches them yet): `wake_affine` tries `wake_affine_idle`, then
/// `wake_affine_weight` with prev's side biased by half the imbalance
/// margin, and `select_idle_cpu` scans as deep as SIS_UTIL allows.
const WA_IDLE: bool = true;
const WA_WEIGHT: bool = true;
const WA_BIAS: bool = true;
const SIS_UTIL: bool = true;

/// `available_idle_cpu` (6.6 core.c, 6.12+ syscalls.c): `idle_cpu` (the idle
/// task runs and nothing is queued; `ttwu_pending` is never set, a wake-up
/// is queued at once) and not a preempted vCPU (no hypervisor modelled).
pub(super) fn available_idle_cpu(m: &impl Machine, cpu: CpuId) -> bool {
    m.idle_cpu(cpu)
}

/// `sched_idle_cpu` (6.x fair.c `sched_idle_rq`): every queued task is
/// SCHED_IDLE (`nr_running == cfs.idle_h_nr_running`, 6.18 `h_nr_idle`).
pub(super) fn sched_idle_cpu(m: &impl Machine, cpu: CpuId) -> bool {
    let nr = m.nr_running(cpu);
    nr > 0 && nr == m.h_nr_idle(cpu)
}

/// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`, the test every
/// candidate of `select_idle_sibling` passes (`__select_idle_cpu` without
/// a core-scheduling cookie).
fn idle_for_wakee(m: &impl Machine, cpu: CpuId) -> bool {
    available_idle_cpu(m, cpu) || sched_idle_cpu(m, cpu)
}

/// `record_wakee` (6.x fair.c): the waker `w` halves its flips at most once
/// a second (one halving, however long ago) and counts a switch of wakee.
pub(super) fn record_wakee(w: &mut TaskSmp, jiffies: u64, hz: u64, p: TaskId) {
    // time_after(jiffies, current->wakee_flip_decay_ts + HZ)
    if jiffies > w.wakee_flip_decay_ts + hz {
        w.wakee_flips >>= 1;
        w.wakee_flip_decay_ts = jiffies;
    }
    if w.last_wakee != Some(p) {
        w.last_wakee = Some(p);
        w.wakee_flips = w.wakee_flips.wrapping_add(1);
    }
}

/// `select_task_rq_fair` (6.x fair.c) for a wake-up (`WF_TTWU`, with
/// `WF_SYNC` if `sync`) run on `this_cpu` by `current`, or a fork
/// (`WF_FORK`) on `this_cpu`. The core's `select_task_rq` (the engine) calls
/// it only for a task allowed on more than one CPU; a 6.12+ wake-up of a
/// delayed task never gets here (`ttwu_runnable` requeues it in place).
pub(super) fn select_task_rq_fair(
    s: &mut Smp6x,
    m: &mut impl Machine,
    p: TaskId,
    prev_cpu: CpuId,
    kind: PlaceKind,
    this_cpu: CpuId,
    current: Option<TaskId>,
) -> Placement {
    let cpu = this_cpu;
    // SD flags and WF flags share the first nibble: sd_flag = wake_flags & 0xF.
    let (sd_flag, sync) = match kind {
        PlaceKind::Wake { sync } => (SD_BALANCE_WAKE, sync),
        PlaceKind::Fork => (SD_BALANCE_FORK, false),
    };
    let ttwu = sd_flag == SD_BALANCE_WAKE;
    let mut new_cpu = prev_cpu;
    let mut cause = if ttwu { MigrateCause::IdleSibling } else { MigrateCause::Fork };
    let mut want_affine = false;
    if ttwu {
        // 6.x fair.c:select_task_rq_fair: record_wakee for every WF_TTWU placement.
        s.record_wakee(m.jiffies(), m.hz(), current, cpu, p);
        // WF_CURRENT_CPU is never set here, and EAS is off on equal
        // capacities (6.6 sched_energy_enabled(), 6.12+ !is_rd_overutilized).
        want_affine = !s.wake_wide(current, cpu, p) && m.cpus_allowed(p).contains(cpu);
    } else {
        // 6.x core.c:wake_up_new_task: p->recent_used_cpu = task_cpu(p), the parent's CPU.
        s.tasks[p.index()].recent_used_cpu = Some(prev_cpu);
    }
    // for_each_domain(cpu) from the waker's CPU (6.x has no SD_LOAD_BALANCE).
    let mut affine: Option<DomainId> = None;
    let mut sd: Option<usize> = None;
    for (level, &d) in s.topo.cpu_domains[cpu.index()].iter().enumerate() {
        let dom = s.topo.domain(d);
        // If both cpu and prev_cpu are part of this domain, cpu is a valid SD_WAKE_AFFINE target.
        if want_affine && dom.flags & SD_WAKE_AFFINE != 0 && dom.span.contains(prev_cpu) {
            affine = Some(d);
            break;
        }
        if dom.flags & sd_flag != 0 {
            sd = Some(level);
        } else if !want_affine {
            break;
        }
    }
    if let Some(d) = affine {
        sd = None; // Prefer wake_affine over balance flags.
        if cpu != prev_cpu
            && let Some(why) = s.wake_affine(m, d, p, cpu, prev_cpu, sync, current)
        {
            new_cpu = cpu;
            cause = why;
        }
    }
    if let Some(level) = sd {
        // Slow path: sched_balance_find_dst_cpu (6.6 find_idlest_cpu).
        new_cpu = s.find_idlest_cpu(m, level, p, cpu, prev_cpu, sd_flag, kind == PlaceKind::Fork);
        cause = if ttwu { MigrateCause::WakeIdlest } else { MigrateCause::Fork };
    } else if ttwu {
        // Fast path.
        let (c, why) = s.select_idle_sibling(m, p, prev_cpu, new_cpu);
        if let Some(why) = why {
            cause = why;
        }
        new_cpu = c;
    }
    Placement { cpu: new_cpu, cause }
}

impl Smp6x {
    fn wakee_of(&self, current: Option<TaskId>, cpu: CpuId) -> &TaskSmp {
        match current {
            Some(t) => &self.tasks[t.index()],
            None => &self.idle_wakee[cpu.index()],
        }
    }

    /// `wake_wide` (6.x fair.c): a waker and wakee that both switch partners
    /// often (the slower at least `sd_llc_size` times, the faster that many
    /// times more) spread instead of pulling the wakee to the waker.
    pub(super) fn wake_wide(&self, current: Option<TaskId>, this_cpu: CpuId, p: TaskId) -> bool {
        let mut master = self.wakee_of(current, this_cpu).wakee_flips;
        let mut slave = self.tasks[p.index()].wakee_flips;
        let factor = self.topo.llc_size[this_cpu.index()];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.wrapping_mul(factor))
    }

    /// `wake_affine` (6.x fair.c): the waker's CPU if `wake_affine_idle`
    /// (WA_IDLE) or, undecided, `wake_affine_weight` (WA_WEIGHT) chose it,
    /// with the rule that did; `None` keeps prev.
    #[allow(clippy::too_many_arguments)]
    fn wake_affine(
        &self,
        m: &mut impl Machine,
        d: DomainId,
        p: TaskId,
        this_cpu: CpuId,
        prev_cpu: CpuId,
        sync: bool,
        current: Option<TaskId>,
    ) -> Option<MigrateCause> {
        let mut target = None;
        let mut cause = MigrateCause::WakeAffineIdle;
        if WA_IDLE {
            target = self.wake_affine_idle(m, this_cpu, prev_cpu, sync);
        }
        if WA_WEIGHT && target.is_none() {
            target = self.wake_affine_weight(m, d, p, this_cpu, prev_cpu, sync, current);
            cause = MigrateCause::WakeAffineWeight;
        }
        (target == Some(this_cpu)).then_some(cause)
    }

    /// `wake_affine_idle` (6.x fair.c): an idle waker's CPU (a wake-up from
    /// an interrupt) only if it shares the cache with prev, and then prev if
    /// that is idle too; the waker's CPU for a sync wake-up from its only
    /// task; prev if idle; else undecided (`nr_cpumask_bits`: `None`).
    fn wake_affine_idle(&self, m: &impl Machine, this_cpu: CpuId, prev_cpu: CpuId, sync: bool) -> Option<CpuId> {
        if available_idle_cpu(m, this_cpu) && self.cpus_share_cache(this_cpu, prev_cpu) {
            return Some(if available_idle_cpu(m, prev_cpu) { prev_cpu } else { this_cpu });
        }
        if sync {
            // 6.6/6.12 fair.c:wake_affine_idle: nr_running == 1 (6.12 counts a
            // delayed task); 6.18: nr_running - cfs_h_nr_delayed(rq) == 1.
            let mut nr = m.nr_running(this_cpu);
            if self.rules.runnable_excludes_delayed {
                nr = nr.saturating_sub(m.cpu_signals(this_cpu).h_nr_delayed);
            }
            if nr == 1 {
                return Some(this_cpu);
            }
        }
        if available_idle_cpu(m, prev_cpu) {
            return Some(prev_cpu);
        }
        None
    }

    /// `wake_affine_weight` (6.x fair.c, s64 arithmetic): the waker's CPU if
    /// its load with the wakee, times prev's capacity, is below prev's load
    /// without it times the waker CPU's capacity, prev's side weighted by
    /// `100 + (imbalance_pct - 100) / 2` (WA_BIAS: 108 at 117, 105 at 110).
    #[allow(clippy::too_many_arguments)]
    fn wake_affine_weight(
        &self,
        m: &mut impl Machine,
        d: DomainId,
        p: TaskId,
        this_cpu: CpuId,
        prev_cpu: CpuId,
        sync: bool,
        current: Option<TaskId>,
    ) -> Option<CpuId> {
        let imbalance_pct = i64::from(self.topo.domain(d).imbalance_pct);
        let mut this_eff_load = m.cpu_signals(this_cpu).load_avg as i64;
        if sync {
            // The waker is about to sleep: its load leaves this CPU.
            let current_load = current.map_or(0, |c| m.task_h_load(c)) as i64;
            if current_load > this_eff_load {
                return Some(this_cpu);
            }
            this_eff_load -= current_load;
        }
        let task_load = m.task_h_load(p) as i64;
        this_eff_load += task_load;
        if WA_BIAS {
            this_eff_load *= 100;
        }
        this_eff_load *= self.capacity_of(prev_cpu) as i64;
        // May go negative: prev's load as last updated, without the wakee's.
        let mut prev_eff_load = m.cpu_signals(prev_cpu).load_avg as i64 - task_load;
        if WA_BIAS {
            prev_eff_load *= 100 + (imbalance_pct - 100) / 2;
        }
        prev_eff_load *= self.capacity_of(this_cpu) as i64;
        // If sync, equal loads stack the wakee on the waker.
        if sync {
            prev_eff_load += 1;
        }
        (this_eff_load < prev_eff_load).then_some(this_cpu)
    }

    /// `cpus_share_cache` (6.x core.c): the same `sd_llc_id`.
    pub(super) fn cpus_share_cache(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.topo.llc_id[a.index()] == self.topo.llc_id[b.index()]
    }

    /// 6.12+ fair.c:select_idle_cpu's cluster: the target's group in its
    /// `sd_llc` (`sd->groups`) when that group's `sg->flags` has SD_CLUSTER
    /// (the CLS level below the LLC; 6.6's CLS has no SD_CLUSTER).
    fn llc_cluster_group(&self, target: CpuId) -> Option<&CpuSet> {
        let d = self.topo.cpu_domains[target.index()][self.topo.sd_llc[target.index()]?];
        let g = self.topo.local_group(d, target);
        (self.topo.group_flags(d, target, g) & SD_CLUSTER != 0).then(|| &self.topo.domain(d).groups[g].span)
    }

    /// `sched_cluster_active` (6.12+ topology.c): some CPU has an SD_CLUSTER domain.
    fn sched_cluster_active(&self) -> bool {
        self.topo.sched_cluster_active
    }

    /// `cpus_share_resources` (6.12+ core.c): the same `sd_share_id` (the
    /// cluster's first CPU, else `sd_llc_id`).
    fn cpus_share_resources(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.topo.sd_share_id[a.index()] == self.topo.sd_share_id[b.index()]
    }

    /// `sched_smt_active` (the `sched_smt_present` key): cores have several threads.
    pub(super) fn sched_smt_active(&self) -> bool {
        self.topo.shape.threads_per_core > 1
    }

    /// `cpu_smt_mask(cpu)`, in increasing order, without building a set:
    /// the thread-major numbering puts thread t of core k at t·cores + k.
    fn smt_mask(&self, cpu: CpuId) -> impl Iterator<Item = CpuId> + use<> {
        let cores = self.topo.shape.total_cores();
        let core = self.topo.core_of(cpu);
        (0..u32::from(self.topo.shape.threads_per_core)).map(move |t| CpuId((t * cores + core) as u16))
    }

    /// `test_idle_cores` (6.x fair.c): the LLC's `has_idle_cores` (false
    /// without `sd_llc_shared`, on a CPU with no domain).
    pub(super) fn test_idle_cores(&self, cpu: CpuId) -> bool {
        self.topo.sd_llc[cpu.index()].is_some() && self.llc_shared[self.topo.llc_id[cpu.index()].index()].has_idle_cores
    }

    /// `set_idle_cores` (6.x fair.c).
    fn set_idle_cores(&mut self, cpu: CpuId, val: bool) {
        if self.topo.sd_llc[cpu.index()].is_some() {
            self.llc_shared[self.topo.llc_id[cpu.index()].index()].has_idle_cores = val;
        }
    }

    /// `set_next_task_idle` → `update_idle_core` (6.x sched.h, with
    /// `sched_smt_present`) → `__update_idle_core` (fair.c): `cpu` switches
    /// to its idle task; if every other thread of its core is idle, its LLC
    /// has an idle core. Only `select_idle_cpu` clears the flag again.
    pub fn update_idle_core(&mut self, m: &impl Machine, cpu: CpuId) {
        if !self.sched_smt_active() || self.test_idle_cores(cpu) {
            return;
        }
        if self.smt_mask(cpu).any(|c| c != cpu && !available_idle_cpu(m, c)) {
            return;
        }
        self.set_idle_cores(cpu, true);
    }

    /// `select_idle_sibling` (6.x fair.c): an idle CPU sharing the target's
    /// cache, in this order: the target, prev, `recent_used_cpu`, an idle
    /// SMT sibling of prev (no idle core known), then the LLC scan; else the
    /// target. Returns the CPU and, when a scan or `recent_used_cpu` found
    /// it, the rule (the target and prev add none).
    fn select_idle_sibling(
        &mut self,
        m: &impl Machine,
        p: TaskId,
        prev: CpuId,
        target: CpuId,
    ) -> (CpuId, Option<MigrateCause>) {
        // sched_asym_cpucap_active() is off on equal capacities: asym_fits_cpu is true.
        if idle_for_wakee(m, target) {
            return (target, None);
        }
        let cluster = self.sched_cluster_active();
        let mut prev_aff = None;
        // If the previous CPU is cache affine and idle, don't be stupid (6.12+:
        // outside the target's cluster it waits for the cluster scan).
        if prev != target && self.cpus_share_cache(prev, target) && idle_for_wakee(m, prev) {
            if !cluster || self.cpus_share_resources(prev, target) {
                return (prev, None);
            }
            prev_aff = Some(prev);
        }
        // The per-cpu kthread stacking case (is_per_cpu_kthread(current) &&
        // in_task()) never applies: no kernel threads are modelled.
        // 6.x fair.c:select_idle_sibling: a recently used CPU, and p->recent_used_cpu = prev.
        let recent = self.tasks[p.index()].recent_used_cpu.replace(prev);
        let mut recent_used = None;
        if let Some(r) = recent
            && r != prev
            && r != target
            && self.cpus_share_cache(r, target)
            && idle_for_wakee(m, r)
            && m.cpus_allowed(p).contains(r)
        {
            if !cluster || self.cpus_share_resources(r, target) {
                return (r, Some(MigrateCause::RecentUsedCpu));
            }
            recent_used = Some(r);
        }
        // sd_asym_cpucapacity is NULL on a symmetric machine: no select_idle_capacity.
        let Some(llc) = self.topo.sd_llc[target.index()] else { return (target, None) };
        let sd = self.topo.cpu_domains[target.index()][llc];
        let mut has_idle_core = false;
        if self.sched_smt_active() {
            has_idle_core = self.test_idle_cores(target);
            if !has_idle_core
                && self.cpus_share_cache(prev, target)
                && let Some(i) = self.select_idle_smt(m, p, sd, prev)
            {
                return (i, Some(MigrateCause::SelectIdleSmt));
            }
        }
        if let Some(found) = self.select_idle_cpu(m, p, sd, has_idle_core, target) {
            return (found.0, Some(found.1));
        }
        // 6.12+: fall back to a cache-affine prev or recent CPU outside the cluster.
        if let Some(c) = prev_aff {
            return (c, None);
        }
        if let Some(r) = recent_used {
            return (r, Some(MigrateCause::RecentUsedCpu));
        }
        (target, None)
    }

    /// `select_idle_smt` (6.x fair.c): the first idle (or SCHED_IDLE-only)
    /// allowed thread of `prev`'s core other than prev; 6.12+ only inside
    /// the LLC domain `sd` (an isolated sibling is skipped).
    fn select_idle_smt(&self, m: &impl Machine, p: TaskId, sd: DomainId, prev: CpuId) -> Option<CpuId> {
        let span = &self.topo.domain(sd).span;
        let allowed = m.cpus_allowed(p);
        self.smt_mask(prev).find(|&c| {
            c != prev
                && allowed.contains(c)
                && (!self.rules.idle_smt_in_llc || span.contains(c))
                && idle_for_wakee(m, c)
        })
    }

    /// `select_idle_cpu` (6.x fair.c) over `sd_llc` ∩ the task's CPUs, from
    /// target + 1 round to the target: with an idle core known, whole idle
    /// cores (`select_idle_core`, no budget; a failed scan clears the flag
    /// and returns the first idle thread seen); otherwise the first idle CPU
    /// within SIS_UTIL's budget of `nr_idle_scan` CPUs. The scan mask is the
    /// `sis_scratch` set (`select_rq_mask`).
    fn select_idle_cpu(
        &mut self,
        m: &impl Machine,
        p: TaskId,
        sd: DomainId,
        has_idle_core: bool,
        target: CpuId,
    ) -> Option<(CpuId, MigrateCause)> {
        let mut cpus = std::mem::take(&mut self.sis_scratch);
        cpus.and_from(&self.topo.domain(sd).span, m.cpus_allowed(p));
        let found = self.scan_llc(m, p, sd, &mut cpus, has_idle_core, target);
        self.sis_scratch = cpus;
        found
    }

    /// The body of `select_idle_cpu` over the scan mask `cpus`.
    fn scan_llc(
        &mut self,
        m: &impl Machine,
        p: TaskId,
        sd: DomainId,
        cpus: &mut CpuSet,
        has_idle_core: bool,
        target: CpuId,
    ) -> Option<(CpuId, MigrateCause)> {
        // nr = INT_MAX; SIS_UTIL: nr = nr_idle_scan + 1 (sd_llc_shared exists with sd_llc).
        let mut nr: i64 = i64::from(i32::MAX);
        if SIS_UTIL {
            nr = i64::from(self.llc_shared[self.topo.llc_id[target.index()].index()].nr_idle_scan) + 1;
            // An overloaded LLC is unlikely to have an idle CPU or core (and
            // has_idle_cores stays as it is).
            if nr == 1 {
                return None;
            }
        }
        let mut idle_cpu: Option<CpuId> = None;
        // 6.12+ fair.c:select_idle_cpu: the target's cluster first (sd->groups has SD_CLUSTER).
        if self.sched_cluster_active()
            && let Some(span) = self.llc_cluster_group(target)
        {
            for cpu in wrap(span, target) {
                if !cpus.contains(cpu) {
                    continue;
                }
                if has_idle_core {
                    if let Some(i) = self.select_idle_core(m, p, cpu, cpus, &mut idle_cpu) {
                        return Some((i, MigrateCause::SelectIdleCore));
                    }
                } else {
                    nr -= 1;
                    if nr <= 0 {
                        return None;
                    }
                    if idle_for_wakee(m, cpu) {
                        return Some((cpu, MigrateCause::SelectIdleCpu));
                    }
                }
            }
            for cpu in span.iter() {
                cpus.remove(cpu);
            }
        }
        // for_each_cpu_wrap(cpu, cpus, target + 1); cpus shrinks as cores fail.
        for cpu in wrap(&self.topo.domain(sd).span, target) {
            if !cpus.contains(cpu) {
                continue;
            }
            if has_idle_core {
                if let Some(i) = self.select_idle_core(m, p, cpu, cpus, &mut idle_cpu) {
                    return Some((i, MigrateCause::SelectIdleCore));
                }
            } else {
                // 6.6 `if (!--nr)`, 6.12+ `if (--nr <= 0)`: the same, nr starts at 2 or more.
                nr -= 1;
                if nr <= 0 {
                    return None;
                }
                if idle_for_wakee(m, cpu) {
                    idle_cpu = Some(cpu);
                    break;
                }
            }
        }
        // No whole idle core in the LLC after all.
        if has_idle_core {
            self.set_idle_cores(target, false);
        }
        idle_cpu.map(|c| (c, MigrateCause::SelectIdleCpu))
    }

    /// `select_idle_core` (6.x fair.c): `core` (the CPU the scan visits) if
    /// every thread of its core is idle; otherwise its threads leave the
    /// scan mask, and the first idle (or SCHED_IDLE-only) allowed thread met
    /// while none was recorded is kept in `idle_cpu`. "Allowed": 6.6 the
    /// task's CPUs, 6.12+ the scan mask.
    fn select_idle_core(
        &self,
        m: &impl Machine,
        p: TaskId,
        core: CpuId,
        cpus: &mut CpuSet,
        idle_cpu: &mut Option<CpuId>,
    ) -> Option<CpuId> {
        let allowed = |c: CpuId, cpus: &CpuSet| {
            if self.rules.idle_smt_in_llc { cpus.contains(c) } else { m.cpus_allowed(p).contains(c) }
        };
        let mut idle = true;
        for cpu in self.smt_mask(core) {
            if !available_idle_cpu(m, cpu) {
                idle = false;
                if idle_cpu.is_none() {
                    if sched_idle_cpu(m, cpu) && allowed(cpu, cpus) {
                        *idle_cpu = Some(cpu);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && allowed(cpu, cpus) {
                *idle_cpu = Some(cpu);
            }
        }
        if idle {
            return Some(core);
        }
        for cpu in self.smt_mask(core) {
            cpus.remove(cpu);
        }
        None
    }
}

/// `for_each_cpu_wrap(cpu, span, target + 1)`: the CPUs of `span` above the
/// target in increasing order, then from the lowest up to the target (last).
fn wrap(span: &CpuSet, target: CpuId) -> impl Iterator<Item = CpuId> + '_ {
    span.iter().filter(move |c| c.0 > target.0).chain(span.iter().filter(move |c| c.0 <= target.0))
}
