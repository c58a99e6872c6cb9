//! The RESP request parser, fed hostile bytes two ways: all at once, and in pieces whose
//! sizes come from the input (as a socket delivers them). It must never panic, never claim
//! more bytes than it was given, and both ways must yield the same requests and the same
//! protocol error: a half-sent frame is only ever "need more bytes".

#![no_main]

use edgebench_engine::resp::{ProtocolError, RequestParser};
use libfuzzer_sys::fuzz_target;

/// What a connection sees: the requests parsed, then how it ended.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    requests: Vec<Vec<Vec<u8>>>,
    end: End,
}

#[derive(Debug, PartialEq, Eq)]
enum End {
    /// Every byte was used, or the rest is an incomplete request.
    NeedMore,
    /// The connection gets this error and is closed.
    Error(ProtocolError),
}

/// A `proto-max-bulk-len` small enough that the fuzzer reaches the limit.
const MAX_BULK: u64 = 1024;

/// Parses `data` as a connection receiving it `chunk` bytes per read (0 = all at once).
fn parse(data: &[u8], chunk: usize, authenticated: bool) -> Outcome {
    let mut parser = RequestParser::new(MAX_BULK);
    let mut requests = Vec::new();
    let mut start = 0; // first byte not yet consumed
    let mut end = if chunk == 0 {
        data.len()
    } else {
        chunk.min(data.len())
    };
    loop {
        let buf = &data[start..end];
        match parser.parse(buf, authenticated) {
            Ok(Some(request)) => {
                let consumed = request.consumed();
                assert!(consumed > 0, "a request consumed nothing");
                assert!(
                    consumed <= buf.len(),
                    "consumed {consumed} of {}",
                    buf.len()
                );
                requests.push(request.args().map(<[u8]>::to_vec).collect());
                start += consumed;
                end = end.max(start);
            }
            Ok(None) => {
                if end == data.len() {
                    return Outcome {
                        requests,
                        end: End::NeedMore,
                    };
                }
                end = if chunk == 0 {
                    data.len()
                } else {
                    (end + chunk).min(data.len())
                };
            }
            Err(e) => {
                // The error's text is what the client gets: it must be one line.
                let text = e.text();
                assert!(!text.contains('\r') && !text.contains('\n'), "{text:?}");
                return Outcome {
                    requests,
                    end: End::Error(e),
                };
            }
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&control, data)) = input.split_first() else {
        return;
    };
    let chunk = usize::from(control & 0x3f) + 1;
    let authenticated = control & 0x40 == 0;
    let whole = parse(data, 0, authenticated);
    let pieces = parse(data, chunk, authenticated);
    assert_eq!(whole, pieces, "all at once vs {chunk}-byte reads");
});
