//! CFS tunables, their boot-time scaling by CPU count, and the scheduler
//! feature bits (Linux 4.4 `kernel/sched/fair.c`, `features.h`, `sysctl.c`).
//!
//! Two ways to set a tunable, as on a real machine (kernel.md §1.2):
//! - **effective** (`[cfs] sched_latency_ns = …`): the value an administrator
//!   writes to `/proc/sys/kernel/sched_latency_ns`. Writing any of the three
//!   tunables runs `sched_proc_update_handler`, which recomputes
//!   `sched_nr_latency = DIV_ROUND_UP(latency, min_granularity)`.
//! - **base** (`[cfs.base] sched_latency_ns = …`): the kernel's
//!   `normalized_sysctl_*`, multiplied at boot by the scaling factor
//!   (`update_sysctl`); `sched_nr_latency` then keeps its default of 8.
//!
//! A tunable given neither way takes the kernel default (base × factor).

pub use super::features::{EevdfFeatures, SchedFeatures};
use super::model::KernelModel;
pub use super::model::BASE_SLICE_NS;

/// `sysctl_sched_tunable_scaling` (4.4 sched.h `enum sched_tunable_scaling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableScaling {
    None,
    Log,
    Linear,
}

impl TunableScaling {
    pub fn name(self) -> &'static str {
        match self {
            TunableScaling::None => "none",
            TunableScaling::Log => "log",
            TunableScaling::Linear => "linear",
        }
    }

    /// `get_update_sysctl_factor` (4.4 fair.c): from `min(ncpus, 8)` CPUs,
    /// 1 (none), `1 + ilog2(cpus)` (log) or `cpus` (linear).
    pub fn factor(self, ncpus: u16) -> u64 {
        let cpus = u64::from(ncpus.clamp(1, 8));
        match self {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + u64::from(cpus.ilog2()),
            TunableScaling::Linear => cpus,
        }
    }
}

/// `normalized_sysctl_sched_latency` (4.4 fair.c): 6 ms.
pub const BASE_LATENCY_NS: u64 = 6_000_000;
/// `normalized_sysctl_sched_min_granularity`: 0.75 ms.
pub const BASE_MIN_GRANULARITY_NS: u64 = 750_000;
/// `normalized_sysctl_sched_wakeup_granularity`: 1 ms.
pub const BASE_WAKEUP_GRANULARITY_NS: u64 = 1_000_000;
/// `sched_nr_latency` default (4.4 fair.c).
pub const DEFAULT_NR_LATENCY: u64 = 8;
/// sysctl.c bounds: `min_sched_granularity_ns` .. `max_sched_granularity_ns`
/// for latency and min_granularity.
pub const SYSCTL_GRANULARITY_NS: (u64, u64) = (100_000, 1_000_000_000);
/// sysctl.c bounds for wakeup_granularity: `min_wakeup_granularity_ns` (0)
/// .. `max_wakeup_granularity_ns` (1 s).
pub const SYSCTL_WAKEUP_GRANULARITY_NS: (u64, u64) = (0, 1_000_000_000);

/// The effective CFS tunables a run uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfsTunables {
    pub sched_latency_ns: u64,
    pub sched_min_granularity_ns: u64,
    pub sched_wakeup_granularity_ns: u64,
    pub sched_nr_latency: u64,
    pub scaling: TunableScaling,
    pub factor: u64,
}

/// How a scenario sets one tunable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableValue {
    Default,
    /// `normalized_sysctl_*`, scaled by the factor.
    Base(u64),
    /// The `/proc/sys/kernel` value, used as is.
    Effective(u64),
}

impl CfsTunables {
    /// Resolves the three tunables for a machine of `ncpus` CPUs.
    pub fn resolve(
        ncpus: u16,
        scaling: TunableScaling,
        latency: TunableValue,
        min_granularity: TunableValue,
        wakeup_granularity: TunableValue,
    ) -> CfsTunables {
        let factor = scaling.factor(ncpus);
        let value = |v: TunableValue, base: u64| match v {
            TunableValue::Default => base * factor,
            TunableValue::Base(b) => b * factor,
            TunableValue::Effective(e) => e,
        };
        let sched_latency_ns = value(latency, BASE_LATENCY_NS);
        let sched_min_granularity_ns = value(min_granularity, BASE_MIN_GRANULARITY_NS);
        let sched_wakeup_granularity_ns = value(wakeup_granularity, BASE_WAKEUP_GRANULARITY_NS);
        let written =
            [latency, min_granularity, wakeup_granularity].iter().any(|v| matches!(v, TunableValue::Effective(_)));
        // sched_proc_update_handler (4.4 fair.c) recomputes nr_latency on any write.
        let sched_nr_latency =
            if written { sched_latency_ns.div_ceil(sched_min_granularity_ns) } else { DEFAULT_NR_LATENCY };
        CfsTunables {
            sched_latency_ns,
            sched_min_granularity_ns,
            sched_wakeup_granularity_ns,
            sched_nr_latency,
            scaling,
            factor,
        }
    }
}

/// The features of `now` that differ from `defaults` (both in the same
/// order, as `SchedFeatures::iter` and `EevdfFeatures::iter` give them), each
/// with the token `/sys/kernel/debug/sched_features` takes to set it: `NAME`
/// when on, `NO_NAME` when off (`sched_feat_set`: 4.4 core.c, 6.x debug.c).
pub fn changed_features(
    now: impl IntoIterator<Item = (&'static str, bool)>,
    defaults: impl IntoIterator<Item = (&'static str, bool)>,
) -> Vec<(&'static str, bool, String)> {
    now.into_iter()
        .zip(defaults)
        .filter(|((_, on), (_, default_on))| on != default_on)
        .map(|((name, on), _)| (name, on, if on { name.to_string() } else { format!("NO_{name}") }))
        .collect()
}

/// A task's own slice (`sched_attr.sched_runtime`, 6.12+): the kernel
/// clamps it to 0.1..=100 ms (6.12 syscalls.c `__setscheduler_params`,
/// 6.18 fair.c `__setparam_fair`); a scenario outside the range is refused.
pub const CUSTOM_SLICE_NS: (u64, u64) = (100_000, 100_000_000);

/// The EEVDF tunables a run uses (6.6+ fair.c, `debug.c:sched_init_debug`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EevdfTunables {
    /// `sysctl_sched_base_slice`: the slice every task gets unless it has its own.
    pub base_slice_ns: u64,
    /// `normalized_sysctl_sched_base_slice` (unscaled; 6.18 `set_protect_slice`
    /// uses it when RUN_TO_PARITY is off).
    pub normalized_base_slice_ns: u64,
    pub scaling: TunableScaling,
    pub factor: u64,
}

impl EevdfTunables {
    /// `update_sysctl` (6.x fair.c): base × factor, unless debugfs
    /// `base_slice_ns` was written (an effective value, used as is).
    pub fn resolve(ncpus: u16, scaling: TunableScaling, normalized_default: u64, slice: TunableValue) -> EevdfTunables {
        let factor = scaling.factor(ncpus);
        let (base_slice_ns, normalized_base_slice_ns) = match slice {
            TunableValue::Default => (normalized_default * factor, normalized_default),
            TunableValue::Base(b) => (b * factor, b),
            // A debugfs write sets sysctl_sched_base_slice only.
            TunableValue::Effective(e) => (e, normalized_default),
        };
        EevdfTunables { base_slice_ns, normalized_base_slice_ns, scaling, factor }
    }
}

impl EevdfFeatures {
    /// The defaults of `features.h` for a model (its version table's row).
    pub fn defaults(model: KernelModel) -> EevdfFeatures {
        model.rules().eevdf_features
    }

    /// The names a model has, in `features.h` order.
    pub fn names(model: KernelModel) -> Vec<&'static str> {
        model.rules().eevdf_feature_names.to_vec()
    }

    /// The switch for `name`, if the model has that feature.
    pub fn get_mut(&mut self, model: KernelModel, name: &str) -> Option<&mut bool> {
        if !model.rules().eevdf_feature_names.contains(&name) {
            return None;
        }
        self.bit_mut(name)
    }

    /// `(name, enabled)` pairs of the model's features.
    pub fn iter(&self, model: KernelModel) -> Vec<(&'static str, bool)> {
        let mut copy = *self;
        Self::names(model).into_iter().map(|n| (n, *copy.get_mut(model, n).expect("listed name"))).collect()
    }
}

/// The tick period for a HZ value: `TICK_NSEC = (NSEC_PER_SEC + HZ/2) / HZ`
/// (include/linux/jiffies.h), e.g. 3333333 ns at HZ=300.
pub fn tick_nsec(hz: u32) -> u64 {
    (1_000_000_000 + u64::from(hz) / 2) / u64::from(hz)
}

/// The HZ values Kconfig.hz offers (4.4).
pub const HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::model::BASE_SLICE_NS_618;

    #[test]
    fn log_scaling_matches_the_kernel_table() {
        let f = |n| TunableScaling::Log.factor(n);
        assert_eq!([f(1), f(2), f(3), f(4), f(7), f(8), f(32), f(256)], [1, 2, 2, 3, 3, 4, 4, 4]);
        assert_eq!(TunableScaling::Linear.factor(32), 8);
        assert_eq!(TunableScaling::None.factor(32), 1);
    }

    #[test]
    fn defaults_for_32_cpus() {
        let d = TunableValue::Default;
        let t = CfsTunables::resolve(32, TunableScaling::Log, d, d, d);
        assert_eq!(
            (t.sched_latency_ns, t.sched_min_granularity_ns, t.sched_wakeup_granularity_ns, t.sched_nr_latency),
            (24_000_000, 3_000_000, 4_000_000, 8)
        );
    }

    #[test]
    fn writing_a_sysctl_recomputes_nr_latency() {
        let t = CfsTunables::resolve(
            32,
            TunableScaling::Log,
            TunableValue::Effective(1_000_000),
            TunableValue::Effective(500_000),
            TunableValue::Effective(500_000),
        );
        assert_eq!(t.sched_nr_latency, 2);
        let b = CfsTunables::resolve(
            32,
            TunableScaling::Log,
            TunableValue::Base(1_000_000),
            TunableValue::Default,
            TunableValue::Default,
        );
        assert_eq!((b.sched_latency_ns, b.sched_nr_latency), (4_000_000, 8));
    }

    #[test]
    fn eevdf_base_slice_scales_with_cpus() {
        use crate::sched::model::KernelModel;
        let d = TunableValue::Default;
        let t = EevdfTunables::resolve(2, TunableScaling::Log, BASE_SLICE_NS_618, d);
        assert_eq!((t.base_slice_ns, t.normalized_base_slice_ns), (1_400_000, 700_000));
        let t = EevdfTunables::resolve(32, TunableScaling::Log, BASE_SLICE_NS, d);
        assert_eq!(t.base_slice_ns, 3_000_000);
        let t = EevdfTunables::resolve(32, TunableScaling::Log, BASE_SLICE_NS, TunableValue::Effective(1_000_000));
        assert_eq!((t.base_slice_ns, t.normalized_base_slice_ns), (1_000_000, 750_000));
        assert!(!EevdfFeatures::names(KernelModel::Linux66).contains(&"DELAY_DEQUEUE"));
        assert!(EevdfFeatures::names(KernelModel::Linux618).contains(&"PICK_BUDDY"));
        assert!(!EevdfFeatures::defaults(KernelModel::Linux612).pick_buddy);
    }

    #[test]
    fn tick_lengths() {
        assert_eq!(tick_nsec(1000), 1_000_000);
        assert_eq!(tick_nsec(250), 4_000_000);
        assert_eq!(tick_nsec(300), 3_333_333);
        assert_eq!(tick_nsec(100), 10_000_000);
    }
}
