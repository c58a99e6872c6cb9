//! Stage two of `edgebench perf`'s command line: PadoGrid's single-dash flags (`-run`,
//! `-prop FILE`, ...) and edgebench's `--target`/`-db`, turned into a typed [`PerfArgs`].
//!
//! clap takes the tool's flags as they come (PadoGrid's words are not clap's shape); this
//! module checks them, and each error names the flag and the flags there are.

use std::path::PathBuf;

use super::db::DbFlags;

/// The perf tools, as PadoGrid's `bin_sh` scripts name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `test_group`: groups of operations from `etc/group.properties`.
    TestGroup,
    /// `test_ingestion`: PBM ingestion from `etc/ingestion.properties`.
    TestIngestion,
    /// `test_tx`: PBM transactions from `etc/tx.properties`.
    TestTx,
    /// `create_csv [-all]`: the results files as CSV.
    CreateCsv,
    /// `clean_results [-all]`: empty the results directories.
    CleanResults,
    /// `create_group_config`: write a group.properties template into `etc/`.
    CreateGroupConfig,
}

impl Tool {
    /// Every tool, in the order the usage lines list them.
    pub const ALL: [(&'static str, Tool); 6] = [
        ("test_group", Tool::TestGroup),
        ("test_ingestion", Tool::TestIngestion),
        ("test_tx", Tool::TestTx),
        ("create_csv", Tool::CreateCsv),
        ("clean_results", Tool::CleanResults),
        ("create_group_config", Tool::CreateGroupConfig),
    ];

    /// The tool named `name`, or a usage line listing all of them.
    pub fn parse(name: &str) -> Result<Tool, String> {
        Tool::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = Tool::ALL.iter().map(|(n, _)| *n).collect();
                let (last, rest) = names.split_last().expect("six tools");
                format!(
                    "unknown perf tool {name:?}: use {} or {last}",
                    rest.join(", ")
                )
            })
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        Tool::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .expect("every tool is in ALL")
    }
}

/// What `edgebench perf TOOL FLAGS` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PerfArgs {
    /// `-?`, `-h` or `--help`: print the usage line.
    Help(String),
    /// Run the tool with these flags.
    Run(PerfFlags),
}

/// The flags of one perf tool, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerfFlags {
    /// Which tool (`None` only while parsing).
    pub tool: Option<Tool>,
    /// `-run`.
    pub run: bool,
    /// `-list`.
    pub list: bool,
    /// `-delete`.
    pub delete: bool,
    /// `-all`.
    pub all: bool,
    /// `-prop FILE`.
    pub prop: Option<PathBuf>,
    /// `--target T` (also `-target`).
    pub target: Option<String>,
    /// `--cluster-shards N` and `--cluster-replicas R`: the shape of a spawned
    /// `--target redis-cluster`.
    pub cluster_shape: (Option<u16>, Option<u16>),
    /// `--wait N`: every write followed by `WAIT N 0` (checked with the target).
    pub wait: Option<String>,
    /// `-db`, `--db URL` or `--db-prop FILE`: write to a database (perf::db) instead.
    pub db: Option<DbFlags>,
}

impl PerfFlags {
    /// The tool (set by [`parse`]).
    pub fn tool(&self) -> Tool {
        self.tool.expect("parse sets the tool")
    }
}

/// Parses `TOOL FLAGS...`. The tool is checked after the flags, as PadoGrid's scripts read
/// their flags first: `perf nosuch -x` names the flag.
pub fn parse(tool: &str, flags: &[String]) -> Result<PerfArgs, String> {
    let mut f = PerfFlags::default();
    let mut i = 0;
    while i < flags.len() {
        let flag = flags[i].as_str();
        let mut value = |name: &str| {
            i += 1;
            flags
                .get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "-run" => f.run = true,
            "-list" => f.list = true,
            "-delete" => f.delete = true,
            "-all" => f.all = true,
            "-prop" => f.prop = Some(PathBuf::from(value("-prop")?)),
            "--target" | "-target" => f.target = Some(value("--target")?),
            "--cluster-shards" | "--cluster-replicas" => {
                let v = value(flag)?;
                let n = v
                    .parse::<u16>()
                    .map_err(|_| format!("{flag} {v:?}: give a whole number"))?;
                if flag == "--cluster-shards" {
                    f.cluster_shape.0 = Some(n);
                } else {
                    f.cluster_shape.1 = Some(n);
                }
            }
            "--wait" => f.wait = Some(value("--wait")?),
            "-?" | "-h" | "--help" => {
                return Ok(PerfArgs::Help(format!(
                    "Usage: edgebench perf {tool} [-run] [-list] [-delete] [-prop FILE] [--target T [--cluster-shards N] [--cluster-replicas R] [--wait N] | -db [--db URL] [--db-prop FILE]]"
                )));
            }
            "-db" => {
                f.db.get_or_insert_with(DbFlags::default);
            }
            "--db" | "--db-prop" => {
                let v = value(flag)?;
                let d = f.db.get_or_insert_with(DbFlags::default);
                if flag == "--db" {
                    d.url = Some(v);
                } else {
                    d.prop = Some(PathBuf::from(v));
                }
            }
            other => {
                return Err(format!(
                    "unknown flag {other:?} for perf {tool}: use -run, -list, -delete, -prop FILE, \
                     -all, --target T, --wait N, -db, --db URL or --db-prop FILE"
                ))
            }
        }
        i += 1;
    }
    f.tool = Some(Tool::parse(tool)?);
    Ok(PerfArgs::Run(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_become_typed_values() {
        let PerfArgs::Run(f) = parse(
            "test_group",
            &args(&["-run", "-prop", "etc/x.properties", "--target", "redis-uds"]),
        )
        .unwrap() else {
            panic!("not a run")
        };
        assert_eq!(f.tool(), Tool::TestGroup);
        assert!(f.run && !f.list && !f.delete && !f.all);
        assert_eq!(f.prop, Some(PathBuf::from("etc/x.properties")));
        assert_eq!(f.target.as_deref(), Some("redis-uds"));
        assert_eq!(f.db, None);
    }

    #[test]
    fn db_flags_gather_into_one_value() {
        let PerfArgs::Run(f) = parse(
            "test_group",
            &args(&[
                "--db",
                "mysql://root@127.0.0.1/test",
                "--db-prop",
                "etc/db.properties",
            ]),
        )
        .unwrap() else {
            panic!("not a run")
        };
        let db = f.db.unwrap();
        assert_eq!(db.url.as_deref(), Some("mysql://root@127.0.0.1/test"));
        assert_eq!(db.prop, Some(PathBuf::from("etc/db.properties")));
    }

    #[test]
    fn an_unknown_tool_lists_all_six() {
        let e = parse("test_nothing", &[]).unwrap_err();
        assert_eq!(
            e,
            "unknown perf tool \"test_nothing\": use test_group, test_ingestion, test_tx, \
             create_csv, clean_results or create_group_config"
        );
    }

    #[test]
    fn a_flag_without_its_value_is_named() {
        assert_eq!(
            parse("test_group", &args(&["-prop"])).unwrap_err(),
            "-prop needs a value"
        );
        assert!(parse("test_group", &args(&["-nope"]))
            .unwrap_err()
            .starts_with("unknown flag \"-nope\" for perf test_group"));
    }

    #[test]
    fn help_is_its_own_value() {
        assert!(matches!(
            parse("test_tx", &args(&["-?"])).unwrap(),
            PerfArgs::Help(line) if line.starts_with("Usage: edgebench perf test_tx")
        ));
    }
}
