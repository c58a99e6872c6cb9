//! Target options: the `?…` after a spawned Redis target, e.g.
//! `redis-tcp?replicas=1&appendonly=yes&appendfsync=always` or `redis-uds?save=900:1+60:1000`.
//!
//! Options are `KEY=VALUE` pairs joined with `&`:
//! - `replicas=N` (0..=[`MAX_REPLICAS`]): replicas spawned with the server;
//! - `appendonly=yes|no`, `appendfsync=always|everysec|no` (needs `appendonly=yes`);
//! - `save=SECONDS:CHANGES[+SECONDS:CHANGES…]`: redis.conf's `save` points (`+` joins them,
//!   because `,` separates `--target` items);
//! - `wait=N` (1..=replicas): every write of this target is followed by `WAIT N 0`, as
//!   `--wait N` does for every target.
//!
//! A spawned Redis Cluster (`redis-cluster?…`) takes the same options except `replicas=`:
//! its replicas come from `--cluster-replicas`, which `wait=` is checked against when the
//! cluster starts.
//!
//! Only targets edgebench spawns take them; anything else is refused with one line that
//! names the option and the fix. The parsed options are a [`ServerOptions`] (the server's
//! arguments) and the `wait` count (the client's behaviour).

use super::error::TargetError;
use crate::store::redis::spawn::{AppendFsync, SavePoint, ServerOptions, MAX_REPLICAS};

/// The options, as the error messages list them.
const KNOWN: &str = "replicas=N, appendonly=yes|no, appendfsync=always|everysec|no, \
     save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N, joined with &";
/// Most `save` points one target takes (redis.conf takes any number; a handful is plenty).
const MAX_SAVE_POINTS: usize = 8;

/// What a target's `?…` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct TargetOptions {
    /// The spawned server's configuration.
    pub server: ServerOptions,
    /// `WAIT N 0` after every write; 0 means no WAIT.
    pub wait: u32,
}

/// Splits `what` into the target and its options, when it has `?` and is not a URL whose
/// own syntax has a query (PostgreSQL's `?host=`). Redis URLs with `?` come back split, so
/// the caller can refuse their options with the fix.
pub(super) fn split(what: &str) -> (&str, Option<&str>) {
    match what.split_once('?') {
        Some((base, query))
            if !base.contains("://")
                || ["redis://", "redis+unix://", "unix://"]
                    .iter()
                    .any(|s| base.to_ascii_lowercase().starts_with(s)) =>
        {
            (base, Some(query))
        }
        _ => (what, None),
    }
}

/// Parses the options of `item` (the whole `--target` item, for messages); `cluster`: the
/// item spawns a Redis Cluster.
pub(super) fn parse(item: &str, query: &str, cluster: bool) -> Result<TargetOptions, TargetError> {
    let bad = |reason: String| TargetError::BadOption {
        item: item.to_string(),
        reason,
    };
    let mut options = TargetOptions::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut fsync_given = false;
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(bad(format!("{pair:?} is not KEY=VALUE: use {KNOWN}")));
        };
        if seen.contains(&key) {
            return Err(bad(format!("{key} is given twice: keep one")));
        }
        seen.push(key);
        let value_error =
            |expected: &str| bad(format!("bad {key} value {value:?}: use {expected}"));
        match key {
            "replicas" if cluster => {
                return Err(bad(
                    "a spawned cluster takes no replicas=: its replicas come from \
                     --cluster-replicas (each primary gets that many): drop replicas="
                        .to_string(),
                ))
            }
            "replicas" => {
                options.server.replicas = value
                    .parse()
                    .ok()
                    .filter(|n| *n <= MAX_REPLICAS)
                    .ok_or_else(|| value_error(&format!("a number from 0 to {MAX_REPLICAS}")))?;
            }
            "appendonly" => {
                options.server.appendonly = match value {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(value_error("yes or no")),
                };
            }
            "appendfsync" => {
                fsync_given = true;
                options.server.appendfsync = match value {
                    "always" => AppendFsync::Always,
                    "everysec" => AppendFsync::EverySec,
                    "no" => AppendFsync::No,
                    _ => return Err(value_error("always, everysec or no")),
                };
            }
            "save" => {
                options.server.save = parse_save(value).ok_or_else(|| {
                    value_error(&format!(
                        "SECONDS:CHANGES, up to {MAX_SAVE_POINTS} joined with + (e.g. \
                         save=900:1+60:1000), each number from 1 to {}",
                        u32::MAX
                    ))
                })?;
            }
            "wait" => {
                options.wait = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=u32::from(MAX_REPLICAS)).contains(n))
                    .ok_or_else(|| value_error(&format!("a number from 1 to {MAX_REPLICAS}")))?;
            }
            _ => return Err(bad(format!("unknown option {key:?}: use {KNOWN}"))),
        }
    }
    if fsync_given && !options.server.appendonly {
        return Err(bad(format!(
            "appendfsync={} needs appendonly=yes: add &appendonly=yes",
            options.server.appendfsync.as_str()
        )));
    }
    // A cluster's replicas are known once --cluster-replicas is read: checked at start.
    if !cluster && options.wait > u32::from(options.server.replicas) {
        return Err(bad(format!(
            "wait={0} needs at least {0} replicas (WAIT would block for ever): add \
             &replicas={0}",
            options.wait
        )));
    }
    Ok(options)
}

/// `S:C[+S:C…]`, each number at least 1.
fn parse_save(value: &str) -> Option<Vec<SavePoint>> {
    let points = value
        .split('+')
        .map(|point| {
            let (seconds, changes) = point.split_once(':')?;
            let positive = |s: &str| s.parse::<u32>().ok().filter(|n| *n > 0);
            Some(SavePoint {
                seconds: positive(seconds)?,
                changes: positive(changes)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    (points.len() <= MAX_SAVE_POINTS).then_some(points)
}

/// The error for options on a target edgebench does not spawn, with the reason for `base`.
pub(super) fn not_spawned(item: &str, base: &str) -> TargetError {
    let why = match base {
        "embedded" | "embedded-direct" | "embedded-tcp" | "embedded-uds" => {
            "the in-process engine has no persistence or replicas (out of scope for it): use \
             redis-tcp?… or redis-uds?… for these options"
        }
        _ if base.contains("://") => {
            "this server is not spawned by edgebench, so its persistence and replicas are its \
             own configuration: set them there (or use redis-tcp?… / redis-uds?…); --wait N \
             works on it"
        }
        _ => {
            "only targets edgebench spawns (redis-tcp, redis-uds) take options: remove ?… or \
              use redis-tcp?…"
        }
    };
    TargetError::BadOption {
        item: item.to_string(),
        reason: why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(query: &str) -> TargetOptions {
        parse("redis-tcp?…", query, false).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(query: &str) -> String {
        let item = format!("redis-tcp?{query}");
        match parse(&item, query, false) {
            Ok(o) => panic!("{query} parsed as {o:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn options_combine_with_ampersands() {
        let o = ok("replicas=2&appendonly=yes&appendfsync=always&save=900:1+60:1000&wait=1");
        assert_eq!(
            o,
            TargetOptions {
                server: ServerOptions {
                    appendonly: true,
                    appendfsync: AppendFsync::Always,
                    save: vec![
                        SavePoint {
                            seconds: 900,
                            changes: 1
                        },
                        SavePoint {
                            seconds: 60,
                            changes: 1000
                        },
                    ],
                    replicas: 2,
                },
                wait: 1,
            }
        );
        assert_eq!(ok("appendonly=no").server, ServerOptions::default());
        assert_eq!(ok("replicas=5").server.replicas, 5);
    }

    #[test]
    fn bad_options_are_one_line_naming_the_option_and_the_fix() {
        assert_eq!(
            err("replica=1"),
            "bad target option in \"redis-tcp?replica=1\": unknown option \"replica\": use \
             replicas=N, appendonly=yes|no, appendfsync=always|everysec|no, \
             save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N, joined with &"
        );
        assert_eq!(
            err("replicas=6"),
            "bad target option in \"redis-tcp?replicas=6\": bad replicas value \"6\": use a \
             number from 0 to 5"
        );
        assert_eq!(
            err("appendfsync=sometimes&appendonly=yes"),
            "bad target option in \"redis-tcp?appendfsync=sometimes&appendonly=yes\": bad \
             appendfsync value \"sometimes\": use always, everysec or no"
        );
        assert_eq!(
            err("appendfsync=always"),
            "bad target option in \"redis-tcp?appendfsync=always\": appendfsync=always needs \
             appendonly=yes: add &appendonly=yes"
        );
        assert_eq!(
            err("save=60"),
            "bad target option in \"redis-tcp?save=60\": bad save value \"60\": use \
             SECONDS:CHANGES, up to 8 joined with + (e.g. save=900:1+60:1000), each number \
             from 1 to 4294967295"
        );
        assert!(err("save=0:1").contains("bad save value \"0:1\""));
        assert!(err("save=1:1+").contains("bad save value \"1:1+\""));
        assert_eq!(
            err("wait=1"),
            "bad target option in \"redis-tcp?wait=1\": wait=1 needs at least 1 replicas (WAIT \
             would block for ever): add &replicas=1"
        );
        assert_eq!(
            err("appendonly=yes&appendonly=no"),
            "bad target option in \"redis-tcp?appendonly=yes&appendonly=no\": appendonly is \
             given twice: keep one"
        );
        assert_eq!(
            err("replicas"),
            "bad target option in \"redis-tcp?replicas\": \"replicas\" is not KEY=VALUE: use \
             replicas=N, appendonly=yes|no, appendfsync=always|everysec|no, \
             save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N, joined with &"
        );
        for bad in ["replicas=-1", "appendonly=1", "wait=0", "x=1", ""] {
            assert!(!err(bad).contains('\n'));
        }
    }

    #[test]
    fn a_spawned_cluster_takes_wait_but_not_replicas() {
        let o = parse(
            "redis-cluster?wait=2&appendonly=yes",
            "wait=2&appendonly=yes",
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (o.wait, o.server.replicas, o.server.appendonly),
            (2, 0, true)
        );
        let refused = parse("redis-cluster?replicas=1", "replicas=1", true)
            .map(|o| format!("{o:?}"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "bad target option in \"redis-cluster?replicas=1\": a spawned cluster takes no \
             replicas=: its replicas come from --cluster-replicas (each primary gets that \
             many): drop replicas="
        );
    }

    #[test]
    fn only_keywords_and_redis_urls_are_split_at_the_question_mark() {
        assert_eq!(
            split("redis-tcp?replicas=1"),
            ("redis-tcp", Some("replicas=1"))
        );
        assert_eq!(
            split("redis://h:1?replicas=1"),
            ("redis://h:1", Some("replicas=1"))
        );
        assert_eq!(
            split("postgresql:///db?host=/run/pg"),
            ("postgresql:///db?host=/run/pg", None)
        );
        assert_eq!(split("redis-uds"), ("redis-uds", None));
    }
}
