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

impl Reply {
    /// The `redis::Value` a redis-rs connection would have parsed from this reply, as sent
    /// to a client speaking protocol `resp` (2 or 3). Used by the in-process connection,
    /// which skips RESP entirely.
    pub fn into_redis_value(self, resp: u8) -> redis::Value {
        use redis::Value as V;
        let resp3 = resp >= 3;
        match self {
            Reply::Status(s) if s == "OK" => V::Okay,
            Reply::Status(s) => V::SimpleString(s.into_owned()),
            Reply::Error(text) => error_value(&text),
            Reply::Int(n) => V::Int(n),
            Reply::Bulk(b) => V::BulkString(b),
            Reply::Nil | Reply::NilArray => V::Nil,
            Reply::Array(items) => V::Array(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
            Reply::Double(d) if resp3 => V::Double(d),
            Reply::Double(d) => V::BulkString(crate::engine::cmd::format_f64(d).into_bytes()),
            Reply::Map(pairs) if resp3 => V::Map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.into_redis_value(resp), v.into_redis_value(resp)))
                    .collect(),
            ),
            Reply::Map(pairs) => V::Array(
                pairs
                    .into_iter()
                    .flat_map(|(k, v)| [k.into_redis_value(resp), v.into_redis_value(resp)])
                    .collect(),
            ),
            Reply::Set(items) if resp3 => V::Set(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
            Reply::Set(items) => V::Array(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
            Reply::Bool(b) if resp3 => V::Boolean(b),
            Reply::Bool(b) => V::Int(i64::from(b)),
            Reply::Verbatim(text) if resp3 => V::VerbatimString {
                format: redis::VerbatimFormat::Text,
                text,
            },
            Reply::Verbatim(text) => V::BulkString(text.into_bytes()),
            Reply::Push(items) if resp3 => V::Push {
                kind: redis::PushKind::Message,
                data: items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            },
            Reply::Push(items) => V::Array(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
        }
    }
}

/// redis-rs has no public constructor for a server error: parse one from its RESP form, as
/// the real connection does. Only error replies pay for this.
fn error_value(text: &str) -> redis::Value {
    let line: String = text
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect();
    redis::parse_redis_value(format!("-{line}\r\n").as_bytes())
        .unwrap_or_else(|_| redis::Value::SimpleString(line))
}
