//! The CFS fair class of Linux 4.4 (`kernel/sched/fair.c`), with the
//! `CONFIG_FAIR_GROUP_SCHED` code paths that distribution kernels build.
//!
//! Entities and run queues live in two arenas (`entities`, `cfs_rqs`) indexed by
//! id; the hierarchy is walked through `parent` links exactly as
//! `for_each_sched_entity` does. Functions keep their kernel names so a reader
//! can put this file next to fair.c. Task groups (`group.rs`) add levels: a
//! group's entity weight on each CPU is recomputed by `update_cfs_shares` from
//! the PELT load averages (`pelt.rs`) wherever 4.4 does it. Without groups
//! every task sits in its CPU's root run queue and those walks have one step.
//!
//! Load averages (PELT, `pelt.rs`) are tracked on every run queue, root
//! queues included, and for every entity on them, as 4.4 does; each queue
//! also keeps `runnable_load_avg`, the summed averages of its queued entities.
//! Group shares read only group queues (through `tg->load_avg`); the root
//! queues' averages feed `weighted_cpuload` (and with it `source_load`,
//! `target_load`, `cpu_load[]` in `cpu_load.rs`), `task_h_load` and
//! `effective_load`, which the load balancer and `wake_affine` read.
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

use super::SchedClass;
use super::bandwidth::{Bandwidth, BandwidthRules, DEFAULT_BANDWIDTH_SLICE_US};
use super::cfs_rq::CfsRq;
use super::eevdf_tree::Item;
use super::entity::SchedEntity;
use super::group::{GroupLoad, MIN_SHARES, ROOT_GROUP, TaskGroup, calc_cfs_shares};
use super::model::{KernelModel, WakeupVerdict};
use super::pelt::{self, LOAD_AVG_MAX};
use super::tunables::{CfsTunables, EevdfFeatures, EevdfTunables, SchedFeatures};
use super::weights::{LoadWeight, calc_delta, calc_delta_fair};
use crate::cpuset::CpuSet;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId};
use super::policy::Policy;

/// `ENQUEUE_WAKEUP` (4.4 sched.h).
pub const ENQUEUE_WAKEUP: u32 = 1;
/// `ENQUEUE_WAKING`: the vruntime was made relative by `task_waking_fair`.
pub const ENQUEUE_WAKING: u32 = 4;
/// `DEQUEUE_SLEEP` (4.4 sched.h).
pub const DEQUEUE_SLEEP: u32 = 1;
/// `WF_FORK` (4.4 sched.h): the wakee was just forked.
pub const WF_FORK: u32 = 2;

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
    /// The 4.4 CFS class with these tunables and the default features, HZ 250.
    pub fn linux44(tunables: CfsTunables) -> FairConfig {
        let eevdf = EevdfTunables::resolve(
            1,
            super::tunables::TunableScaling::None,
            super::tunables::BASE_SLICE_NS,
            super::tunables::TunableValue::Default,
        );
        FairConfig {
            model: KernelModel::Linux44,
            tunables,
            features: SchedFeatures::default(),
            eevdf,
            features_eevdf: EevdfFeatures::defaults(KernelModel::Linux44),
            tick_nsec: super::tunables::tick_nsec(250),
            bandwidth: (BandwidthRules::Linux44, DEFAULT_BANDWIDTH_SLICE_US),
        }
    }
}

/// The fair-class state of the whole machine (CFS 4.4 or EEVDF 6.x rules).
#[derive(Clone, Debug)]
pub struct Cfs {
    /// The kernel modelled: 4.4 runs the CFS rules of this file, 6.x the
    /// EEVDF rules of `eevdf.rs` on the same state. Fixed at build.
    pub model: KernelModel,
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
    /// EEVDF picks of an ineligible entity that no kernel rule explains
    /// (checked by `eevdf_invariants`; stays 0).
    pub pick_violations: u64,
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
    leaf: Vec<Vec<CfsRqId>>,
    /// `rq_clock_task` of the run queue being operated on.
    pub clock: u64,
    tree_seq: u64,
    /// CFS bandwidth control (`bandwidth.rs`): the groups' pools and timers.
    pub bw: Bandwidth,
}

impl Cfs {
    /// A machine of `ncpus` CPUs, each with its root run queue (`CfsRqId(cpu)`)
    /// in the root group.
    pub fn new(config: FairConfig, group_load: GroupLoad, ncpus: u16) -> Cfs {
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
        Cfs {
            model,
            tunables,
            features,
            eevdf,
            features_eevdf,
            tick_nsec,
            resched: Vec::new(),
            delayed_done: Vec::new(),
            pick_violations: 0,
            wakeup_verdict: super::model::WakeupVerdict::NotChecked,
            wakeup_group_level: false,
            entities: Vec::new(),
            cfs_rqs,
            groups: vec![root],
            group_load,
            leaf: vec![Vec::new(); usize::from(ncpus)],
            clock: 0,
            tree_seq: 0,
            bw: Bandwidth::new(bandwidth.0, bandwidth.1),
        }
    }

    /// `sched_create_group` → `alloc_fair_sched_group` (4.4): a child of
    /// `parent` with its run queue and entity on each CPU of `cpus` (which the
    /// parent must cover). The entity starts at NICE_0_LOAD (`init_tg_cfs_entry`)
    /// with a full load average (`init_entity_runnable_average`).
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
            group.cfs_rq[c] = Some(q);
            group.se[c] = Some(se);
        }
        let queues: Vec<CfsRqId> = group.cfs_rq.iter().flatten().copied().collect();
        self.groups.push(group);
        if shares != super::weights::NICE_0_LOAD {
            // Writing cpu.shares: sched_group_set_shares (4.4 core.c) reweights
            // the group's entity on every CPU (update_cfs_shares).
            for q in queues {
                self.update_cfs_shares(q);
            }
        }
        id
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

    /// `entity_before` (4.4 fair.c).
    fn entity_before(&self, a: EntityId, b: EntityId) -> bool {
        self.se(a).vruntime < self.se(b).vruntime
    }

    /// The timeline's order: vruntime (4.4, and 6.6's EEVDF tree), or the
    /// virtual deadline (6.12+ `entity_before`).
    fn key(&self, se: EntityId) -> (i64, u64, EntityId) {
        let e = self.se(se);
        let k = if self.model >= KernelModel::Linux612 { e.deadline } else { e.vruntime };
        (k, e.tree_seq, se)
    }

    /// `__enqueue_entity`: insert into the timeline (ties go right); EEVDF
    /// models use the augmented tree, with the values `pick_eevdf` searches.
    pub(crate) fn enqueue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        self.tree_seq += 1;
        let seq = self.tree_seq;
        self.se_mut(se).tree_seq = seq;
        let key = self.key(se);
        if self.model.is_eevdf() {
            let e = self.se(se);
            let item = Item { key: key.0, seq, se, vruntime: e.vruntime, deadline: e.deadline, slice: e.slice };
            self.rq_mut(q).tree.insert(item);
        } else {
            self.rq_mut(q).insert(key);
        }
    }

    /// `__dequeue_entity`.
    pub(crate) fn dequeue_timeline(&mut self, q: CfsRqId, se: EntityId) {
        let key = self.key(se);
        if self.model.is_eevdf() {
            let removed = self.rq_mut(q).tree.remove(key.0, key.1);
            debug_assert!(removed.is_some_and(|i| i.se == se), "dequeue of an entity not in the tree");
        } else {
            self.rq_mut(q).remove(key);
        }
    }

    /// `update_min_vruntime` (4.4 fair.c). 4.4 uses `curr` even while it is being
    /// dequeued for sleep; 4.9 checks `curr->on_rq` first. The result is clamped so
    /// it never decreases.
    pub fn update_min_vruntime(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        let mut vruntime = rq.min_vruntime;
        if let Some(curr) = rq.curr {
            vruntime = self.se(curr).vruntime;
        }
        if let Some((left, _)) = rq.first() {
            vruntime = if rq.curr.is_none() { left } else { vruntime.min(left) };
        }
        let rq = self.rq_mut(q);
        rq.min_vruntime = rq.min_vruntime.max(vruntime);
    }

    /// `update_curr` (4.4 fair.c): charge the running entity for the time since
    /// `exec_start`, in real and in virtual time.
    pub fn update_curr(&mut self, q: CfsRqId) {
        let Some(curr) = self.rq(q).curr else { return };
        let now = self.clock;
        let se = self.se_mut(curr);
        let delta_exec = now as i64 - se.exec_start as i64;
        if delta_exec <= 0 {
            return;
        }
        let delta_exec = delta_exec as u64;
        se.exec_start = now;
        se.sum_exec_runtime += delta_exec;
        se.vruntime += calc_delta_fair(delta_exec, &se.load) as i64;
        self.update_min_vruntime(q);
        self.account_cfs_rq_runtime(q, delta_exec);
    }

    /// `__sched_period` (4.4 fair.c): the targeted latency, stretched to
    /// `nr × min_granularity` past `sched_nr_latency` entities.
    pub fn sched_period(&self, nr_running: u64) -> u64 {
        let t = &self.tunables;
        if nr_running > t.sched_nr_latency { nr_running * t.sched_min_granularity_ns } else { t.sched_latency_ns }
    }

    /// `sched_slice` (4.4 fair.c): the entity's share of the period, scaled by
    /// its weight at every level of the hierarchy (counting it as queued if it
    /// is not).
    pub fn sched_slice(&self, q: CfsRqId, se: EntityId) -> u64 {
        let on_rq = self.se(se).on_rq;
        let mut slice = self.sched_period(u64::from(self.rq(q).nr_running) + u64::from(!on_rq));
        let mut cur = Some(se);
        while let Some(s) = cur {
            let e = self.se(s);
            let mut load = self.rq(e.cfs_rq).load;
            if !e.on_rq {
                load.add(e.load.weight);
            }
            slice = calc_delta(slice, e.load.weight, &load);
            cur = e.parent;
        }
        slice
    }

    /// `sched_vslice` (4.4 fair.c).
    pub fn sched_vslice(&self, q: CfsRqId, se: EntityId) -> u64 {
        calc_delta_fair(self.sched_slice(q, se), &self.se(se).load)
    }

    /// `place_entity` (4.4 fair.c): a forked entity starts one vslice after
    /// `min_vruntime` (START_DEBIT); a waking one gets up to a (half, with
    /// GENTLE_FAIR_SLEEPERS) latency of credit. Never moves vruntime backwards.
    pub fn place_entity(&mut self, q: CfsRqId, se: EntityId, initial: bool) {
        let mut vruntime = self.rq(q).min_vruntime;
        if initial && self.features.start_debit {
            vruntime += self.sched_vslice(q, se) as i64;
        }
        if !initial {
            let mut thresh = self.tunables.sched_latency_ns;
            if self.features.gentle_fair_sleepers {
                thresh >>= 1;
            }
            vruntime -= thresh as i64;
        }
        let e = self.se_mut(se);
        e.vruntime = e.vruntime.max(vruntime);
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

    /// `reweight_entity` (4.4 fair.c): change a (group) entity's weight,
    /// keeping its queue's load consistent.
    fn reweight_entity(&mut self, q: CfsRqId, se: EntityId, weight: u64) {
        let on_rq = self.se(se).on_rq;
        if on_rq {
            if self.rq(q).curr == Some(se) {
                self.update_curr(q);
            }
            self.account_entity_dequeue(q, se);
        }
        self.se_mut(se).load = LoadWeight::from_weight(weight);
        if on_rq {
            self.account_entity_enqueue(q, se);
        }
    }

    /// `update_cfs_shares` (4.4 fair.c): recompute the weight of the group
    /// entity that owns `q` from the group's load (`calc_cfs_shares`).
    fn update_cfs_shares(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        let Some(se) = rq.owner else { return };
        if self.throttled_hierarchy(q) {
            return;
        }
        let tg = &self.groups[rq.tg.index()];
        let tg_weight = match self.group_load {
            // calc_tg_weight: this CPU's real-time load instead of its last contribution.
            GroupLoad::Pelt => tg.load_avg - rq.tg_load_avg_contrib as i64 + rq.load.weight as i64,
            GroupLoad::Instantaneous => tg.load_weight as i64,
        };
        let shares = calc_cfs_shares(tg.shares, rq.load.weight, tg_weight);
        let parent_q = self.cfs_rq_of(se);
        self.reweight_entity(parent_q, se, shares);
    }

    /// `update_cfs_rq_load_avg` (4.4 fair.c): fold in removed load, then accrue
    /// the queue's weight (into `avg` and `runnable_load_sum`, 4.4
    /// `__update_load_avg` with its `cfs_rq` argument). Returns whether the
    /// average changed.
    fn update_cfs_rq_load_avg(&mut self, q: CfsRqId) -> bool {
        let now = self.clock;
        let rq = self.rq_mut(q);
        let mut removed = false;
        if rq.removed_load_avg != 0 {
            let r = std::mem::take(&mut rq.removed_load_avg);
            rq.avg.load_avg = rq.avg.load_avg.saturating_sub(r);
            rq.avg.load_sum = rq.avg.load_sum.saturating_sub(r * LOAD_AVG_MAX);
            removed = true;
        }
        if rq.removed_util_avg != 0 {
            let r = std::mem::take(&mut rq.removed_util_avg);
            rq.avg.util_avg = rq.avg.util_avg.saturating_sub(r);
            rq.avg.util_sum = rq.avg.util_sum.saturating_sub(r * LOAD_AVG_MAX);
        }
        let weight = rq.load.weight;
        // running: cfs_rq->curr != NULL.
        let running = rq.curr.is_some();
        let mut sums = pelt::RqSums { runnable_load_sum: rq.runnable_load_sum };
        let decayed = pelt::update_cfs_rq_avg(now, &mut rq.avg, weight, running, &mut sums);
        rq.runnable_load_sum = sums.runnable_load_sum;
        if decayed {
            rq.runnable_load_avg = rq.runnable_load_sum / LOAD_AVG_MAX;
        }
        decayed || removed
    }

    /// `update_tg_load_avg` (4.4 fair.c): publish this queue's average into
    /// `tg->load_avg` when it moved by more than 1/64 of the last published value.
    fn update_tg_load_avg(&mut self, q: CfsRqId, force: bool) {
        let rq = self.rq(q);
        let delta = rq.avg.load_avg as i64 - rq.tg_load_avg_contrib as i64;
        if force || delta.unsigned_abs() > rq.tg_load_avg_contrib / 64 {
            let tg = rq.tg;
            self.groups[tg.index()].load_avg += delta;
            let rq = self.rq_mut(q);
            rq.tg_load_avg_contrib = rq.avg.load_avg;
        }
    }

    /// `__update_load_avg` of an entity: its weight counts while it is
    /// queued, its running time while it is its queue's `curr`.
    fn update_entity_avg(&mut self, se: EntityId) {
        let now = self.clock;
        let running = self.rq(self.se(se).cfs_rq).curr == Some(se);
        let e = self.se_mut(se);
        let weight = if e.on_rq { e.load.weight } else { 0 };
        pelt::update_load_avg(now, &mut e.avg, weight, running);
    }

    /// `update_load_avg` (4.4 fair.c): age the entity's and its queue's averages.
    pub(crate) fn update_load_avg(&mut self, se: EntityId, update_tg: bool) {
        let q = self.cfs_rq_of(se);
        self.update_entity_avg(se);
        if self.update_cfs_rq_load_avg(q) && update_tg {
            self.update_tg_load_avg(q, false);
        }
    }

    /// `enqueue_entity_load_avg` (4.4 fair.c): an entity arriving from another
    /// CPU (or new) brings its average with it (`attach_entity_load_avg`).
    pub(crate) fn enqueue_entity_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        // 4.4: migrated = !se->avg.last_update_time (cleared by migrate_task_rq_fair).
        let migrated = !self.se(se).avg.attached;
        if !migrated {
            self.update_entity_avg(se);
        }
        let decayed = self.update_cfs_rq_load_avg(q);
        let (load_avg, load_sum) = (self.se(se).avg.load_avg, self.se(se).avg.load_sum);
        let rq = self.rq_mut(q);
        rq.runnable_load_avg += load_avg;
        rq.runnable_load_sum += load_sum;
        if migrated {
            // attach_entity_load_avg; ATTACH_AGE_LOAD ages only entities whose
            // last_update_time survived, which no path here leaves.
            let last = self.rq(q).avg.last_update_time;
            let e = self.se_mut(se);
            e.avg.last_update_time = last;
            e.avg.attached = true;
            let (load_avg, load_sum, util_avg, util_sum) =
                (e.avg.load_avg, e.avg.load_sum, e.avg.util_avg, e.avg.util_sum);
            let rq = self.rq_mut(q);
            rq.avg.load_avg += load_avg;
            rq.avg.load_sum += load_sum;
            rq.avg.util_avg += util_avg;
            rq.avg.util_sum += util_sum;
        }
        if decayed || migrated {
            self.update_tg_load_avg(q, false);
        }
    }

    /// `dequeue_entity_load_avg` (4.4 fair.c): age the entity and its queue,
    /// then take the entity's average out of the queue's runnable average
    /// (clamped at 0). The entity stays attached to `cfs_rq->avg`.
    pub(crate) fn dequeue_entity_load_avg(&mut self, q: CfsRqId, se: EntityId) {
        self.update_load_avg(se, true);
        let (load_avg, load_sum) = (self.se(se).avg.load_avg, self.se(se).avg.load_sum);
        let rq = self.rq_mut(q);
        rq.runnable_load_avg = rq.runnable_load_avg.saturating_sub(load_avg);
        rq.runnable_load_sum = rq.runnable_load_sum.saturating_sub(load_sum);
    }

    /// `remove_entity_load_avg` (4.4 fair.c), from `migrate_task_rq_fair` and
    /// `task_dead_fair`: the entity's average, aged (at weight 0) to its queue's
    /// last update, is subtracted from the queue's `avg` at its next update
    /// (`removed_load_avg`). Detaching is `migrate_task_rq`'s job.
    pub fn remove_entity_load_avg(&mut self, se: EntityId) {
        let q = self.cfs_rq_of(se);
        let last = self.rq(q).avg.last_update_time;
        let e = self.se_mut(se);
        pelt::update_load_avg(last, &mut e.avg, 0, false);
        let (load_avg, util_avg) = (e.avg.load_avg, e.avg.util_avg);
        let rq = self.rq_mut(q);
        rq.removed_load_avg += load_avg;
        rq.removed_util_avg += util_avg;
    }

    /// `update_blocked_averages` (4.4 fair.c, `CONFIG_FAIR_GROUP_SCHED`): decay
    /// the averages of every queue on the CPU's leaf list (root queue included),
    /// including those with nothing queued. `clock` must be that CPU's clock
    /// (4.4 runs `update_rq_clock` on the CPU's rq first); this is also the
    /// remote refresh `nohz_idle_balance` does for idle CPUs.
    pub fn update_blocked_averages(&mut self, cpu: CpuId) {
        for i in 0..self.leaf[cpu.index()].len() {
            let q = self.leaf[cpu.index()][i];
            if self.update_cfs_rq_load_avg(q) {
                self.update_tg_load_avg(q, false);
            }
        }
    }

    /// `enqueue_entity` (4.4 fair.c).
    pub fn enqueue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        // Update the normalized vruntime before updating min_vruntime through
        // update_curr(): only a wakeup that was not made relative keeps it absolute.
        if flags & ENQUEUE_WAKEUP == 0 || flags & ENQUEUE_WAKING != 0 {
            let min = self.rq(q).min_vruntime;
            self.se_mut(se).vruntime += min;
        }
        self.update_curr(q);
        self.enqueue_entity_load_avg(q, se);
        self.account_entity_enqueue(q, se);
        self.update_cfs_shares(q);
        if flags & ENQUEUE_WAKEUP != 0 {
            self.place_entity(q, se, false);
        }
        if self.rq(q).curr != Some(se) {
            self.enqueue_timeline(q, se);
        }
        self.se_mut(se).on_rq = true;
        if self.rq(q).nr_running == 1 {
            self.list_add_leaf_cfs_rq(q);
            self.check_enqueue_throttle(q);
        }
    }

    /// `list_add_leaf_cfs_rq` (4.4 fair.c): a queue joins its CPU's leaf list
    /// for good, before its parent if the parent is already on it (children
    /// come first). The order does not change any value: each queue's
    /// `update_blocked_averages` step reads only that queue.
    pub(crate) fn list_add_leaf_cfs_rq(&mut self, q: CfsRqId) {
        let rq = self.rq(q);
        if rq.on_list {
            return;
        }
        let (cpu, tg) = (rq.cpu, rq.tg);
        let parent_on_list = self.groups[tg.index()]
            .parent
            .and_then(|p| self.groups[p.index()].cfs_rq[cpu.index()])
            .is_some_and(|pq| self.rq(pq).on_list);
        self.rq_mut(q).on_list = true;
        let leaf = &mut self.leaf[cpu.index()];
        if parent_on_list {
            leaf.insert(0, q);
        } else {
            leaf.push(q);
        }
    }

    /// `__clear_buddies_{last,next,skip}` and `clear_buddies` (4.4 fair.c): a
    /// buddy mark is cleared up the hierarchy as long as it points at this path.
    pub fn clear_buddies(&mut self, q: CfsRqId, se: EntityId) {
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

    /// `dequeue_entity` (4.4 fair.c).
    pub fn dequeue_entity(&mut self, q: CfsRqId, se: EntityId, flags: u32) {
        self.update_curr(q);
        self.dequeue_entity_load_avg(q, se);
        self.clear_buddies(q, se);
        if self.rq(q).curr != Some(se) {
            self.dequeue_timeline(q, se);
        }
        self.se_mut(se).on_rq = false;
        self.account_entity_dequeue(q, se);
        // Normalize after update_curr (which may move min_vruntime through curr)
        // so a migrating entity keeps its position relative to its queue.
        if flags & DEQUEUE_SLEEP == 0 {
            let min = self.rq(q).min_vruntime;
            self.se_mut(se).vruntime -= min;
        }
        // Return excess runtime on last dequeue.
        self.return_cfs_rq_runtime(q);
        self.update_min_vruntime(q);
        self.update_cfs_shares(q);
    }

    /// `check_preempt_tick` (4.4 fair.c): at a tick, preempt `curr` if it ran
    /// past its ideal slice, or ran at least `min_granularity` and is more than a
    /// slice of vruntime ahead of the leftmost entity. Returns true to resched.
    pub fn check_preempt_tick(&mut self, q: CfsRqId, curr: EntityId) -> bool {
        let ideal_runtime = self.sched_slice(q, curr);
        let c = self.se(curr);
        let delta_exec = c.sum_exec_runtime - c.prev_sum_exec_runtime;
        if delta_exec > ideal_runtime {
            // The current task ran long enough; don't let buddy favours re-elect it.
            self.clear_buddies(q, curr);
            return true;
        }
        // A task that just missed wakeup preemption should not wait a full slice.
        if delta_exec < self.tunables.sched_min_granularity_ns {
            return false;
        }
        let Some((left, _)) = self.rq(q).first() else { return false };
        let delta = self.se(curr).vruntime - left;
        if delta < 0 {
            return false;
        }
        delta as u64 > ideal_runtime
    }

    /// The tail of `pick_next_task_fair` (4.4 and 6.x alike) when the pick
    /// changed task: put `prev`'s path and set `p`'s, level by level, from
    /// the deepest up to the queue they share.
    pub(crate) fn switch_path(
        &mut self,
        p: EntityId,
        prev: EntityId,
        put: fn(&mut Cfs, CfsRqId, EntityId),
        set: fn(&mut Cfs, CfsRqId, EntityId),
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

    /// `set_next_entity` (4.4 fair.c): make `se` the running entity of `q`.
    pub fn set_next_entity(&mut self, q: CfsRqId, se: EntityId) {
        if self.se(se).on_rq {
            self.dequeue_timeline(q, se);
            self.update_load_avg(se, true);
        }
        let now = self.clock;
        let e = self.se_mut(se);
        e.exec_start = now; // update_stats_curr_start
        e.prev_sum_exec_runtime = e.sum_exec_runtime;
        self.rq_mut(q).curr = Some(se);
    }

    /// `put_prev_entity` (4.4 fair.c): a still-queued running entity goes back
    /// into the timeline.
    pub fn put_prev_entity(&mut self, q: CfsRqId, prev: EntityId) {
        if self.se(prev).on_rq {
            self.update_curr(q);
        }
        // Throttle cfs_rqs exceeding runtime.
        self.check_cfs_rq_runtime(q);
        if self.se(prev).on_rq {
            self.enqueue_timeline(q, prev);
            self.update_load_avg(prev, false);
        }
        self.rq_mut(q).curr = None;
    }

    /// `wakeup_gran` (4.4 fair.c): the wakeup granularity in the *woken*
    /// entity's virtual time.
    pub fn wakeup_gran(&self, se: EntityId) -> u64 {
        calc_delta_fair(self.tunables.sched_wakeup_granularity_ns, &self.se(se).load)
    }

    /// `wakeup_preempt_entity` (4.4 fair.c): 1 if `se` should preempt `curr`
    /// (its vruntime is more than a wakeup granularity behind), 0 if it is behind
    /// by less, -1 if it is not behind at all.
    pub fn wakeup_preempt_entity(&self, curr: EntityId, se: EntityId) -> i32 {
        let vdiff = self.se(curr).vruntime - self.se(se).vruntime;
        if vdiff <= 0 {
            return -1;
        }
        if vdiff > self.wakeup_gran(se) as i64 { 1 } else { 0 }
    }

    /// `pick_next_entity` (4.4 fair.c): the leftmost entity, unless a skip, last
    /// or next buddy may run instead without being too unfair.
    pub fn pick_next_entity(&mut self, q: CfsRqId, curr: Option<EntityId>) -> EntityId {
        let rq = self.rq(q);
        let mut left = rq.first().map(|(_, e)| e);
        if let Some(c) = curr
            && left.is_none_or(|l| self.entity_before(c, l))
        {
            left = Some(c);
        }
        let left = left.expect("pick_next_entity on an empty cfs_rq");
        let mut se = left;

        // Avoid running the skip buddy if something else can run without being too unfair.
        if rq.skip == Some(se) {
            let second = if Some(se) == curr {
                rq.first().map(|(_, e)| e)
            } else {
                let mut second = rq.after(self.key(se)).map(|(_, e)| e);
                if let Some(c) = curr
                    && second.is_none_or(|s| self.entity_before(c, s))
                {
                    second = Some(c);
                }
                second
            };
            if let Some(second) = second
                && self.wakeup_preempt_entity(second, left) < 1
            {
                se = second;
            }
        }
        // Prefer the last buddy: try to give the CPU back to a preempted task.
        if let Some(last) = rq.last
            && self.wakeup_preempt_entity(last, left) < 1
        {
            se = last;
        }
        // Someone really wants this to run; if it's not unfair, run it.
        if let Some(next) = rq.next
            && self.wakeup_preempt_entity(next, left) < 1
        {
            se = next;
        }
        self.clear_buddies(q, se);
        se
    }

    /// `set_last_buddy` (4.4 fair.c); SCHED_IDLE tasks are never buddies.
    fn set_last_buddy(&mut self, se: EntityId) {
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
    fn set_skip_buddy(&mut self, se: EntityId) {
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

    /// `entity_tick` (4.4 fair.c) for one level. `queued` is set when the HRTICK
    /// timer fired; `hrtick_active` when it is armed (then only it preempts, unless
    /// DOUBLE_TICK).
    fn entity_tick(&mut self, q: CfsRqId, curr: EntityId, queued: bool, hrtick_active: bool) -> bool {
        self.update_curr(q);
        self.update_load_avg(curr, true);
        self.update_cfs_shares(q);
        if queued {
            return true;
        }
        if !self.features.double_tick && hrtick_active {
            return false;
        }
        if self.rq(q).nr_running > 1 {
            return self.check_preempt_tick(q, curr);
        }
        false
    }

    /// `task_fork_fair` (4.4 fair.c) for a task created on `q`: the parent is
    /// taken to sit at `min_vruntime`, so the child lands one vslice later with
    /// START_DEBIT. Leaves the vruntime relative, as the kernel does before
    /// `wake_up_new_task` enqueues it (which adds `min_vruntime` back).
    pub fn task_fork(&mut self, q: CfsRqId, se: EntityId) {
        if self.model.is_eevdf() {
            // 6.6 task_fork_fair: update_curr, then a placement that the
            // enqueue overwrites; 6.12+ places only at enqueue.
            if self.model == KernelModel::Linux66 {
                self.eevdf_update_curr(q);
            }
            return self.eevdf_sched_fork(se);
        }
        self.update_curr(q);
        let min = self.rq(q).min_vruntime;
        self.se_mut(se).vruntime = min;
        self.place_entity(q, se, true);
        self.se_mut(se).vruntime -= min;
    }

    /// `task_waking_fair` (4.4 fair.c): make a waking task's vruntime relative to
    /// its old queue, so `enqueue_entity(ENQUEUE_WAKING)` can rebase it on the new one.
    pub fn task_waking(&mut self, se: EntityId) {
        if self.model.is_eevdf() {
            return; // 6.x keeps vruntime absolute; placement uses the saved lag
        }
        let min = self.rq(self.cfs_rq_of(se)).min_vruntime;
        self.se_mut(se).vruntime -= min;
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

    /// `migrate_task_rq_fair` (4.4 fair.c), from `set_task_cpu` when a task
    /// (not queued: waking, forked, or detached by `detach_task` after
    /// `deactivate_task`) changes CPU, before `set_task_rq`: its average is
    /// removed from the old queue (at that queue's next update), it is marked
    /// migrated (4.4 `last_update_time = 0`, here `attached = false`) so the
    /// next enqueue attaches it to the new queue (`attach_entity_load_avg`),
    /// and it is no longer cache hot (`exec_start = 0`).
    ///
    /// 4.4 quirk kept: a forked task moved by fork balancing still has
    /// `last_update_time == 0`, so `remove_entity_load_avg` ages its initial
    /// full average from time 0 to the old queue's last update.
    pub fn migrate_task_rq(&mut self, se: EntityId) {
        debug_assert!(!self.se(se).on_rq, "migrate_task_rq of a queued entity");
        self.remove_entity_load_avg(se);
        let e = self.se_mut(se);
        e.avg.attached = false;
        e.exec_start = 0;
    }

    /// The root run queue of `cpu` (`&cpu_rq(cpu)->cfs`).
    fn root_cfs_rq(&self, cpu: CpuId) -> CfsRqId {
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
    fn update_cfs_rq_h_load(&mut self, q: CfsRqId, jiffies: u64) {
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

    /// `yield_task_fair` (4.4 fair.c): charge the caller and mark it as the skip
    /// buddy. `nr_running` is the run queue's task count.
    pub fn yield_task(&mut self, curr: EntityId, nr_running: u32) {
        if self.model.is_eevdf() {
            return self.eevdf_yield_task(curr, nr_running);
        }
        if nr_running == 1 {
            return;
        }
        let q = self.cfs_rq_of(curr);
        self.clear_buddies(q, curr);
        if self.se(curr).policy != Policy::Batch {
            self.update_curr(q);
        }
        self.set_skip_buddy(curr);
    }

    /// The delay `hrtick_start_fair` (4.4 fair.c) would arm the HRTICK timer
    /// with: slice minus what already ran, if the queue has company. `Some(d < 0)`
    /// means the slice is already used up (resched now).
    pub fn hrtick_delay(&self, curr: EntityId) -> Option<i64> {
        if self.model.is_eevdf() {
            let cpu = self.rq(self.cfs_rq_of(curr)).cpu;
            return self.eevdf_hrtick_delay(curr, self.root_cfs_rq(cpu));
        }
        let q = self.cfs_rq_of(curr);
        if self.rq(q).nr_running <= 1 {
            return None;
        }
        let slice = self.sched_slice(q, curr);
        let e = self.se(curr);
        let ran = e.sum_exec_runtime - e.prev_sum_exec_runtime;
        Some(slice as i64 - ran as i64)
    }

    /// The HRTICK feature of the model (off by default in every version).
    pub fn hrtick_enabled(&self) -> bool {
        if self.model.is_eevdf() { self.features_eevdf.hrtick } else { self.features.hrtick }
    }

    /// The flags `wake_up_new_task` enqueues a new task with: ENQUEUE_INITIAL
    /// from 6.12 (core.c), so it gets half a slice; 4.4 and 6.6 pass none.
    pub fn new_task_enqueue_flags(&self) -> u32 {
        if self.model >= KernelModel::Linux612 { super::eevdf::ENQUEUE_INITIAL } else { 0 }
    }

    /// Whether `hrtick_update` (4.4 fair.c) re-arms the timer after an
    /// enqueue/dequeue: only while the running task's queue is below nr_latency.
    pub fn hrtick_update_wanted(&self, curr: EntityId) -> bool {
        if self.model.is_eevdf() {
            return true; // 6.x hrtick_update re-arms whenever curr is fair
        }
        u64::from(self.rq(self.cfs_rq_of(curr)).nr_running) < self.tunables.sched_nr_latency
    }

    /// `pick_next_task_fair`'s `simple:` path (4.4): pick and set top-down,
    /// nothing running. The root queue is not empty.
    fn pick_simple(&mut self, root: CfsRqId) -> EntityId {
        let mut q = root;
        // Bounded by the hierarchy depth.
        loop {
            let se = self.pick_next_entity(q, None);
            self.set_next_entity(q, se);
            match self.se(se).my_q {
                Some(child) => q = child,
                None => return se,
            }
        }
    }
}

impl SchedClass for Cfs {
    /// `enqueue_task_fair` (4.4 fair.c): enqueue up the hierarchy until an
    /// ancestor is already queued; parents are enqueued as wakeups.
    fn enqueue_task(&mut self, se: EntityId, mut flags: u32) -> bool {
        if self.model.is_eevdf() {
            return self.eevdf_enqueue_task(se, flags);
        }
        let mut cur = Some(se);
        while let Some(s) = cur {
            if self.se(s).on_rq {
                break;
            }
            let q = self.cfs_rq_of(s);
            self.enqueue_entity(q, s, flags);
            // End evaluation on encountering a throttled cfs_rq; the second
            // loop posts its h_nr_running increment.
            if self.cfs_rq_throttled(q) {
                break;
            }
            self.rq_mut(q).h_nr_running += 1;
            flags = ENQUEUE_WAKEUP;
            cur = self.parent(s);
        }
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).h_nr_running += 1;
            if self.cfs_rq_throttled(q) {
                return false;
            }
            self.update_load_avg(s, true);
            self.update_cfs_shares(q);
            cur = self.parent(s);
        }
        true
    }

    /// `dequeue_task_fair` (4.4 fair.c): dequeue up the hierarchy while the
    /// parent's queue becomes empty; a sleeping task makes its group the `next`
    /// buddy of the level above, to finish the group's slice.
    fn dequeue_task(&mut self, se: EntityId, mut flags: u32) -> bool {
        if self.model.is_eevdf() {
            return self.eevdf_dequeue_task(se, flags);
        }
        let task_sleep = flags & DEQUEUE_SLEEP != 0;
        let mut cur = Some(se);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.dequeue_entity(q, s, flags);
            // End evaluation on encountering a throttled cfs_rq.
            if self.cfs_rq_throttled(q) {
                break;
            }
            self.rq_mut(q).h_nr_running -= 1;
            if self.rq(q).load.weight != 0 {
                // Don't dequeue the parent: it has other entities besides us.
                let parent = self.parent(s);
                if task_sleep
                    && let Some(p) = parent
                    && !self.throttled_hierarchy(q)
                {
                    self.set_next_buddy(p);
                }
                cur = parent;
                break;
            }
            flags |= DEQUEUE_SLEEP;
            cur = self.parent(s);
        }
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.rq_mut(q).h_nr_running -= 1;
            if self.cfs_rq_throttled(q) {
                break;
            }
            self.update_load_avg(s, true);
            self.update_cfs_shares(q);
            cur = self.parent(s);
        }
        true
    }

    /// `pick_next_task_fair` (4.4 fair.c, `CONFIG_FAIR_GROUP_SCHED` path when the
    /// previous task was fair, the `simple:` path otherwise). When the same task
    /// is picked again nothing is put or set, so its slice is not restarted.
    fn pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<EntityId> {
        if self.model.is_eevdf() {
            return self.eevdf_pick_next_task(root, prev);
        }
        if self.rq(root).nr_running == 0 {
            // pick_next_task_idle puts prev.
            if let Some(p) = prev {
                self.put_prev_task(p);
            }
            return None;
        }
        let Some(prev) = prev else {
            // simple: put_prev_task (nothing fair to put) and pick top-down.
            return Some(self.pick_simple(root));
        };
        let mut q = root;
        let p = loop {
            let mut curr = self.rq(q).curr;
            if let Some(c) = curr {
                if self.se(c).on_rq {
                    self.update_curr(q);
                } else {
                    curr = None;
                }
                // This call to check_cfs_rq_runtime() will do the throttle and
                // dequeue its entity in the parent(s); then `simple:`.
                if self.check_cfs_rq_runtime(q) {
                    // simple: put_prev_task, then pick from the root; with
                    // nothing left, goto idle (pick_next_task_idle puts prev
                    // all the same; a put that throttles more ends here too).
                    self.put_prev_task(prev);
                    if self.rq(root).nr_running == 0 {
                        return None;
                    }
                    return Some(self.pick_simple(root));
                }
            }
            let se = self.pick_next_entity(q, curr);
            match self.se(se).my_q {
                Some(child) => q = child,
                None => break se,
            }
        };
        if p != prev {
            self.switch_path(p, prev, Cfs::put_prev_entity, Cfs::set_next_entity);
        }
        Some(p)
    }

    /// `put_prev_task_fair` (4.4 fair.c): put every level of the path.
    fn put_prev_task(&mut self, prev: EntityId) {
        if self.model.is_eevdf() {
            return self.eevdf_put_prev_task(prev);
        }
        let mut cur = Some(prev);
        while let Some(s) = cur {
            self.put_prev_entity(self.cfs_rq_of(s), s);
            cur = self.parent(s);
        }
    }

    /// `task_tick_fair` (4.4 fair.c): `entity_tick` at every level of the running
    /// task's path. Returns true to resched.
    fn task_tick(&mut self, curr: EntityId, queued: bool, hrtick_active: bool) -> bool {
        if self.model.is_eevdf() {
            return self.eevdf_task_tick(curr, queued);
        }
        let mut resched = false;
        let mut cur = Some(curr);
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            resched |= self.entity_tick(q, s, queued, hrtick_active);
            cur = self.parent(s);
        }
        resched
    }

    /// The model's wake-up preemption check (4.4 `check_preempt_wakeup`
    /// below, 6.x `check_preempt_wakeup_fair`). `need_resched` is whether the
    /// CPU already has a resched pending. Returns true to resched; the rule
    /// that decided is left in `wakeup_verdict`.
    fn wakeup_preempt(&mut self, curr: EntityId, woken: EntityId, wake_flags: u32, need_resched: bool) -> bool {
        self.wakeup_group_level = false;
        let verdict = if self.model.is_eevdf() {
            self.check_preempt_wakeup_fair(curr, woken, wake_flags, need_resched)
        } else {
            self.check_preempt_wakeup(curr, woken, wake_flags, need_resched)
        };
        self.wakeup_verdict = verdict;
        verdict.preempts()
    }
}

impl Cfs {
    /// `check_preempt_wakeup` (4.4 fair.c), with the rule that decided.
    fn check_preempt_wakeup(
        &mut self,
        curr: EntityId,
        woken: EntityId,
        wake_flags: u32,
        need_resched: bool,
    ) -> WakeupVerdict {
        if curr == woken {
            return WakeupVerdict::NotChecked;
        }
        // An enqueue that led to a throttle: saves work and a false next buddy.
        if self.throttled_hierarchy(self.cfs_rq_of(woken)) {
            return WakeupVerdict::Throttled;
        }
        let curr_q = self.cfs_rq_of(curr);
        let scale = u64::from(self.rq(curr_q).nr_running) >= self.tunables.sched_nr_latency;
        let mut next_buddy_marked = false;
        if self.features.next_buddy && scale && wake_flags & WF_FORK == 0 {
            self.set_next_buddy(woken);
            next_buddy_marked = true;
        }
        // We can come here with TIF_NEED_RESCHED already set from a new task's wakeup.
        if need_resched {
            return WakeupVerdict::ReschedPending;
        }
        let curr_policy = self.se(curr).policy;
        let woken_policy = self.se(woken).policy;
        // `se` as the kernel's code leaves it: matched to the woken entity's level.
        let (se, verdict) = if curr_policy == Policy::Idle && woken_policy != Policy::Idle {
            // Idle tasks are by definition preempted by non-idle tasks.
            (curr, WakeupVerdict::CurrIdle)
        } else if woken_policy != Policy::Normal || !self.features.wakeup_preemption {
            // Batch and idle tasks do not preempt; their preemption is tick-driven.
            return WakeupVerdict::NoWakeupPreemption;
        } else {
            let (se, pse) = self.find_matching_se(curr, woken);
            self.wakeup_group_level = pse != woken;
            self.update_curr(self.cfs_rq_of(se));
            match self.wakeup_preempt_entity(se, pse) {
                1 => {}
                0 => return WakeupVerdict::WithinGranularity,
                _ => return WakeupVerdict::NotBehind,
            }
            // Bias pick_next to pick the entity that triggers this preemption.
            if !next_buddy_marked {
                self.set_next_buddy(pse);
            }
            (se, WakeupVerdict::BeyondGranularity)
        };
        // preempt: only set the backward buddy when the current entity is still queued.
        if self.features.last_buddy && scale && self.se(se).on_rq && self.se(se).is_task() {
            self.set_last_buddy(se);
        }
        verdict
    }
}
