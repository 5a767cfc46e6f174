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

/// ` (did you mean `NEAREST`?)` when one of `choices` is within a small edit
/// distance of `word` (a third of its length, at least 1, counting a swap of
/// neighbours as one edit); empty otherwise.
pub fn did_you_mean(word: &str, choices: &[&str]) -> String {
    let limit = (word.chars().count() / 3).max(1);
    choices
        .iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map_or(String::new(), |(_, c)| format!(" (did you mean `{c}`?)"))
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggestions_are_near_misses_only() {
        let steps = ["run", "sleep", "sleep_until", "wait", "wake", "serve"];
        assert_eq!(did_you_mean("wiat", &steps), " (did you mean `wait`?)");
        assert_eq!(did_you_mean("sleeep", &steps), " (did you mean `sleep`?)");
        assert_eq!(did_you_mean("sleep_untill", &steps), " (did you mean `sleep_until`?)");
        assert_eq!(did_you_mean("rn", &steps), " (did you mean `run`?)");
        assert_eq!(did_you_mean("jog", &steps), "");
        assert_eq!(did_you_mean("", &steps), "");
    }
}
