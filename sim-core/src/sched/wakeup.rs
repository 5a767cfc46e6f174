//! Why a wake-up did or did not preempt: the verdict the fair class leaves
//! for the engine's history records, named by the modelled kernel's rule.

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
    /// core.c `wakeup_preempt`: the woken task's class is above curr's (an
    /// RT task waking on a fair or idle CPU): `resched_curr` at once.
    HigherClass,
    /// The woken task's class is below curr's (a fair task while an RT
    /// task runs): no check; it waits until the higher class leaves the CPU.
    LowerClass,
    /// `wakeup_preempt_rt`: a strictly higher RT priority than curr's.
    RtHigherPrio,
    /// `wakeup_preempt_rt`: an equal or lower RT priority does not preempt.
    RtNotHigher,
    /// `check_preempt_equal_prio`: equal priority, curr can move elsewhere
    /// and the woken task cannot: the woken task goes first.
    RtEqualPrioRequeue,
    /// `wakeup_preempt_dl`: a strictly earlier absolute deadline than curr's.
    DlEarlier,
    /// `wakeup_preempt_dl`: not an earlier deadline.
    DlNotEarlier,
    /// `check_preempt_equal_dl`: an equal deadline, curr can move
    /// elsewhere (`cpudl_find`) and the woken task cannot: it goes first.
    DlEqualGoesFirst,
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
                | WakeupVerdict::HigherClass
                | WakeupVerdict::RtHigherPrio
                | WakeupVerdict::RtEqualPrioRequeue
                | WakeupVerdict::DlEarlier
                | WakeupVerdict::DlEqualGoesFirst
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
            WakeupVerdict::HigherClass => "a higher scheduling class than curr's preempts at once",
            WakeupVerdict::LowerClass => "curr is of a higher class (RT): waits until it leaves the CPU",
            WakeupVerdict::RtHigherPrio => "a higher RT priority than curr's",
            WakeupVerdict::RtNotHigher => "not a higher RT priority than curr's (equal does not preempt)",
            WakeupVerdict::RtEqualPrioRequeue => "equal RT priority, curr can move and it cannot (check_preempt_equal_prio)",
            WakeupVerdict::DlEarlier => "an earlier absolute deadline than curr's (EDF)",
            WakeupVerdict::DlNotEarlier => "not an earlier absolute deadline than curr's (EDF)",
            WakeupVerdict::DlEqualGoesFirst => {
                "equal deadline, curr can move and it cannot (check_preempt_equal_dl)"
            }
        }
    }
}
