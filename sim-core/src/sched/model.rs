//! Which kernel's scheduler a scenario runs under (`[kernel] version`).
//! Chosen once, when the simulation is built; one model per code path.

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

impl KernelModel {
    /// Every model this build has, as `[kernel] version` spells it.
    pub const ALL: [KernelModel; 4] =
        [KernelModel::Linux44, KernelModel::Linux66, KernelModel::Linux612, KernelModel::Linux618];

    /// The default for scenarios that do not say.
    pub const LATEST: KernelModel = KernelModel::Linux618;

    /// The version as `[kernel] version` spells it.
    pub fn version(self) -> &'static str {
        match self {
            KernelModel::Linux44 => "4.4",
            KernelModel::Linux66 => "6.6",
            KernelModel::Linux612 => "6.12",
            KernelModel::Linux618 => "6.18",
        }
    }

    /// The fair class it models.
    pub fn fair_class(self) -> &'static str {
        if self.is_eevdf() { "eevdf" } else { "cfs" }
    }

    /// The fair class is EEVDF (6.6 and later).
    pub fn is_eevdf(self) -> bool {
        self != KernelModel::Linux44
    }

    /// `linux-4.4-cfs`: how reports and `validate` name the model.
    pub fn label(self) -> String {
        format!("linux-{}-{}", self.version(), self.fair_class())
    }

    /// The header line of a text report.
    pub fn describe(self) -> String {
        match self {
            KernelModel::Linux44 => "Linux 4.4 (CFS)".to_string(),
            m => format!("Linux {} (EEVDF)", m.version()),
        }
    }

    /// The formula of `one_hog_bound_ns` (at the end of this file) under this model,
    /// and the kernel rule behind it, for reports.
    pub fn one_hog_bound_rule(self) -> &'static str {
        if self.is_eevdf() {
            "base_slice + 2 x tick (curr keeps the CPU for its protected slice, RUN_TO_PARITY; \
             the slice end is noticed at a tick)"
        } else {
            "sched_latency/2 + 2 x tick (the sleeper credit of place_entity; preemption noticed at a tick)"
        }
    }

    /// The formula alone (`one_hog_bound_rule` without its reason).
    pub fn one_hog_bound_formula(self) -> &'static str {
        if self.is_eevdf() { "base_slice + 2 x tick" } else { "sched_latency/2 + 2 x tick" }
    }

    /// What decides between a waking task and the running one under this
    /// model, where both sit in task groups: the group entities compete, with
    /// their weights (4.4: the vruntime gap against the wakeup granularity;
    /// EEVDF: eligibility and virtual deadlines).
    pub fn group_preemption_rule(self) -> &'static str {
        if self.is_eevdf() {
            "eligibility (lag) and virtual deadlines are compared between the group entities, their \
             vslices scaled by the group entity's weight"
        } else {
            "the sleeper credit and the wakeup granularity apply to the group entity, scaled by its weight"
        }
    }

    pub fn parse(version: &str) -> Option<KernelModel> {
        Self::ALL.into_iter().find(|m| m.version() == version)
    }

    /// The fair-class settings of this model: the `[cfs]` tunables (4.4
    /// has sched_latency_ns and the granularities, EEVDF base_slice_ns) and
    /// the `[features]` bits (`SchedFeatures::NAMES` on 4.4,
    /// `EevdfFeatures::names` on 6.x). True when `key` (as `--set` spells
    /// it: `cfs.sched_latency_ns`, `cfs.base.base_slice_ns`,
    /// `features.HRTICK`) names one that another model has and this one
    /// lacks, the keys validation refuses under this model
    /// (`scenario::validate::fair_settings`) while accepting them under
    /// another. False for every other key, a misspelt one included (that
    /// stays an error).
    pub fn lacks_setting(self, key: &str) -> bool {
        use super::tunables::{EevdfFeatures, SchedFeatures};
        let segments: Vec<&str> = key.split('.').map(|s| s.trim().trim_matches('"')).collect();
        let has = |m: KernelModel, segments: &[&str]| match *segments {
            ["cfs", name] | ["cfs", "base", name] => match name {
                "sched_latency_ns" | "sched_min_granularity_ns" | "sched_wakeup_granularity_ns" => !m.is_eevdf(),
                "base_slice_ns" => m.is_eevdf(),
                _ => true,
            },
            ["features", name] if m.is_eevdf() => EevdfFeatures::names(m).contains(&name),
            ["features", name] => SchedFeatures::NAMES.contains(&name),
            _ => true,
        };
        !has(self, &segments) && Self::ALL.into_iter().any(|m| has(m, &segments))
    }

    /// The I/O schedulers (elevators) this kernel has, as
    /// `/sys/block/<dev>/queue/scheduler` names them. 4.4 has the legacy
    /// single-queue ones (block/Kconfig.iosched: noop, deadline, cfq); the
    /// legacy block layer and its elevators were removed in 5.0 (f382fb0bcef4),
    /// so 6.x has only the blk-mq ones (none, mq-deadline, kyber, bfq).
    pub fn elevators(self) -> &'static [&'static str] {
        match self {
            KernelModel::Linux44 => &["noop", "deadline", "cfq"],
            KernelModel::Linux66 | KernelModel::Linux612 | KernelModel::Linux618 => {
                &["none", "mq-deadline", "kyber", "bfq"]
            }
        }
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
        match self {
            KernelModel::Linux44 => "cfq",
            KernelModel::Linux66 | KernelModel::Linux612 | KernelModel::Linux618 => {
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
        let legacy = ["noop", "deadline", "cfq"].contains(&elevator);
        let mq = ["none", "mq-deadline", "kyber", "bfq"].contains(&elevator);
        match self {
            KernelModel::Linux44 if mq => Some(
                "blk-mq schedulers came later (mq-deadline in 4.11, kyber and bfq in 4.12; this model's `none` \
                 is the 6.x blk-mq path)",
            ),
            KernelModel::Linux66 | KernelModel::Linux612 | KernelModel::Linux618 if legacy => {
                Some("the legacy single-queue elevators (noop, deadline, cfq) were removed in 5.0")
            }
            _ => None,
        }
    }

    /// `normalized_sysctl_sched_base_slice` at boot: 0.75 ms in 6.6 and
    /// 6.12 fair.c, 0.70 ms in 6.18 fair.c (`tunables::BASE_SLICE_NS*`);
    /// 4.4 has no base slice, and its value here is unused.
    pub fn normalized_base_slice_ns(self) -> u64 {
        use super::tunables::{BASE_SLICE_NS, BASE_SLICE_NS_618};
        match self {
            KernelModel::Linux618 => BASE_SLICE_NS_618,
            KernelModel::Linux44 | KernelModel::Linux66 | KernelModel::Linux612 => BASE_SLICE_NS,
        }
    }

    /// `"4.4", "6.6", …`: the versions accepted.
    pub fn allowed() -> String {
        Self::ALL.iter().map(|m| format!("\"{}\"", m.version())).collect::<Vec<_>>().join(", ")
    }
}

/// Why a wake-up did or did not preempt the running task: the rule of the
/// modelled kernel that decided (`check_preempt_wakeup`, 4.4 fair.c;
/// `check_preempt_wakeup_fair`, 6.x), named so reports explain a delay in
/// the model's own terms. Set by the fair class at each wake-up check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WakeupVerdict {
    /// No check ran: the task was still on its run queue (`ttwu_remote`).
    #[default]
    NotChecked,
    /// The CPU was idle: it reschedules, nothing is preempted.
    IdleCpu,
    /// A reschedule was already pending (`test_tsk_need_resched`).
    ReschedPending,
    /// The woken task's hierarchy is throttled (out of CPU quota).
    Throttled,
    /// SCHED_BATCH / SCHED_IDLE wakees, or WAKEUP_PREEMPTION off: no wake-up preemption.
    NoWakeupPreemption,
    /// The running task is SCHED_IDLE (or an idle entity) and the woken one is not.
    CurrIdle,
    /// An idle entity does not preempt a non-idle one.
    WokenIdle,
    /// 4.4 `wakeup_preempt_entity` = -1: the woken vruntime is not below curr's.
    NotBehind,
    /// 4.4 `wakeup_preempt_entity` = 0: below curr's by less than the wakeup granularity.
    WithinGranularity,
    /// 4.4 `wakeup_preempt_entity` = 1: more than the wakeup granularity below.
    BeyondGranularity,
    /// EEVDF: the woken entity is not eligible (its lag V − vruntime is negative).
    NotEligible,
    /// EEVDF 6.6/6.12 RUN_TO_PARITY: curr keeps the CPU until its deadline
    /// (the deadline stashed in `vlag` at pick still holds).
    RunToParity,
    /// EEVDF 6.18: curr's protected slice (`vprot`, RUN_TO_PARITY) is not used up.
    SliceProtected,
    /// EEVDF: eligible, but curr (eligible) has the earlier deadline.
    LaterDeadline,
    /// EEVDF: eligible, but another queued entity has an earlier deadline.
    OtherEarlier,
    /// EEVDF: eligible with the earliest deadline: `pick_eevdf` picks it.
    EarliestDeadline,
    /// EEVDF 6.12+ PREEMPT_SHORT: eligible with a shorter slice and the
    /// earliest deadline; curr's protection is cancelled.
    ShortSlice,
}

impl WakeupVerdict {
    /// Whether the wake-up preempted the running task.
    pub fn preempts(self) -> bool {
        matches!(
            self,
            WakeupVerdict::CurrIdle
                | WakeupVerdict::BeyondGranularity
                | WakeupVerdict::EarliestDeadline
                | WakeupVerdict::ShortSlice
        )
    }

    /// The rule in words, for the history around the worst delay.
    pub fn explain(self) -> &'static str {
        match self {
            WakeupVerdict::NotChecked => "still on its run queue: no preemption check",
            WakeupVerdict::IdleCpu => "CPU idle",
            WakeupVerdict::ReschedPending => "a reschedule was already pending",
            WakeupVerdict::Throttled => "its group is throttled",
            WakeupVerdict::NoWakeupPreemption => "no wake-up preemption (policy or WAKEUP_PREEMPTION off)",
            WakeupVerdict::CurrIdle => "curr is SCHED_IDLE",
            WakeupVerdict::WokenIdle => "an idle entity does not preempt",
            WakeupVerdict::NotBehind => "its vruntime is not below curr's",
            WakeupVerdict::WithinGranularity => "within the wakeup granularity of curr's vruntime",
            WakeupVerdict::BeyondGranularity => "vruntime more than the wakeup granularity below curr's",
            WakeupVerdict::NotEligible => "not eligible (lag < 0)",
            WakeupVerdict::RunToParity => "curr protected until its deadline (RUN_TO_PARITY)",
            WakeupVerdict::SliceProtected => "curr's protected slice not used up (vprot, RUN_TO_PARITY)",
            WakeupVerdict::LaterDeadline => "eligible, later deadline than curr's",
            WakeupVerdict::OtherEarlier => "eligible, another entity has an earlier deadline",
            WakeupVerdict::EarliestDeadline => "eligible, earliest deadline",
            WakeupVerdict::ShortSlice => "shorter slice, eligible, earliest deadline (PREEMPT_SHORT)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip() {
        for m in KernelModel::ALL {
            assert_eq!(KernelModel::parse(m.version()), Some(m));
        }
        assert_eq!(KernelModel::parse("6.10"), None);
        assert_eq!(KernelModel::default().label(), "linux-6.18-eevdf");
        assert_eq!(KernelModel::Linux44.label(), "linux-4.4-cfs");
        assert_eq!(KernelModel::allowed(), "\"4.4\", \"6.6\", \"6.12\", \"6.18\"");
        assert!(KernelModel::Linux44 < KernelModel::Linux66 && KernelModel::Linux612 < KernelModel::Linux618);
    }

    /// `lacks_setting` is exactly what validation refuses as another
    /// model's setting: under each model, every fair-class key of every
    /// model is refused (naming that key) if and only if it is lacking; a
    /// misspelt feature is refused without being "lacking".
    #[test]
    fn lacks_setting_agrees_with_validation_under_every_model() {
        use crate::sched::tunables::{EevdfFeatures, SchedFeatures};
        const TOML: &str = "schema = 1\nseed = 1\nduration = \"10ms\"\n[machine]\ncpus = 1\n\
                            [[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n";
        let mut keys: Vec<(String, &str)> = Vec::new();
        for name in ["sched_latency_ns", "sched_min_granularity_ns", "sched_wakeup_granularity_ns", "base_slice_ns"] {
            keys.push((format!("cfs.{name}"), "\"3ms\""));
            keys.push((format!("cfs.base.{name}"), "\"3ms\""));
        }
        let features = KernelModel::ALL.into_iter().filter(|m| m.is_eevdf()).flat_map(EevdfFeatures::names);
        for name in SchedFeatures::NAMES.into_iter().chain(features) {
            keys.push((format!("features.{name}"), "true"));
        }
        let base = crate::Scenario::from_toml("t.toml", TOML).unwrap();
        let mut lacking = 0;
        for m in KernelModel::ALL {
            let under = base.with_overrides(&[("kernel.version", &format!("\"{}\"", m.version()))]).unwrap();
            for (key, value) in &keys {
                let result = under.with_overrides(&[(key.as_str(), *value)]);
                if m.lacks_setting(key) {
                    lacking += 1;
                    let e = result.expect_err(key);
                    assert_eq!(e.key(), key, "{m:?}: {e}");
                } else {
                    assert!(result.is_ok(), "{m:?} {key}: {:?}", result.err());
                }
            }
            let e = under.with_overrides(&[("features.NOT_A_FEATURE", "true")]).expect_err("a misspelt feature");
            assert!(!m.lacks_setting("features.NOT_A_FEATURE"), "{e}");
            assert!(!m.lacks_setting("machine.hz") && !m.lacks_setting("cfs.sched_tunable_scaling"));
        }
        assert!(KernelModel::Linux618.lacks_setting("cfs.sched_latency_ns"));
        assert!(KernelModel::Linux44.lacks_setting("features.\"PLACE_LAG\""));
        assert!(lacking > 20, "{lacking}");
    }

    #[test]
    fn elevators_follow_the_kernel() {
        assert_eq!(KernelModel::Linux44.default_elevator(1), "cfq");
        assert_eq!(KernelModel::Linux44.default_elevator(4), "cfq");
        for m in [KernelModel::Linux66, KernelModel::Linux612, KernelModel::Linux618] {
            assert_eq!(m.default_elevator(1), "mq-deadline");
            assert_eq!(m.default_elevator(2), "none");
            assert!(!m.elevators().contains(&"cfq") && m.elevators().contains(&"bfq"));
            assert!(m.elevator_history("noop").is_some_and(|h| h.contains("5.0")));
        }
        for m in KernelModel::ALL {
            assert!(m.elevators().contains(&m.default_elevator(1)) && m.elevators().contains(&m.default_elevator(8)));
        }
        assert!(!KernelModel::Linux44.elevators().contains(&"mq-deadline"));
    }
}

// --- engine: rules asked for by engine ---
impl KernelModel {
    /// The history records carry each task's EEVDF deadline and lag (6.x);
    /// under 4.4 they decide nothing and are recorded as zero.
    pub fn records_eevdf_state(self) -> bool {
        self.is_eevdf()
    }

    /// A migrated task's vruntime travels relative to the queues'
    /// `min_vruntime` (4.4 `migrate_task_rq_fair`); EEVDF keeps it absolute
    /// and places the task by its saved lag.
    pub fn migrates_relative_vruntime(self) -> bool {
        !self.is_eevdf()
    }

    /// The class keeps EEVDF's tree and sums (`Cfs::eevdf_invariants` applies).
    pub fn keeps_eevdf_sums(self) -> bool {
        self.is_eevdf()
    }

    /// A sleeping task's entity may stay queued, delayed (`DELAY_DEQUEUE`
    /// of the EEVDF class; never under 4.4).
    pub fn may_delay_dequeue(self) -> bool {
        self.is_eevdf()
    }
}

// --- reports: rules asked for by report/ (run, build, victim, json) and plot/data ---
impl KernelModel {
    /// Whether the fair class is tuned by EEVDF's settings (6.6 on:
    /// `base_slice_ns` and the EEVDF feature bits) rather than 4.4's
    /// (`sched_latency_ns`, the granularities, `sched_nr_latency` and
    /// `SchedFeatures`): which settings a report names and prints.
    pub fn tuned_by_base_slice(self) -> bool {
        self.is_eevdf()
    }

    /// Whether a task's lag and virtual deadline decide the pick (EEVDF,
    /// 6.6 on: `pick_eevdf`), so the report's history rows and the
    /// timeline's lag chart show them; under 4.4 vruntime alone decides.
    pub fn picks_by_lag_and_deadline(self) -> bool {
        self.is_eevdf()
    }

    /// `one_hog_bound_rule` computed: the longest wake-up delay a victim
    /// should see beside one CPU hog on its CPU. CFS 4.4: its sleeper
    /// credit (half the latency, `place_entity`) plus two ticks for the
    /// preemption to be noticed. EEVDF: the hog's protected slice (one base
    /// slice: RUN_TO_PARITY keeps curr until its deadline, 6.6/6.12
    /// `pick_eevdf`, 6.18 `__pick_eevdf` with `protect_slice`) plus two
    /// ticks, the slice end being noticed by `update_curr` at a tick.
    pub fn one_hog_bound_ns(self, sched_latency_ns: u64, base_slice_ns: u64, tick_ns: u64) -> u64 {
        if self.is_eevdf() { base_slice_ns + 2 * tick_ns } else { sched_latency_ns / 2 + 2 * tick_ns }
    }
}

// --- scenario: rules asked for by scenario/ (validating `[cfs]`, `[features]`, a task's `slice`,
// `[kernel] cfs_bandwidth` and a device's `elevator`) ---
impl KernelModel {
    /// Whether the fair class has the 4.4 CFS settings: `[cfs]`
    /// sched_latency_ns, sched_min_granularity_ns, sched_wakeup_granularity_ns
    /// and the `SchedFeatures` bits. EEVDF (6.6) removed them; it has
    /// base_slice_ns and feature bits of its own.
    pub fn has_cfs_latency_tunables(self) -> bool {
        self == KernelModel::Linux44
    }

    /// Custom slices: a fair task's own slice through `sched_setattr`
    /// (`sched_attr.sched_runtime`), since 6.12.
    pub fn has_custom_slices(self) -> bool {
        self >= KernelModel::Linux612
    }

    /// Whether `[kernel] cfs_bandwidth` can only name this model's own
    /// bandwidth rules (EEVDF models), rather than choose among the CFS-era
    /// ones (the 4.4 fair class: 4.4, 4.18, 5.4, 5.14).
    pub fn runs_own_bandwidth_rules(self) -> bool {
        self != KernelModel::Linux44
    }

    /// The newest model whose kernel has the elevator `name`, for the hint
    /// of an error naming one this model lacks.
    pub fn newest_with_elevator(name: &str) -> Option<KernelModel> {
        KernelModel::ALL.into_iter().rev().find(|m| m.elevators().contains(&name))
    }
}
