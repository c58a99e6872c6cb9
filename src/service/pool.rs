//! The stores behind a service: a pool of idle stores (one store is one client, used by one
//! thread at a time, as [`EventStore`] requires).
//!
//! A request takes an idle store or, when none is idle, opens one with the opener; its store
//! calls run on tokio's blocking pool (the trait is synchronous); then the store goes back to
//! the pool. A store whose call failed with [`StoreError::Backend`] (a lost connection, a
//! server error) is dropped instead, so the next request opens a fresh one. Stores are only
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
}

impl StorePool {
    /// An empty pool; stores are opened on first use.
    pub fn new(opener: StoreOpener) -> Arc<StorePool> {
        Arc::new(StorePool {
            idle: Mutex::new(Vec::new()),
            opener,
        })
    }

    /// Runs `call` on a store, on the blocking pool.
    pub async fn run<T, F>(self: &Arc<Self>, call: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn EventStore) -> StoreResult<T> + Send + 'static,
    {
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let mut store = match pool.take() {
                Some(store) => store,
                None => (pool.opener)()?,
            };
            let result = call(store.as_mut());
            if !matches!(result, Err(StoreError::Backend { .. })) {
                pool.put(store);
            }
            result
        })
        .await
        .unwrap_or_else(|e| {
            // A store call that panicked: its store is gone with the task, the service stays.
            Err(StoreError::Backend {
                backend: "core-data service",
                message: format!("store call failed: {e}"),
            })
        })
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
