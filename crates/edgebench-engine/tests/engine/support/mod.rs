//! What the engine's integration tests share: a private `redis-server` to compare with
//! ([`redis_server`]), the three-way differential harness ([`diff`]), a RESP server inside a
//! test's runtime with a raw connection that checks reply bytes ([`served`]), and redis-rs
//! connections to any of them ([`connect`]).
//!
//! Every server a test starts is its own (a Unix socket in a temp dir, or 127.0.0.1:0), so
//! tests run in parallel without seeing each other's data. A missing `redis-server` fails the
//! tests that need it, with the fix; it never skips them.

pub mod diff;
pub mod redis_server;
pub mod served;
pub mod tls;

use std::time::Duration;

use edgebench_engine::server::Address;
use redis::{ConnectionAddr, IntoConnectionInfo, RedisResult};

/// A redis-rs connection to the server at `address`.
pub fn connect(address: &Address, timeout: Duration) -> RedisResult<redis::Connection> {
    let addr = match address {
        Address::Tcp(addr) => ConnectionAddr::Tcp(addr.ip().to_string(), addr.port()),
        Address::Unix(path) => ConnectionAddr::Unix(path.clone()),
        Address::Tls(_) => panic!("a TLS address: connect with support::tls"),
    };
    redis::Client::open(addr.into_connection_info()?)?.get_connection_with_timeout(timeout)
}

/// Splits INFO text into (section title, [(key, value)]), checking the layout on the way:
/// CRLF line ends, `# Title` headers, blank lines only between sections, `key:value` lines.
pub fn parse_info(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    assert!(text.ends_with("\r\n"), "INFO ends with CRLF");
    let body = text.strip_suffix("\r\n").unwrap_or(text);
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for block in body.split("\r\n\r\n") {
        let mut lines = block.split("\r\n");
        let title = lines
            .next()
            .and_then(|l| l.strip_prefix("# "))
            .unwrap_or_else(|| panic!("section header in {block:?}"));
        let fields = lines
            .map(|l| {
                assert!(!l.contains('\n') && !l.contains('\r'), "{l:?}");
                let (k, v) = l.split_once(':').unwrap_or_else(|| panic!("{l:?}"));
                (k.to_string(), v.to_string())
            })
            .collect();
        sections.push((title.to_string(), fields));
    }
    sections
}
