//! 6.x NO_HZ idle balancing (kernel/sched/fair.c, core.c `nohz_csd_func`):
//! a busy CPU's tick decides whether to kick an idle CPU
//! (`nohz_balancer_kick`, `kick_ilb`, `find_new_ilb`), which then updates
//! the blocked load of every tickless idle CPU and, for a BALANCE kick,
//! balances on their behalf (`nohz_idle_balance`, `_nohz_idle_balance`,
//! `update_nohz_stats`); a stats-only kick moves no task. A CPU that goes
//! idle after a fruitless newidle pass updates the idle CPUs' blocked load
//! itself (`nohz_newidle_balance`, then `do_idle`'s
//! `nohz_run_idle_balance`). Entering and leaving tickless idle
//! (`nohz_balance_enter_idle`/`_exit_idle`) keep the idle mask and the
//! LLC's `nr_busy_cpus` (`set_cpu_sd_state_idle`/`_busy`).
//!
//! Read from 6.6.9, 6.12.0 and 6.18.0: the logic is the same in all three
//! on this machine (the differences are named where they vanish).

use super::Smp6x;
use crate::ids::CpuId;
use crate::sched::balance::{CpuIdleType, Machine, MigrateCause};

/// `nohz_flags` bits (6.x sched.h).
pub(super) const NOHZ_BALANCE_KICK: u32 = 1 << 0;
pub(super) const NOHZ_STATS_KICK: u32 = 1 << 1;
pub(super) const NOHZ_NEWILB_KICK: u32 = 1 << 2;
pub(super) const NOHZ_NEXT_KICK: u32 = 1 << 3;
pub(super) const NOHZ_KICK_MASK: u32 = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;
/// `LOAD_AVG_PERIOD` (ms): blocked load halves in it; the stats period.
const LOAD_AVG_PERIOD_MS: u64 = 32;

impl Smp6x {
    /// The machine as booted: `sd_init` starts each LLC's `nr_busy_cpus`
    /// at its `sd_weight` (`Topology::llc_shared`: the LLC level's mask,
    /// isolated CPUs included, which never go idle through it), then every
    /// CPU is idle and, with NO_HZ, stops its tick (`nohz_balance_enter_idle`),
    /// as 4.4's policy starts.
    pub(super) fn boot(&mut self) {
        for init in self.topo.llc_shared.iter().flatten() {
            self.llc_shared[init.id.index()].nr_busy_cpus = init.nr_busy_cpus;
        }
        for c in 0..self.topo.cpus() {
            // Every CPU went idle through schedule() at boot, so
            // sched_balance_newidle stamped it (a clock, never 0 once set:
            // stamped at 0 ns, read as 1 by find_idlest_group_cpu).
            self.rqs[usize::from(c)].idle_stamp = Some(0);
            self.tick_stopped(CpuId(c));
        }
    }

    /// `set_cpu_sd_state_busy` / `_idle` (6.x fair.c): `sd_llc->nohz_idle`
    /// and the LLC's `nr_busy_cpus`.
    fn set_cpu_sd_state(&mut self, cpu: CpuId, idle: bool) {
        let Some(level) = self.topo.sd_llc[cpu.index()] else { return };
        let st = &mut self.sd[cpu.index()][level];
        if st.nohz_idle == idle {
            return;
        }
        st.nohz_idle = idle;
        let shared = &mut self.llc_shared[self.topo.llc_id[cpu.index()].index()];
        if idle {
            shared.nr_busy_cpus = shared.nr_busy_cpus.saturating_sub(1);
        } else {
            shared.nr_busy_cpus += 1;
        }
    }

    /// `nohz_balance_enter_idle` (6.x fair.c), when the tick stops: the CPU
    /// has blocked load to decay and joins `nohz.idle_cpus_mask`. (6.6 and
    /// 6.12 first skip a CPU outside HK_TYPE_SCHED: none is.)
    pub(super) fn nohz_balance_enter_idle(&mut self, cpu: CpuId) {
        self.rqs[cpu.index()].has_blocked_load = true;
        if !self.rqs[cpu.index()].nohz_tick_stopped {
            // A completely isolated CPU doesn't play.
            if self.on_null_domain(cpu) {
                return;
            }
            self.rqs[cpu.index()].nohz_tick_stopped = true;
            self.nohz_idle_cpus.insert(cpu);
            self.nohz_nr_cpus += 1;
            self.set_cpu_sd_state(cpu, true);
            self.nohz_needs_update = true;
        }
        // Each time a CPU enters idle, assume it has blocked load.
        self.nohz_has_blocked = true;
    }

    /// `nohz_balance_exit_idle` (6.x fair.c), at the first busy tick.
    pub(super) fn nohz_balance_exit_idle(&mut self, cpu: CpuId) {
        if !self.rqs[cpu.index()].nohz_tick_stopped {
            return;
        }
        self.rqs[cpu.index()].nohz_tick_stopped = false;
        self.nohz_idle_cpus.remove(cpu);
        self.nohz_nr_cpus -= 1;
        self.set_cpu_sd_state(cpu, false);
    }

    /// `nohz_balancer_kick` (6.x fair.c), every tick of a busy CPU: a STATS
    /// kick when idle CPUs' blocked load is due an update, a BALANCE kick
    /// when `nohz.next_balance` is due and this CPU runs two tasks or its
    /// LLC has more than one busy CPU, or it runs a CFS task with its
    /// capacity cut by RT or deadline time (`check_cpu_capacity` on
    /// `rq->sd`; 6.6 fair.c:11773-11777, 6.12 12327-12331, 6.18
    /// 12413-12417); NEXT when the idle set changed. There is no
    /// `sd_asym_packing` (no ITMT) nor `sd_asym_cpucapacity` (equal CPUs)
    /// on this machine.
    pub(super) fn nohz_balancer_kick(&mut self, m: &mut impl Machine, cpu: CpuId) {
        if self.rqs[cpu.index()].idle_balance {
            return;
        }
        // The first busy tick after tickless idle updates the busy stats.
        self.nohz_balance_exit_idle(cpu);
        // None are in tickless mode: no NO_HZ idle balancing needed.
        if self.nohz_nr_cpus == 0 {
            return;
        }
        let now = m.jiffies();
        let mut flags = 0;
        if self.nohz_has_blocked && now > self.nohz_next_blocked {
            flags = NOHZ_STATS_KICK;
        }
        if now >= self.nohz_next_balance {
            let busy_llc = self.topo.sd_llc[cpu.index()]
                .is_some_and(|_| self.llc_shared[self.topo.llc_id[cpu.index()].index()].nr_busy_cpus > 1);
            let reduced = self.topo.cpu_domains[cpu.index()]
                .first()
                .is_some_and(|&low| self.h_nr_runnable(m, cpu) >= 1 && self.check_cpu_capacity(cpu, low));
            if m.nr_running(cpu) >= 2 || reduced || busy_llc {
                flags = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
            }
        }
        if self.nohz_needs_update {
            flags |= NOHZ_NEXT_KICK;
        }
        if flags != 0 {
            self.kick_ilb(m, cpu, flags);
        }
    }

    /// `find_new_ilb` (6.x fair.c): the first idle CPU of the tickless set
    /// (all are HK_TYPE_MISC / 6.18 HK_TYPE_KERNEL_NOISE housekeeping
    /// CPUs here) other than this one.
    fn find_new_ilb(&self, m: &impl Machine, this: CpuId) -> Option<CpuId> {
        self.nohz_idle_cpus.iter().find(|&c| c != this && m.idle_cpu(c))
    }

    /// `kick_ilb` (6.x fair.c): a full kick delays the next one
    /// (`nohz.next_balance = jiffies + 1`); the flags are or-ed into the
    /// idle balancer's `nohz_flags`, and the IPI goes only if none was
    /// pending. (6.12+ first returns when every bit is already set; 6.6
    /// reaches the same answer, the bits all being in NOHZ_KICK_MASK.)
    fn kick_ilb(&mut self, m: &mut impl Machine, this: CpuId, flags: u32) {
        if flags & NOHZ_BALANCE_KICK != 0 {
            self.nohz_next_balance = m.jiffies() + 1;
        }
        let Some(ilb) = self.find_new_ilb(m, this) else { return };
        let old = self.rqs[ilb.index()].nohz_flags;
        self.rqs[ilb.index()].nohz_flags |= flags;
        if old & NOHZ_KICK_MASK != 0 {
            return;
        }
        m.kick_nohz_balancer(ilb);
    }

    /// `nohz_csd_func` (6.x core.c), the kick's IPI on `cpu`: take the kick
    /// flags, and if the CPU is still idle raise SCHED_SOFTIRQ with them.
    /// (6.6/6.12 also test `!need_resched()`: an idle CPU has no task queued.)
    pub(super) fn nohz_csd_func(&mut self, m: &mut impl Machine, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        let flags = rq.nohz_flags & (NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
        rq.nohz_flags &= !(NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
        rq.idle_balance = m.idle_cpu(cpu);
        if rq.idle_balance {
            rq.nohz_idle_balance = flags;
            self.sched_balance_softirq(m, cpu);
        }
    }

    /// `nohz_idle_balance` (6.x fair.c): with a kick pending and this CPU
    /// idle, `_nohz_idle_balance` runs instead of the CPU's own balance.
    pub(super) fn nohz_idle_balance(&mut self, m: &mut impl Machine, cpu: CpuId, idle: CpuIdleType) -> bool {
        let flags = self.rqs[cpu.index()].nohz_idle_balance;
        if flags == 0 {
            return false;
        }
        self.rqs[cpu.index()].nohz_idle_balance = 0;
        if idle != CpuIdleType::Idle {
            return false;
        }
        self.nohz_idle_balance_all(m, cpu, flags);
        true
    }

    /// `update_nohz_stats` (6.x fair.c): an idle CPU's blocked load is
    /// decayed if not done this jiffy; whether it still has some.
    fn update_nohz_stats(&mut self, m: &mut impl Machine, cpu: CpuId) -> bool {
        let rq = &self.rqs[cpu.index()];
        if !rq.has_blocked_load || !self.nohz_idle_cpus.contains(cpu) {
            return false;
        }
        if m.jiffies() <= rq.last_blocked_load_update_tick {
            return true;
        }
        self.update_blocked_averages(m, cpu);
        self.rqs[cpu.index()].has_blocked_load
    }

    /// `_nohz_idle_balance` (6.x fair.c) on `this`: over the tickless idle
    /// CPUs from the one after `this` (ending with `this`), a STATS kick
    /// updates their blocked load and a BALANCE kick runs
    /// `sched_balance_domains` for each one due; then `nohz.next_balance`
    /// and, for STATS, `nohz.next_blocked` (now + 32 ms). It stops when a
    /// task was queued on `this` (`need_resched`; 6.18 asks `!idle_cpu(this)`
    /// too: the same test here), keeping the flags for the next owner.
    pub(super) fn nohz_idle_balance_all(&mut self, m: &mut impl Machine, this: CpuId, flags: u32) {
        let (now, hz) = (m.jiffies(), m.hz());
        let mut next_balance = now + 60 * hz;
        let (mut has_blocked_load, mut update_next_balance) = (false, false);
        // Assume no idle load after this update; an entering CPU sets it again.
        if flags & NOHZ_STATS_KICK != 0 {
            self.nohz_has_blocked = false;
        }
        if flags & NOHZ_NEXT_KICK != 0 {
            self.nohz_needs_update = false;
        }
        let n = self.topo.cpus();
        let mut aborted = false;
        for k in 1..=n {
            let balance_cpu = CpuId((this.0 + k) % n);
            if !self.nohz_idle_cpus.contains(balance_cpu) || !m.idle_cpu(balance_cpu) {
                continue;
            }
            // This CPU got work to do: the next balancing owner picks it up.
            if m.nr_running(this) > 0 {
                has_blocked_load |= flags & NOHZ_STATS_KICK != 0;
                self.nohz_needs_update |= flags & NOHZ_NEXT_KICK != 0;
                aborted = true;
                break;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                has_blocked_load |= self.update_nohz_stats(m, balance_cpu);
            }
            // If time for next balance is due, do the balance.
            if now >= self.rqs[balance_cpu.index()].next_balance && flags & NOHZ_BALANCE_KICK != 0 {
                self.sched_balance_domains(m, balance_cpu, CpuIdleType::Idle, MigrateCause::Nohz);
            }
            if next_balance > self.rqs[balance_cpu.index()].next_balance {
                next_balance = self.rqs[balance_cpu.index()].next_balance;
                update_next_balance = true;
            }
        }
        if !aborted {
            if update_next_balance {
                self.nohz_next_balance = next_balance;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                self.nohz_next_blocked = now + super::super::msecs_to_jiffies(LOAD_AVG_PERIOD_MS, hz);
            }
        }
        // There is still blocked load: enable the periodic update.
        if has_blocked_load {
            self.nohz_has_blocked = true;
        }
    }

    /// `nohz_newidle_balance` (6.x fair.c) after a newidle pass pulled
    /// nothing: unless the CPU will wake soon (`avg_idle` under the
    /// migration cost) or no blocked load is due, NOHZ_NEWILB_KICK; then
    /// `do_idle` → `nohz_run_idle_balance`, which the model runs here, as
    /// the CPU goes idle in the same instant.
    pub(super) fn nohz_newidle_balance(&mut self, m: &mut impl Machine, cpu: CpuId) {
        if self.rqs[cpu.index()].avg_idle < super::SYSCTL_SCHED_MIGRATION_COST_NS {
            return;
        }
        if !self.nohz_has_blocked || m.jiffies() < self.nohz_next_blocked {
            return;
        }
        self.rqs[cpu.index()].nohz_flags |= NOHZ_NEWILB_KICK;
        self.nohz_run_idle_balance(m, cpu);
    }

    /// `nohz_run_idle_balance` (6.x fair.c, from `do_idle`): the blocked
    /// load update is run here, without an IPI, unless a kick's softirq is
    /// about to do it (other flags pending).
    fn nohz_run_idle_balance(&mut self, m: &mut impl Machine, cpu: CpuId) {
        let flags = self.rqs[cpu.index()].nohz_flags;
        self.rqs[cpu.index()].nohz_flags &= !NOHZ_NEWILB_KICK;
        if flags == NOHZ_NEWILB_KICK && m.nr_running(cpu) == 0 {
            self.nohz_idle_balance_all(m, cpu, NOHZ_STATS_KICK);
        }
    }
}
