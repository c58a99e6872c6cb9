//! The reply protocol a client speaks: the one thing the encoder asks of a client's state.
//! Requests look the same in both protocols; only replies differ.

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
