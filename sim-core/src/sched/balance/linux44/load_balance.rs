//! `load_balance` (4.4 fair.c) and what it is built from: the group
//! statistics (`update_sg_lb_stats`, `update_sd_lb_stats`, 4.4's group
//! classification), `find_busiest_group` with `calculate_imbalance` and
//! `fix_small_imbalance`, `find_busiest_queue`, `detach_tasks` with
//! `can_migrate_task`/`task_hot`, and the decision to balance actively.

use super::{
    MAX_PINNED_INTERVAL, SCHED_NR_MIGRATE_BREAK, SYSCTL_SCHED_MIGRATION_COST_NS, SYSCTL_SCHED_NR_MIGRATE, Smp44,
};
use crate::cpuset::CpuSet;
use crate::ids::{CpuId, TaskId};
use crate::sched::balance::{CpuIdleType, Machine, MigrateCause};
use crate::sched::cpu_load::cpu_avg_load_per_task;
use crate::sched::topology::{DomainId, SCHED_CAPACITY_SCALE, SD_ASYM_PACKING, SD_PREFER_SIBLING};

/// `SCHED_LOAD_SCALE` (4.4, 64-bit without the extra resolution).
const SCHED_LOAD_SCALE: u64 = 1024;

const LBF_ALL_PINNED: u32 = 0x01;
const LBF_NEED_BREAK: u32 = 0x02;
const LBF_DST_PINNED: u32 = 0x04;
const LBF_SOME_PINNED: u32 = 0x08;

/// `enum group_type` (4.4 fair.c), in increasing order of busyness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
enum GroupType {
    #[default]
    Other,
    Imbalanced,
    Overloaded,
}

/// `struct sg_lb_stats` (4.4 fair.c).
#[derive(Clone, Copy, Debug, Default)]
struct SgLbStats {
    avg_load: u64,
    group_load: u64,
    sum_weighted_load: u64,
    load_per_task: u64,
    group_capacity: u64,
    group_util: u64,
    sum_nr_running: u32,
    idle_cpus: u32,
    group_weight: u32,
    group_type: GroupType,
    group_no_capacity: bool,
}

/// `struct sd_lb_stats` (4.4 fair.c); groups by index in the domain.
#[derive(Clone, Copy, Debug, Default)]
struct SdLbStats {
    busiest: Option<usize>,
    local: Option<usize>,
    total_load: u64,
    total_capacity: u64,
    avg_load: u64,
    busiest_stat: SgLbStats,
    local_stat: SgLbStats,
}

/// `struct lb_env` (4.4 fair.c). `level` is the domain's index in the
/// balancing CPU's domain list.
struct LbEnv {
    /// The balancing CPU, whose domain state is read (dst_cpu may change).
    this_cpu: CpuId,
    level: usize,
    d: DomainId,
    src_cpu: CpuId,
    dst_cpu: CpuId,
    /// `dst_grpmask`: the local group (its index in the domain; None for newidle).
    dst_grpmask: Option<usize>,
    new_dst_cpu: CpuId,
    idle: CpuIdleType,
    imbalance: i64,
    cpus: CpuSet,
    flags: u32,
    loop_: u32,
    loop_break: u32,
    loop_max: u32,
    cause: MigrateCause,
    /// `env->dst_rq->nr_running` when `detach_tasks` began: 4.4 attaches
    /// only after the walk, so CACHE_HOT_BUDDY sees the destination as it was.
    dst_nr_running: u32,
}

/// How `load_balance` left without moving anything (its labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    Balanced,
    AllPinned,
    OnePinned,
}

/// What `load_balance` does after trying to move tasks off the busiest queue.
enum AfterMove {
    /// Go on with this many tasks moved.
    Moved(u32),
    /// Every task was pinned: `redo` without the busiest CPU.
    Redo,
    /// Every task was pinned and no CPU is left to try (`out_all_pinned`).
    AllPinned,
}

/// What one `load_balance` call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbOutcome {
    pub moved: u32,
    /// `*continue_balancing` (cleared when another CPU of the group should balance).
    pub continue_balancing: bool,
}

impl Smp44 {
    /// `get_sd_load_idx` (4.4 fair.c).
    fn get_sd_load_idx(&self, d: DomainId, idle: CpuIdleType) -> usize {
        let dom = self.topo.domain(d);
        match idle {
            CpuIdleType::NotIdle => dom.busy_idx,
            CpuIdleType::NewlyIdle => dom.newidle_idx,
            CpuIdleType::Idle => dom.idle_idx,
        }
    }

    /// `cpu_util` (4.4 fair.c): the root queue's utilization, capped at
    /// the CPU's original capacity.
    fn cpu_util(&self, m: &impl Machine, cpu: CpuId) -> u64 {
        m.cpu_util_avg(cpu).min(self.capacity_orig_of(cpu))
    }

    /// `group_has_capacity` (4.4 fair.c).
    fn group_has_capacity(&self, d: DomainId, sgs: &SgLbStats) -> bool {
        if sgs.sum_nr_running < sgs.group_weight {
            return true;
        }
        sgs.group_capacity * 100 > sgs.group_util * u64::from(self.topo.domain(d).imbalance_pct)
    }

    /// `group_is_overloaded` (4.4 fair.c).
    fn group_is_overloaded(&self, d: DomainId, sgs: &SgLbStats) -> bool {
        if sgs.sum_nr_running <= sgs.group_weight {
            return false;
        }
        sgs.group_capacity * 100 < sgs.group_util * u64::from(self.topo.domain(d).imbalance_pct)
    }

    /// `group_classify` (4.4 fair.c).
    fn group_classify(&self, d: DomainId, group: usize, sgs: &SgLbStats) -> GroupType {
        if sgs.group_no_capacity {
            return GroupType::Overloaded;
        }
        if self.sgc_imbalance[d.0 as usize][group] {
            return GroupType::Imbalanced;
        }
        GroupType::Other
    }

    /// `update_sg_lb_stats` (4.4 fair.c).
    fn update_sg_lb_stats(
        &self,
        m: &impl Machine,
        env: &LbEnv,
        group: usize,
        load_idx: usize,
        local: bool,
        overload: &mut bool,
    ) -> SgLbStats {
        let g = &self.topo.domain(env.d).groups[group];
        let mut sgs = SgLbStats::default();
        for i in g.span.iter().filter(|&c| env.cpus.contains(c)) {
            // Bias balancing toward cpus of our domain.
            let load = if local { self.target_load(m, i, load_idx) } else { self.source_load(m, i, load_idx) };
            sgs.group_load += load;
            sgs.group_util += self.cpu_util(m, i);
            sgs.sum_nr_running += m.h_nr_running(i);
            if m.nr_running(i) > 1 {
                *overload = true;
            }
            sgs.sum_weighted_load += Self::weighted_cpuload(m, i);
            if m.idle_cpu(i) {
                sgs.idle_cpus += 1;
            }
        }
        sgs.group_capacity = g.capacity;
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
        if sgs.sum_nr_running > 0 {
            sgs.load_per_task = sgs.sum_weighted_load / u64::from(sgs.sum_nr_running);
        }
        sgs.group_weight = g.group_weight;
        sgs.group_no_capacity = self.group_is_overloaded(env.d, &sgs);
        sgs.group_type = self.group_classify(env.d, group, &sgs);
        sgs
    }

    /// `update_sd_pick_busiest` (4.4 fair.c); x86 has no SD_ASYM_PACKING.
    fn update_sd_pick_busiest(&self, env: &LbEnv, sds: &SdLbStats, sgs: &SgLbStats) -> bool {
        let busiest = &sds.busiest_stat;
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        if sgs.avg_load <= busiest.avg_load {
            return false;
        }
        debug_assert_eq!(self.topo.domain(env.d).flags & SD_ASYM_PACKING, 0);
        true
    }

    /// `update_sd_lb_stats` (4.4 fair.c): statistics of every group of the
    /// domain, walking the ring from the local group; the busiest non-local
    /// group is kept.
    fn update_sd_lb_stats(&mut self, m: &impl Machine, env: &LbEnv) -> SdLbStats {
        let mut sds = SdLbStats::default();
        // child->flags & SD_PREFER_SIBLING
        let prefer_sibling = env.level > 0 && {
            let child = self.topo.cpu_domains[env.dst_cpu.index()][env.level - 1];
            self.topo.domain(child).flags & SD_PREFER_SIBLING != 0
        };
        let load_idx = self.get_sd_load_idx(env.d, env.idle);
        let mut overload = false;
        let dom = self.topo.domain(env.d);
        let n = dom.groups.len();
        let start = self.topo.local_group(env.d, env.dst_cpu);
        for k in 0..n {
            let gi = (start + k) % n;
            let local = self.topo.domain(env.d).groups[gi].span.contains(env.dst_cpu);
            // The local group's capacity is refreshed, by a newly idle CPU
            // only once sgc->next_update has passed (4.4 fair.c:6509-6511).
            if local && (env.idle != CpuIdleType::NewlyIdle || m.jiffies() >= self.sgc_next_update[env.d.0 as usize][gi]) {
                self.update_group_capacity(m, env.this_cpu, env.level, env.dst_cpu);
            }
            let mut sgs = self.update_sg_lb_stats(m, env, gi, load_idx, local, &mut overload);
            if local {
                sds.local = Some(gi);
                sds.local_stat = sgs;
            } else {
                // In case the child domain prefers tasks go to siblings first, the
                // lower-level groups are treated as if they had no spare capacity.
                if prefer_sibling
                    && sds.local.is_some()
                    && self.group_has_capacity(env.d, &sds.local_stat)
                    && sgs.sum_nr_running > 1
                {
                    sgs.group_no_capacity = true;
                    sgs.group_type = self.group_classify(env.d, gi, &sgs);
                }
                if self.update_sd_pick_busiest(env, &sds, &sgs) {
                    sds.busiest = Some(gi);
                    sds.busiest_stat = sgs;
                }
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
        }
        // The top domain refreshes the root domain's overload flag.
        if env.level + 1 == self.levels(env.dst_cpu) {
            self.overload = overload;
        }
        sds
    }

    /// `fix_small_imbalance` (4.4 fair.c).
    fn fix_small_imbalance(&self, m: &impl Machine, env: &mut LbEnv, sds: &mut SdLbStats) {
        let mut imbn = 2u64;
        let local = &mut sds.local_stat;
        let busiest = &sds.busiest_stat;
        if local.sum_nr_running == 0 {
            local.load_per_task =
                cpu_avg_load_per_task(Self::weighted_cpuload(m, env.dst_cpu), m.h_nr_running(env.dst_cpu));
        } else if busiest.load_per_task > local.load_per_task {
            imbn = 1;
        }
        let scaled_busy_load_per_task = busiest.load_per_task * SCHED_CAPACITY_SCALE / busiest.group_capacity;
        if busiest.avg_load + scaled_busy_load_per_task >= local.avg_load + scaled_busy_load_per_task * imbn {
            env.imbalance = busiest.load_per_task as i64;
            return;
        }
        // OK, we don't have enough imbalance to justify moving tasks,
        // however we may be able to increase total CPU capacity used by moving them.
        let mut capa_now = busiest.group_capacity * busiest.load_per_task.min(busiest.avg_load);
        capa_now += local.group_capacity * local.load_per_task.min(local.avg_load);
        capa_now /= SCHED_CAPACITY_SCALE;
        let mut capa_move = 0;
        if busiest.avg_load > scaled_busy_load_per_task {
            capa_move +=
                busiest.group_capacity * busiest.load_per_task.min(busiest.avg_load - scaled_busy_load_per_task);
        }
        let tmp = if busiest.avg_load * busiest.group_capacity < busiest.load_per_task * SCHED_CAPACITY_SCALE {
            busiest.avg_load * busiest.group_capacity / local.group_capacity
        } else {
            busiest.load_per_task * SCHED_CAPACITY_SCALE / local.group_capacity
        };
        capa_move += local.group_capacity * local.load_per_task.min(local.avg_load + tmp);
        capa_move /= SCHED_CAPACITY_SCALE;
        if capa_move > capa_now {
            env.imbalance = busiest.load_per_task as i64;
        }
    }

    /// `calculate_imbalance` (4.4 fair.c): how much load to move.
    fn calculate_imbalance(&self, m: &impl Machine, env: &mut LbEnv, sds: &mut SdLbStats) {
        if sds.busiest_stat.group_type == GroupType::Imbalanced {
            sds.busiest_stat.load_per_task = sds.busiest_stat.load_per_task.min(sds.avg_load);
        }
        let (local, busiest) = (sds.local_stat, sds.busiest_stat);
        // Avoid wrapping the imbalance below: nothing to pull, or only a little.
        if busiest.avg_load <= sds.avg_load || local.avg_load >= sds.avg_load {
            env.imbalance = 0;
            return self.fix_small_imbalance(m, env, sds);
        }
        let mut load_above_capacity = u64::MAX;
        if busiest.group_type == GroupType::Overloaded && local.group_type == GroupType::Overloaded {
            load_above_capacity = u64::from(busiest.sum_nr_running) * SCHED_LOAD_SCALE;
            if load_above_capacity > busiest.group_capacity {
                load_above_capacity -= busiest.group_capacity;
            } else {
                load_above_capacity = u64::MAX;
            }
        }
        let max_pull = (busiest.avg_load - sds.avg_load).min(load_above_capacity);
        let imbalance =
            max_pull.saturating_mul(busiest.group_capacity).min((sds.avg_load - local.avg_load) * local.group_capacity)
                / SCHED_CAPACITY_SCALE;
        env.imbalance = imbalance as i64;
        if env.imbalance < busiest.load_per_task as i64 {
            self.fix_small_imbalance(m, env, sds);
        }
    }

    /// `find_busiest_group` (4.4 fair.c): the busiest group if the domain is
    /// out of balance, with `env.imbalance` set; None when balanced.
    fn find_busiest_group(&mut self, m: &impl Machine, env: &mut LbEnv) -> Option<usize> {
        let mut sds = self.update_sd_lb_stats(m, env);
        let (local, busiest) = (sds.local_stat, sds.busiest_stat);
        // check_asym_packing: no SD_ASYM_PACKING on x86.
        let balanced = 'decide: {
            let Some(_) = sds.busiest else { break 'decide true };
            if busiest.sum_nr_running == 0 {
                break 'decide true;
            }
            sds.avg_load = SCHED_CAPACITY_SCALE * sds.total_load / sds.total_capacity.max(1);
            // If the busiest group is imbalanced the below checks don't work
            // because they assume all things are equal, which typically isn't
            // true due to cpus_allowed constraints and the like.
            if busiest.group_type == GroupType::Imbalanced {
                break 'decide false;
            }
            // SD_BALANCE_NEWIDLE trumps SMP nice when underutilized and there's no imbalance.
            if env.idle == CpuIdleType::NewlyIdle && self.group_has_capacity(env.d, &local) && busiest.group_no_capacity
            {
                break 'decide false;
            }
            // The local group is already busier than the busiest or the average.
            if local.avg_load >= busiest.avg_load || local.avg_load >= sds.avg_load {
                break 'decide true;
            }
            if env.idle == CpuIdleType::Idle {
                // An idle CPU pulls only from an overloaded group or one with
                // fewer idle CPUs than its own by more than one.
                if busiest.group_type != GroupType::Overloaded && local.idle_cpus <= busiest.idle_cpus + 1 {
                    break 'decide true;
                }
            } else if 100 * busiest.avg_load <= u64::from(self.topo.domain(env.d).imbalance_pct) * local.avg_load {
                // Within the domain's imbalance_pct: leave it.
                break 'decide true;
            }
            false
        };
        if balanced {
            env.imbalance = 0;
            return None;
        }
        self.calculate_imbalance(m, env, &mut sds);
        sds.busiest
    }

    /// `find_busiest_queue` (4.4 fair.c): the CPU of the group with the
    /// highest capacity-scaled `weighted_cpuload`, skipping a CPU whose one
    /// task weighs more than the imbalance unless RT or deadline time has
    /// cut its capacity (`check_cpu_capacity`, fair.c:6899-6902).
    fn find_busiest_queue(&self, m: &impl Machine, env: &LbEnv, group: usize) -> Option<CpuId> {
        let g = &self.topo.domain(env.d).groups[group];
        let mut busiest = None;
        let (mut busiest_load, mut busiest_capacity) = (0u64, 1u64);
        for i in g.span.iter().filter(|&c| env.cpus.contains(c)) {
            // fbq_classify_rq is `regular` without NUMA balancing and fbq_type `all`.
            let capacity = self.capacity_of(i);
            let wl = Self::weighted_cpuload(m, i);
            if m.nr_running(i) == 1 && wl as i64 > env.imbalance && !self.check_cpu_capacity(i, env.d) {
                continue;
            }
            // Compare wl/capacity without division: wl * busiest_capacity > busiest_load * capacity.
            if wl * busiest_capacity > busiest_load * capacity {
                busiest_load = wl;
                busiest_capacity = capacity;
                busiest = Some(i);
            }
        }
        busiest
    }

    /// `task_hot` (4.4 fair.c): ran within `sysctl_sched_migration_cost`
    /// (0.5 ms) of now, or is a next/last buddy while the destination has work.
    fn task_hot(&self, m: &impl Machine, p: TaskId, env: &LbEnv) -> bool {
        let h = m.task_hot_inputs(p);
        if h.sched_idle {
            return false;
        }
        if self.cache_hot_buddy && env.dst_nr_running > 0 && h.buddy {
            return true;
        }
        let delta = m.clock_ns() as i64 - h.exec_start_ns as i64;
        delta < SYSCTL_SCHED_MIGRATION_COST_NS as i64
    }

    /// `can_migrate_task` (4.4 fair.c): affinity (noting a pinned task and
    /// another CPU of the destination group that would take it), not
    /// running, and not cache hot unless balancing keeps failing.
    fn can_migrate_task(&self, m: &impl Machine, p: TaskId, env: &mut LbEnv) -> bool {
        if m.throttled_lb_pair(p, env.src_cpu, env.dst_cpu) {
            return false;
        }
        let allowed = m.cpus_allowed(p);
        if !allowed.contains(env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            // Remember if this task can be migrated to any other cpu in our sched_group.
            if env.idle == CpuIdleType::NewlyIdle || env.flags & LBF_DST_PINNED != 0 {
                return false;
            }
            if let Some(g) = env.dst_grpmask
                && let Some(c) =
                    self.topo.domain(env.d).groups[g].span.iter().find(|&c| env.cpus.contains(c) && allowed.contains(c))
            {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = c;
            }
            return false;
        }
        env.flags &= !LBF_ALL_PINNED;
        if m.curr(env.src_cpu) == Some(p) {
            return false; // task_running
        }
        if m.task_hot_inputs(p).sched_delayed {
            // Under a 6.12+ model a delayed-dequeue task is asleep: this
            // balancer (4.4's, used for every model) leaves it alone.
            return false;
        }
        // migrate_degrades_locality: no NUMA balancing modelled (-1).
        let hot = self.task_hot(m, p, env);
        let level_failed = self.sd[env.this_cpu.index()][env.level].nr_balance_failed;
        !hot || level_failed > self.topo.domain(env.d).cache_nice_tries
    }

    /// `detach_tasks` + `attach_tasks` (4.4 fair.c): walk the source's
    /// `cfs_tasks` from the head, moving tasks until the imbalance is met.
    fn detach_tasks(&mut self, m: &mut impl Machine, env: &mut LbEnv) -> u32 {
        if env.imbalance <= 0 {
            return 0;
        }
        env.dst_nr_running = m.nr_running(env.dst_cpu);
        let mut detached = 0;
        // Always the list's head: a skipped task goes to the tail, a moved
        // one leaves the list. env.loop_max bounds the walk.
        while let Some(p) = m.cfs_task_at(env.src_cpu, 0) {
            if env.idle != CpuIdleType::NotIdle && m.nr_running(env.src_cpu) <= 1 {
                break;
            }
            env.loop_ += 1;
            if env.loop_ > env.loop_max {
                break;
            }
            // take a breather every nr_migrate tasks
            if env.loop_ > env.loop_break {
                env.loop_break += SCHED_NR_MIGRATE_BREAK;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            let movable = self.can_migrate_task(m, p, env);
            let load = if movable { m.task_h_load(p) } else { 0 };
            // LB_MIN is off in 4.4; a task heavier than twice the imbalance stays.
            if !movable || (load / 2) as i64 > env.imbalance {
                m.cfs_tasks_move_tail(env.src_cpu, p);
                continue;
            }
            m.move_queued_task(p, env.dst_cpu, env.cause, env.dst_cpu);
            self.note_nr_running(m, env.dst_cpu);
            detached += 1;
            env.imbalance -= load as i64;
            // CONFIG_PREEMPT (not set by distributions' server kernels) would stop newidle here.
            if env.imbalance <= 0 {
                break;
            }
        }
        detached
    }

    /// `detach_one_task` + `attach_one_task` (4.4 fair.c), for active balancing.
    pub(super) fn detach_one_task(&mut self, m: &mut impl Machine, dst: CpuId, level: usize, src: CpuId) -> bool {
        let d = self.topo.cpu_domains[dst.index()][level];
        let mut env = LbEnv {
            this_cpu: dst,
            level,
            d,
            src_cpu: src,
            dst_cpu: dst,
            dst_grpmask: None,
            new_dst_cpu: dst,
            idle: CpuIdleType::Idle,
            imbalance: 0,
            cpus: self.active_cpus.clone(),
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            cause: MigrateCause::Active,
            dst_nr_running: m.nr_running(dst),
        };
        // detach_one_task walks the whole cfs_tasks list (throttled tasks are
        // on it but not in nr_running); bounded by the list's length.
        let mut index = 0;
        while let Some(p) = m.cfs_task_at(src, index) {
            index += 1;
            if !self.can_migrate_task(m, p, &mut env) {
                continue;
            }
            m.move_queued_task(p, dst, MigrateCause::Active, src);
            self.note_nr_running(m, dst);
            return true;
        }
        false
    }

    /// `add_nr_running` for a task this policy just moved.
    fn note_nr_running(&mut self, m: &impl Machine, cpu: CpuId) {
        let nr = m.nr_running(cpu);
        self.add_nr_running(cpu, nr.saturating_sub(1), nr);
    }

    /// `need_active_balance` (4.4 fair.c:6936-6966; x86 has no
    /// SD_ASYM_PACKING): an idle destination takes the one CFS task of a
    /// source whose capacity RT or deadline time has cut, if more capacity
    /// stays on the destination (6950-6960); else after `cache_nice_tries
    /// + 2` failures.
    fn need_active_balance(&self, m: &impl Machine, env: &LbEnv) -> bool {
        let pct = u64::from(self.topo.domain(env.d).imbalance_pct);
        if env.idle != CpuIdleType::NotIdle
            && m.h_nr_running(env.src_cpu) == 1
            && self.check_cpu_capacity(env.src_cpu, env.d)
            && self.capacity_of(env.src_cpu) * pct < self.capacity_of(env.dst_cpu) * 100
        {
            return true;
        }
        self.sd[env.this_cpu.index()][env.level].nr_balance_failed > self.topo.domain(env.d).cache_nice_tries + 2
    }

    /// `should_we_balance` (4.4 fair.c): in the local group, the first idle
    /// CPU balances for it, else the group's balance CPU (its first CPU).
    fn should_we_balance(&self, m: &impl Machine, env: &LbEnv) -> bool {
        if env.idle == CpuIdleType::NewlyIdle {
            return true;
        }
        let g = &self.topo.domain(env.d).groups[self.topo.local_group(env.d, env.dst_cpu)];
        let balance_cpu =
            g.span.iter().filter(|&c| env.cpus.contains(c)).find(|&c| m.idle_cpu(c)).or_else(|| g.span.iter().next());
        balance_cpu == Some(env.dst_cpu)
    }

    /// `load_balance` (4.4 fair.c): `this_cpu` looks for the busiest group
    /// and queue in its domain at `level` and pulls tasks from it.
    pub(super) fn load_balance(
        &mut self,
        m: &mut impl Machine,
        this_cpu: CpuId,
        level: usize,
        idle: CpuIdleType,
        cause: MigrateCause,
    ) -> LbOutcome {
        let d = self.dom(this_cpu, level);
        let local_group = self.topo.local_group(d, this_cpu);
        let dst_grpmask = if idle == CpuIdleType::NewlyIdle { None } else { Some(local_group) };
        let mut env = self.lb_env(this_cpu, level, d, dst_grpmask, idle, cause);
        let parent = if level + 1 < self.levels(this_cpu) { Some(self.dom(this_cpu, level + 1)) } else { None };
        let mut continue_balancing = true;
        let mut ld_moved = 0u32;
        let mut active_balance = false;
        // `redo` can repeat once per CPU removed from env.cpus, `more_balance`
        // once per nr_migrate break: both bounded by the machine's size.
        let mut rounds = 0usize;
        let result: Result<(), Exit> = 'redo: loop {
            rounds += 1;
            if rounds > 2 * usize::from(self.topo.cpus()) + 8 {
                break 'redo Err(Exit::Balanced);
            }
            if !self.should_we_balance(m, &env) {
                continue_balancing = false;
                break 'redo Err(Exit::Balanced);
            }
            let Some(group) = self.find_busiest_group(m, &mut env) else { break 'redo Err(Exit::Balanced) };
            let Some(busiest) = self.find_busiest_queue(m, &env, group) else { break 'redo Err(Exit::Balanced) };
            debug_assert_ne!(busiest, env.dst_cpu);
            env.src_cpu = busiest;
            ld_moved = 0;
            if m.nr_running(busiest) > 1 {
                match self.move_tasks(m, &mut env, busiest, parent) {
                    AfterMove::Moved(n) => ld_moved = n,
                    AfterMove::Redo => continue 'redo,
                    AfterMove::AllPinned => break 'redo Err(Exit::AllPinned),
                }
            }
            if ld_moved == 0 {
                match self.no_task_moved(m, &mut env, busiest) {
                    Ok(kicked) => active_balance = kicked,
                    Err(exit) => break 'redo Err(exit),
                }
            } else {
                self.sd[this_cpu.index()][level].nr_balance_failed = 0;
            }
            break 'redo Ok(());
        };
        self.lb_scratch = std::mem::take(&mut env.cpus);
        let hz = m.hz();
        let st_max = self.topo.domain(d).max_interval;
        let min_interval = self.topo.domain(d).min_interval;
        match result {
            Ok(()) => {
                let st = &mut self.sd[this_cpu.index()][level];
                if !active_balance {
                    // We were unbalanced, so reset the balancing interval.
                    st.balance_interval = min_interval;
                } else if st.balance_interval < st_max {
                    // If we've begun active balancing, start to back off.
                    st.balance_interval *= 2;
                }
                self.cache_interval(hz, this_cpu, level);
                LbOutcome { moved: ld_moved, continue_balancing }
            }
            Err(exit) => {
                // out_balanced clears the parent's group imbalance, then falls
                // through to out_all_pinned, which resets the failure count,
                // then to out_one_pinned, which backs the interval off.
                if exit == Exit::Balanced
                    && let Some(p) = parent
                {
                    let pg = self.topo.local_group(p, this_cpu);
                    self.sgc_imbalance[p.0 as usize][pg] = false;
                }
                let st = &mut self.sd[this_cpu.index()][level];
                if exit != Exit::OnePinned {
                    st.nr_balance_failed = 0;
                }
                if (env.flags & LBF_ALL_PINNED != 0 && st.balance_interval < MAX_PINNED_INTERVAL)
                    || st.balance_interval < st_max
                {
                    st.balance_interval *= 2;
                }
                self.cache_interval(hz, this_cpu, level);
                LbOutcome { moved: 0, continue_balancing }
            }
        }
    }

    /// The `struct lb_env` of one `load_balance` call; `cpus` =
    /// cpu_active_mask, in a buffer kept between calls (no allocation).
    fn lb_env(
        &mut self,
        this_cpu: CpuId,
        level: usize,
        d: DomainId,
        dst_grpmask: Option<usize>,
        idle: CpuIdleType,
        cause: MigrateCause,
    ) -> LbEnv {
        let mut cpus = std::mem::take(&mut self.lb_scratch);
        cpus.clone_from(&self.active_cpus);
        LbEnv {
            this_cpu,
            level,
            d,
            src_cpu: this_cpu,
            dst_cpu: this_cpu,
            dst_grpmask,
            new_dst_cpu: this_cpu,
            idle,
            imbalance: 0,
            cpus,
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            cause,
            dst_nr_running: 0,
        }
    }

    /// `load_balance`'s attempt to move tasks off `busiest` (4.4 fair.c:
    /// `detach_tasks` until the imbalance is met, retried on `LBF_NEED_BREAK`
    /// and, for affine tasks, with another destination CPU of the group).
    fn move_tasks(
        &mut self,
        m: &mut impl Machine,
        env: &mut LbEnv,
        busiest: CpuId,
        parent: Option<DomainId>,
    ) -> AfterMove {
        let mut ld_moved = 0u32;
        // Attempt to move tasks. If find_busiest_group has found an
        // imbalance but busiest->nr_running <= 1, the group is still
        // unbalanced. ld_moved simply stays zero.
        env.flags |= LBF_ALL_PINNED;
        env.loop_max = SYSCTL_SCHED_NR_MIGRATE.min(m.nr_running(busiest));
        let mut more = 0;
        loop {
            more += 1;
            ld_moved += self.detach_tasks(m, env);
            if env.flags & LBF_NEED_BREAK != 0 && more < 64 {
                env.flags &= !LBF_NEED_BREAK;
                continue;
            }
            // Revisit (affine) tasks on src_cpu that couldn't be moved
            // to us: try another CPU of our group that they allow.
            if env.flags & LBF_DST_PINNED != 0 && env.imbalance > 0 && more < 64 {
                env.cpus.remove(env.dst_cpu);
                env.dst_cpu = env.new_dst_cpu;
                env.flags &= !LBF_DST_PINNED;
                env.loop_ = 0;
                env.loop_break = SCHED_NR_MIGRATE_BREAK;
                continue;
            }
            break;
        }
        // We failed to reach balance because of affinity: tell the parent.
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
            if !env.cpus.is_empty() {
                env.loop_ = 0;
                env.loop_break = SCHED_NR_MIGRATE_BREAK;
                return AfterMove::Redo;
            }
            return AfterMove::AllPinned;
        }
        AfterMove::Moved(ld_moved)
    }

    /// `load_balance` when no task moved: one more failure, and after
    /// enough of them active balancing is kicked (`Ok(true)`); `Err` when
    /// the task running on `busiest` may not run here (`out_one_pinned`).
    fn no_task_moved(&mut self, m: &mut impl Machine, env: &mut LbEnv, busiest: CpuId) -> Result<bool, Exit> {
        let (this_cpu, level, d) = (env.this_cpu, env.level, env.d);
        let mut active_balance = false;
        if env.idle != CpuIdleType::NewlyIdle {
            self.sd[this_cpu.index()][level].nr_balance_failed += 1;
        }
        if self.need_active_balance(m, env) {
            // Don't kick the active_load_balance_cpu_stop if the curr
            // task on busiest cpu can't be moved to this_cpu.
            let curr_allowed = m.curr(busiest).is_none_or(|c| m.cpus_allowed(c).contains(this_cpu));
            if !curr_allowed {
                env.flags |= LBF_ALL_PINNED;
                return Err(Exit::OnePinned);
            }
            if !self.rqs[busiest.index()].active_balance {
                self.rqs[busiest.index()].active_balance = true;
                self.rqs[busiest.index()].push_cpu = this_cpu;
                active_balance = true;
            }
            if active_balance {
                m.queue_active_balance(busiest);
            }
            // We've kicked active balancing, reset the failure counter.
            self.sd[this_cpu.index()][level].nr_balance_failed = self.topo.domain(d).cache_nice_tries + 1;
        }
        Ok(active_balance)
    }
}
