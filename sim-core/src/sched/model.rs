//! The kernel versions this build models, as data (`[kernel] version`).
//!
//! Each version is one table, a `KernelRules` constant, of named rules and
//! defaults: the fair class it runs, the timeline's key, the slice rules,
//! the bandwidth rules, the default features, the elevators, the tunables it
//! has. Code elsewhere asks a rule by name (`model.rules().delay_dequeue`),
//! as the kernel asks `sched_feat()`; it never compares versions. Adding a
//! version is a new table here (and its variant). The model is chosen once,
//! when the simulation is built.

use super::balance::linux6x::{Balance6xRules, SMP_FEATURES, SMP_FEATURES_66};
pub use super::model_smp::{BALANCE_66, BALANCE_612, BALANCE_618, PELT_66, PELT_612, PELT_618};
pub use super::pelt6x::{Pelt6xRules, UtilEstDelayed};
use super::features::{EevdfFeatures, SchedFeatures};
pub use super::wakeup::WakeupVerdict;

/// A modelled kernel version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KernelModel {
    /// Linux 4.4: the CFS fair class (`kernel/sched/fair.c` of 4.4), 4.4 SMP.
    Linux44,
    /// Linux 6.6 (read from 6.6.9): EEVDF, the tree keyed by vruntime.
    Linux66,
    /// Linux 6.12: EEVDF keyed by deadline, DELAY_DEQUEUE, PREEMPT_SHORT, custom slices.
    Linux612,
    /// Linux 6.18 (read from 6.18.2): as 6.12, with the 0.70 ms base slice,
    /// slice protection through `vprot`, PICK_BUDDY and lazy rescheduling.
    Linux618,
}

/// The newest model: what a scenario without `[kernel] version` runs under.
impl Default for KernelModel {
    fn default() -> Self {
        KernelModel::LATEST
    }
}

/// `normalized_sysctl_sched_base_slice` (6.6 and 6.12 fair.c:78/:76): 0.75 ms.
pub const BASE_SLICE_NS: u64 = 750_000;
/// The same in 6.18 (fair.c:79): 0.70 ms.
pub const BASE_SLICE_NS_618: u64 = 700_000;

/// Which fair class a version has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairClassKind {
    /// CFS as in 4.4 fair.c: vruntime, `sched_slice`, wakeup granularity.
    Cfs,
    /// EEVDF (6.6+): lag, eligibility and virtual deadlines.
    Eevdf,
}

/// What orders a queue's timeline (`entity_before`, `__entity_less`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeKey {
    /// By vruntime (4.4; 6.6's EEVDF tree, augmented with `min_deadline`,
    /// whose `pick_eevdf` falls back to the leftmost).
    Vruntime,
    /// By virtual deadline (6.12+, augmented with `min_vruntime`/`min_slice`:
    /// `__pick_eevdf` takes the first eligible entity).
    Deadline,
}

/// How a reschedule asked by the fair class is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resched {
    /// `resched_curr`: at the next preemption point.
    Immediate,
    /// `resched_curr_lazy` (6.18 PREEMPT_LAZY): at the next return to user
    /// space or tick. Every modelled task runs in user space, so this lands
    /// at the same points as `Immediate` (eevdf.rs says why).
    Lazy,
}

/// Where EEVDF asks for the reschedule at the end of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceEnd {
    /// 6.6 `update_deadline` reschedules itself (when the queue has company).
    InUpdateDeadline,
    /// 6.12+ `update_curr` reschedules after `update_deadline` said the
    /// request is used up (or the slice protection ran out).
    InUpdateCurr,
}

/// How EEVDF protects the running entity from being picked away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceProtection {
    /// 4.4: none (the class has no RUN_TO_PARITY).
    None,
    /// 6.6/6.12 RUN_TO_PARITY: the deadline is stashed in `vlag` at
    /// `set_next_entity`; curr is kept while `vlag == deadline`.
    ParityMarker,
    /// 6.18: `set_protect_slice` gives curr a window up to `vprot`.
    Vprot,
}

/// Whether an entity keeps its deadline relative across a dequeue
/// (`se->rel_deadline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelDeadline {
    /// 4.4, 6.6: no such field.
    None,
    /// 6.12: `place_entity` honours it under PLACE_REL_DEADLINE only.
    Feature,
    /// 6.18: `place_entity` always honours it (`reweight_entity` sets it too).
    Always,
}

/// How EEVDF reweights a queued entity (`reweight_entity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reweight {
    /// 6.6/6.12 `reweight_eevdf`: rescale lag and deadline around V;
    /// `clamp_lag` (6.12) clamps the lag first as `entity_lag` does.
    Rescale { clamp_lag: bool },
    /// 6.18: save lag and relative deadline, reweight, place again.
    Replace,
}

/// How a waking entity with a shorter slice may preempt (PREEMPT_SHORT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptShort {
    /// 4.4, 6.6: no such rule (6.6's `check_preempt_wakeup` structure).
    None,
    /// 6.12 `do_preempt_short`: cancels curr's RUN_TO_PARITY marker.
    CancelParity,
    /// 6.18: `pick_eevdf` without protection, then `cancel_protect_slice`
    /// or `update_protect_slice`.
    Unprotect,
}

/// Where `pick_next_task_fair` checks bandwidth runtime on its way down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickThrottle {
    /// 4.4, 6.6: levels with a curr; a throttle takes the `simple:` path.
    Simple,
    /// 6.12+ `pick_task_fair`: every level, starting over after a throttle.
    EveryLevel,
}

/// What EEVDF's `yield_task_fair` does to an eligible curr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YieldRule {
    /// 6.6/6.12: the deadline moves one vslice on.
    Deadline,
    /// 6.18: it gives up the rest of its request (vruntime = deadline).
    Forfeit,
}

/// The elevator a device gets when the scenario names none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultElevator {
    /// `CONFIG_DEFAULT_IOSCHED` (4.4: cfq).
    Fixed(&'static str),
    /// `elevator_get_default` / `elevator_set_default` (6.x): mq-deadline on
    /// a single hardware queue, else none.
    ByHwQueues,
}

/// Which SMP placement and balancing policy a version has
/// (`sched/balance/`), with the 6.x policy's per-version rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancerKind {
    /// 4.4 fair.c's SMP half (`cpu_load[]`, `wake_affine` with
    /// `effective_load`, the pre-5.5 `load_balance`).
    Linux44,
    /// 6.x fair.c's SMP half, with this version's rules.
    Linux6x(Balance6xRules),
}

/// Which load tracking (PELT) a version keeps: 4.4 fair.c's or 6.x's
/// pelt.c with fair.c's propagation, chosen once when the fair class is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeltKind {
    /// 4.4 fair.c `__update_load_avg`, `runnable_load_avg` (`pelt.rs`, `fair_pelt44.rs`).
    Linux44,
    /// 6.x pelt.c and fair.c (`pelt6x.rs`, `fair_pelt6x.rs`): load, runnable and
    /// util over `get_pelt_divider`, group propagation, util_est; this version's rules.
    Linux6x(Pelt6xRules),
}

/// One kernel version's rules and defaults: the version table.
#[derive(Clone, Copy, Debug)]
pub struct KernelRules {
    /// As `[kernel] version` spells it.
    pub version: &'static str,
    pub fair_class: FairClassKind,
    /// The SMP placement and balancing policy.
    pub balancer: BalancerKind,
    /// Load tracking: 4.4's or 6.x's (with its rules).
    pub pelt: PeltKind,
    pub tree_key: TreeKey,
    pub resched: Resched,
    pub slice_end: SliceEnd,
    pub slice_protection: SliceProtection,
    /// `sched_attr.sched_runtime` slices (6.12+): kept by `update_deadline`
    /// and `place_entity`, pushed up to group entities.
    pub custom_slices: bool,
    /// DELAY_DEQUEUE exists (6.12+): a sleeping ineligible entity stays queued.
    pub delay_dequeue: bool,
    /// 6.18: a delayed dequeue clears every buddy (`clear_buddies`); 6.12
    /// clears only `next`.
    pub delay_clears_buddies: bool,
    /// `wake_up_new_task` enqueues with ENQUEUE_INITIAL (6.12+).
    pub initial_enqueue: bool,
    /// `task_fork_fair` runs `update_curr` (4.4, 6.6; 6.12+ places at enqueue only).
    pub fork_updates_curr: bool,
    /// `pick_eevdf` takes a lone entity without testing eligibility (6.12+).
    pub pick_alone: bool,
    /// `place_entity` applies lag only when `vlag != 0` (6.18).
    pub place_needs_lag: bool,
    pub rel_deadline: RelDeadline,
    pub reweight: Reweight,
    /// The buddy `pick_next_entity` honours is PICK_BUDDY (6.18), not NEXT_BUDDY.
    pub pick_buddy: bool,
    pub pick_throttle: PickThrottle,
    /// A group entity's new slice refreshes the tree's `min_slice`, and a
    /// delayed group entity passes its queue's shortest slice up (6.18).
    pub group_slice_refresh: bool,
    /// A delayed wakee is not made the next buddy (6.18).
    pub next_buddy_skips_delayed: bool,
    /// `update_cfs_group` leaves an empty group's weight alone ("preserve
    /// its weight. This matters for DELAY_DEQUEUE", 6.18.0 fair.c:3957).
    pub empty_group_keeps_weight: bool,
    pub preempt_short: PreemptShort,
    pub yield_rule: YieldRule,
    /// `normalized_sysctl_sched_base_slice` at boot (EEVDF; unused by 4.4).
    pub base_slice_ns: u64,
    /// The bandwidth rules a scenario gets unless it names others.
    pub bandwidth: BandwidthRules,
    /// The RT and deadline classes: throttling, the fair server, DL checks.
    pub rt: super::model_rt::RtRules,
    /// 4.4 `features.h` defaults (read by the CFS class only).
    pub sched_features: SchedFeatures,
    /// EEVDF `features.h` defaults and the names this version has (4.4
    /// carries 6.6's, which its class never reads).
    pub eevdf_features: EevdfFeatures,
    pub eevdf_feature_names: &'static [&'static str],
    /// The `features.h` bits of its SMP half (none a switch here; named in refusals).
    pub balancer_features: &'static [&'static str],
    /// The `[cfs]` tunables this version has.
    pub tunables: &'static [&'static str],
    /// Where a running kernel keeps them and `sched_features`.
    pub tunables_at: TunablesAt,
    /// The elevators it has, as `/sys/block/<dev>/queue/scheduler` names them.
    pub elevators: &'static [&'static str],
    pub default_elevator: DefaultElevator,
}

/// Where the fair tunables and `sched_features` live on a running kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunablesAt {
    /// 4.4: sysctls in /proc/sys/kernel (kernel/sysctl.c under
    /// CONFIG_SCHED_DEBUG: `sched_latency_ns`, …) and
    /// /sys/kernel/debug/sched_features (4.4 core.c, `sched_init_debug`).
    ProcSysKernel,
    /// 5.13+ ("sched: Move SCHED_DEBUG sysctl to debugfs"): debugfs
    /// /sys/kernel/debug/sched/ (`base_slice_ns`, `features`; 6.x debug.c,
    /// `sched_init_debug`).
    DebugfsSched,
}

const CFS_TUNABLES: &[&str] = &["sched_latency_ns", "sched_min_granularity_ns", "sched_wakeup_granularity_ns"];
const EEVDF_TUNABLES: &[&str] = &["base_slice_ns"];
/// 4.4 has the legacy single-queue elevators (block/Kconfig.iosched: noop,
/// deadline, cfq); the legacy block layer and its elevators were removed in
/// 5.0 (f382fb0bcef4), so 6.x has only the blk-mq ones.
const LEGACY_ELEVATORS: &[&str] = &["noop", "deadline", "cfq"];
const MQ_ELEVATORS: &[&str] = &["none", "mq-deadline", "kyber", "bfq"];

const FEATURES_66: &[&str] =
    &["PLACE_LAG", "PLACE_DEADLINE_INITIAL", "RUN_TO_PARITY", "NEXT_BUDDY", "WAKEUP_PREEMPTION", "HRTICK"];
const FEATURES_612: &[&str] = &[
    "PLACE_LAG",
    "PLACE_DEADLINE_INITIAL",
    "PLACE_REL_DEADLINE",
    "RUN_TO_PARITY",
    "PREEMPT_SHORT",
    "NEXT_BUDDY",
    "DELAY_DEQUEUE",
    "DELAY_ZERO",
    "WAKEUP_PREEMPTION",
    "HRTICK",
];

/// 6.18 has every EEVDF feature modelled.
const FEATURES_618: &[&str] = &EevdfFeatures::ALL_NAMES;


/// 6.6 `features.h` defaults (the 6.12 features off).
const EEVDF_DEFAULTS_66: EevdfFeatures = EevdfFeatures {
    place_lag: true,
    place_deadline_initial: true,
    place_rel_deadline: false,
    run_to_parity: true,
    preempt_short: false,
    next_buddy: false,
    pick_buddy: false,
    delay_dequeue: false,
    delay_zero: false,
    wakeup_preemption: true,
    hrtick: false,
};

/// Linux 6.6 (6.6.9 fair.c).
pub const LINUX_66: KernelRules = KernelRules {
    rt: super::model_rt::RT_66,
    version: "6.6",
    fair_class: FairClassKind::Eevdf,
    balancer: BalancerKind::Linux6x(BALANCE_66),
    pelt: PeltKind::Linux6x(PELT_66),
    tree_key: TreeKey::Vruntime,
    resched: Resched::Immediate,
    slice_end: SliceEnd::InUpdateDeadline,
    slice_protection: SliceProtection::ParityMarker,
    custom_slices: false,
    delay_dequeue: false,
    delay_clears_buddies: false,
    initial_enqueue: false,
    fork_updates_curr: true,
    pick_alone: false,
    place_needs_lag: false,
    rel_deadline: RelDeadline::None,
    reweight: Reweight::Rescale { clamp_lag: false },
    pick_buddy: false,
    pick_throttle: PickThrottle::Simple,
    group_slice_refresh: false,
    next_buddy_skips_delayed: false,
    empty_group_keeps_weight: false,
    preempt_short: PreemptShort::None,
    yield_rule: YieldRule::Deadline,
    base_slice_ns: BASE_SLICE_NS,
    bandwidth: BandwidthRules::Linux66,
    sched_features: SchedFeatures::DEFAULT,
    eevdf_features: EEVDF_DEFAULTS_66,
    eevdf_feature_names: FEATURES_66,
    balancer_features: SMP_FEATURES_66,
    tunables: EEVDF_TUNABLES,
    tunables_at: TunablesAt::DebugfsSched,
    elevators: MQ_ELEVATORS,
    default_elevator: DefaultElevator::ByHwQueues,
};

/// Linux 4.4 (4.4 fair.c, CFS). The EEVDF rows are 6.6's and unused.
pub const LINUX_44: KernelRules = KernelRules {
    rt: super::model_rt::RT_44,
    version: "4.4",
    fair_class: FairClassKind::Cfs,
    balancer: BalancerKind::Linux44,
    pelt: PeltKind::Linux44,
    tree_key: TreeKey::Vruntime,
    slice_protection: SliceProtection::None,
    bandwidth: BandwidthRules::Linux44,
    tunables: CFS_TUNABLES,
    tunables_at: TunablesAt::ProcSysKernel,
    balancer_features: super::balance::linux44::SMP_FEATURES,
    elevators: LEGACY_ELEVATORS,
    default_elevator: DefaultElevator::Fixed("cfq"),
    ..LINUX_66
};

/// Linux 6.12 (6.12.0 fair.c): the tree by deadline, DELAY_DEQUEUE,
/// PREEMPT_SHORT, custom slices.
pub const LINUX_612: KernelRules = KernelRules {
    rt: super::model_rt::RT_612,
    version: "6.12",
    balancer: BalancerKind::Linux6x(BALANCE_612),
    pelt: PeltKind::Linux6x(PELT_612),
    tree_key: TreeKey::Deadline,
    slice_end: SliceEnd::InUpdateCurr,
    custom_slices: true,
    delay_dequeue: true,
    initial_enqueue: true,
    fork_updates_curr: false,
    pick_alone: true,
    rel_deadline: RelDeadline::Feature,
    reweight: Reweight::Rescale { clamp_lag: true },
    pick_throttle: PickThrottle::EveryLevel,
    preempt_short: PreemptShort::CancelParity,
    eevdf_features: EevdfFeatures {
        place_rel_deadline: true,
        preempt_short: true,
        delay_dequeue: true,
        delay_zero: true,
        ..EEVDF_DEFAULTS_66
    },
    eevdf_feature_names: FEATURES_612,
    balancer_features: SMP_FEATURES,
    ..LINUX_66
};

/// Linux 6.18 (6.18.2 fair.c): 0.70 ms base slice, `vprot`, PICK_BUDDY,
/// lazy rescheduling.
pub const LINUX_618: KernelRules = KernelRules {
    rt: super::model_rt::RT_618,
    version: "6.18",
    balancer: BalancerKind::Linux6x(BALANCE_618),
    pelt: PeltKind::Linux6x(PELT_618),
    resched: Resched::Lazy,
    slice_protection: SliceProtection::Vprot,
    delay_clears_buddies: true,
    place_needs_lag: true,
    rel_deadline: RelDeadline::Always,
    reweight: Reweight::Replace,
    pick_buddy: true,
    group_slice_refresh: true,
    next_buddy_skips_delayed: true,
    empty_group_keeps_weight: true,
    preempt_short: PreemptShort::Unprotect,
    yield_rule: YieldRule::Forfeit,
    base_slice_ns: BASE_SLICE_NS_618,
    eevdf_features: EevdfFeatures { pick_buddy: true, ..LINUX_612.eevdf_features },
    eevdf_feature_names: FEATURES_618,
    ..LINUX_612
};

impl KernelModel {
    /// Every model this build has, as `[kernel] version` spells it.
    pub const ALL: [KernelModel; 4] =
        [KernelModel::Linux44, KernelModel::Linux66, KernelModel::Linux612, KernelModel::Linux618];

    /// The default for scenarios that do not say.
    pub const LATEST: KernelModel = KernelModel::Linux618;

    /// This version's table of rules and defaults.
    pub const fn rules(self) -> &'static KernelRules {
        match self {
            KernelModel::Linux44 => &LINUX_44,
            KernelModel::Linux66 => &LINUX_66,
            KernelModel::Linux612 => &LINUX_612,
            KernelModel::Linux618 => &LINUX_618,
        }
    }

    /// The version as `[kernel] version` spells it.
    pub fn version(self) -> &'static str {
        self.rules().version
    }

    /// The fair class it models.
    pub fn fair_class(self) -> &'static str {
        match self.rules().fair_class {
            FairClassKind::Cfs => "cfs",
            FairClassKind::Eevdf => "eevdf",
        }
    }

    /// `linux-4.4-cfs`: how reports and `validate` name the model.
    pub fn label(self) -> String {
        format!("linux-{}-{}", self.version(), self.fair_class())
    }

    /// The header line of a text report.
    pub fn describe(self) -> String {
        let class = match self.rules().fair_class {
            FairClassKind::Cfs => "CFS",
            FairClassKind::Eevdf => "EEVDF",
        };
        format!("Linux {} ({class})", self.version())
    }

    /// The formula of `one_hog_bound_ns` (at the end of this file) under this model,
    /// and the kernel rule behind it, for reports.
    pub fn one_hog_bound_rule(self) -> &'static str {
        match self.rules().fair_class {
            FairClassKind::Eevdf => {
                "base_slice + 2 x tick (curr keeps the CPU for its protected slice, RUN_TO_PARITY; \
                 the slice end is noticed at a tick)"
            }
            FairClassKind::Cfs => {
                "sched_latency/2 + 2 x tick (the sleeper credit of place_entity; preemption noticed at a tick)"
            }
        }
    }

    /// The formula alone (`one_hog_bound_rule` without its reason).
    pub fn one_hog_bound_formula(self) -> &'static str {
        match self.rules().fair_class {
            FairClassKind::Eevdf => "base_slice + 2 x tick",
            FairClassKind::Cfs => "sched_latency/2 + 2 x tick",
        }
    }

    /// What decides between a waking task and the running one under this
    /// model, where both sit in task groups: the group entities compete, with
    /// their weights (4.4: the vruntime gap against the wakeup granularity;
    /// EEVDF: eligibility and virtual deadlines).
    pub fn group_preemption_rule(self) -> &'static str {
        match self.rules().fair_class {
            FairClassKind::Eevdf => {
                "eligibility (lag) and virtual deadlines are compared between the group entities, their \
                 vslices scaled by the group entity's weight"
            }
            FairClassKind::Cfs => {
                "the sleeper credit and the wakeup granularity apply to the group entity, scaled by its weight"
            }
        }
    }

    pub fn parse(version: &str) -> Option<KernelModel> {
        Self::ALL.into_iter().find(|m| m.version() == version)
    }

    /// The model for a running kernel's release (`uname -r`, perf's `os
    /// release` header: `6.18.44-fc-v669`): the newest model not newer than
    /// it, so 6.8 runs as 6.6 and 5.15 as 4.4 (CFS until 6.6); None when the
    /// text does not start with `MAJOR.MINOR`.
    pub fn for_release(release: &str) -> Option<KernelModel> {
        let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next()?.parse().ok()?;
        let key = |m: KernelModel| {
            let (a, b) = m.version().split_once('.').unwrap_or(("0", "0"));
            (a.parse::<u32>().unwrap_or(0), b.parse::<u32>().unwrap_or(0))
        };
        let best = Self::ALL.into_iter().filter(|&m| key(m) <= (major, minor)).max_by_key(|&m| key(m));
        Some(best.unwrap_or(KernelModel::ALL[0]))
    }

    /// The fair-class settings of this model: the `[cfs]` tunables (4.4
    /// has sched_latency_ns and the granularities, EEVDF base_slice_ns) and
    /// the `[features]` bits (`SchedFeatures::NAMES` on 4.4,
    /// `EevdfFeatures::names` on 6.x). True when `key` (as `--set` spells
    /// it: `cfs.sched_latency_ns`, `cfs.base.base_slice_ns`,
    /// `features.HRTICK`) names one that another model has and this one
    /// lacks, the keys validation refuses under this model
    /// (`scenario::validate::fair_settings`) while accepting them under
    /// another; likewise `machine.clusters_per_socket`, which only the 6.x
    /// topology has (`has_cluster_level`), `fair_server.runtime` and
    /// `fair_server.period`, which only a model with the fair server has
    /// (6.12+, `RtRules::fair_server`; `scenario::rt::fair_server` refuses
    /// them elsewhere), and `rt.rt_group_sched`, which matters only where RT
    /// throttling needs `CONFIG_RT_GROUP_SCHED` (6.12+; 4.4 and 6.6 refuse
    /// `true`). False for every other key, a misspelt one included (that
    /// stays an error).
    pub fn lacks_setting(self, key: &str) -> bool {
        let segments: Vec<&str> = key.split('.').map(|s| s.trim().trim_matches('"')).collect();
        let all_tunables = [CFS_TUNABLES, EEVDF_TUNABLES].concat();
        let has = |m: KernelModel, segments: &[&str]| {
            let r = m.rules();
            match *segments {
                ["cfs", name] | ["cfs", "base", name] if all_tunables.contains(&name) => r.tunables.contains(&name),
                ["features", name] => match r.fair_class {
                    FairClassKind::Eevdf => r.eevdf_feature_names.contains(&name),
                    FairClassKind::Cfs => SchedFeatures::NAMES.contains(&name),
                },
                ["machine", "clusters_per_socket"] => m.has_cluster_level(),
                ["fair_server", "runtime" | "period"] => r.rt.fair_server.is_some(),
                ["rt", "rt_group_sched"] => r.rt.throttling == super::model_rt::RtThrottling::GroupSchedOnly,
                _ => true,
            }
        };
        !has(self, &segments) && Self::ALL.into_iter().any(|m| has(m, &segments))
    }

    /// The I/O schedulers (elevators) this kernel has, as
    /// `/sys/block/<dev>/queue/scheduler` names them (see `LEGACY_ELEVATORS`).
    pub fn elevators(self) -> &'static [&'static str] {
        self.rules().elevators
    }

    /// The elevator a device gets when the scenario names none.
    /// - 4.4: `CONFIG_DEFAULT_IOSCHED`, "cfq" (block/Kconfig.iosched: DEFAULT_CFQ
    ///   is the default choice; `elevator_init` falls back to it).
    /// - 6.6, 6.12: `elevator_get_default` (block/elevator.c), 6.18:
    ///   `elevator_set_default` (the same rule): mq-deadline when the queue has
    ///   one hardware queue or its tags are shared, else none; a driver with
    ///   `BLK_MQ_F_NO_SCHED_BY_DEFAULT` gets none. No modelled device shares
    ///   tags or sets that flag, so `nr_hw_queues` alone decides.
    pub fn default_elevator(self, nr_hw_queues: u64) -> &'static str {
        match self.rules().default_elevator {
            DefaultElevator::Fixed(name) => name,
            DefaultElevator::ByHwQueues => {
                if nr_hw_queues == 1 {
                    "mq-deadline"
                } else {
                    "none"
                }
            }
        }
    }

    /// Why an elevator this kernel lacks is missing, for error messages.
    pub fn elevator_history(self, elevator: &str) -> Option<&'static str> {
        let legacy = LEGACY_ELEVATORS.contains(&elevator);
        let mq = MQ_ELEVATORS.contains(&elevator);
        let has = self.elevators().contains(&elevator);
        if mq && !has {
            Some(
                "blk-mq schedulers came later (mq-deadline in 4.11, kyber and bfq in 4.12; this model's `none` \
                 is the 6.x blk-mq path)",
            )
        } else if legacy && !has {
            Some("the legacy single-queue elevators (noop, deadline, cfq) were removed in 5.0")
        } else {
            None
        }
    }

    /// `normalized_sysctl_sched_base_slice` at boot (`BASE_SLICE_NS*`);
    /// 4.4 has no base slice, and its value here is unused.
    pub fn normalized_base_slice_ns(self) -> u64 {
        self.rules().base_slice_ns
    }

    /// `"4.4", "6.6", …`: the versions accepted.
    pub fn allowed() -> String {
        Self::ALL.iter().map(|m| format!("\"{}\"", m.version())).collect::<Vec<_>>().join(", ")
    }
}

/// Whose bandwidth-control code a run follows (`[kernel] cfs_bandwidth`;
/// the version table gives each kernel's own, and a 4.4 run may pick a
/// later CFS-era set). Code asks the named predicates below, never the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BandwidthRules {
    /// 4.4.155 as read.
    Linux44,
    /// 4.18 to 5.3: `expires_seq` (512ac999d275), tail insertion (4.19).
    Linux418,
    /// 5.4.69+ to 5.13: no expiry (de53fd7aedb1), 1 ns re-check (e98fa02c4f2e).
    Linux54,
    /// 5.14 to 6.5: burst (f4183717b370).
    Linux514,
    /// 6.6 and later: burst statistics, random timer phase.
    Linux66,
}

/// How per-CPU runtime expires (`expire_cfs_rq_runtime`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeExpiry {
    /// 4.4: the local deadline is compared with the pool's (`runtime_expires`).
    ByDeadline,
    /// 4.18 to 5.3: the period sequence numbers are compared (`expires_seq`).
    BySeq,
    /// 5.4+: runtime does not expire.
    Never,
}

impl BandwidthRules {
    pub const ALL: [BandwidthRules; 5] = [
        BandwidthRules::Linux44,
        BandwidthRules::Linux418,
        BandwidthRules::Linux54,
        BandwidthRules::Linux514,
        BandwidthRules::Linux66,
    ];

    /// The version as `[kernel] cfs_bandwidth` spells it.
    pub fn version(self) -> &'static str {
        match self {
            BandwidthRules::Linux44 => "4.4",
            BandwidthRules::Linux418 => "4.18",
            BandwidthRules::Linux54 => "5.4",
            BandwidthRules::Linux514 => "5.14",
            BandwidthRules::Linux66 => "6.6",
        }
    }

    pub fn parse(s: &str) -> Option<BandwidthRules> {
        Self::ALL.into_iter().find(|r| r.version() == s)
    }

    /// The rules of a kernel model's own version.
    pub fn of_model(model: KernelModel) -> BandwidthRules {
        model.rules().bandwidth
    }

    /// How per-CPU runtime expires.
    pub fn expiry(self) -> RuntimeExpiry {
        match self {
            BandwidthRules::Linux44 => RuntimeExpiry::ByDeadline,
            BandwidthRules::Linux418 => RuntimeExpiry::BySeq,
            _ => RuntimeExpiry::Never,
        }
    }

    /// Per-CPU runtime expires (4.4 to 5.3).
    pub fn expires(self) -> bool {
        self.expiry() != RuntimeExpiry::Never
    }

    /// 5.4+: 1 ns re-check before throttling, no assign while throttled,
    /// `slack_started`.
    pub fn v54(self) -> bool {
        self >= BandwidthRules::Linux54
    }

    /// Throttled queues join the tail of the list, so distribution serves
    /// the oldest first (4.19 baa9be4ffb55; 4.4 adds at the head).
    pub fn tail_insert(self) -> bool {
        self >= BandwidthRules::Linux418
    }

    /// `cpu.max.burst` exists (5.14+).
    pub fn has_burst(self) -> bool {
        self >= BandwidthRules::Linux514
    }

    /// 6.6+: `nr_bursts`/`burst_time` (9525616d056e), `throttled_clock`
    /// only when the queue holds entities, and the period timer armed at a
    /// random phase (`init_cfs_bandwidth`).
    pub fn burst_stats(self) -> bool {
        self >= BandwidthRules::Linux66
    }

    /// The period timer starts at a random point of the default period (6.6+).
    pub fn random_period_phase(self) -> bool {
        self.burst_stats()
    }

    /// `throttled_clock` starts only once the throttled queue holds something (6.6+).
    pub fn throttled_clock_when_queued(self) -> bool {
        self.burst_stats()
    }

    /// The rule sets a scenario may choose under a CFS-era kernel (4.4 to 5.14).
    pub fn cfs_era() -> impl Iterator<Item = BandwidthRules> {
        Self::ALL.into_iter().filter(|r| !r.burst_stats())
    }
}


/// The questions the rest of the core asks a version, each answered from its
/// rule table: reports, the engine's records and validation ask these, never
/// "which version is this".
impl KernelModel {
    /// Whether the fair class is tuned by EEVDF's settings (6.6 on:
    /// `base_slice_ns` and the EEVDF feature bits) rather than 4.4's
    /// (`sched_latency_ns`, the granularities, `sched_nr_latency` and
    /// `SchedFeatures`): which settings a report names and prints.
    pub fn tuned_by_base_slice(self) -> bool {
        self.rules().tunables.contains(&"base_slice_ns")
    }

    /// Whether a task's lag and virtual deadline decide the pick (EEVDF,
    /// 6.6 on: `pick_eevdf`), so the report's history rows and the
    /// timeline's lag chart show them; under 4.4 vruntime alone decides.
    pub fn picks_by_lag_and_deadline(self) -> bool {
        self.rules().fair_class == FairClassKind::Eevdf
    }

    /// `one_hog_bound_rule` computed: the longest wake-up delay a victim
    /// should see beside one CPU hog on its CPU. CFS 4.4: its sleeper
    /// credit (half the latency, `place_entity`) plus two ticks for the
    /// preemption to be noticed. EEVDF: the hog's protected slice (one base
    /// slice: RUN_TO_PARITY keeps curr until its deadline, 6.6/6.12
    /// `pick_eevdf`, 6.18 `__pick_eevdf` with `protect_slice`) plus two
    /// ticks, the slice end being noticed by `update_curr` at a tick.
    pub fn one_hog_bound_ns(self, sched_latency_ns: u64, base_slice_ns: u64, tick_ns: u64) -> u64 {
        match self.rules().fair_class {
            FairClassKind::Eevdf => base_slice_ns + 2 * tick_ns,
            FairClassKind::Cfs => sched_latency_ns / 2 + 2 * tick_ns,
        }
    }

    /// Whether the fair class has the 4.4 CFS settings: `[cfs]`
    /// sched_latency_ns, sched_min_granularity_ns, sched_wakeup_granularity_ns
    /// and the `SchedFeatures` bits. EEVDF (6.6) removed them; it has
    /// base_slice_ns and feature bits of its own.
    pub fn has_cfs_latency_tunables(self) -> bool {
        self.rules().tunables.contains(&"sched_latency_ns")
    }

    /// The sched domains have a cluster (CLS) level a scenario may ask for: 6.x's
    /// (x86 since 5.16, CONFIG_SCHED_CLUSTER); 4.4's x86 levels are SMT, MC, DIE.
    pub fn has_cluster_level(self) -> bool {
        matches!(self.rules().balancer, BalancerKind::Linux6x(_))
    }

    /// Custom slices: a fair task's own slice through `sched_setattr`
    /// (`sched_attr.sched_runtime`), since 6.12.
    pub fn has_custom_slices(self) -> bool {
        self.rules().custom_slices
    }

    /// Whether `[kernel] cfs_bandwidth` can only name this model's own
    /// bandwidth rules (EEVDF models), rather than choose among the CFS-era
    /// ones (the 4.4 fair class: 4.4, 4.18, 5.4, 5.14).
    pub fn runs_own_bandwidth_rules(self) -> bool {
        self.rules().fair_class == FairClassKind::Eevdf
    }

    /// The newest model whose kernel has the elevator `name`, for the hint
    /// of an error naming one this model lacks.
    pub fn newest_with_elevator(name: &str) -> Option<KernelModel> {
        KernelModel::ALL.into_iter().rev().find(|m| m.elevators().contains(&name))
    }
}
