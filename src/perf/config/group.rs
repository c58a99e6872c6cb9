//! `test_group`'s configuration (reference §2): the stage schedule of `groupNames`, each group's
//! threads and operations, each operation after `ref` inheritance and defaults, and its
//! Northwind factory (`<op>.factory.*`), read from [`Properties`] into [`GroupTestConfig`].
//!
//! [`FactoryKind`] and [`KeyFormat`] are defined here, as what `factory.class` and
//! `factory.key.*` parse to; the factories that use them (`perf::factory`) re-export them.
//!
//! Invariants: the module-level ones of `config` (PadoGrid's defaults, a one-line
//! [`ConfigError`] for a likely mistake, operation order and repetitions kept); a `ref` chain
//! never loops; a factory is never inherited through `ref`.

use std::collections::BTreeMap;
use std::path::Path;

use super::cases::{DataStructure, TestCase};
use super::read::{available_processors, default_thread_count, ConfigError, Reader, INT_MAX};
use crate::perf::properties::Properties;

/// `groupNames`: stages run one after another (`,`), each a set of groups run at the same
/// time (`&`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Stages in order; each stage's group ids in the order written.
    pub stages: Vec<Vec<String>>,
}

impl Schedule {
    /// Parses a `groupNames` value: `split(",")`, then `split("&")`, names trimmed. Trailing
    /// empty pieces are dropped, as Java's `String.split` drops them (`g1,g2,` is `g1,g2`).
    pub fn parse(value: &str) -> Result<Self, String> {
        fn java_split(s: &str, sep: char) -> Vec<&str> {
            let mut parts: Vec<&str> = s.split(sep).collect();
            while parts.len() > 1 && parts.last().is_some_and(|p| p.trim().is_empty()) {
                parts.pop();
            }
            parts
        }
        let mut stages = Vec::new();
        for step in java_split(value, ',') {
            let mut stage = Vec::new();
            for name in java_split(step, '&') {
                let name = name.trim();
                if name.is_empty() {
                    return Err("a list of group ids joined by ',' (one after another) and '&' (at the same time), with no empty names, e.g. g1&g2,g3".into());
                }
                stage.push(name.to_string());
            }
            stages.push(stage);
        }
        Ok(Schedule { stages })
    }

    /// Every group id in order of first appearance.
    pub fn group_ids(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for id in self.stages.iter().flatten() {
            if !out.contains(&id.as_str()) {
                out.push(id);
            }
        }
        out
    }

    /// How PadoGrid prints a stage: `g1 & g2`.
    pub fn stage_label(stage: &[String]) -> String {
        stage.join(" & ")
    }
}

/// One group: a function of operations that `threadCount` threads invoke.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The id from `groupNames`; what results files and CSVs call the group.
    pub id: String,
    /// `<g>.name`: shown by the configuration printout only (PadoGrid never reads it).
    pub name: Option<String>,
    /// `<g>.comment`, default empty.
    pub comment: String,
    /// `<g>.threadCount`, default `(int)(cpus * 1.5)`.
    pub thread_count: u32,
    /// `<g>.totalInvocationCount`, default 10000.
    pub total_invocation_count: u64,
    /// `<g>.operations` as written (results files print it raw).
    pub operations_raw: String,
    /// The operations to invoke, in the listed order with repetitions; `sleep` operations of
    /// 0 ms or less are dropped, as PadoGrid does.
    pub operations: Vec<String>,
}

impl Group {
    /// `totalInvocationCount / threadCount`; the remainder is dropped, as PadoGrid does.
    pub fn invocation_count_per_thread(&self) -> u64 {
        self.total_invocation_count / u64::from(self.thread_count.max(1))
    }

    /// Invocations a run really makes: `per thread × threads`.
    pub fn actual_invocation_count_per_run(&self) -> u64 {
        self.invocation_count_per_thread() * u64::from(self.thread_count)
    }
}

/// How a factory formats ids into keys (`AbstractDataObjectFactory`, reference §4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFormat {
    /// `factory.key.prefix`, else the operation's `key.prefix`, else `k`.
    pub prefix: String,
    /// `factory.key.length`, default -1 (no fixed length, and then no prefix either).
    pub length: i32,
    /// `factory.key.isRandom`, default true (keys come from the fake-data generator).
    pub is_random: bool,
    /// `factory.key.isLeadingZeros`, default false.
    pub leading_zeros: bool,
}

impl KeyFormat {
    /// `createKey(id)`: `length <= 0` → the bare number (PadoGrid drops the prefix there);
    /// leading zeros → prefix, zeros, number, `length` characters in all; else prefix+number.
    pub fn key(&self, id: i64) -> String {
        if self.length <= 0 {
            return id.to_string();
        }
        if self.leading_zeros {
            let digits = id.to_string();
            let pad = (self.length as usize)
                .saturating_sub(self.prefix.chars().count())
                .saturating_sub(digits.len());
            return format!("{}{}{}", self.prefix, "0".repeat(pad), digits);
        }
        format!("{}{}", self.prefix, id)
    }
}

/// The built-in data-object factories PadoGrid's `factory.class` names map to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactoryKind {
    /// `…nw.impl.CustomerFactoryImpl` → table `customers`.
    Customer,
    /// `…nw.impl.OrderFactoryImpl` → table `orders`.
    Order,
}

impl FactoryKind {
    /// Maps a Java class name by its simple name, so every product's package works
    /// (`org.redis.demo.nw.impl.`, `org.redisson.demo.nw.impl.`, `org.hazelcast.demo.nw.impl.` …).
    pub fn from_class(class: &str) -> Option<Self> {
        match class.rsplit('.').next()? {
            "CustomerFactoryImpl" => Some(Self::Customer),
            "OrderFactoryImpl" => Some(Self::Order),
            _ => None,
        }
    }

    /// The SQL table (`@Table(name=…)`).
    pub fn table(self) -> &'static str {
        match self {
            Self::Customer => "customers",
            Self::Order => "orders",
        }
    }
}

/// `factory.er.*`: entity relationships written after each parent entry (reference §2.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErConfig {
    /// `factory.er.operation`: the child operation.
    pub operation: String,
    /// `factory.er.maxKeys`, default 1.
    pub max_keys: u32,
    /// `factory.er.isRandom`, default true: children per parent uniform in `[1, maxKeys]`.
    pub is_random: bool,
}

/// `<op>.factory.*`: a data-object factory instead of zero-filled Blobs.
#[derive(Debug, Clone, PartialEq)]
pub struct FactoryConfig {
    /// `factory.class` as written (PadoGrid's Java class name).
    pub class: String,
    /// The built-in factory the class name maps to.
    pub kind: FactoryKind,
    /// Key formatting.
    pub key: KeyFormat,
    /// Entity relationships, when `factory.er.operation` is set.
    pub er: Option<ErConfig>,
    /// Every `<op>.factory.*` and `<op>.key.*` key with `<op>.` stripped, as PadoGrid hands
    /// them to `initialize()`.
    pub props: Properties,
}

/// One resolved operation (`<op>.*` keys after `ref` inheritance and defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    /// The operation id.
    pub name: String,
    /// The data structure.
    pub data_structure: DataStructure,
    /// Its name (`put1.map=map1` → `map1`); default `map1`. For `sleep`, the op id.
    pub ds_name: String,
    /// The test case (invalid ones already replaced by the structure's default).
    pub test_case: TestCase,
    /// `payloadSize` in bytes, default 1024.
    pub payload_size: usize,
    /// `batchSize`, default 100.
    pub batch_size: usize,
    /// `totalEntryCount`, default 10000.
    pub total_entry_count: u64,
    /// `key.prefix`, default `k`.
    pub key_prefix: String,
    /// `key.startNum`, default 1.
    pub key_start_num: i64,
    /// `randomSeed`, default 1 (PadoGrid seeds each operation's `java.util.Random` with 1).
    pub random_seed: i64,
    /// `sleep` in ms, for the `sleep` structure.
    pub sleep_ms: u64,
    /// `ttlInSec` (edgebench): TTL of `mcache` entries; default 300; 0 = no expiry.
    pub ttl_sec: u64,
    /// The factory, when `factory.class` is set (never inherited through `ref`).
    pub factory: Option<FactoryConfig>,
    /// The `ref` chain this operation inherited from, nearest first.
    pub refs: Vec<String>,
}

impl Operation {
    /// The key of entry number `n` (`prefix + n`).
    pub fn key(&self, n: i64) -> String {
        format!("{}{}", self.key_prefix, n)
    }
}

/// Default `mcache` entry TTL (edgebench; Redisson's `put` without TTL never expires,
/// which would make `mcache` a plain `map`).
pub const DEFAULT_MCACHE_TTL_SEC: u64 = 300;

/// `test_group`'s configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTestConfig {
    /// The file it came from.
    pub file: String,
    /// `testCount`, default 1.
    pub test_count: u32,
    /// `testIntervalInMsec`, default 0.
    pub test_interval_ms: u64,
    /// `printStatusIntervalInSec`, default 10 (documented; PadoGrid's code says 1000).
    pub print_status_interval_sec: u64,
    /// `groupNames`.
    pub schedule: Schedule,
    /// Every group in the schedule, keyed by id.
    pub groups: BTreeMap<String, Group>,
    /// Every operation the groups use, their refs and their ER children, keyed by id.
    pub operations: BTreeMap<String, Operation>,
    /// Tolerated oddities, one line each (e.g. an invalid test case replaced by the default).
    pub warnings: Vec<String>,
}
/// Operation keys that are not data structures. `key.*` and `factory.*` are open-ended.
const OP_KEYS: [&str; 10] = [
    "ref",
    "testCase",
    "payloadSize",
    "batchSize",
    "totalEntryCount",
    "randomSeed",
    "ttlInSec",
    "dataStructure",
    "dataStructureName",
    "sleep",
];

/// An operation's own keys, before `ref` inheritance.
#[derive(Debug, Clone, Default)]
struct RawOp {
    ds: Option<(DataStructure, String)>,
    test_case: Option<(String, String)>, // (key, value)
    payload_size: Option<i64>,
    batch_size: Option<i64>,
    total_entry_count: Option<i64>,
    key_prefix: Option<String>,
    key_start_num: Option<i64>,
    random_seed: Option<i64>,
    sleep_ms: Option<i64>,
    ttl_sec: Option<i64>,
    reference: Option<String>,
}

impl RawOp {
    /// Fills unset fields from `parent` (PadoGrid's `ref`: every non-factory value).
    fn inherit(&mut self, parent: &RawOp) {
        macro_rules! take {
            ($($f:ident),*) => { $( if self.$f.is_none() { self.$f = parent.$f.clone(); } )* };
        }
        take!(
            ds,
            test_case,
            payload_size,
            batch_size,
            total_entry_count,
            key_prefix,
            key_start_num,
            random_seed,
            sleep_ms,
            ttl_sec
        );
    }
}

fn read_raw_op(r: &Reader<'_>, op: &str) -> Result<RawOp, ConfigError> {
    let p = format!("{op}.");
    // Unknown single-word suffixes are most likely a misspelt data structure: PadoGrid would
    // silently fall back to `map1`/putall (its own group-list.properties does exactly that).
    for (key, _) in r.props.iter() {
        let Some(suffix) = key.strip_prefix(&p) else {
            continue;
        };
        if suffix.starts_with("key.") || suffix.starts_with("factory.") {
            continue;
        }
        if !OP_KEYS.contains(&suffix) && DataStructure::parse(suffix).is_none() {
            return Err(r.bad(
                key,
                r.str(key).unwrap_or(""),
                &format!(
                    "a known operation key: the data structure key is one of {} (e.g. {op}.map=map1); other keys are {}, key.*, factory.*",
                    DataStructure::valid_keys(),
                    OP_KEYS[..8].join(", ")
                ),
            ));
        }
    }
    let k = |s: &str| format!("{op}.{s}");
    let ds = if let Some(v) = r.str(&k("dataStructure")) {
        let ds = DataStructure::parse(v.trim()).ok_or_else(|| {
            r.bad(
                &k("dataStructure"),
                v,
                &format!("a data structure: one of {}", DataStructure::valid_keys()),
            )
        })?;
        let name = r
            .str(&k("dataStructureName"))
            .or_else(|| r.str(&k(ds.key())))
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}1", ds.key()));
        Some((ds, name))
    } else {
        // PadoGrid's order; `cache` (documented) is checked right after `mcache`.
        let mut found = None;
        for ds in DataStructure::ALL {
            let v = r.str(&k(ds.key())).or_else(|| {
                (ds == DataStructure::MCache)
                    .then(|| r.str(&k("cache")))
                    .flatten()
            });
            if let Some(v) = v {
                found = Some((ds, v.trim().to_string()));
                break;
            }
        }
        found
    };
    let mut raw = RawOp {
        test_case: r
            .str(&k("testCase"))
            .map(|v| (k("testCase"), v.to_string())),
        payload_size: r.int(&k("payloadSize"), 0, INT_MAX)?,
        batch_size: r.int(&k("batchSize"), 1, INT_MAX)?,
        total_entry_count: r.int(&k("totalEntryCount"), 1, INT_MAX)?,
        key_prefix: r.str(&k("key.prefix")).map(str::to_string),
        key_start_num: r.int(&k("key.startNum"), i64::from(i32::MIN), INT_MAX)?,
        random_seed: r.int(&k("randomSeed"), i64::MIN, i64::MAX)?,
        ttl_sec: r.int(&k("ttlInSec"), 0, INT_MAX)?,
        reference: r.str(&k("ref")).map(|s| s.trim().to_string()),
        ..RawOp::default()
    };
    if let Some((DataStructure::Sleep, _)) = &ds {
        raw.sleep_ms = r.int(&k("sleep"), i64::from(i32::MIN), INT_MAX)?;
        raw.ds = Some((DataStructure::Sleep, op.to_string()));
    } else {
        raw.ds = ds;
    }
    Ok(raw)
}

impl GroupTestConfig {
    /// Reads `path` and builds the configuration, with this machine's processor count.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_properties(&Properties::load(path)?, available_processors())
    }

    /// Builds the configuration; `cpus` sets the default `threadCount`.
    pub fn from_properties(props: &Properties, cpus: usize) -> Result<Self, ConfigError> {
        let r = Reader { props };
        let file = r.file();
        let group_names = r.str("groupNames").ok_or_else(|| ConfigError::Missing {
            file: file.clone(),
            key: "groupNames".into(),
            fix: "list the groups to run, ',' for one after another and '&' for at the same time, e.g. groupNames=g1&g2,g3".into(),
        })?;
        let schedule = Schedule::parse(group_names)
            .map_err(|expected| r.bad("groupNames", group_names, &expected))?;
        let mut warnings = Vec::new();

        // Raw operations: everything the groups name, plus refs and ER children, transitively.
        let mut raw_ops: BTreeMap<String, RawOp> = BTreeMap::new();
        let mut groups = BTreeMap::new();
        let mut pending: Vec<(String, String)> = Vec::new(); // (referring key, op)
        for id in schedule.group_ids() {
            if !r.has_prefix(&format!("{id}.")) {
                return Err(ConfigError::Undefined {
                    file: file.clone(),
                    key: "groupNames".into(),
                    name: id.to_string(),
                    fix: format!("define {id}.operations, {id}.threadCount and {id}.totalInvocationCount, or remove {id} from groupNames"),
                });
            }
            let ops_key = format!("{id}.operations");
            let operations_raw = r.str(&ops_key).unwrap_or("putall").to_string();
            let names: Vec<String> = operations_raw
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            for n in &names {
                pending.push((ops_key.clone(), n.clone()));
            }
            let default_threads = i64::from(default_thread_count(cpus).max(1));
            let group = Group {
                id: id.to_string(),
                name: r.str(&format!("{id}.name")).map(str::to_string),
                comment: r.str(&format!("{id}.comment")).unwrap_or("").to_string(),
                thread_count: r.int_or(&format!("{id}.threadCount"), default_threads, 1, INT_MAX)?
                    as u32,
                total_invocation_count: r.int_or(
                    &format!("{id}.totalInvocationCount"),
                    10000,
                    0,
                    INT_MAX,
                )? as u64,
                operations_raw,
                operations: names,
            };
            groups.insert(id.to_string(), group);
        }
        while let Some((referrer, op)) = pending.pop() {
            if raw_ops.contains_key(&op) {
                continue;
            }
            if !r.has_prefix(&format!("{op}.")) {
                return Err(ConfigError::Undefined {
                    file: file.clone(),
                    key: referrer,
                    name: op.clone(),
                    fix: format!(
                        "define {op}.<data structure>=<name> and {op}.testCase, or fix the name"
                    ),
                });
            }
            let raw = read_raw_op(&r, &op)?;
            if let Some(parent) = &raw.reference {
                pending.push((format!("{op}.ref"), parent.clone()));
            }
            if let Some(child) = r.str(&format!("{op}.factory.er.operation")) {
                pending.push((
                    format!("{op}.factory.er.operation"),
                    child.trim().to_string(),
                ));
            }
            raw_ops.insert(op, raw);
        }

        // Resolve ref chains (PadoGrid: one level, and only to an op parsed earlier; its
        // documentation: "inherits all values set by the referenced test case").
        let mut operations = BTreeMap::new();
        for name in raw_ops.keys() {
            let mut resolved = raw_ops[name].clone();
            let mut chain = vec![name.clone()];
            let mut cur = resolved.reference.clone();
            while let Some(parent) = cur {
                if chain.contains(&parent) {
                    chain.push(parent);
                    return Err(ConfigError::RefCycle {
                        file: file.clone(),
                        key: format!("{}.ref", chain[chain.len() - 2]),
                        chain: chain.join(" -> "),
                    });
                }
                let p = &raw_ops[&parent];
                resolved.inherit(p);
                chain.push(parent);
                cur = p.reference.clone();
            }
            let op = finish_op(&r, name, resolved, chain[1..].to_vec(), &mut warnings)?;
            operations.insert(name.clone(), op);
        }

        // Sleep operations of 0 ms or less are dropped from the groups, as PadoGrid does.
        for g in groups.values_mut() {
            g.operations.retain(|o| {
                let op = &operations[o];
                op.data_structure != DataStructure::Sleep || op.sleep_ms > 0
            });
        }

        Ok(GroupTestConfig {
            file,
            test_count: r.int_or("testCount", 1, 0, INT_MAX)? as u32,
            test_interval_ms: r.int_or("testIntervalInMsec", 0, 0, INT_MAX)? as u64,
            print_status_interval_sec: r.int_or("printStatusIntervalInSec", 10, 1, INT_MAX)? as u64,
            schedule,
            groups,
            operations,
            warnings,
        })
    }

    /// The groups of a stage, in order.
    pub fn stage_groups<'a>(&'a self, stage: &'a [String]) -> impl Iterator<Item = &'a Group> + 'a {
        stage.iter().filter_map(|id| self.groups.get(id))
    }
}

fn finish_op(
    r: &Reader<'_>,
    name: &str,
    raw: RawOp,
    refs: Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Operation, ConfigError> {
    let (ds, ds_name) = raw
        .ds
        .clone()
        .unwrap_or((DataStructure::Map, "map1".to_string()));
    let test_case = match &raw.test_case {
        None => ds.default_test_case(),
        Some((key, value)) => match TestCase::parse(value) {
            Some(tc) if ds.test_cases().contains(&tc) => tc,
            _ if ds == DataStructure::Sleep => TestCase::Sleep,
            _ => {
                let valid: Vec<&str> = ds.test_cases().iter().map(|t| t.name()).collect();
                warnings.push(format!(
                    "{}: {key}={value} is not a {ds} test case (valid: {}); using {} as PadoGrid documents",
                    r.file(),
                    valid.join(", "),
                    ds.default_test_case()
                ));
                ds.default_test_case()
            }
        },
    };
    let factory = read_factory(r, name, &raw)?;
    Ok(Operation {
        name: name.to_string(),
        data_structure: ds,
        ds_name,
        test_case,
        payload_size: raw.payload_size.unwrap_or(1024) as usize,
        batch_size: raw.batch_size.unwrap_or(100) as usize,
        total_entry_count: raw.total_entry_count.unwrap_or(10000) as u64,
        key_prefix: raw.key_prefix.clone().unwrap_or_else(|| "k".into()),
        key_start_num: raw.key_start_num.unwrap_or(1),
        random_seed: raw.random_seed.unwrap_or(1),
        sleep_ms: raw.sleep_ms.unwrap_or(0).max(0) as u64,
        ttl_sec: raw.ttl_sec.map_or(DEFAULT_MCACHE_TTL_SEC, |t| t as u64),
        factory,
        refs,
    })
}

fn read_factory(
    r: &Reader<'_>,
    op: &str,
    raw: &RawOp,
) -> Result<Option<FactoryConfig>, ConfigError> {
    let class_key = format!("{op}.factory.class");
    let Some(class) = r.str(&class_key) else {
        return Ok(None);
    };
    let class = class.trim().to_string();
    let kind = FactoryKind::from_class(&class).ok_or_else(|| {
        r.bad(
            &class_key,
            &class,
            "a built-in factory: a class named CustomerFactoryImpl or OrderFactoryImpl (e.g. org.redis.demo.nw.impl.CustomerFactoryImpl)",
        )
    })?;
    let k = |s: &str| format!("{op}.factory.{s}");
    let key = KeyFormat {
        // Documented intent: the op's resolved key.prefix (inherited through ref too).
        prefix: r
            .str(&k("key.prefix"))
            .map(str::to_string)
            .or_else(|| raw.key_prefix.clone())
            .unwrap_or_else(|| "k".into()),
        length: r.int_or(&k("key.length"), -1, i64::from(i32::MIN), INT_MAX)? as i32,
        is_random: r.bool_or(&k("key.isRandom"), true)?,
        leading_zeros: r.bool_or(&k("key.isLeadingZeros"), false)?,
    };
    let er = match r.str(&k("er.operation")) {
        None => None,
        Some(child) => Some(ErConfig {
            operation: child.trim().to_string(),
            max_keys: r.int_or(&k("er.maxKeys"), 1, 1, INT_MAX)? as u32,
            is_random: r.bool_or(&k("er.isRandom"), true)?,
        }),
    };
    let mut props = r.props.strip_prefix(&format!("{op}.factory."));
    let mut with_factory = Properties::default();
    for (key, value) in props.iter() {
        with_factory.set(&format!("factory.{key}"), value);
    }
    props = with_factory;
    for (key, value) in r.props.strip_prefix(&format!("{op}.key.")).iter() {
        props.set(&format!("key.{key}"), value);
    }
    Ok(Some(FactoryConfig {
        class,
        kind,
        key,
        er,
        props,
    }))
}
