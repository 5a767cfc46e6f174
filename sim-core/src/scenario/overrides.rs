//! Overrides: setting one value at a dotted key path of the scenario document,
//! before it is deserialized. Variants, `--set key=value` and the web controls
//! all go through `apply`, so they share one meaning and one set of errors.
//!
//! A path walks tables by key and arrays of tables by their `name` (or by
//! index, `tasks.0` or `program[0]`): `tasks.jvm-gc.nice`,
//! `sources.requests.rate_per_s`, `cfs.sched_latency_ns`, `features.HRTICK`,
//! `groups."/scylla".shares` (quote a segment that holds dots or slashes:
//! `groups."/system.slice".shares`; `\"` and `\\` inside quotes). A path has
//! at most [`KEY_SEGMENTS_MAX`] segments, and nothing here recurses on it.
//!
//! Missing optional tables with fixed keys (`cfs`, `kernel`, `features`,
//! `report`, a device's `kyber`, …) are created, so a variant may set a key
//! the base file leaves at its default; whether the key exists in the format
//! is decided by deserialization. Named objects are not: an override can only
//! change a group, device, limiter, I/O queue or class the file declares
//! ([`COLLECTIONS`]), as it can only change a task or source that exists, so a
//! misspelt name is an error instead of a new, empty object.

use super::error::{self, KeyError, Segment, did_you_mean, echo, name_list, render_path};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// Most segments in a key path (`groups."/a/b".cpu.max` has 3); the deepest
/// key of the format has 6 (`io_queues.disk.classes.query.shares` has 5).
pub const KEY_SEGMENTS_MAX: usize = 16;

/// Tables whose keys are names the file declares (`*` matches any key):
/// an override may change what is in them, not add to them. Keep in step
/// with the `BTreeMap<String, …File>` fields of `file.rs`.
pub const COLLECTIONS: [(&[&str], &str); 5] = [
    (&["groups"], "group"),
    (&["devices"], "device"),
    (&["limiters"], "limiter"),
    (&["io_queues"], "I/O queue"),
    (&["io_queues", "*", "classes"], "class"),
];

/// One override: a key path and the value to put there.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The key as the user wrote it, for messages about two spellings.
    pub spelling: String,
    pub segments: Vec<Segment>,
    pub value: Value,
}

/// True for a character that may stand in a string value of the document:
/// anything but control characters and bidi overrides, except tab and the
/// line breaks of a multi-line string.
fn allowed_in_value(c: char) -> bool {
    c == '\t' || c == '\n' || c == '\r' || !error::is_unsafe_char(c)
}

/// `U+001B` for the first unsafe character of `text`.
fn first_unsafe(text: &str, allowed: impl Fn(char) -> bool) -> Option<String> {
    text.chars().find(|&c| !allowed(c)).map(|c| format!("U+{:04X}", c as u32))
}

/// Refuses control characters and bidi overrides in every key of `value`
/// and in every string in it (tab and line breaks allowed in strings),
/// naming the key path. `at` is the path of `value` itself. Iterative: the
/// document's depth is the user's.
pub fn check_text(at: &[Segment], value: &Value) -> Result<(), KeyError> {
    let mut stack: Vec<(Vec<Segment>, &Value)> = vec![(at.to_vec(), value)];
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::String(s) => {
                if let Some(c) = first_unsafe(s, allowed_in_value) {
                    return Err(KeyError::new(
                        render_path(&path),
                        format!(
                            "the string \"{}\" holds the control character {c}; scenario text may not hold control characters (printed, they could rewrite the terminal)",
                            echo(s)
                        ),
                    ));
                }
            }
            Value::Table(t) => {
                for (k, sub) in t.iter().rev() {
                    let mut p = path.clone();
                    p.push(Segment::Key(k.clone()));
                    if let Some(c) = first_unsafe(k, |c| !error::is_unsafe_char(c)) {
                        return Err(KeyError::new(
                            render_path(&p),
                            format!("the key holds the control character {c}; keys may not"),
                        ));
                    }
                    stack.push((p, sub));
                }
            }
            Value::Array(items) => {
                for (i, sub) in items.iter().enumerate().rev() {
                    let mut p = path.clone();
                    p.push(Segment::Index(i));
                    stack.push((p, sub));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses a key path in `--set` syntax: segments split at dots outside
/// double quotes, `[N]` an index, at most [`KEY_SEGMENTS_MAX`] segments.
pub fn parse_path(path: &str) -> Result<Vec<Segment>, KeyError> {
    let shown = || echo(path);
    let bad = |why: &str| {
        KeyError::new(
            shown(),
            format!("not a key path: {why} (write e.g. `cfs.sched_latency_ns` or `groups.\"/a.b\".shares`)"),
        )
    };
    if path.is_empty() {
        return Err(bad("it is empty"));
    }
    if let Some(c) = first_unsafe(path, |c| !error::is_unsafe_char(c)) {
        return Err(bad(&format!("it holds the control character {c}")));
    }
    let mut out: Vec<Segment> = Vec::new();
    let mut cur = String::new();
    // A segment was written (quoted, possibly empty) since the last dot.
    let mut written = false;
    let mut chars = path.chars();
    let push = |out: &mut Vec<Segment>, seg: Segment| {
        out.push(seg);
        if out.len() > KEY_SEGMENTS_MAX {
            return Err(bad(&format!("more than {KEY_SEGMENTS_MAX} segments")));
        }
        Ok(())
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if written || !cur.is_empty() {
                    return Err(bad("a quote inside a segment (quote the whole segment)"));
                }
                loop {
                    match chars.next() {
                        None => return Err(bad("a quote is not closed")),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\')) => cur.push(e),
                            _ => return Err(bad("inside quotes, `\\` escapes only `\"` and `\\`")),
                        },
                        Some(q) => cur.push(q),
                    }
                }
                written = true;
            }
            '.' => {
                if cur.is_empty() && !written {
                    return Err(bad("an empty segment"));
                }
                push(&mut out, Segment::Key(std::mem::take(&mut cur)))?;
                written = false;
            }
            '[' => {
                if !cur.is_empty() || written {
                    push(&mut out, Segment::Key(std::mem::take(&mut cur)))?;
                    written = false;
                } else if !matches!(out.last(), Some(Segment::Index(_))) {
                    return Err(bad("`[N]` follows a key"));
                }
                let Some((digits, _)) = chars.as_str().split_once(']') else {
                    return Err(bad("a `[` is not closed"));
                };
                let index = digits.parse::<usize>().map_err(|_| bad("`[N]` takes a whole number"))?;
                let skip = digits.chars().count() + 1;
                chars.by_ref().take(skip).for_each(drop);
                push(&mut out, Segment::Index(index))?;
                // What follows an index is a dot or another index.
                let rest = chars.as_str();
                if !(rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')) {
                    return Err(bad("`[N]` is followed by `.` or `[`"));
                }
                if let Some(r) = rest.strip_prefix('.') {
                    if r.is_empty() {
                        return Err(bad("an empty segment"));
                    }
                    chars.next();
                }
            }
            _ => {
                if written {
                    return Err(bad("text after a closing quote (put a dot between segments)"));
                }
                cur.push(c);
            }
        }
    }
    if written || !cur.is_empty() {
        push(&mut out, Segment::Key(cur))?;
    } else if !matches!(out.last(), Some(Segment::Index(_))) {
        return Err(bad("an empty segment"));
    }
    if out.iter().any(|s| matches!(s, Segment::Key(k) if k.is_empty())) {
        return Err(bad("an empty segment"));
    }
    Ok(out)
}

impl Override {
    /// The overrides of one `--set key=value`: the key in `--set` syntax,
    /// the value as TOML (`250`, `true`, `"1ms"`, `[1, 2]`), else a bare
    /// string (`1ms`). A table value (`kernel={version="4.4"}`) sets each of
    /// its keys, as in a variant. The value is one line of text.
    pub fn from_text(path: &str, text: &str) -> Result<Vec<Override>, KeyError> {
        let segments = parse_path(path.trim())?;
        let key = || render_path(&segments);
        if let Some(c) = first_unsafe(text, |c| !error::is_unsafe_char(c)) {
            return Err(KeyError::new(
                key(),
                format!(
                    "the value `{}` holds the control character {c}; a --set value is one line of text \
                     (the text after a line break would be lost)",
                    echo(text)
                ),
            ));
        }
        let text = text.trim();
        if let Some(at) = super::nesting::too_deep(text) {
            return Err(KeyError::new(
                key(),
                format!(
                    "the value `{}` nests tables and arrays deeper than {} levels (at byte {at})",
                    echo(text),
                    super::nesting::NESTING_MAX
                ),
            ));
        }
        let value = toml::from_str::<Table>(&format!("v = {text}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| Value::String(text.to_string()));
        // A version written bare (`kernel.version=6.12`) is the text, not a
        // float: a float would make 6.10 and 6.1 the same, so files must
        // quote versions (validate.rs refuses a float there).
        let value = match value {
            Value::Float(_) if VERSION_KEYS.contains(&key().as_str()) => Value::String(text.to_string()),
            v => v,
        };
        check_text(&segments, &value)?;
        let spelling = format!("{}={text}", path.trim());
        match value {
            Value::Table(t) => flatten_under(&spelling, false, segments, t),
            value => Ok(vec![Override { spelling, segments, value }]),
        }
    }
}

/// Keys whose value is a version string.
const VERSION_KEYS: [&str; 2] = ["kernel.version", "kernel.cfs_bandwidth"];

/// Where a walk stands: the path written so far, for messages.
fn where_(segments: &[Segment], upto: usize) -> String {
    render_path(&segments[..upto.min(segments.len())])
}

/// The collection noun if the canonical path `at` is a [`COLLECTIONS`] table.
fn collection(at: &[Segment]) -> Option<&'static str> {
    COLLECTIONS.iter().find_map(|(pattern, noun)| {
        let hit = pattern.len() == at.len()
            && pattern.iter().zip(at).all(|(p, s)| *p == "*" || matches!(s, Segment::Key(k) if k == p));
        hit.then_some(*noun)
    })
}

/// The entry of `items` that `seg` names (by `name`, else by index), or an
/// error saying what there is.
fn find_entry(items: &[Value], seg: &Segment, here: &str, full: &str) -> Result<usize, KeyError> {
    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_string);
    let found = match seg {
        Segment::Index(i) => (*i < items.len()).then_some(*i),
        Segment::Key(k) => items
            .iter()
            .position(|v| name(v).as_deref() == Some(k.as_str()))
            .or_else(|| k.parse::<usize>().ok().filter(|&i| i < items.len())),
    };
    if let Some(i) = found {
        return Ok(i);
    }
    let wrote = match seg {
        Segment::Index(i) => i.to_string(),
        Segment::Key(k) => k.clone(),
    };
    let names: Vec<String> = items.iter().filter_map(name).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let what = match (items.len(), names.is_empty()) {
        (0, _) => format!("`{here}` is empty"),
        (n, true) => format!("its entries are numbered 0..={}", n - 1),
        (n, false) => {
            format!("names: {} (or an index, 0..={}){}", name_list(&names), n - 1, did_you_mean(&wrote, &names))
        }
    };
    Err(KeyError::new(full, format!("no entry `{}` in `{here}`; {what}", echo(&wrote))))
}

/// Sets `ov.value` at `ov.segments` inside `doc`; returns the canonical path
/// it set (array entries by index), by which `apply_all` finds one key set
/// twice. A walk, not a recursion: one step per segment.
pub fn apply(doc: &mut Table, ov: &Override) -> Result<Vec<Segment>, KeyError> {
    let segs = &ov.segments;
    if segs.is_empty() || segs.len() > KEY_SEGMENTS_MAX {
        return Err(KeyError::new(render_path(segs), format!("a key path has 1 to {KEY_SEGMENTS_MAX} segments")));
    }
    if segs[0] == Segment::Key("variants".into()) {
        return Err(KeyError::new(render_path(segs), "variants cannot be overridden"));
    }
    let mut root = Value::Table(std::mem::take(doc));
    let result = walk(&mut root, ov);
    if let Value::Table(t) = root {
        *doc = t;
    }
    result
}

fn walk(root: &mut Value, ov: &Override) -> Result<Vec<Segment>, KeyError> {
    let segs = &ov.segments;
    let mut canon: Vec<Segment> = Vec::with_capacity(segs.len());
    let mut node: &mut Value = root;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let here = where_(segs, i);
        let full = where_(segs, i + 1);
        node = match node {
            Value::Table(t) => {
                let Segment::Key(key) = seg else {
                    return Err(KeyError::new(full, format!("`{here}` is a table, not a list: name one of its keys")));
                };
                if let Some(noun) = collection(&canon)
                    && !t.contains_key(key.as_str())
                {
                    let names: Vec<&str> = t.keys().map(String::as_str).collect();
                    let have = if names.is_empty() {
                        format!("this file declares no {noun}")
                    } else {
                        format!("{}{}: {}", noun, if names.len() == 1 { "" } else { "s" }, name_list(&names))
                    };
                    return Err(KeyError::new(
                        full,
                        format!(
                            "no {noun} `{}` in this file{}; {have}. An override changes a declared {noun}; \
                             declare a new one in the file",
                            echo(key),
                            did_you_mean(key, &names)
                        ),
                    ));
                }
                canon.push(seg.clone());
                if last {
                    let replaces_many = match t.get(key.as_str()) {
                        Some(Value::Table(_)) => true,
                        Some(Value::Array(a)) => a.iter().any(Value::is_table) && !matches!(ov.value, Value::Array(_)),
                        _ => false,
                    };
                    if replaces_many {
                        return Err(KeyError::new(full, "is a table; override one of its keys instead"));
                    }
                    t.insert(key.clone(), ov.value.clone());
                    return Ok(canon);
                }
                t.entry(key.clone()).or_insert_with(|| Value::Table(Table::new()))
            }
            Value::Array(items) => {
                let index = find_entry(items, seg, &here, &full)?;
                canon.push(Segment::Index(index));
                if last {
                    if items[index].is_table() {
                        return Err(KeyError::new(full, "names a whole entry; override one of its keys instead"));
                    }
                    items[index] = ov.value.clone();
                    return Ok(canon);
                }
                &mut items[index]
            }
            _ => {
                return Err(KeyError::new(here, "is a value, not a table: cannot set a key inside it"));
            }
        };
    }
    unreachable!("the loop returns on the last segment")
}

/// Applies one batch of overrides (a variant, or the `--set`s of one
/// command line) in order. One key set twice in a batch, under any two
/// spellings (`"kernel.version"` and `kernel = { version = … }`, or a key and
/// a key inside it), is refused, naming both: one of them would be lost.
pub fn apply_all(doc: &mut Table, ovs: &[Override]) -> Result<(), KeyError> {
    let mut seen: BTreeMap<Vec<Segment>, &str> = BTreeMap::new();
    for ov in ovs {
        let canon = apply(doc, ov)?;
        // A key set before at this path or above it, or below it.
        let clash = (1..=canon.len())
            .find_map(|n| seen.get(&canon[..n]).copied())
            .or_else(|| seen.range(canon.clone()..).next().filter(|(k, _)| k.starts_with(&canon)).map(|(_, s)| *s));
        if let Some(earlier) = clash {
            return Err(KeyError::new(
                render_path(&ov.segments),
                format!(
                    "set twice, as `{}` and as `{}`; keep one (the second would silently replace the first)",
                    echo(earlier),
                    echo(&ov.spelling)
                ),
            ));
        }
        seen.insert(canon, &ov.spelling);
    }
    Ok(())
}

/// Flattens a `[variants.NAME]` table into overrides. Its own keys are key
/// paths in `--set` syntax (`"cfs.sched_latency_ns"`,
/// `'groups."/a"."cpu.max"'`); keys of tables nested in it are plain keys
/// (`kernel = { version = "6.12" }`, `[variants.x.groups."/a.b"]`).
pub fn flatten(table: &Table) -> Result<Vec<Override>, KeyError> {
    let mut out = Vec::new();
    for (k, v) in table {
        let segments = parse_path(k)?;
        let spelling = error::render_segment(k);
        match v {
            Value::Table(sub) => out.extend(flatten_under(&spelling, true, segments, sub.clone())?),
            _ => out.push(Override { spelling, segments, value: v.clone() }),
        }
    }
    Ok(out)
}

/// The overrides of a table value at `segments`: one per scalar or array
/// inside, in order, without recursing. An empty table sets nothing and is
/// refused. Each is spelt `spelling`, followed by its keys if `extend`.
fn flatten_under(
    spelling: &str,
    extend: bool,
    segments: Vec<Segment>,
    table: Table,
) -> Result<Vec<Override>, KeyError> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, Vec<Segment>, Value)> = vec![(spelling.to_string(), segments, Value::Table(table))];
    while let Some((spelling, segments, v)) = stack.pop() {
        match v {
            Value::Table(t) if t.is_empty() => {
                return Err(KeyError::new(render_path(&segments), "an empty table sets nothing; give its keys"));
            }
            Value::Table(t) => {
                if segments.len() >= KEY_SEGMENTS_MAX {
                    return Err(KeyError::new(
                        render_path(&segments),
                        format!("tables nested deeper than a key path's {KEY_SEGMENTS_MAX} segments"),
                    ));
                }
                for (k, sub) in t.into_iter().rev() {
                    let s = if extend { format!("{spelling}.{}", error::render_segment(&k)) } else { spelling.clone() };
                    let mut p = segments.clone();
                    p.push(Segment::Key(k));
                    stack.push((s, p, sub));
                }
            }
            value => out.push(Override { spelling, segments, value }),
        }
    }
    Ok(out)
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
            [groups."/a.b"]
            [devices.sda]
            [[tasks]]
            name = "a"
            nice = 0
            program = [{ run = "1ms" }]
            [[tasks]]
            name = "b"
            "#,
        )
        .unwrap()
    }

    fn set(d: &mut Table, k: &str, v: &str) -> Result<(), KeyError> {
        apply_all(d, &Override::from_text(k, v)?)
    }

    fn k(s: &str) -> Segment {
        Segment::Key(s.into())
    }

    #[test]
    fn sets_by_path_and_by_name() {
        let mut d = doc();
        set(&mut d, "cfs.sched_latency_ns", "1ms").unwrap();
        set(&mut d, "tasks.b.nice", "5").unwrap();
        set(&mut d, "features.HRTICK", "true").unwrap();
        set(&mut d, "seed", "9").unwrap();
        set(&mut d, "tasks.a.program[0].run", "2ms").unwrap();
        set(&mut d, "groups.\"/a.b\".shares", "7").unwrap();
        set(&mut d, "kernel", "{ version = \"4.4\" }").unwrap();
        assert_eq!(d["cfs"]["sched_latency_ns"].as_str(), Some("1ms"));
        assert_eq!(d["tasks"][1]["nice"].as_integer(), Some(5));
        assert_eq!(d["tasks"][0]["program"][0]["run"].as_str(), Some("2ms"));
        assert_eq!(d["features"]["HRTICK"].as_bool(), Some(true));
        assert_eq!(d["seed"].as_integer(), Some(9));
        assert_eq!(d["groups"]["/a.b"]["shares"].as_integer(), Some(7));
        assert_eq!(d["kernel"]["version"].as_str(), Some("4.4"));
    }

    #[test]
    fn paths_parse_with_quotes_indices_and_a_bound() {
        assert_eq!(parse_path(r#"groups."/a.b"."cpu.max""#).unwrap(), [k("groups"), k("/a.b"), k("cpu.max")]);
        assert_eq!(
            parse_path("tasks.t.program[2].run").unwrap(),
            [k("tasks"), k("t"), k("program"), Segment::Index(2), k("run")]
        );
        assert_eq!(parse_path(r#""a\"b""#).unwrap(), [k("a\"b")]);
        for bad in ["", "a..b", ".a", "a.", "\"a", "a\"b\"", "a[x]", "[0]", "a.\"\"", "a[0]b", "a\u{1b}b"] {
            assert!(parse_path(bad).is_err(), "{bad:?}");
        }
        let deep = vec!["a"; 30_000].join(".");
        let e = parse_path(&deep).unwrap_err();
        assert!(e.message.contains("more than 16 segments"), "{}", e.message);
        assert!(e.key.len() < 200, "{}", e.key.len());
        assert!(parse_path(&vec!["a"; 16].join(".")).is_ok());
    }

    #[test]
    fn errors_name_the_path_and_what_exists() {
        let mut d = doc();
        let e = set(&mut d, "tasks.zz.nice", "1").unwrap_err();
        assert_eq!(e.key, "tasks.zz");
        assert!(e.message.contains("names: a, b (or an index, 0..=1)"), "{}", e.message);
        let e = set(&mut d, "tasks.5.nice", "1").unwrap_err();
        assert!(e.message.contains("0..=1"), "{}", e.message);
        let e = set(&mut d, "tasks.a.program.3.run", "1ms").unwrap_err();
        assert_eq!(e.key, "tasks.a.program.3");
        assert!(e.message.contains("its entries are numbered 0..=0"), "{}", e.message);
        let e = set(&mut d, "seed.x", "1").unwrap_err();
        assert_eq!(e.key, "seed");
        let e = set(&mut d, "cfs", "1").unwrap_err();
        assert!(e.message.contains("is a table"));
        let e = set(&mut d, "tasks", "1").unwrap_err();
        assert!(e.message.contains("is a table"));
    }

    /// A misspelt group, device, limiter or I/O queue is an error naming the
    /// ones there are, not a new empty object.
    #[test]
    fn named_objects_are_not_created() {
        let mut d = doc();
        let e = set(&mut d, "groups.\"/a.c\".shares", "5").unwrap_err();
        assert_eq!(e.key, "groups.\"/a.c\"");
        assert!(e.message.contains("no group `/a.c`") && e.message.contains("did you mean `/a.b`"), "{}", e.message);
        let e = set(&mut d, "devices.sdb.elevator", "noop").unwrap_err();
        assert!(e.message.contains("no device `sdb`") && e.message.contains("device: sda"), "{}", e.message);
        for key in ["limiters.x.floor", "io_queues.disk.policy"] {
            let e = set(&mut d, key, "1").unwrap_err();
            assert!(e.message.contains("this file declares no"), "{key}: {}", e.message);
        }
        // Tables with fixed keys are still created.
        set(&mut d, "devices.sda.kyber.read_lat_nsec", "1").unwrap();
        set(&mut d, "report.victim", "a").unwrap();
        assert!(d.get("limiters").is_none() || d["limiters"].as_table().is_some_and(Table::is_empty));
    }

    #[test]
    fn one_key_twice_in_a_batch_is_refused_naming_both_spellings() {
        let t: Table = toml::from_str("\"kernel.version\" = \"6.18\"\nkernel = { version = \"6.12\" }\n").unwrap();
        let ovs = flatten(&t).unwrap();
        let e = apply_all(&mut doc(), &ovs).unwrap_err();
        assert!(e.message.contains("`\"kernel.version\"`") && e.message.contains("`kernel.version`"), "{}", e.message);
        // By name and by index; a key and a key inside it.
        let mut ovs = Override::from_text("tasks.a.nice", "1").unwrap();
        ovs.extend(Override::from_text("tasks[0].nice", "2").unwrap());
        assert!(apply_all(&mut doc(), &ovs).unwrap_err().message.contains("set twice"));
        let mut ovs = Override::from_text("tasks.a.program", "[{ run = \"1ms\" }]").unwrap();
        ovs.extend(Override::from_text("tasks.a.program.0.run", "2ms").unwrap());
        assert!(apply_all(&mut doc(), &ovs).unwrap_err().message.contains("set twice"));
    }

    #[test]
    fn flattens_nested_and_dotted_keys() {
        let t: Table = toml::from_str(
            "\"cfs.sched_latency_ns\" = \"1ms\"\n[features]\nHRTICK = true\n[groups.\"/a.b\"]\nshares = 1\n",
        )
        .unwrap();
        let paths: Vec<String> = flatten(&t).unwrap().into_iter().map(|o| render_path(&o.segments)).collect();
        assert_eq!(paths, vec!["cfs.sched_latency_ns", "features.HRTICK", "groups.\"/a.b\".shares"]);
        let t: Table = toml::from_str("[kernel]\n").unwrap();
        assert!(flatten(&t).unwrap_err().message.contains("empty table"));
    }

    #[test]
    fn set_values_are_one_line_without_controls() {
        for v in ["1\nname = \"x\"", "\"\u{1b}[2J\"", "\"a\\u001bb\"", "\"\u{202e}\""] {
            let e = Override::from_text("name", v).unwrap_err();
            assert!(e.message.contains("control character"), "{v:?}: {}", e.message);
            assert!(!e.message.contains('\u{1b}') && !e.message.contains('\n'), "{}", e.message);
        }
        let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
        assert!(Override::from_text("a", &deep).unwrap_err().message.contains("deeper than"));
    }
}
