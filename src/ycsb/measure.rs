//! What a YCSB run measures, as YCSB's `DBWrapper` and `Measurements` measure it: for every
//! operation, its latency from its actual start and from its intended start (the `-target`
//! schedule's deadline; its actual start when unthrottled), under the operation's name when
//! it returned OK and under `<OP>-FAILED` otherwise; and the count of each return status
//! under the operation's name (`[READ], Return=OK, 1000`).
//!
//! Latencies are kept in nanoseconds in HDR histograms (3 significant digits), one set per
//! client thread, merged at the end; YCSB's text prints them in whole microseconds.

use hdrhistogram::Histogram;

use crate::runner::stats::latency_histogram;

/// YCSB's operations, in the order edgebench prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// `READ`.
    Read,
    /// `READ-MODIFY-WRITE`: a read and an update, timed together (workload F).
    ReadModifyWrite,
    /// `UPDATE`.
    Update,
    /// `INSERT`.
    Insert,
    /// `SCAN`.
    Scan,
    /// `DELETE`.
    Delete,
    /// `CLEANUP`: closing the client's connection at the end of its thread.
    Cleanup,
}

impl Op {
    /// Every operation, in print order.
    pub const ALL: [Op; 7] = [
        Op::Read,
        Op::ReadModifyWrite,
        Op::Update,
        Op::Insert,
        Op::Scan,
        Op::Delete,
        Op::Cleanup,
    ];

    /// YCSB's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::Delete => "DELETE",
            Op::Cleanup => "CLEANUP",
        }
    }
}

/// YCSB's `Status` names an operation can end with here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// `OK`.
    Ok,
    /// `ERROR`: the store failed.
    Error,
    /// `NOT_FOUND`: no such record.
    NotFound,
    /// `NOT_IMPLEMENTED`: the binding has no such call (go-ycsb's scan).
    NotImplemented,
    /// `UNEXPECTED_STATE`: a read returned values `dataintegrity` did not expect.
    UnexpectedState,
}

impl Status {
    /// Every status, in print order.
    pub const ALL: [Status; 5] = [
        Status::Ok,
        Status::Error,
        Status::NotFound,
        Status::NotImplemented,
        Status::UnexpectedState,
    ];

    /// YCSB's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Error => "ERROR",
            Status::NotFound => "NOT_FOUND",
            Status::NotImplemented => "NOT_IMPLEMENTED",
            Status::UnexpectedState => "UNEXPECTED_STATE",
        }
    }
}

/// One operation's measurements.
#[derive(Debug, Clone)]
pub struct OpMeasure {
    /// Latency of the OK ones from their actual start, ns.
    pub ok: Histogram<u64>,
    /// Latency of the OK ones from their intended start, ns.
    pub ok_intended: Histogram<u64>,
    /// Latency of the failed ones from their actual start, ns (`<OP>-FAILED`).
    pub failed: Histogram<u64>,
    /// Latency of the failed ones from their intended start, ns.
    pub failed_intended: Histogram<u64>,
    /// How many ended with each [`Status`], in [`Status::ALL`]'s order.
    pub returns: [u64; 5],
    /// How many were timed without a status ([`Measurements::record_timing`]).
    pub timed: u64,
}

impl Default for OpMeasure {
    fn default() -> Self {
        OpMeasure {
            ok: latency_histogram(),
            ok_intended: latency_histogram(),
            failed: latency_histogram(),
            failed_intended: latency_histogram(),
            returns: [0; 5],
            timed: 0,
        }
    }
}

impl OpMeasure {
    /// How many were measured.
    pub fn count(&self) -> u64 {
        self.returns.iter().sum::<u64>() + self.timed
    }

    fn add(&mut self, other: &OpMeasure) {
        // Adding histograms of the same auto-resizing kind cannot fail.
        let _ = self.ok.add(&other.ok);
        let _ = self.ok_intended.add(&other.ok_intended);
        let _ = self.failed.add(&other.failed);
        let _ = self.failed_intended.add(&other.failed_intended);
        for (a, b) in self.returns.iter_mut().zip(other.returns) {
            *a += b;
        }
        self.timed += other.timed;
    }
}

/// A client thread's (or a merged run's) measurements.
#[derive(Debug, Clone)]
pub struct Measurements {
    ops: [OpMeasure; 7],
    /// How late each operation started after its intended start, ns (0 when unthrottled).
    pub lag: Histogram<u64>,
    /// Operations of the workload done ([`Measurements::done`]).
    done: u64,
}

impl Default for Measurements {
    fn default() -> Self {
        Measurements {
            ops: Default::default(),
            lag: latency_histogram(),
            done: 0,
        }
    }
}

impl Measurements {
    /// Records one operation that started at `start` (ns since the run's origin), intended
    /// at `intended`, and ended at `end`.
    #[inline]
    pub fn record(&mut self, op: Op, status: Status, intended: u64, start: u64, end: u64) {
        let m = &mut self.ops[op as usize];
        m.returns[status as usize] += 1;
        let (actual, from_intended) = (end.saturating_sub(start), end.saturating_sub(intended));
        let (h, hi) = match status {
            Status::Ok => (&mut m.ok, &mut m.ok_intended),
            _ => (&mut m.failed, &mut m.failed_intended),
        };
        let _ = h.record(actual);
        let _ = hi.record(from_intended);
    }

    /// Records the timing of `op` without a status (YCSB's READ-MODIFY-WRITE, which counts
    /// no `Return=` of its own), in its OK series.
    #[inline]
    pub fn record_timing(&mut self, op: Op, intended: u64, start: u64, end: u64) {
        let m = &mut self.ops[op as usize];
        m.timed += 1;
        let _ = m.ok.record(end.saturating_sub(start));
        let _ = m.ok_intended.record(end.saturating_sub(intended));
    }

    /// Counts one operation of the workload done (a load's insert, a run's transaction:
    /// YCSB's `opsDone`, which counts a read-modify-write once).
    #[inline]
    pub fn done(&mut self) {
        self.done += 1;
    }

    /// Records how late an operation started (ns).
    #[inline]
    pub fn record_lag(&mut self, late: u64) {
        let _ = self.lag.record(late);
    }

    /// Adds `other`'s measurements to these.
    pub fn add(&mut self, other: &Measurements) {
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            a.add(b);
        }
        let _ = self.lag.add(&other.lag);
        self.done += other.done;
    }

    /// One operation's measurements.
    pub fn op(&self, op: Op) -> &OpMeasure {
        &self.ops[op as usize]
    }

    /// The operations measured at least once, in print order.
    pub fn measured(&self) -> impl Iterator<Item = (Op, &OpMeasure)> {
        Op::ALL
            .into_iter()
            .map(|op| (op, &self.ops[op as usize]))
            .filter(|(_, m)| m.count() > 0)
    }

    /// Operations of the workload done: a load's inserts, a run's transactions (a
    /// read-modify-write once, not its read and update again; not CLEANUP).
    pub fn operations(&self) -> u64 {
        self.done
    }

    /// Empties it, keeping its histograms' memory.
    pub fn reset(&mut self) {
        for m in &mut self.ops {
            m.ok.reset();
            m.ok_intended.reset();
            m.failed.reset();
            m.failed_intended.reset();
            m.returns = [0; 5];
            m.timed = 0;
        }
        self.lag.reset();
        self.done = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_and_failed_go_to_their_series_and_statuses_are_counted() {
        let mut m = Measurements::default();
        m.record(Op::Read, Status::Ok, 0, 1_000, 5_000);
        m.record(Op::Read, Status::NotFound, 0, 10_000, 12_000);
        m.record(Op::Update, Status::Ok, 100, 200, 300);
        let read = m.op(Op::Read);
        assert_eq!(read.returns, [1, 0, 1, 0, 0]);
        assert_eq!((read.ok.len(), read.failed.len()), (1, 1));
        assert!(read.ok.equivalent(read.ok.max(), 4_000));
        assert!(read.ok_intended.equivalent(read.ok_intended.max(), 5_000));
        assert!(read.failed.equivalent(read.failed.max(), 2_000));
        for _ in 0..3 {
            m.done();
        }
        m.record_timing(Op::ReadModifyWrite, 0, 10, 20);
        assert_eq!(m.op(Op::ReadModifyWrite).returns, [0; 5]);
        assert_eq!(m.op(Op::ReadModifyWrite).count(), 1);
        let mut all = Measurements::default();
        all.add(&m);
        all.add(&m);
        assert_eq!(all.operations(), 6);
        assert_eq!(
            all.measured().map(|(op, _)| op).collect::<Vec<_>>(),
            vec![Op::Read, Op::ReadModifyWrite, Op::Update]
        );
        all.reset();
        assert_eq!(all.operations(), 0);
    }
}
