//! Overrides: setting one scalar at a dotted key path of the scenario document,
//! before it is deserialized. Variants, `--set key=value` and the web controls
//! all go through `apply`, so they share one meaning and one set of errors.
//!
//! A path walks tables by key and arrays of tables by their `name` (or by
//! index): `tasks.jvm-gc.nice`, `sources.requests.rate_per_s`,
//! `cfs.sched_latency_ns`, `features.HRTICK`, `groups./scylla.shares`
//! (quote a segment that contains dots: `groups."/system.slice".shares`). Missing tables and keys are
//! created, so a variant may set a key the base file leaves at its default;
//! whether the key exists in the format is decided by deserialization.

use super::error::KeyError;
use toml::{Table, Value};

/// One override: a dotted key path and the value to put there.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub path: String,
    pub value: Value,
}

impl Override {
    /// Parses the value of a `--set key=value` as TOML (`250`, `true`,
    /// `"1ms"`), falling back to a bare string (`1ms`).
    pub fn from_text(path: &str, text: &str) -> Override {
        let text = text.trim();
        let value = toml::from_str::<Table>(&format!("v = {text}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| Value::String(text.to_string()));
        // A version written bare (`kernel.version=6.12`) is the text, not a
        // float: a float would make 6.10 and 6.1 the same, so files must
        // quote versions (validate.rs refuses a float there).
        let value = match value {
            Value::Float(_) if VERSION_KEYS.contains(&path.trim()) => Value::String(text.to_string()),
            v => v,
        };
        Override { path: path.trim().to_string(), value }
    }
}

/// Keys whose value is a version string.
const VERSION_KEYS: [&str; 2] = ["kernel.version", "kernel.cfs_bandwidth"];

/// Splits a key path at dots outside double quotes, so a group path with dots
/// can be named: `groups."/system.slice".shares`.
fn split_path(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in path.chars() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(String::new()),
            _ => out.last_mut().expect("never empty").push(c),
        }
    }
    out
}

/// Sets `ov.value` at `ov.path` inside `doc`.
pub fn apply(doc: &mut Table, ov: &Override) -> Result<(), KeyError> {
    let segments = split_path(&ov.path);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    if ov.path.is_empty() || segments.iter().any(|s| s.is_empty()) {
        return Err(KeyError::new(&ov.path, "not a key path (write e.g. `cfs.sched_latency_ns`)"));
    }
    if segments[0] == "variants" {
        return Err(KeyError::new(&ov.path, "variants cannot be overridden"));
    }
    let mut table = doc;
    for (i, seg) in segments.iter().enumerate() {
        let here = segments[..=i].join(".");
        let last = i + 1 == segments.len();
        if last {
            if matches!(table.get(*seg), Some(Value::Table(_))) && !matches!(ov.value, Value::Table(_)) {
                return Err(KeyError::new(here, "is a table; override one of its keys instead"));
            }
            table.insert((*seg).to_string(), ov.value.clone());
            return Ok(());
        }
        let entry = table.entry((*seg).to_string()).or_insert_with(|| Value::Table(Table::new()));
        table = match entry {
            Value::Table(t) => t,
            Value::Array(items) => {
                let next = segments[i + 1];
                let names: Vec<String> =
                    items.iter().filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string)).collect();
                let found = find_named(items, next).ok_or_else(|| {
                    KeyError::new(
                        format!("{here}.{next}"),
                        format!("no entry named `{next}` in `{here}`; names: {}", names.join(", ")),
                    )
                })?;
                // Skip the name segment: continue inside the chosen element.
                return apply_inside(found, &segments[i + 2..], &format!("{here}.{next}"), &ov.value);
            }
            _ => return Err(KeyError::new(here, "is a value, not a table: cannot set a key inside it")),
        };
    }
    unreachable!("loop returns on the last segment")
}

fn apply_inside(table: &mut Table, rest: &[&str], prefix: &str, value: &Value) -> Result<(), KeyError> {
    if rest.is_empty() {
        return Err(KeyError::new(prefix, "names a whole entry; override one of its keys instead"));
    }
    let mut sub = Table::new();
    std::mem::swap(&mut sub, table);
    let result = apply(&mut sub, &Override { path: rest.join("."), value: value.clone() })
        .map_err(|e| KeyError::new(format!("{prefix}.{}", e.key), e.message));
    std::mem::swap(&mut sub, table);
    result
}

/// The element of an array of tables whose `name` is `key`, or whose index it is.
fn find_named<'a>(items: &'a mut [Value], key: &str) -> Option<&'a mut Table> {
    let pos = items
        .iter()
        .position(|v| v.get("name").and_then(Value::as_str) == Some(key))
        .or_else(|| key.parse::<usize>().ok().filter(|&i| i < items.len()))?;
    items[pos].as_table_mut()
}

/// Flattens a `[variants.NAME]` table into overrides: nested tables become
/// dotted paths, and keys that are themselves dotted (`"cfs.sched_latency_ns"`)
/// are paths already.
pub fn flatten(table: &Table) -> Vec<Override> {
    fn walk(prefix: &str, t: &Table, out: &mut Vec<Override>) {
        for (k, v) in t {
            let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            match v {
                Value::Table(sub) => walk(&path, sub, out),
                _ => out.push(Override { path, value: v.clone() }),
            }
        }
    }
    let mut out = Vec::new();
    walk("", table, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Table {
        toml::from_str(
            r#"
            seed = 1
            [cfs]
            sched_latency_ns = "6ms"
            [[tasks]]
            name = "a"
            nice = 0
            [[tasks]]
            name = "b"
            "#,
        )
        .unwrap()
    }

    #[test]
    fn sets_by_path_and_by_name() {
        let mut d = doc();
        apply(&mut d, &Override::from_text("cfs.sched_latency_ns", "1ms")).unwrap();
        apply(&mut d, &Override::from_text("tasks.b.nice", "5")).unwrap();
        apply(&mut d, &Override::from_text("features.HRTICK", "true")).unwrap();
        apply(&mut d, &Override::from_text("seed", "9")).unwrap();
        assert_eq!(d["cfs"]["sched_latency_ns"].as_str(), Some("1ms"));
        assert_eq!(d["tasks"][1]["nice"].as_integer(), Some(5));
        assert_eq!(d["features"]["HRTICK"].as_bool(), Some(true));
        assert_eq!(d["seed"].as_integer(), Some(9));
    }

    #[test]
    fn errors_name_the_path() {
        let mut d = doc();
        let e = apply(&mut d, &Override::from_text("tasks.zz.nice", "1")).unwrap_err();
        assert_eq!(e.key, "tasks.zz");
        assert!(e.message.contains("a, b"), "{}", e.message);
        let e = apply(&mut d, &Override::from_text("seed.x", "1")).unwrap_err();
        assert_eq!(e.key, "seed");
        let e = apply(&mut d, &Override::from_text("cfs", "1")).unwrap_err();
        assert!(e.message.contains("is a table"));
    }

    #[test]
    fn flattens_nested_and_dotted_keys() {
        let t: Table = toml::from_str("\"cfs.sched_latency_ns\" = \"1ms\"\n[features]\nHRTICK = true\n").unwrap();
        let paths: Vec<String> = flatten(&t).into_iter().map(|o| o.path).collect();
        assert_eq!(paths, vec!["cfs.sched_latency_ns", "features.HRTICK"]);
    }
}
