//! The arbitrary-command section of [`super::KvConfig`] (`--command`, `--command-ratio`,
//! `--command-key-pattern`, `--command-stats-breakdown`), and memtier's
//! `verify_cluster_option`, which is mostly about which commands cluster mode can route.
//!
//! Invariants: a ratio or pattern belongs to the `--command` before it; with commands,
//! `--key-pattern` and `--ratio` are refused (memtier sets both per command); `P` on every
//! command or none; in cluster mode only single-key commands.

use std::path::Path;

use super::args::{CommandFlag, KvArgs};
use super::parse::{parse_pattern, parse_u32};
use crate::kv::command::ArbitraryCommand;
use crate::kv::error::{conflict, invalid, KvConfigError};
use crate::kv::keys::KeyPattern;

/// Types the `--command` flags in command-line order; also says whether stats are broken
/// down per command line (`--command-stats-breakdown=line`).
pub(super) fn commands(
    a: &KvArgs,
    ratio_given: bool,
    multi_key_get: u32,
    warnings: &mut Vec<String>,
) -> Result<(Vec<ArbitraryCommand>, bool), KvConfigError> {
    let mut commands: Vec<ArbitraryCommand> = Vec::new();
    for flag in &a.commands.flags {
        // A ratio or pattern belongs to the most recent --command (memtier).
        let preceding = |commands: &[ArbitraryCommand], flag: &str, v: &str| {
            commands.len().checked_sub(1).ok_or_else(|| {
                conflict(
                    format!("{flag} {v} before any --command"),
                    "put it after the --command it belongs to",
                )
            })
        };
        match flag {
            CommandFlag::Command(text) => commands.push(ArbitraryCommand::parse(text)?),
            CommandFlag::Ratio(v) => {
                let i = preceding(&commands, "--command-ratio", v)?;
                commands[i].ratio = parse_u32(
                    "--command-ratio",
                    v,
                    1,
                    "command-ratio must be a whole number above 0",
                )?;
            }
            CommandFlag::KeyPattern(v) => {
                let i = preceding(&commands, "--command-key-pattern", v)?;
                commands[i].key_pattern = parse_pattern(
                    "--command-key-pattern",
                    v,
                    "command-key-pattern must be one of S, R, G, Z, P",
                )?;
            }
        }
    }
    let stats_by_line = match a.command_stats_breakdown.as_deref() {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("command") => false,
        Some(v) if v.eq_ignore_ascii_case("line") => true,
        Some(v) => {
            return Err(invalid(
                "--command-stats-breakdown",
                v,
                "command-stats-breakdown must be 'command' or 'line'",
            ))
        }
    };
    if !commands.is_empty() {
        if let Some(p) = &a.key_pattern {
            return Err(conflict(
                format!("--key-pattern {p} with --command"),
                "with arbitrary commands the key pattern is set per command with --command-key-pattern (memtier)",
            ));
        }
        if ratio_given {
            return Err(conflict(
                format!(
                    "--ratio {} with --command",
                    a.ratio.as_deref().unwrap_or("")
                ),
                "with arbitrary commands the mix is set per command with --command-ratio (memtier)",
            ));
        }
        let parallel = commands
            .iter()
            .filter(|c| c.key_pattern == KeyPattern::Parallel)
            .count();
        if parallel > 0 && parallel != commands.len() {
            return Err(conflict(
                "--command-key-pattern P on some commands only",
                "parallel key-pattern must be configured for all commands (memtier)",
            ));
        }
        if multi_key_get > 0 {
            warnings.push("--multi-key-get does not apply to --command; ignored".to_string());
        }
    }
    Ok((commands, stats_by_line))
}

/// memtier's `verify_cluster_option`: what `--cluster-mode` cannot go with.
pub(super) fn check_cluster(
    reconnect_interval: Option<u32>,
    multi_key_get: u32,
    unix_socket: Option<&Path>,
    select_db: u32,
    wait_ratio: bool,
    commands: &[ArbitraryCommand],
) -> Result<(), KvConfigError> {
    // memtier's order: reconnect-interval, multi-key-get, wait-ratio, unix-socket.
    let reason = if reconnect_interval.is_some() {
        Some(("--reconnect-interval", "drop one"))
    } else if multi_key_get > 0 {
        Some(("--multi-key-get", "drop one"))
    } else if wait_ratio {
        Some((
            "--wait-ratio",
            "its WAITs name no key, so no primary; use --wait N, which follows each write with \
             WAIT N 0 on the primary the write went to",
        ))
    } else if unix_socket.is_some() {
        Some(("--unix-socket", "drop one"))
    } else if select_db > 0 {
        Some((
            "--select-db (Redis Cluster only has database 0)",
            "drop one",
        ))
    } else {
        None
    };
    if let Some((flag, fix)) = reason {
        return Err(conflict(
            format!("--cluster-mode with {flag}"),
            format!("cluster mode does not support it (memtier): {fix}"),
        ));
    }
    if let Some(c) = commands.iter().find(|c| c.keys_count() > 1) {
        return Err(KvConfigError::Command {
            command: c.text.clone(),
            fix: "cluster mode supports only single-key commands (memtier)".to_string(),
        });
    }
    Ok(())
}
