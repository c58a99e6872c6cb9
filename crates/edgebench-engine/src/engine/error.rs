//! [`CmdError`], a command's error, with Redis's text byte for byte. It sits beside the engine
//! rather than in its `mod.rs` so that every layer (keyspace, commands, the codec's [`Reply`](crate::resp::Reply))
//! can name it without importing the engine.

use std::borrow::Cow;

/// A command error; its text is Redis's, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CmdError {
    /// WRONGTYPE.
    WrongType,
    /// `ERR syntax error`.
    Syntax,
    /// `ERR value is not an integer or out of range`.
    NotInteger,
    /// `ERR value is not a valid float`.
    NotFloat,
    /// `ERR increment or decrement would overflow`.
    Overflow,
    /// `ERR no such key`.
    NoSuchKey,
    /// `ERR index out of range`.
    IndexOutOfRange,
    /// `ERR wrong number of arguments for '<cmd>' command` (lowercase name).
    Arity(String),
    /// Any other error text, code included (`"ERR ..."`).
    Other(Cow<'static, str>),
}

impl CmdError {
    /// The error reply text.
    pub fn text(&self) -> Cow<'static, str> {
        match self {
            CmdError::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".into()
            }
            CmdError::Syntax => "ERR syntax error".into(),
            CmdError::NotInteger => "ERR value is not an integer or out of range".into(),
            CmdError::NotFloat => "ERR value is not a valid float".into(),
            CmdError::Overflow => "ERR increment or decrement would overflow".into(),
            CmdError::NoSuchKey => "ERR no such key".into(),
            CmdError::IndexOutOfRange => "ERR index out of range".into(),
            CmdError::Arity(cmd) => {
                format!("ERR wrong number of arguments for '{cmd}' command").into()
            }
            CmdError::Other(text) => text.clone(),
        }
    }
}

impl std::fmt::Display for CmdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for CmdError {}

impl From<CmdError> for crate::resp::Reply {
    fn from(e: CmdError) -> crate::resp::Reply {
        crate::resp::Reply::Error(e.text())
    }
}
