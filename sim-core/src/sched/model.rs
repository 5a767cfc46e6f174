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

    pub fn parse(version: &str) -> Option<KernelModel> {
        Self::ALL.into_iter().find(|m| m.version() == version)
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

    /// `"4.4", "6.6", …`: the versions accepted.
    pub fn allowed() -> String {
        Self::ALL.iter().map(|m| format!("\"{}\"", m.version())).collect::<Vec<_>>().join(", ")
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
