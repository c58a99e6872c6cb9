//! RESP, the Redis serialization protocol, as the server speaks it: requests in
//! ([`parse`]: arrays of bulk strings and inline commands, incrementally, without copying
//! arguments) and replies out ([`encode`]: a [`crate::engine::Reply`] as RESP2 or RESP3
//! bytes).
//!
//! Requests look the same whatever protocol a client speaks; replies differ, and a client
//! switches with `HELLO 3` (the engine records it in [`crate::engine::Client::resp`]).

pub mod encode;
pub mod parse;
pub mod scan;

pub use encode::encode;
pub use parse::{ProtocolError, Request, RequestParser, DEFAULT_MAX_BULK_LEN, INLINE_MAX_SIZE};

/// The reply protocol a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2, every client's protocol until it sends `HELLO 3`.
    #[default]
    Resp2,
    /// RESP3: maps, sets, doubles, booleans, nulls and out-of-band pushes.
    Resp3,
}

impl Protocol {
    /// The protocol of a client whose `resp` field (2 or 3) is `resp`.
    pub fn of(resp: u8) -> Protocol {
        if resp >= 3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        }
    }
}
