//! Stage two of `edgebench ycsb`'s command line: YCSB's own single-dash flags (`-P FILE`,
//! `-p name=value`, `-threads N`, `-target OPS`, `-s`, `-l LABEL`, `-db NAME`, `-load`, `-t`)
//! beside edgebench's `--target T[,T…]`, taken as they come (clap does not take YCSB's
//! shape) and checked here; each error names the flag and the fix.

use std::path::PathBuf;

use crate::store::ycsb::{Binding, BINDING_NAMES};

/// What `edgebench ycsb` does, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `load` (`-load`): insert the records.
    Load,
    /// `run` (`-t`): the workload's transactions.
    Run,
    /// `suite`: YCSB's recommended sequence (load, A, B, C, F, D; clear; load E, E).
    Suite,
}

/// The parsed command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct YcsbArgs {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// `-P` files, in order.
    pub files: Vec<PathBuf>,
    /// `-p name=value` overrides, in order (the last of a name wins).
    pub overrides: Vec<(String, String)>,
    /// `-threads N`.
    pub threads: Option<String>,
    /// `-target OPS`.
    pub target_ops: Option<String>,
    /// `-s`.
    pub status: bool,
    /// `-l LABEL`.
    pub label: String,
    /// `-db NAME[,NAME…]`.
    pub bindings: Vec<Binding>,
    /// `--ycsb-redis-layout ycsb|go-ycsb[,…]`.
    pub redis_layouts: Vec<Binding>,
    /// `--target T[,T…]` (repeatable).
    pub targets: Vec<String>,
    /// `--out DIR`.
    pub out: Option<PathBuf>,
    /// `--run-id ID`.
    pub run_id: Option<String>,
    /// `-h`, `--help`.
    pub help: bool,
}

/// The usage text.
pub const USAGE: &str = "\
Usage: edgebench ycsb load|run|suite [load|run] [YCSB flags] [--target T[,T...]]

YCSB's flags:
  -P FILE              a workload property file (repeatable; later files win): etc/ycsb/workloada
                       ... workloadf, or workloads/workloadX for edgebench's built-in copy
  -p NAME=VALUE        a property, over every file (repeatable)
  -threads N           client threads (threadcount)
  -target OPS          the whole run's operations per second, split over the threads
  -s                   a status line every status.interval seconds on stderr
  -l LABEL             what status lines start with
  -db NAME[,NAME]      YCSB bindings: redis, go-ycsb, jdbc, postgrenosql, mongodb
  -load, -t            the load or run step, as YCSB names them

edgebench's flags:
  --target T[,T...]    where (default: every target this machine has, as coredata)
  --ycsb-redis-layout ycsb|go-ycsb[,...]
                       YCSB's Redis layout (hashes + _indices) or go-ycsb's (usertable/KEY,
                       no scans) on Redis-protocol targets
  --out DIR            results directory (default: results/<UTC timestamp>-ycsb)
  --run-id ID          the id several load hosts share (report merge)

Steps: load inserts recordcount records; run does operationcount operations; `load run`
does both on the same targets; suite runs YCSB's recommended sequence (load, A, B, C, F,
D, clear, load E, E). See docs/ycsb.md.";

/// Parses the words after `edgebench ycsb`.
pub fn parse(words: &[String]) -> Result<YcsbArgs, String> {
    let mut a = YcsbArgs::default();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        let mut value = |name: &str| {
            i += 1;
            words
                .get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value (edgebench ycsb --help)"))
        };
        match word {
            "load" | "-load" => a.steps.push(Step::Load),
            "run" | "-t" => a.steps.push(Step::Run),
            "suite" => a.steps.push(Step::Suite),
            "-P" => a.files.push(PathBuf::from(value("-P")?)),
            "-p" => {
                let given = value("-p")?;
                a.overrides.push(super::properties::split_override(&given)?);
            }
            "-threads" => a.threads = Some(value("-threads")?),
            "-target" => a.target_ops = Some(value("-target")?),
            "-s" => a.status = true,
            "-l" => a.label = value("-l")?,
            "-db" => {
                let names = value("-db")?;
                for name in names.split(',').map(str::trim) {
                    let b = Binding::parse(name).ok_or_else(|| {
                        format!("-db {name:?}: unknown binding: use {BINDING_NAMES}")
                    })?;
                    if !a.bindings.contains(&b) {
                        a.bindings.push(b);
                    }
                }
            }
            "--ycsb-redis-layout" => {
                let names = value("--ycsb-redis-layout")?;
                for name in names.split(',').map(str::trim) {
                    let b = match name {
                        "ycsb" => Binding::Redis,
                        "go-ycsb" => Binding::GoYcsb,
                        _ => {
                            return Err(format!(
                                "--ycsb-redis-layout {name:?}: use ycsb (YCSB's hashes and \
                                 _indices) or go-ycsb (usertable/KEY hashes, no scans)"
                            ))
                        }
                    };
                    if !a.redis_layouts.contains(&b) {
                        a.redis_layouts.push(b);
                    }
                }
            }
            "--target" => a.targets.push(value("--target")?),
            "--out" => a.out = Some(PathBuf::from(value("--out")?)),
            "--run-id" => a.run_id = Some(value("--run-id")?),
            "-h" | "--help" | "-help" | "-?" => a.help = true,
            other if other.starts_with("--target=") => {
                a.targets.push(other["--target=".len()..].to_string())
            }
            other => {
                return Err(format!(
                    "unknown flag or step {other:?}: steps are load, run and suite; flags -P, \
                     -p, -threads, -target, -s, -l, -db, --target, --ycsb-redis-layout, --out, \
                     --run-id (edgebench ycsb --help)"
                ))
            }
        }
        i += 1;
    }
    if a.help {
        return Ok(a);
    }
    if a.steps.is_empty() {
        return Err(
            "say what to do: edgebench ycsb load, run, `load run`, or suite (edgebench ycsb \
             --help)"
                .to_string(),
        );
    }
    if a.steps.contains(&Step::Suite) && a.steps.len() > 1 {
        return Err(
            "suite is a whole sequence (load, A, B, C, F, D, clear, load E, E): give it alone"
                .to_string(),
        );
    }
    let mut dedup = a.steps.clone();
    dedup.dedup();
    if dedup.len() != a.steps.len() || a.steps == [Step::Run, Step::Load] {
        return Err("give each step once, load before run: edgebench ycsb load run".to_string());
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn ycsb_flags_and_edgebench_flags_parse() {
        let a = parse(&words(
            "load run -P etc/ycsb/workloada -p recordcount=10 -p x=y=z -threads 4 -target 1000 \
             -s -l me -db redis,jdbc --target embedded,redis-uds --ycsb-redis-layout go-ycsb",
        ))
        .unwrap();
        assert_eq!(a.steps, vec![Step::Load, Step::Run]);
        assert_eq!(a.files, vec![PathBuf::from("etc/ycsb/workloada")]);
        assert_eq!(
            a.overrides,
            vec![
                ("recordcount".to_string(), "10".to_string()),
                ("x".to_string(), "y=z".to_string())
            ]
        );
        assert_eq!(a.threads.as_deref(), Some("4"));
        assert_eq!(a.target_ops.as_deref(), Some("1000"));
        assert!(a.status);
        assert_eq!(a.label, "me");
        assert_eq!(a.bindings, vec![Binding::Redis, Binding::Jdbc]);
        assert_eq!(a.targets, vec!["embedded,redis-uds".to_string()]);
        assert_eq!(a.redis_layouts, vec![Binding::GoYcsb]);
        assert_eq!(
            parse(&words("-load -t")).unwrap().steps,
            vec![Step::Load, Step::Run]
        );
    }

    #[test]
    fn bad_command_lines_say_the_fix() {
        let err = |s: &str| parse(&words(s)).unwrap_err();
        assert!(err("").starts_with("say what to do"));
        assert!(err("run load").starts_with("give each step once"));
        assert!(err("suite load").starts_with("suite is a whole sequence"));
        assert_eq!(
            err("load -db cassandra"),
            "-db \"cassandra\": unknown binding: use redis, go-ycsb, jdbc, postgrenosql, mongodb"
        );
        assert!(err("load -P").starts_with("-P needs a value"));
        assert!(err("load -p recordcount").contains("give name=value"));
        assert!(err("load --nope").starts_with("unknown flag or step \"--nope\""));
        assert!(err("load --ycsb-redis-layout json").contains("use ycsb"));
    }
}
