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

    /// The formula of `metrics::report::one_hog_bound_ns` under this model,
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
}
