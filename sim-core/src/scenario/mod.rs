//! Scenario files: parsing, variants, overrides and validation.
//!
//! `Scenario::from_toml` parses in two stages (`file.rs`: serde structure with
//! unknown keys rejected; `validate.rs`: values checked into a typed
//! `ScenarioSpec`). Variants and `--set` overrides edit the TOML document
//! (`overrides.rs`) and go through the same two stages again, so an override
//! can never produce a scenario the file format could not.

pub mod bandwidth;
pub mod devices;
pub mod error;
mod fair_settings;
pub mod file;
pub mod groups;
pub mod hops;
pub mod io_queues;
mod limiters;
mod machine;
mod nesting;
pub mod noise;
pub mod rt;
pub mod overrides;
mod sources;
mod spec;
mod steps;
mod tasks;
pub mod validate;
mod values;

pub use error::{Origin, ScenarioError};
pub use nesting::{NESTING_MAX, too_deep};
pub use overrides::Override;
pub use spec::{BackgroundSpec, NoiseSpec, DlParams, GroupSpec, Groups, MachineSpec, RtSpec, ScenarioSpec, SourceSpec, TaskSpec, limits};

use error::{KeyError, Segment};
use file::ScenarioFile;
use toml::{Table, Value};

/// Largest scenario text accepted, in bytes.
pub const FILE_SIZE_MAX: usize = 4 * 1024 * 1024;

/// A parsed, validated scenario, with the document it came from so variants
/// and overrides can be applied to it.
#[derive(Clone, Debug)]
pub struct Scenario {
    file: String,
    /// The document without its `variants` table.
    doc: Table,
    variants: Vec<(String, Vec<Override>)>,
    variant: Option<String>,
    /// Override batches in the order given (one per `--set` command line or
    /// `with_overrides` call); a later batch may replace a key of an earlier.
    overrides: Vec<Vec<Override>>,
    pub spec: ScenarioSpec,
}

/// Line and column (from 1, in characters) of byte offset `at` of `text`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A TOML syntax error on one line: `line L, column C: what`, the position
/// counted as editors do (from 1, in characters).
fn syntax_message(text: &str, e: &toml::de::Error) -> String {
    let what = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let (line, column) = position(text, span.start);
            format!("line {line}, column {column}: {what}")
        }
        None => what,
    }
}

fn syntax(file: &str, message: String) -> ScenarioError {
    ScenarioError::Syntax {
        file: error::bounded(file, error::FILE_ECHO_MAX),
        message: error::bounded(&message, error::MESSAGE_MAX),
    }
}

/// `--set` pairs as one batch of overrides.
fn batch(overrides: &[(&str, &str)]) -> Result<Vec<Override>, KeyError> {
    let mut out = Vec::new();
    for (k, v) in overrides {
        out.extend(Override::from_text(k, v)?);
    }
    Ok(out)
}

impl Scenario {
    /// Parses and validates scenario text. `file` names it in error messages.
    /// Every variant is validated too, so a broken variant is reported up front.
    pub fn from_toml(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_with(file, text, &[])
    }

    /// Parses scenario text with `--set` overrides applied before anything
    /// is validated: the base and every variant are validated with them, so
    /// `--set kernel.version=4.4` makes a file written for 4.4 (without a
    /// `[kernel]` table) load. Variants applied later keep the overrides.
    pub fn from_toml_with(file: &str, text: &str, overrides: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        if text.len() > FILE_SIZE_MAX {
            return Err(syntax(file, format!("the file is {} bytes; the limit is {FILE_SIZE_MAX}", text.len())));
        }
        if let Some(at) = too_deep(text) {
            let (line, column) = position(text, at);
            return Err(syntax(
                file,
                format!(
                    "line {line}, column {column}: tables, arrays and dotted keys nested deeper than \
                     {NESTING_MAX} levels; a scenario needs a few"
                ),
            ));
        }
        let mut doc: Table = toml::from_str(text).map_err(|e| syntax(file, syntax_message(text, &e)))?;
        let whole = Value::Table(doc);
        overrides::check_text(&[], &whole).map_err(|e| e.into_error(file, Origin::File))?;
        let Value::Table(d) = whole else { unreachable!("built as a table") };
        doc = d;
        let variants = match doc.remove("variants") {
            None => Vec::new(),
            Some(Value::Table(t)) => {
                let mut out = Vec::new();
                for (name, v) in t {
                    let Value::Table(body) = v else {
                        return Err(KeyError::new(
                            error::render_path(&[Segment::Key("variants".into()), Segment::Key(name)]),
                            "a variant is a table of overrides",
                        )
                        .into_error(file, Origin::File));
                    };
                    let ovs =
                        overrides::flatten(&body).map_err(|e| e.into_error(file, Origin::Variant(name.clone())))?;
                    out.push((name, ovs));
                }
                out
            }
            Some(_) => {
                return Err(KeyError::new("variants", "expected tables such as [variants.tuned]")
                    .into_error(file, Origin::File));
            }
        };
        let sets = batch(overrides).map_err(|e| e.into_error(file, Origin::Override))?;
        let batches = if sets.is_empty() { Vec::new() } else { vec![sets] };
        let spec = assemble(file, &doc, None, &batches)?;
        let base = Scenario { file: file.to_string(), doc, variants, variant: None, overrides: batches, spec };
        for (name, _) in &base.variants {
            let Err(e) = base.with_variant(name) else { continue };
            // A variant that only the overrides break (a 4.4 file's variant
            // setting `cfs.sched_latency_ns`, loaded with `--set
            // kernel.version=6.18`) is refused when it is chosen, not here:
            // running the base must not need every variant to fit them. A
            // variant broken in the file as written is refused at once.
            let fine_without = !base.overrides.is_empty()
                && assemble(file, &base.doc, None, &[]).is_ok_and(|spec| {
                    let plain = Scenario { overrides: Vec::new(), spec, ..base.clone() };
                    plain.with_variant(name).is_ok()
                });
            if !fine_without {
                return Err(e);
            }
        }
        Ok(base)
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// Variant names in file order.
    pub fn variant_names(&self) -> Vec<&str> {
        self.variants.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The variant applied, `None` for the base.
    pub fn variant(&self) -> Option<&str> {
        self.variant.as_deref()
    }

    /// This scenario with variant `name` applied (to the base, replacing any
    /// variant applied before; `--set` overrides already applied are kept).
    pub fn with_variant(&self, name: &str) -> Result<Scenario, ScenarioError> {
        let Some((_, ovs)) = self.variants.iter().find(|(n, _)| n == name) else {
            let names = self.variant_names();
            let have = if names.is_empty() {
                "this file has no variants".to_string()
            } else {
                format!("this file has: {}{}", error::name_list(&names), error::did_you_mean(name, &names))
            };
            return Err(KeyError::new("variants", format!("no variant `{}`; {have}", error::echo(name)))
                .into_error(&self.file, Origin::File));
        };
        let spec = assemble(&self.file, &self.doc, Some((name, ovs)), &self.overrides)?;
        Ok(Scenario { variant: Some(name.to_string()), spec, ..self.clone() })
    }

    /// This scenario with a measured machine model applied: `text` (from
    /// `file_name`) is a TOML document holding only `[machine.noise]`; it
    /// replaces the scenario's own `[machine.noise]`, if any, and the
    /// scenario is validated again. Errors about `machine.noise…` name the
    /// noise file; anything else in it is refused.
    pub fn with_noise(&self, file_name: &str, text: &str) -> Result<Scenario, ScenarioError> {
        if text.len() > FILE_SIZE_MAX {
            return Err(syntax(file_name, format!("the file is {} bytes; the limit is {FILE_SIZE_MAX}", text.len())));
        }
        if let Some(at) = too_deep(text) {
            let (line, column) = position(text, at);
            return Err(syntax(file_name, format!("line {line}, column {column}: nested deeper than {NESTING_MAX} levels")));
        }
        let doc: Table = toml::from_str(text).map_err(|e| syntax(file_name, syntax_message(text, &e)))?;
        let only = "a noise file holds only the [machine.noise] section";
        let refuse = |key: String| KeyError::new(key, only).into_error(file_name, Origin::File);
        if let Some(k) = doc.keys().find(|k| k.as_str() != "machine") {
            return Err(refuse(error::render_path(&[Segment::Key(k.clone())])));
        }
        let noise = match doc.get("machine") {
            None => return Err(refuse("machine.noise".into())),
            Some(Value::Table(m)) => {
                if let Some(k) = m.keys().find(|k| k.as_str() != "noise") {
                    return Err(refuse(error::render_path(&[Segment::Key("machine".into()), Segment::Key(k.clone())])));
                }
                match m.get("noise") {
                    Some(n @ Value::Table(_)) => n.clone(),
                    Some(_) => {
                        return Err(KeyError::new("machine.noise", "expected a table: [machine.noise]")
                            .into_error(file_name, Origin::File));
                    }
                    None => return Err(refuse("machine.noise".into())),
                }
            }
            Some(_) => return Err(refuse("machine".into())),
        };
        overrides::check_text(&[], &Value::Table(doc.clone())).map_err(|e| e.into_error(file_name, Origin::File))?;
        let mut next = self.clone();
        match next.doc.get_mut("machine") {
            Some(Value::Table(m)) => {
                m.insert("noise".into(), noise);
            }
            _ => {
                // `[machine]` is required; validation reports its absence.
                let mut m = Table::new();
                m.insert("noise".into(), noise);
                next.doc.insert("machine".into(), Value::Table(m));
            }
        }
        let variant = self.variant.as_deref().and_then(|v| self.variants.iter().find(|(n, _)| n == v));
        next.spec = assemble(&self.file, &next.doc, variant.map(|(n, o)| (n.as_str(), o.as_slice())), &next.overrides)
            .map_err(|e| match e {
                ScenarioError::Invalid { key, message, .. } if key.starts_with("machine.noise") => {
                    KeyError { key, message }.into_error(file_name, Origin::File)
                }
                e => e,
            })?;
        Ok(next)
    }

    /// This scenario with `key.path = value` overrides applied, the values
    /// written as on the command line (`"6000000"`, `"1ms"`, `"true"`). The
    /// pairs are one batch: a key may appear once (under any spelling); a
    /// later call may set a key an earlier one set.
    pub fn with_overrides(&self, overrides: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        let added = batch(overrides).map_err(|e| e.into_error(&self.file, Origin::Override))?;
        let mut next = self.clone();
        if !added.is_empty() {
            next.overrides.push(added);
        }
        let variant = self.variant.as_deref().and_then(|v| self.variants.iter().find(|(n, _)| n == v));
        next.spec = assemble(&self.file, &self.doc, variant.map(|(n, o)| (n.as_str(), o.as_slice())), &next.overrides)?;
        Ok(next)
    }
}

/// `doc` with the variant and then the override batches applied, validated.
/// A validation error is blamed on the overrides only if it is not there
/// without them (a variant's own mistake stays the variant's).
fn assemble(
    file: &str,
    doc: &Table,
    variant: Option<(&str, &[Override])>,
    batches: &[Vec<Override>],
) -> Result<ScenarioSpec, ScenarioError> {
    let own = || variant.map_or(Origin::File, |(n, _)| Origin::Variant(n.to_string()));
    let mut plain = doc.clone();
    if let Some((_, ovs)) = variant {
        overrides::apply_all(&mut plain, ovs).map_err(|e| e.into_error(file, own()))?;
    }
    let mut d = plain.clone();
    for b in batches {
        overrides::apply_all(&mut d, b).map_err(|e| e.into_error(file, Origin::Override))?;
    }
    build(&d).map_err(|e| {
        let origin =
            if batches.is_empty() || build(&plain).err().as_ref() == Some(&e) { own() } else { Origin::Override };
        e.into_error(file, origin)
    })
}

/// serde's "unknown field `nicee`, expected one of `name`, `nice`, …": the
/// nearest allowed key, if one is close.
fn unknown_field_hint(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else { return String::new() };
    let Some((field, allowed)) = rest.split_once('`') else { return String::new() };
    let choices: Vec<&str> = allowed.split('`').skip(1).step_by(2).collect();
    error::did_you_mean(field, &choices)
}

/// serde names Rust types (`expected u64`); say what to write instead.
fn plain_types(message: &str) -> String {
    [
        ("expected u64", "expected an integer of 0 or more"),
        ("expected u32", "expected an integer of 0 or more"),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
    ]
    .iter()
    .fold(message.to_string(), |m, (from, to)| m.replace(from, to))
}

/// serde_path_to_error's path as `--set` spells it: `tasks[2].nicee` →
/// `tasks.jvm-gc.nicee` (an entry of `tasks` or `sources` named by its
/// `name` when that name is valid and unique; else the index stays),
/// `groups./g.cpu.max.burst` → `groups."/g"."cpu.max.burst"`.
fn named_path(doc: &Table, path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment as S;
    let mut out: Vec<Segment> = Vec::new();
    for seg in path.iter() {
        let next = match seg {
            S::Map { key } => Segment::Key(key.clone()),
            S::Enum { variant } => Segment::Key(variant.clone()),
            S::Unknown => Segment::Key("?".into()),
            S::Seq { index } => match out.as_slice() {
                [Segment::Key(array)] if array == "tasks" || array == "sources" => {
                    let items = doc.get(array.as_str()).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_string);
                    match items.get(*index).and_then(name) {
                        Some(n)
                            if items.iter().filter(|v| name(v).as_deref() == Some(n.as_str())).count() == 1
                                && values::check_name(&n, "").is_ok() =>
                        {
                            Segment::Key(n)
                        }
                        _ => Segment::Index(*index),
                    }
                }
                _ => Segment::Index(*index),
            },
        };
        out.push(next);
    }
    error::render_path(&out)
}

/// A serde message with the user's text in it (between backquotes, or in
/// a quoted string) echoed: escaped and bounded.
fn echo_quoted(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(start) = rest.find(['`', '"']) {
        let quote = rest[start..].chars().next().unwrap_or('`');
        out.push_str(&rest[..=start]);
        let body = &rest[start + 1..];
        // A quoted string is Debug-escaped: skip `\"`.
        let mut end = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' && quote == '"' {
                escaped = true;
            } else if c == quote {
                end = Some(i);
                break;
            }
        }
        let Some(end) = end else {
            out.push_str(&error::echo(body));
            return out;
        };
        out.push_str(&error::echo(&body[..end]));
        out.push(quote);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Deserializes (stage one, with the key path of any error) and validates (stage two).
fn build(doc: &Table) -> Result<ScenarioSpec, KeyError> {
    let value = Value::Table(doc.clone());
    let file: ScenarioFile = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = if e.path().to_string() == "." { String::new() } else { named_path(doc, e.path()) };
        // The deserializer appends its own "in `path`" line; the path is
        // already in front of the message, so keep the first line only.
        let message = e.into_inner().to_string();
        let first = message.lines().next().unwrap_or("").trim_end();
        KeyError::new(path, echo_quoted(&plain_types(first)) + &unknown_field_hint(first))
    })?;
    validate::validate(&file)
}
