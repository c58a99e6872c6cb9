//! YCSB's properties: Java `.properties` files (`-P FILE`, each later file over the earlier)
//! and `-p name=value` overrides (over every file, whatever their order on the line), as
//! YCSB's `Client` merges them.
//!
//! The file syntax is `java.util.Properties`'s: `#` and `!` start a comment line; a key ends at
//! the first unescaped `=`, `:` or white space; a line ending in an odd number of `\`
//! continues on the next (its leading white space dropped); `\t`, `\n`, `\r`, `\f` and `\uXXXX`
//! are escapes, and `\` before anything else is that character.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a property's value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// CoreWorkload's or the client's default.
    Default,
    /// A `-P` file (or a built-in workload file, by its name).
    File(PathBuf),
    /// A `-p` override.
    Flag,
    /// A flag of its own (`-threads`, `-target`).
    Named(&'static str),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::Flag => f.write_str("-p"),
            Origin::Named(flag) => f.write_str(flag),
        }
    }
}

/// Merged properties, each with where its value came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    values: BTreeMap<String, (String, Origin)>,
}

impl Properties {
    /// Sets `name` (a later set wins).
    pub fn set(&mut self, name: &str, value: &str, origin: Origin) {
        self.values
            .insert(name.to_string(), (value.to_string(), origin));
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(|(v, _)| v.as_str())
    }

    /// Where `name`'s value came from.
    pub fn origin(&self, name: &str) -> Option<&Origin> {
        self.values.get(name).map(|(_, o)| o)
    }

    /// Every (name, value, origin), by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &Origin)> {
        self.values
            .iter()
            .map(|(n, (v, o))| (n.as_str(), v.as_str(), o))
    }

    /// Adds every property of a file's `text` (read from `origin`), over what is set.
    pub fn merge_text(&mut self, text: &str, origin: &Origin) {
        for (name, value) in parse(text) {
            self.set(&name, &value, origin.clone());
        }
    }
}

/// A `-p name=value` override, split; the error names it and the fix.
pub fn split_override(given: &str) -> Result<(String, String), String> {
    match given.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!(
            "-p {given:?}: give name=value, e.g. -p recordcount=100000"
        )),
    }
}

/// Reads a `-P` file; a missing file named as one of YCSB's six (`workloads/workloada`, or
/// just `workloada`) is edgebench's copy of it, `Ok(None)` otherwise so the caller can say so.
pub fn read_file(path: &Path) -> Result<(String, Origin), String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((text, Origin::File(path.to_path_buf()))),
        Err(e) => {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            match super::workloads::builtin(name) {
                Some(text) if e.kind() == std::io::ErrorKind::NotFound => {
                    Ok((text.to_string(), Origin::File(PathBuf::from(name))))
                }
                _ => Err(format!(
                    "-P {}: cannot read it ({e}): give a YCSB property file, such as \
                     etc/ycsb/workloada",
                    path.display()
                )),
            }
        }
    }
}

/// The (key, value) pairs of a `.properties` text, in order.
pub fn parse(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut logical = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if logical.is_empty() && (trimmed.is_empty() || trimmed.starts_with(['#', '!'])) {
            continue;
        }
        let mut piece = trimmed;
        // An odd count of trailing backslashes continues the line.
        let trailing = piece.chars().rev().take_while(|&c| c == '\\').count();
        if trailing % 2 == 1 {
            piece = &piece[..piece.len() - 1];
            logical.push_str(piece);
            if lines.clone().next().is_some() {
                continue;
            }
        } else {
            logical.push_str(piece);
        }
        out.push(split_line(&logical));
        logical.clear();
    }
    out
}

/// Splits one logical line into its key and value, unescaping both.
fn split_line(line: &str) -> (String, String) {
    let mut chars = line.char_indices().peekable();
    let mut end = line.len();
    let mut escaped = false;
    for (i, c) in chars.by_ref() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' | ' ' | '\t' | '\x0c' => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let key = &line[..end];
    let mut rest = line[end..].trim_start_matches([' ', '\t', '\x0c']);
    if let Some(r) = rest.strip_prefix(['=', ':']) {
        rest = r.trim_start_matches([' ', '\t', '\x0c']);
    }
    (unescape(key), unescape(rest))
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.clone().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => {
                        out.push(ch);
                        for _ in 0..4 {
                            chars.next();
                        }
                    }
                    _ => out.push('u'),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_properties_syntax() {
        let text = "# comment\n! also\n  recordcount=1000\nworkload : site.ycsb.workloads.CoreWorkload\n\
                    readallfields true\nlong = a\\\n    b\\\\\nkey\\=with=eq\nempty=\nuni=\\u0041\\tX\n";
        assert_eq!(
            parse(text),
            vec![
                ("recordcount".into(), "1000".into()),
                ("workload".into(), "site.ycsb.workloads.CoreWorkload".into()),
                ("readallfields".into(), "true".into()),
                ("long".into(), "ab\\".into()),
                ("key=with".into(), "eq".into()),
                ("empty".into(), "".into()),
                ("uni".into(), "A\tX".into()),
            ]
        );
    }

    #[test]
    fn later_sources_win_and_overrides_split() {
        let mut p = Properties::default();
        p.merge_text("a=1\nb=2", &Origin::File("one".into()));
        p.merge_text("b=3", &Origin::File("two".into()));
        p.set("a", "9", Origin::Flag);
        assert_eq!(p.get("a"), Some("9"));
        assert_eq!(p.get("b"), Some("3"));
        assert_eq!(p.origin("b"), Some(&Origin::File("two".into())));
        assert_eq!(
            split_override("x=y=z"),
            Ok(("x".to_string(), "y=z".to_string()))
        );
        assert!(split_override("novalue")
            .unwrap_err()
            .contains("name=value"));
    }

    #[test]
    fn a_missing_workload_file_is_the_builtin_copy() {
        let (text, origin) = read_file(Path::new("workloads/workloadc")).unwrap();
        assert!(text.contains("readproportion=1"));
        assert_eq!(origin, Origin::File("workloadc".into()));
        let e = read_file(Path::new("/nonexistent/mine")).unwrap_err();
        assert!(e.starts_with("-P /nonexistent/mine: cannot read it"), "{e}");
    }
}
