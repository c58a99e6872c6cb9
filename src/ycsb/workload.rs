//! YCSB's `CoreWorkload` for one client thread: which key, which fields, which values, which
//! operation, as `CoreWorkload` chooses them, and each call measured as `DBWrapper` measures
//! it. What the threads share is in [`Shared`] (the load's key sequence, the acknowledged
//! insert counter `latest` reads, the `sequential` counter); everything else is the thread's.

use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use super::config::{Distribution, LengthDistribution, ScanLength, Workload};
use super::generator::{
    build_key_into, fill_random_bytes, AcknowledgedCounter, Counter, Discrete, Exponential,
    FieldLength, Hotspot, KeyChooser, ScrambledZipfian, Sequential, SkewedLatest, UniformLong,
    Zipfian,
};
use super::measure::{Measurements, Op, Status};
use crate::kv::rng::{splitmix64, Rng};
use crate::store::ycsb::{java_string_hash, Record, Records, YcsbError, YcsbStore};

/// What every client thread of one load or run shares.
#[derive(Debug)]
pub struct Shared {
    /// The load's key numbers, from `insertstart` (YCSB's `keysequence`).
    pub keysequence: Counter,
    /// A run's insert key numbers, from `recordcount`, acknowledged once stored
    /// (`transactioninsertkeysequence`; `latest` draws below its last acknowledged value).
    pub inserts: Arc<AcknowledgedCounter>,
    /// `sequential`'s position.
    pub sequential: Arc<AtomicU64>,
}

impl Shared {
    /// The shared state of a load or a run of `w`.
    pub fn new(w: &Workload) -> Shared {
        Shared {
            keysequence: Counter::new(w.insertstart),
            inserts: Arc::new(AcknowledgedCounter::new(w.recordcount)),
            sequential: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// A run's clock: nanoseconds since its origin.
#[derive(Debug, Clone, Copy)]
pub struct Clock(pub Instant);

impl Clock {
    /// Nanoseconds since the origin.
    #[inline]
    pub fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

/// The operations a run chooses among (`CoreWorkload`'s operation chooser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

/// One client thread's workload.
pub struct ClientWorkload {
    w: Arc<Workload>,
    rng: Rng,
    keys: KeyChooser,
    /// Which single field a read or an update touches (`fieldchooser`).
    field: UniformLong,
    length: FieldLength,
    scan_length: ScanChooser,
    ops: Discrete<Choice>,
    inserts: Arc<AcknowledgedCounter>,
    names: Vec<String>,
    /// Buffers reused by every call.
    key: String,
    values: Vec<(String, Vec<u8>)>,
    record: Record,
    records: Records,
}

enum ScanChooser {
    Uniform(UniformLong),
    Zipfian(Zipfian),
}

impl ClientWorkload {
    /// Thread `thread`'s workload of `w`, its random numbers derived from `w.seed`.
    pub fn new(w: Arc<Workload>, shared: &Shared, thread: u64) -> ClientWorkload {
        let mut seed = w.seed ^ thread.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let rng = Rng::new(splitmix64(&mut seed));
        let (start, count) = (w.insertstart, w.insertcount.max(1));
        let last = start + count - 1;
        let keys = match w.requestdistribution {
            Distribution::Uniform => KeyChooser::Uniform(UniformLong::new(start, last)),
            Distribution::Zipfian => {
                // "2 is fudge factor": room for the keys the run's inserts add.
                let expected_new = (w.operationcount as f64 * w.insert * 2.0) as u64;
                KeyChooser::Zipfian(ScrambledZipfian::new(start, start + count + expected_new))
            }
            Distribution::Latest => {
                KeyChooser::Latest(SkewedLatest::new(Arc::clone(&shared.inserts)))
            }
            Distribution::Hotspot => KeyChooser::Hotspot(Hotspot::new(
                start,
                last,
                w.hotspotdatafraction,
                w.hotspotopnfraction,
            )),
            Distribution::Sequential => {
                KeyChooser::Sequential(Sequential::new(Arc::clone(&shared.sequential), start, last))
            }
            Distribution::Exponential => KeyChooser::Exponential(Exponential::new(
                w.exponential_percentile,
                w.recordcount as f64 * w.exponential_frac,
            )),
        };
        let length = match w.fieldlengthdistribution {
            LengthDistribution::Constant => FieldLength::Constant(w.fieldlength),
            LengthDistribution::Uniform => {
                FieldLength::Uniform(UniformLong::new(w.minfieldlength, w.fieldlength))
            }
            LengthDistribution::Zipfian => {
                FieldLength::Zipfian(Zipfian::new(w.minfieldlength, w.fieldlength))
            }
        };
        let scan_length = match w.scanlengthdistribution {
            ScanLength::Uniform => {
                ScanChooser::Uniform(UniformLong::new(w.minscanlength, w.maxscanlength))
            }
            ScanLength::Zipfian => {
                ScanChooser::Zipfian(Zipfian::new(w.minscanlength, w.maxscanlength))
            }
        };
        let mut ops = Discrete::new();
        for (p, c) in [
            (w.read, Choice::Read),
            (w.update, Choice::Update),
            (w.insert, Choice::Insert),
            (w.scan, Choice::Scan),
            (w.readmodifywrite, Choice::ReadModifyWrite),
        ] {
            if p > 0.0 {
                ops.add(p, c);
            }
        }
        let names = w.field_names();
        ClientWorkload {
            rng,
            keys,
            field: UniformLong::new(0, w.fieldcount - 1),
            length,
            scan_length,
            ops,
            inserts: Arc::clone(&shared.inserts),
            values: Vec::with_capacity(names.len()),
            names,
            key: String::new(),
            record: Record::default(),
            records: Records::default(),
            w,
        }
    }

    /// `nextKeynum`: a key number no higher than the last acknowledged insert.
    fn next_keynum(&mut self) -> u64 {
        self.keys.next_keynum(&mut self.rng, &self.inserts)
    }

    fn set_key(&mut self, keynum: u64) {
        build_key_into(keynum, self.w.zeropadding, self.w.ordered, &mut self.key);
    }

    /// One field's value for the record at `self.key`: random printable bytes, or with
    /// `dataintegrity` YCSB's deterministic value.
    fn value_into(&mut self, field: usize, out: &mut Vec<u8>) {
        let len = self.length.next(&mut self.rng) as usize;
        if self.w.dataintegrity {
            deterministic_value(&self.key, &self.names[field], len, out);
        } else {
            fill_random_bytes(&mut self.rng, len, out);
        }
    }

    /// `buildValues`: every field.
    fn build_all(&mut self) {
        let mut values = std::mem::take(&mut self.values);
        values.resize_with(self.names.len(), Default::default);
        for (i, (name, value)) in values.iter_mut().enumerate() {
            if name.as_str() != self.names[i] {
                name.clone_from(&self.names[i]);
            }
            self.value_into(i, value);
        }
        self.values = values;
    }

    /// `buildSingleValue`: one field the field chooser picks.
    fn build_one(&mut self) {
        let field = self.field.next(&mut self.rng) as usize;
        let mut values = std::mem::take(&mut self.values);
        values.truncate(1);
        if values.is_empty() {
            values.push(Default::default());
        }
        values[0].0.clone_from(&self.names[field]);
        self.value_into(field, &mut values[0].1);
        self.values = values;
    }

    /// The fields a read or scan asks for, as a range of the field names: one the chooser
    /// picks, every field by name, or every field without names (`None`).
    fn read_fields(&mut self) -> Option<Range<usize>> {
        if !self.w.readallfields {
            let field = self.field.next(&mut self.rng) as usize;
            Some(field..field + 1)
        } else if self.w.readallfieldsbyname {
            Some(0..self.names.len())
        } else {
            None
        }
    }

    /// `doInsert` of a load: the next key of the shared sequence, every field. `intended`
    /// is the schedule's start for it (its actual start when unthrottled).
    pub fn load_one(
        &mut self,
        db: &mut dyn YcsbStore,
        m: &mut Measurements,
        clock: &Clock,
        intended: Option<u64>,
        keysequence: &Counter,
    ) -> Status {
        let keynum = keysequence.next();
        self.set_key(keynum);
        self.build_all();
        self.insert_with_retries(db, m, clock, intended)
    }

    fn insert_with_retries(
        &mut self,
        db: &mut dyn YcsbStore,
        m: &mut Measurements,
        clock: &Clock,
        intended: Option<u64>,
    ) -> Status {
        let mut retries = 0;
        loop {
            let status = self.measured(
                Op::Insert,
                m,
                clock,
                intended,
                |me, db| db.insert(&me.key, &me.values).map(drop),
                db,
            );
            if status == Status::Ok || retries >= self.w.insertion_retry_limit {
                return status;
            }
            retries += 1;
            // YCSB waits the retry interval with ±20% jitter.
            let base = self.w.insertion_retry_interval * 1000;
            let jitter = (self.rng.next_u64() % (base / 5 * 2 + 1)) as i64 - (base / 5) as i64;
            let wait = (base as i64 + jitter).max(0) as u64;
            std::thread::sleep(std::time::Duration::from_millis(wait));
        }
    }

    /// Times `call` on `db` as `DBWrapper` times an operation, and records it under `op`.
    fn measured(
        &mut self,
        op: Op,
        m: &mut Measurements,
        clock: &Clock,
        intended: Option<u64>,
        call: impl FnOnce(&mut Self, &mut dyn YcsbStore) -> Result<(), YcsbError>,
        db: &mut dyn YcsbStore,
    ) -> Status {
        let start = clock.now();
        let result = call(self, db);
        let end = clock.now();
        let status = status_of(&result);
        m.record(op, status, intended.unwrap_or(start), start, end);
        status
    }

    /// `doTransaction`: one operation the chooser picks, measured.
    pub fn transaction(
        &mut self,
        db: &mut dyn YcsbStore,
        m: &mut Measurements,
        clock: &Clock,
        intended: Option<u64>,
    ) -> Status {
        match self.ops.next(&mut self.rng) {
            Choice::Read => {
                let keynum = self.next_keynum();
                self.set_key(keynum);
                let fields = self.read_fields();
                self.read(db, m, clock, intended, fields)
            }
            Choice::Update => {
                let keynum = self.next_keynum();
                self.set_key(keynum);
                if self.w.writeallfields {
                    self.build_all();
                } else {
                    self.build_one();
                }
                self.measured(
                    Op::Update,
                    m,
                    clock,
                    intended,
                    |me, db| db.update(&me.key, &me.values),
                    db,
                )
            }
            Choice::Insert => {
                // One attempt (YCSB retries only the load's inserts), acknowledged whatever
                // it returned, so `latest` may pick the key from now on.
                let keynum = self.inserts.next();
                self.set_key(keynum);
                self.build_all();
                let status = self.measured(
                    Op::Insert,
                    m,
                    clock,
                    intended,
                    |me, db| db.insert(&me.key, &me.values),
                    db,
                );
                self.inserts.acknowledge(keynum);
                status
            }
            Choice::Scan => {
                let keynum = self.next_keynum();
                self.set_key(keynum);
                let len = match &mut self.scan_length {
                    ScanChooser::Uniform(g) => g.next(&mut self.rng),
                    ScanChooser::Zipfian(g) => g.next(&mut self.rng),
                } as usize;
                let fields = self.read_fields();
                self.measured(
                    Op::Scan,
                    m,
                    clock,
                    intended,
                    |me, db| {
                        let mut records = std::mem::take(&mut me.records);
                        let fields = fields.map(|r| &me.names[r]);
                        let result = db.scan(&me.key, len, fields, &mut records);
                        me.records = records;
                        result
                    },
                    db,
                )
            }
            Choice::ReadModifyWrite => {
                let keynum = self.next_keynum();
                self.set_key(keynum);
                let fields = self.read_fields();
                if self.w.writeallfields {
                    self.build_all();
                } else {
                    self.build_one();
                }
                let start = clock.now();
                let read = self.read(db, m, clock, intended, fields);
                let update = self.measured(
                    Op::Update,
                    m,
                    clock,
                    intended,
                    |me, db| db.update(&me.key, &me.values),
                    db,
                );
                let end = clock.now();
                // YCSB times the pair under READ-MODIFY-WRITE whatever each returned (each
                // one's status is counted under READ and UPDATE).
                m.record_timing(Op::ReadModifyWrite, intended.unwrap_or(start), start, end);
                if read == Status::Ok {
                    update
                } else {
                    read
                }
            }
        }
    }

    fn read(
        &mut self,
        db: &mut dyn YcsbStore,
        m: &mut Measurements,
        clock: &Clock,
        intended: Option<u64>,
        fields: Option<Range<usize>>,
    ) -> Status {
        let start = clock.now();
        let mut record = std::mem::take(&mut self.record);
        let result = {
            let fields = fields.map(|r| &self.names[r]);
            db.read(&self.key, fields, &mut record)
        };
        let end = clock.now();
        let mut status = status_of(&result);
        if status == Status::Ok && self.w.dataintegrity && !self.verify(&record) {
            status = Status::UnexpectedState;
        }
        self.record = record;
        m.record(Op::Read, status, intended.unwrap_or(start), start, end);
        status
    }

    /// `verifyRow`: every value read is the deterministic value of its key and field.
    fn verify(&self, record: &Record) -> bool {
        let mut expected = Vec::new();
        record.fields().all(|(name, value)| {
            let name = String::from_utf8_lossy(name);
            deterministic_value(&self.key, &name, value.len(), &mut expected);
            value == expected.as_slice() && value.len() as u64 == self.w.fieldlength
        })
    }
}

/// YCSB's status for a call's result.
fn status_of(result: &Result<(), YcsbError>) -> Status {
    match result {
        Ok(()) => Status::Ok,
        Err(YcsbError::NotFound(_)) => Status::NotFound,
        Err(YcsbError::Unsupported(_)) => Status::NotImplemented,
        Err(_) => Status::Error,
    }
}

/// `buildDeterministicValue`: `key:field`, then `:` and Java's hash code of everything so
/// far, until it is `len` long, cut to `len`.
pub fn deterministic_value(key: &str, field: &str, len: usize, out: &mut Vec<u8>) {
    let mut s = String::with_capacity(len + 12);
    s.push_str(key);
    s.push(':');
    s.push_str(field);
    while s.len() < len {
        let h = java_string_hash(&s);
        s.push(':');
        s.push_str(&h.to_string());
    }
    s.truncate(len);
    out.clear();
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_values_follow_ycsb() {
        let mut v = Vec::new();
        deterministic_value("user1", "field0", 5, &mut v);
        assert_eq!(v, b"user1");
        deterministic_value("user1", "field0", 30, &mut v);
        let h = java_string_hash("user1:field0");
        let want = format!("user1:field0:{h}");
        let mut want = want;
        while want.len() < 30 {
            let h2 = java_string_hash(&want);
            want = format!("{want}:{h2}");
        }
        want.truncate(30);
        assert_eq!(v, want.as_bytes());
    }
}
