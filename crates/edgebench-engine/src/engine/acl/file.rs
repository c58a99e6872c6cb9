//! The ACL file (`aclfile`): one `user <name> <rules...>` line per user, as ACL SAVE writes
//! and ACL LOAD and `--aclfile` read. Loading is all or nothing: any bad line leaves the
//! users as they were, and the error names the file and line of each problem (Redis's
//! texts).

use std::io::Write;
use std::path::Path;

use super::user::{merge_selectors, valid_name, User};
use super::RuleError;

/// Parses an ACL file's text into users; `path` names the file in errors.
pub(crate) fn parse(path: &str, text: &str, all_channels: bool) -> Result<Vec<User>, String> {
    let mut users: Vec<User> = Vec::new();
    let mut errors = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let n = i + 1;
        let line = line.trim_matches([' ', '\t', '\r', '\n']);
        if line.is_empty() {
            continue;
        }
        // Words as Redis's `sdssplitargs` splits them: "quoted words" and 'single' ones, so
        // a password with a space can be written (`">my pass"`).
        let Ok(words) = crate::resp::parse::split_args(line.as_bytes()) else {
            errors.push_str(&format!("{path}:{n}: unbalanced quotes in acl line. "));
            continue;
        };
        let words: Vec<String> = words
            .into_iter()
            .map(|w| String::from_utf8_lossy(&w).into_owned())
            .collect();
        if words.first().map(String::as_str) != Some("user") || words.len() < 2 {
            errors.push_str(&format!(
                "{path}:{n} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = words[1].as_str();
        if !valid_name(name.as_bytes()) {
            errors.push_str(&format!(
                "'{path}:{n}: username '{name}' contains invalid characters. "
            ));
            continue;
        }
        if users.iter().any(|u| u.name == name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{name}' found on line {n}. "
            ));
            continue;
        }
        let rules: Vec<&[u8]> = words[2..].iter().map(String::as_bytes).collect();
        let Ok(rules) = merge_selectors(&rules) else {
            errors.push_str(&format!(
                "{path}:{n}: Unmatched parenthesis in selector definition."
            ));
            continue;
        };
        let mut user = User::new(name, all_channels);
        let mut bad = false;
        for rule in &rules {
            if let Err(e) = user.apply(rule, all_channels) {
                let text = String::from_utf8_lossy(rule);
                errors.push_str(&match e {
                    RuleError::Unknown => {
                        format!("{path}:{n}: Error in applying operation '{text}': {e}. ")
                    }
                    _ => format!("{path}:{n}: {e}. "),
                });
                bad = true;
                break;
            }
        }
        if !bad {
            users.push(user);
        }
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was \
             performed",
        );
        Err(errors)
    }
}

/// Reads and parses an ACL file.
pub(crate) fn load(path: &str, all_channels: bool) -> Result<Vec<User>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Error loading ACLs, opening file '{path}': {e}"))?;
    parse(path, &text, all_channels)
}

/// Writes the users to `path` whole (a temporary file beside it, then a rename).
pub(crate) fn save(path: &str, users: &[User]) -> std::io::Result<()> {
    let mut text = String::new();
    for u in users {
        text.push_str(&format!("user {} {}\n", u.name, u.describe()));
    }
    let target = Path::new(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        target
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_loads_its_users_or_names_each_bad_line() {
        let users = parse("f", "user alice on >p ~* +@all\n\nuser bob off\n", false).unwrap();
        assert_eq!(users.len(), 2);
        assert!(users[0].enabled);
        let err = parse("f", "user a on\nnobody here\nuser b +nosuch\n", false).unwrap_err();
        assert!(
            err.starts_with("f:2 should start with user keyword"),
            "{err}"
        );
        assert!(
            err.contains("f:3: Error in applying operation '+nosuch': Unknown command"),
            "{err}"
        );
        let quoted = parse("f", "user carol on \">two words\" '~a*' +get\n", false).unwrap();
        assert!(
            quoted[0].describe().contains("~a* "),
            "{}",
            quoted[0].describe()
        );
        assert_eq!(
            quoted[0].passwords,
            [crate::engine::acl::hash_password(b"two words")]
        );
        let err = parse("f", "user carol on \">unclosed\n", false).unwrap_err();
        assert!(
            err.starts_with("f:1: unbalanced quotes in acl line. "),
            "{err}"
        );
        let dup = parse("f", "user a on\nuser a off\n", false).unwrap_err();
        assert!(
            dup.starts_with("WARNING: Duplicate user 'a' found on line 2."),
            "{dup}"
        );
    }
}
