//! Target options: the `?…` after a spawned Redis target, e.g.
//! `redis-tcp?replicas=1&appendonly=yes&appendfsync=always` or `redis-uds?save=900:1+60:1000`.
//!
//! Options are `KEY=VALUE` pairs joined with `&`:
//! - `replicas=N` (0..=[`MAX_REPLICAS`]): replicas spawned with the server;
//! - `appendonly=yes|no`, `appendfsync=always|everysec|no` (needs `appendonly=yes`);
//! - `save=SECONDS:CHANGES[+SECONDS:CHANGES…]`: redis.conf's `save` points (`+` joins them,
//!   because `,` separates `--target` items);
//! - `wait=N` (1..=replicas): every write of this target is followed by `WAIT N 0`, as
//!   `--wait N` does for every target;
//! - `tls=yes|no`: the server speaks TLS only, with certificates of a private CA made for the
//!   run; `user=NAME&password=PW` (both or neither): an ACL user edgebench connects as.
//!
//! A spawned Redis Cluster (`redis-cluster?…`) takes the same options except `replicas=`:
//! its replicas come from `--cluster-replicas`, which `wait=` is checked against when the
//! cluster starts; and except `tls=`, `user=` and `password=`, which it refuses (its nodes
//! would need them on the cluster bus and in every redirect: not implemented).
//!
//! Only targets edgebench spawns take them; anything else is refused with one line that
//! names the option and the fix. The parsed options are a [`ServerOptions`] (the server's
//! arguments) and the `wait` count (the client's behaviour).

use super::spawn::{AppendFsync, SavePoint, ServerOptions, MAX_REPLICAS};
use crate::transport::{Credentials, ServerSecurity};

/// The options, as the error messages list them.
const KNOWN: &str = "replicas=N, appendonly=yes|no, appendfsync=always|everysec|no, \
     save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N, tls=yes|no, user=NAME&password=PW, \
     joined with &";
/// Most `save` points one target takes (redis.conf takes any number; a handful is plenty).
const MAX_SAVE_POINTS: usize = 8;

/// What a target's `?…` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetOptions {
    /// The spawned server's configuration.
    pub server: ServerOptions,
    /// `WAIT N 0` after every write; 0 means no WAIT.
    pub wait: u32,
    /// TLS and an ACL user (`tls=yes`, `user=`, `password=`).
    pub security: ServerSecurity,
}

/// Parses the options `query` (after the `?`); `cluster`: the item spawns a Redis Cluster.
/// The error says what is wrong and the fix.
pub fn parse(query: &str, cluster: bool) -> Result<TargetOptions, String> {
    let bad = |reason: String| reason;
    let mut options = TargetOptions::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut fsync_given = false;
    let (mut user, mut password) = (None, None);
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
            "tls" | "user" | "password" if cluster => {
                return Err(bad(format!(
                    "a spawned cluster takes no {key}= (TLS and ACL users on a cluster's nodes \
                     are not implemented): drop it, or use redis-tcp?{key}=…"
                )))
            }
            "tls" => {
                options.security.tls = match value {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(value_error("yes or no")),
                };
            }
            "user" => {
                user = Some(check_user(value)?);
            }
            "password" => {
                if value.is_empty() || value.contains(char::is_whitespace) {
                    return Err(bad(
                        "bad password: give one without spaces (it goes into the server's \
                         ACL file)"
                            .to_string(),
                    ));
                }
                password = Some(value.to_string());
            }
            _ => return Err(bad(format!("unknown option {key:?}: use {KNOWN}"))),
        }
    }
    options.security.user = match (user, password) {
        (Some(user), Some(password)) => Some(Credentials {
            user: Some(user),
            password,
        }),
        (None, None) => None,
        (Some(_), None) => return Err(bad("user= needs password=: add &password=PW".to_string())),
        (None, Some(_)) => {
            return Err(bad(
                "password= needs user= (edgebench connects as that ACL user; the default \
                 user gets the same password): add &user=NAME"
                    .to_string(),
            ))
        }
    };
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

/// An ACL user name for a spawned server: letters, digits, `_`, `-` and `.`, and not
/// `default` (kept as EdgeX keeps it, without the dangerous commands the benchmarks use).
fn check_user(name: &str) -> Result<String, String> {
    if name == "default" {
        return Err(
            "user=default: the default user is kept as EdgeX's secure mode keeps it \
                    (no @dangerous commands, which the benchmarks need): give another name"
                .to_string(),
        );
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Err(format!(
            "bad user value {name:?}: use letters, digits, '_', '-' and '.'"
        ));
    }
    Ok(name.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(query: &str) -> TargetOptions {
        parse(query, false).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(query: &str) -> String {
        match parse(query, false) {
            Ok(o) => panic!("{query} parsed as {o:?}"),
            Err(e) => e,
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
                security: ServerSecurity::default(),
            }
        );
        assert_eq!(ok("appendonly=no").server, ServerOptions::default());
        assert_eq!(ok("replicas=5").server.replicas, 5);
    }

    #[test]
    fn bad_options_are_one_line_naming_the_option_and_the_fix() {
        assert_eq!(
            err("replica=1"),
            "unknown option \"replica\": use \
             replicas=N, appendonly=yes|no, appendfsync=always|everysec|no, \
             save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N, tls=yes|no, \
             user=NAME&password=PW, joined with &"
        );
        assert_eq!(
            err("replicas=6"),
            "bad replicas value \"6\": use a \
             number from 0 to 5"
        );
        assert_eq!(
            err("appendfsync=sometimes&appendonly=yes"),
            "bad \
             appendfsync value \"sometimes\": use always, everysec or no"
        );
        assert_eq!(
            err("appendfsync=always"),
            "appendfsync=always needs \
             appendonly=yes: add &appendonly=yes"
        );
        assert_eq!(
            err("save=60"),
            "bad save value \"60\": use \
             SECONDS:CHANGES, up to 8 joined with + (e.g. save=900:1+60:1000), each number \
             from 1 to 4294967295"
        );
        assert!(err("save=0:1").contains("bad save value \"0:1\""));
        assert!(err("save=1:1+").contains("bad save value \"1:1+\""));
        assert_eq!(
            err("wait=1"),
            "wait=1 needs at least 1 replicas (WAIT \
             would block for ever): add &replicas=1"
        );
        assert_eq!(
            err("appendonly=yes&appendonly=no"),
            "appendonly is \
             given twice: keep one"
        );
        assert_eq!(
            err("replicas"),
            "\"replicas\" is not KEY=VALUE: use \
             replicas=N, appendonly=yes|no, appendfsync=always|everysec|no, \
             save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N, tls=yes|no, \
             user=NAME&password=PW, joined with &"
        );
        for bad in ["replicas=-1", "appendonly=1", "wait=0", "x=1", ""] {
            assert!(!err(bad).contains('\n'));
        }
    }

    #[test]
    fn tls_and_an_acl_user_are_options_of_a_spawned_server() {
        let o = ok("tls=yes&user=edgex&password=s3cr:t&replicas=1");
        assert!(o.security.tls);
        let user = o.security.user.unwrap();
        assert_eq!(
            (user.user.as_deref(), user.password.as_str()),
            (Some("edgex"), "s3cr:t")
        );
        assert_eq!(ok("tls=no").security, ServerSecurity::default());
        assert_eq!(err("user=u"), "user= needs password=: add &password=PW");
        assert!(err("password=p").starts_with("password= needs user="));
        assert!(err("user=default&password=p").starts_with("user=default: the default user"));
        assert_eq!(
            err("user=a%20b&password=p"),
            "bad user value \"a%20b\": use letters, digits, '_', '-' and '.'"
        );
        assert_eq!(err("tls=on"), "bad tls value \"on\": use yes or no");
        assert_eq!(
            parse("tls=yes", true).unwrap_err(),
            "a spawned cluster takes no tls= (TLS and ACL users on a cluster's nodes are not \
             implemented): drop it, or use redis-tcp?tls=…"
        );
    }

    #[test]
    fn a_spawned_cluster_takes_wait_but_not_replicas() {
        let o = parse("wait=2&appendonly=yes", true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (o.wait, o.server.replicas, o.server.appendonly),
            (2, 0, true)
        );
        let refused = parse("replicas=1", true).unwrap_err();
        assert_eq!(
            refused,
            "a spawned cluster takes no replicas=: its replicas come from --cluster-replicas (each primary gets that \
             many): drop replicas="
        );
    }
}
