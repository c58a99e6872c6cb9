//! The RESP codec's own costs, with no socket and no engine:
//! - `resp_parse/<request>`: [`RequestParser::parse`] over a whole buffer, as the server's
//!   read loop calls it (one parser reused, every argument touched): a 3-argument SET, a
//!   pipeline of 16 GETs, and a SET carrying a 100-KiB value (the parser slices it, so this
//!   should cost about what the small SET does);
//! - `resp_encode/<reply>/<protocol>`: [`encode`] of a reply into a reused output buffer, for
//!   RESP2 and RESP3: a 100-byte bulk string, an integer, and a 100-element array of bulk
//!   strings (the shape of `ZRANGE z 0 99` or `LRANGE l 0 99`).
//!
//! Throughput: requests per second for parsing (bytes/s would be meaningless for the 100-KiB
//! value, which is sliced, not read); bytes of RESP per second for encoding, to compare with
//! link speeds. Run: `cargo bench --bench resp`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use edgebench::engine::Reply;
use edgebench::resp::{encode, Protocol, RequestParser};

/// `args` as a RESP array of bulk strings, the way every client library sends a command.
fn request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Parses every request in `buf`; returns the number of argument bytes seen, so nothing the
/// parser produced can be optimised away.
fn parse_all(parser: &mut RequestParser, buf: &[u8]) -> usize {
    let mut pos = 0;
    let mut seen = 0;
    while pos < buf.len() {
        let request = parser
            .parse(&buf[pos..], true)
            .expect("well-formed request")
            .expect("complete request");
        seen += request.args().map(<[u8]>::len).sum::<usize>();
        pos += request.consumed();
    }
    seen
}

fn parse(c: &mut Criterion) {
    let value_100k = vec![b'x'; 100 * 1024];
    // (name, requests in the buffer, the buffer)
    let cases: [(&str, u64, Vec<u8>); 3] = [
        (
            "SET_3_args",
            1,
            request(&[b"SET", b"key:000123", b"value-of-some-bytes"]),
        ),
        (
            "GET_pipeline_16",
            16,
            (0..16)
                .flat_map(|i| request(&[b"GET", format!("key:{i:06}").as_bytes()]))
                .collect(),
        ),
        (
            "SET_100KiB_value",
            1,
            request(&[b"SET", b"key:000123", &value_100k]),
        ),
    ];
    let mut g = c.benchmark_group("resp_parse");
    for (name, requests, buf) in &cases {
        let mut parser = RequestParser::default();
        g.throughput(Throughput::Elements(*requests));
        g.bench_function(*name, |b| {
            b.iter(|| black_box(parse_all(&mut parser, black_box(buf))))
        });
    }
    g.finish();
}

fn encode_replies(c: &mut Criterion) {
    let cases: [(&str, Reply); 3] = [
        ("bulk_100B", Reply::Bulk(vec![b'v'; 100])),
        ("integer", Reply::Int(1_234_567)),
        (
            "array_100_bulks",
            Reply::Array(
                (0..100)
                    .map(|i| Reply::Bulk(format!("member:{i:04}").into_bytes()))
                    .collect(),
            ),
        ),
    ];
    let mut g = c.benchmark_group("resp_encode");
    for (name, reply) in &cases {
        for (proto_name, protocol) in [("resp2", Protocol::Resp2), ("resp3", Protocol::Resp3)] {
            let mut out = Vec::with_capacity(4096);
            encode(reply, protocol, &mut out);
            g.throughput(Throughput::Bytes(out.len() as u64));
            g.bench_function(format!("{name}/{proto_name}"), |b| {
                b.iter(|| {
                    out.clear();
                    encode(black_box(reply), protocol, &mut out);
                    black_box(out.len())
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, parse, encode_replies);
criterion_main!(benches);
