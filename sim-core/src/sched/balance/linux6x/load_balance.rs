//! `load_balance` (6.6) / `sched_balance_rq` (6.12+) itself: the balancing
//! CPU's choice (`should_we_balance`), the busiest queue
//! (`sched_balance_find_src_rq`, 6.6 `find_busiest_queue`), moving tasks
//! (`detach_tasks` with `can_migrate_task`/`task_hot`, the LBF_NEED_BREAK,
//! LBF_DST_PINNED and LBF_ALL_PINNED retries) and, when nothing moved, the
//! failure count, `need_active_balance` and the interval back-off.
//! The statistics it decides on are in `lb_stats.rs`.
//!
//! Read from 6.6.9, 6.12.0 and 6.18.0 fair.c; where they differ the code
//! asks `Balance6xRules`. `detach_tasks` walks `rq->cfs_tasks` from the
//! tail and rotates a task it skips to the head, as 6.x does (4.4 walked
//! from the head). The kernel attaches the detached tasks after the walk;
//! the engine moves each one at once (`Machine::move_queued_task`), so the
//! walk reads the destination's `nr_running` as it was when it began
//! (CACHE_HOT_BUDDY), and the destination's `cfs_tasks` order is put back
//! as `attach_tasks` leaves it.

use super::lb_stats::MigrationType;
use super::{MAX_PINNED_INTERVAL, SYSCTL_SCHED_MIGRATION_COST_NS, SYSCTL_SCHED_NR_MIGRATE, Smp6x};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::{CpuIdleType, Machine, MigrateCause};
use crate::sched::topology::{DomainId, SD_SHARE_CPUCAPACITY};

/// `SCHED_NR_MIGRATE_BREAK` (6.x fair.c; 8 on PREEMPT_RT).
const SCHED_NR_MIGRATE_BREAK: u32 = 32;
/// Feature `CACHE_HOT_BUDDY` (6.x features.h: on; LB_MIN is off).
const CACHE_HOT_BUDDY: bool = true;

pub(super) const LBF_ALL_PINNED: u32 = 0x01;
pub(super) const LBF_NEED_BREAK: u32 = 0x02;
pub(super) const LBF_DST_PINNED: u32 = 0x04;
pub(super) const LBF_SOME_PINNED: u32 = 0x08;
pub(super) const LBF_ACTIVE_LB: u32 = 0x10;

/// Bound on `more_balance` rounds of one call (LBF_NEED_BREAK and
/// LBF_DST_PINNED): each NEED_BREAK round walks 32 more tasks and each
/// DST_PINNED round drops a CPU, so real passes stay far below it.
const MORE_BALANCE_ROUNDS_MAX: u32 = 1024;

/// `struct lb_env` (6.x fair.c). `this_cpu` and `level` name `env->sd`
/// (the balancing CPU's domain, whose state is kept per CPU and level).
pub(super) struct LbEnv {
    pub this_cpu: CpuId,
    pub level: usize,
    pub d: DomainId,
    pub src_cpu: CpuId,
    pub dst_cpu: CpuId,
    /// `dst_grpmask` = `group_balance_mask(sd->groups)`: the local group.
    pub dst_grpmask: usize,
    pub new_dst_cpu: CpuId,
    pub idle: CpuIdleType,
    pub imbalance: i64,
    pub cpus: CpuSet,
    pub flags: u32,
    pub loop_: u32,
    pub loop_break: u32,
    pub loop_max: u32,
    pub migration_type: MigrationType,
    pub cause: MigrateCause,
    /// `env->dst_rq->nr_running` before this `detach_tasks` walk.
    pub dst_nr_running: u32,
}

/// How `sched_balance_rq` ends (its labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    /// Fell through to `out` (moved, or kicked active balancing).
    Out,
    OutBalanced,
    OutAllPinned,
    OutOnePinned,
}

/// What the `more_balance` loop left.
enum AfterMove {
    Moved(u32),
    /// Every task pinned, other CPUs left to try: `goto redo`.
    Redo,
    /// `goto out_all_pinned`.
    AllPinned,
}

/// `shr_bound` (6.x fair.c): `val >> min(shift, bits - 1)`.
fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(u64::BITS - 1)
}

impl Smp6x {
    /// `sched_balance_rq` (6.12+; 6.6 `load_balance`): `this_cpu` balances
    /// its domain at `level`; returns the number of tasks moved.
    /// `continue_balancing` is cleared when `should_we_balance` says another
    /// CPU of the group balances this level.
    pub(super) fn sched_balance_rq(
        &mut self,
        m: &mut impl Machine,
        this_cpu: CpuId,
        level: usize,
        idle: CpuIdleType,
        cause: MigrateCause,
        continue_balancing: &mut bool,
    ) -> u32 {
        let mut env = self.lb_env(this_cpu, level, idle, cause);
        let parent = self.topo.cpu_domains[this_cpu.index()].get(level + 1).copied();
        let mut ld_moved = 0;
        let mut active_balance = false;
        // `redo` drops a CPU from env.cpus each time: bounded by the span.
        let mut redo = 0usize;
        let exit = loop {
            redo += 1;
            if redo > usize::from(self.topo.cpus()) + 1 {
                break Exit::OutBalanced;
            }
            if !self.should_we_balance(m, &env) {
                *continue_balancing = false;
                break Exit::OutBalanced;
            }
            let Some(group) = self.find_src_group(m, &mut env) else { break Exit::OutBalanced };
            let Some(busiest) = self.find_src_rq(m, &env, group) else { break Exit::OutBalanced };
            debug_assert_ne!(busiest, env.dst_cpu, "busiest is the destination");
            env.src_cpu = busiest;
            ld_moved = 0;
            // Cleared as soon as a pullable task is found.
            env.flags |= LBF_ALL_PINNED;
            if m.nr_running(busiest) > 1 {
                match self.more_balance(m, &mut env, busiest, parent) {
                    AfterMove::Moved(n) => ld_moved = n,
                    AfterMove::Redo => continue,
                    AfterMove::AllPinned => break Exit::OutAllPinned,
                }
            }
            if ld_moved == 0 {
                match self.no_task_moved(m, &mut env, busiest) {
                    Some(kicked) => active_balance = kicked,
                    None => break Exit::OutOnePinned,
                }
            } else {
                self.sd[this_cpu.index()][level].nr_balance_failed = 0;
            }
            // We were unbalanced, so reset the balancing interval.
            if !active_balance || self.need_active_balance(m, &env) {
                let min_interval = self.topo.domain(env.d).min_interval;
                self.sd[this_cpu.index()][level].balance_interval = min_interval;
            }
            break Exit::Out;
        };
        self.lb_exit(&env, exit, parent);
        self.lb_scratch = std::mem::take(&mut env.cpus);
        if exit == Exit::Out { ld_moved } else { 0 }
    }

    /// The `struct lb_env` of one call: `cpus` = the domain's span ∩
    /// `cpu_active_mask`, in the buffer kept between calls (no allocation).
    pub(super) fn lb_env(&mut self, this_cpu: CpuId, level: usize, idle: CpuIdleType, cause: MigrateCause) -> LbEnv {
        let d = self.dom(this_cpu, level);
        let mut cpus = std::mem::take(&mut self.lb_scratch);
        cpus.and_from(&self.topo.domain(d).span, &self.active_cpus);
        LbEnv {
            this_cpu,
            level,
            d,
            src_cpu: this_cpu,
            dst_cpu: this_cpu,
            dst_grpmask: self.topo.local_group(d, this_cpu),
            new_dst_cpu: this_cpu,
            idle,
            imbalance: 0,
            cpus,
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            migration_type: MigrationType::Load,
            cause,
            dst_nr_running: 0,
        }
    }

    /// The labels `out_balanced` → `out_all_pinned` → `out_one_pinned` of
    /// `sched_balance_rq`: the parent's group imbalance is cleared when
    /// other tasks got a chance to move, the failure count reset, and the
    /// interval backed off (not for newidle, nor for a misfit migration).
    fn lb_exit(&mut self, env: &LbEnv, exit: Exit, parent: Option<DomainId>) {
        if exit == Exit::Out {
            return;
        }
        if exit == Exit::OutBalanced
            && env.flags & LBF_ALL_PINNED == 0
            && let Some(p) = parent
        {
            let pg = self.topo.local_group(p, env.this_cpu);
            self.sgc_imbalance[p.0 as usize][pg] = false;
        }
        let d = self.topo.domain(env.d);
        let (max_interval, this_cpu, level) = (d.max_interval, env.this_cpu, env.level);
        let st = &mut self.sd[this_cpu.index()][level];
        if exit != Exit::OutOnePinned {
            st.nr_balance_failed = 0;
        }
        // 6.6 doubles for migrate_misfit too: never chosen on equal CPUs.
        if env.idle == CpuIdleType::NewlyIdle || env.migration_type == MigrationType::Misfit {
            return;
        }
        // Tune up the balancing interval.
        if (env.flags & LBF_ALL_PINNED != 0 && st.balance_interval < MAX_PINNED_INTERVAL)
            || st.balance_interval < max_interval
        {
            st.balance_interval *= 2;
        }
    }

    /// `is_core_idle` (6.x fair.c): every other SMT sibling of `cpu` is idle.
    pub(super) fn is_core_idle(&self, m: &impl Machine, cpu: CpuId) -> bool {
        let shape = self.topo.shape;
        let (cores, core) = (shape.total_cores(), self.topo.core_of(cpu));
        (0..u32::from(shape.threads_per_core))
            .map(|t| CpuId((t * cores + core) as u16))
            .filter(|&s| s != cpu)
            .all(|s| m.idle_cpu(s))
    }

    /// `should_we_balance` (6.x fair.c): any CPU may newidle-balance while
    /// it has nothing queued; otherwise the first idle CPU on an idle core
    /// of the local group balances for it (in an SMT domain any idle
    /// CPU), else the first idle CPU with busy siblings, else the group's
    /// first CPU (`group_balance_cpu`).
    fn should_we_balance(&self, m: &impl Machine, env: &LbEnv) -> bool {
        if !env.cpus.contains(env.dst_cpu) {
            return false;
        }
        if env.idle == CpuIdleType::NewlyIdle {
            // No ttwu_pending: wake-ups are queued at once here.
            return m.nr_running(env.dst_cpu) == 0;
        }
        let sd_flags = self.topo.domain(env.d).flags;
        let g = &self.topo.domain(env.d).groups[env.dst_grpmask];
        let mut idle_smt = None;
        for cpu in g.span.iter_and(&env.cpus) {
            if !m.idle_cpu(cpu) {
                continue;
            }
            // An idle SMT CPU of a busy core: remember the first, look for
            // an idle core (its siblings are busy or already passed over).
            if sd_flags & SD_SHARE_CPUCAPACITY == 0 && !self.is_core_idle(m, cpu) {
                idle_smt.get_or_insert(cpu);
                continue;
            }
            return cpu == env.dst_cpu;
        }
        if let Some(cpu) = idle_smt {
            return cpu == env.dst_cpu;
        }
        g.span.iter().next() == Some(env.dst_cpu)
    }

    /// `sched_balance_find_src_rq` (6.6 `find_busiest_queue`): the busiest
    /// CPU of `group` for the migration type. No fbq filter (no NUMA
    /// balancing), no asym-capacity or asym-packing skips (equal CPUs); a
    /// CPU whose one task outweighs the imbalance is skipped unless RT or
    /// deadline time has cut its capacity (`check_cpu_capacity`).
    fn find_src_rq(&self, m: &impl Machine, env: &LbEnv, group: usize) -> Option<CpuId> {
        let g = &self.topo.domain(env.d).groups[group];
        let mut busiest = None;
        let (mut busiest_load, mut busiest_capacity, mut busiest_util, mut busiest_nr) = (0u64, 1u64, 0u64, 0u32);
        for i in g.span.iter_and(&env.cpus) {
            let nr_running = self.h_nr_runnable(m, i);
            if nr_running == 0 {
                continue;
            }
            let capacity = self.capacity_of(i);
            match env.migration_type {
                MigrationType::Load => {
                    let load = m.cpu_signals(i).load_avg;
                    if nr_running == 1 && load as i64 > env.imbalance && !self.check_cpu_capacity(i, env.d) {
                        continue;
                    }
                    // max(load_i / capacity_i), crosswise.
                    if load * busiest_capacity > busiest_load * capacity {
                        (busiest_load, busiest_capacity, busiest) = (load, capacity, Some(i));
                    }
                }
                MigrationType::Util => {
                    let util = self.cpu_util(m, i, true);
                    // One running task: whatever its util, detach would fail.
                    if nr_running <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        (busiest_util, busiest) = (util, Some(i));
                    }
                }
                MigrationType::Task => {
                    if busiest_nr < nr_running {
                        (busiest_nr, busiest) = (nr_running, Some(i));
                    }
                }
                MigrationType::Misfit => {
                    let misfit = self.rqs[i.index()].misfit_task_load;
                    if misfit > busiest_load {
                        (busiest_load, busiest) = (misfit, Some(i));
                    }
                }
            }
        }
        busiest
    }

    /// `task_hot` (6.x fair.c): not for SCHED_IDLE tasks nor between SMT
    /// siblings; the next buddy is hot when the destination has work;
    /// otherwise it ran within `sysctl_sched_migration_cost` (0.5 ms).
    fn task_hot(&self, m: &impl Machine, p: TaskId, env: &LbEnv) -> bool {
        let h = m.task_hot_inputs(p);
        if h.sched_idle || self.topo.domain(env.d).flags & SD_SHARE_CPUCAPACITY != 0 {
            return false;
        }
        if CACHE_HOT_BUDDY && env.dst_nr_running > 0 && h.buddy {
            return true;
        }
        let delta = m.clock_ns() as i64 - h.exec_start_ns as i64;
        delta < SYSCTL_SCHED_MIGRATION_COST_NS as i64
    }

    /// `can_migrate_task` (6.x fair.c). No per-CPU kthreads, proxy
    /// execution or NUMA balancing here (`migrate_degrades_locality` −1/0).
    /// `throttled_lb_pair` checks both CPUs (6.6, 6.12); 6.18's
    /// `lb_throttled_hierarchy` checks the destination only, for its
    /// task-based throttling, which the engine runs as 6.12's.
    fn can_migrate_task(&self, m: &impl Machine, p: TaskId, env: &mut LbEnv) -> bool {
        let failed = self.sd[env.this_cpu.index()][env.level].nr_balance_failed;
        // 6.18: delayed dequeued unless we migrate load.
        if self.rules.delayed_only_migrate_load
            && m.task_hot_inputs(p).sched_delayed
            && env.migration_type != MigrationType::Load
        {
            return false;
        }
        if m.throttled_lb_pair(p, env.src_cpu, env.dst_cpu) {
            return false;
        }
        // 6.18: ineligible tasks move only once a balance at this level failed.
        if self.rules.ineligible_soft_limit && failed == 0 && m.task_is_ineligible_on_dst_cpu(p, env.dst_cpu) {
            return false;
        }
        let allowed = m.cpus_allowed(p);
        if !allowed.contains(env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            // Remember another CPU of our group the task may run on
            // (not for newidle, nor twice, nor for active balancing).
            if env.idle == CpuIdleType::NewlyIdle || env.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0 {
                return false;
            }
            let g = &self.topo.domain(env.d).groups[env.dst_grpmask];
            if let Some(c) = g.span.iter().find(|&c| env.cpus.contains(c) && allowed.contains(c)) {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = c;
            }
            return false;
        }
        // At least one task could run on dst_cpu.
        env.flags &= !LBF_ALL_PINNED;
        if m.curr(env.src_cpu) == Some(p) {
            return false; // task_on_cpu
        }
        if env.flags & LBF_ACTIVE_LB != 0 {
            return true;
        }
        !self.task_hot(m, p, env) || failed > self.topo.domain(env.d).cache_nice_tries
    }

    /// Whether `detach_tasks` takes task `p` for the migration type, and
    /// what it then takes off the imbalance (`goto next` when it does not).
    fn detach_amount(&self, m: &mut impl Machine, p: TaskId, env: &LbEnv) -> Option<i64> {
        let failed = self.sd[env.this_cpu.index()][env.level].nr_balance_failed;
        match env.migration_type {
            MigrationType::Load => {
                // task_h_load can be 0 with groups: make the imbalance shrink.
                let load = m.task_h_load(p).max(1);
                // LB_MIN is off. Don't migrate too much load, less strictly as balancing keeps failing.
                (shr_bound(load, failed) as i64 <= env.imbalance).then_some(load as i64)
            }
            MigrationType::Util => {
                let s = m.task_signals(p);
                let util = s.util_avg.max(s.util_est); // task_util_est
                let bound = if self.rules.util_shr_bound { shr_bound(util, failed) } else { util };
                (bound as i64 <= env.imbalance).then_some(util as i64)
            }
            MigrationType::Task => Some(1),
            MigrationType::Misfit => {
                // task_fits_cpu on its source: fits_capacity(task_util_est, capacity).
                let s = m.task_signals(p);
                let fits = s.util_avg.max(s.util_est) * 1280 < self.capacity_of(env.src_cpu) * 1024;
                (!fits).then_some(env.imbalance)
            }
        }
    }

    /// `detach_tasks` + `attach_tasks` (6.x fair.c): walk the source's
    /// `cfs_tasks` from the tail, moving tasks until the imbalance is met;
    /// a task not taken goes to the head. Returns the number moved.
    fn detach_tasks(&mut self, m: &mut impl Machine, env: &mut LbEnv) -> u32 {
        let src = env.src_cpu;
        // Source emptied by another CPU: no task tested.
        if m.nr_running(src) <= 1 {
            env.flags &= !LBF_ALL_PINNED;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        env.dst_nr_running = m.nr_running(env.dst_cpu);
        let mut moved = [TaskId(0); SCHED_NR_MIGRATE_BREAK as usize];
        let mut detached = 0usize;
        // Each round counts env.loop_, which loop_max or loop_break ends.
        while let Some(p) = m.cfs_task_at_tail(src, 0) {
            // Don't steal all, or we may be treated likewise.
            if env.idle != CpuIdleType::NotIdle && m.nr_running(src) <= 1 {
                break;
            }
            env.loop_ += 1;
            let all_pinned_goes_on = self.rules.try_one_movable_task && env.flags & LBF_ALL_PINNED != 0;
            if env.loop_ > env.loop_max && !all_pinned_goes_on {
                break;
            }
            // Take a breather every nr_migrate tasks.
            if env.loop_ > env.loop_break {
                env.loop_break += SCHED_NR_MIGRATE_BREAK;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            let amount = if self.can_migrate_task(m, p, env) { self.detach_amount(m, p, env) } else { None };
            let Some(amount) = amount else {
                m.cfs_tasks_move_head(src, p);
                continue;
            };
            env.imbalance = if env.migration_type == MigrationType::Misfit { 0 } else { env.imbalance - amount };
            m.move_queued_task(p, env.dst_cpu, env.cause, env.dst_cpu);
            self.note_nr_running(m, env.dst_cpu);
            moved[detached] = p;
            detached += 1;
            // CONFIG_PREEMPTION (PREEMPT_DYNAMIC in distribution 6.x
            // kernels): newidle moves at most one task.
            if env.idle == CpuIdleType::NewlyIdle || env.imbalance <= 0 || detached == moved.len() {
                break;
            }
        }
        // attach_tasks takes env->tasks from its head, the last detached
        // first, each to the head of the destination's cfs_tasks.
        for &p in moved[..detached].iter().rev() {
            m.cfs_tasks_move_head(env.dst_cpu, p);
        }
        detached as u32
    }

    /// `add_nr_running` for a task this policy moved (the engine does not
    /// call the policy back while it runs).
    pub(super) fn note_nr_running(&mut self, m: &impl Machine, cpu: CpuId) {
        let nr = m.nr_running(cpu);
        self.add_nr_running(cpu, nr.saturating_sub(1), nr);
    }

    /// The `more_balance` loop of `sched_balance_rq`: `detach_tasks` again
    /// after LBF_NEED_BREAK, and with another CPU of the local group for
    /// tasks pinned away from dst (LBF_DST_PINNED); then the parent's group
    /// imbalance and the all-pinned retry.
    fn more_balance(
        &mut self,
        m: &mut impl Machine,
        env: &mut LbEnv,
        busiest: CpuId,
        parent: Option<DomainId>,
    ) -> AfterMove {
        env.loop_max = SYSCTL_SCHED_NR_MIGRATE.min(m.nr_running(busiest));
        let mut ld_moved = 0;
        for _ in 0..MORE_BALANCE_ROUNDS_MAX {
            ld_moved += self.detach_tasks(m, env);
            if env.flags & LBF_NEED_BREAK != 0 {
                env.flags &= !LBF_NEED_BREAK;
                if !self.rules.try_one_movable_task || env.loop_ < m.nr_running(busiest) {
                    continue;
                }
            }
            // Revisit tasks pinned away from dst_cpu with another CPU of the group.
            if env.flags & LBF_DST_PINNED != 0 && env.imbalance > 0 {
                env.cpus.remove(env.dst_cpu);
                env.dst_cpu = env.new_dst_cpu;
                env.flags &= !LBF_DST_PINNED;
                env.loop_ = 0;
                env.loop_break = SCHED_NR_MIGRATE_BREAK;
                continue;
            }
            break;
        }
        // We failed to reach balance because of affinity.
        if let Some(p) = parent
            && env.flags & LBF_SOME_PINNED != 0
            && env.imbalance > 0
        {
            let pg = self.topo.local_group(p, env.this_cpu);
            self.sgc_imbalance[p.0 as usize][pg] = true;
        }
        // All tasks on this runqueue were pinned by CPU affinity.
        if env.flags & LBF_ALL_PINNED != 0 {
            env.cpus.remove(busiest);
            // Go on only with CPUs outside the destination group left.
            let g = &self.topo.domain(env.d).groups[env.dst_grpmask];
            if env.cpus.iter().any(|c| !g.span.contains(c)) {
                env.loop_ = 0;
                env.loop_break = SCHED_NR_MIGRATE_BREAK;
                return AfterMove::Redo;
            }
            return AfterMove::AllPinned;
        }
        AfterMove::Moved(ld_moved)
    }

    /// `sched_balance_rq` when nothing moved: one more failure (not for
    /// newidle; 6.12+ not for migrate_misfit, never chosen here), and
    /// active balancing if `need_active_balance`. `Some(kicked)`, or None
    /// for `out_one_pinned` (busiest's current task may not run here).
    fn no_task_moved(&mut self, m: &mut impl Machine, env: &mut LbEnv, busiest: CpuId) -> Option<bool> {
        let (this_cpu, level) = (env.this_cpu, env.level);
        if env.idle != CpuIdleType::NewlyIdle && env.migration_type != MigrationType::Misfit {
            self.sd[this_cpu.index()][level].nr_balance_failed += 1;
        }
        if !self.need_active_balance(m, env) {
            return Some(false);
        }
        // Don't kick the stopper if busiest's curr can't move to this_cpu
        // (the idle task's cpus_ptr is its own CPU).
        if !m.curr(busiest).is_some_and(|c| m.cpus_allowed(c).contains(this_cpu)) {
            return None;
        }
        env.flags &= !LBF_ALL_PINNED;
        let rq = &mut self.rqs[busiest.index()];
        if rq.active_balance {
            return Some(false);
        }
        rq.active_balance = true;
        rq.push_cpu = this_cpu;
        m.queue_active_balance(busiest);
        Some(true)
    }

    /// `need_active_balance` (6.x fair.c): `imbalanced_active_balance`
    /// (migrate_task after more than `cache_nice_tries + 2` failures); an
    /// idle destination and one CFS task (6.18 `h_nr_runnable`) on a source
    /// whose capacity RT or deadline time has cut, with more capacity left
    /// on the destination (6.6 fair.c:11059-11063, 6.12 11585-11589, 6.18
    /// 11645-11649); or a misfit. `asym_active_balance` needs SD_ASYM_PACKING.
    fn need_active_balance(&self, m: &impl Machine, env: &LbEnv) -> bool {
        let sd = self.topo.domain(env.d);
        let failed = self.sd[env.this_cpu.index()][env.level].nr_balance_failed;
        let imbalanced = env.migration_type == MigrationType::Task && failed > sd.cache_nice_tries + 2;
        let pct = u64::from(sd.imbalance_pct);
        let reduced = env.idle != CpuIdleType::NotIdle
            && self.h_nr_runnable(m, env.src_cpu) == 1
            && self.check_cpu_capacity(env.src_cpu, env.d)
            && self.capacity_of(env.src_cpu) * pct < self.capacity_of(env.dst_cpu) * 100;
        imbalanced || reduced || env.migration_type == MigrationType::Misfit
    }

    /// `detach_one_task` + `attach_one_task` (6.x fair.c), for
    /// `active_load_balance_cpu_stop`: the first task from the tail of
    /// `src`'s `cfs_tasks` that may go to `dst` (LBF_ACTIVE_LB, CPU_IDLE,
    /// migrate_load), in `dst`'s domain at `level`.
    pub(super) fn detach_one_task(&mut self, m: &mut impl Machine, dst: CpuId, level: usize, src: CpuId) -> bool {
        let mut env = self.lb_env(dst, level, CpuIdleType::Idle, MigrateCause::Active);
        env.src_cpu = src;
        env.flags = LBF_ACTIVE_LB;
        env.dst_nr_running = m.nr_running(dst);
        let mut found = None;
        // list_for_each_entry_reverse, bounded by the list's length.
        let mut index = 0;
        while let Some(p) = m.cfs_task_at_tail(src, index) {
            index += 1;
            if self.can_migrate_task(m, p, &mut env) {
                found = Some(p);
                break;
            }
        }
        self.lb_scratch = std::mem::take(&mut env.cpus);
        let Some(p) = found else { return false };
        m.move_queued_task(p, dst, MigrateCause::Active, src);
        self.note_nr_running(m, dst);
        true
    }
}

