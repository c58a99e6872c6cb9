//! The busy-script gate: what every other command checks before it takes a lock while a
//! script runs.
//!
//! Redis runs one script at a time and nothing else meanwhile; once the script has run longer
//! than `busy-reply-threshold`, it answers other clients `-BUSY` (except the few commands
//! flagged `allow-busy`, such as SCRIPT KILL) between the script's instructions. Here a script
//! holds every shard of its database, so a command that simply locked would sit on a mutex
//! for as long as the script runs and never see the BUSY reply. Instead [`Gate::state`] says
//! whether a script runs: every command reads it once (one relaxed load, the whole per-command
//! cost) and only when it is not [`IDLE`] takes the slow path: wait while the script is young,
//! answer BUSY once it is old.
//!
//! The script's own `redis.call`s never pass the gate (they run on the locks the script holds),
//! so the gate cannot make a script wait for itself.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// No script runs.
pub const IDLE: u8 = 0;
/// A script runs and is still within `busy-reply-threshold`: other commands wait.
pub const RUNNING: u8 = 1;
/// A script runs past `busy-reply-threshold`: other commands get BUSY.
pub const BUSY: u8 = 2;

/// Redis's BUSY reply while an EVAL script runs.
pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// Redis's BUSY reply while a function (FCALL) runs.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// How long a waiting command sleeps before it looks at the state again, in case a wake-up
/// was missed (the state is also signalled on every change).
const RECHECK: Duration = Duration::from_millis(20);

/// The running script's state, shared by the script's thread and every other caller.
#[derive(Debug, Default)]
pub struct Gate {
    /// [`IDLE`], [`RUNNING`] or [`BUSY`].
    pub state: AtomicU8,
    /// The running script is a function (FCALL), not EVAL: picks the BUSY text and which KILL
    /// applies.
    pub function: AtomicBool,
    /// The running script has run a write command: it cannot be killed.
    pub wrote: AtomicBool,
    /// SCRIPT KILL or FUNCTION KILL asked the running script to stop.
    pub kill: AtomicBool,
    changed: Mutex<()>,
    signal: Condvar,
}

/// What the gate says to a command that arrives while a script runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Pass {
    /// Run it.
    Go,
    /// Reply with this BUSY error.
    Busy(&'static str),
}

impl Gate {
    /// Whether a script runs: the per-command check (one relaxed load).
    #[inline]
    pub fn quiet(&self) -> bool {
        self.state.load(Ordering::Relaxed) == IDLE
    }

    /// The slow path: waits while a young script runs; once it is busy, lets `allow_busy`
    /// commands through and turns the others away.
    pub fn wait(&self, allow_busy: bool) -> Pass {
        loop {
            match self.state.load(Ordering::Acquire) {
                IDLE => return Pass::Go,
                BUSY if allow_busy => return Pass::Go,
                BUSY => return Pass::Busy(self.busy_text()),
                _ => {
                    let guard = self.changed.lock().unwrap_or_else(PoisonError::into_inner);
                    if self.state.load(Ordering::Acquire) == RUNNING {
                        let _ = self.signal.wait_timeout(guard, RECHECK);
                    }
                }
            }
        }
    }

    /// The BUSY reply for the script running now.
    pub fn busy_text(&self) -> &'static str {
        if self.function.load(Ordering::Relaxed) {
            BUSY_FUNCTION
        } else {
            BUSY_EVAL
        }
    }

    /// A script starts (its caller holds the VM).
    pub fn enter(&self, function: bool) {
        self.function.store(function, Ordering::Relaxed);
        self.wrote.store(false, Ordering::Relaxed);
        self.kill.store(false, Ordering::Relaxed);
        self.set(RUNNING);
    }

    /// The script ran past the threshold.
    pub fn timed_out(&self) {
        if self.state.load(Ordering::Relaxed) == RUNNING {
            self.set(BUSY);
        }
    }

    /// The script ended.
    pub fn leave(&self) {
        self.kill.store(false, Ordering::Relaxed);
        self.set(IDLE);
    }

    fn set(&self, state: u8) {
        let _guard = self.changed.lock().unwrap_or_else(PoisonError::into_inner);
        self.state.store(state, Ordering::Release);
        self.signal.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_turns_away_all_but_allowed_commands() {
        let gate = Gate::default();
        assert_eq!(gate.wait(false), Pass::Go);
        gate.enter(false);
        gate.timed_out();
        assert_eq!(gate.wait(false), Pass::Busy(BUSY_EVAL));
        assert_eq!(gate.wait(true), Pass::Go);
        gate.leave();
        assert!(gate.quiet());
        gate.enter(true);
        gate.timed_out();
        assert_eq!(gate.wait(false), Pass::Busy(BUSY_FUNCTION));
    }
}
