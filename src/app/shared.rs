//! What every command shares: how it ended ([`Ending`]), why it could not run ([`Error`]),
//! the Ctrl-C flag ([`Interrupts`]), and where its results go ([`fresh_run_dir`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Exit status after Ctrl-C, as shells report a SIGINT death (128 + 2).
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit status of a usage error (bad flag, value or file), as clap exits on its own errors.
pub const EXIT_USAGE: u8 = 2;

/// How a command that ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Everything it set out to do finished.
    Finished,
    /// It ran, but part of it failed (a target could not start, a run ended early); what
    /// finished is kept and the reason was printed.
    PartlyFailed,
    /// Ctrl-C (or SIGTERM, SIGHUP) stopped it; what finished is kept.
    Interrupted,
}

impl Ending {
    /// The process exit status: 0, 1, or 130 as shells report a SIGINT death.
    pub fn exit_code(self) -> u8 {
        match self {
            Ending::Finished => 0,
            Ending::PartlyFailed => 1,
            Ending::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

/// Why a command could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag, file or key the user gave is wrong; the message names it and the fix.
    #[error("{0}")]
    Usage(String),
    /// Something failed while running.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

impl Error {
    /// The process exit status: 2 for usage errors, 1 for failures.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Failed(_) => 1,
        }
    }

    /// A usage error from anything that displays.
    pub fn usage(e: impl std::fmt::Display) -> Error {
        Error::Usage(e.to_string())
    }
}

/// What the binary hands every command: the flag the first Ctrl-C raises, and how to start
/// watching for it. A command calls [`Interrupts::watch`] once its configuration is valid, so
/// a usage error never installs a handler (and `report benchtomd -` reading a terminal stays
/// killable by Ctrl-C).
pub struct Interrupts<'a> {
    /// Raised by the first Ctrl-C, SIGTERM or SIGHUP.
    pub flag: Arc<AtomicBool>,
    /// Installs the handler that raises `flag`.
    pub install: &'a dyn Fn(Arc<AtomicBool>) -> anyhow::Result<()>,
}

impl Interrupts<'_> {
    /// Installs the handler and returns the flag it raises.
    pub fn watch(&self) -> Result<Arc<AtomicBool>, Error> {
        (self.install)(self.flag.clone())?;
        Ok(self.flag.clone())
    }
}

/// `results/<UTC timestamp>-<workload>`, with `-2`, `-3`… if that exists already.
pub fn fresh_run_dir(root: &Path, workload: &str) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let base = root.join(format!("{stamp}-{workload}"));
    let mut dir = base.clone();
    let mut k = 2;
    while dir.exists() {
        dir = PathBuf::from(format!("{}-{k}", base.display()));
        k += 1;
    }
    dir
}

/// Resolves at Ctrl-C or SIGTERM: the shutdown future of the commands that serve (`serve`,
/// `coredata-service`), which then stop accepting and let what is in flight finish.
pub async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(t) => { t.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}
