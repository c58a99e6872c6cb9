//! A user: whether it is on, its password hashes (or `nopass`), its root selector and
//! further selectors; the rules of ACL SETUSER that change one, and the text ACL LIST and
//! ACL SAVE write for one (which ACL SETUSER reads back into the same user).

use super::describe::describe_commands;
use super::selector::{has_spaces, Selector, READ, READ_WRITE, WRITE};
use super::{hash_password, RuleError};

/// One user's definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) name: String,
    /// `on` (may authenticate) or `off`.
    pub(crate) enabled: bool,
    /// Any password works.
    pub(crate) nopass: bool,
    /// `sanitize-payload` / `skip-sanitize-payload` (accepted and shown; RESTORE's payload
    /// check is the same either way here). `None` until one is given.
    pub(crate) sanitize: Option<bool>,
    /// SHA-256 hex digests of the passwords, in the order added.
    pub(crate) passwords: Vec<String>,
    pub(crate) root: Selector,
    pub(crate) selectors: Vec<Selector>,
}

impl User {
    /// A new user: off, no password, no permissions (channels as `acl-pubsub-default`).
    pub(crate) fn new(name: &str, all_channels: bool) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            root: Selector::empty(all_channels),
            selectors: Vec::new(),
        }
    }

    /// The `default` user of a fresh server: on, nopass, every key, channel and command.
    pub(crate) fn default_user() -> User {
        let mut user = User::new("default", false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            // These rules are always valid.
            let _ = user.apply(op.as_bytes(), false);
        }
        user
    }

    /// Whether any command on any key and channel is allowed without looking.
    pub(crate) fn unrestricted(&self) -> bool {
        self.root.unrestricted()
    }

    /// Every selector, the root first.
    pub(crate) fn all_selectors(&self) -> impl Iterator<Item = &Selector> {
        std::iter::once(&self.root).chain(self.selectors.iter())
    }

    /// Applies one rule of ACL SETUSER; `all_channels` is `acl-pubsub-default` (for `reset`
    /// and new selectors).
    pub(crate) fn apply(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.sanitize = Some(false);
        } else if is("sanitize-payload") {
            self.sanitize = Some(true);
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' {
                hash_password(&op[1..])
            } else {
                valid_hash(&op[1..])?
            };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' {
                hash_password(&op[1..])
            } else {
                valid_hash(&op[1..])?
            };
            let at = self.passwords.iter().position(|p| *p == hash);
            self.passwords.remove(at.ok_or(RuleError::NoSuchPassword)?);
        } else if op[0] == b'(' && op.last() == Some(&b')') {
            let mut selector = Selector::empty(all_channels);
            let inner = &op[1..op.len() - 1];
            for rule in inner
                .split(|b| b.is_ascii_whitespace())
                .filter(|r| !r.is_empty())
            {
                selector.apply(rule)?;
            }
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.clear();
        } else if is("reset") {
            self.nopass = false;
            self.passwords.clear();
            self.root = Selector::empty(all_channels);
            self.enabled = false;
            self.sanitize = Some(true);
            self.selectors.clear();
        } else {
            self.root.apply(op)?;
        }
        Ok(())
    }

    /// The user's rules as ACL LIST shows them (without `user <name>`).
    pub(crate) fn describe(&self) -> String {
        let mut out = self.flags().join(" ");
        out.push(' ');
        for p in &self.passwords {
            out.push('#');
            out.push_str(p);
            out.push(' ');
        }
        out.push_str(&describe_selector(&self.root));
        for s in &self.selectors {
            out.push_str(" (");
            out.push_str(&describe_selector(s));
            out.push(')');
        }
        out
    }

    /// The flags ACL GETUSER lists, in Redis's order.
    pub(crate) fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }
}

/// A selector as ACL LIST shows it: keys, channels, commands.
pub(crate) fn describe_selector(s: &Selector) -> String {
    let mut out = String::new();
    if s.all_keys {
        out.push_str("~* ");
    } else {
        for (p, flags) in &s.keys {
            out.push_str(&key_pattern(p, *flags));
            out.push(' ');
        }
    }
    if s.all_channels {
        out.push_str("&* ");
    } else {
        out.push_str("resetchannels ");
        for c in &s.channels {
            out.push('&');
            out.push_str(&String::from_utf8_lossy(c));
            out.push(' ');
        }
    }
    out.push_str(&describe_commands(s));
    out
}

/// `~p`, `%R~p` or `%W~p`.
pub(crate) fn key_pattern(pattern: &[u8], flags: u8) -> String {
    let prefix = match flags {
        READ_WRITE => "~",
        READ => "%R~",
        WRITE => "%W~",
        _ => "%~",
    };
    format!("{prefix}{}", String::from_utf8_lossy(pattern))
}

/// A `#hash` / `!hash` argument: exactly 64 lowercase hex digits.
fn valid_hash(h: &[u8]) -> Result<String, RuleError> {
    if h.len() == 64
        && h.iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    {
        Ok(String::from_utf8_lossy(h).into_owned())
    } else {
        Err(RuleError::BadHash)
    }
}

/// Whether a user name is acceptable (no spaces or NUL bytes).
pub(crate) fn valid_name(name: &[u8]) -> bool {
    !has_spaces(name)
}

/// Joins arguments split inside a selector (`"(~a" "+get)"`) as Redis does: `None` with
/// the argument that opened a selector left unclosed.
pub(crate) fn merge_selectors(args: &[&[u8]]) -> Result<Vec<Vec<u8>>, Vec<u8>> {
    let mut out = Vec::new();
    let mut open: Option<Vec<u8>> = None;
    let mut opened_at = Vec::new();
    for &arg in args {
        if let Some(sel) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(arg);
            if arg.last() == Some(&b')') {
                out.extend(open.take());
            }
            continue;
        }
        if arg.first() == Some(&b'(') && arg.last() != Some(&b')') {
            open = Some(arg.to_vec());
            opened_at = arg.to_vec();
            continue;
        }
        out.push(arg.to_vec());
    }
    match open {
        Some(_) => Err(opened_at),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_is_described_as_redis_lists_it() {
        assert_eq!(User::default_user().describe(), "on nopass ~* &* +@all");
        assert_eq!(User::new("u1", false).describe(), "off resetchannels -@all");
        let mut u = User::new("u2", false);
        for op in ["on", ">p", "~a*", "%R~b*", "&ch*", "+@hash", "(+set ~x*)"] {
            u.apply(op.as_bytes(), false).unwrap();
        }
        assert_eq!(
            u.describe(),
            "on #148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940 ~a* \
             %R~b* resetchannels &ch* -@all +@hash (~x* resetchannels -@all +set)"
        );
    }

    #[test]
    fn passwords_are_added_and_removed_by_text_or_hash() {
        let mut u = User::new("u", false);
        u.apply(b">a", false).unwrap();
        u.apply(b">a", false).unwrap();
        assert_eq!(u.passwords.len(), 1);
        assert_eq!(u.apply(b"<b", false), Err(RuleError::NoSuchPassword));
        assert_eq!(u.apply(b"#xyz", false), Err(RuleError::BadHash));
        let hash = format!("!{}", hash_password(b"a"));
        u.apply(hash.as_bytes(), false).unwrap();
        assert!(u.passwords.is_empty());
    }

    #[test]
    fn selectors_split_over_arguments_are_joined() {
        let args: [&[u8]; 3] = [b"(~a", b"+get)", b"on"];
        assert_eq!(
            merge_selectors(&args).unwrap(),
            vec![b"(~a +get)".to_vec(), b"on".to_vec()]
        );
        let open: [&[u8]; 2] = [b"on", b"(~a"];
        assert_eq!(merge_selectors(&open), Err(b"(~a".to_vec()));
    }
}
