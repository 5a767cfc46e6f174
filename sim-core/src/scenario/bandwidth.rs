//! CPU quota keys of a group (`cfs_quota_us`/`cfs_period_us`/`cfs_burst_us`
//! as cgroup v1 names them, `"cpu.max"`/`"cpu.max.burst"` as v2 does), the
//! `[kernel] cfs_bandwidth` rules and `[cfs] sched_cfs_bandwidth_slice_us`,
//! checked as `tg_set_cfs_bandwidth` (4.4 core.c; 5.14+ for burst) checks them.

use super::error::KeyError;
use super::file::{GroupFile, ScenarioFile};
use crate::sched::bandwidth::{
    BandwidthRules, BandwidthSpec, DEFAULT_BANDWIDTH_SLICE_US, DEFAULT_CFS_PERIOD_NS, MAX_CFS_QUOTA_PERIOD_NS,
    MIN_CFS_QUOTA_PERIOD_NS,
};
use crate::sched::model::KernelModel;
use toml::Value;

/// `max_cfs_runtime` (5.x+ core.c): `MAX_BW` µs, `(1 << 44) - 1`.
const MAX_CFS_RUNTIME_US: u64 = (1 << 44) - 1;
/// The largest `sched_cfs_bandwidth_slice_us` accepted: the longest period.
const SLICE_MAX_US: i64 = 1_000_000;

/// `[kernel] cfs_bandwidth`: the model's own rules by default; the 4.4 fair
/// class may run the later CFS-era rules (4.18, 5.4, 5.14) to isolate them.
pub fn rules(f: &ScenarioFile, kernel: KernelModel) -> Result<BandwidthRules, KeyError> {
    let key = "kernel.cfs_bandwidth";
    let own = BandwidthRules::of_model(kernel);
    let text = match f.kernel.cfs_bandwidth.as_ref() {
        None => return Ok(own),
        // A float loses how the version was written (5.10 == 5.1): refused,
        // as for kernel.version; `--set` keeps the text (`Override::from_text`).
        Some(Value::Float(x)) => {
            return Err(KeyError::new(key, format!("{x} is a number; write it as a string: \"{x}\"")));
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(KeyError::new(key, format!("expected a version string (found {})", other.type_str())));
        }
    };
    let accepted = accepted_rules(kernel);
    match accepted.iter().find(|(v, _)| *v == text.as_str()) {
        Some((_, r)) => Ok(*r),
        None => {
            let names: Vec<String> = accepted.iter().map(|(v, _)| format!("{v:?}")).collect();
            let why = if kernel.runs_own_bandwidth_rules() {
                format!("the {} model runs its own rules, those of {}", kernel.describe(), own.version())
            } else {
                "the 4.4 fair class with that version's bandwidth rules".to_string()
            };
            Err(KeyError::new(
                key,
                format!(
                    "{text:?} is not allowed under the {} model: allowed: {} ({why})",
                    kernel.describe(),
                    names.join(", ")
                ),
            ))
        }
    }
}

/// The `[kernel] cfs_bandwidth` values a model accepts, with the rules each
/// runs: an EEVDF model its own rules, named by the rules' version or by any
/// model version whose rules they are (under 6.18: "6.6", "6.12", "6.18");
/// the 4.4 fair class the CFS-era rules (4.4, 4.18, 5.4, 5.14), every rule
/// set but those the EEVDF models run as their own.
fn accepted_rules(kernel: KernelModel) -> Vec<(&'static str, BandwidthRules)> {
    let own = BandwidthRules::of_model(kernel);
    if kernel.runs_own_bandwidth_rules() {
        let mut out = vec![(own.version(), own)];
        for m in KernelModel::ALL {
            if BandwidthRules::of_model(m) == own && m.version() != own.version() {
                out.push((m.version(), own));
            }
        }
        out
    } else {
        let owned = |r: BandwidthRules| {
            KernelModel::ALL.into_iter().any(|m| m.runs_own_bandwidth_rules() && BandwidthRules::of_model(m) == r)
        };
        BandwidthRules::ALL.into_iter().filter(|r| !owned(*r)).map(|r| (r.version(), r)).collect()
    }
}

/// `[cfs] sched_cfs_bandwidth_slice_us` (the sysctl's minimum is 1).
pub fn slice_us(f: &ScenarioFile) -> Result<u64, KeyError> {
    match f.cfs.sched_cfs_bandwidth_slice_us {
        None => Ok(DEFAULT_BANDWIDTH_SLICE_US),
        Some(v) if (1..=SLICE_MAX_US).contains(&v) => Ok(v as u64),
        Some(v) => Err(KeyError::new(
            "cfs.sched_cfs_bandwidth_slice_us",
            format!("{v} is outside 1..={SLICE_MAX_US} µs (the sysctl's minimum is 1; no period is longer than 1 s)"),
        )),
    }
}

/// A group's quota, period and burst; `None` when it sets none.
pub fn group_bandwidth(g: &GroupFile, key: &str) -> Result<Option<BandwidthSpec>, KeyError> {
    let v1 = g.cfs_quota_us.is_some() || g.cfs_period_us.is_some() || g.cfs_burst_us.is_some();
    let v2 = g.cpu_max.is_some() || g.cpu_max_burst.is_some();
    if v1 && v2 {
        return Err(KeyError::new(
            key,
            "sets both cgroup v1 keys (cfs_quota_us, cfs_period_us, cfs_burst_us) and v2 keys (\"cpu.max\", \
             \"cpu.max.burst\"); use one interface",
        ));
    }
    let (quota_us, period_us, burst_us, names) = if v2 {
        let (q, p) = match &g.cpu_max {
            None => (None, None),
            Some(v) => cpu_max(v, &format!("{key}.\"cpu.max\""))?,
        };
        (q, p, g.cpu_max_burst, ["\"cpu.max\"", "\"cpu.max\"", "\"cpu.max.burst\""])
    } else if v1 {
        // -1 (any negative value in 4.4 tg_set_cfs_quota) means unlimited; the
        // issue asks that other negatives be refused.
        let q = match g.cfs_quota_us {
            Some(-1) | None => None,
            Some(q) if q < 0 => {
                return Err(KeyError::new(
                    format!("{key}.cfs_quota_us"),
                    format!("{q}: a quota is -1 (unlimited) or at least 1000 µs"),
                ));
            }
            Some(q) => Some(q),
        };
        (q, g.cfs_period_us, g.cfs_burst_us, ["cfs_quota_us", "cfs_period_us", "cfs_burst_us"])
    } else {
        return Ok(None);
    };
    let key_of = |i: usize| format!("{key}.{}", names[i]);
    let period_us = period_us.unwrap_or((DEFAULT_CFS_PERIOD_NS / 1_000) as i64);
    let (min_p, max_p) = (MIN_CFS_QUOTA_PERIOD_NS / 1_000, MAX_CFS_QUOTA_PERIOD_NS / 1_000);
    if period_us < min_p as i64 || period_us > max_p as i64 {
        return Err(KeyError::new(
            key_of(1),
            format!("{period_us} µs is outside the kernel's period range {min_p}..={max_p} µs (1 ms to 1 s)"),
        ));
    }
    let quota_ns = match quota_us {
        None => None,
        Some(q) if q < min_p as i64 || q as u64 > MAX_CFS_RUNTIME_US => {
            return Err(KeyError::new(
                key_of(0),
                format!(
                    "{q} µs: a quota is at least {min_p} µs (1 ms) and at most {MAX_CFS_RUNTIME_US} µs, or unlimited"
                ),
            ));
        }
        Some(q) => Some(q as u64 * 1_000),
    };
    let burst_us = burst_us.unwrap_or(0);
    if burst_us < 0 || burst_us as u64 > MAX_CFS_RUNTIME_US {
        return Err(KeyError::new(key_of(2), format!("{burst_us}: a burst is 0 to {MAX_CFS_RUNTIME_US} µs")));
    }
    // The kernel checks a burst only against a quota (tg_set_cfs_bandwidth,
    // 6.6 core.c: `quota != RUNTIME_INF && (burst > quota || burst + quota >
    // max_cfs_runtime)`); with an unlimited group it is kept and unused.
    if let Some(q) = quota_ns {
        if burst_us as u64 * 1_000 > q {
            return Err(KeyError::new(
                key_of(2),
                format!("{burst_us} µs is above the quota ({} µs): a burst is at most the quota", q / 1_000),
            ));
        }
        if burst_us as u64 * 1_000 + q > MAX_CFS_RUNTIME_US * 1_000 {
            return Err(KeyError::new(
                key_of(2),
                format!("{burst_us} µs plus the quota exceeds {MAX_CFS_RUNTIME_US} µs"),
            ));
        }
    }
    Ok(Some(BandwidthSpec { quota_ns, period_ns: period_us as u64 * 1_000, burst_ns: burst_us as u64 * 1_000 }))
}

/// `cpu.max`: "QUOTA PERIOD", "max PERIOD", "QUOTA" or "max" (µs).
fn cpu_max(v: &Value, key: &str) -> Result<(Option<i64>, Option<i64>), KeyError> {
    let form = "write \"QUOTA PERIOD\" (µs, e.g. \"200000 100000\"), \"max PERIOD\", \"QUOTA\" or \"max\"";
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Integer(n) => n.to_string(),
        other => return Err(KeyError::new(key, format!("expected a string (found {}): {form}", other.type_str()))),
    };
    let mut parts = text.split_whitespace();
    let quota = match parts.next() {
        Some("max") => None,
        Some(q) => match q.parse::<i64>() {
            Ok(q) if q >= 0 => Some(q),
            _ => return Err(KeyError::new(key, format!("{text:?}: the quota is a count of µs or \"max\"; {form}"))),
        },
        None => return Err(KeyError::new(key, format!("empty; {form}"))),
    };
    let period = match parts.next() {
        None => None,
        Some(p) => match p.parse::<i64>() {
            Ok(p) if p >= 0 => Some(p),
            _ => return Err(KeyError::new(key, format!("{text:?}: the period is a count of µs; {form}"))),
        },
    };
    if parts.next().is_some() {
        return Err(KeyError::new(key, format!("{text:?}: more than two fields; {form}")));
    }
    Ok((quota, period))
}

/// Checks that need the rules and the hierarchy: burst needs 5.14+, and a
/// v1 child may not have a larger quota/period ratio than its nearest
/// limited ancestor (`tg_cfs_schedulable_down`, 4.4 core.c; v2 takes the
/// smaller one instead, which changes nothing at run time).
pub fn check(f: &ScenarioFile, groups: &[super::spec::GroupSpec], rules: BandwidthRules) -> Result<(), KeyError> {
    for g in groups.iter().skip(1) {
        let Some(b) = g.bandwidth else { continue };
        let key = format!("groups.\"{}\"", g.path);
        let file = f.groups.get(&g.path);
        if b.burst_ns > 0 && !rules.has_burst() {
            let k = if file.is_some_and(|x| x.cpu_max_burst.is_some()) { "\"cpu.max.burst\"" } else { "cfs_burst_us" };
            return Err(KeyError::new(
                format!("{key}.{k}"),
                format!(
                    "burst does not exist in the {} bandwidth rules: it came in 5.14 (set kernel.cfs_bandwidth = \
                     \"5.14\", or a 6.x kernel.version)",
                    rules.version()
                ),
            ));
        }
        let v1 = file.is_some_and(|x| x.cfs_quota_us.is_some());
        let Some(q) = b.quota_ns else { continue };
        let mut up = g.parent;
        while let Some(p) = up {
            if let Some(pq) = groups[p].bandwidth.and_then(|pb| pb.quota_ns.map(|x| (x, pb.period_ns))) {
                // to_ratio: quota << 20 / period, compared as cross products.
                if v1 && u128::from(q) * u128::from(pq.1) > u128::from(pq.0) * u128::from(b.period_ns) {
                    return Err(KeyError::new(
                        format!("{key}.cfs_quota_us"),
                        format!(
                            "{} µs per {} µs is more than its parent {}'s {} µs per {} µs; cgroup v1 refuses a child \
                             quota above its parent's (tg_cfs_schedulable_down)",
                            q / 1_000,
                            b.period_ns / 1_000,
                            groups[p].path,
                            pq.0 / 1_000,
                            pq.1 / 1_000
                        ),
                    ));
                }
                break;
            }
            up = groups[p].parent;
        }
    }
    Ok(())
}
