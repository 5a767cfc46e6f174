//! Linux 4.4's SMP half of the fair class (kernel/sched/fair.c, with the
//! core.c pieces it leans on): wake-up and fork placement (`wake.rs`),
//! `load_balance` and its statistics (`load_balance.rs`), and the entry
//! points that run it — the tick's `trigger_load_balance` /
//! `rebalance_domains`, `idle_balance` (newidle), the NO_HZ idle balancer
//! and active balancing (this file).
//!
//! State the kernel keeps in `struct rq`, `struct sched_domain` and
//! `struct sched_group_capacity` for balancing lives in `Smp44`; the
//! engine owns the run queues themselves and is reached through `Machine`.
//! Time: the kernel counts balancing in jiffies; `Machine::jiffies` gives
//! `now / TICK_NSEC`.

mod capacity;
mod load_balance;
mod wake;

#[cfg(test)]
mod tests;

use super::{CpuIdleType, Machine, MigrateCause};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::cpu_load::CpuLoad;
use crate::sched::topology::{DomainId, SD_BALANCE_NEWIDLE, SD_LOAD_BALANCE, Topology};


/// `sysctl_sched_migration_cost` (4.4 fair.c): 0.5 ms.
/// 4.4 features.h bits of fair.c's SMP half, run at their defaults (not
/// `[features]` switches): LB_BIAS (`source_load`/`target_load` over
/// `cpu_load[]`, on), CACHE_HOT_BUDDY (on), LB_MIN (off), NONTASK_CAPACITY
/// (the IRQ and steal time it adds to `rt_avg` are not modelled; RT and
/// deadline time are, `rt_pressure.rs`).
pub const SMP_FEATURES: &[&str] = &["LB_BIAS", "CACHE_HOT_BUDDY", "LB_MIN", "NONTASK_CAPACITY"];

pub const SYSCTL_SCHED_MIGRATION_COST_NS: u64 = 500_000;
/// `sysctl_sched_nr_migrate` (4.4 core.c).
pub const SYSCTL_SCHED_NR_MIGRATE: u32 = 32;
/// `sched_nr_migrate_break` (4.4 fair.c).
const SCHED_NR_MIGRATE_BREAK: u32 = 32;
/// `MAX_PINNED_INTERVAL` (4.4 fair.c), in ms.
const MAX_PINNED_INTERVAL: u64 = 512;
/// What one newidle `load_balance` pass over a domain is taken to cost
/// (4.4 measures it with `sched_clock_cpu`; a model has no such clock):
/// a fixed part and a part per CPU of the domain scanned. Feeds the
/// `avg_idle < curr_cost + max_newidle_lb_cost` gate of `idle_balance`.
pub const NEWIDLE_COST_BASE_NS: u64 = 2_000;
pub const NEWIDLE_COST_PER_CPU_NS: u64 = 250;

/// Per CPU, what 4.4 keeps in `struct rq` for balancing.
#[derive(Clone, Debug)]
pub struct RqSmp {
    /// `cpu_load[]` and `last_load_update_tick`.
    pub load: CpuLoad,
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
    /// `NOHZ_TICK_STOPPED` in `nohz_flags`.
    pub tick_stopped: bool,
    /// `NOHZ_BALANCE_KICK` in `nohz_flags`.
    pub balance_kick: bool,
    /// `rq->active_balance` and `rq->push_cpu`.
    pub active_balance: bool,
    pub push_cpu: CpuId,
}

/// Per CPU and domain level, the mutable half of `struct sched_domain`.
#[derive(Clone, Debug)]
pub struct DomainState {
    pub last_balance: u64,
    /// ms, as `sd->balance_interval`.
    pub balance_interval: u64,
    pub nr_balance_failed: u32,
    pub max_newidle_lb_cost: u64,
    pub next_decay_max_lb_cost: u64,
    /// `sd->nohz_idle` (only used on `sd_busy`).
    pub nohz_idle: bool,
    /// `get_sd_balance_interval` in jiffies (idle, busy), valid while
    /// `balance_interval == jiffies_for` (0 = never computed).
    pub jiffies: [u64; 2],
    pub jiffies_for: u64,
}

/// `task_struct`'s wakee-flip fields (4.4 fair.c:record_wakee).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wakee {
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<TaskId>,
}

/// The 4.4 SMP policy and its state.
#[derive(Clone, Debug)]
pub struct Smp44 {
    pub topo: Topology,
    pub rqs: Vec<RqSmp>,
    /// Per CPU, per entry of `topo.cpu_domains[cpu]`.
    pub sd: Vec<Vec<DomainState>>,
    /// `sgc->imbalance`, per domain and group.
    pub sgc_imbalance: Vec<Vec<bool>>,
    /// `sgc->next_update` (jiffies), per domain and group: a newly idle
    /// balance refreshes the local group's capacity only from then on.
    pub sgc_next_update: Vec<Vec<u64>>,
    /// `sgc->nr_busy_cpus`, per domain and group.
    pub nr_busy_cpus: Vec<Vec<u32>>,
    /// Per CPU, the index in `cpu_domains[cpu]` of `sd_busy` (the parent of `sd_llc`).
    pub sd_busy: Vec<Option<usize>>,
    /// `nohz.idle_cpus_mask`, `nohz.nr_cpus`, `nohz.next_balance`.
    pub nohz_idle_cpus: CpuSet,
    pub nohz_nr_cpus: u32,
    pub nohz_next_balance: u64,
    /// `rd->overload` of the one root domain (isolated CPUs have none).
    pub overload: bool,
    /// Wakee flips per task, and of each CPU's idle task (`current` of an
    /// interrupt that arrives while the CPU idles).
    pub wakee: Vec<Wakee>,
    pub idle_wakee: Vec<Wakee>,
    /// `max_load_balance_interval` = HZ · online CPUs / 10 (jiffies).
    pub max_load_balance_interval: u64,
    /// CONFIG_NO_HZ_IDLE on (idle CPUs stop their tick).
    pub nohz: bool,
    /// `cpu_active_mask` less the isolated CPUs (no domain spans them), and
    /// `load_balance`'s working copy of it (`load_balance_mask`).
    pub active_cpus: CpuSet,
    pub lb_scratch: CpuSet,
    /// Features `LB_BIAS` and `CACHE_HOT_BUDDY` (4.4 features.h: both on).
    pub lb_bias: bool,
    pub cache_hot_buddy: bool,
}

impl Smp44 {
    pub fn new(topo: Topology, hz: u64, tasks: usize, nohz: bool) -> Smp44 {
        let n = usize::from(topo.cpus());
        let sd = (0..n)
            .map(|c| {
                topo.cpu_domains[c]
                    .iter()
                    .map(|&d| {
                        let dom = topo.domain(d);
                        DomainState {
                            last_balance: 0,
                            balance_interval: dom.balance_interval,
                            nr_balance_failed: 0,
                            max_newidle_lb_cost: 0,
                            next_decay_max_lb_cost: 0,
                            nohz_idle: false,
                            jiffies: [0; 2],
                            jiffies_for: 0,
                        }
                    })
                    .collect()
            })
            .collect();
        let sgc_imbalance = topo.domains.iter().map(|d| vec![false; d.groups.len()]).collect();
        // init_sched_groups_capacity → update_group_capacity at boot (jiffies 0).
        let max_interval = (hz * n as u64 / 10).max(1);
        let sgc_next_update = super::sgc_next_update_at_boot(&topo, hz, max_interval);
        // init_sched_groups_capacity: nr_busy_cpus starts at group_weight.
        let nr_busy_cpus = topo.domains.iter().map(|d| d.groups.iter().map(|g| g.group_weight).collect()).collect();
        // update_top_cache_domain: sd_busy = sd_llc->parent.
        let sd_busy = (0..n)
            .map(|c| topo.sd_llc[c].and_then(|i| if i + 1 < topo.cpu_domains[c].len() { Some(i + 1) } else { None }))
            .collect();
        let rq = RqSmp {
            load: CpuLoad::default(),
            next_balance: 0,
            idle_stamp: None,
            // sched_init: avg_idle = 2 * migration cost, max_idle_balance_cost = migration cost.
            avg_idle: 2 * SYSCTL_SCHED_MIGRATION_COST_NS,
            max_idle_balance_cost: SYSCTL_SCHED_MIGRATION_COST_NS,
            idle_balance: false,
            tick_stopped: false,
            balance_kick: false,
            active_balance: false,
            push_cpu: CpuId(0),
        };
        let mut smp = Smp44 {
            rqs: vec![rq; n],
            sd,
            sgc_imbalance,
            sgc_next_update,
            nr_busy_cpus,
            sd_busy,
            nohz_idle_cpus: CpuSet::empty(topo.cpus()),
            nohz_nr_cpus: 0,
            nohz_next_balance: 0,
            overload: false,
            wakee: vec![Wakee::default(); tasks],
            idle_wakee: vec![Wakee::default(); n],
            // update_max_interval (4.4 fair.c).
            max_load_balance_interval: (hz * n as u64 / 10).max(1),
            nohz,
            active_cpus: {
                let mut all = CpuSet::all(topo.cpus());
                for c in topo.isolated.iter() {
                    all.remove(c);
                }
                all
            },
            lb_scratch: CpuSet::empty(topo.cpus()),
            lb_bias: true,
            cache_hot_buddy: true,
            topo,
        };
        // The machine starts idle: every CPU went idle at boot (idle_stamp
        // set, so find_idlest_cpu sees it) and, with NO_HZ, stopped its tick.
        for c in 0..n {
            smp.rqs[c].idle_stamp = Some(0);
            smp.tick_stopped(CpuId(c as u16));
            for level in 0..smp.sd[c].len() {
                smp.cache_interval(hz, CpuId(c as u16), level);
            }
        }
        smp
    }

    fn dom(&self, cpu: CpuId, level: usize) -> DomainId {
        self.topo.cpu_domains[cpu.index()][level]
    }

    fn levels(&self, cpu: CpuId) -> usize {
        self.topo.cpu_domains[cpu.index()].len()
    }

    /// `on_null_domain`: an isolated CPU (or a machine of one CPU).
    pub fn on_null_domain(&self, cpu: CpuId) -> bool {
        self.topo.cpu_domains[cpu.index()].is_empty()
    }

    /// `get_sd_balance_interval` (4.4 fair.c): interval × busy_factor when
    /// busy, in jiffies, clamped to [1, max_load_balance_interval].
    fn get_sd_balance_interval(&self, m: &impl Machine, cpu: CpuId, level: usize, cpu_busy: bool) -> u64 {
        let st = &self.sd[cpu.index()][level];
        // Converted once per balance_interval value (see DomainState::jiffies).
        if st.jiffies_for == st.balance_interval {
            return st.jiffies[usize::from(cpu_busy)];
        }
        let d = self.topo.domain(self.dom(cpu, level));
        let mut interval = st.balance_interval;
        if cpu_busy {
            interval *= u64::from(d.busy_factor);
        }
        super::msecs_to_jiffies(interval, m.hz()).clamp(1, self.max_load_balance_interval)
    }

    /// Refreshes the cached jiffy intervals of a domain after its
    /// `balance_interval` changed.
    fn cache_interval(&mut self, hz: u64, cpu: CpuId, level: usize) {
        let busy_factor = u64::from(self.topo.domain(self.dom(cpu, level)).busy_factor);
        let max = self.max_load_balance_interval;
        let st = &mut self.sd[cpu.index()][level];
        let ms = st.balance_interval;
        st.jiffies =
            [super::msecs_to_jiffies(ms, hz).clamp(1, max), super::msecs_to_jiffies(ms * busy_factor, hz).clamp(1, max)];
        st.jiffies_for = ms;
    }

    /// `update_next_balance` (4.4 fair.c).
    fn update_next_balance(&self, m: &impl Machine, cpu: CpuId, level: usize, cpu_busy: bool, next: &mut u64) {
        let interval = self.get_sd_balance_interval(m, cpu, level, cpu_busy);
        let at = self.sd[cpu.index()][level].last_balance + interval;
        if *next > at {
            *next = at;
        }
    }

    // ------------------------------------------------------------ load

    /// `weighted_cpuload`.
    fn weighted_cpuload(m: &impl Machine, cpu: CpuId) -> u64 {
        m.weighted_cpuload(cpu)
    }

    /// `source_load` (4.4 fair.c): a low guess of a migration source's load.
    fn source_load(&self, m: &impl Machine, cpu: CpuId, idx: usize) -> u64 {
        self.rqs[cpu.index()].load.source_load(Self::weighted_cpuload(m, cpu), idx, self.lb_bias)
    }

    /// `target_load` (4.4 fair.c): a high guess of a migration target's load.
    fn target_load(&self, m: &impl Machine, cpu: CpuId, idx: usize) -> u64 {
        self.rqs[cpu.index()].load.target_load(Self::weighted_cpuload(m, cpu), idx, self.lb_bias)
    }

    // ------------------------------------------------------------ tick

    /// `scheduler_tick` (4.4 core.c): `update_cpu_load_active`, then
    /// `rq->idle_balance = idle_cpu(cpu)` and `trigger_load_balance`.
    pub fn scheduler_tick(&mut self, m: &mut impl Machine, cpu: CpuId) {
        let jiffies = m.jiffies();
        let load = Self::weighted_cpuload(m, cpu);
        self.rqs[cpu.index()].load.update_cpu_load_active(load, jiffies);
        m.sched_avg_update(cpu); // __update_cpu_load's last step (fair.c:4393)
        self.rqs[cpu.index()].idle_balance = m.idle_cpu(cpu);
        self.trigger_load_balance(m, cpu);
    }

    /// `trigger_load_balance` (4.4 fair.c): the SCHED_SOFTIRQ runs when the
    /// CPU's `next_balance` is due (here at once, as on irq exit), and a busy
    /// CPU may kick the NO_HZ idle balancer.
    fn trigger_load_balance(&mut self, m: &mut impl Machine, cpu: CpuId) {
        if self.on_null_domain(cpu) {
            return;
        }
        if self.balance_due(cpu, m.jiffies()) {
            self.run_rebalance_domains(m, cpu);
        }
        if self.nohz && self.nohz_kick_needed(m, cpu) {
            self.nohz_balancer_kick(m);
        }
    }

    /// Whether `cpu`'s tick at `jiffies` raises SCHED_SOFTIRQ for the
    /// periodic balance (`trigger_load_balance`: `time_after_eq(jiffies,
    /// rq->next_balance)`, never on a null domain).
    pub fn balance_due(&self, cpu: CpuId, jiffies: u64) -> bool {
        !self.on_null_domain(cpu) && jiffies >= self.rqs[cpu.index()].next_balance
    }

    /// `run_rebalance_domains` (4.4 fair.c), the SCHED_SOFTIRQ handler.
    pub fn run_rebalance_domains(&mut self, m: &mut impl Machine, cpu: CpuId) {
        let idle = if self.rqs[cpu.index()].idle_balance { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
        self.nohz_idle_balance(m, cpu, idle);
        self.rebalance_domains(m, cpu, idle, MigrateCause::Periodic);
    }

    /// `rebalance_domains` (4.4 fair.c): balance each domain whose interval
    /// has passed, bottom up; `cause` tells a periodic run from one done for
    /// an idle CPU by the NO_HZ balancer.
    fn rebalance_domains(&mut self, m: &mut impl Machine, cpu: CpuId, mut idle: CpuIdleType, cause: MigrateCause) {
        let jiffies = m.jiffies();
        let hz = m.hz();
        let mut continue_balancing = true;
        let mut next_balance = jiffies + 60 * hz;
        let mut update_next = false;
        let mut need_decay = false;
        let mut max_cost = 0u64;
        m.update_blocked_averages(cpu);
        for level in 0..self.levels(cpu) {
            let flags = self.topo.domain(self.dom(cpu, level)).flags;
            let st = &mut self.sd[cpu.index()][level];
            if jiffies > st.next_decay_max_lb_cost {
                st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
                st.next_decay_max_lb_cost = jiffies + hz;
                need_decay = true;
            }
            max_cost += st.max_newidle_lb_cost;
            if flags & SD_LOAD_BALANCE == 0 {
                continue;
            }
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            // SD_SERIALIZE's `balancing` spinlock never contends: one CPU
            // balances at a time in a sequential model.
            let mut interval = self.get_sd_balance_interval(m, cpu, level, idle != CpuIdleType::Idle);
            if jiffies >= self.sd[cpu.index()][level].last_balance + interval {
                let outcome = self.load_balance(m, cpu, level, idle, cause);
                if !outcome.continue_balancing {
                    continue_balancing = false;
                }
                if outcome.moved > 0 {
                    // Moving tasks may have changed this CPU's state.
                    idle = if m.idle_cpu(cpu) { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
                }
                self.sd[cpu.index()][level].last_balance = jiffies;
                interval = self.get_sd_balance_interval(m, cpu, level, idle != CpuIdleType::Idle);
            }
            let at = self.sd[cpu.index()][level].last_balance + interval;
            if next_balance > at {
                next_balance = at;
                update_next = true;
            }
        }
        if need_decay {
            self.rqs[cpu.index()].max_idle_balance_cost = SYSCTL_SCHED_MIGRATION_COST_NS.max(max_cost);
        }
        if update_next {
            self.rqs[cpu.index()].next_balance = next_balance;
            if idle == CpuIdleType::Idle && self.nohz_next_balance > next_balance {
                self.nohz_next_balance = next_balance;
            }
        }
    }

    // ------------------------------------------------------------ newidle

    /// `idle_balance` (4.4 fair.c), from `pick_next_task_fair` when the CPU
    /// has nothing left to run. Returns whether a task was pulled.
    pub fn idle_balance(&mut self, m: &mut impl Machine, cpu: CpuId) -> bool {
        let jiffies = m.jiffies();
        let mut next_balance = jiffies + m.hz();
        let mut pulled = false;
        let mut curr_cost = 0u64;
        // idle_enter_fair; this_rq->idle_stamp = rq_clock(this_rq).
        self.rqs[cpu.index()].idle_stamp = Some(m.clock_ns());
        if self.on_null_domain(cpu) {
            return false;
        }
        if self.rqs[cpu.index()].avg_idle < SYSCTL_SCHED_MIGRATION_COST_NS || !self.overload {
            self.update_next_balance(m, cpu, 0, false, &mut next_balance);
        } else {
            m.update_blocked_averages(cpu);
            for level in 0..self.levels(cpu) {
                let d = self.topo.domain(self.dom(cpu, level));
                let (flags, span_weight) = (d.flags, u64::from(d.span_weight));
                if flags & SD_LOAD_BALANCE == 0 {
                    continue;
                }
                if self.rqs[cpu.index()].avg_idle < curr_cost + self.sd[cpu.index()][level].max_newidle_lb_cost {
                    self.update_next_balance(m, cpu, level, false, &mut next_balance);
                    break;
                }
                if flags & SD_BALANCE_NEWIDLE != 0 {
                    let outcome = self.load_balance(m, cpu, level, CpuIdleType::NewlyIdle, MigrateCause::NewIdle);
                    pulled = outcome.moved > 0;
                    let domain_cost = NEWIDLE_COST_BASE_NS + NEWIDLE_COST_PER_CPU_NS * span_weight;
                    let st = &mut self.sd[cpu.index()][level];
                    st.max_newidle_lb_cost = st.max_newidle_lb_cost.max(domain_cost);
                    curr_cost += domain_cost;
                }
                self.update_next_balance(m, cpu, level, false, &mut next_balance);
                if pulled || m.nr_running(cpu) > 0 {
                    break;
                }
            }
            let rq = &mut self.rqs[cpu.index()];
            rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(curr_cost);
            if m.h_nr_running(cpu) > 0 {
                pulled = true;
            }
        }
        let rq = &mut self.rqs[cpu.index()];
        if rq.next_balance > next_balance {
            rq.next_balance = next_balance;
        }
        if pulled {
            rq.idle_stamp = None; // idle_exit_fair
        }
        pulled
    }

    /// `ttwu_do_wakeup` (4.4 core.c): a task woken onto a CPU that went idle
    /// ends its idle period, which feeds `avg_idle`.
    pub fn ttwu_do_wakeup(&mut self, now: u64, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        if let Some(stamp) = rq.idle_stamp.take() {
            let delta = now.saturating_sub(stamp);
            // update_avg: avg += (sample - avg) / 8, in signed arithmetic.
            let avg = rq.avg_idle as i64;
            rq.avg_idle = (avg + ((delta as i64 - avg) >> 3)) as u64;
            let max = 2 * rq.max_idle_balance_cost;
            if rq.avg_idle > max {
                rq.avg_idle = max;
            }
        }
    }

    /// `add_nr_running` (4.4 sched.h): a run queue crossing from fewer than
    /// two runnable tasks to two or more marks the root domain overloaded
    /// (the main one; isolated CPUs sit in the default root domain, whose
    /// flag no balancer reads).
    pub fn add_nr_running(&mut self, cpu: CpuId, prev_nr: u32, nr_running: u32) {
        if prev_nr < 2 && nr_running >= 2 && !self.on_null_domain(cpu) {
            self.overload = true;
        }
    }

    // ------------------------------------------------------------ NO_HZ

    /// An idle CPU stops its tick (`tick_nohz_idle_enter` →
    /// `nohz_balance_enter_idle` and `set_cpu_sd_state_idle`).
    pub fn tick_stopped(&mut self, cpu: CpuId) {
        if !self.nohz || self.on_null_domain(cpu) {
            return;
        }
        let rq = &mut self.rqs[cpu.index()];
        if !rq.tick_stopped {
            rq.tick_stopped = true;
            self.nohz_idle_cpus.insert(cpu);
            self.nohz_nr_cpus += 1;
        }
        self.set_cpu_sd_state(cpu, true);
    }

    /// A CPU leaves NO_HZ idle (`tick_nohz_idle_exit` →
    /// `update_cpu_load_nohz`): its `cpu_load[]` decays for the ticks it
    /// missed. Leaving `nohz.idle_cpus_mask` waits for its next tick
    /// (`nohz_kick_needed` → `nohz_balance_exit_idle`), as in 4.4.
    /// (4.4's `update_cpu_load_nohz` reads neither the load nor the run
    /// queue: it decays with a load of 0.)
    /// Returns whether `__update_cpu_load` ran (the caller then runs its
    /// `sched_avg_update`).
    pub fn tick_restarted(&mut self, jiffies: u64, cpu: CpuId) -> bool {
        self.rqs[cpu.index()].load.update_cpu_load_nohz(0, 0, jiffies)
    }

    /// `set_cpu_sd_state_busy` / `set_cpu_sd_state_idle` (4.4 fair.c).
    fn set_cpu_sd_state(&mut self, cpu: CpuId, idle: bool) {
        let Some(level) = self.sd_busy[cpu.index()] else { return };
        let st = &mut self.sd[cpu.index()][level];
        if st.nohz_idle == idle {
            return;
        }
        st.nohz_idle = idle;
        let d = self.dom(cpu, level);
        let g = self.topo.local_group(d, cpu);
        let count = &mut self.nr_busy_cpus[d.0 as usize][g];
        if idle {
            *count = count.saturating_sub(1);
        } else {
            *count += 1;
        }
    }

    /// `nohz_balance_exit_idle` (4.4 fair.c).
    fn nohz_balance_exit_idle(&mut self, cpu: CpuId) {
        let rq = &mut self.rqs[cpu.index()];
        if rq.tick_stopped {
            rq.tick_stopped = false;
            if self.nohz_idle_cpus.contains(cpu) {
                self.nohz_idle_cpus.remove(cpu);
                self.nohz_nr_cpus -= 1;
            }
        }
    }

    /// `nohz_kick_needed` (4.4 fair.c), from a CPU's tick.
    fn nohz_kick_needed(&mut self, m: &impl Machine, cpu: CpuId) -> bool {
        if self.rqs[cpu.index()].idle_balance {
            return false;
        }
        self.set_cpu_sd_state(cpu, false);
        self.nohz_balance_exit_idle(cpu);
        if self.nohz_nr_cpus == 0 {
            return false;
        }
        if m.jiffies() < self.nohz_next_balance {
            return false;
        }
        if m.nr_running(cpu) >= 2 {
            return true;
        }
        if let Some(level) = self.sd_busy[cpu.index()] {
            let d = self.dom(cpu, level);
            let g = self.topo.local_group(d, cpu);
            if self.nr_busy_cpus[d.0 as usize][g] > 1 {
                return true;
            }
        }
        // A CFS task on a CPU whose capacity RT or deadline time has cut
        // (4.4 fair.c:7847-7854, rq->sd: the lowest domain). No
        // SD_ASYM_PACKING on x86.
        self.topo.cpu_domains[cpu.index()]
            .first()
            .is_some_and(|&low| m.h_nr_running(cpu) >= 1 && self.check_cpu_capacity(cpu, low))
    }

    /// `nohz_balancer_kick` with `find_new_ilb` (4.4 fair.c): the first CPU
    /// in the NO_HZ idle mask, if it is idle, gets the kick.
    fn nohz_balancer_kick(&mut self, m: &mut impl Machine) {
        self.nohz_next_balance += 1;
        let Some(ilb) = self.nohz_idle_cpus.iter().next() else { return };
        if !m.idle_cpu(ilb) {
            return;
        }
        if self.rqs[ilb.index()].balance_kick {
            return;
        }
        self.rqs[ilb.index()].balance_kick = true;
        m.kick_nohz_balancer(ilb);
    }

    /// The kicked CPU's `scheduler_ipi` → SCHED_SOFTIRQ with
    /// `idle_balance = 1` → `run_rebalance_domains`.
    pub fn nohz_kick_received(&mut self, m: &mut impl Machine, ilb: CpuId) {
        // got_nohz_idle_kick (4.4 core.c): a CPU that is no longer idle
        // (a task arrived in the same instant) drops the kick.
        if !m.idle_cpu(ilb) {
            self.rqs[ilb.index()].balance_kick = false;
            return;
        }
        self.rqs[ilb.index()].idle_balance = true;
        self.nohz_idle_balance(m, ilb, CpuIdleType::Idle);
        self.rebalance_domains(m, ilb, CpuIdleType::Idle, MigrateCause::Nohz);
    }

    /// `nohz_idle_balance` (4.4 fair.c): the kicked idle CPU balances on
    /// behalf of every tickless idle CPU whose `next_balance` is due.
    fn nohz_idle_balance(&mut self, m: &mut impl Machine, this: CpuId, idle: CpuIdleType) {
        if idle != CpuIdleType::Idle || !self.rqs[this.index()].balance_kick {
            self.rqs[this.index()].balance_kick = false;
            return;
        }
        let jiffies = m.jiffies();
        let mut next_balance = jiffies + 60 * m.hz();
        let mut update_next = false;
        for c in 0..self.topo.cpus() {
            let cpu = CpuId(c);
            if !self.nohz_idle_cpus.contains(cpu) || cpu == this || !m.idle_cpu(cpu) {
                continue;
            }
            // need_resched(): a task queued on this CPU by an earlier pull.
            if m.nr_running(this) > 0 {
                break;
            }
            if jiffies >= self.rqs[cpu.index()].next_balance {
                let (load, nr) = (Self::weighted_cpuload(m, cpu), m.nr_running(cpu));
                if self.rqs[cpu.index()].load.update_idle_cpu_load(load, nr, jiffies) {
                    m.sched_avg_update(cpu); // __update_cpu_load's last step
                }
                self.rebalance_domains(m, cpu, CpuIdleType::Idle, MigrateCause::Nohz);
            }
            if next_balance > self.rqs[cpu.index()].next_balance {
                next_balance = self.rqs[cpu.index()].next_balance;
                update_next = true;
            }
        }
        if update_next {
            self.nohz_next_balance = next_balance;
        }
        self.rqs[this.index()].balance_kick = false;
    }

    // ------------------------------------------------------------ active

    /// `active_load_balance_cpu_stop` (4.4 fair.c), run by `busiest`'s
    /// stopper: push one task to `push_cpu` (the running one, now preempted
    /// by the stopper, is a candidate like any other).
    pub fn active_load_balance_cpu_stop(&mut self, m: &mut impl Machine, busiest: CpuId) {
        if !self.rqs[busiest.index()].active_balance {
            return;
        }
        let target = self.rqs[busiest.index()].push_cpu;
        // The stopper task runs on busiest, preempting its task; 4.4's
        // `nr_running <= 1` counts the stopper, so it means "no fair task
        // left" — a CPU's only task is what active balancing moves.
        m.stopper_preempt(busiest);
        if m.nr_running(busiest) >= 1 {
            let level = (0..self.levels(target)).find(|&l| {
                let d = self.topo.domain(self.dom(target, l));
                d.flags & SD_LOAD_BALANCE != 0 && d.span.contains(busiest)
            });
            if let Some(level) = level {
                self.detach_one_task(m, target, level, busiest);
            }
        }
        self.rqs[busiest.index()].active_balance = false;
    }

    /// A domain's state, for tests and reports.
    pub fn domain_state(&self, cpu: CpuId, level: usize) -> &DomainState {
        &self.sd[cpu.index()][level]
    }
}
