//! The core-data workload does exactly the 2018 harness's work: which store calls, in which
//! order, with which arguments (reference `edgex-core-data.md` §2.2 and §7). A recording
//! store wraps the real Redis store on a spawned server and logs every call.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use edgebench::coredata::workload::{self as coredata, Progress, BENCHMARKS};
use edgebench::runner::{BenchTime, Runner};
use edgebench::store::{CoreData, StoreResult};
use edgebench::target::{parse_targets, Target};
use edgebench::v2018::{Event, Reading};

/// Logs each call (method and the arguments that matter), then delegates.
struct Recording {
    inner: Box<dyn CoreData>,
    log: Vec<String>,
    /// Ids returned by adds since the last scrub, to log lookups as `#index`.
    ids: Vec<String>,
    /// (name, device, created, id) of every reading as it was passed to add_reading.
    added_readings: Vec<(String, String, i64, String)>,
    /// (device, reading names) of every event passed to add_event.
    added_events: Vec<(String, Vec<String>)>,
    /// (reading_count, event_count) of the store just before each scrub (not logged).
    counts_at_scrub: Vec<(usize, usize)>,
}

impl Recording {
    fn new(inner: Box<dyn CoreData>) -> Self {
        Recording {
            inner,
            log: Vec::new(),
            ids: Vec::new(),
            added_readings: Vec::new(),
            added_events: Vec::new(),
            counts_at_scrub: Vec::new(),
        }
    }

    fn idx(&self, id: &str) -> String {
        match self.ids.iter().position(|x| x == id) {
            Some(i) => format!("#{i}"),
            None => format!("?{id}"),
        }
    }
}

impl CoreData for Recording {
    fn add_event(&mut self, e: &mut Event) -> StoreResult<String> {
        self.log.push("add_event".into());
        let names = e.readings.iter().map(|r| r.name.clone()).collect();
        self.added_events.push((e.device.clone(), names));
        let id = self.inner.add_event(e)?;
        self.ids.push(id.clone());
        Ok(id)
    }
    fn update_event(&mut self, e: &Event) -> StoreResult<()> {
        self.log.push("update_event".into());
        self.inner.update_event(e)
    }
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        self.log.push(format!("event_by_id {}", self.idx(id)));
        self.inner.event_by_id(id)
    }
    fn event_count(&mut self) -> StoreResult<usize> {
        self.log.push("event_count".into());
        self.inner.event_count()
    }
    fn event_count_by_device(&mut self, device: &str) -> StoreResult<usize> {
        self.log.push(format!("event_count_by_device {device}"));
        self.inner.event_count_by_device(device)
    }
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        self.log.push("delete_event_by_id".into());
        self.inner.delete_event_by_id(id)
    }
    fn events(&mut self) -> StoreResult<Vec<Event>> {
        self.log.push("events".into());
        self.inner.events()
    }
    fn events_for_device(&mut self, device: &str) -> StoreResult<Vec<Event>> {
        self.log.push(format!("events_for_device {device}"));
        self.inner.events_for_device(device)
    }
    fn events_for_device_limit(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Event>> {
        self.log
            .push(format!("events_for_device_limit {device} {limit}"));
        self.inner.events_for_device_limit(device, limit)
    }
    fn events_by_creation_time(&mut self, s: i64, e: i64, l: usize) -> StoreResult<Vec<Event>> {
        self.log.push("events_by_creation_time".into());
        self.inner.events_by_creation_time(s, e, l)
    }
    fn events_older_than_age(&mut self, age_ms: i64) -> StoreResult<Vec<Event>> {
        self.log.push("events_older_than_age".into());
        self.inner.events_older_than_age(age_ms)
    }
    fn events_pushed(&mut self) -> StoreResult<Vec<Event>> {
        self.log.push("events_pushed".into());
        self.inner.events_pushed()
    }
    fn scrub_all_events(&mut self) -> StoreResult<()> {
        self.log.push("scrub".into());
        self.ids.clear();
        let counts = (self.inner.reading_count()?, self.inner.event_count()?);
        self.counts_at_scrub.push(counts);
        self.inner.scrub_all_events()
    }
    fn add_reading(&mut self, r: &mut Reading) -> StoreResult<String> {
        self.log.push("add_reading".into());
        self.added_readings
            .push((r.name.clone(), r.device.clone(), r.created, r.id.clone()));
        let id = self.inner.add_reading(r)?;
        self.ids.push(id.clone());
        Ok(id)
    }
    fn update_reading(&mut self, r: &Reading) -> StoreResult<()> {
        self.log.push("update_reading".into());
        self.inner.update_reading(r)
    }
    fn readings(&mut self) -> StoreResult<Vec<Reading>> {
        self.log.push("readings".into());
        self.inner.readings()
    }
    fn reading_by_id(&mut self, id: &str) -> StoreResult<Reading> {
        self.log.push(format!("reading_by_id {}", self.idx(id)));
        self.inner.reading_by_id(id)
    }
    fn reading_count(&mut self) -> StoreResult<usize> {
        self.log.push("reading_count".into());
        self.inner.reading_count()
    }
    fn delete_reading_by_id(&mut self, id: &str) -> StoreResult<()> {
        self.log.push("delete_reading_by_id".into());
        self.inner.delete_reading_by_id(id)
    }
    fn readings_by_device(&mut self, device: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.log
            .push(format!("readings_by_device {device} {limit}"));
        self.inner.readings_by_device(device, limit)
    }
    fn readings_by_name(&mut self, name: &str, limit: usize) -> StoreResult<Vec<Reading>> {
        self.log.push("readings_by_name".into());
        self.inner.readings_by_name(name, limit)
    }
    fn readings_by_names(&mut self, names: &[&str], limit: usize) -> StoreResult<Vec<Reading>> {
        self.log.push("readings_by_names".into());
        self.inner.readings_by_names(names, limit)
    }
    fn readings_by_creation_time(&mut self, s: i64, e: i64, l: usize) -> StoreResult<Vec<Reading>> {
        self.log.push("readings_by_creation_time".into());
        self.inner.readings_by_creation_time(s, e, l)
    }
    fn readings_by_device_and_name(
        &mut self,
        device: &str,
        name: &str,
        limit: usize,
    ) -> StoreResult<Vec<Reading>> {
        self.log.push("readings_by_device_and_name".into());
        self.inner.readings_by_device_and_name(device, name, limit)
    }
}

/// Consecutive equal entries as `entry ×n`.
fn runs(log: &[String]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for entry in log {
        match out.last_mut() {
            Some((last, n)) if last == entry => *n += 1,
            _ => out.push((entry.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(e, n)| if n == 1 { e } else { format!("{e} ×{n}") })
        .collect()
}

#[test]
fn the_ten_benchmarks_make_the_2018_harness_calls() {
    let spec = parse_targets(&["redis-uds".to_string()]).unwrap();
    let target = Target::start(&spec[0]).unwrap_or_else(|e| panic!("{e}"));
    let mut store = Recording::new(target.open_store().unwrap_or_else(|e| panic!("{e}")));
    // 3x: Go's first round of N=1, then N=3 (i restarts at 0).
    let mut runner = Runner::new(BenchTime::Iterations(3), Arc::new(AtomicBool::new(false)));
    let mut finished = Vec::new();
    coredata::run(&mut store, &mut runner, &|_| true, 1, &mut |p| {
        if let Progress::Finished(b) = p {
            finished.push((b.name.clone(), b.runs.len(), b.runs[0].n));
        }
    })
    .unwrap();

    assert_eq!(
        finished,
        BENCHMARKS.map(|b| (b.to_string(), 1, 3)).to_vec(),
        "every benchmark, in the 2018 order, one repetition of N=3"
    );
    assert_eq!(
        runs(&store.log),
        [
            // AddReading: scrubbed, then 1 + 3 adds.
            "scrub",
            "add_reading ×4",
            // The readings dataset, checked.
            "scrub",
            "add_reading ×1000",
            "reading_count",
            "reading_by_id #0",
            // Each read benchmark: one checked call, then rounds of 1 and 3.
            "readings ×5",
            "reading_count ×5",
            "reading_by_id #0 ×3",
            "reading_by_id #1",
            "reading_by_id #2",
            "readings_by_device device0 100 ×5",
            // AddEvent: scrubbed, then 1 + 3 adds.
            "scrub",
            "add_event ×4",
            "scrub",
            "add_event ×1000",
            "event_count",
            "reading_count",
            "event_by_id #0",
            "events ×5",
            "event_count ×5",
            "event_by_id #0 ×3",
            "event_by_id #1",
            "event_by_id #2",
            "events_for_device device0 ×5",
            "scrub",
        ]
        .map(String::from)
        .to_vec()
    );

    // AddReading's readings: name test<i>, device device<i/100>, no id and no created (each
    // add is a fresh value, as Go passes it); then the dataset test0..test999 over 10 devices.
    let expected: Vec<(String, String, i64, String)> = [0, 0, 1, 2]
        .into_iter()
        .chain(0..1000)
        .map(|i| {
            (
                format!("test{i}"),
                format!("device{}", i / 100),
                0,
                String::new(),
            )
        })
        .collect();
    assert_eq!(store.added_readings, expected);

    // Events: device<i/100> with readings name0..name4.
    let names: Vec<String> = (0..5).map(|k| format!("name{k}")).collect();
    let expected: Vec<(String, Vec<String>)> = [0, 0, 1, 2]
        .into_iter()
        .chain(0..1000)
        .map(|i| (format!("device{}", i / 100), names.clone()))
        .collect();
    assert_eq!(store.added_events, expected);
}

/// What a run on `clients` clients of one embedded engine did: the finished benchmarks
/// (name, repetitions, N), every Add* benchmark's adds over all clients (sorted), and the
/// store's (readings, events) before each scrub.
type ClientsRun = (
    Vec<(String, usize, u64)>,
    Vec<(String, String)>,
    Vec<(String, Vec<String>)>,
    Vec<(usize, usize)>,
);

fn run_on_clients(clients: usize) -> ClientsRun {
    let spec = parse_targets(&["embedded".to_string()]).unwrap();
    let target = Target::start(&spec[0]).unwrap_or_else(|e| panic!("{e}"));
    let mut stores: Vec<Recording> = (0..clients)
        .map(|_| Recording::new(target.open_store().unwrap_or_else(|e| panic!("{e}"))))
        .collect();
    let mut runner = Runner::new(BenchTime::Iterations(250), Arc::new(AtomicBool::new(false)));
    let mut finished = Vec::new();
    {
        let mut refs: Vec<&mut dyn CoreData> = stores
            .iter_mut()
            .map(|s| -> &mut dyn CoreData { s })
            .collect();
        // All but the two full scans, which would make a slow test for nothing new.
        let selected = |b: &str| b != "Readings" && b != "Events";
        coredata::run_clients(&mut refs, &mut runner, &selected, 1, &mut |p| {
            if let Progress::Finished(b) = p {
                finished.push((b.name.clone(), b.runs.len(), b.runs[0].n));
            }
        })
        .unwrap();
    }
    // The datasets are prepared through the first client, after its Add* benchmark.
    let (first, others) = stores.split_first().unwrap();
    let readings = first.added_readings.len() - 1000;
    let events = first.added_events.len() - 1000;
    let mut added_readings: Vec<(String, String)> = first.added_readings[..readings]
        .iter()
        .chain(others.iter().flat_map(|s| &s.added_readings))
        .map(|(name, device, _, _)| (name.clone(), device.clone()))
        .collect();
    added_readings.sort();
    let mut added_events: Vec<(String, Vec<String>)> = first.added_events[..events]
        .iter()
        .chain(others.iter().flat_map(|s| &s.added_events))
        .cloned()
        .collect();
    added_events.sort();
    for other in others {
        assert!(
            !other.log.contains(&"scrub".to_string()),
            "only the first client scrubs"
        );
    }
    (
        finished,
        added_readings,
        added_events,
        first.counts_at_scrub.clone(),
    )
}

#[test]
fn parallel_clients_do_the_sequential_work_between_them() {
    let sequential = run_on_clients(1);
    let (finished, readings, events, counts) = &sequential;
    let want: Vec<(String, usize, u64)> = BENCHMARKS
        .iter()
        .filter(|b| !["Readings", "Events"].contains(b))
        .map(|b| (b.to_string(), 1, 250))
        .collect();
    assert_eq!(
        finished, &want,
        "every benchmark run, one repetition of N=250"
    );
    // Round 1 (i = 0), then i = 0..250: names test<i> of device<i/100>.
    let mut want: Vec<(String, String)> = std::iter::once(0)
        .chain(0..250)
        .map(|i| (format!("test{i}"), format!("device{}", i / 100)))
        .collect();
    want.sort();
    assert_eq!(readings, &want);
    assert_eq!(events.len(), 251);
    // Before each scrub: empty; 251 readings after AddReading; the 1,000-reading dataset;
    // 251 events of 5 readings after AddEvent; the 1,000-event dataset.
    assert_eq!(
        counts,
        &[(0, 0), (251, 0), (1000, 0), (1255, 251), (5000, 1000)]
    );
    for clients in [2, 3] {
        assert_eq!(run_on_clients(clients), sequential, "{clients} clients");
    }
}
