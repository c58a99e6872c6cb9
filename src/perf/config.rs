//! Typed configuration of the three perf_test tools, built from [`Properties`]:
//! [`GroupTestConfig`] for `test_group` (reference §2) and [`PbmTestConfig`] for
//! `test_ingestion` and `test_tx` (reference §3.1).
//!
//! Invariants:
//! - Every key PadoGrid reads has the default PadoGrid's code gives it, except where the code
//!   contradicts PadoGrid's own documentation; there the documented value wins and the item
//!   says so (`printStatusIntervalInSec` = 10, operation order kept, `ref` chains, `cache`).
//! - Input PadoGrid silently tolerates but that is almost surely a mistake (a number that is
//!   not a number, a missing `groupNames`, an operation with no keys, an unknown `ref`, an
//!   unknown data structure key, a `ref` cycle) is a [`ConfigError`] whose one line names the
//!   key and the file. Input PadoGrid documents as tolerated (an invalid `testCase` falls back
//!   to the structure's default) becomes a warning in [`GroupTestConfig::warnings`].
//! - Operations keep the order and repetitions of `<g>.operations` (PadoGrid's Redis code
//!   collapses them through a `HashSet`; its documentation and its Hazelcast code do not).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use super::properties::{Properties, PropertiesError};

/// A configuration error: one line naming the key (or file) and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The properties file could not be read or parsed.
    #[error(transparent)]
    Properties(#[from] PropertiesError),
    /// A required key is absent.
    #[error("{file}: missing {key} ({fix})")]
    Missing {
        /// The file.
        file: String,
        /// The key.
        key: String,
        /// How to fix it.
        fix: String,
    },
    /// A value is not what the key takes.
    #[error("{file}:{line}: {key}={value:?} is not {expected}")]
    BadValue {
        /// The file.
        file: String,
        /// 1-based line of the key.
        line: usize,
        /// The key.
        key: String,
        /// The value found.
        value: String,
        /// What the key takes.
        expected: String,
    },
    /// A reference to an operation or group that the file does not define.
    #[error("{file}: {key} names {name}, but no {name}.* keys are defined ({fix})")]
    Undefined {
        /// The file.
        file: String,
        /// The referring key.
        key: String,
        /// The undefined name.
        name: String,
        /// How to fix it.
        fix: String,
    },
    /// A chain of `ref` keys that loops.
    #[error("{file}: {key} makes a ref cycle {chain} (remove one of these ref keys)")]
    RefCycle {
        /// The file.
        file: String,
        /// The `ref` key that closes the loop.
        key: String,
        /// The loop, `a -> b -> a`.
        chain: String,
    },
}

/// A group test's data structures, in PadoGrid's lookup order: when an operation sets
/// several `<op>.<ds>` keys, the first in this order wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataStructure {
    /// Redisson `RMap` → a Redis hash.
    Map,
    /// Redisson `RMapCache` (entries with a TTL).
    MCache,
    /// Redisson `RTopic` → PUBLISH.
    Topic,
    /// Redisson `RReliableTopic` → a stream.
    RTopic,
    /// Redisson `RShardedTopic` → SPUBLISH.
    STopic,
    /// Redisson `RList` → a Redis list.
    List,
    /// Redisson `RQueue` → a Redis list used FIFO.
    Queue,
    /// `Thread.sleep(ms)`.
    Sleep,
}

impl DataStructure {
    /// All structures, in PadoGrid's lookup order.
    pub const ALL: [DataStructure; 8] = [
        Self::Map,
        Self::MCache,
        Self::Topic,
        Self::RTopic,
        Self::STopic,
        Self::List,
        Self::Queue,
        Self::Sleep,
    ];

    /// The key suffix naming it (`put1.map=map1`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Map => "map",
            Self::MCache => "mcache",
            Self::Topic => "topic",
            Self::RTopic => "rtopic",
            Self::STopic => "stopic",
            Self::List => "list",
            Self::Queue => "queue",
            Self::Sleep => "sleep",
        }
    }

    /// The word `-list`/`-delete` print after `data:` (Redisson's type name).
    pub fn redisson_type(self) -> &'static str {
        match self {
            Self::Map => "Map",
            Self::MCache => "MapCache",
            Self::Topic => "Topic",
            Self::RTopic => "ReliableTopic",
            Self::STopic => "ShardedTopic",
            Self::List => "List",
            Self::Queue => "Queue",
            Self::Sleep => "Sleep",
        }
    }

    /// Parses a key suffix. `cache` is accepted for `mcache` because PadoGrid's file
    /// comments document it under that name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "cache" => Some(Self::MCache),
            _ => Self::ALL.into_iter().find(|d| d.key() == s),
        }
    }

    /// The test cases PadoGrid documents for this structure (plus `fastput`, which its
    /// Redis code implements for maps), the default first.
    pub fn test_cases(self) -> &'static [TestCase] {
        use TestCase::*;
        match self {
            Self::Map | Self::MCache => &[PutAll, Set, Put, FastPut, Get, GetAll],
            Self::List => &[Add, AddAll, Remove],
            Self::Queue => &[Offer, Peek, Poll, Take],
            Self::Topic | Self::RTopic | Self::STopic => &[PublishAll, Publish],
            Self::Sleep => &[TestCase::Sleep],
        }
    }

    /// The documented default test case (PadoGrid file comments).
    pub fn default_test_case(self) -> TestCase {
        self.test_cases()[0]
    }

    fn valid_keys() -> String {
        Self::ALL.map(|d| d.key()).join(", ")
    }
}

impl fmt::Display for DataStructure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A group test operation's test case (`<op>.testCase`, case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestCase {
    /// Map: write one entry, no previous value returned.
    Set,
    /// Map: write one entry.
    Put,
    /// Map: write `batchSize` entries at once.
    PutAll,
    /// Map: write one entry without reading the old value (Redisson `fastPut`).
    FastPut,
    /// Map: read one random entry.
    Get,
    /// Map: read `batchSize` random entries at once.
    GetAll,
    /// Topic: publish one message.
    Publish,
    /// Topic: publish `batchSize` messages.
    PublishAll,
    /// Queue: append one element.
    Offer,
    /// Queue: remove the head, or nothing when empty.
    Poll,
    /// Queue: read the head.
    Peek,
    /// Queue: remove the head, waiting for one.
    Take,
    /// List: append one element.
    Add,
    /// List: append `batchSize` elements.
    AddAll,
    /// List: remove one element equal to a zero payload.
    Remove,
    /// The `sleep` pseudo-structure's only case.
    Sleep,
}

impl TestCase {
    const ALL: [TestCase; 16] = [
        Self::Set,
        Self::Put,
        Self::PutAll,
        Self::FastPut,
        Self::Get,
        Self::GetAll,
        Self::Publish,
        Self::PublishAll,
        Self::Offer,
        Self::Poll,
        Self::Peek,
        Self::Take,
        Self::Add,
        Self::AddAll,
        Self::Remove,
        Self::Sleep,
    ];

    /// The lower-case name used in properties files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Put => "put",
            Self::PutAll => "putall",
            Self::FastPut => "fastput",
            Self::Get => "get",
            Self::GetAll => "getall",
            Self::Publish => "publish",
            Self::PublishAll => "publishall",
            Self::Offer => "offer",
            Self::Poll => "poll",
            Self::Peek => "peek",
            Self::Take => "take",
            Self::Add => "add",
            Self::AddAll => "addall",
            Self::Remove => "remove",
            Self::Sleep => "sleep",
        }
    }

    /// Parses a name case-insensitively, as PadoGrid's `valueOf(toUpperCase())`.
    pub fn parse(s: &str) -> Option<Self> {
        let lower = s.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|t| t.name() == lower)
    }

    /// Whether the case writes entries (and so creates data `get`s can read).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Set
                | Self::Put
                | Self::PutAll
                | Self::FastPut
                | Self::Publish
                | Self::PublishAll
                | Self::Offer
                | Self::Add
                | Self::AddAll
        )
    }
}

impl fmt::Display for TestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// Default thread count: PadoGrid's `(int)(availableProcessors * 1.5)`.
pub fn default_thread_count(cpus: usize) -> u32 {
    ((cpus as f64) * 1.5) as u32
}

/// The machine's processor count, as `Runtime.availableProcessors()`.
pub fn available_processors() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Typed reads of a [`Properties`] with errors that name the file, line and key.
struct Reader<'a> {
    props: &'a Properties,
}

impl<'a> Reader<'a> {
    fn file(&self) -> String {
        self.props.source().to_string()
    }

    fn bad(&self, key: &str, value: &str, expected: &str) -> ConfigError {
        ConfigError::BadValue {
            file: self.file(),
            line: self.props.line_of(key).unwrap_or(0),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    fn str(&self, key: &str) -> Option<&'a str> {
        self.props.get(key)
    }

    /// A whole number in `min..=max`. Java's `Integer.getInteger` would silently use the
    /// default for a bad value; we refuse it so a typo does not change the test. Surrounding
    /// whitespace is allowed (Java would reject `8 `, then silently use the default).
    fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ConfigError> {
        let Some(raw) = self.props.get(key) else {
            return Ok(None);
        };
        let expected = || {
            if max == i64::MAX {
                format!("a whole number >= {min}")
            } else {
                format!("a whole number from {min} to {max}")
            }
        };
        let n: i64 = raw
            .trim()
            .strip_prefix('+')
            .unwrap_or(raw.trim())
            .parse()
            .map_err(|_| self.bad(key, raw, &expected()))?;
        if n < min || n > max {
            return Err(self.bad(key, raw, &expected()));
        }
        Ok(Some(n))
    }

    fn int_or(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64, ConfigError> {
        Ok(self.int(key, min, max)?.unwrap_or(default))
    }

    fn bool_or(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        // Java's Boolean.parseBoolean: "true" ignoring case is true, anything else false.
        // We refuse anything but true/false, which is what a user meant to write.
        match self.props.get(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(self.bad(key, v, "true or false")),
        }
    }

    fn has_prefix(&self, prefix: &str) -> bool {
        self.props.iter().any(|(k, _)| k.starts_with(prefix))
    }
}

const INT_MAX: i64 = i32::MAX as i64;

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

/// The PBM maps of `test_ingestion` and `test_tx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbmMap {
    /// `EligKey → Blob`.
    Eligibility,
    /// `ClientProfileKey → Blob`.
    Profile,
}

impl PbmMap {
    /// The map's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Eligibility => "eligibility",
            Self::Profile => "profile",
        }
    }
}

impl fmt::Display for PbmMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `TransactionTest.TestCaseEnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbmTestCase {
    /// Eligibility in `test_tx`: read a group's entries, write its `GroupSummary`.
    Tx,
    /// One put per entry.
    Put,
    /// `batchSize` entries per call.
    PutAll,
    /// One get per entry (profile in `test_tx`).
    Get,
    /// `batchSize` keys per call.
    GetAll,
}

impl PbmTestCase {
    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tx => "tx",
            Self::Put => "put",
            Self::PutAll => "putall",
            Self::Get => "get",
            Self::GetAll => "getall",
        }
    }
}

impl fmt::Display for PbmTestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which PBM tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PbmTest {
    /// `test_ingestion`.
    Ingestion,
    /// `test_tx`.
    Tx,
}

/// One map's settings (`<map>.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PbmMapConfig {
    /// The map.
    pub map: PbmMap,
    /// `<map>.totalEntryCount`, default 100000.
    pub total_entry_count: u64,
    /// `<map>.payloadSize`, default 1024.
    pub payload_size: usize,
    /// `<map>.batchSize`, default 1000.
    pub batch_size: usize,
    /// `<map>.threadCount`, default `(int)(cpus * 1.5)`.
    pub thread_count: u32,
    /// `<map>.testCase`.
    pub test_case: PbmTestCase,
}

impl PbmMapConfig {
    /// `totalEntryCount / threadCount`, remainder dropped.
    pub fn entry_count_per_thread(&self) -> u64 {
        self.total_entry_count / u64::from(self.thread_count.max(1))
    }
}

/// `test_ingestion`/`test_tx` configuration (reference §3.1).
#[derive(Debug, Clone, PartialEq)]
pub struct PbmTestConfig {
    /// The file it came from.
    pub file: String,
    /// Which tool.
    pub test: PbmTest,
    /// `testCount`, default 1.
    pub test_count: u32,
    /// `testIntervalInMsec`, default 0.
    pub test_interval_ms: u64,
    /// `memberSetSize`: members per group number, default 10.
    pub member_set_size: u32,
    /// `printStatusIntervalInSec`, default 10 (documented; the code says 1000).
    pub print_status_interval_sec: u64,
    /// `prefix` of keys, default `x`.
    pub prefix: String,
    /// `mapNames`, in the order written, duplicates removed; each runs on its own thread.
    pub maps: Vec<PbmMapConfig>,
    /// Tolerated oddities (an invalid test case replaced by the default), one line each.
    pub warnings: Vec<String>,
}

impl PbmTestConfig {
    /// Reads `path` as a `test_ingestion` configuration.
    pub fn load_ingestion(path: &Path) -> Result<Self, ConfigError> {
        Self::from_properties(
            &Properties::load(path)?,
            PbmTest::Ingestion,
            available_processors(),
        )
    }

    /// Reads `path` as a `test_tx` configuration.
    pub fn load_tx(path: &Path) -> Result<Self, ConfigError> {
        Self::from_properties(
            &Properties::load(path)?,
            PbmTest::Tx,
            available_processors(),
        )
    }

    /// Builds the configuration; `cpus` sets the default `threadCount`.
    pub fn from_properties(
        props: &Properties,
        test: PbmTest,
        cpus: usize,
    ) -> Result<Self, ConfigError> {
        let r = Reader { props };
        let names = r.str("mapNames").unwrap_or("eligibility");
        let mut maps: Vec<PbmMapConfig> = Vec::new();
        let mut warnings = Vec::new();
        for n in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let map = match n.to_ascii_lowercase().as_str() {
                "eligibility" => PbmMap::Eligibility,
                "profile" => PbmMap::Profile,
                _ => {
                    // PadoGrid's MapNameEnum drops names it does not know; say so.
                    warnings.push(format!(
                        "{}: mapNames names {n:?}, which is not a PBM map (eligibility, profile); dropped as PadoGrid does",
                        r.file()
                    ));
                    continue;
                }
            };
            if maps.iter().any(|m| m.map == map) {
                continue;
            }
            let k = |s: &str| format!("{}.{s}", map.name());
            let (valid, default): (&[PbmTestCase], PbmTestCase) = match (test, map) {
                (PbmTest::Ingestion, _) => (
                    &[PbmTestCase::PutAll, PbmTestCase::Put],
                    PbmTestCase::PutAll,
                ),
                (PbmTest::Tx, PbmMap::Eligibility) => {
                    (&[PbmTestCase::GetAll, PbmTestCase::Tx], PbmTestCase::GetAll)
                }
                (PbmTest::Tx, PbmMap::Profile) => (
                    &[PbmTestCase::GetAll, PbmTestCase::Get],
                    PbmTestCase::GetAll,
                ),
            };
            let test_case = match r.str(&k("testCase")) {
                None => default,
                Some(v) => match valid
                    .iter()
                    .find(|t| t.name().eq_ignore_ascii_case(v.trim()))
                {
                    Some(t) => *t,
                    None => {
                        let names: Vec<&str> = valid.iter().map(|t| t.name()).collect();
                        warnings.push(format!(
                            "{}: {}={v} is not valid for {} here (valid: {}); using {default} as PadoGrid does",
                            r.file(),
                            k("testCase"),
                            map,
                            names.join(", ")
                        ));
                        default
                    }
                },
            };
            let default_threads = i64::from(default_thread_count(cpus).max(1));
            maps.push(PbmMapConfig {
                map,
                total_entry_count: r.int_or(&k("totalEntryCount"), 100000, 0, INT_MAX)? as u64,
                payload_size: r.int_or(&k("payloadSize"), 1024, 0, INT_MAX)? as usize,
                batch_size: r.int_or(&k("batchSize"), 1000, 1, INT_MAX)? as usize,
                thread_count: r.int_or(&k("threadCount"), default_threads, 1, INT_MAX)? as u32,
                test_case,
            });
        }
        if maps.is_empty() {
            return Err(r.bad("mapNames", names, "a comma list of eligibility and profile"));
        }
        Ok(PbmTestConfig {
            file: r.file(),
            test,
            test_count: r.int_or("testCount", 1, 0, INT_MAX)? as u32,
            test_interval_ms: r.int_or("testIntervalInMsec", 0, 0, INT_MAX)? as u64,
            member_set_size: r.int_or("memberSetSize", 10, 1, INT_MAX)? as u32,
            print_status_interval_sec: r.int_or("printStatusIntervalInSec", 10, 1, INT_MAX)? as u64,
            prefix: r.str("prefix").unwrap_or("x").to_string(),
            maps,
            warnings,
        })
    }

    /// The settings of `map`, when it is in `mapNames`.
    pub fn map(&self, map: PbmMap) -> Option<&PbmMapConfig> {
        self.maps.iter().find(|m| m.map == map)
    }
}
