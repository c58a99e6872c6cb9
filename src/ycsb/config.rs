//! The typed workload: YCSB's `CoreWorkload` and `Client` properties read from merged
//! [`Properties`], with YCSB's defaults, each value checked. Every error is one line naming
//! the property, where its value came from and the fix.

use super::properties::{Origin, Properties};

/// The largest record edgebench builds (`fieldcount` × `fieldlength`): a flag cannot make a
/// worker allocate more than this per record.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;
/// The most client threads a run starts.
pub const MAX_THREADS: u64 = 4096;
/// The most fields a record has.
pub const MAX_FIELDS: u64 = 10_000;
/// The longest scan a workload may ask for (records read by one scan).
pub const MAX_SCAN: u64 = 1_000_000;

/// How the request keys are chosen (`requestdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// `uniform`.
    Uniform,
    /// `zipfian` (the scrambled zipfian over YCSB's 10^10 items).
    Zipfian,
    /// `latest` (skewed to the newest acknowledged insert).
    Latest,
    /// `hotspot`.
    Hotspot,
    /// `sequential`.
    Sequential,
    /// `exponential`.
    Exponential,
}

/// How field lengths are drawn (`fieldlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthDistribution {
    /// `constant`: every field `fieldlength` bytes.
    Constant,
    /// `uniform` between `minfieldlength` and `fieldlength`.
    Uniform,
    /// `zipfian` between `minfieldlength` and `fieldlength`.
    Zipfian,
}

/// How scan lengths are drawn (`scanlengthdistribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLength {
    /// `uniform` between `minscanlength` and `maxscanlength`.
    Uniform,
    /// `zipfian` (favouring short scans).
    Zipfian,
}

/// Which latencies are measured (`measurement.interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    /// `op`: from each operation's actual start.
    Op,
    /// `intended`: from its intended start (the `-target` schedule), under the op's name.
    Intended,
    /// `both`: both, the intended series named `Intended-<OP>`.
    Both,
}

/// YCSB's measurement exporters (`exporter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exporter {
    /// `TextMeasurementsExporter` (the default): `[READ], Operations, 1000` lines.
    Text,
    /// `JSONMeasurementsExporter`: one `{"metric", "measurement", "value"}` object a line.
    Json,
    /// `JSONArrayMeasurementsExporter`: the same objects in one array.
    JsonArray,
}

/// The whole typed workload of one load or run.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// `table`.
    pub table: String,
    /// `recordcount`.
    pub recordcount: u64,
    /// `operationcount`.
    pub operationcount: u64,
    /// `insertstart`.
    pub insertstart: u64,
    /// `insertcount` (`recordcount - insertstart` when not set).
    pub insertcount: u64,
    /// `fieldcount`.
    pub fieldcount: u64,
    /// `fieldnameprefix`.
    pub fieldnameprefix: String,
    /// `fieldlength`.
    pub fieldlength: u64,
    /// `minfieldlength`.
    pub minfieldlength: u64,
    /// `fieldlengthdistribution`.
    pub fieldlengthdistribution: LengthDistribution,
    /// `readallfields`.
    pub readallfields: bool,
    /// `readallfieldsbyname`: read every field by its name (YCSB ≥ 0.18).
    pub readallfieldsbyname: bool,
    /// `writeallfields`.
    pub writeallfields: bool,
    /// `dataintegrity`: values derived from key and field, checked on every read.
    pub dataintegrity: bool,
    /// `readproportion`.
    pub read: f64,
    /// `updateproportion`.
    pub update: f64,
    /// `insertproportion`.
    pub insert: f64,
    /// `scanproportion`.
    pub scan: f64,
    /// `readmodifywriteproportion`.
    pub readmodifywrite: f64,
    /// `requestdistribution`.
    pub requestdistribution: Distribution,
    /// `minscanlength`.
    pub minscanlength: u64,
    /// `maxscanlength`.
    pub maxscanlength: u64,
    /// `scanlengthdistribution`.
    pub scanlengthdistribution: ScanLength,
    /// `insertorder=ordered` (false: `hashed`, the default).
    pub ordered: bool,
    /// `zeropadding`.
    pub zeropadding: usize,
    /// `hotspotdatafraction`.
    pub hotspotdatafraction: f64,
    /// `hotspotopnfraction`.
    pub hotspotopnfraction: f64,
    /// `exponential.percentile`.
    pub exponential_percentile: f64,
    /// `exponential.frac`.
    pub exponential_frac: f64,
    /// `core_workload_insertion_retry_limit`.
    pub insertion_retry_limit: u32,
    /// `core_workload_insertion_retry_interval` (seconds).
    pub insertion_retry_interval: u64,
    /// `threadcount` (`-threads`).
    pub threads: u64,
    /// `target` (`-target`): the whole run's operations per second, 0 for unthrottled.
    pub target: f64,
    /// `maxexecutiontime` (seconds, 0 for none).
    pub maxexecutiontime: u64,
    /// `status.interval` (seconds).
    pub status_interval: u64,
    /// `measurement.interval`.
    pub interval: Interval,
    /// `hdrhistogram.percentiles`.
    pub percentiles: Vec<f64>,
    /// `exporter`.
    pub exporter: Exporter,
    /// `exportfile`: where each target's export goes besides the results directory.
    pub exportfile: Option<String>,
    /// `seed`: edgebench's; every thread's random numbers derive from it.
    pub seed: u64,
}

/// Every property edgebench reads, for the unknown-property check and its suggestion.
pub const KNOWN: &[&str] = &[
    "workload",
    "table",
    "recordcount",
    "operationcount",
    "insertstart",
    "insertcount",
    "fieldcount",
    "fieldnameprefix",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "dataintegrity",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
    "threadcount",
    "target",
    "maxexecutiontime",
    "status.interval",
    "measurementtype",
    "measurement.interval",
    "hdrhistogram.percentiles",
    "exporter",
    "exportfile",
    "db",
    "dotransactions",
    "seed",
];

/// Prefixes of YCSB binding properties: where the database is, which edgebench takes from
/// `--target` instead.
const BINDING_PREFIXES: &[&str] = &[
    "redis.",
    "mongodb.",
    "db.",
    "jdbc.",
    "postgrenosql.",
    "sqlite.",
];

/// The workload of `props`, every value checked. `transactions`: a run (its operation count
/// and proportions matter), not a load.
pub fn read(props: &Properties, transactions: bool) -> Result<Workload, String> {
    for (name, _, origin) in props.iter() {
        check_known(name, origin)?;
    }
    let r = Reader(props);
    if let Some(class) = props.get("workload") {
        if !matches!(
            class,
            "site.ycsb.workloads.CoreWorkload" | "com.yahoo.ycsb.workloads.CoreWorkload"
        ) {
            return Err(r.bad(
                "workload",
                "edgebench runs YCSB's core workload only: use site.ycsb.workloads.CoreWorkload",
            ));
        }
    }
    if let Some(kind) = props.get("measurementtype") {
        if kind != "hdrhistogram" {
            return Err(r.bad(
                "measurementtype",
                "edgebench measures with HdrHistogram only: use hdrhistogram (the default)",
            ));
        }
    }
    let recordcount = r.count("recordcount", None)?;
    if recordcount == 0 {
        return Err(r.bad("recordcount", "give how many records to load, at least 1"));
    }
    let insertstart = r.count("insertstart", Some(0))?;
    let insertcount = match props.get("insertcount") {
        Some(_) => r.count("insertcount", None)?,
        None => recordcount.checked_sub(insertstart).ok_or_else(|| {
            r.bad(
                "insertstart",
                "it is past recordcount: set insertcount, or an insertstart below recordcount",
            )
        })?,
    };
    let operationcount = r.count("operationcount", Some(0))?;
    let maxexecutiontime = r.count("maxexecutiontime", Some(0))?;
    if transactions && operationcount == 0 && maxexecutiontime == 0 {
        return Err(r.bad(
            "operationcount",
            "a run needs operations: set operationcount (or maxexecutiontime)",
        ));
    }
    let fieldcount = r.count("fieldcount", Some(10))?;
    if fieldcount == 0 || fieldcount > MAX_FIELDS {
        return Err(r.bad("fieldcount", &format!("give 1 to {MAX_FIELDS} fields")));
    }
    let fieldlength = r.count("fieldlength", Some(100))?;
    let minfieldlength = r.count("minfieldlength", Some(1))?;
    if fieldlength == 0 || fieldcount.saturating_mul(fieldlength) > MAX_RECORD_BYTES {
        return Err(r.bad(
            "fieldlength",
            &format!(
                "a record (fieldcount × fieldlength) must be 1 byte to {} MiB",
                MAX_RECORD_BYTES >> 20
            ),
        ));
    }
    let fieldlengthdistribution = match r.word("fieldlengthdistribution", "constant") {
        "constant" => LengthDistribution::Constant,
        "uniform" => LengthDistribution::Uniform,
        "zipfian" => LengthDistribution::Zipfian,
        "histogram" => {
            return Err(r.bad(
                "fieldlengthdistribution",
                "histogram files are not supported: use constant, uniform or zipfian",
            ))
        }
        _ => {
            return Err(r.bad(
                "fieldlengthdistribution",
                "use constant, uniform or zipfian",
            ))
        }
    };
    if fieldlengthdistribution != LengthDistribution::Constant && minfieldlength > fieldlength {
        return Err(r.bad("minfieldlength", "it must not exceed fieldlength"));
    }
    let dataintegrity = r.flag("dataintegrity", false)?;
    if dataintegrity && fieldlengthdistribution != LengthDistribution::Constant {
        return Err(r.bad(
            "dataintegrity",
            "it needs fieldlengthdistribution=constant (as YCSB)",
        ));
    }
    let read = r.proportion("readproportion", 0.95)?;
    let update = r.proportion("updateproportion", 0.05)?;
    let insert = r.proportion("insertproportion", 0.0)?;
    let scan = r.proportion("scanproportion", 0.0)?;
    let readmodifywrite = r.proportion("readmodifywriteproportion", 0.0)?;
    let sum = read + update + insert + scan + readmodifywrite;
    if transactions && (sum <= 0.0 || sum > 1.0 + 1e-9) {
        return Err(format!(
            "readproportion + updateproportion + insertproportion + scanproportion + \
             readmodifywriteproportion = {sum}: the proportions must add up to more than 0 \
             and at most 1"
        ));
    }
    let requestdistribution = match r.word("requestdistribution", "uniform") {
        "uniform" => Distribution::Uniform,
        "zipfian" => Distribution::Zipfian,
        "latest" => Distribution::Latest,
        "hotspot" => Distribution::Hotspot,
        "sequential" => Distribution::Sequential,
        "exponential" => Distribution::Exponential,
        _ => {
            return Err(r.bad(
                "requestdistribution",
                "use uniform, zipfian, latest, hotspot, sequential or exponential",
            ))
        }
    };
    let minscanlength = r.count("minscanlength", Some(1))?;
    let maxscanlength = r.count("maxscanlength", Some(1000))?;
    if maxscanlength > MAX_SCAN || minscanlength > maxscanlength || maxscanlength == 0 {
        return Err(r.bad(
            "maxscanlength",
            &format!("give 1 to {MAX_SCAN}, and minscanlength no more than it"),
        ));
    }
    let scanlengthdistribution = match r.word("scanlengthdistribution", "uniform") {
        "uniform" => ScanLength::Uniform,
        "zipfian" => ScanLength::Zipfian,
        _ => return Err(r.bad("scanlengthdistribution", "use uniform or zipfian")),
    };
    let ordered = match r.word("insertorder", "hashed") {
        "hashed" => false,
        "ordered" => true,
        _ => return Err(r.bad("insertorder", "use hashed or ordered")),
    };
    let zeropadding = r.count("zeropadding", Some(1))?;
    if zeropadding == 0 || zeropadding > 64 {
        return Err(r.bad("zeropadding", "give 1 to 64 digits"));
    }
    let hotspotdatafraction = r.fraction("hotspotdatafraction", 0.2)?;
    let hotspotopnfraction = r.fraction("hotspotopnfraction", 0.8)?;
    let exponential_percentile = r.number("exponential.percentile", 95.0)?;
    if !(exponential_percentile > 0.0 && exponential_percentile < 100.0) {
        return Err(r.bad(
            "exponential.percentile",
            "give a percentile between 0 and 100",
        ));
    }
    let exponential_frac = r.number("exponential.frac", 0.8571428571)?;
    if exponential_frac.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(r.bad("exponential.frac", "give a fraction above 0"));
    }
    let threads = r.count("threadcount", Some(1))?;
    if threads == 0 || threads > MAX_THREADS {
        return Err(r.bad("threadcount", &format!("give 1 to {MAX_THREADS} threads")));
    }
    let target = r.number("target", 0.0)?;
    if props.get("target").is_some() && !(target > 0.0 && target.is_finite()) {
        return Err(r.bad(
            "target",
            "give the operations per second to aim for, above 0 (leave it out for no limit)",
        ));
    }
    let status_interval = r.count("status.interval", Some(10))?;
    if status_interval == 0 {
        return Err(r.bad("status.interval", "give whole seconds, at least 1"));
    }
    let interval = match r.word("measurement.interval", "op") {
        "op" => Interval::Op,
        "intended" => Interval::Intended,
        "both" => Interval::Both,
        _ => return Err(r.bad("measurement.interval", "use op, intended or both")),
    };
    let percentiles = r.percentiles()?;
    let exporter = match r.word(
        "exporter",
        "site.ycsb.measurements.exporter.TextMeasurementsExporter",
    ) {
        "site.ycsb.measurements.exporter.TextMeasurementsExporter" | "text" => Exporter::Text,
        "site.ycsb.measurements.exporter.JSONMeasurementsExporter" | "json" => Exporter::Json,
        "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter" | "jsonarray" => {
            Exporter::JsonArray
        }
        _ => {
            return Err(r.bad(
                "exporter",
                "use site.ycsb.measurements.exporter.TextMeasurementsExporter, \
                 JSONMeasurementsExporter or JSONArrayMeasurementsExporter",
            ))
        }
    };
    let seed = match props.get("seed") {
        Some(_) => r.count("seed", None)?,
        None => 0x5EED_F1C5,
    };
    Ok(Workload {
        table: r.word("table", "usertable").to_string(),
        recordcount,
        operationcount,
        insertstart,
        insertcount,
        fieldcount,
        fieldnameprefix: r.word("fieldnameprefix", "field").to_string(),
        fieldlength,
        minfieldlength,
        fieldlengthdistribution,
        readallfields: r.flag("readallfields", true)?,
        readallfieldsbyname: r.flag("readallfieldsbyname", false)?,
        writeallfields: r.flag("writeallfields", false)?,
        dataintegrity,
        read,
        update,
        insert,
        scan,
        readmodifywrite,
        requestdistribution,
        minscanlength,
        maxscanlength,
        scanlengthdistribution,
        ordered,
        zeropadding: zeropadding as usize,
        hotspotdatafraction,
        hotspotopnfraction,
        exponential_percentile,
        exponential_frac,
        insertion_retry_limit: r
            .count("core_workload_insertion_retry_limit", Some(0))?
            .min(100) as u32,
        insertion_retry_interval: r
            .count("core_workload_insertion_retry_interval", Some(3))?
            .min(60),
        threads,
        target,
        maxexecutiontime,
        status_interval,
        interval,
        percentiles,
        exporter,
        exportfile: props.get("exportfile").map(str::to_string),
        seed,
    })
}

impl Workload {
    /// Every field name, in order.
    pub fn field_names(&self) -> Vec<String> {
        (0..self.fieldcount)
            .map(|i| format!("{}{i}", self.fieldnameprefix))
            .collect()
    }

    /// Roughly what one record takes in a store's memory: its values, its key, its field
    /// names, and a store's per-field and per-record overhead (about Redis's for a hash in
    /// its listpack or hashtable form).
    pub fn record_bytes(&self) -> u64 {
        let names = self.fieldcount * (self.fieldnameprefix.len() as u64 + 3);
        self.fieldcount * self.fieldlength + names + self.fieldcount * 16 + 24 + 100
    }
}

fn check_known(name: &str, origin: &Origin) -> Result<(), String> {
    if KNOWN.contains(&name) {
        return Ok(());
    }
    if BINDING_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Err(format!(
            "property {name} ({origin}): edgebench names the database with --target (e.g. \
             --target redis://HOST:PORT, postgres://…, mongodb://…), not with binding properties: \
             remove it"
        ));
    }
    let hint = KNOWN
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .min()
        .filter(|(d, _)| *d <= 3)
        .map(|(_, k)| format!("did you mean {k}? "))
        .unwrap_or_default();
    Err(format!(
        "unknown property {name} ({origin}): {hint}edgebench reads CoreWorkload's and the \
         client's properties (see docs/ycsb.md)"
    ))
}

/// Levenshtein distance, for the suggestion after an unknown property.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Reads typed values, naming the property and its origin in errors.
struct Reader<'a>(&'a Properties);

impl Reader<'_> {
    fn bad(&self, name: &str, fix: &str) -> String {
        match (self.0.get(name), self.0.origin(name)) {
            (Some(value), Some(origin)) => format!("{name}={value} ({origin}): {fix}"),
            _ => format!("{name}: {fix}"),
        }
    }

    fn word(&self, name: &str, default: &'static str) -> &str {
        self.0.get(name).map(str::trim).unwrap_or(default)
    }

    fn count(&self, name: &str, default: Option<u64>) -> Result<u64, String> {
        match (self.0.get(name), default) {
            (None, Some(d)) => Ok(d),
            (None, None) => Err(format!(
                "{name} is not set: set it in the -P file or with -p {name}=N"
            )),
            (Some(v), _) => v
                .trim()
                .parse::<u64>()
                .map_err(|_| self.bad(name, "give a whole number, 0 or more")),
        }
    }

    fn number(&self, name: &str, default: f64) -> Result<f64, String> {
        match self.0.get(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| self.bad(name, "give a number")),
        }
    }

    fn proportion(&self, name: &str, default: f64) -> Result<f64, String> {
        let p = self.number(name, default)?;
        if !(0.0..=1.0).contains(&p) {
            return Err(self.bad(name, "give a proportion from 0 to 1"));
        }
        Ok(p)
    }

    fn fraction(&self, name: &str, default: f64) -> Result<f64, String> {
        self.proportion(name, default)
    }

    fn flag(&self, name: &str, default: bool) -> Result<bool, String> {
        match self.0.get(name).map(str::trim) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(self.bad(name, "give true or false")),
        }
    }

    fn percentiles(&self) -> Result<Vec<f64>, String> {
        let Some(list) = self.0.get("hdrhistogram.percentiles") else {
            return Ok(vec![50.0, 95.0, 99.0]);
        };
        list.split(',')
            .map(|p| {
                p.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| *p > 0.0 && *p <= 100.0)
                    .ok_or_else(|| {
                        self.bad(
                            "hdrhistogram.percentiles",
                            "give percentiles from 0 to 100 separated by commas, e.g. 50,95,99,99.9",
                        )
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        let mut p = Properties::default();
        p.merge_text(
            super::super::workloads::builtin("workloada").unwrap(),
            &Origin::File("workloada".into()),
        );
        for (k, v) in pairs {
            p.set(k, v, Origin::Flag);
        }
        p
    }

    #[test]
    fn workload_files_and_defaults_read_as_ycsb() {
        let w = read(&props(&[]), true).unwrap();
        assert_eq!((w.recordcount, w.operationcount), (1000, 1000));
        assert_eq!((w.read, w.update, w.insert, w.scan), (0.5, 0.5, 0.0, 0.0));
        assert_eq!(w.requestdistribution, Distribution::Zipfian);
        assert_eq!((w.fieldcount, w.fieldlength, w.zeropadding), (10, 100, 1));
        assert!(w.readallfields && !w.writeallfields && !w.ordered);
        assert_eq!(w.table, "usertable");
        assert_eq!(w.insertcount, 1000);
        assert_eq!(w.percentiles, vec![50.0, 95.0, 99.0]);
        assert_eq!(w.field_names()[9], "field9");
        let e = read(&props(&[("maxscanlength", "100")]), true).unwrap();
        assert_eq!(e.maxscanlength, 100);
    }

    #[test]
    fn bad_input_names_the_property_and_the_fix() {
        let err = |pairs: &[(&str, &str)]| read(&props(pairs), true).unwrap_err();
        assert_eq!(
            err(&[("readproportion", "0.9")]),
            "readproportion + updateproportion + insertproportion + scanproportion + \
             readmodifywriteproportion = 1.4: the proportions must add up to more than 0 and \
             at most 1"
        );
        assert!(err(&[("readproportion", "0"), ("updateproportion", "0")])
            .contains("= 0: the proportions"));
        assert_eq!(
            err(&[("readproportoin", "1")]),
            "unknown property readproportoin (-p): did you mean readproportion? edgebench reads \
             CoreWorkload's and the client's properties (see docs/ycsb.md)"
        );
        assert!(
            err(&[("workload", "site.ycsb.workloads.TimeSeriesWorkload")]).starts_with(
                "workload=site.ycsb.workloads.TimeSeriesWorkload (-p): edgebench runs"
            )
        );
        assert!(err(&[("redis.host", "h")]).contains("--target redis://HOST:PORT"));
        assert!(err(&[("target", "0")]).starts_with("target=0 (-p): give the operations"));
        assert!(err(&[("threadcount", "100000")]).contains("1 to 4096"));
        assert!(err(&[("fieldlength", "100000000")]).starts_with("fieldlength=100000000 (-p)"));
        assert!(err(&[("requestdistribution", "pareto")]).contains("use uniform, zipfian"));
        assert!(err(&[("recordcount", "0")]).starts_with("recordcount=0 (-p)"));
        assert!(err(&[("recordcount", "-5")]).contains("whole number"));
        // A load does not need the proportions to add up.
        assert!(read(
            &props(&[("readproportion", "0"), ("updateproportion", "0")]),
            false
        )
        .is_ok());
    }
}
