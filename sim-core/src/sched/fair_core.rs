//! The fair class's shared state and code (`kernel/sched/fair.c`, with the
//! `CONFIG_FAIR_GROUP_SCHED` code paths that distribution kernels build):
//! what 4.4 CFS (`cfs44.rs`) and 6.x EEVDF (`eevdf.rs`, `eevdf_class.rs`)
//! share. `fair.rs` picks one of them when the simulation is built.
//!
//! Entities and run queues live in two arenas (`entities`, `cfs_rqs`) indexed by
//! id; the hierarchy is walked through `parent` links exactly as
//! `for_each_sched_entity` does. Functions keep their kernel names so a reader
//! can put this file next to fair.c. Task groups (`group.rs`) add levels: a
//! group's entity weight on each CPU is recomputed by `update_cfs_shares` from
//! the PELT load averages (`pelt.rs`) wherever 4.4 does it. Without groups
//! every task sits in its CPU's root run queue and those walks have one step.
//!
//! Load averages (PELT) are tracked on every run queue, root queues
//! included, and for every entity on them, by the version's `pelt` rule:
//! 4.4's (`pelt.rs`, `fair_pelt44.rs`: each queue also keeps
//! `runnable_load_avg`, the summed averages of its queued entities) or 6.x's
//! (`pelt6x.rs`, `fair_pelt6x.rs`, `util_est.rs`: runnable averages,
//! propagation through group entities, util_est). `fair_pelt.rs` holds the
//! entry points both classes share. Group shares read only group queues
//! (through `tg->load_avg`); under 4.4 the root queues' averages feed
//! `weighted_cpuload` (and with it `source_load`, `target_load`, `cpu_load[]`
//! in `cpu_load.rs`), `task_h_load` and `effective_load`, which the load
//! balancer and `wake_affine` read; 6.x's balancer reads `cpu_signals`.
//!
//! Staleness, as in 4.4: a queue's averages only move when that queue is
//! updated (an enqueue, dequeue, tick, pick or put on its CPU, or
//! `update_blocked_averages` for that CPU). 4.4 never brings a remote CPU's
//! averages up to date before reading them: `wake_affine`
//! (`source_load`/`target_load`/`effective_load`), `find_idlest_group` /
//! `find_idlest_cpu` and `update_sg_lb_stats` / `find_busiest_queue` all read
//! `weighted_cpuload` of other CPUs as last left. The only remote refresh is
//! `nohz_idle_balance`, which runs `rebalance_domains` → `update_blocked_averages`
//! on behalf of each idle CPU: that is `update_blocked_averages(cpu)` here.
//!
//! Time: `clock` plays `rq_clock_task()`; the engine sets it before each call.

use super::bandwidth::{Bandwidth, BandwidthRules, DEFAULT_BANDWIDTH_SLICE_US};
use super::cfs_rq::CfsRq;
use super::entity::SchedEntity;
use super::group::{GroupLoad, MIN_SHARES, ROOT_GROUP, TaskGroup, calc_cfs_shares};
use super::model::{KernelModel, KernelRules, PeltKind};
use super::tunables::{CfsTunables, EevdfFeatures, EevdfTunables, SchedFeatures};
use super::weights::LoadWeight;
use crate::cpuset::CpuSet;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId};
use crate::sched::policy::Policy;
use std::ops::{Deref, DerefMut};

/// `ENQUEUE_WAKEUP` (4.4 sched.h).
pub const ENQUEUE_WAKEUP: u32 = 1;
/// `ENQUEUE_WAKING`: the vruntime was made relative by `task_waking_fair`.
pub const ENQUEUE_WAKING: u32 = 4;
/// `DEQUEUE_SLEEP` (4.4 sched.h).
pub const DEQUEUE_SLEEP: u32 = 1;
/// `WF_FORK` (4.4 sched.h): the wakee was just forked.
pub const WF_FORK: u32 = 2;

/// `ENQUEUE_INITIAL` (6.x sched.h): a new task (half a slice with PLACE_DEADLINE_INITIAL).
pub const ENQUEUE_INITIAL: u32 = 0x80;
/// `ENQUEUE_DELAYED` (6.12+): wake a task that DELAY_DEQUEUE kept queued.
pub const ENQUEUE_DELAYED: u32 = 0x200;
/// `DEQUEUE_DELAYED` (6.12+): the final dequeue of a delayed entity.
pub const DEQUEUE_DELAYED: u32 = 0x200;
/// `DEQUEUE_SPECIAL` (6.12+): never delayed (`throttle_cfs_rq` uses it).
pub const DEQUEUE_SPECIAL: u32 = 0x10;
/// `DEQUEUE_MIGRATING` (6.12 sched.h; 6.6 asks `task_on_rq_migrating`): the
/// balancer moves the task while queued (`detach_task`). 4.4 does not look.
pub const DEQUEUE_MIGRATING: u32 = 0x100;
/// `ENQUEUE_MIGRATING` (6.12 sched.h), the same for the enqueue.
pub const ENQUEUE_MIGRATING: u32 = 0x100;
/// `ENQUEUE_RESTORE` / `DEQUEUE_SAVE` (6.x sched.h; the engine never sets them).
pub const ENQUEUE_RESTORE: u32 = 0x02;

/// What the fair class is built from: the model and its settings.
#[derive(Clone, Debug)]
pub struct FairConfig {
    pub model: KernelModel,
    pub tunables: CfsTunables,
    pub features: SchedFeatures,
    pub eevdf: EevdfTunables,
    pub features_eevdf: EevdfFeatures,
    pub tick_nsec: u64,
    /// Bandwidth control: whose rules, and `sched_cfs_bandwidth_slice_us`.
    pub bandwidth: (BandwidthRules, u64),
}

impl FairConfig {
    /// `model`'s fair class with these tunables and the default features,
    /// HZ 250 (benches and unit tests build a class alone with it).
    pub fn of(model: KernelModel, tunables: CfsTunables) -> FairConfig {
        let eevdf = EevdfTunables::resolve(
            1,
            super::tunables::TunableScaling::None,
            super::tunables::BASE_SLICE_NS,
            super::tunables::TunableValue::Default,
        );
        FairConfig {
            model,
            tunables,
            features: SchedFeatures::default(),
            eevdf,
            features_eevdf: EevdfFeatures::defaults(model),
            tick_nsec: super::tunables::tick_nsec(250),
            bandwidth: (model.rules().bandwidth, DEFAULT_BANDWIDTH_SLICE_US),
        }
    }
}

/// The fair-class state both models share: entities, run queues, groups,
/// load tracking, bandwidth, and the model's settings.
#[derive(Clone, Debug)]
pub struct FairCore {
    /// The kernel modelled: 4.4 runs the CFS rules of this file, 6.x the
    /// EEVDF rules of `eevdf.rs` on the same state. Fixed at build.
    pub model: KernelModel,
    /// The model's version table (`model.rules()`), asked by rule name.
    pub rules: &'static KernelRules,
    /// Its load tracking, 4.4's or 6.x's (`rules.pelt`, kept at hand: the
    /// shared entry points of `fair_pelt.rs` match on it).
    pub pelt: PeltKind,
    pub tunables: CfsTunables,
    pub features: SchedFeatures,
    /// EEVDF tunables and feature bits (read only by 6.x models).
    pub eevdf: EevdfTunables,
    pub features_eevdf: EevdfFeatures,
    /// `TICK_NSEC` (the EEVDF lag clamp is at least one tick).
    pub tick_nsec: u64,
    /// CPUs the class asked to reschedule from inside a call (EEVDF's
    /// `update_curr` at a slice end); the engine applies and clears them.
    pub resched: Vec<CpuId>,
    /// Tasks whose delayed dequeue (6.12+) completed during a call: the
    /// engine takes them off its run-queue counts.
    pub delayed_done: Vec<EntityId>,
    /// Why the last wake-up check did or did not preempt (read by the
    /// engine for the history records).
    pub wakeup_verdict: super::model::WakeupVerdict,
    /// The last check compared group entities (the woken task's and curr's
    /// ancestors where their hierarchies meet), not the tasks themselves.
    pub wakeup_group_level: bool,
    pub entities: Vec<SchedEntity>,
    pub cfs_rqs: Vec<CfsRq>,
    /// Task groups; index 0 is the root group.
    pub groups: Vec<TaskGroup>,
    pub group_load: GroupLoad,
    /// Per CPU, the group run queues on its leaf list (`rq->leaf_cfs_rq_list`).
    pub(crate) leaf: Vec<Vec<CfsRqId>>,
    /// Per CPU, 6.x's `rq->tmp_alone_branch`: the queue after which a queue
    /// whose parent is not listed yet goes (`None`: the list head).
    pub(crate) leaf_tmp: Vec<Option<CfsRqId>>,
    /// `rq_clock_task` of the run queue being operated on.
    pub clock: u64,
    pub(crate) tree_seq: u64,
    /// CFS bandwidth control (`bandwidth.rs`): the groups' pools and timers.
    pub bw: Bandwidth,
}

impl FairCore {
    /// A machine of `ncpus` CPUs, each with its root run queue (`CfsRqId(cpu)`)
    /// in the root group.
    pub fn new(config: FairConfig, group_load: GroupLoad, ncpus: u16) -> FairCore {
        let FairConfig { model, tunables, features, eevdf, features_eevdf, tick_nsec, bandwidth } = config;
        let cfs_rqs: Vec<CfsRq> = (0..ncpus).map(|c| CfsRq::new(CpuId(c), ROOT_GROUP, None)).collect();
        let root = TaskGroup {
            path: "/".to_string(),
            parent: None,
            shares: super::weights::NICE_0_LOAD,
            load_avg: 0,
            load_weight: 0,
            cfs_rq: (0..u32::from(ncpus)).map(|c| Some(CfsRqId(c))).collect(),
            se: vec![None; usize::from(ncpus)],
        };
        FairCore {
            model,
            rules: model.rules(),
            pelt: model.rules().pelt,
            tunables,
            features,
            eevdf,
            features_eevdf,
            tick_nsec,
            resched: Vec::new(),
            delayed_done: Vec::new(),
            wakeup_verdict: super::model::WakeupVerdict::NotChecked,
            wakeup_group_level: false,
            entities: Vec::new(),
            cfs_rqs,
            groups: vec![root],
            group_load,
            leaf: vec![Vec::new(); usize::from(ncpus)],
            leaf_tmp: vec![None; usize::from(ncpus)],
            clock: 0,
            tree_seq: 0,
            bw: Bandwidth::new(bandwidth.0, bandwidth.1),
        }
    }

    /// `sched_create_group` → `alloc_fair_sched_group` (4.4): a child of
    /// `parent` with its run queue and entity on each CPU of `cpus` (which the
    /// parent must cover). The entity starts at NICE_0_LOAD (`init_tg_cfs_entry`)
    /// with a full load average (4.4 `init_entity_runnable_average`; 6.x's
    /// starts empty).
    pub fn create_group(&mut self, path: String, parent: GroupId, shares: u64, cpus: &CpuSet) -> GroupId {
        let id = GroupId(self.groups.len() as u32);
        let n = self.leaf.len();
        let mut group = TaskGroup {
            path,
            parent: Some(parent),
            shares,
            load_avg: 0,
            load_weight: 0,
            cfs_rq: vec![None; n],
            se: vec![None; n],
        };
        for cpu in cpus.iter() {
            let c = cpu.index();
            let parent_q = self.groups[parent.index()].cfs_rq[c].expect("parent group covers the child's CPUs");
            let parent_se = self.groups[parent.index()].se[c];
            let q = CfsRqId(self.cfs_rqs.len() as u32);
            let se = EntityId(self.entities.len() as u32);
            self.cfs_rqs.push(CfsRq::new(cpu, id, Some(se)));
            let mut e =
                SchedEntity::new(LoadWeight::from_weight(super::weights::NICE_0_LOAD), parent_q, Policy::Normal);
            e.parent = parent_se;
            e.depth = parent_se.map_or(0, |p| self.se(p).depth + 1);
            e.my_q = Some(q);
            self.entities.push(e);
            self.init_group_entity_load_avg(se);
            group.cfs_rq[c] = Some(q);
            group.se[c] = Some(se);
        }
        let queues: Vec<CfsRqId> = group.cfs_rq.iter().flatten().copied().collect();
        self.groups.push(group);
        if shares != super::weights::NICE_0_LOAD {
            // Writing cpu.shares: sched_group_set_shares (4.4 core.c) reweights
            // the group's entity on every CPU (update_cfs_shares).
            for q in queues {
                self.init_cfs_shares(q);
            }
        }
        id
    }

    /// `update_cfs_shares` (4.4 fair.c) of a new group's queue, whose entity
    /// is not queued yet: its weight from `calc_cfs_shares`, as either model
    /// gets it when `cpu.shares` is written at creation (`reweight_entity`
    /// of an entity off the run queue only sets its weight).
    pub(crate) fn init_cfs_shares(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        let Some(se) = rq.owner else { return };
        debug_assert!(!self.se(se).on_rq && !self.throttled_hierarchy(q));
        let tg = &self.groups[rq.tg.index()];
        let tg_weight = match self.group_load {
            GroupLoad::Pelt => tg.load_avg - rq.tg_load_avg_contrib as i64 + rq.load.weight as i64,
            GroupLoad::Instantaneous => tg.load_weight as i64,
        };
        let shares = calc_cfs_shares(tg.shares, rq.load.weight, tg_weight);
        self.se_mut(se).load = LoadWeight::from_weight(shares);
    }

    pub fn se(&self, se: EntityId) -> &SchedEntity {
        &self.entities[se.index()]
    }

    pub fn rq(&self, q: CfsRqId) -> &CfsRq {
        &self.cfs_rqs[q.index()]
    }

    pub(crate) fn se_mut(&mut self, se: EntityId) -> &mut SchedEntity {
        &mut self.entities[se.index()]
    }

    pub(crate) fn rq_mut(&mut self, q: CfsRqId) -> &mut CfsRq {
        &mut self.cfs_rqs[q.index()]
    }

    pub(crate) fn cfs_rq_of(&self, se: EntityId) -> CfsRqId {
        self.entities[se.index()].cfs_rq
    }

    pub(crate) fn parent(&self, se: EntityId) -> Option<EntityId> {
        self.entities[se.index()].parent
    }

    /// `account_entity_enqueue`.
    pub(crate) fn account_entity_enqueue(&mut self, q: CfsRqId, se: EntityId) {
        let w = self.se(se).load.weight;
        let rq = self.rq_mut(q);
        rq.load.add(w);
        rq.nr_running += 1;
        let tg = rq.tg;
        if tg != ROOT_GROUP {
            self.groups[tg.index()].load_weight += w;
        }
    }

    /// `account_entity_dequeue`.
    pub(crate) fn account_entity_dequeue(&mut self, q: CfsRqId, se: EntityId) {
        let w = self.se(se).load.weight;
        let rq = self.rq_mut(q);
        rq.load.sub(w);
        rq.nr_running -= 1;
        let tg = rq.tg;
        if tg != ROOT_GROUP {
            self.groups[tg.index()].load_weight -= w;
        }
    }

    /// `__clear_buddies_{last,next,skip}` and `clear_buddies` (4.4 fair.c): a
    /// buddy mark is cleared up the hierarchy as long as it points at this path.
    #[inline]
    pub fn clear_buddies(&mut self, q: CfsRqId, se: EntityId) {
        // The common case: no mark of this queue points at `se`, so nothing
        // up the hierarchy is cleared either (each walk starts at `q`).
        let rq = self.rq(q);
        if rq.last != Some(se) && rq.next != Some(se) && rq.skip != Some(se) {
            return;
        }
        self.clear_marked_buddies(q, se);
    }

    #[inline(never)]
    fn clear_marked_buddies(&mut self, q: CfsRqId, se: EntityId) {
        type Slot = fn(&mut CfsRq) -> &mut Option<EntityId>;
        let slots: [Slot; 3] = [|r| &mut r.last, |r| &mut r.next, |r| &mut r.skip];
        for slot in slots {
            if *slot(self.rq_mut(q)) != Some(se) {
                continue;
            }
            let mut cur = Some(se);
            while let Some(s) = cur {
                let owner = self.cfs_rq_of(s);
                let mark = slot(self.rq_mut(owner));
                if *mark != Some(s) {
                    break;
                }
                *mark = None;
                cur = self.parent(s);
            }
        }
    }

    /// `set_last_buddy` (4.4 fair.c); SCHED_IDLE tasks are never buddies.
    pub(crate) fn set_last_buddy(&mut self, se: EntityId) {
        if self.se(se).is_task() && self.se(se).policy == Policy::Idle {
            return;
        }
        let mut cur = Some(se);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).last = Some(s);
            cur = self.parent(s);
        }
    }

    /// `set_next_buddy` (4.4 fair.c).
    pub fn set_next_buddy(&mut self, se: EntityId) {
        if self.se(se).is_task() && self.se(se).policy == Policy::Idle {
            return;
        }
        let mut cur = Some(se);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).next = Some(s);
            cur = self.parent(s);
        }
    }

    /// `set_skip_buddy` (4.4 fair.c).
    pub(crate) fn set_skip_buddy(&mut self, se: EntityId) {
        let mut cur = Some(se);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).skip = Some(s);
            cur = self.parent(s);
        }
    }

    /// `find_matching_se` (4.4 fair.c): walk both entities up until they are
    /// siblings in one run queue.
    pub(crate) fn find_matching_se(&self, mut se: EntityId, mut pse: EntityId) -> (EntityId, EntityId) {
        let up = |e: EntityId| self.parent(e).expect("entity above the root");
        let (mut d, mut pd) = (self.se(se).depth, self.se(pse).depth);
        while d > pd {
            d -= 1;
            se = up(se);
        }
        while pd > d {
            pd -= 1;
            pse = up(pse);
        }
        while self.cfs_rq_of(se) != self.cfs_rq_of(pse) {
            se = up(se);
            pse = up(pse);
        }
        (se, pse)
    }

    /// `set_task_rq` (4.4 sched.h): point a task's entity at its group's run
    /// queue and entity on `cpu`.
    pub fn set_task_rq(&mut self, se: EntityId, tg: GroupId, cpu: CpuId) {
        let g = &self.groups[tg.index()];
        let q = g.cfs_rq[cpu.index()].expect("task placed on a CPU its group does not cover");
        let parent = g.se[cpu.index()];
        let depth = parent.map_or(0, |p| self.se(p).depth + 1);
        let e = self.se_mut(se);
        e.cfs_rq = q;
        e.parent = parent;
        e.depth = depth;
    }

    /// The root run queue of `cpu` (`&cpu_rq(cpu)->cfs`).
    pub(crate) fn root_cfs_rq(&self, cpu: CpuId) -> CfsRqId {
        self.groups[ROOT_GROUP.index()].cfs_rq[cpu.index()].expect("every CPU has a root queue")
    }

    /// `weighted_cpuload` (4.4 fair.c): `cfs_rq_runnable_load_avg(&cpu_rq(cpu)->cfs)`,
    /// as last updated (see the module doc on staleness).
    /// The root queue's `util_avg` (4.4 `cpu_util` caps it at the CPU's
    /// original capacity; the caller does).
    pub fn cpu_util(&self, cpu: CpuId) -> u64 {
        self.rq(self.root_cfs_rq(cpu)).avg.util_avg
    }

    pub fn weighted_cpuload(&self, cpu: CpuId) -> u64 {
        self.rq(self.root_cfs_rq(cpu)).runnable_load_avg
    }

    /// `cfs_rq_load_avg` (4.4 fair.c): `cfs_rq->avg.load_avg`.
    pub fn cfs_rq_load_avg(&self, q: CfsRqId) -> u64 {
        self.rq(q).avg.load_avg
    }

    /// `p->se.avg.load_avg` of a task entity.
    pub fn task_load_avg(&self, se: EntityId) -> u64 {
        self.se(se).avg.load_avg
    }

    /// `task_group(p)`: the group whose queue the task entity is on.
    pub fn task_group_of(&self, se: EntityId) -> GroupId {
        self.rq(self.cfs_rq_of(se)).tg
    }

    /// `update_cfs_rq_h_load` (4.4 fair.c): compute `h_load`, top-down, for
    /// `q` and every queue above it whose value is older than this jiffy:
    /// a root queue's `h_load` is its `load_avg`; a child queue's is its
    /// parent's `h_load · se->avg.load_avg / (parent load_avg + 1)`.
    pub(crate) fn update_cfs_rq_h_load(&mut self, q: CfsRqId, jiffies: u64) {
        let now = Some(jiffies);
        if self.rq(q).last_h_load_update == now {
            return;
        }
        self.rq_mut(q).h_load_next = None;
        // Walk up, leaving a trail of h_load_next links, until the root or a
        // queue already computed this jiffy (bounded by the hierarchy depth).
        let mut top = q;
        let mut se = self.rq(q).owner;
        while let Some(s) = se {
            top = self.cfs_rq_of(s);
            self.rq_mut(top).h_load_next = Some(s);
            if self.rq(top).last_h_load_update == now {
                break;
            }
            se = self.parent(s);
        }
        if se.is_none() {
            let rq = self.rq_mut(top);
            rq.h_load = rq.avg.load_avg;
            rq.last_h_load_update = now;
        }
        let mut cur = top;
        while let Some(s) = self.rq(cur).h_load_next {
            let rq = self.rq(cur);
            let load = rq.h_load * self.se(s).avg.load_avg / (rq.avg.load_avg + 1);
            cur = self.se(s).my_q.expect("h_load_next is a group entity");
            let child = self.rq_mut(cur);
            child.h_load = load;
            child.last_h_load_update = now;
        }
    }

    /// `task_h_load` (4.4 fair.c, `CONFIG_FAIR_GROUP_SCHED`): the task's load
    /// as its root queue sees it, `load_avg · h_load / (queue load_avg + 1)`.
    /// `jiffies` is the caller's tick count; `h_load` is cached per jiffy.
    pub fn task_h_load(&mut self, se: EntityId, jiffies: u64) -> u64 {
        let q = self.cfs_rq_of(se);
        self.update_cfs_rq_h_load(q, jiffies);
        let rq = self.rq(q);
        self.se(se).avg.load_avg * rq.h_load / (rq.avg.load_avg + 1)
    }

    /// `effective_load` (4.4 fair.c, `CONFIG_FAIR_GROUP_SCHED`): the change in
    /// root-level load if `wl` is added to group `tg`'s queue on `cpu` and `wg`
    /// to the group's total weight, walking the group entities up to the root
    /// (each level redistributes `tg->shares` by the PELT averages; `wg` only
    /// counts at the first level). The root group gives `wl`; so does a group
    /// with no queue on `cpu` (this model creates queues only on the CPUs a
    /// group's tasks may use). Uses `tg->load_avg` whatever `group_load` says.
    pub fn effective_load(&self, tg: GroupId, cpu: CpuId, mut wl: i64, mut wg: i64) -> i64 {
        let g = &self.groups[tg.index()];
        if g.parent.is_none() {
            return wl; // the trivial, non-cgroup case
        }
        let Some(mut se) = g.se[cpu.index()] else { return wl };
        // Bounded by the hierarchy depth.
        loop {
            let e = self.se(se);
            let rq = self.rq(e.my_q.expect("a group's se owns its queue"));
            let group = &self.groups[rq.tg.index()];
            let mut w = rq.avg.load_avg as i64;
            // W = wg + Σ rw_j, with this CPU's current value in place of its contribution.
            let big_w = wg + group.load_avg - rq.tg_load_avg_contrib as i64 + w;
            w += wl;
            let shares = group.shares as i64;
            wl = if big_w > 0 && w < big_w { w * shares / big_w } else { shares };
            // Clipped like calc_cfs_shares.
            wl = wl.max(MIN_SHARES as i64);
            wl -= e.avg.load_avg as i64;
            wg = 0;
            match e.parent {
                Some(p) => se = p,
                None => return wl,
            }
        }
    }

    /// The flags `wake_up_new_task` enqueues a new task with: ENQUEUE_INITIAL
    /// from 6.12 (core.c), so it gets half a slice; 4.4 and 6.6 pass none.
    pub fn new_task_enqueue_flags(&self) -> u32 {
        if self.rules.initial_enqueue { ENQUEUE_INITIAL } else { 0 }
    }

    /// A task's own slice (6.12+ `__setscheduler_params`/`__setparam_fair`).
    pub fn set_custom_slice(&mut self, se: EntityId, slice_ns: u64) {
        let e = self.se_mut(se);
        e.slice = slice_ns;
        e.custom_slice = true;
    }

    /// Asks the engine to reschedule the CPU of `q`.
    pub(crate) fn resched_cpu_of(&mut self, q: CfsRqId) {
        let cpu = self.rq(q).cpu;
        if !self.resched.contains(&cpu) {
            self.resched.push(cpu);
        }
    }
}

/// One model's view of the fair class: the shared state and the model's
/// own (`Cfs44` or `Eevdf`). The model's rules are methods of
/// `Fair<'_, Cfs44>` or `Fair<'_, Eevdf>`, monomorphic; the shared state
/// is reached through `Deref`.
pub struct Fair<'a, P> {
    pub core: &'a mut FairCore,
    pub policy: &'a mut P,
}

impl<P> Deref for Fair<'_, P> {
    type Target = FairCore;
    fn deref(&self) -> &FairCore {
        self.core
    }
}

impl<P> DerefMut for Fair<'_, P> {
    fn deref_mut(&mut self) -> &mut FairCore {
        self.core
    }
}

/// What the shared code (bandwidth throttling, the pick's path switch)
/// asks of a model: its own per-queue state and its entity operations.
pub trait FairPolicy: Sized {
    /// Model state for a new run queue (the queues are created in id order).
    fn add_queue(&mut self);
    /// `enqueue_entity` of the model.
    fn enqueue_entity(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId, flags: u32);
    /// `throttle_cfs_rq`'s dequeue of a group entity.
    fn throttle_dequeue(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId);
    /// `unthrottle_cfs_rq`: finish a delayed dequeue of `se` first (6.12+);
    /// true if there was one.
    fn unthrottle_finish_delayed(f: &mut Fair<'_, Self>, q: CfsRqId, se: EntityId) -> bool;
    /// Levels a throttle or unthrottle walks past without (de)queueing
    /// still update their load average (6.x), or not (4.4).
    const UPDATE_WALKED_LEVELS: bool;
}

impl<P: FairPolicy> Fair<'_, P> {
    /// The tail of `pick_next_task_fair` (4.4 and 6.x alike) when the pick
    /// changed task: put `prev`'s path and set `p`'s, level by level, from
    /// the deepest up to the queue they share.
    pub(crate) fn switch_path(
        &mut self,
        p: EntityId,
        prev: EntityId,
        put: fn(&mut Self, CfsRqId, EntityId),
        set: fn(&mut Self, CfsRqId, EntityId),
    ) {
        let (mut se, mut pse) = (p, prev);
        // Bounded by the hierarchy depth.
        while self.cfs_rq_of(se) != self.cfs_rq_of(pse) {
            let (sd, pd) = (self.se(se).depth, self.se(pse).depth);
            if sd <= pd {
                put(self, self.cfs_rq_of(pse), pse);
                pse = self.parent(pse).expect("prev below the root");
            }
            if sd >= pd {
                set(self, self.cfs_rq_of(se), se);
                se = self.parent(se).expect("next below the root");
            }
        }
        let q = self.cfs_rq_of(se);
        put(self, q, pse);
        set(self, q, se);
    }
}
