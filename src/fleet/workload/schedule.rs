//! The open-loop writer: every event has an intended send time on a fixed schedule, and its
//! latency is measured from that time (corrected for coordinated omission) as well as from the
//! moment it was actually sent.
//!
//! A closed-loop client waits for each answer before sending the next request, so a store that
//! stalls for a second makes the client send nothing for a second, and the stall shows up as
//! one slow request instead of the hundreds a fleet of devices would have seen ("coordinated
//! omission", Gil Tene; wrk2 and HdrHistogram correct for it the same way). Here event `j` of
//! a schedule at `rate` events/s is due at `start + j / rate`: the writer sleeps until then
//! when it is early, sends at once when it is late, and records
//! - **corrected latency** = answer time − intended time (what a device that sent on time
//!   waited), and
//! - **uncorrected latency** = answer time − actual send time (what the store took).
//!
//! A send that starts more than [`Schedule::late_after_ns`] after its intended time is
//! **late**. Events due before the run's end may still be sent up to `late_after_ns` after
//! it; every event due before the end but not sent by then is counted as **unsent** (the
//! writer's backlog), never silently skipped.
//!
//! The writer is generic over a [`Pacer`] (the clock and the sleep) so tests drive it with a
//! scripted clock and assert every count and latency exactly.

use std::sync::atomic::{AtomicBool, Ordering};

use hdrhistogram::Histogram;

use crate::runner::stats::latency_histogram;

/// One second, ns.
pub const SECOND_NS: u64 = 1_000_000_000;

/// When events are due.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Events per second, > 0.
    pub rate: f64,
    /// The whole run, warmup included, ns from the start.
    pub duration_ns: u64,
    /// Events due in the first `warmup_ns` are sent but left out of the figures.
    pub warmup_ns: u64,
    /// A send that starts more than this after its intended time is late.
    pub late_after_ns: u64,
}

impl Schedule {
    /// When event `j` is due, ns from the start.
    pub fn intended_ns(&self, j: u64) -> u64 {
        // f64 holds j exactly up to 2^53; a run offers far fewer events.
        (j as f64 * SECOND_NS as f64 / self.rate) as u64
    }

    /// How many events are due by `now_ns` (intended time at or before it), at most
    /// [`Schedule::due`].
    pub fn due_by(&self, now_ns: u64) -> u64 {
        let by_now = (now_ns as f64 * self.rate / SECOND_NS as f64) as u64 + 1;
        by_now.min(self.due())
    }

    /// How many events are due before the run's end: those with an intended time in
    /// `[0, duration)`.
    pub fn due(&self) -> u64 {
        // The smallest j with intended(j) >= duration.
        let mut j = (self.duration_ns as f64 * self.rate / SECOND_NS as f64) as u64;
        while j > 0 && self.intended_ns(j - 1) >= self.duration_ns {
            j -= 1;
        }
        while self.intended_ns(j) < self.duration_ns {
            j += 1;
        }
        j
    }
}

/// The clock and the sleep of a writer.
pub trait Pacer {
    /// ns since the run's start; never decreases.
    fn now_ns(&mut self) -> u64;
    /// Returns at `at_ns` or a little after.
    fn sleep_until(&mut self, at_ns: u64);
}

/// What one writer measured.
#[derive(Debug, Clone)]
pub struct WriterReport {
    /// Events sent and answered without error (warmup included).
    pub sent: u64,
    /// Of those, the ones due after the warmup: the ones in the histograms.
    pub measured: u64,
    /// Sends that started more than `late_after_ns` after their intended time (after the
    /// warmup).
    pub late: u64,
    /// Events due before the end that were never sent: the backlog when the run ended.
    pub unsent: u64,
    /// Writes the store refused (each is counted, and the writer goes on).
    pub failed: u64,
    /// The first refusal's message, if any.
    pub first_error: Option<String>,
    /// Answer − intended time, ns (after the warmup).
    pub corrected: Histogram<u64>,
    /// Answer − actual send, ns (after the warmup).
    pub uncorrected: Histogram<u64>,
    /// Per second of intended time after the warmup: the corrected latency of the events
    /// answered (2 significant digits; allocated as the seconds come, up to `seconds`).
    pub per_second: Vec<Histogram<u64>>,
    /// The measured seconds of the run.
    seconds: usize,
    /// CPU time the client threads spent, ns (building requests, the client side of each call,
    /// pacing), when the platform tells.
    pub cpu_ns: u64,
    /// Wall time the writer spent on its own work, ns: building events ahead of their time
    /// and recording each answer; not waiting for an event's time, not in the store call.
    /// Divided by the events sent, it is what the load generator costs per event, so
    /// `1 / that` is the most one writer could offer to a store that answered at once.
    pub generator_ns: u64,
}

impl WriterReport {
    fn new(seconds: usize) -> Self {
        WriterReport {
            sent: 0,
            measured: 0,
            late: 0,
            unsent: 0,
            failed: 0,
            first_error: None,
            corrected: latency_histogram(),
            uncorrected: latency_histogram(),
            per_second: Vec::new(),
            seconds,
            cpu_ns: 0,
            generator_ns: 0,
        }
    }

    /// Adds another writer's figures (writers of one fleet run in parallel).
    pub fn merge(&mut self, other: &WriterReport) {
        self.sent += other.sent;
        self.measured += other.measured;
        self.late += other.late;
        self.unsent += other.unsent;
        self.failed += other.failed;
        self.cpu_ns += other.cpu_ns;
        self.generator_ns += other.generator_ns;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        // Histograms from `latency_histogram` auto-resize: adding cannot fail.
        let _ = self.corrected.add(&other.corrected);
        let _ = self.uncorrected.add(&other.uncorrected);
        for (second, theirs) in other.per_second.iter().enumerate() {
            if let Some(mine) = self.second(second) {
                let _ = mine.add(theirs);
            }
        }
    }

    /// Counts one call that was due at `intended`, started at `sent_at` and answered at `done`
    /// (ns from the run's start); only calls due after the warmup go into the figures.
    fn record<E: std::fmt::Display>(
        &mut self,
        schedule: &Schedule,
        intended: u64,
        sent_at: u64,
        done: u64,
        result: Result<(), E>,
    ) {
        if let Err(e) = result {
            self.failed += 1;
            if self.first_error.is_none() {
                self.first_error = Some(e.to_string());
            }
            return;
        }
        self.sent += 1;
        if intended < schedule.warmup_ns {
            return;
        }
        self.measured += 1;
        if sent_at - intended > schedule.late_after_ns {
            self.late += 1;
        }
        // The histograms auto-resize: recording cannot fail.
        let _ = self.corrected.record(done - intended);
        let _ = self.uncorrected.record(done - sent_at);
        let second = ((intended - schedule.warmup_ns) / SECOND_NS) as usize;
        if let Some(h) = self.second(second) {
            let _ = h.record(done - intended);
        }
    }

    /// Second `second`'s histogram, allocated with the ones before it on first use; `None`
    /// past the run's end.
    fn second(&mut self, second: usize) -> Option<&mut Histogram<u64>> {
        if second >= self.seconds {
            return None;
        }
        while self.per_second.len() <= second {
            // 2 significant digits (1%): a per-second series needs no more, and a long run
            // keeps one per second per client.
            self.per_second
                .push(Histogram::new(2).expect("2 significant digits is valid"));
        }
        self.per_second.get_mut(second)
    }
}

/// Sends the events `j = first, first + stride, ...` of `schedule`, each at its intended time
/// or as soon after as the writer can, until the run's end or `stop`: `prepare(j, &mut item)`
/// makes `item` event `j` ahead of its time (while the writer would otherwise wait; one item,
/// refilled, so nothing need be allocated per event), `send(&item)` sends it.
///
/// Building ahead keeps the build out of the latency, which is the store's and the
/// transport's. The time spent preparing and measuring is the writer's own cost:
/// [`WriterReport::generator_ns`].
///
/// A [`Share`] splits one schedule among several writers, so the fleet's total rate is the
/// schedule's.
pub fn write_open_loop<T, E: std::fmt::Display>(
    schedule: &Schedule,
    share: Share,
    pacer: &mut impl Pacer,
    stop: &AtomicBool,
    mut item: T,
    mut prepare: impl FnMut(u64, &mut T),
    mut send: impl FnMut(&T) -> Result<(), E>,
) -> WriterReport {
    let measured_ns = schedule.duration_ns.saturating_sub(schedule.warmup_ns);
    let seconds = measured_ns.div_ceil(SECOND_NS) as usize;
    let mut report = WriterReport::new(seconds);
    let stride = share.stride.max(1);
    let mut j = share.first;
    // When the last send was answered: from then to the next build is measuring.
    let mut answered = None;
    loop {
        let intended = schedule.intended_ns(j);
        if intended >= schedule.duration_ns {
            break;
        }
        let now = pacer.now_ns();
        if let Some(answered) = answered {
            report.generator_ns += now - answered;
        }
        // Events due before the end may still go out within the lateness allowed after it.
        if now >= schedule.duration_ns.saturating_add(schedule.late_after_ns)
            || stop.load(Ordering::Relaxed)
        {
            // Everything of ours still due before the end is the backlog.
            report.unsent = count_due(schedule, j, stride);
            break;
        }
        prepare(j, &mut item);
        let prepared = pacer.now_ns();
        report.generator_ns += prepared - now;
        if prepared < intended {
            pacer.sleep_until(intended);
        }
        let sent_at = pacer.now_ns();
        let result = send(&item);
        let done = pacer.now_ns();
        report.record(schedule, intended, sent_at, done, result);
        answered = Some(done);
        j += stride;
    }
    report
}

/// Which events of a schedule one writer sends: `first, first + stride, ...`; writer `w` of
/// `W` takes `first = w`, `stride = W`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// The writer's first event.
    pub first: u64,
    /// Events between two of the writer's.
    pub stride: u64,
}

impl Share {
    /// Every event: one writer alone.
    pub const ALL: Share = Share {
        first: 0,
        stride: 1,
    };
}

/// Calls `op(k)` for `k = 0, 1, ...` one after another, each as soon as the previous one
/// answered (closed loop), until the run's end or `stop`; latency is the call's own, in both
/// histograms (there is no intended time to correct from).
pub fn run_closed_loop<E: std::fmt::Display>(
    schedule: &Schedule,
    pacer: &mut impl Pacer,
    stop: &AtomicBool,
    mut op: impl FnMut(u64) -> Result<(), E>,
) -> WriterReport {
    let measured_ns = schedule.duration_ns.saturating_sub(schedule.warmup_ns);
    let mut report = WriterReport::new(measured_ns.div_ceil(SECOND_NS) as usize);
    for k in 0.. {
        let start = pacer.now_ns();
        if start >= schedule.duration_ns || stop.load(Ordering::Relaxed) {
            break;
        }
        let result = op(k);
        let done = pacer.now_ns();
        // Closed loop: the call's start is its intended time, so nothing is late.
        report.record(schedule, start, start, done, result);
    }
    report
}

/// How many of `j, j + stride, ...` are due before the run's end.
fn count_due(schedule: &Schedule, j: u64, stride: u64) -> u64 {
    let due = schedule.due();
    if j >= due {
        0
    } else {
        (due - j).div_ceil(stride)
    }
}

/// The real clock and sleep: `Instant`, sleeping in the OS until ~100 µs before the intended
/// time and spinning (yielding) for the rest, so sends start within a few µs of it.
#[derive(Debug)]
pub struct RealPacer {
    origin: std::time::Instant,
}

impl RealPacer {
    /// A pacer whose time 0 is `origin` (the run's start, shared by every writer), for the
    /// calling thread: it asks the kernel for exact sleeps on this thread (a timer slack of
    /// 1 ns instead of 50 µs), so the pacer can sleep rather than spin between events.
    pub fn new(origin: std::time::Instant) -> Self {
        // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and changes only this thread's
        // timer slack; a failure leaves the default, which is only less exact.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        RealPacer { origin }
    }
}

/// Below this the writer yields instead of sleeping (a sleep still wakes some µs late). It
/// used to be 100 µs: at 10,000 events/s a writer then yielded all the time between events,
/// and on a machine of two cores the `sched_yield` loop took the CPU the rest of the run
/// needed (a bus subscriber in the same process), counted as ~80 µs of writer CPU per event.
const SPIN_NS: u64 = 20_000;

impl Pacer for RealPacer {
    fn now_ns(&mut self) -> u64 {
        crate::runner::duration_ns(self.origin.elapsed())
    }

    fn sleep_until(&mut self, at_ns: u64) {
        loop {
            let now = self.now_ns();
            if now >= at_ns {
                return;
            }
            let left = at_ns - now;
            if left > SPIN_NS {
                std::thread::sleep(std::time::Duration::from_nanos(left - SPIN_NS));
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// CPU time of the calling thread, ns (`CLOCK_THREAD_CPUTIME_ID`); 0 when it cannot be read.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec.max(0) as u64)
        .saturating_mul(SECOND_NS)
        .saturating_add(ts.tv_nsec.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::cell::Cell;
    use std::rc::Rc;

    /// A scripted clock: sleeping jumps to the wake-up time; sends advance it through the
    /// shared cell.
    struct Script {
        now: Rc<Cell<u64>>,
    }

    impl Script {
        fn new() -> (Script, Rc<Cell<u64>>) {
            let now = Rc::new(Cell::new(0));
            (
                Script {
                    now: Rc::clone(&now),
                },
                now,
            )
        }
    }

    impl Pacer for Script {
        fn now_ns(&mut self) -> u64 {
            self.now.get()
        }
        fn sleep_until(&mut self, at_ns: u64) {
            self.now.set(self.now.get().max(at_ns));
        }
    }

    fn schedule(rate: f64, seconds: u64) -> Schedule {
        Schedule {
            rate,
            duration_ns: seconds * SECOND_NS,
            warmup_ns: 0,
            late_after_ns: 1_000_000,
        }
    }

    /// Runs one writer over the script; each send advances the clock by its cost.
    fn run(schedule: &Schedule, cost: impl Fn(u64) -> u64) -> (WriterReport, Vec<u64>) {
        let (mut pacer, now) = Script::new();
        let mut sent = Vec::new();
        let stop = AtomicBool::new(false);
        let report = write_open_loop(
            schedule,
            Share::ALL,
            &mut pacer,
            &stop,
            0,
            |j, i| *i = j,
            |&j| {
                sent.push(j);
                now.set(now.get() + cost(j));
                Ok::<(), String>(())
            },
        );
        (report, sent)
    }

    /// Writer `first` of `stride` over a scripted clock that only sleeping moves.
    fn open_loop(
        schedule: &Schedule,
        first: u64,
        stride: u64,
        stop: &AtomicBool,
        send: impl FnMut(u64) -> Result<(), String>,
    ) -> WriterReport {
        let (mut pacer, _) = Script::new();
        let mut send = send;
        write_open_loop(
            schedule,
            Share { first, stride },
            &mut pacer,
            stop,
            0,
            |j, i| *i = j,
            |&j| send(j),
        )
    }

    #[test]
    fn intended_times_follow_the_rate() {
        let s = schedule(1000.0, 1);
        assert_eq!(s.intended_ns(0), 0);
        assert_eq!(s.intended_ns(1), 1_000_000);
        assert_eq!(s.intended_ns(999), 999_000_000);
        assert_eq!(s.due(), 1000);
        assert_eq!(schedule(3.0, 2).due(), 6);
        assert_eq!(schedule(0.5, 3).due(), 2);
    }

    #[test]
    fn a_store_that_keeps_up_is_measured_from_the_intended_time_and_nothing_is_late() {
        // 1,000 events/s for 1 s; each write takes 100 µs.
        let (r, sent) = run(&schedule(1000.0, 1), |_| 100_000);
        assert_eq!(sent.len(), 1000);
        assert_eq!(
            (r.sent, r.measured, r.late, r.unsent, r.failed),
            (1000, 1000, 0, 0, 0)
        );
        assert_eq!(r.corrected.max(), r.uncorrected.max());
        assert_eq!(r.corrected.len(), 1000);
        assert_eq!(r.per_second.len(), 1);
        assert_eq!(r.per_second[0].len(), 1000);
    }

    #[test]
    fn a_slow_store_grows_corrected_latency_but_not_uncorrected() {
        // 1,000 events/s (one per ms) for 1 s, each write takes 2 ms: event j is sent at
        // 2j ms, answered at 2(j+1) ms, so its corrected latency is (j + 2) ms. The writer
        // may send until 1 ms after the end: events 0..=500 go out (500 at 1,000 ms), the
        // other 499 are the backlog.
        let (r, _) = run(&schedule(1000.0, 1), |_| 2_000_000);
        assert_eq!(r.sent, 501);
        assert_eq!(r.unsent, 499);
        // Event 0 is on time; event j >= 1 starts j ms late, more than the 1 ms allowed for
        // j >= 2.
        assert_eq!(r.late, 499);
        assert!(r.uncorrected.equivalent(r.uncorrected.min(), 2_000_000));
        assert!(r.uncorrected.equivalent(r.uncorrected.max(), 2_000_000));
        assert!(r.corrected.equivalent(r.corrected.min(), 2_000_000));
        // The last one sent is j = 500: (500 + 2) ms.
        assert!(r.corrected.equivalent(r.corrected.max(), 502_000_000));
    }

    #[test]
    fn events_are_built_ahead_of_their_time_and_the_build_is_the_generators_cost() {
        // 1,000 events/s for 1 s; building an event takes 3 µs, the store 10 µs. The build
        // happens before the intended time, so nothing is late and the store's 10 µs is all
        // the latency; the 1,000 builds are the generator's 3 ms.
        let s = schedule(1000.0, 1);
        let (mut pacer, now) = Script::new();
        let stop = AtomicBool::new(false);
        let r = write_open_loop(
            &s,
            Share::ALL,
            &mut pacer,
            &stop,
            0,
            |j, i| {
                now.set(now.get() + 3_000);
                *i = j;
            },
            |_| {
                now.set(now.get() + 10_000);
                Ok::<(), String>(())
            },
        );
        assert_eq!((r.sent, r.late, r.unsent), (1000, 0, 0));
        assert_eq!(r.generator_ns, 1000 * 3_000);
        // Every send but the first starts on time; the first is built at its own time (the
        // run starts there), so it waits for its build: 13 µs.
        assert_eq!(r.corrected.count_between(10_000, 10_000), 999);
        assert!(r.corrected.equivalent(r.corrected.max(), 13_000));
        assert!(r.uncorrected.equivalent(r.uncorrected.min(), 10_000));
        assert!(r.uncorrected.equivalent(r.uncorrected.max(), 10_000));
    }

    #[test]
    fn one_stall_shows_in_every_event_behind_it() {
        // 100 events/s (10 ms apart) for 1 s; event 10 takes 200 ms, the others 1 ms.
        // Closed loop would record one 200 ms write; open loop, the 20 events due during the
        // stall wait for it too.
        let (r, _) = run(&schedule(100.0, 1), |j| {
            if j == 10 {
                200_000_000
            } else {
                1_000_000
            }
        });
        assert_eq!((r.sent, r.unsent), (100, 0));
        // Uncorrected: one 200 ms write, 99 of 1 ms.
        assert_eq!(r.uncorrected.count_between(150_000_000, 250_000_000), 1);
        // Corrected: event 10 answered at 300 ms (200 ms). Event 10 + k (k >= 1) was due at
        // 100 + 10k ms, is sent at 299 + k ms while the writer catches up, and answered 1 ms
        // later: 200 − 9k ms, 191 ms for event 11 down to 29 ms for event 29 and 20 ms for
        // event 30. Over 25 ms: event 10 and events 11..=29.
        assert_eq!(r.corrected.count_between(25_000_000, u64::MAX), 20);
        // Late by more than 1 ms: events 11..=31 (event 32 is sent 1 ms late exactly, event 33
        // on time).
        assert_eq!(r.late, 21);
    }

    #[test]
    fn the_warmup_is_sent_but_not_measured() {
        let s = Schedule {
            warmup_ns: 500_000_000,
            ..schedule(100.0, 1)
        };
        let (r, _) = run(&s, |_| 1_000);
        assert_eq!((r.sent, r.measured), (100, 50));
        assert_eq!(r.corrected.len(), 50);
    }

    #[test]
    fn writers_split_one_schedule() {
        let s = schedule(1000.0, 1);
        let stop = AtomicBool::new(false);
        let mut all = WriterReport::new(1);
        let mut seen = Vec::new();
        for w in 0..3 {
            let r = open_loop(&s, w, 3, &stop, |j| {
                seen.push(j);
                Ok(())
            });
            all.merge(&r);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(all.sent, 1000);
    }

    #[test]
    fn failed_writes_are_counted_and_the_first_error_kept() {
        let s = schedule(10.0, 1);
        let stop = AtomicBool::new(false);
        let r = open_loop(&s, 0, 1, &stop, |j| {
            if j % 2 == 1 {
                Err(format!("refused {j}"))
            } else {
                Ok(())
            }
        });
        assert_eq!((r.sent, r.failed), (5, 5));
        assert_eq!(r.first_error.as_deref(), Some("refused 1"));
    }

    #[test]
    fn a_closed_loop_measures_each_call_and_stops_at_the_end() {
        // 1 s, 100 ms of warmup; each call takes 30 ms: calls start at 0, 30, ..., 990 ms.
        let s = Schedule {
            warmup_ns: 100_000_000,
            ..schedule(1.0, 1)
        };
        let (mut pacer, now) = Script::new();
        let stop = AtomicBool::new(false);
        let r = run_closed_loop(&s, &mut pacer, &stop, |_| {
            now.set(now.get() + 30_000_000);
            Ok::<(), String>(())
        });
        assert_eq!(r.sent, 34);
        // Starts at 120 ms and after are measured: 120..=990, 30 apart.
        assert_eq!(r.measured, 30);
        assert!(r.corrected.equivalent(r.corrected.max(), 30_000_000));
        assert_eq!(r.unsent, 0);
    }

    #[test]
    fn a_stop_counts_the_rest_as_unsent() {
        let s = schedule(10.0, 1);
        let stop = AtomicBool::new(false);
        let r = open_loop(&s, 0, 1, &stop, |j| {
            if j == 3 {
                stop.store(true, Ordering::Relaxed);
            }
            Ok(())
        });
        assert_eq!((r.sent, r.unsent), (4, 6));
    }
}
