//! `[cfs]` and `[features]` for the chosen kernel model: the 4.4 tunables
//! and feature bits, or the EEVDF ones. A knob the model's kernel lacks is
//! an error naming the model and what it has.

use super::error::KeyError;
use super::file::ScenarioFile;
use super::values::{duration_value, shown};
use crate::sched::model::KernelModel;
use crate::sched::tunables::{
    CfsTunables, EevdfFeatures, EevdfTunables, SYSCTL_GRANULARITY_NS, SYSCTL_WAKEUP_GRANULARITY_NS, SchedFeatures,
    TunableScaling, TunableValue,
};
use crate::time::format_duration;
use toml::Value;

fn tunable(
    effective: &Option<Value>,
    base: &Option<Value>,
    name: &str,
    range: (u64, u64),
) -> Result<TunableValue, KeyError> {
    let check = |v: &Value, key: String| -> Result<u64, KeyError> {
        let ns = duration_value(v, &key)?;
        if ns < range.0 || ns > range.1 {
            return Err(KeyError::new(
                key,
                format!(
                    "{} is outside the kernel's sysctl range {}..={}",
                    format_duration(ns),
                    format_duration(range.0),
                    format_duration(range.1)
                ),
            ));
        }
        Ok(ns)
    };
    match (effective, base) {
        (Some(_), Some(_)) => Err(KeyError::new(
            format!("cfs.{name}"),
            format!("given both as an effective value and in [cfs.base]; give one (cfs.{name} or cfs.base.{name})"),
        )),
        (Some(v), None) => Ok(TunableValue::Effective(check(v, format!("cfs.{name}"))?)),
        (None, Some(v)) => Ok(TunableValue::Base(check(v, format!("cfs.base.{name}"))?)),
        (None, None) => Ok(TunableValue::Default),
    }
}

fn scaling(v: &Option<Value>) -> Result<TunableScaling, KeyError> {
    let key = "cfs.sched_tunable_scaling";
    let bad = || {
        let written = v.as_ref().map(shown).unwrap_or_default();
        KeyError::new(key, format!("{written} is not allowed: \"none\", \"log\", \"linear\" (or 0, 1, 2)"))
    };
    match v {
        None => Ok(TunableScaling::Log),
        Some(Value::String(s)) => match s.as_str() {
            "none" => Ok(TunableScaling::None),
            "log" => Ok(TunableScaling::Log),
            "linear" => Ok(TunableScaling::Linear),
            _ => Err(bad()),
        },
        Some(Value::Integer(0)) => Ok(TunableScaling::None),
        Some(Value::Integer(1)) => Ok(TunableScaling::Log),
        Some(Value::Integer(2)) => Ok(TunableScaling::Linear),
        Some(_) => Err(bad()),
    }
}

/// Why `[features] name` is refused when it names a balancer feature
/// (`KernelRules::balancer_features`): this model's, run at the default and
/// not a switch here, or one only other models' balancers have. None for
/// any other name.
fn balancer_feature_refusal(kernel: KernelModel, name: &str) -> Option<String> {
    if kernel.rules().balancer_features.contains(&name) {
        return Some(format!(
            "a load-balancer feature of the {} model, which this build runs as the kernel's default and does \
             not offer as a switch",
            kernel.describe()
        ));
    }
    let others: Vec<&str> =
        KernelModel::ALL.into_iter().filter(|m| m.rules().balancer_features.contains(&name)).map(|m| m.version()).collect();
    (!others.is_empty()).then(|| {
        format!(
            "a load-balancer feature of Linux {} only, not in the {} model's balancer",
            others.join(", "),
            kernel.describe()
        )
    })
}

/// The fair-class settings of a model: the 4.4 tunables and feature bits,
/// and the EEVDF ones (a model reads one pair; the other keeps its defaults).
type FairSettings = (CfsTunables, SchedFeatures, EevdfTunables, EevdfFeatures);

/// `[cfs]` and `[features]` for the chosen model: the 4.4 tunables and
/// feature bits, or the EEVDF ones. A knob the model's kernel lacks is an
/// error naming the model and what it has.
pub(super) fn fair_settings(f: &ScenarioFile, kernel: KernelModel, cpus: u16) -> Result<FairSettings, KeyError> {
    let scaling = scaling(&f.cfs.sched_tunable_scaling)?;
    if kernel.has_cfs_latency_tunables() {
        cfs_settings(f, kernel, cpus, scaling)
    } else {
        eevdf_settings(f, kernel, cpus, scaling)
    }
}

/// The 4.4 model (CFS): sched_latency_ns, the granularities and
/// `SchedFeatures`; no base_slice_ns, no EEVDF feature.
fn cfs_settings(
    f: &ScenarioFile,
    kernel: KernelModel,
    cpus: u16,
    scaling: TunableScaling,
) -> Result<FairSettings, KeyError> {
    let c = &f.cfs;
    let d = TunableValue::Default;
    let normalized = kernel.normalized_base_slice_ns();
    if let Some(key) = [("cfs.base_slice_ns", &c.base_slice_ns), ("cfs.base.base_slice_ns", &c.base.base_slice_ns)]
        .into_iter()
        .find_map(|(k, v)| v.is_some().then_some(k))
    {
        return Err(KeyError::new(
            key,
            "does not exist in the Linux 4.4 model (CFS); base_slice_ns came with EEVDF in 6.6 (kernel.version \
             = \"6.6\" or later). The 4.4 model has sched_latency_ns, sched_min_granularity_ns, \
             sched_wakeup_granularity_ns, sched_tunable_scaling",
        ));
    }
    let tunables = CfsTunables::resolve(
        cpus,
        scaling,
        tunable(&c.sched_latency_ns, &c.base.sched_latency_ns, "sched_latency_ns", SYSCTL_GRANULARITY_NS)?,
        tunable(
            &c.sched_min_granularity_ns,
            &c.base.sched_min_granularity_ns,
            "sched_min_granularity_ns",
            SYSCTL_GRANULARITY_NS,
        )?,
        tunable(
            &c.sched_wakeup_granularity_ns,
            &c.base.sched_wakeup_granularity_ns,
            "sched_wakeup_granularity_ns",
            SYSCTL_WAKEUP_GRANULARITY_NS,
        )?,
    );
    let mut features = SchedFeatures::default();
    for (name, &on) in &f.features {
        let slot = features.get_mut(name).ok_or_else(|| {
            let other = EevdfFeatures::names(KernelModel::LATEST).contains(&name.as_str());
            let why = if other {
                "an EEVDF feature (6.6+), not in the Linux 4.4 model".to_string()
            } else if let Some(why) = balancer_feature_refusal(kernel, name) {
                why
            } else {
                "unknown or unmodelled scheduler feature".to_string()
            };
            KeyError::new(
                format!("features.{name}"),
                format!("{why}; the 4.4 model has: {}", SchedFeatures::NAMES.join(", ")),
            )
        })?;
        *slot = on;
    }
    let eevdf = EevdfTunables::resolve(cpus, scaling, normalized, d);
    Ok((tunables, features, eevdf, EevdfFeatures::defaults(kernel)))
}

/// An EEVDF model (6.6+): base_slice_ns and its version's feature bits;
/// the 4.4 latency tunables are gone.
fn eevdf_settings(
    f: &ScenarioFile,
    kernel: KernelModel,
    cpus: u16,
    scaling: TunableScaling,
) -> Result<FairSettings, KeyError> {
    let c = &f.cfs;
    let d = TunableValue::Default;
    let normalized = kernel.normalized_base_slice_ns();
    let model = kernel.describe();
    for (name, eff, base) in [
        ("sched_latency_ns", &c.sched_latency_ns, &c.base.sched_latency_ns),
        ("sched_min_granularity_ns", &c.sched_min_granularity_ns, &c.base.sched_min_granularity_ns),
        ("sched_wakeup_granularity_ns", &c.sched_wakeup_granularity_ns, &c.base.sched_wakeup_granularity_ns),
    ] {
        let key = if eff.is_some() {
            Some(format!("cfs.{name}"))
        } else {
            base.is_some().then(|| format!("cfs.base.{name}"))
        };
        if let Some(key) = key {
            return Err(KeyError::new(
                key,
                format!(
                    "does not exist in the {model} model: EEVDF removed it in 6.6. This model has base_slice_ns \
                     (debugfs /sys/kernel/debug/sched/base_slice_ns) and sched_tunable_scaling; or run the \
                     4.4 model: add [kernel] version = \"4.4\" to the file (or --set kernel.version=4.4)"
                ),
            ));
        }
    }
    // debugfs `base_slice_ns` is a plain u32 (debug.c:sched_init_debug).
    let slice = tunable(&c.base_slice_ns, &c.base.base_slice_ns, "base_slice_ns", (0, u64::from(u32::MAX)))?;
    let eevdf = EevdfTunables::resolve(cpus, scaling, normalized, slice);
    let mut eevdf_features = EevdfFeatures::defaults(kernel);
    for (name, &on) in &f.features {
        let slot = eevdf_features.get_mut(kernel, name).ok_or_else(|| {
            let why = if SchedFeatures::NAMES.contains(&name.as_str()) {
                format!("a Linux 4.4 (CFS) feature, gone in the {model} model")
            } else if EevdfFeatures::names(KernelModel::LATEST).contains(&name.as_str()) {
                format!("not in the {model} model (a later kernel's feature)")
            } else if let Some(why) = balancer_feature_refusal(kernel, name) {
                why
            } else {
                "unknown or unmodelled scheduler feature".to_string()
            };
            KeyError::new(
                format!("features.{name}"),
                format!("{why}; the {model} model has: {}", EevdfFeatures::names(kernel).join(", ")),
            )
        })?;
        *slot = on;
    }
    let tunables = CfsTunables::resolve(cpus, scaling, d, d, d);
    Ok((tunables, SchedFeatures::default(), eevdf, eevdf_features))
}
