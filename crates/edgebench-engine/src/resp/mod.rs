//! RESP, the Redis serialization protocol, at the bottom of the crate: requests in
//! ([`parse`]: arrays of bulk strings and inline commands, incrementally, without copying
//! arguments), replies as values ([`Reply`], in RESP3's vocabulary) and replies out
//! ([`encode`](mod@encode): a [`Reply`] as RESP2 or RESP3 bytes); [`scan`] checks where a
//! reply ends in bytes read from a server, for clients.
//!
//! This module knows nothing above it: the engine produces [`Reply`] values and the server
//! parses and encodes with this module. Requests look the same whatever protocol a client
//! speaks; replies differ, and a client switches with `HELLO 3` (the engine records the
//! version in its client state; [`Protocol::of`] turns it into a [`Protocol`]).

pub mod encode;
pub mod parse;
pub mod protocol;
pub mod reply;
pub mod scan;

pub use encode::encode;
pub use parse::{
    split_args, ArgSlice, ProtocolError, QuoteError, Request, RequestParser, DEFAULT_MAX_BULK_LEN,
    INLINE_MAX_SIZE,
};
pub use protocol::Protocol;
pub use reply::{format_f64, Reply};
