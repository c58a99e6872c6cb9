//! `edgebench fleet`'s typed config: flags, a TOML file (`--config`, keys named as the flags),
//! and the defaults, in that order of precedence. Every value is checked where it is read, and
//! an error names where it came from: `--devices "ten": ...` for a flag, `etc/fleet.toml line 3
//! devices = "ten": ...` for the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::FleetArgs;
use crate::config::{parse_list, ConfigError};
use crate::fleet::workload::retention::PerSource;
use crate::fleet::workload::{FleetSpec, Retention};
use crate::runner::barrier;
use crate::store::edgex::retention::EventRetention;
use crate::target::{self, TargetSpec, Via};

/// The typed flags of `edgebench fleet`.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// The targets, each in its EdgeX layout (or a core-data service), once per `--via`.
    pub targets: Vec<TargetSpec>,
    /// The fleet.
    pub spec: FleetSpec,
    /// Results directory, if given.
    pub out: Option<PathBuf>,
    /// Search each target's highest sustainable rate (`--find-max`, with an SLO).
    pub find_max: bool,
    /// `--run-id`: shared by the load hosts of one run.
    pub run_id: Option<String>,
    /// With `--via bus`: how long the bus gets to deliver after the writers stop.
    pub drain: Duration,
}

/// Every key a fleet file may hold, with its default (`None`: unset unless given).
const KEYS: [(&str, Option<&str>); 29] = [
    ("target", Some("embedded")),
    ("via", Some("direct")),
    ("devices", Some("100")),
    ("events-per-second", None),
    ("per-device-rate", None),
    ("readings-per-event", Some("5")),
    ("value-type", Some("Int64")),
    ("value-size", Some("1024")),
    ("media-type", Some("application/octet-stream")),
    ("profiles", Some("fleet-profile")),
    ("resources", Some("temperature,pressure")),
    ("writers", Some("1")),
    ("readers", Some("0")),
    ("read-rate", None),
    ("retain", None),
    ("max-cap", None),
    ("min-cap", None),
    ("purge-interval", Some("30s")),
    ("retention", Some("edgex3")),
    ("duration", Some("10s")),
    ("warmup", Some("2s")),
    ("slo", None),
    ("wait", None),
    ("bus", None),
    ("edgex", Some("4")),
    ("qos", Some("0")),
    ("subscriber", Some("edgex")),
    ("persist", Some("true")),
    ("drain", Some("5s")),
];

/// The most bytes a fleet file may have (it holds a few settings).
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A value and where it came from, for errors.
struct Setting {
    value: String,
    /// `--devices`, or `FILE line N devices =`.
    origin: String,
}

/// The settings of one run: each flag given, else the file's key, else the default.
struct Settings {
    given: BTreeMap<&'static str, Setting>,
}

impl Settings {
    fn get(&self, key: &'static str) -> Option<&Setting> {
        self.given.get(key)
    }

    /// The value of `key`, or its default; every key with a default has one.
    fn value(&self, key: &'static str) -> (String, String) {
        match self.get(key) {
            Some(s) => (s.value.clone(), s.origin.clone()),
            None => {
                let default = KEYS
                    .iter()
                    .find(|(k, _)| *k == key)
                    .and_then(|(_, d)| *d)
                    .unwrap_or_default();
                (default.to_string(), format!("--{key} (default)"))
            }
        }
    }
}

fn bad(origin: &str, value: &str, fix: &str) -> ConfigError {
    ConfigError::FleetSetting(format!("{origin} {value:?}: {fix}"))
}

fn whole(s: &Settings, key: &'static str) -> Result<u64, ConfigError> {
    let (v, origin) = s.value(key);
    v.parse::<u64>()
        .map_err(|_| bad(&origin, &v, "expected a whole number"))
}

fn rate(value: &str, origin: &str, what: &str) -> Result<f64, ConfigError> {
    match value.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(bad(
            origin,
            value,
            &format!("expected a number of {what} per second above 0"),
        )),
    }
}

fn duration(value: &str, origin: &str) -> Result<Duration, ConfigError> {
    crate::runner::parse_duration(value).map_err(|_| {
        bad(
            origin,
            value,
            "expected a duration such as 10s, 500ms or 1m30s",
        )
    })
}

fn optional<T>(
    s: &Settings,
    key: &'static str,
    parse: impl Fn(&str, &str) -> Result<T, ConfigError>,
) -> Result<Option<T>, ConfigError> {
    s.get(key).map(|v| parse(&v.value, &v.origin)).transpose()
}

impl FleetConfig {
    /// Checks and types the flags (and `--config` file) of `edgebench fleet`; every bound of
    /// [`FleetSpec::check`].
    pub fn from_args(args: &FleetArgs) -> Result<Self, ConfigError> {
        let mut given = match &args.config {
            Some(path) => read_file(path)?,
            None => BTreeMap::new(),
        };
        for (key, flag) in flags(args) {
            if let Some(value) = flag {
                given.insert(
                    key,
                    Setting {
                        value: value.clone(),
                        origin: format!("--{key}"),
                    },
                );
            }
        }
        let s = Settings { given };
        let devices = whole(&s, "devices")?;
        let events_per_second = match (s.get("events-per-second"), s.get("per-device-rate")) {
            (Some(r), _) => rate(&r.value, &r.origin, "events")?,
            (None, Some(r)) => rate(&r.value, &r.origin, "events")? * devices as f64,
            (None, None) => FleetSpec::default().events_per_second,
        };
        let (warmup, warmup_origin) = s.value("warmup");
        let warmup = duration(&warmup, &warmup_origin)?;
        let (measured, measured_origin) = s.value("duration");
        let measured_value = measured.clone();
        let measured = duration(&measured, &measured_origin)?;
        if measured.is_zero() {
            return Err(bad(
                &measured_origin,
                &measured_value,
                "give a duration above 0, e.g. 10s",
            ));
        }
        let (interval, interval_origin) = s.value("purge-interval");
        let edgex4 = retention_release(&s)?;
        let caps = match (s.get("max-cap"), s.get("min-cap")) {
            _ if edgex4 => None,
            (Some(_), Some(_)) => Some((whole(&s, "max-cap")?, whole(&s, "min-cap")?)),
            (None, None) => None,
            _ => {
                return Err(ConfigError::FleetSpec(
                    "max-cap and --min-cap go together: give both (readings), e.g. --max-cap \
                     10000 --min-cap 8000"
                        .to_string(),
                ))
            }
        };
        let retain = match edgex4 {
            true => None,
            false => optional(&s, "retain", duration)?,
        };
        let text = |key| s.value(key).0;
        let (run_id, start_at) = barrier::flags(args.run_id.as_deref(), args.start_at.as_deref())
            .map_err(ConfigError::MultiHost)?;
        let mut spec = FleetSpec {
            devices,
            events_per_second,
            readings_per_event: whole(&s, "readings-per-event")?,
            value_type: text("value-type"),
            value_size: whole(&s, "value-size")?,
            media_type: text("media-type"),
            profile: text("profiles"),
            resources: text("resources")
                .split(',')
                .map(|r| r.trim().to_string())
                .collect(),
            writers: whole(&s, "writers")?,
            duration: warmup.saturating_add(measured),
            warmup,
            slo: optional(&s, "slo", duration)?,
            readers: whole(&s, "readers")?,
            read_rate: optional(&s, "read-rate", |v, o| rate(v, o, "reads"))?,
            retention: Retention {
                retain,
                caps,
                per_source: None,
                interval: duration(&interval, &interval_origin)?,
            },
            // Command line only (a file is shared by runs; a barrier and an id are not).
            start_at,
            ..FleetSpec::default()
        };
        if edgex4 {
            let policy = event_retention(&s)?;
            spec.retention.per_source = Some(PerSource::for_fleet(&spec, policy));
        }
        spec.check().map_err(ConfigError::FleetSpec)?;
        if args.find_max && spec.slo.is_none() {
            return Err(ConfigError::FleetSpec(
                "find-max needs --slo (e.g. --slo 10ms): the SLO decides which rates kept up"
                    .to_string(),
            ));
        }
        let via = text("via");
        let vias = parse_list(&via, Via::parse).ok_or_else(|| {
            ConfigError::FleetSetting(format!(
                "--via {via:?}: use a comma-separated list of {}, bus",
                target::layout::VIA_NAMES
            ))
        })?;
        let bus = bus_settings(&s, vias.contains(&Via::Bus))?;
        let (drain_value, drain_origin) = s.value("drain");
        let drain = duration(&drain_value, &drain_origin)?;
        if drain > MAX_DRAIN {
            return Err(bad(&drain_origin, &drain_value, "give at most 10m"));
        }
        // `--wait N` on every target without its own `?wait=`, as coredata does (the note
        // about engine columns is coredata's: a fleet target on the engine refuses --wait at
        // start anyway). Its only error is a bad count, named here by where it came from.
        let wait = s.get("wait");
        let targets = targets(&text("target"), &vias, &bus)?;
        let targets =
            crate::config::apply_wait(targets, wait.map(|w| w.value.as_str()), &mut Vec::new())
                .map_err(|_| {
                    let w = wait.expect("apply_wait fails on a --wait value only");
                    bad(
                        &w.origin,
                        &w.value,
                        &format!(
                            "expected a number of replicas from 1 to {}",
                            crate::config::MAX_WAIT
                        ),
                    )
                })?;
        if edgex4 {
            if let Some(t) = targets
                .iter()
                .find(|t| t.kind.is_service() || t.via.is_http())
            {
                return Err(ConfigError::FleetSpec(format!(
                    "retention edgex4 with {}: EdgeX's REST API cannot delete by device and \
                     source (core-data runs that retention itself); use --via direct, or give \
                     the core-data service --retention-interval and --retention edgex4",
                    t.name
                )));
            }
        }
        Ok(FleetConfig {
            targets,
            spec,
            out: args.out.clone(),
            find_max: args.find_max,
            run_id,
            drain,
        })
    }
}

/// `--retention`: whether it is EdgeX 4.0's (`edgex4`) rather than 3.1's (`edgex3`).
fn retention_release(s: &Settings) -> Result<bool, ConfigError> {
    let (release, origin) = s.value("retention");
    match release.trim() {
        "edgex3" => Ok(false),
        "edgex4" => Ok(true),
        _ => Err(bad(
            &origin,
            &release,
            "give edgex3 (3.1's reading watermark and age delete) or edgex4 (4.0's retention \
             per device and source)",
        )),
    }
}

/// The most events `--max-cap` and `--min-cap` may name under `--retention edgex4`.
const MAX_EVENT_CAP: i64 = 1_000_000_000_000;

/// `--max-cap`, `--min-cap` and `--retain` as EdgeX 4.0's `Retention.Default*`, each EdgeX's
/// default when not given.
fn event_retention(s: &Settings) -> Result<EventRetention, ConfigError> {
    let defaults = EventRetention::EDGEX_DEFAULTS;
    let cap = |value: &str, origin: &str| match value.trim().parse::<i64>() {
        Ok(n) if (-1..=MAX_EVENT_CAP).contains(&n) => Ok(n),
        _ => Err(bad(
            origin,
            value,
            "with --retention edgex4, give -1 (none) or a number of events from 0 to \
             1000000000000",
        )),
    };
    let policy = EventRetention {
        max_cap: optional(s, "max-cap", cap)?.unwrap_or(defaults.max_cap),
        min_cap: optional(s, "min-cap", cap)?.unwrap_or(defaults.min_cap),
        duration: optional(s, "retain", duration)?.unwrap_or(defaults.duration),
    };
    if policy.max_cap > 0 && policy.min_cap >= policy.max_cap {
        return Err(ConfigError::FleetSpec(format!(
            "max-cap {} with min-cap {} under --retention edgex4: give min-cap below max-cap \
             (events of one device and source), or max-cap -1 for no threshold",
            policy.max_cap, policy.min_cap
        )));
    }
    Ok(policy)
}

/// The longest `--drain`.
const MAX_DRAIN: Duration = Duration::from_secs(600);

/// `--bus`, `--edgex`, `--qos`: one [`target::BusSettings`] per bus with `--via bus`, none
/// without (a `--bus` without `--via bus` is a mistake worth a line).
fn bus_settings(s: &Settings, via_bus: bool) -> Result<Vec<target::BusSettings>, ConfigError> {
    let given = s.get("bus");
    if !via_bus {
        return match given
            .or_else(|| s.get("subscriber"))
            .or_else(|| s.get("persist"))
        {
            Some(b) => Err(bad(&b.origin, &b.value, "a bus needs --via bus")),
            None => Ok(Vec::new()),
        };
    }
    let Some(list) = given else {
        return Err(ConfigError::FleetSpec(format!(
            "--via bus needs --bus: give one or more of {}",
            target::bused::BUS_NAMES
        )));
    };
    let (edgex, edgex_origin) = s.value("edgex");
    let envelope = match edgex.trim() {
        "3" => crate::edgex::envelope::EnvelopeVersion::V3,
        "4" => crate::edgex::envelope::EnvelopeVersion::V4,
        _ => {
            return Err(bad(
                &edgex_origin,
                &edgex,
                "give 3 or 4 (the EdgeX release)",
            ))
        }
    };
    let (qos, qos_origin) = s.value("qos");
    let qos = crate::transport::bus::mqtt::Qos::parse(&qos)
        .map_err(|why| ConfigError::FleetSetting(format!("{qos_origin}: {why}")))?;
    let (mode, mode_origin) = s.value("subscriber");
    let subscriber = crate::service::bus::SubscriberMode::parse(&mode)
        .map_err(|why| ConfigError::FleetSetting(why.replacen("--subscriber", &mode_origin, 1)))?;
    let (persist, persist_origin) = s.value("persist");
    let persist = match persist.trim() {
        "true" => true,
        "false" => false,
        _ => return Err(bad(&persist_origin, &persist, "give true or false")),
    };
    let mut out = Vec::new();
    for item in list.value.split(',') {
        let choice = target::BusChoice::parse(item)
            .map_err(|why| ConfigError::FleetSetting(format!("{}: {why}", list.origin)))?;
        if out.iter().any(|b: &target::BusSettings| b.choice == choice) {
            return Err(bad(&list.origin, &list.value, "a bus is named twice"));
        }
        out.push(target::BusSettings {
            choice,
            envelope,
            qos,
            subscriber,
            persist,
        });
    }
    Ok(out)
}

/// Each `--target` item in its EdgeX layout, once per `--via` (and with `--via bus`, once per
/// bus).
fn targets(
    list: &str,
    vias: &[Via],
    buses: &[target::BusSettings],
) -> Result<Vec<TargetSpec>, ConfigError> {
    let mut targets = Vec::new();
    for spec in target::parse_targets(&[list.to_string()])? {
        if spec.kind.is_service() {
            if !vias.contains(&Via::Bus) {
                targets.push(spec);
                continue;
            }
            // Someone's core-data service subscribed to someone's broker: publish there.
            for bus in buses {
                if !matches!(bus.choice, target::BusChoice::At(_)) {
                    return Err(bad(
                        "--bus",
                        &bus.choice.column_suffix(),
                        "a core-data service by URL subscribes to its own broker; give that \
                         broker's URL (mqtt://HOST:PORT, nats://HOST:PORT, redis://HOST:PORT)",
                    ));
                }
                targets.push(TargetSpec {
                    name: format!("{}+{}", spec.name, bus.choice.column_suffix()),
                    via: Via::Bus,
                    bus: Some(bus.clone()),
                    ..spec.clone()
                });
            }
            continue;
        }
        let layout = spec.edgex_layout().ok_or_else(|| {
            bad(
                "--target",
                &spec.name,
                "a fleet writes EdgeX events, which need a store with an EdgeX layout (Redis \
                 targets, the engine, SQLite, PostgreSQL, MongoDB) or a core-data service \
                 (http://, http+unix://)",
            )
        })?;
        for &via in vias {
            if via == Via::Bus {
                for bus in buses {
                    targets.push(TargetSpec {
                        name: format!(
                            "{}{}+{}",
                            spec.name,
                            layout.column_suffix(),
                            bus.choice.column_suffix()
                        ),
                        layout,
                        via,
                        bus: Some(bus.clone()),
                        ..spec.clone()
                    });
                }
                continue;
            }
            let suffix = if via.is_http() {
                via.column_suffix()
            } else {
                layout.column_suffix()
            };
            targets.push(TargetSpec {
                name: format!("{}{suffix}", spec.name),
                layout,
                via,
                ..spec.clone()
            });
        }
    }
    Ok(targets)
}

/// The flags given on the command line, by key.
fn flags(a: &FleetArgs) -> [(&'static str, &Option<String>); 29] {
    [
        ("target", &a.targets),
        ("via", &a.via),
        ("devices", &a.devices),
        ("events-per-second", &a.events_per_second),
        ("per-device-rate", &a.per_device_rate),
        ("readings-per-event", &a.readings_per_event),
        ("value-type", &a.value_type),
        ("value-size", &a.value_size),
        ("media-type", &a.media_type),
        ("profiles", &a.profiles),
        ("resources", &a.resources),
        ("writers", &a.writers),
        ("readers", &a.readers),
        ("read-rate", &a.read_rate),
        ("retain", &a.retain),
        ("max-cap", &a.max_cap),
        ("min-cap", &a.min_cap),
        ("purge-interval", &a.purge_interval),
        ("retention", &a.retention),
        ("duration", &a.duration),
        ("warmup", &a.warmup),
        ("slo", &a.slo),
        ("wait", &a.wait),
        ("bus", &a.bus),
        ("edgex", &a.edgex),
        ("qos", &a.qos),
        ("subscriber", &a.subscriber),
        ("persist", &a.persist),
        ("drain", &a.drain),
    ]
}

/// Reads a fleet file: a TOML table of known keys (`_` may stand for `-`; one level of
/// sub-tables such as `[retention]` is read as if its keys were at the top), each a string,
/// a number, or (for `target`, `resources`) an array of strings.
fn read_file(path: &Path) -> Result<BTreeMap<&'static str, Setting>, ConfigError> {
    let name = path.display().to_string();
    let fail = |why: String| ConfigError::FleetFile(format!("{name}: {why}"));
    let size = std::fs::metadata(path)
        .map_err(|e| {
            fail(format!(
                "cannot read it ({e}): give the path of a TOML file"
            ))
        })?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(fail(format!(
            "{size} bytes is not a fleet file (at most {MAX_FILE_BYTES}): give a file of settings"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        fail(format!(
            "cannot read it ({e}): give the path of a TOML file"
        ))
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let at = line.map_or(String::new(), |l| format!("line {l}: "));
        fail(format!(
            "{at}{}: fix the TOML syntax",
            e.message().lines().next().unwrap_or("not TOML")
        ))
    })?;
    let mut out = BTreeMap::new();
    let mut entries: Vec<(String, toml::Value)> = Vec::new();
    for (key, value) in table {
        match value {
            toml::Value::Table(sub) => entries.extend(sub),
            other => entries.push((key, other)),
        }
    }
    for (key, value) in entries {
        let normal = key.replace('_', "-");
        let line = line_of(&text, &key);
        let origin = format!("{name} line {line} {key} =");
        let Some(&(known, _)) = KEYS.iter().find(|(k, _)| *k == normal) else {
            return Err(fail(format!(
                "line {line}: unknown key {key:?}: use one of {}",
                KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            )));
        };
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Array(items) => {
                let strings: Option<Vec<String>> = items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect();
                strings.map(|s| s.join(",")).ok_or_else(|| {
                    fail(format!(
                        "line {line}: {key} must be a list of strings, e.g. [\"a\", \"b\"]"
                    ))
                })?
            }
            other => {
                return Err(fail(format!(
                    "line {line}: {key} is a {}: give a string or a number",
                    other.type_str()
                )))
            }
        };
        out.insert(known, Setting { value, origin });
    }
    Ok(out)
}

/// The line (1-based) where `key` is set, for messages; 1 when it cannot be found.
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
}
