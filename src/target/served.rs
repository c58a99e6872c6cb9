//! [`Served`]: a client of edgebench's core-data service started in this process, which
//! empties the store behind the service directly.
//!
//! Every call goes through the service, as it would for any core-data service, except
//! [`EventStore::scrub`]: a run scrubs between benchmarks and rounds, and that is setup, not
//! a measured call. Through the API a scrub is `DELETE /event/age/0`, which on PostgreSQL
//! leaves every deleted row behind as a dead tuple until autovacuum comes; a run scrubs dozens
//! of times in a minute, so each later `COUNT(*)` and list scanned thousands of dead rows, and
//! the `+HTTP` columns measured the store's garbage, not the service (EventCount: 386 µs
//! directly, 1,895 µs through the service, before this). Scrubbing through the store itself
//! (`TRUNCATE` on PostgreSQL) starts both columns from the same empty store.

use std::any::Any;
use std::sync::Arc;

use super::Target;
use crate::edgex::{Event, Reading};
use crate::service::ServiceHandle;
use crate::store::backend::{BackendError, Started, StoreOpener};
use crate::store::edgex::{Behaviour, Doomed, EventStore, Filter, Page};
use crate::store::http::{HttpBase, HttpStore};
use crate::store::{CoreData, StoreResult};

/// edgebench's core-data service, started in this process in front of `inner` (`--via
/// http`): the target's stores are [`Served`] clients of it.
pub(super) struct InProcessService {
    // Fields drop in order: the service stops (gracefully) before its store's target, and
    // the socket's directory goes last.
    _handle: ServiceHandle,
    base: HttpBase,
    inner: Target,
    /// Opens stores on `inner` directly: what [`Served`] scrubs and sizes through.
    direct: StoreOpener,
    _dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for InProcessService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl InProcessService {
    pub(super) fn new(
        handle: ServiceHandle,
        base: HttpBase,
        inner: Target,
        direct: StoreOpener,
        dir: Option<tempfile::TempDir>,
    ) -> InProcessService {
        InProcessService {
            _handle: handle,
            base,
            inner,
            direct,
            _dir: dir,
        }
    }
}

impl Started for InProcessService {
    fn describe(&self) -> String {
        format!(
            "{} (edgebench's core-data service, store {})",
            self.base,
            self.inner.endpoint()
        )
    }

    /// Never called: a service's 2018 calls are the EdgeX store's, through the adapter.
    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        Err(BackendError::Unsuitable(
            "a core-data service keeps EdgeX 3/4 data only".to_string(),
        ))
    }

    /// Clients of the service whose scrub (and size) go to the store directly.
    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        let direct = Arc::clone(&self.direct);
        let base = self.base.clone();
        Ok(Arc::new(move || {
            let client = HttpStore::connect(&base)?;
            Ok(Box::new(Served::new(client, Arc::clone(&direct))) as Box<dyn EventStore>)
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A service client whose scrub goes to the store behind the service.
pub(super) struct Served {
    client: HttpStore,
    /// Opens a direct store on the service's backend, when a scrub needs one.
    direct: StoreOpener,
    /// The direct store that answers [`EventStore::size_bytes`], opened on first use.
    sizer: Option<Box<dyn EventStore>>,
}

impl Served {
    pub(super) fn new(client: HttpStore, direct: StoreOpener) -> Served {
        Served {
            client,
            direct,
            sizer: None,
        }
    }
}

impl EventStore for Served {
    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        self.client.add_event(event)
    }
    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        self.client.event_by_id(id)
    }
    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        self.client.delete_event_by_id(id)
    }
    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        self.client.event_count(filter)
    }
    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        self.client.events(filter, page)
    }
    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        self.client.delete_events(doomed)
    }
    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        self.client.reading_count(filter)
    }
    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        self.client.readings(filter, page)
    }
    /// The store behind the service, scrubbed on a connection of its own.
    fn scrub(&mut self) -> StoreResult<()> {
        (self.direct)()?.scrub()
    }
    fn behaviour(&self) -> Behaviour {
        self.client.behaviour()
    }
    /// The store behind the service, measured on a connection of its own.
    fn size_bytes(&mut self) -> StoreResult<Option<u64>> {
        if self.sizer.is_none() {
            self.sizer = Some((self.direct)()?);
        }
        match &mut self.sizer {
            Some(store) => store.size_bytes(),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::engine::{Engine, EngineConnection};
    use crate::service::{ServiceConfig, ServiceHandle};
    use crate::store::http::HttpBase;
    use crate::store::redis::edgex3::Redis3Store;

    fn engine_opener(engine: &Engine, opened: &Arc<AtomicUsize>) -> StoreOpener {
        let (engine, opened) = (engine.clone(), Arc::clone(opened));
        Arc::new(move || {
            opened.fetch_add(1, Ordering::SeqCst);
            Ok(
                Box::new(Redis3Store::new(EngineConnection::new(engine.clone())))
                    as Box<dyn EventStore>,
            )
        })
    }

    fn event(n: i64) -> Event {
        crate::edgex::testing::event_of("dev", crate::edgex::testing::T0 + n, &["temp"])
    }

    /// Adds and counts go through the service; a scrub opens a direct store on the same engine
    /// (and no request reaches the service's own stores for it), and empties it.
    #[test]
    fn only_scrub_bypasses_the_service() {
        let engine = Engine::new();
        let (served_opens, direct_opens) = (Arc::default(), Arc::default());
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("cd.sock");
        let config = ServiceConfig {
            inline_store_calls: true,
            ..ServiceConfig::default()
        };
        let service = ServiceHandle::start(
            engine_opener(&engine, &served_opens),
            config,
            None,
            Some(path.clone()),
        )
        .expect("service starts");
        let client = HttpStore::connect(&HttpBase::Unix(path)).expect("connects");
        let mut store = Served::new(client, engine_opener(&engine, &direct_opens));

        store.add_event(&event(1)).expect("adds");
        store.add_event(&event(2)).expect("adds");
        assert_eq!(store.event_count(Filter::all()).expect("counts"), 2);
        assert_eq!(direct_opens.load(Ordering::SeqCst), 0);
        let served_before = served_opens.load(Ordering::SeqCst);

        store.scrub().expect("scrubs");
        assert_eq!(direct_opens.load(Ordering::SeqCst), 1);
        assert_eq!(served_opens.load(Ordering::SeqCst), served_before);
        assert_eq!(store.event_count(Filter::all()).expect("counts"), 0);
        service.stop();
    }
}
