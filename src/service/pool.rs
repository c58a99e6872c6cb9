//! The stores behind a service: a pool of idle stores (one store is one client, used by one
//! thread at a time, as [`EventStore`] requires).
//!
//! A request takes an idle store or, when none is idle, opens one with the opener, calls it,
//! and puts it back. The trait is synchronous, so where the call runs matters:
//! - an in-process store (the engine, `inline`) is called right on the request's task: it
//!   answers from memory in about a microsecond, less than any hand-off;
//! - on a multi-threaded runtime (what the service runs on), any other store is called inside
//!   `block_in_place`: the worker turns into a blocking thread for the call and hands its other
//!   tasks to another worker. Measured against tokio's blocking pool (`spawn_blocking`, a hop
//!   to another thread and back), it saves 30 to 45 µs per request on this 2-core machine
//!   (EventCount behind the service over a Unix socket: Redis 106–126 → 74–80 µs, PostgreSQL
//!   591–652 → 430–438 µs; docs/PERFORMANCE.md);
//! - on a current-thread runtime, where `block_in_place` is not allowed, the blocking pool.
//!
//! A store whose call failed with [`StoreError::Backend`] (a lost connection, a server error)
//! is dropped instead, so the next request opens a fresh one. Stores are only
//! opened when every other store is busy, so the pool never holds more stores than the
//! concurrency the service actually reached.
//!
//! Why not a pool crate (deadpool, r2d2): they bound the pool size up front and add their own
//! async wait queue; here the number of stores should follow the load, and the opener is a
//! plain blocking closure, which is a `Mutex<Vec<_>>` and fifteen lines.

use std::sync::{Arc, Mutex, PoisonError};

use super::StoreOpener;
use crate::store::edgex::EventStore;
use crate::store::{StoreError, StoreResult};

/// Idle stores and the way to open more.
pub struct StorePool {
    idle: Mutex<Vec<Box<dyn EventStore>>>,
    opener: StoreOpener,
    /// Run calls on the caller's task ([`super::ServiceConfig::inline_store_calls`]).
    inline: bool,
}

impl StorePool {
    /// An empty pool; stores are opened on first use. `inline`: calls run on the caller's
    /// task, not on the blocking pool.
    pub fn new(opener: StoreOpener, inline: bool) -> Arc<StorePool> {
        Arc::new(StorePool {
            idle: Mutex::new(Vec::new()),
            opener,
            inline,
        })
    }

    /// Runs `call` on a store: on the blocking pool, or right here for an in-process store.
    pub async fn run<T, F>(self: &Arc<Self>, call: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn EventStore) -> StoreResult<T> + Send + 'static,
    {
        let pool = Arc::clone(self);
        let multi_threaded = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::MultiThread;
        if !self.inline && !multi_threaded {
            return tokio::task::spawn_blocking(move || pool.call(call))
                .await
                // A store call that panicked: its store is gone with the task, the service
                // stays.
                .unwrap_or_else(|e| Err(panicked(&e.to_string())));
        }
        let inline = self.inline;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            if inline {
                pool.call(call)
            } else {
                // The worker becomes a blocking thread for the call and hands its other tasks
                // to another: no hop to the blocking pool and back.
                tokio::task::block_in_place(|| pool.call(call))
            }
        }))
        .unwrap_or_else(|_| Err(panicked("the store call panicked")))
    }

    /// Takes (or opens) a store, calls, and gives the store back unless the call failed with
    /// a backend error.
    fn call<T>(&self, call: impl FnOnce(&mut dyn EventStore) -> StoreResult<T>) -> StoreResult<T> {
        let mut store = match self.take() {
            Some(store) => store,
            None => (self.opener)()?,
        };
        let result = call(store.as_mut());
        if !matches!(result, Err(StoreError::Backend { .. })) {
            self.put(store);
        }
        result
    }

    /// How many stores are idle.
    pub fn idle(&self) -> usize {
        self.lock().len()
    }

    fn take(&self) -> Option<Box<dyn EventStore>> {
        self.lock().pop()
    }

    fn put(&self, store: Box<dyn EventStore>) {
        self.lock().push(store);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn EventStore>>> {
        // A panic while holding the lock leaves a valid Vec: keep using it.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The error of a store call that panicked.
fn panicked(why: &str) -> StoreError {
    StoreError::Backend {
        backend: "core-data service",
        message: format!("store call failed: {why}"),
    }
}

impl Drop for StorePool {
    /// Closes the idle stores on a plain thread when the pool goes inside an async context (the
    /// service's last request, or its shutdown): a blocking client's `Drop` may itself
    /// `block_on` (the `postgres` crate's does), which panics on a runtime thread. The thread is
    /// joined, so every store is closed when this returns, before its database goes.
    fn drop(&mut self) {
        let stores = std::mem::take(&mut *self.lock());
        if stores.is_empty() {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            drop(stores);
            return;
        }
        let closing = std::thread::Builder::new()
            .name("core-data-close".to_string())
            .spawn(move || drop(stores));
        // Spawning fails only when no thread can be made; the stores were moved into the
        // failed closure and are gone with it either way.
        if let Ok(thread) = closing {
            let _ = thread.join();
        }
    }
}
