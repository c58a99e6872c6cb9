//! Java `.properties` files, read exactly as `java.util.Properties.load(Reader)` reads them,
//! because PadoGrid users bring their `etc/*.properties` unchanged.
//!
//! The grammar (from `Properties.LineReader` and `Properties.load0`):
//! - A *natural* line ends at `\n`, `\r` or `\r\n`. Leading spaces, tabs and form feeds are
//!   skipped; a blank line is skipped; a line whose first other character is `#` or `!` is a
//!   comment, and a comment never continues onto the next line.
//! - A *logical* line continues onto the next natural line when it ends with an odd number of
//!   backslashes; the backslash is dropped and so is the next line's leading whitespace. A
//!   continuation line that starts with `#` is data, not a comment.
//! - The key ends at the first unescaped `=`, `:`, space, tab or form feed. Whitespace around
//!   the separator is skipped, and at most one `=`/`:` after whitespace is taken as the
//!   separator. Trailing whitespace of a value is kept.
//! - Escapes in keys and values: `\t \n \r \f`, `\uXXXX`, and `\` before any other character
//!   stands for that character (`\\`, `\=`, `\:`, `\ `, `\#`).
//!
//! Invariants: entries keep the order of their first appearance; a repeated key keeps its
//! first position and takes its last value (Java's `Hashtable.put`). The only syntax error
//! Java knows is a malformed `\uXXXX`; it is reported with the file and line.
//!
//! Why not the `java-properties` crate (2.0.0, run over the same Java-parsed fixtures and
//! over this file's unit-test inputs): it reads every shipped `etc/*.properties` and both
//! edge-case fixtures exactly as Java does (the golden test in tests/perf_config.rs passes
//! with it), but it parts from Java on inputs the unit tests below hold to Java's result: a
//! `\uD83D\uDE00` surrogate pair (Java: one `😀`; the crate: an "invalid character" error)
//! and a continuation backslash at end of file with no final newline (Java keeps `b=2` from
//! `b=2\`; the crate drops the line). It also takes `\u+041` as `A` (`u16::from_str_radix`
//! accepts a sign; Java says malformed), its error does not say what followed `\u`, and it
//! yields pairs we would still fold into this ordered, first-position-keeping map. So the
//! grammar stays ours (~200 lines below).

use std::fmt;
use std::path::{Path, PathBuf};

/// A parsed `.properties` file: ordered `(key, value)` pairs and the file they came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    source: String,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: String,
    value: String,
    line: usize,
}

/// Why a properties file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PropertiesError {
    /// The file could not be opened or is not UTF-8.
    #[error("cannot read properties file {path}: {error} (check the -prop path)")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A `\u` escape not followed by four hexadecimal digits (Java: "Malformed \uxxxx encoding").
    #[error("{source_name}:{line}: malformed \\uXXXX escape {found:?} (write four hex digits, or \\\\u for a literal backslash-u)")]
    MalformedUnicode {
        /// The file (or `<string>`).
        source_name: String,
        /// 1-based line where the logical line starts.
        line: usize,
        /// The characters after `\u`.
        found: String,
    },
}

impl Properties {
    /// Reads and parses a file. `source_name` in errors is the path as given.
    pub fn load(path: &Path) -> Result<Self, PropertiesError> {
        let text = std::fs::read_to_string(path).map_err(|error| PropertiesError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses `text`; `source_name` names the input in errors and in [`Properties::source`].
    pub fn parse(text: &str, source_name: &str) -> Result<Self, PropertiesError> {
        let mut props = Properties {
            source: source_name.to_string(),
            entries: Vec::new(),
        };
        for logical in logical_lines(text) {
            let (raw_key, raw_value) = split_key_value(&logical.chars);
            let key = unescape(raw_key, source_name, logical.line)?;
            let value = unescape(raw_value, source_name, logical.line)?;
            props.insert_at(key, value, logical.line);
        }
        Ok(props)
    }

    fn insert_at(&mut self, key: String, value: String, line: usize) {
        match self.entries.iter_mut().find(|e| e.key == key) {
            Some(e) => {
                e.value = value;
                e.line = line;
            }
            None => self.entries.push(Entry { key, value, line }),
        }
    }

    /// Sets `key` (appending it if new), as `Properties.setProperty` does.
    pub fn set(&mut self, key: &str, value: &str) {
        self.insert_at(key.to_string(), value.to_string(), 0);
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.value.as_str())
    }

    /// The 1-based line `key` was last set on (0 when set programmatically).
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.entries.iter().find(|e| e.key == key).map(|e| e.line)
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The file name given to [`Properties::load`]/[`Properties::parse`].
    pub fn source(&self) -> &str {
        &self.source
    }

    /// All entries in order of first appearance.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_str()))
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries whose key starts with `prefix`, with the prefix removed, in order — what
    /// PadoGrid hands a `DataObjectFactory` (`<op>.factory.*` → `factory.*`).
    pub fn strip_prefix(&self, prefix: &str) -> Properties {
        Properties {
            source: self.source.clone(),
            entries: self
                .entries
                .iter()
                .filter_map(|e| {
                    e.key.strip_prefix(prefix).map(|k| Entry {
                        key: k.to_string(),
                        value: e.value.clone(),
                        line: e.line,
                    })
                })
                .collect(),
        }
    }
}

impl fmt::Display for Properties {
    /// `key=value` lines, escaped so that parsing the output gives back the same entries.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.entries {
            writeln!(f, "{}={}", escape(&e.key, true), escape(&e.value, false))?;
        }
        Ok(())
    }
}

/// Escapes as `Properties.store` does (minus `\uXXXX` for non-ASCII: we write UTF-8).
fn escape(s: &str, is_key: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            ' ' if i == 0 || is_key => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

struct LogicalLine {
    chars: Vec<char>,
    line: usize,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\x0c'
}

/// Splits `text` into logical lines, following `Properties.LineReader.readLine`.
fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line_no = 1usize;
    let mut buf: Vec<char> = Vec::new();
    let mut start_line = 1usize;
    let mut skip_white = true;
    let mut appended_begin = false;
    let mut is_new_line = true;
    let mut is_comment = false;
    let mut preceding_backslash = false;
    while let Some(c) = chars.next() {
        let is_eol = c == '\n' || c == '\r';
        if is_eol && c == '\r' && chars.peek() == Some(&'\n') {
            chars.next();
        }
        if skip_white {
            if is_blank(c) {
                continue;
            }
            if !appended_begin && is_eol {
                line_no += 1;
                continue;
            }
            skip_white = false;
            appended_begin = false;
        }
        if is_new_line {
            is_new_line = false;
            start_line = line_no;
            if c == '#' || c == '!' {
                is_comment = true;
                continue;
            }
        }
        if !is_eol {
            if is_comment {
                continue;
            }
            buf.push(c);
            preceding_backslash = c == '\\' && !preceding_backslash;
            continue;
        }
        line_no += 1;
        if is_comment || buf.is_empty() {
            is_comment = false;
            is_new_line = true;
            skip_white = true;
            buf.clear();
            continue;
        }
        if preceding_backslash {
            buf.pop();
            skip_white = true;
            appended_begin = true;
            preceding_backslash = false;
        } else {
            out.push(LogicalLine {
                chars: std::mem::take(&mut buf),
                line: start_line,
            });
            is_new_line = true;
            skip_white = true;
        }
    }
    if !buf.is_empty() && !is_comment {
        if preceding_backslash {
            buf.pop();
        }
        out.push(LogicalLine {
            chars: buf,
            line: start_line,
        });
    }
    out
}

/// Splits a logical line into raw (still escaped) key and value, as `Properties.load0` does.
fn split_key_value(line: &[char]) -> (&[char], &[char]) {
    let limit = line.len();
    let mut key_len = 0;
    let mut value_start = limit;
    let mut has_sep = false;
    let mut preceding_backslash = false;
    while key_len < limit {
        let c = line[key_len];
        if (c == '=' || c == ':') && !preceding_backslash {
            value_start = key_len + 1;
            has_sep = true;
            break;
        } else if is_blank(c) && !preceding_backslash {
            value_start = key_len + 1;
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
        key_len += 1;
    }
    while value_start < limit {
        let c = line[value_start];
        if !is_blank(c) {
            if !has_sep && (c == '=' || c == ':') {
                has_sep = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    (&line[..key_len], &line[value_start.min(limit)..])
}

/// `Properties.loadConvert`: resolves escapes.
fn unescape(raw: &[char], source: &str, line: usize) -> Result<String, PropertiesError> {
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        // A lone trailing backslash cannot reach here (the line reader drops it), but Java
        // would read past the end; we keep nothing, as Java's `\` + EOF continuation does.
        let Some(&e) = raw.get(i) else { break };
        i += 1;
        match e {
            'u' => {
                let hex: String = raw[i..raw.len().min(i + 4)].iter().collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .filter(|_| hex.chars().all(|h| h.is_ascii_hexdigit()));
                let Some(code) = code else {
                    return Err(PropertiesError::MalformedUnicode {
                        source_name: source.to_string(),
                        line,
                        found: hex,
                    });
                };
                i += 4;
                // Java builds UTF-16; a surrogate pair arrives as two escapes.
                if (0xD800..0xDC00).contains(&code)
                    && raw.get(i) == Some(&'\\')
                    && raw.get(i + 1) == Some(&'u')
                {
                    let low: String = raw[(i + 2).min(raw.len())..raw.len().min(i + 6)]
                        .iter()
                        .collect();
                    if let Ok(lo) = u32::from_str_radix(&low, 16) {
                        if (0xDC00..0xE000).contains(&lo) {
                            let cp = 0x10000 + ((code - 0xD800) << 10) + (lo - 0xDC00);
                            if let Some(ch) = char::from_u32(cp) {
                                out.push(ch);
                                i += 6;
                                continue;
                            }
                        }
                    }
                }
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'n' => out.push('\n'),
            'f' => out.push('\x0c'),
            other => out.push(other),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<(String, String)> {
        Properties::parse(text, "t.properties")
            .expect("valid")
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn separators_and_whitespace() {
        assert_eq!(
            parse("a=1\nb:2\nc 3\nd = 4\ne\t:\t5\nf   =   6 \ng\nh=\n  i=7"),
            kv(&[
                ("a", "1"),
                ("b", "2"),
                ("c", "3"),
                ("d", "4"),
                ("e", "5"),
                ("f", "6 "),
                ("g", ""),
                ("h", ""),
                ("i", "7")
            ])
        );
        // Only one separator after whitespace is consumed: the second '=' is value.
        assert_eq!(parse("a = =b"), kv(&[("a", "=b")]));
        assert_eq!(parse("a==b"), kv(&[("a", "=b")]));
        assert_eq!(parse("a b c"), kv(&[("a", "b c")]));
    }

    #[test]
    fn comments_and_blank_lines() {
        assert_eq!(
            parse("# c\n! c2\n   # indented\n\n   \na=1 # not a comment\n#x=2\\\ny=3"),
            kv(&[("a", "1 # not a comment"), ("y", "3")])
        );
    }

    #[test]
    fn continuations() {
        // As g1.comment in group-factory-er: leading whitespace of the next line dropped.
        assert_eq!(
            parse("g1.comment=Ingests Customer \\\n    and Order objects.\nk=v"),
            kv(&[
                ("g1.comment", "Ingests Customer and Order objects."),
                ("k", "v")
            ])
        );
        // Even number of backslashes: no continuation, one literal backslash.
        assert_eq!(parse("a=x\\\\\nb=y"), kv(&[("a", "x\\"), ("b", "y")]));
        // A continuation line starting with # is data; CRLF line ends.
        assert_eq!(
            parse("a=1,\\\r\n  #2\r\nb=3\r\n"),
            kv(&[("a", "1,#2"), ("b", "3")])
        );
        // A continuation into an empty line ends the logical line; EOF after backslash.
        assert_eq!(parse("a=1\\\n\nb=2\\"), kv(&[("a", "1"), ("b", "2")]));
        // Old Mac line ends.
        assert_eq!(parse("a=1\rb=2"), kv(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn escapes() {
        assert_eq!(
            parse("k\\=ey\\:x\\ y=v\\tw\\nx\\u0041\\\\\\=z\\q"),
            kv(&[("k=ey:x y", "v\tw\nxA\\=zq")])
        );
        assert_eq!(parse("e=\\uD83D\\uDE00"), kv(&[("e", "😀")]));
        let err = Properties::parse("a=1\n\nb=\\u12G4", "etc/x.properties").unwrap_err();
        assert_eq!(
            err.to_string(),
            "etc/x.properties:3: malformed \\uXXXX escape \"12G4\" (write four hex digits, or \\\\u for a literal backslash-u)"
        );
    }

    #[test]
    fn order_duplicates_lines() {
        let p = Properties::parse("b=1\na=2\n\nb=3\n", "f").expect("valid");
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![("b", "3"), ("a", "2")]);
        assert_eq!(p.line_of("b"), Some(4));
        assert_eq!(p.line_of("a"), Some(2));
        assert_eq!(p.source(), "f");
    }

    #[test]
    fn display_round_trips() {
        let text = "a\\ b=\\ lead\\=x\\:y\\\\z\ttab\nc=#hash\n";
        let p = Properties::parse(text, "f").expect("valid");
        let again = Properties::parse(&p.to_string(), "f").expect("valid");
        assert_eq!(
            p.iter().collect::<Vec<_>>(),
            again.iter().collect::<Vec<_>>()
        );
    }

    #[test]
    fn strip_prefix_keeps_order() {
        let p = Properties::parse("set1.factory.class=C\nx=1\nset1.key.prefix=a\n", "f")
            .expect("valid");
        let f = p.strip_prefix("set1.");
        assert_eq!(
            f.iter().collect::<Vec<_>>(),
            vec![("factory.class", "C"), ("key.prefix", "a")]
        );
    }

    #[test]
    fn missing_file_names_it() {
        let err = Properties::load(Path::new("/nonexistent/etc/group.properties")).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("cannot read properties file /nonexistent/etc/group.properties: "));
        assert!(err.to_string().ends_with("(check the -prop path)"));
    }
}
