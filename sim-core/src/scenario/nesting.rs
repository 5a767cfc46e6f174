//! The nesting guard: how deep a scenario's text nests (tables, arrays,
//! dotted keys), measured on the text before anything parses it, so that
//! the parser and everything after it only meet shallow input. Used by
//! `Scenario::from_toml` and by the overrides' `--set` values.

/// Deepest nesting of tables, arrays and dotted keys a scenario file may
/// have (a scenario needs about 6); checked on the text before parsing, so
/// nothing downstream (parser, clone, drop, deserializer) meets deep input.
pub const NESTING_MAX: usize = 32;

/// The byte offset where `text` first nests deeper than [`NESTING_MAX`]:
/// brackets and braces outside strings and comments, plus the dots of the
/// key being written, plus those of the current `[table.header]`. One pass,
/// no recursion; it may count one level too many (a float's dot), never
/// too few.
pub fn too_deep(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut depth, mut dots, mut header) = (0usize, 0usize, 0usize, 0usize);
    let mut line_start = true;
    let mut in_header = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let triple = b[i..].starts_with(if c == b'"' { b"\"\"\"" } else { b"\'\'\'" });
                i += if triple { 3 } else { 1 };
                while i < b.len() {
                    if c == b'"' && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if !triple && b[i] == b'\n' {
                        break;
                    }
                    if b[i] == c && (!triple || b[i..].starts_with(&[c, c, c])) {
                        i += if triple { 3 } else { 1 };
                        // A closing triple may be followed by up to two more quotes.
                        while triple && i < b.len() && b[i] == c {
                            i += 1;
                        }
                        break;
                    }
                    i += 1;
                }
                line_start = false;
                continue;
            }
            b'[' if depth == 0 && line_start => {
                in_header = true;
                header = 0;
                depth += 1;
                dots = 0;
            }
            b'[' | b'{' => {
                depth += 1;
                dots = 0;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if in_header && depth == 0 {
                    in_header = false;
                    header = dots + 1;
                }
                if !in_header {
                    dots = 0;
                }
            }
            b'.' => dots += 1,
            b'=' | b',' | b'\n' => dots = 0,
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            line_start = false;
        }
        if c == b'\n' {
            line_start = true;
        }
        if depth + dots + header > NESTING_MAX {
            return Some(i);
        }
        i += 1;
    }
    None
}
