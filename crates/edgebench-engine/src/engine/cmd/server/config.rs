//! CONFIG: GET, SET, RESETSTAT and HELP over the parameters in [`super::state`], matched by
//! Redis's case-insensitive glob.

use std::sync::atomic::Ordering;

use super::common::{err, help, lossy, sub_arity, unknown_subcommand};
use super::state::{Param, PARAMS};
use crate::engine::cmd::{is, Ctx};
use crate::engine::error::CmdError;
use crate::engine::handle::Engine;
use crate::resp::reply::Reply;

const CONFIG_HELP: &[&str] = &[
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
];

pub(super) fn config(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    if is(sub, "get") {
        sub_arity(args, -3, "config|get")?;
        Ok(Reply::Map(
            config_matches(ctx.engine, &args[2..])
                .into_iter()
                .map(|(k, v)| (Reply::Bulk(k.into_bytes()), Reply::Bulk(v.into_bytes())))
                .collect(),
        ))
    } else if is(sub, "set") {
        sub_arity(args, -4, "config|set")?;
        if args.len() % 2 == 1 {
            return Err(CmdError::Syntax);
        }
        let pairs: Vec<(&[u8], &[u8])> = args[2..].chunks(2).map(|p| (p[0], p[1])).collect();
        ctx.engine.config_set(&pairs)?;
        Ok(Reply::ok())
    } else if is(sub, "resetstat") {
        sub_arity(args, 2, "config|resetstat")?;
        ctx.engine.reset_stats();
        Ok(Reply::ok())
    } else if is(sub, "rewrite") {
        sub_arity(args, 2, "config|rewrite")?;
        Err(err("ERR The server is running without a config file"))
    } else if is(sub, "help") {
        sub_arity(args, 2, "config|help")?;
        Ok(help(args, CONFIG_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// CONFIG GET's pairs for these patterns: an exact name is reported as it was typed, a glob
/// match under its own name; each parameter once, in the order first matched.
fn config_matches(engine: &Engine, patterns: &[&[u8]]) -> Vec<(String, String)> {
    let values = engine.server().read();
    let mut seen = [false; PARAMS.len()];
    let mut out = Vec::new();
    for pattern in patterns {
        if !pattern.iter().any(|b| matches!(b, b'[' | b'*' | b'?')) {
            if let Some(i) = Param::find(pattern) {
                if !seen[i] {
                    seen[i] = true;
                    out.push((lossy(pattern), values[i].clone()));
                }
            }
            continue;
        }
        for (i, p) in PARAMS.iter().enumerate() {
            if !seen[i] && glob_match_nocase(pattern, p.name) {
                seen[i] = true;
                out.push((p.name.to_string(), values[i].clone()));
            }
        }
    }
    out
}

impl Engine {
    /// CONFIG RESETSTAT: zeroes the counters INFO stats and commandstats report.
    pub fn reset_stats(&self) {
        let stats = self.stats();
        stats.commands.reset();
        stats.connections.store(0, Ordering::Relaxed);
        stats.expired_keys.store(0, Ordering::Relaxed);
        self.server().calls.reset();
        self.server().rejected.reset();
        self.server().failed.reset();
        self.server().errors.reset();
        self.server().histograms.reset();
        self.inner().lazyfree.reset();
        self.server().peak_memory.store(0, Ordering::Relaxed);
    }
}

/// Redis's case-insensitive glob match (CONFIG GET, COMMAND LIST), for the lowercase names
/// of parameters and commands.
pub(super) fn glob_match_nocase(pattern: &[u8], lowercase_name: &str) -> bool {
    crate::engine::cmd::keys::glob_match(&pattern.to_ascii_lowercase(), lowercase_name.as_bytes())
}
