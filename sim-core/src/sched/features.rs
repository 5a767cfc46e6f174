//! The scheduler feature bits (`kernel/sched/features.h`): the behaviour
//! switches the kernel asks with `sched_feat()`, under their kernel names.
//! 4.4's CFS has `SchedFeatures`, the 6.x EEVDF class `EevdfFeatures`.
//! Which bits a version has and their defaults are rows of the version
//! table (`model::KernelRules`); this file knows no version.

/// Scheduler feature bits that change CFS decisions (4.4 `features.h`).
/// Names and defaults are the kernel's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedFeatures {
    pub gentle_fair_sleepers: bool,
    pub start_debit: bool,
    pub next_buddy: bool,
    pub last_buddy: bool,
    pub wakeup_preemption: bool,
    pub hrtick: bool,
    pub double_tick: bool,
}

impl Default for SchedFeatures {
    fn default() -> Self {
        SchedFeatures::DEFAULT
    }
}

impl SchedFeatures {
    /// The defaults of 4.4 `features.h`.
    pub const DEFAULT: SchedFeatures = SchedFeatures {
        gentle_fair_sleepers: true,
        start_debit: true,
        next_buddy: false,
        last_buddy: true,
        wakeup_preemption: true,
        hrtick: false,
        double_tick: false,
    };

    /// Kernel names, in `features.h` order, as accepted in `[features]`.
    pub const NAMES: [&'static str; 7] = [
        "GENTLE_FAIR_SLEEPERS",
        "START_DEBIT",
        "NEXT_BUDDY",
        "LAST_BUDDY",
        "WAKEUP_PREEMPTION",
        "HRTICK",
        "DOUBLE_TICK",
    ];

    pub fn get_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "GENTLE_FAIR_SLEEPERS" => &mut self.gentle_fair_sleepers,
            "START_DEBIT" => &mut self.start_debit,
            "NEXT_BUDDY" => &mut self.next_buddy,
            "LAST_BUDDY" => &mut self.last_buddy,
            "WAKEUP_PREEMPTION" => &mut self.wakeup_preemption,
            "HRTICK" => &mut self.hrtick,
            "DOUBLE_TICK" => &mut self.double_tick,
            _ => return None,
        })
    }

    /// `(name, enabled)` pairs in kernel order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> {
        let v = [
            self.gentle_fair_sleepers,
            self.start_debit,
            self.next_buddy,
            self.last_buddy,
            self.wakeup_preemption,
            self.hrtick,
            self.double_tick,
        ];
        Self::NAMES.into_iter().zip(v)
    }
}

/// EEVDF feature bits (6.x `features.h`), under the kernel's names; which
/// exist depends on the version (`EevdfFeatures::names`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EevdfFeatures {
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    /// 6.12+.
    pub place_rel_deadline: bool,
    pub run_to_parity: bool,
    /// 6.12+.
    pub preempt_short: bool,
    pub next_buddy: bool,
    /// 6.18.
    pub pick_buddy: bool,
    /// 6.12+.
    pub delay_dequeue: bool,
    /// 6.12+.
    pub delay_zero: bool,
    pub wakeup_preemption: bool,
    pub hrtick: bool,
}

impl EevdfFeatures {
    /// Every EEVDF feature name any modelled version has, in `features.h`
    /// order (a version's own list is `KernelRules::eevdf_feature_names`).
    pub const ALL_NAMES: [&'static str; 11] = [
        "PLACE_LAG",
        "PLACE_DEADLINE_INITIAL",
        "PLACE_REL_DEADLINE",
        "RUN_TO_PARITY",
        "PREEMPT_SHORT",
        "NEXT_BUDDY",
        "PICK_BUDDY",
        "DELAY_DEQUEUE",
        "DELAY_ZERO",
        "WAKEUP_PREEMPTION",
        "HRTICK",
    ];

    /// The switch named `name`, whichever version has it.
    pub fn bit_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "PLACE_LAG" => &mut self.place_lag,
            "PLACE_DEADLINE_INITIAL" => &mut self.place_deadline_initial,
            "PLACE_REL_DEADLINE" => &mut self.place_rel_deadline,
            "RUN_TO_PARITY" => &mut self.run_to_parity,
            "PREEMPT_SHORT" => &mut self.preempt_short,
            "NEXT_BUDDY" => &mut self.next_buddy,
            "PICK_BUDDY" => &mut self.pick_buddy,
            "DELAY_DEQUEUE" => &mut self.delay_dequeue,
            "DELAY_ZERO" => &mut self.delay_zero,
            "WAKEUP_PREEMPTION" => &mut self.wakeup_preemption,
            "HRTICK" => &mut self.hrtick,
            _ => return None,
        })
    }
}
