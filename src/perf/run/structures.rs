//! `test_group -list` and `-delete` on a Redis-protocol target: every data structure the groups
//! use (and their ER children), once, in the groups' order, with its size — and removing them.
//!
//! Invariant: what is listed and what is deleted are the same structures, from one walk over
//! the groups ([`used_operations`], PadoGrid's `deleteDataStructures`).

use redis::ConnectionLike;

use crate::perf::config::{DataStructure, GroupTestConfig, Operation};

/// One data structure as `-list`/`-delete` show it (PadoGrid: `  - name:`, `    data:`,
/// `    size:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructureInfo {
    /// The data structure's name (`map1`).
    pub name: String,
    /// Redisson's type name (`Map`, `MapCache`, `Queue`, ...).
    pub data: &'static str,
    /// Its size on the target (topics store nothing: `0`).
    pub size: i64,
}

impl StructureInfo {
    /// PadoGrid's lines for it; with `deleted`, the `    deleted:` line too.
    pub fn render(&self, deleted: Option<bool>) -> String {
        let mut out = format!(
            "  - name: {}\n    data: {}\n    size: {}\n",
            self.name, self.data, self.size
        );
        if let Some(d) = deleted {
            out.push_str(&format!("    deleted: {d}\n"));
        }
        out
    }
}

/// What `-list` shows: each data structure the groups use (and their ER children), once, in
/// the groups' order, and its size on the target.
pub fn list_structures(
    cfg: &GroupTestConfig,
    con: &mut dyn ConnectionLike,
) -> Result<Vec<StructureInfo>, String> {
    let mut out: Vec<StructureInfo> = Vec::new();
    for op in used_operations(cfg) {
        let name = &op.ds_name;
        if op.data_structure == DataStructure::Sleep || out.iter().any(|s| &s.name == name) {
            continue;
        }
        let size = match op.data_structure {
            DataStructure::Map => query_int(con, redis::cmd("HLEN").arg(name))?,
            DataStructure::List | DataStructure::Queue => {
                query_int(con, redis::cmd("LLEN").arg(name))?
            }
            DataStructure::RTopic => query_int(con, redis::cmd("XLEN").arg(name))?,
            DataStructure::MCache => mcache_keys(con, name)?.len() as i64,
            DataStructure::Topic | DataStructure::STopic | DataStructure::Sleep => 0,
        };
        out.push(StructureInfo {
            name: name.clone(),
            data: op.data_structure.redisson_type(),
            size,
        });
    }
    Ok(out)
}

/// The keys of an `mcache`'s entries (`<name>:*`).
fn mcache_keys(con: &mut dyn ConnectionLike, name: &str) -> Result<Vec<String>, String> {
    redis::cmd("KEYS")
        .arg(format!("{name}:*"))
        .query(con)
        .map_err(|e| e.to_string())
}

/// The operations the groups of `cfg` run, and the ER children they write into, each once,
/// in the groups' order: what `-list` and `-delete` cover (PadoGrid's `deleteDataStructures`).
/// An operation only named by a `ref` is not among them.
fn used_operations(cfg: &GroupTestConfig) -> Vec<&Operation> {
    let mut names: Vec<&str> = Vec::new();
    for group in cfg.schedule.stages.iter().flatten() {
        for name in cfg.groups.get(group).map_or(&[][..], |g| &g.operations[..]) {
            let child = cfg
                .operations
                .get(name)
                .and_then(|o| o.factory.as_ref())
                .and_then(|f| f.er.as_ref())
                .map(|er| er.operation.as_str());
            for n in std::iter::once(name.as_str()).chain(child) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    names
        .into_iter()
        .filter_map(|n| cfg.operations.get(n))
        .collect()
}

/// What `-delete` does: removes every data structure the groups use (and their ER
/// children); returns each as listed just before, and whether it existed (PadoGrid's
/// `deleted: <isExists>`).
pub fn delete_structures(
    cfg: &GroupTestConfig,
    con: &mut dyn ConnectionLike,
) -> Result<Vec<(StructureInfo, bool)>, String> {
    let mut out = Vec::new();
    for info in list_structures(cfg, con)? {
        let existed = match info.data {
            "Topic" | "ShardedTopic" => false,
            "MapCache" => {
                let keys = mcache_keys(con, &info.name)?;
                for chunk in keys.chunks(500) {
                    query_int(con, redis::cmd("DEL").arg(chunk))?;
                }
                !keys.is_empty()
            }
            _ => query_int(con, redis::cmd("DEL").arg(&info.name))? > 0,
        };
        out.push((info, existed));
    }
    Ok(out)
}

fn query_int(con: &mut dyn ConnectionLike, cmd: &redis::Cmd) -> Result<i64, String> {
    cmd.query(con).map_err(|e| e.to_string())
}
