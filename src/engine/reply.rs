//! A command's reply, before any encoding: RESP2 and RESP3 writers, and the in-process
//! `redis::Value` conversion, all read this one type.

use std::borrow::Cow;

/// A reply, in RESP3's vocabulary. RESP2 clients get the RESP2 equivalent of each kind
/// (see [`crate::resp`]): maps and sets flatten to arrays, doubles become bulk strings,
/// booleans integers and nulls `$-1`/`*-1`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+OK` and friends.
    Status(Cow<'static, str>),
    /// `-ERR ...`; the text includes the error code (`ERR`, `WRONGTYPE`, `EXECABORT`...).
    Error(Cow<'static, str>),
    /// `:n`.
    Int(i64),
    /// `$n` bulk string.
    Bulk(Vec<u8>),
    /// The null bulk string (`$-1` in RESP2, `_` in RESP3).
    Nil,
    /// The null array (`*-1` in RESP2, `_` in RESP3), e.g. EXEC after a WATCH abort.
    NilArray,
    /// `*n`.
    Array(Vec<Reply>),
    /// RESP3 double (`,`); a bulk string in RESP2.
    Double(f64),
    /// RESP3 map (`%`); a flat array in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 set (`~`); an array in RESP2.
    Set(Vec<Reply>),
    /// RESP3 boolean (`#`); `:1`/`:0` in RESP2.
    Bool(bool),
    /// RESP3 verbatim string (`=`, format "txt"); a bulk string in RESP2.
    Verbatim(String),
    /// RESP3 push (`>`), for pub/sub messages; an array in RESP2.
    Push(Vec<Reply>),
}

impl Reply {
    /// `+OK`.
    pub const fn ok() -> Reply {
        Reply::Status(Cow::Borrowed("OK"))
    }

    /// `+QUEUED`.
    pub const fn queued() -> Reply {
        Reply::Status(Cow::Borrowed("QUEUED"))
    }

    /// An error reply from a static text (include the code: `"ERR syntax error"`).
    pub const fn err(text: &'static str) -> Reply {
        Reply::Error(Cow::Borrowed(text))
    }

    /// A bulk string from bytes.
    pub fn bulk(bytes: &[u8]) -> Reply {
        Reply::Bulk(bytes.to_vec())
    }

    /// A bulk string, or nil.
    pub fn opt_bulk(bytes: Option<&[u8]>) -> Reply {
        bytes.map_or(Reply::Nil, Reply::bulk)
    }

    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}

impl From<crate::engine::CmdError> for Reply {
    fn from(e: crate::engine::CmdError) -> Reply {
        Reply::Error(e.text())
    }
}
