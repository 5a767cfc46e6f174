//! Errors in scenario input. Every error names the file, the key path and what
//! is allowed; none of them is a panic.

use std::fmt;

/// Where a bad value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The scenario file itself.
    File,
    /// A `[variants.NAME]` section.
    Variant(String),
    /// A `--set key=value` override (or a web control).
    Override,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The text is not valid TOML.
    #[error("{file}: TOML syntax error: {message}")]
    Syntax { file: String, message: String },
    /// A key is unknown, has the wrong type, or its value is not allowed.
    #[error("{file}: {}{}{message}", origin_prefix(.origin), key_prefix(.key))]
    Invalid { file: String, origin: Origin, key: String, message: String },
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() { String::new() } else { format!("{key}: ") }
}

fn origin_prefix(o: &Origin) -> String {
    match o {
        Origin::File => String::new(),
        Origin::Variant(v) => format!("variant `{v}`: "),
        Origin::Override => "--set: ".to_string(),
    }
}

impl ScenarioError {
    /// The key path the error is about (`""` for syntax errors).
    pub fn key(&self) -> &str {
        match self {
            ScenarioError::Syntax { .. } => "",
            ScenarioError::Invalid { key, .. } => key,
        }
    }
}

/// An error about one key, before the file name and origin are attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError {
    pub key: String,
    pub message: String,
}

impl KeyError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> KeyError {
        KeyError { key: key.into(), message: message.into() }
    }

    pub fn into_error(self, file: &str, origin: Origin) -> ScenarioError {
        ScenarioError::Invalid { file: file.to_string(), origin, key: self.key, message: self.message }
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}
