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
pub mod file;
pub mod groups;
pub mod hops;
pub mod io_queues;
pub mod overrides;
pub mod validate;

pub use error::{Origin, ScenarioError};
pub use groups::{GroupSpec, Groups};
pub use overrides::Override;
pub use validate::{MachineSpec, ScenarioSpec, SourceSpec, TaskSpec, limits};

use error::KeyError;
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
    overrides: Vec<Override>,
    pub spec: ScenarioSpec,
}

/// A TOML syntax error on one line: `line L, column C: what`, the position
/// counted as editors do (from 1, in characters).
fn syntax_message(text: &str, e: &toml::de::Error) -> String {
    let what = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {what}")
        }
        None => what,
    }
}

impl Scenario {
    /// Parses and validates scenario text. `file` names it in error messages.
    /// Every variant is validated too, so a broken variant is reported up front.
    pub fn from_toml(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        if text.len() > FILE_SIZE_MAX {
            return Err(ScenarioError::Syntax {
                file: file.into(),
                message: format!("the file is {} bytes; the limit is {FILE_SIZE_MAX}", text.len()),
            });
        }
        let mut doc: Table = toml::from_str(text)
            .map_err(|e| ScenarioError::Syntax { file: file.into(), message: syntax_message(text, &e) })?;
        let variants = match doc.remove("variants") {
            None => Vec::new(),
            Some(Value::Table(t)) => {
                let mut out = Vec::new();
                for (name, v) in t {
                    let Value::Table(body) = v else {
                        return Err(KeyError::new(format!("variants.{name}"), "a variant is a table of overrides")
                            .into_error(file, Origin::File));
                    };
                    out.push((name, overrides::flatten(&body)));
                }
                out
            }
            Some(_) => {
                return Err(KeyError::new("variants", "expected tables such as [variants.tuned]")
                    .into_error(file, Origin::File));
            }
        };
        let spec = build(&doc).map_err(|e| e.into_error(file, Origin::File))?;
        let base = Scenario { file: file.to_string(), doc, variants, variant: None, overrides: Vec::new(), spec };
        for (name, _) in &base.variants {
            base.with_variant(name)?;
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
            return Err(KeyError::new(
                "variants",
                format!("no variant `{name}`; this file has: {}", self.variant_names().join(", ")),
            )
            .into_error(&self.file, Origin::File));
        };
        let mut next = self.clone();
        next.variant = Some(name.to_string());
        next.rebuild(Origin::Variant(name.to_string()), ovs.clone())
    }

    /// This scenario with `key.path = value` overrides applied, the values
    /// written as on the command line (`"6000000"`, `"1ms"`, `"true"`).
    pub fn with_overrides(&self, overrides: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        let ovs: Vec<Override> = overrides.iter().map(|(k, v)| Override::from_text(k, v)).collect();
        self.clone().rebuild(Origin::Override, ovs)
    }

    fn rebuild(mut self, origin: Origin, added: Vec<Override>) -> Result<Scenario, ScenarioError> {
        let variant_ovs = match &self.variant {
            Some(v) => self.variants.iter().find(|(n, _)| n == v).map(|(_, o)| o.clone()).unwrap_or_default(),
            None => Vec::new(),
        };
        if origin == Origin::Override {
            self.overrides.extend(added);
        }
        let mut doc = self.doc.clone();
        let stages = [
            (Origin::Variant(self.variant.clone().unwrap_or_default()), &variant_ovs),
            (Origin::Override, &self.overrides),
        ];
        for (o, ovs) in stages {
            for ov in ovs.iter() {
                overrides::apply(&mut doc, ov).map_err(|e| e.into_error(&self.file, o.clone()))?;
            }
        }
        // Errors past this point come from the overrides: the base validated.
        let blame = if self.overrides.is_empty() { origin } else { Origin::Override };
        self.spec = build(&doc).map_err(|e| e.into_error(&self.file, blame))?;
        Ok(self)
    }
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

/// `tasks[2].nicee` → `tasks.jvm-gc.nicee`: an entry of `tasks` or `sources`
/// named by its `name`, as `--set` addresses it, when that name is valid and
/// unique (else the index stays).
fn named_path(doc: &Table, path: &str) -> String {
    for array in ["tasks", "sources"] {
        let Some(rest) = path.strip_prefix(array).and_then(|r| r.strip_prefix('[')) else { continue };
        let Some((index, tail)) = rest.split_once(']') else { continue };
        let Some(items) = doc.get(array).and_then(Value::as_array) else { continue };
        let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_string);
        let Some(n) = index.parse::<usize>().ok().and_then(|i| items.get(i)).and_then(name) else { continue };
        let unique = items.iter().filter(|v| name(v).as_deref() == Some(n.as_str())).count() == 1;
        if unique && validate::check_name(&n, "").is_ok() {
            return format!("{array}.{n}{tail}");
        }
    }
    path.to_string()
}

/// Deserializes (stage one, with the key path of any error) and validates (stage two).
fn build(doc: &Table) -> Result<ScenarioSpec, KeyError> {
    let value = Value::Table(doc.clone());
    let file: ScenarioFile = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { named_path(doc, &path) };
        // The deserializer appends its own "in `path`" line; the path is
        // already in front of the message, so keep the first line only.
        let message = e.into_inner().to_string();
        let first = message.lines().next().unwrap_or("").trim_end();
        KeyError::new(path, plain_types(first) + &unknown_field_hint(first))
    })?;
    validate::validate(&file)
}
