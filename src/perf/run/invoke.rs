//! What one invocation of one operation does on a Redis-protocol target (reference §2.4 and
//! docs/perf.md's table): the Blob writes and reads of each data structure, the putall
//! pipelines, and the factory writes with their ER children — one command mapping
//! ([`write_cmd`]) for all of them.
//!
//! Invariants: each thread has its own [`OpState`] per operation (generator, payload, putall
//! cursor), so threads share nothing but the connection-less configuration; a factory entity
//! is stored as the JSON object of its fields.

use std::time::Duration;

use redis::{ConnectionLike, Value};

use crate::perf::config::{DataStructure, Operation, TestCase};
use crate::perf::data::zero_blob;
use crate::perf::factory::{Entity, Writer};
use crate::perf::random::JavaRandom;

/// An operation with a factory: its writer, and the operation its ER children go to.
pub(super) struct FactoryPlan<'a> {
    pub(super) writer: Writer,
    pub(super) child: Option<&'a Operation>,
}

/// The Redis value of a factory entity: a JSON object of its fields (Redisson would store
/// the object with its codec; JSON keeps it readable and comparable across targets).
fn entity_json(entity: &Entity) -> String {
    let fields: serde_json::Map<String, serde_json::Value> = entity
        .fields()
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
        .collect();
    serde_json::Value::Object(fields).to_string()
}

/// The command that writes `value` under `key` into `op`'s data structure (docs/perf.md's
/// table): one place for both the Blob and the factory writes. `None` for `sleep`.
fn write_cmd(op: &Operation, key: &str, value: &[u8]) -> Option<redis::Cmd> {
    let name = op.ds_name.as_str();
    let mut cmd;
    match op.data_structure {
        DataStructure::Map => {
            cmd = redis::cmd("HSET");
            cmd.arg(name).arg(key).arg(value);
        }
        DataStructure::MCache => {
            cmd = redis::cmd("SET");
            cmd.arg(format!("{name}:{key}")).arg(value);
            if op.ttl_sec > 0 {
                cmd.arg("EX").arg(op.ttl_sec);
            }
        }
        DataStructure::List | DataStructure::Queue => {
            cmd = redis::cmd("RPUSH");
            cmd.arg(name).arg(value);
        }
        DataStructure::Topic => {
            cmd = redis::cmd("PUBLISH");
            cmd.arg(name).arg(value);
        }
        DataStructure::STopic => {
            cmd = redis::cmd("SPUBLISH");
            cmd.arg(name).arg(value);
        }
        DataStructure::RTopic => {
            cmd = redis::cmd("XADD");
            cmd.arg(name).arg("*").arg("m").arg(value);
        }
        DataStructure::Sleep => return None,
    }
    Some(cmd)
}

/// putall's per-thread key cursor (§2.4): `batchSize` ids `startNum + keyIndex++`, wrapping
/// to the thread's first index at the end of its share of `totalEntryCount`. The Redis and
/// the `-db` runners (and `-db`'s list of written keys) share it.
pub(crate) struct PutAllCursor {
    index: u64,
    low: u64,
    high: u64,
}

impl PutAllCursor {
    pub(crate) fn new(op: &Operation, t: u64, threads: u64) -> Self {
        let share = op.total_entry_count / threads.max(1);
        PutAllCursor {
            index: (t - 1) * share,
            low: (t - 1) * share,
            high: t * share,
        }
    }

    /// The next entity id, `startNum + keyIndex`.
    pub(crate) fn next_id(&mut self, op: &Operation) -> i64 {
        if self.index >= self.high {
            self.index = self.low;
        }
        let n = self.index;
        self.index += 1;
        op.key_start_num + n as i64
    }
}

/// Per thread and operation: its random generator, payload and putall key cursor.
pub(super) struct OpState {
    random: JavaRandom,
    payload: Vec<u8>,
    putall: PutAllCursor,
}

impl OpState {
    pub(super) fn new(op: &Operation, t: u64, threads: u64) -> OpState {
        OpState {
            random: JavaRandom::new(thread_seed(op.random_seed, t)),
            payload: zero_blob(op.payload_size),
            putall: PutAllCursor::new(op, t, threads),
        }
    }

    fn random_key(&mut self, op: &Operation) -> String {
        let bound = i32::try_from(op.total_entry_count.max(1)).unwrap_or(i32::MAX);
        let v = i64::from(self.random.next_int_bound(bound));
        op.key(op.key_start_num + v)
    }

    fn next_putall_key(&mut self, op: &Operation) -> String {
        op.key(self.putall.next_id(op))
    }

    /// One invocation of an operation with a factory. Reads look up factory keys
    /// (`getKey(startNum + random)`; `getall` without `startNum`, as PadoGrid's `getall`);
    /// writes store each entity as JSON, its ER children in the child operation's structure,
    /// in one round trip. Cases without keys (poll, peek, take, remove) are the plain ones.
    pub(super) fn invoke_factory(
        &mut self,
        op: &Operation,
        plan: &FactoryPlan<'_>,
        i: u64,
        con: &mut dyn ConnectionLike,
    ) -> Result<(), String> {
        let name = op.ds_name.as_str();
        let bound = i32::try_from(op.total_entry_count.max(1)).unwrap_or(i32::MAX);
        let mut cmd;
        match (op.data_structure, op.test_case) {
            (DataStructure::Map | DataStructure::MCache, TestCase::Get) => {
                let v = i64::from(self.random.next_int_bound(bound));
                let key = plan.writer.key(op.key_start_num + v);
                if op.data_structure == DataStructure::Map {
                    cmd = redis::cmd("HGET");
                    cmd.arg(name).arg(key);
                } else {
                    cmd = redis::cmd("GET");
                    cmd.arg(format!("{name}:{key}"));
                }
            }
            (DataStructure::Map | DataStructure::MCache, TestCase::GetAll) => {
                let keys: Vec<String> = (0..op.batch_size)
                    .map(|_| {
                        plan.writer
                            .key(i64::from(self.random.next_int_bound(bound)))
                    })
                    .collect();
                if op.data_structure == DataStructure::Map {
                    cmd = redis::cmd("HMGET");
                    cmd.arg(name).arg(keys);
                } else {
                    cmd = redis::cmd("MGET");
                    cmd.arg(
                        keys.iter()
                            .map(|k| format!("{name}:{k}"))
                            .collect::<Vec<_>>(),
                    );
                }
            }
            (_, TestCase::Poll | TestCase::Peek | TestCase::Take | TestCase::Remove) => {
                return self.invoke(op, i, con)
            }
            (_, tc) => {
                let batch = matches!(
                    tc,
                    TestCase::PutAll | TestCase::AddAll | TestCase::PublishAll
                );
                let ids: Vec<i64> = if batch {
                    (0..op.batch_size.max(1))
                        .map(|_| self.putall.next_id(op))
                        .collect()
                } else {
                    vec![op.key_start_num + i as i64 - 1]
                };
                let mut pipe = redis::pipe();
                for id in ids {
                    for (n, (_, entry)) in plan.writer.rows(id).into_iter().enumerate() {
                        let target = if n == 0 { Some(op) } else { plan.child };
                        let value = entity_json(&entry.value);
                        if let Some(c) =
                            target.and_then(|o| write_cmd(o, &entry.key, value.as_bytes()))
                        {
                            pipe.add_command(c);
                        }
                    }
                }
                return pipe
                    .query::<Value>(con)
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
        }
        cmd.query::<Value>(con).map(drop).map_err(|e| e.to_string())
    }

    /// Writes the thread's Blob under `key` into `op`'s data structure.
    fn write(&self, op: &Operation, key: &str, con: &mut dyn ConnectionLike) -> Result<(), String> {
        match write_cmd(op, key, &self.payload) {
            Some(cmd) => cmd.query::<Value>(con).map(drop).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// One invocation of `op` for invocation number `i` (1-based).
    pub(super) fn invoke(
        &mut self,
        op: &Operation,
        i: u64,
        con: &mut dyn ConnectionLike,
    ) -> Result<(), String> {
        let name = op.ds_name.as_str();
        let key = || op.key(op.key_start_num + i as i64 - 1);
        let mut cmd;
        match (op.data_structure, op.test_case) {
            (DataStructure::Sleep, _) => {
                std::thread::sleep(Duration::from_millis(op.sleep_ms));
                return Ok(());
            }
            (DataStructure::Map, TestCase::Get) => {
                cmd = redis::cmd("HGET");
                cmd.arg(name).arg(self.random_key(op));
            }
            (DataStructure::Map, TestCase::GetAll) => {
                cmd = redis::cmd("HMGET");
                cmd.arg(name);
                for _ in 0..op.batch_size {
                    cmd.arg(self.random_key(op));
                }
            }
            (DataStructure::Map, TestCase::PutAll) => {
                cmd = redis::cmd("HSET");
                cmd.arg(name);
                for _ in 0..op.batch_size {
                    cmd.arg(self.next_putall_key(op)).arg(&self.payload[..]);
                }
            }
            (DataStructure::Map, _) => return self.write(op, &key(), con),
            (DataStructure::MCache, TestCase::Get) => {
                cmd = redis::cmd("GET");
                cmd.arg(format!("{name}:{}", self.random_key(op)));
            }
            (DataStructure::MCache, TestCase::GetAll) => {
                cmd = redis::cmd("MGET");
                for _ in 0..op.batch_size {
                    cmd.arg(format!("{name}:{}", self.random_key(op)));
                }
            }
            (DataStructure::MCache, TestCase::PutAll) => {
                let mut pipe = redis::pipe();
                for _ in 0..op.batch_size {
                    let k = self.next_putall_key(op);
                    if let Some(c) = write_cmd(op, &k, &self.payload) {
                        pipe.add_command(c);
                    }
                }
                return pipe
                    .query::<Value>(con)
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
            (DataStructure::MCache, _) => return self.write(op, &key(), con),
            (DataStructure::List, TestCase::AddAll) => {
                cmd = redis::cmd("RPUSH");
                cmd.arg(name);
                for _ in 0..op.batch_size {
                    cmd.arg(&self.payload[..]);
                }
            }
            (DataStructure::List, TestCase::Remove) => {
                cmd = redis::cmd("LREM");
                cmd.arg(name).arg(1).arg(&self.payload[..]);
            }
            (DataStructure::List, _) => return self.write(op, "", con),
            (DataStructure::Queue, TestCase::Poll) => {
                cmd = redis::cmd("LPOP");
                cmd.arg(name);
            }
            (DataStructure::Queue, TestCase::Peek) => {
                cmd = redis::cmd("LINDEX");
                cmd.arg(name).arg(0);
            }
            (DataStructure::Queue, TestCase::Take) => {
                // BLPOP with a timeout, so an empty queue cannot hang the run forever.
                cmd = redis::cmd("BLPOP");
                cmd.arg(name).arg(1);
            }
            (DataStructure::Queue, _) => return self.write(op, "", con),
            (DataStructure::Topic | DataStructure::STopic | DataStructure::RTopic, tc) => {
                let n = if tc == TestCase::PublishAll {
                    op.batch_size.max(1)
                } else {
                    1
                };
                let mut pipe = redis::pipe();
                for _ in 0..n {
                    if let Some(c) = write_cmd(op, "", &self.payload) {
                        pipe.add_command(c);
                    }
                }
                return pipe
                    .query::<Value>(con)
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
        }
        match cmd.query::<Value>(con) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The seed of thread `t`'s `java.util.Random` for an operation. PadoGrid's threads share one
/// `Random` per operation, so together they draw one sequence, interleaved; a generator per
/// thread seeded alike would make every thread read the same keys in lockstep. Thread 1 keeps
/// `randomSeed`, thread `t` uses `randomSeed + t - 1`: reproducible, and different per thread.
pub(crate) fn thread_seed(seed: i64, t: u64) -> i64 {
    seed.wrapping_add(t.saturating_sub(1) as i64)
}
