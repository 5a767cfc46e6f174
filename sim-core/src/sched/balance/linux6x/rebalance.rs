//! When 6.x balances: the tick's `sched_balance_trigger` (6.6
//! `trigger_load_balance`), the SCHED_SOFTIRQ handler `sched_balance_softirq`
//! (6.6 `run_rebalance_domains`) with `sched_balance_domains` (6.6
//! `rebalance_domains`: intervals, `update_newidle_cost` decay), the
//! blocked-load update `sched_balance_update_blocked_averages` (6.6
//! `update_blocked_averages`), the newidle pass `sched_balance_newidle`
//! (6.6 `newidle_balance`) and the stopper's `active_load_balance_cpu_stop`.
//!
//! Read from 6.6.9, 6.12.0 and 6.18.0 fair.c and core.c. Time is jiffies
//! (`Machine::jiffies`); a newidle pass has no `sched_clock` to time it, so
//! its cost is the model's fixed cost per domain (4.4's, `linux44`).

use super::{SYSCTL_SCHED_MIGRATION_COST_NS, Smp6x};
use crate::ids::CpuId;
use crate::sched::balance::linux44::{NEWIDLE_COST_BASE_NS, NEWIDLE_COST_PER_CPU_NS};
use crate::sched::balance::{CpuIdleType, Machine, MigrateCause};
use crate::sched::topology::SD_BALANCE_NEWIDLE;

/// 6.18.0 `update_newidle_cost`: the cap above `sysctl_sched_migration_cost`
/// ("a little extra to avoid off by ones").
const NEWIDLE_COST_CAP_EXTRA_NS: u64 = 200;

impl Smp6x {
    fn levels(&self, cpu: CpuId) -> usize {
        self.topo.cpu_domains[cpu.index()].len()
    }

    /// `get_sd_balance_interval` (6.x fair.c): `balance_interval` (ms),
    /// × `busy_factor` when busy, in jiffies, one less when busy (so that
    /// levels' periods are not multiples of each other), clamped to
    /// [1, `max_load_balance_interval`].
    pub(super) fn get_sd_balance_interval(&self, hz: u64, cpu: CpuId, level: usize, cpu_busy: bool) -> u64 {
        let mut interval = self.sd[cpu.index()][level].balance_interval;
        if cpu_busy {
            interval *= u64::from(self.topo.domain(self.dom(cpu, level)).busy_factor);
        }
        let mut interval = super::super::msecs_to_jiffies(interval, hz);
        if cpu_busy {
            interval = interval.saturating_sub(1);
        }
        interval.clamp(1, self.max_load_balance_interval)
    }

    /// `update_next_balance` (6.x fair.c; used by idle balance, not busy).
    fn update_next_balance(&self, hz: u64, cpu: CpuId, level: usize, next_balance: &mut u64) {
        let next = self.sd[cpu.index()][level].last_balance + self.get_sd_balance_interval(hz, cpu, level, false);
        if *next_balance > next {
            *next_balance = next;
        }
    }

    /// `update_newidle_cost` (6.x fair.c): a higher cost is kept (6.18.0:
    /// at most migration cost + 200 ns); otherwise, more than a second
    /// after the last change, the kept maximum decays by 253/256 and the
    /// caller learns it (`need_decay`).
    fn update_newidle_cost(&mut self, jiffies: u64, hz: u64, cpu: CpuId, level: usize, cost: u64) -> bool {
        let cap = self.rules.newidle_fail_bump;
        let st = &mut self.sd[cpu.index()][level];
        if cost > st.max_newidle_lb_cost {
            st.max_newidle_lb_cost =
                if cap { cost.min(SYSCTL_SCHED_MIGRATION_COST_NS + NEWIDLE_COST_CAP_EXTRA_NS) } else { cost };
            st.last_decay_max_lb_cost = jiffies;
        } else if jiffies > st.last_decay_max_lb_cost + hz {
            st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
            st.last_decay_max_lb_cost = jiffies;
            return true;
        }
        false
    }

    /// `sched_tick` (6.x core.c): `rq->idle_balance = idle_cpu(cpu)`, then
    /// `sched_balance_trigger`.
    pub(super) fn sched_tick(&mut self, m: &mut impl Machine, cpu: CpuId) {
        self.rqs[cpu.index()].idle_balance = m.idle_cpu(cpu);
        self.sched_balance_trigger(m, cpu);
    }

    /// `sched_balance_trigger` (6.6 `trigger_load_balance`): SCHED_SOFTIRQ
    /// when `rq->next_balance` is due, and `nohz_balancer_kick` every tick.
    /// The kernel raises the softirq first but runs it at the interrupt's
    /// exit, after the kick: so here the kick comes first (its IPI is an
    /// event of the same instant, handled after this tick).
    fn sched_balance_trigger(&mut self, m: &mut impl Machine, cpu: CpuId) {
        if self.on_null_domain(cpu) || !self.active_cpus.contains(cpu) {
            return;
        }
        let due = self.balance_due(cpu, m.jiffies());
        if self.nohz {
            self.nohz_balancer_kick(m, cpu);
        }
        if due {
            self.sched_balance_softirq(m, cpu);
        }
    }

    /// `sched_balance_softirq` (6.6 `run_rebalance_domains`): a pending
    /// NO_HZ kick balances for the idle CPUs instead; otherwise the blocked
    /// load is brought up to date and this CPU's domains are balanced.
    pub(super) fn sched_balance_softirq(&mut self, m: &mut impl Machine, cpu: CpuId) {
        let idle = if self.rqs[cpu.index()].idle_balance { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
        if self.nohz_idle_balance(m, cpu, idle) {
            return;
        }
        self.update_blocked_averages(m, cpu);
        self.sched_balance_domains(m, cpu, idle, MigrateCause::Periodic);
    }

    /// `sched_balance_update_blocked_averages` (6.6 `update_blocked_averages`):
    /// the tick of the update (`update_blocked_load_tick`), the decay, and
    /// `update_blocked_load_status`: no blocked load left clears
    /// `rq->has_blocked_load` (`others_have_blocked`: `avg_rt` or `avg_dl`
    /// not yet 0; no IRQ or HW pressure signals here).
    pub(super) fn update_blocked_averages(&mut self, m: &mut impl Machine, cpu: CpuId) {
        self.rqs[cpu.index()].last_blocked_load_update_tick = m.jiffies();
        m.update_blocked_averages(cpu);
        if !m.cfs_rq_has_blocked(cpu) && !m.others_have_blocked(cpu) {
            self.rqs[cpu.index()].has_blocked_load = false;
        }
    }

    /// `sched_balance_domains` (6.6 `rebalance_domains`): each domain whose
    /// interval has passed is balanced, bottom up, until `should_we_balance`
    /// hands a level to another CPU (higher levels then only decay their
    /// newidle cost); `rq->next_balance` becomes the earliest next time.
    /// SD_SERIALIZE's `sched_balance_running` never contends: one CPU
    /// balances at a time here.
    pub(super) fn sched_balance_domains(
        &mut self,
        m: &mut impl Machine,
        cpu: CpuId,
        mut idle: CpuIdleType,
        cause: MigrateCause,
    ) {
        let (jiffies, hz) = (m.jiffies(), m.hz());
        let mut continue_balancing = true;
        let mut busy = idle != CpuIdleType::Idle && !self.sched_idle_cpu(m, cpu);
        let mut next_balance = jiffies + 60 * hz;
        let (mut update_next_balance, mut need_decay, mut max_cost) = (false, false, 0u64);
        for level in 0..self.levels(cpu) {
            // Decay the newidle max times here: a regular visit to all the domains.
            need_decay = self.update_newidle_cost(jiffies, hz, cpu, level, 0);
            max_cost += self.sd[cpu.index()][level].max_newidle_lb_cost;
            // Another CPU of our group balances this level more actively.
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.get_sd_balance_interval(hz, cpu, level, busy);
            if jiffies >= self.sd[cpu.index()][level].last_balance + interval {
                if self.sched_balance_rq(m, cpu, level, idle, cause, &mut continue_balancing) > 0 {
                    // LBF_DST_PINNED may have moved tasks elsewhere: ask again.
                    idle = if m.idle_cpu(cpu) { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
                    busy = idle != CpuIdleType::Idle && !self.sched_idle_cpu(m, cpu);
                }
                self.sd[cpu.index()][level].last_balance = jiffies;
                interval = self.get_sd_balance_interval(hz, cpu, level, busy);
            }
            let at = self.sd[cpu.index()][level].last_balance + interval;
            if next_balance > at {
                next_balance = at;
                update_next_balance = true;
            }
        }
        if need_decay {
            // The rq-wide value decays too, with a floor against funnies with avg_idle.
            self.rqs[cpu.index()].max_idle_balance_cost = SYSCTL_SCHED_MIGRATION_COST_NS.max(max_cost);
        }
        if update_next_balance {
            self.rqs[cpu.index()].next_balance = next_balance;
        }
    }

    /// `sched_balance_newidle` (6.6 `newidle_balance`), from
    /// `pick_next_task_fair` when the CPU has nothing to run: gated by
    /// `rd->overloaded` and `avg_idle` against the newidle cost, it balances
    /// each `SD_BALANCE_NEWIDLE` domain bottom up while `avg_idle` covers
    /// the cost so far, and stops at the first pull. Returns whether a fair
    /// task is queued after it. With nothing pulled, `nohz_newidle_balance`.
    pub(super) fn sched_balance_newidle(&mut self, m: &mut impl Machine, cpu: CpuId) -> bool {
        let (jiffies, hz) = (m.jiffies(), m.hz());
        let mut next_balance = jiffies + hz;
        let mut pulled = false;
        // update_misfit_status: no misfit on equal CPUs; no ttwu_pending here.
        // idle_stamp is set before balancing, so that this time counts as idle.
        self.rqs[cpu.index()].idle_stamp = Some(m.clock_ns());
        let avg_idle = self.rqs[cpu.index()].avg_idle;
        // A null domain's CPU sits in the default root domain, whose
        // overload flag is not kept: its gate is taken as closed.
        let null = self.on_null_domain(cpu);
        if !null && self.overloaded && avg_idle >= self.sd[cpu.index()][0].max_newidle_lb_cost {
            pulled = self.newidle_domains(m, cpu, &mut next_balance);
        } else if !null {
            self.update_next_balance(hz, cpu, 0, &mut next_balance);
        }
        let rq = &mut self.rqs[cpu.index()];
        // Move the next balance forward.
        if rq.next_balance > next_balance {
            rq.next_balance = next_balance;
        }
        if pulled {
            rq.idle_stamp = None;
        } else {
            self.nohz_newidle_balance(m, cpu);
        }
        pulled
    }

    /// The domain walk of `sched_balance_newidle`, past its gate.
    fn newidle_domains(&mut self, m: &mut impl Machine, cpu: CpuId, next_balance: &mut u64) -> bool {
        let (jiffies, hz) = (m.jiffies(), m.hz());
        let avg_idle = self.rqs[cpu.index()].avg_idle;
        let mut pulled = false;
        let mut continue_balancing = true;
        let mut curr_cost = 0u64;
        self.update_blocked_averages(m, cpu);
        for level in 0..self.levels(cpu) {
            self.update_next_balance(hz, cpu, level, next_balance);
            if avg_idle < curr_cost + self.sd[cpu.index()][level].max_newidle_lb_cost {
                break;
            }
            let sd = self.topo.domain(self.dom(cpu, level));
            if sd.flags & SD_BALANCE_NEWIDLE != 0 {
                let span = u64::from(sd.span_weight);
                let cause = MigrateCause::NewIdle;
                pulled = self.sched_balance_rq(m, cpu, level, CpuIdleType::NewlyIdle, cause, &mut continue_balancing) > 0;
                // The pass's cost (sched_clock_cpu t1 - t0), as linux44 models it.
                let mut domain_cost = NEWIDLE_COST_BASE_NS + NEWIDLE_COST_PER_CPU_NS * span;
                curr_cost += domain_cost;
                // 6.18.0: failing newidle is not effective; bump the cost to do less of it.
                if self.rules.newidle_fail_bump && !pulled {
                    domain_cost = 3 * self.sd[cpu.index()][level].max_newidle_lb_cost / 2;
                }
                self.update_newidle_cost(jiffies, hz, cpu, level, domain_cost);
            }
            // Stop once tasks are queued here (6.6 tests `pulled_task ||
            // this_rq->nr_running > 0`: with no concurrent wake-ups, the
            // same as 6.12's `!continue_balancing`, which should_we_balance
            // clears for a newidle dst with queued tasks).
            if pulled || !continue_balancing {
                break;
            }
        }
        let rq = &mut self.rqs[cpu.index()];
        if curr_cost > rq.max_idle_balance_cost {
            rq.max_idle_balance_cost = curr_cost;
        }
        // A task queued meanwhile counts as pulled: `cfs.h_nr_running`
        // (6.18 `h_nr_queued`: delayed tasks included in all three).
        pulled || m.cpu_signals(cpu).h_nr_queued > 0
    }

    /// `active_load_balance_cpu_stop` (6.x fair.c), run by `busiest`'s
    /// stopper: push one queued task to `push_cpu`, through the lowest
    /// domain of that CPU spanning both.
    pub(super) fn active_stop(&mut self, m: &mut impl Machine, busiest: CpuId) {
        if !self.rqs[busiest.index()].active_balance {
            return;
        }
        let target = self.rqs[busiest.index()].push_cpu;
        // The stopper preempts busiest's task, which stays queued. The
        // kernel's `busiest_rq->nr_running <= 1` counts the stopper: "no
        // fair task queued" here.
        m.stopper_preempt(busiest);
        if m.nr_running(busiest) >= 1 && self.active_cpus.contains(target) {
            let level = (0..self.levels(target)).find(|&l| self.topo.domain(self.dom(target, l)).span.contains(busiest));
            // Active balancing done: reset the failure counter.
            if let Some(level) = level
                && self.detach_one_task(m, target, level, busiest)
            {
                self.sd[target.index()][level].nr_balance_failed = 0;
            }
        }
        self.rqs[busiest.index()].active_balance = false;
    }
}
