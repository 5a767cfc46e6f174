//! Readers of single TOML values shared by every part of validation:
//! durations, distributions, names and key paths. Each error names the key
//! and what is allowed there.

use super::error::KeyError;
use crate::time::format_duration;
use crate::workload::Dist;
use crate::workload::dist::{SAMPLE_MAX_NS, parse_duration};
use toml::Value;

/// Reads a duration value: an integer (ns) or a string with a unit.
pub(crate) fn duration_value(v: &Value, key: &str) -> Result<u64, KeyError> {
    match v {
        Value::Integer(n) if *n >= 0 && (*n as u64) <= SAMPLE_MAX_NS => Ok(*n as u64),
        Value::Integer(n) if *n < 0 => Err(KeyError::new(
            key,
            format!("{n}: durations cannot be negative; give 0 to {SAMPLE_MAX_NS} ns or a duration such as \"50us\""),
        )),
        Value::Integer(n) => {
            Err(KeyError::new(key, format!("{n} is out of range: a duration is 0 to {} ns", SAMPLE_MAX_NS)))
        }
        Value::String(s) => parse_duration(s).map_err(|m| KeyError::new(key, m)),
        other => Err(KeyError::new(
            key,
            format!("expected a duration such as \"50us\" or an integer of ns, found {}", other.type_str()),
        )),
    }
}

/// A value as the user wrote it, for messages: a string in quotes, a number
/// as written.
pub(crate) fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A duration within `lo..=hi`: the message names the value written and
/// the range allowed, then `why` (", the kernel's sysctl range").
pub(crate) fn duration_in(v: &Value, key: &str, (lo, hi): (u64, u64), why: &str) -> Result<u64, KeyError> {
    let ns = duration_value(v, key)?;
    if (lo..=hi).contains(&ns) {
        return Ok(ns);
    }
    let written = shown(v);
    let same = match v {
        Value::String(s) => s.trim() == format_duration(ns),
        _ => true,
    };
    let value = if same { written } else { format!("{written} ({})", format_duration(ns)) };
    Err(KeyError::new(key, format!("{value} is not allowed: {} to {}{why}", format_duration(lo), format_duration(hi))))
}

pub(super) fn dist_value(v: &Value, key: &str) -> Result<Dist, KeyError> {
    match v {
        Value::String(s) => Dist::parse(s).map_err(|m| KeyError::new(key, m)),
        Value::Integer(_) => duration_value(v, key).map(Dist::Const),
        other => Err(KeyError::new(
            key,
            format!("expected a duration or distribution such as \"exp(200us)\", found {}", other.type_str()),
        )),
    }
}

pub(super) fn opt_duration(v: &Option<Value>, key: &str, default: u64) -> Result<u64, KeyError> {
    v.as_ref().map_or(Ok(default), |v| duration_value(v, key))
}

/// The key path of a task declaration, as `--set` addresses it: `tasks.NAME`
/// (names are letters, digits, `-`, `_` and `:`, so the path splits back).
pub(super) fn task_key(name: &str) -> String {
    format!("tasks.{name}")
}

pub(super) fn check_name(name: &str, key: &str) -> Result<(), KeyError> {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_:".contains(c));
    if ok {
        Ok(())
    } else {
        Err(KeyError::new(key, format!("`{name}`: names are 1-64 characters of letters, digits, `-`, `_` or `:`")))
    }
}
