//! The fair class, chosen once: `Cfs` holds the shared state (`FairCore`,
//! `fair_core.rs`) and one of two implementations, 4.4 CFS (`cfs44.rs`) or
//! 6.x EEVDF (`eevdf.rs`, `eevdf_class.rs`), picked by the kernel model's
//! `fair_class` rule when the simulation is built. This is the
//! class-selection point: each hook matches once on the implementation and
//! runs monomorphic code from there; nothing below asks which model runs.
//!
//! The engine's generic paths reach the class only through `SchedClass` and
//! `ClassState` (`ClassChain::fair`); building, the 4.4 balancer and the
//! invariant checks read the shared state through `Deref` (`cfs.se(..)`,
//! `cfs.cfs_rqs`) behind `ClassChain::fair_internals`.

use super::bandwidth::{BandwidthSpec, ThrottleEvent, TimerRequest};
use super::cfs44::Cfs44;
use super::eevdf::{Eevdf, EevdfRead};
pub use super::fair_core::{
    DEQUEUE_MIGRATING, DEQUEUE_SLEEP, ENQUEUE_MIGRATING, ENQUEUE_WAKEUP, ENQUEUE_WAKING,
    FairConfig, FairCore, WF_FORK,
};
use super::fair_core::{Fair, FairPolicy};
use super::group::GroupLoad;
use super::model::{FairClassKind, PeltKind};
use super::model::WakeupVerdict;
use super::{ClassState, SchedClass};
use crate::cpuset::CpuSet;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId};
use std::ops::{Deref, DerefMut};

/// The fair class of the machine: the shared state and the model's implementation.
#[derive(Clone, Debug)]
pub struct Cfs {
    core: FairCore,
    class: FairImpl,
}

/// The two implementations of the fair class, with their own state.
#[derive(Clone, Debug)]
enum FairImpl {
    Cfs44(Cfs44),
    Eevdf(Eevdf),
}

/// Runs `$body` with `$f` bound to the model's `Fair` view.
macro_rules! with_fair {
    ($self:ident, $f:ident => $body:expr) => {
        match &mut $self.class {
            FairImpl::Cfs44(p) => {
                #[allow(unused_mut)]
                let mut $f = Fair { core: &mut $self.core, policy: p };
                $body
            }
            FairImpl::Eevdf(p) => {
                #[allow(unused_mut)]
                let mut $f = Fair { core: &mut $self.core, policy: p };
                $body
            }
        }
    };
}

impl Deref for Cfs {
    type Target = FairCore;
    fn deref(&self) -> &FairCore {
        &self.core
    }
}

impl DerefMut for Cfs {
    fn deref_mut(&mut self) -> &mut FairCore {
        &mut self.core
    }
}

impl Cfs {
    /// A machine of `ncpus` CPUs, each with its root run queue (`CfsRqId(cpu)`)
    /// in the root group, running the fair class the model's rules name.
    pub fn new(config: FairConfig, group_load: GroupLoad, ncpus: u16) -> Cfs {
        let kind = config.model.rules().fair_class;
        let core = FairCore::new(config, group_load, ncpus);
        // Each class's own paths call its version's load tracking directly:
        // 4.4 CFS keeps 4.4's PELT, EEVDF 6.x's.
        let class = match (kind, core.pelt) {
            (FairClassKind::Cfs, PeltKind::Linux44) => FairImpl::Cfs44(Cfs44::default()),
            (FairClassKind::Eevdf, PeltKind::Linux6x(_)) => FairImpl::Eevdf(Eevdf::default()),
            (kind, pelt) => panic!("the {kind:?} fair class has no {pelt:?} load tracking"),
        };
        let mut cfs = Cfs { core, class };
        cfs.add_queues();
        cfs
    }

    /// Gives the model state to queues created since the last call.
    fn add_queues(&mut self) {
        let n = self.core.cfs_rqs.len();
        match &mut self.class {
            FairImpl::Cfs44(p) => (p.queues()..n).for_each(|_| p.add_queue()),
            FairImpl::Eevdf(p) => (p.queues.len()..n).for_each(|_| p.add_queue()),
        }
    }

    /// `sched_create_group` (`FairCore::create_group`), with the model's
    /// state for the new queues.
    pub fn create_group(&mut self, path: String, parent: GroupId, shares: u64, cpus: &CpuSet) -> GroupId {
        let id = self.core.create_group(path, parent, shares, cpus);
        self.add_queues();
        id
    }

    /// The 4.4 implementation's view (tests and benches).
    pub fn cfs44(&mut self) -> Fair<'_, Cfs44> {
        match &mut self.class {
            FairImpl::Cfs44(p) => Fair { core: &mut self.core, policy: p },
            FairImpl::Eevdf(_) => panic!("not the 4.4 class"),
        }
    }

    /// The EEVDF implementation's view (tests).
    pub fn eevdf(&mut self) -> Fair<'_, Eevdf> {
        match &mut self.class {
            FairImpl::Eevdf(p) => Fair { core: &mut self.core, policy: p },
            FairImpl::Cfs44(_) => panic!("not the EEVDF class"),
        }
    }

    /// A migrating task's vruntime travels relative to its queue's
    /// `min_vruntime` (4.4 `task_waking_fair`/`dequeue_entity`); EEVDF keeps
    /// it absolute and places by the saved lag.
    pub fn migrates_relative_vruntime(&self) -> bool {
        matches!(self.class, FairImpl::Cfs44(_))
    }

    /// The class's own invariants (EEVDF: `eevdf_invariants` and 6.x's
    /// `pelt_invariants`; 4.4 has none beyond the engine's), for `check_invariants`.
    pub fn class_invariants(&self) -> Result<(), String> {
        match &self.class {
            FairImpl::Cfs44(_) => Ok(()),
            FairImpl::Eevdf(p) => {
                EevdfRead { core: &self.core, eevdf: p }.eevdf_invariants()?;
                self.core.pelt_invariants()
            }
        }
    }

    /// Entities in `q`'s timeline (queued, not running), for `check_invariants`.
    pub fn timeline_len(&self, q: CfsRqId) -> usize {
        match &self.class {
            FairImpl::Cfs44(p) => p.timeline_len(q),
            FairImpl::Eevdf(p) => p.queues[q.index()].tree.len(),
        }
    }

    /// `entity_lag` (EEVDF) of `se` in `q`; 4.4 has no lag (0).
    pub fn entity_lag(&self, q: CfsRqId, se: EntityId) -> i64 {
        match &self.class {
            FairImpl::Cfs44(_) => 0,
            FairImpl::Eevdf(p) => EevdfRead { core: &self.core, eevdf: p }.entity_lag(q, se),
        }
    }

    /// `tg_set_cfs_bandwidth` (`FairCore::set_cfs_bandwidth`).
    pub fn set_cfs_bandwidth(&mut self, g: GroupId, spec: BandwidthSpec, phase_ns: u64) {
        self.core.set_cfs_bandwidth(g, spec, phase_ns);
    }
}

impl SchedClass for Cfs {
    fn enqueue_task(&mut self, se: EntityId, flags: u32) -> bool {
        with_fair!(self, f => f.enqueue_task(se, flags))
    }

    fn dequeue_task(&mut self, se: EntityId, flags: u32) -> bool {
        with_fair!(self, f => f.dequeue_task(se, flags))
    }

    fn pick_next_task(&mut self, root: CfsRqId, prev: Option<EntityId>) -> Option<EntityId> {
        with_fair!(self, f => f.pick_next_task(root, prev))
    }

    fn put_prev_task(&mut self, prev: EntityId) {
        with_fair!(self, f => f.put_prev_task(prev))
    }

    fn task_tick(&mut self, curr: EntityId, queued: bool, hrtick_active: bool) -> bool {
        with_fair!(self, f => f.task_tick(curr, queued, hrtick_active))
    }

    fn wakeup_preempt(&mut self, curr: EntityId, woken: EntityId, wake_flags: u32, need_resched: bool) -> bool {
        with_fair!(self, f => f.wakeup_preempt(curr, woken, wake_flags, need_resched))
    }

    fn yield_task(&mut self, curr: EntityId, nr_running: u32) {
        with_fair!(self, f => f.yield_task(curr, nr_running))
    }

    /// `sched_fork`: `init_entity_runnable_average`, then the class's `task_fork`.
    fn task_fork(&mut self, q: CfsRqId, se: EntityId) {
        self.core.init_entity_runnable_average(se);
        with_fair!(self, f => f.task_fork(q, se))
    }

    fn task_waking(&mut self, se: EntityId) {
        with_fair!(self, f => f.task_waking(se))
    }

    fn migrate_task_rq(&mut self, se: EntityId, on_rq_migrating: bool) {
        self.core.migrate_task_rq(se, on_rq_migrating);
    }

    fn update_curr(&mut self, curr: EntityId) {
        with_fair!(self, f => SchedClass::update_curr(&mut f, curr))
    }

    fn task_dead(&mut self, se: EntityId) {
        self.core.task_dead_fair(se);
    }
}

impl ClassState for Cfs {
    fn set_task_rq(&mut self, se: EntityId, tg: GroupId, cpu: CpuId) {
        self.core.set_task_rq(se, tg, cpu);
    }

    #[inline]
    fn update_rq_clock(&mut self, now_ns: u64) {
        self.core.clock = now_ns;
    }

    fn new_task_enqueue_flags(&self) -> u32 {
        self.core.new_task_enqueue_flags()
    }

    fn post_init_entity_util_avg(&mut self, se: EntityId) {
        self.core.post_init_entity_util_avg(se);
    }

    #[inline]
    fn pop_resched(&mut self) -> Option<CpuId> {
        self.core.resched.pop()
    }

    #[inline]
    fn pop_delayed_done(&mut self) -> Option<EntityId> {
        self.core.delayed_done.pop()
    }

    fn clear_delayed_done(&mut self) {
        self.core.delayed_done.clear();
    }

    #[inline]
    fn bandwidth_used(&self) -> bool {
        self.core.bw.used
    }

    fn bandwidth_timers(&mut self) -> &mut Vec<TimerRequest> {
        &mut self.core.bw.timers
    }

    fn take_throttle_events(&mut self) -> Vec<ThrottleEvent> {
        std::mem::take(&mut self.core.bw.events)
    }

    fn bandwidth_timer_current(&self, g: GroupId, slack: bool, generation: u32) -> bool {
        self.core.bandwidth_timer_current(g, slack, generation)
    }

    fn bandwidth_timer(&mut self, g: GroupId, slack: bool, generation: u32) {
        if slack {
            with_fair!(self, f => f.cfs_slack_timer(g, generation))
        } else {
            with_fair!(self, f => f.cfs_period_timer(g, generation))
        }
    }

    #[inline]
    fn on_rq(&self, se: EntityId) -> bool {
        self.core.se(se).on_rq
    }

    #[inline]
    fn sched_delayed(&self, se: EntityId) -> bool {
        self.core.se(se).sched_delayed
    }

    #[inline]
    fn cfs_rq_of(&self, se: EntityId) -> CfsRqId {
        self.core.se(se).cfs_rq
    }

    #[inline]
    fn vruntime(&self, se: EntityId) -> i64 {
        self.core.se(se).vruntime
    }

    #[inline]
    fn min_vruntime(&self, q: CfsRqId) -> i64 {
        self.core.rq(q).min_vruntime
    }

    #[inline]
    fn nr_running(&self, q: CfsRqId) -> u32 {
        self.core.rq(q).nr_running
    }

    #[inline]
    fn throttled(&self, se: EntityId) -> bool {
        self.core.bw.used && self.core.throttled_hierarchy(self.core.se(se).cfs_rq)
    }

    fn group_is_under(&self, g: GroupId, ancestor: GroupId) -> bool {
        self.core.group_is_under(g, ancestor)
    }

    fn for_each_parent(&self, se: EntityId, mut f: impl FnMut(GroupId, u64)) {
        let mut up = self.core.se(se).parent;
        while let Some(g) = up {
            let e = self.core.se(g);
            f(self.core.rq(e.my_q.expect("a parent is a group entity")).tg, e.load.weight);
            up = e.parent;
        }
    }

    fn deadline_lag(&self, se: EntityId) -> (Option<i64>, i64) {
        let e = self.core.se(se);
        if e.on_rq { (Some(e.deadline), self.entity_lag(e.cfs_rq, se)) } else { (None, e.vlag) }
    }

    fn wakeup_verdict(&self) -> (WakeupVerdict, bool) {
        (self.core.wakeup_verdict, self.core.wakeup_group_level)
    }

    fn set_wakeup_verdict(&mut self, verdict: WakeupVerdict) {
        self.core.wakeup_verdict = verdict;
        self.core.wakeup_group_level = false;
    }

    /// The HRTICK feature of the model (off by default in every version).
    fn hrtick_enabled(&self) -> bool {
        match self.class {
            FairImpl::Cfs44(_) => self.core.features.hrtick,
            FairImpl::Eevdf(_) => self.core.features_eevdf.hrtick,
        }
    }

    fn hrtick_delay(&mut self, curr: EntityId) -> Option<i64> {
        match &mut self.class {
            FairImpl::Cfs44(p) => Fair { core: &mut self.core, policy: p }.hrtick_delay(curr),
            FairImpl::Eevdf(p) => {
                let f = Fair { core: &mut self.core, policy: p };
                let cpu = f.rq(f.cfs_rq_of(curr)).cpu;
                let root = f.root_cfs_rq(cpu);
                f.eevdf_hrtick_delay(curr, root)
            }
        }
    }

    fn hrtick_update_wanted(&mut self, curr: EntityId) -> bool {
        with_fair!(self, f => f.hrtick_update_wanted(curr))
    }
}
