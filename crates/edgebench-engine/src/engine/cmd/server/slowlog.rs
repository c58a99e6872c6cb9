//! SLOWLOG and LATENCY: what took long, as Redis 7.0 records it, and WAIT (no replicas).
//!
//! Every command is timed when the slow log is on (`slowlog-log-slower-than` >= 0, the
//! default 10000 µs) or the latency monitor is (`latency-monitor-threshold` > 0 ms, off by
//! default): two monotonic clock reads. The thresholds are atomics mirrored from the CONFIG
//! values, so the command path takes no lock unless a command is slow enough to record.
//!
//! Bounds: the slow log keeps `slowlog-max-len` entries, each at most 32 arguments of at
//! most 128 bytes (Redis's caps, with its "... (N more ...)" markers); the latency monitor
//! keeps 160 samples per event, one per second.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::common::{err, help, sub_arity, sub_syntax, unknown_subcommand};
use super::meta;
use crate::engine::client::Client;
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::resp::reply::Reply;

/// Arguments kept per slow log entry (Redis's `SLOWLOG_ENTRY_MAX_ARGC`).
const MAX_ARGC: usize = 32;
/// Bytes kept per argument (Redis's `SLOWLOG_ENTRY_MAX_STRING`).
const MAX_STRING: usize = 128;
/// Samples kept per latency event (Redis's `LATENCY_TS_LEN`).
const LATENCY_SAMPLES: usize = 160;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The wall clock as time since the Unix epoch (zero before it): a command's start.
pub(crate) fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The wall clock at the kernel tick's resolution, and that resolution: a few ns to read
/// where a precise read costs tens in a VM. `None` where the system has no coarse clock.
fn coarse_wall_clock() -> Option<(Duration, Duration)> {
    static TICK: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    let tick = (*TICK.get_or_init(|| {
        let mut res = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `res` is a valid, writable timespec.
        let ok = unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut res) } == 0;
        ok.then(|| Duration::new(res.tv_sec as u64, res.tv_nsec as u32))
    }))?;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut now) } != 0 {
        return None;
    }
    let now = Duration::new(u64::try_from(now.tv_sec).ok()?, now.tv_nsec as u32);
    Some((now, tick))
}

/// One slow log entry.
#[derive(Debug)]
struct Entry {
    id: u64,
    time: u64,
    micros: u64,
    argv: Vec<Vec<u8>>,
    peer: String,
    name: Vec<u8>,
}

impl Entry {
    fn reply(&self) -> Reply {
        Reply::Array(vec![
            Reply::Int(self.id as i64),
            Reply::Int(self.time as i64),
            Reply::Int(self.micros as i64),
            Reply::Array(self.argv.iter().map(|a| Reply::bulk(a)).collect()),
            Reply::bulk(self.peer.as_bytes()),
            Reply::bulk(&self.name),
        ])
    }
}

/// The arguments as the slow log keeps them: 32 at most (the last saying how many more
/// there were), each cut to 128 bytes (saying how many more bytes there were).
fn capped_argv(args: &[&[u8]]) -> Vec<Vec<u8>> {
    let kept = args.len().min(MAX_ARGC);
    (0..kept)
        .map(|j| {
            if kept != args.len() && j == kept - 1 {
                format!("... ({} more arguments)", args.len() - kept + 1).into_bytes()
            } else if args[j].len() > MAX_STRING {
                let mut s = args[j][..MAX_STRING].to_vec();
                s.extend_from_slice(
                    format!("... ({} more bytes)", args[j].len() - MAX_STRING).as_bytes(),
                );
                s
            } else {
                args[j].to_vec()
            }
        })
        .collect()
}

/// An event's samples (time in s, latency in ms), oldest first, and its maximum.
#[derive(Debug, Default)]
struct History {
    samples: VecDeque<(u64, u64)>,
    max: u64,
}

/// The slow log and the latency monitor of one engine.
#[derive(Debug)]
pub struct SlowLog {
    /// `slowlog-log-slower-than` (µs; negative: off).
    slower_than_us: AtomicI64,
    /// `slowlog-max-len`.
    max_len: AtomicU64,
    /// `latency-monitor-threshold` (ms; 0: off).
    latency_threshold_ms: AtomicU64,
    log: Mutex<(u64, VecDeque<Entry>)>,
    latency: Mutex<BTreeMap<&'static str, History>>,
}

impl Default for SlowLog {
    fn default() -> Self {
        SlowLog {
            slower_than_us: AtomicI64::new(10_000),
            max_len: AtomicU64::new(128),
            latency_threshold_ms: AtomicU64::new(0),
            log: Mutex::new((0, VecDeque::new())),
            latency: Mutex::new(BTreeMap::new()),
        }
    }
}

impl SlowLog {
    /// Mirrors the CONFIG values (after CONFIG SET); trims the log to its new length.
    pub(crate) fn configure(&self, slower_than_us: i64, max_len: u64, latency_ms: u64) {
        self.slower_than_us.store(slower_than_us, Ordering::Relaxed);
        self.max_len.store(max_len, Ordering::Relaxed);
        self.latency_threshold_ms
            .store(latency_ms, Ordering::Relaxed);
        let mut log = lock(&self.log);
        log.1
            .truncate(usize::try_from(max_len).unwrap_or(usize::MAX));
    }

    /// Whether commands must be timed.
    pub(crate) fn timing(&self) -> bool {
        self.slower_than_us.load(Ordering::Relaxed) >= 0
            || self.latency_threshold_ms.load(Ordering::Relaxed) > 0
    }

    /// How long a command that started at `started` took, when that could pass a threshold:
    /// `None` for the common command, known to be fast from the coarse clock alone.
    pub(crate) fn duration_if_slow(&self, started: Duration) -> Option<Duration> {
        let slowlog_us = self.slower_than_us.load(Ordering::Relaxed);
        let latency_us = self
            .latency_threshold_ms
            .load(Ordering::Relaxed)
            .saturating_mul(1000);
        let threshold_us = match (u64::try_from(slowlog_us).ok(), latency_us) {
            (Some(s), 0) => s,
            (Some(s), l) => s.min(l),
            (None, 0) => return None,
            (None, l) => l,
        };
        let threshold = Duration::from_micros(threshold_us);
        if let Some((coarse, tick)) = coarse_wall_clock() {
            // The coarse clock lags the precise one by at most a tick.
            if coarse.saturating_sub(started) + tick < threshold {
                return None;
            }
        }
        Some(since_epoch().saturating_sub(started))
    }

    /// Records a command that took `took`, if it passes a threshold.
    pub(crate) fn record(&self, client: &Client, args: &[&[u8]], took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let threshold = self.slower_than_us.load(Ordering::Relaxed);
        let latency_ms = self.latency_threshold_ms.load(Ordering::Relaxed);
        let slow = threshold >= 0 && micros >= threshold as u64;
        let late = latency_ms > 0 && micros / 1000 >= latency_ms;
        if !slow && !late {
            return;
        }
        let Some(m) = meta::lookup_request(args) else {
            return;
        };
        if slow && !m.has_flag("skip_slowlog") {
            self.push(client, args, micros);
        }
        if late {
            let event = if m.has_flag("fast") {
                "fast-command"
            } else {
                "command"
            };
            self.add_latency(event, micros / 1000);
        }
    }

    fn push(&self, client: &Client, args: &[&[u8]], micros: u64) {
        let max_len = usize::try_from(self.max_len.load(Ordering::Relaxed)).unwrap_or(usize::MAX);
        let argv = capped_argv(args);
        let mut log = lock(&self.log);
        let id = log.0;
        log.0 += 1;
        log.1.push_front(Entry {
            id,
            time: unix_secs(),
            micros,
            argv,
            peer: client.addr.clone().unwrap_or_default(),
            name: client.name.clone().unwrap_or_default(),
        });
        log.1.truncate(max_len);
    }

    /// Records a latency event (`expire-cycle`, ...) that took `ms`, if the monitor is on and
    /// it reaches the threshold.
    pub(crate) fn event(&self, event: &'static str, ms: u64) {
        let threshold = self.latency_threshold_ms.load(Ordering::Relaxed);
        if threshold > 0 && ms >= threshold {
            self.add_latency(event, ms);
        }
    }

    fn add_latency(&self, event: &'static str, ms: u64) {
        let now = unix_secs();
        let mut events = lock(&self.latency);
        let h = events.entry(event).or_default();
        h.max = h.max.max(ms);
        match h.samples.back_mut() {
            Some((t, v)) if *t == now => *v = (*v).max(ms),
            _ => {
                if h.samples.len() == LATENCY_SAMPLES {
                    h.samples.pop_front();
                }
                h.samples.push_back((now, ms));
            }
        }
    }
}

const SLOWLOG_HELP: &[&str] = &[
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
];

pub(super) fn slowlog(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let state = &ctx.engine.server().slowlog;
    if is(sub, "get") {
        sub_arity(args, -2, "slowlog|get")?;
        if args.len() > 3 {
            return Err(sub_syntax(args));
        }
        let count = match args.get(2) {
            None => 10,
            Some(a) => match parse_i64(a) {
                Ok(-1) => usize::MAX,
                Ok(n) if n >= 0 => usize::try_from(n).unwrap_or(usize::MAX),
                _ => return Err(err("ERR count should be greater than or equal to -1")),
            },
        };
        let log = lock(&state.log);
        Ok(Reply::Array(
            log.1.iter().take(count).map(Entry::reply).collect(),
        ))
    } else if is(sub, "len") {
        sub_arity(args, 2, "slowlog|len")?;
        Ok(Reply::Int(lock(&state.log).1.len() as i64))
    } else if is(sub, "reset") {
        sub_arity(args, 2, "slowlog|reset")?;
        lock(&state.log).1.clear();
        Ok(Reply::ok())
    } else if is(sub, "help") {
        sub_arity(args, 2, "slowlog|help")?;
        Ok(help(args, SLOWLOG_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

const LATENCY_HELP: &[&str] = &[
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
];

/// LATENCY LATEST, HISTORY, RESET, HISTOGRAM, DOCTOR and HELP (GRAPH is not kept).
pub(super) fn latency(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let events = &ctx.engine.server().slowlog.latency;
    if is(sub, "latest") {
        sub_arity(args, 2, "latency|latest")?;
        let events = lock(events);
        Ok(Reply::Array(
            events
                .iter()
                .filter_map(|(name, h)| {
                    let &(time, ms) = h.samples.back()?;
                    Some(Reply::Array(vec![
                        Reply::bulk(name.as_bytes()),
                        Reply::Int(time as i64),
                        Reply::Int(ms as i64),
                        Reply::Int(h.max as i64),
                    ]))
                })
                .collect(),
        ))
    } else if is(sub, "history") {
        sub_arity(args, 3, "latency|history")?;
        let events = lock(events);
        let samples = events
            .iter()
            .find(|(name, _)| name.as_bytes() == args[2])
            .map(|(_, h)| {
                h.samples
                    .iter()
                    .map(|&(t, ms)| Reply::Array(vec![Reply::Int(t as i64), Reply::Int(ms as i64)]))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Reply::Array(samples))
    } else if is(sub, "reset") {
        sub_arity(args, -2, "latency|reset")?;
        let mut events = lock(events);
        let reset = if args.len() == 2 {
            let n = events.len();
            events.clear();
            n
        } else {
            let names: Vec<&'static str> = events
                .keys()
                .copied()
                .filter(|n| args[2..].iter().any(|a| a == &n.as_bytes()))
                .collect();
            names.iter().filter(|n| events.remove(*n).is_some()).count()
        };
        Ok(Reply::Int(reset as i64))
    } else if is(sub, "histogram") {
        sub_arity(args, -2, "latency|histogram")?;
        Ok(ctx.engine.server().histograms.reply(&args[2..]))
    } else if is(sub, "doctor") {
        sub_arity(args, 2, "latency|doctor")?;
        Ok(Reply::Verbatim(doctor(&lock(events))))
    } else if is(sub, "help") {
        sub_arity(args, 2, "latency|help")?;
        Ok(help(args, LATENCY_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// LATENCY DOCTOR: what the monitor saw, event by event, in plain words (Redis's report also
/// gives advice; this one states the figures).
fn doctor(events: &BTreeMap<&'static str, History>) -> String {
    let threshold = "latency-monitor-threshold";
    if events.is_empty() {
        return format!(
            "No latency spikes were observed. (The monitor records events that take at least \
             {threshold} ms; 0 turns it off.)\n"
        );
    }
    let mut out = String::from("Latency spikes observed, by event:\n\n");
    for (i, (name, h)) in events.iter().enumerate() {
        let n = h.samples.len().max(1) as u64;
        let avg = h.samples.iter().map(|&(_, ms)| ms).sum::<u64>() / n;
        let first = h.samples.front().map_or(0, |&(t, _)| t);
        out.push_str(&format!(
            "{}. {name}: {} latency spikes (average {avg}ms, worst {}ms) since unix time {first}.\n",
            i + 1,
            h.samples.len(),
            h.max
        ));
    }
    out
}

/// WAIT numreplicas timeout: the engine has no replicas, so 0 at once (Redis would wait
/// for the timeout when asked for one replica or more).
pub(super) fn wait(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    parse_i64(args[1])?;
    match parse_i64(args[2]) {
        Err(_) => Err(err("ERR timeout is not an integer or out of range")),
        Ok(t) if t < 0 => Err(err("ERR timeout is negative")),
        Ok(_) => Ok(Reply::Int(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_capped_like_redis() {
        let long = [b'x'; 200];
        let args: Vec<&[u8]> = std::iter::once(&b"SET"[..])
            .chain(std::iter::once(&long[..]))
            .chain(std::iter::repeat_n(&b"a"[..], 40))
            .collect();
        let argv = capped_argv(&args);
        assert_eq!(argv.len(), 32);
        assert_eq!(argv[1].len(), 128 + "... (72 more bytes)".len());
        assert!(argv[1].ends_with(b"... (72 more bytes)"));
        assert_eq!(argv[31], b"... (11 more arguments)");
        assert_eq!(
            capped_argv(&[b"GET", b"k"]),
            vec![b"GET".to_vec(), b"k".to_vec()]
        );
    }

    #[test]
    fn only_commands_that_may_be_slow_are_timed_precisely() {
        let log = SlowLog::default();
        // Default threshold 10 ms: a command that just started is known fast.
        assert_eq!(log.duration_if_slow(since_epoch()), None);
        let long_ago = since_epoch() - Duration::from_secs(1);
        assert!(log
            .duration_if_slow(long_ago)
            .is_some_and(|d| d >= Duration::from_secs(1)));
        log.configure(0, 128, 0);
        assert!(log.duration_if_slow(since_epoch()).is_some());
        log.configure(-1, 128, 0);
        assert_eq!(log.duration_if_slow(long_ago), None);
        log.configure(-1, 128, 100);
        assert!(log.duration_if_slow(long_ago).is_some());
    }

    #[test]
    fn latency_samples_keep_one_per_second_and_the_max() {
        let log = SlowLog::default();
        log.add_latency("command", 5);
        log.add_latency("command", 9);
        log.add_latency("command", 3);
        let events = lock(&log.latency);
        let h = &events["command"];
        assert_eq!(h.max, 9);
        assert!(h.samples.len() <= 2);
    }
}
