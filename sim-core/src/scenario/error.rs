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

    /// The error with its file and origin. Every field is made safe to print
    /// here, whoever built the message: control characters are shown
    /// escaped and each field's length is bounded (`bounded`).
    pub fn into_error(self, file: &str, origin: Origin) -> ScenarioError {
        let origin = match origin {
            Origin::Variant(v) => Origin::Variant(echo(&v)),
            o => o,
        };
        ScenarioError::Invalid {
            file: bounded(file, FILE_ECHO_MAX),
            origin,
            key: bounded(&self.key, KEY_ECHO_MAX),
            message: bounded(&self.message, MESSAGE_MAX),
        }
    }
}

/// Longest echo of user text (a value, a name) in an error, in characters.
pub const ECHO_MAX: usize = 80;
/// Longest key path in an error, in characters (a path has at most
/// `overrides::KEY_SEGMENTS_MAX` segments, each echoed at most `ECHO_MAX`).
const KEY_ECHO_MAX: usize = 400;
/// Longest file name in an error, in characters.
pub(crate) const FILE_ECHO_MAX: usize = 400;
/// Longest message of an error, in characters: every message is one line
/// well under 4 KiB, whatever it echoes.
pub const MESSAGE_MAX: usize = 1500;

/// True for characters that must not reach a terminal raw: C0 and C1
/// controls, DEL, and the bidirectional overrides and isolates that reorder
/// what is shown (Trojan Source, CVE-2021-42574).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character shown as Rust writes it (`\u{1b}`),
/// so an error can name it without obeying it.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` escaped, cut at `max` characters with `…(N bytes)` saying how
/// long it was.
pub fn bounded(text: &str, max: usize) -> String {
    let escaped = escape_controls(text);
    if escaped.chars().count() <= max {
        return escaped;
    }
    let cut: String = escaped.chars().take(max).collect();
    format!("{cut}…({} bytes)", text.len())
}

/// User text (a value, a name, an unknown key) as an error echoes it:
/// control characters escaped, at most `ECHO_MAX` characters.
pub fn echo(text: &str) -> String {
    bounded(text, ECHO_MAX)
}

/// One segment of a key path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    /// A table key, or an array entry named by its `name` (or by an index
    /// written as a key: `tasks.0`).
    Key(String),
    /// An array entry by index, written `[N]`.
    Index(usize),
}

/// A key path as `--set` takes it: `groups."/kubepods/pod-api"."cpu.max"`,
/// `tasks.jvm-gc.program[0].run`. A segment other than letters, digits, `-`
/// and `_` is double-quoted (`"` and `\` inside escaped by a backslash);
/// every segment is echoed (escaped, bounded). Every error that names a key
/// path it built renders it here.
pub fn render_path(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        match s {
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
            Segment::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&render_segment(k));
            }
        }
    }
    out
}

/// One key as `render_path` writes it.
pub fn render_segment(key: &str) -> String {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if bare {
        return echo(key);
    }
    format!("\"{}\"", echo(&key.replace('\\', "\\\\").replace('"', "\\\"")))
}

/// `a, b, c` for at most ten names (each echoed), then `… (N in all)`.
pub fn name_list(names: &[&str]) -> String {
    const SHOWN: usize = 10;
    let mut out = names.iter().take(SHOWN).map(|n| echo(n)).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(", … ({} in all)", names.len()));
    }
    out
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// ` (did you mean `NEAREST`?)` when one of `choices` is within a small edit
/// distance of `word` (a third of its length, at least 1, counting a swap of
/// neighbours as one edit); empty otherwise.
/// Words or choices longer than `ECHO_MAX` are not compared (the distance
/// costs time and memory in the product of the lengths).
pub fn did_you_mean(word: &str, choices: &[&str]) -> String {
    let len = word.chars().count();
    if len > ECHO_MAX {
        return String::new();
    }
    let limit = (len / 3).max(1);
    choices
        .iter()
        .filter(|c| c.len() <= 4 * ECHO_MAX)
        .map(|c| (strsim::damerau_levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map_or(String::new(), |(_, c)| format!(" (did you mean `{}`?)", echo(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_as_set_takes_them() {
        let k = |s: &str| Segment::Key(s.to_string());
        assert_eq!(render_path(&[k("groups"), k("/g"), k("cpu.max.burst")]), r#"groups."/g"."cpu.max.burst""#);
        assert_eq!(
            render_path(&[k("tasks"), k("jvm-gc"), k("program"), Segment::Index(0), k("run")]),
            "tasks.jvm-gc.program[0].run"
        );
        assert_eq!(render_path(&[k("a\"b\\")]), r#""a\"b\\""#);
        assert_eq!(render_path(&[k("")]), r#""""#);
    }

    #[test]
    fn echoes_are_escaped_and_bounded() {
        assert_eq!(echo("\u{1b}]0;pwned\u{7}"), "\\u{1b}]0;pwned\\u{7}");
        assert_eq!(echo("a\u{202e}b\u{9b}"), "a\\u{202e}b\\u{9b}");
        let long = "9".repeat(309);
        let e = echo(&long);
        assert!(e.ends_with("…(309 bytes)") && e.chars().count() < 100, "{e}");
        let huge = "k".repeat(3_000_000);
        let err = KeyError::new(render_path(&[Segment::Key(huge.clone())]), format!("unknown `{huge}`"))
            .into_error("f", Origin::Override);
        assert!(err.to_string().len() < 4096, "{}", err.to_string().len());
        assert_eq!(name_list(&["a", "b"]), "a, b");
        let many: Vec<String> = (0..20).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(name_list(&many).ends_with("9, … (20 in all)"));
    }

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
