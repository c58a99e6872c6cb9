//! The in-process driver: one client thread runs its connections' requests straight on the
//! engine ([`Engine::execute`]), no RESP and no socket, taking turns between connections
//! one batch (`--pipeline` requests) at a time.
//!
//! Invariants: a request's latency runs from its batch's start to the moment its reply
//! exists; the usual SET and GET allocate nothing here; with nothing due, the thread sleeps
//! until the next intended send, at most [`MAX_NAP`] so a stop is seen promptly.

use std::time::Instant;

use super::plan::{ConnPlan, Stop};
use super::schedule::{Clock, Schedule, MAX_NAP};
use super::stats::{Live, Outcome, RowMap, Sample, ThreadStats};
use crate::engine::{Engine, Reply};
use crate::kv::command::RequestBuf;
use crate::kv::conn_gen::RequestKind;
use crate::resp::scan::ReplyKind;

pub(super) fn run_in_process(
    engine: &Engine,
    conns: Vec<ConnPlan>,
    clock: &Clock,
    stop: &Stop,
    map: &RowMap,
    rows: usize,
    live: &Live,
) -> Result<ThreadStats, String> {
    let mut stats = ThreadStats::new(rows);
    let mut clients: Vec<_> = conns.iter().map(|_| engine.client()).collect();
    for (client, conn) in clients.iter_mut().zip(&conns) {
        for cmd in conn.prelude.iter() {
            let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
            if let Reply::Error(e) = engine.execute(client, &args) {
                let what = String::from_utf8_lossy(&cmd[0]).into_owned();
                return Err(format!("{what} failed: {e}"));
            }
        }
    }
    let ready = Instant::now();
    let schedules: Vec<Option<Schedule>> = conns
        .iter()
        .map(|c| clock.schedule(ready, c.index))
        .collect();
    let mut conns = conns;
    let mut sent = vec![0u64; conns.len()];
    let mut finished = vec![false; conns.len()];
    let mut req = RequestBuf::new();
    loop {
        let mut active = 0;
        let mut progressed = false;
        let mut wake: Option<Instant> = None;
        for (i, conn) in conns.iter_mut().enumerate() {
            if finished[i] {
                continue;
            }
            if !conn.may_send(sent[i], clock.deadline, stop) {
                finished[i] = true;
                if let Some(s) = &schedules[i] {
                    let end = clock.end(Instant::now());
                    stats.dropped += s.dropped(sent[i], conn.limit, end, clock.measure_from);
                }
                continue;
            }
            active += 1;
            // One batch of up to `pipeline` requests, as a pipelined socket client sends.
            let batch_start = Instant::now();
            let (mut ops, mut bytes, mut latency) = (0u64, 0u64, 0u64);
            for _ in 0..clock.pipeline {
                if conn.limit.is_some_and(|l| sent[i] >= l) {
                    break;
                }
                let intended = match &schedules[i] {
                    Some(s) => {
                        let t = s.at(sent[i]);
                        if t > batch_start {
                            wake = Some(wake.map_or(t, |w| w.min(t)));
                            break;
                        }
                        stats.note_send(clock, t, batch_start, s.interval());
                        Some(t)
                    }
                    None => None,
                };
                let kind = conn.gen.next_request(&mut req);
                let tx: usize = req.args().map(<[u8]>::len).sum();
                let reply = execute(engine, &mut clients[i], &req);
                let done = Instant::now();
                sent[i] += 1;
                progressed = true;
                let (row, counts_hits) = map.row(kind);
                let (outcome, rx) = classify(kind, &reply);
                latency += stats.record(
                    clock,
                    Sample {
                        row,
                        counts_hits,
                        outcome,
                        tx,
                        rx,
                        sent: batch_start,
                        intended,
                        done,
                    },
                );
                ops += 1;
                bytes += (tx + rx) as u64;
            }
            live.add(ops, bytes, latency);
        }
        if active == 0 {
            return Ok(stats);
        }
        if let (false, Some(w)) = (progressed, wake) {
            let now = Instant::now();
            let until = clock.deadline.map_or(w, |d| d.min(w)).min(now + MAX_NAP);
            std::thread::sleep(until.saturating_duration_since(now));
        }
    }
}

/// Runs one request on the engine. Up to 8 arguments go through an array on the stack, so
/// the usual SET and GET allocate nothing here.
pub(super) fn execute(
    engine: &Engine,
    client: &mut crate::engine::Client,
    req: &RequestBuf,
) -> Reply {
    const INLINE: usize = 8;
    if req.len() <= INLINE {
        let mut args: [&[u8]; INLINE] = [&[]; INLINE];
        for (slot, arg) in args.iter_mut().zip(req.args()) {
            *slot = arg;
        }
        engine.execute(client, &args[..req.len()])
    } else {
        let args: Vec<&[u8]> = req.args().collect();
        engine.execute(client, &args)
    }
}

/// What an in-process reply to a request of `kind` counts as, and its payload size (bulk
/// bytes) for KB/sec.
pub(super) fn classify(kind: RequestKind, reply: &Reply) -> (Outcome, usize) {
    let value = Outcome::Reply(ReplyKind::Value);
    match reply {
        Reply::Error(_) => (Outcome::Reply(ReplyKind::Error), 0),
        Reply::Nil | Reply::NilArray => (Outcome::Reply(ReplyKind::Miss), 0),
        Reply::Array(a) | Reply::Set(a) | Reply::Push(a) if a.is_empty() => {
            (Outcome::Reply(ReplyKind::Miss), 0)
        }
        Reply::Bulk(b) => (value, b.len()),
        Reply::Array(a) => {
            let rx = a
                .iter()
                .map(|r| if let Reply::Bulk(b) = r { b.len() } else { 0 })
                .sum();
            match kind {
                RequestKind::MultiGet(keys) => (
                    Outcome::MultiGet {
                        hits: a.iter().filter(|r| !matches!(r, Reply::Nil)).count() as u64,
                        keys: u64::from(keys),
                    },
                    rx,
                ),
                _ => (value, rx),
            }
        }
        _ => (value, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mget_counts_a_hit_or_a_miss_per_key_in_process() {
        // The array's nil elements are misses, the others hits.
        let reply = Reply::Array(vec![
            Reply::Bulk(b"x".to_vec()),
            Reply::Nil,
            Reply::Bulk(b"yz".to_vec()),
        ]);
        assert_eq!(
            classify(RequestKind::MultiGet(3), &reply),
            (Outcome::MultiGet { hits: 2, keys: 3 }, 3)
        );
        assert_eq!(
            classify(RequestKind::Get, &Reply::Nil),
            (Outcome::Reply(ReplyKind::Miss), 0)
        );
    }
}
