//! Per-command latency histograms (Redis 7.0's `latency-tracking`): LATENCY HISTOGRAM.
//!
//! Buckets are powers of two in microseconds (bucket `k` counts latencies up to `2^k` µs),
//! the resolution Redis's reply shows (its HDR histogram reported on a log-2 iteration).
//! Commands without subcommands count into striped counters (one cache line per thread,
//! as INFO's commandstats), allocated when the command first runs, so timing every command
//! costs one relaxed add; CLIENT, CONFIG
//! and the other commands with subcommands, which are rare, count under a lock by full name
//! (`config|resetstat`), as Redis reports them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::meta;
use crate::engine::cmd::{all_commands, lookup_indexed, spec_at};
use crate::engine::types::counters::Counters;
use crate::resp::reply::Reply;

/// Buckets per command: up to 2^39 µs (about six days).
const BUCKETS: usize = 40;

/// The histograms of one engine.
#[derive(Debug)]
pub struct Histograms {
    /// `latency-tracking`.
    on: AtomicBool,
    /// Command `i`'s buckets, allocated when it first runs: an engine that runs a few
    /// commands holds a few kB, not every command's (an engine is made per test, per run).
    plain: Box<[OnceLock<Counters>]>,
    /// Subcommands, by full name.
    subs: Mutex<BTreeMap<String, [u64; BUCKETS]>>,
}

impl Default for Histograms {
    fn default() -> Self {
        Histograms {
            on: AtomicBool::new(true),
            plain: (0..all_commands().count())
                .map(|_| OnceLock::new())
                .collect(),
            subs: Mutex::new(BTreeMap::new()),
        }
    }
}

/// The bucket of a latency.
fn bucket(took: Duration) -> usize {
    let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
    // The smallest k with us <= 2^k.
    let k = 64 - (us - 1).leading_zeros() as usize;
    k.min(BUCKETS - 1)
}

impl Histograms {
    /// Sets `latency-tracking`.
    pub(crate) fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    /// Whether commands are tracked.
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Counts one run of command `index` (in [`all_commands`]), `args`, that took `took`.
    pub(crate) fn record(&self, index: usize, args: &[&[u8]], took: Duration) {
        let k = bucket(took);
        if super::has_subcommands(index) {
            let (Some(sub), Some(spec)) = (args.get(1), spec_at(index)) else {
                return;
            };
            let full = format!(
                "{}|{}",
                spec.name,
                String::from_utf8_lossy(sub).to_ascii_lowercase()
            );
            // Only real subcommands: an unknown one was refused before it ran.
            if meta::lookup(full.as_bytes()).is_none() {
                return;
            }
            let mut subs = self.subs.lock().unwrap_or_else(PoisonError::into_inner);
            subs.entry(full).or_insert([0; BUCKETS])[k] += 1;
        } else if let Some(cell) = self.plain.get(index) {
            cell.get_or_init(|| Counters::new(BUCKETS)).add(k, 1);
        }
    }

    /// CONFIG RESETSTAT.
    pub(crate) fn reset(&self) {
        for cell in self.plain.iter() {
            if let Some(c) = cell.get() {
                c.reset();
            }
        }
        self.subs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// The buckets of a command without subcommands.
    fn plain_buckets(&self, index: usize) -> [u64; BUCKETS] {
        let mut out = [0; BUCKETS];
        if let Some(c) = self.plain.get(index).and_then(OnceLock::get) {
            for (k, b) in out.iter_mut().enumerate() {
                *b = c.get(k);
            }
        }
        out
    }

    /// LATENCY HISTOGRAM [command ...]: each named command (a container names all its
    /// subcommands; `name|sub` one) that ran since the last reset, or every one; unknown
    /// names are skipped, as in Redis.
    pub(crate) fn reply(&self, names: &[&[u8]]) -> Reply {
        let subs = self
            .subs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut out: BTreeMap<String, [u64; BUCKETS]> = BTreeMap::new();
        let add_command = |out: &mut BTreeMap<String, [u64; BUCKETS]>, index: usize, name: &str| {
            if super::has_subcommands(index) {
                let prefix = format!("{name}|");
                for (full, b) in subs.iter().filter(|(f, _)| f.starts_with(&prefix)) {
                    out.insert(full.clone(), *b);
                }
            } else {
                out.insert(name.to_string(), self.plain_buckets(index));
            }
        };
        if names.is_empty() {
            for (index, spec) in all_commands().enumerate() {
                add_command(&mut out, index, spec.name);
            }
        } else {
            for name in names {
                let text = String::from_utf8_lossy(name).to_ascii_lowercase();
                if text.contains('|') {
                    if let Some(b) = subs.get(&text) {
                        out.insert(text.clone(), *b);
                    }
                } else if let Some((index, spec)) = lookup_indexed(name) {
                    add_command(&mut out, index, spec.name);
                }
            }
        }
        Reply::Map(
            out.into_iter()
                .filter_map(|(name, b)| {
                    let calls: u64 = b.iter().sum();
                    (calls > 0).then(|| (Reply::bulk(name.as_bytes()), histogram(calls, &b)))
                })
                .collect(),
        )
    }
}

/// `calls N histogram_usec {bucket: cumulative count}`, buckets where the count grows.
fn histogram(calls: u64, buckets: &[u64; BUCKETS]) -> Reply {
    let mut cumulative = 0;
    let mut points = Vec::new();
    for (k, &n) in buckets.iter().enumerate() {
        if n > 0 {
            cumulative += n;
            points.push((Reply::Int(1i64 << k), Reply::Int(cumulative as i64)));
        }
    }
    Reply::Map(vec![
        (Reply::bulk(b"calls"), Reply::Int(calls as i64)),
        (Reply::bulk(b"histogram_usec"), Reply::Map(points)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_latency_falls_in_the_smallest_power_of_two_at_or_above_it() {
        assert_eq!(bucket(Duration::from_nanos(10)), 0);
        assert_eq!(bucket(Duration::from_micros(1)), 0);
        assert_eq!(bucket(Duration::from_micros(2)), 1);
        assert_eq!(bucket(Duration::from_micros(3)), 2);
        assert_eq!(bucket(Duration::from_micros(1024)), 10);
        assert_eq!(bucket(Duration::from_micros(1025)), 11);
        assert_eq!(bucket(Duration::from_secs(1 << 40)), BUCKETS - 1);
    }
}
