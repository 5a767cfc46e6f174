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
