//! A core-data service someone else runs (`http://HOST:PORT`, `http+unix:///PATH`) as a
//! target: every call goes through its REST API ([`HttpStore`]); it must answer its ping at
//! start, as a Redis URL must.

use std::any::Any;
use std::sync::Arc;

use super::{HttpBase, HttpStore};
use crate::store::backend::{BackendError, Started, StoreOpener};
use crate::store::edgex::EventStore;
use crate::store::CoreData;

/// Someone else's core-data service.
#[derive(Debug)]
pub struct ServiceTarget {
    base: HttpBase,
}

impl ServiceTarget {
    /// Checks the service answers its ping.
    pub fn connect(base: &HttpBase) -> Result<ServiceTarget, BackendError> {
        HttpStore::connect(base).map_err(|e| BackendError::Connect {
            endpoint: base.to_string(),
            reason: e.to_string(),
        })?;
        Ok(ServiceTarget { base: base.clone() })
    }
}

impl Started for ServiceTarget {
    fn describe(&self) -> String {
        self.base.to_string()
    }

    /// Never called: a service's 2018 calls are the EdgeX store's, through the adapter.
    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        Err(BackendError::Unsuitable(
            "a core-data service keeps EdgeX 3/4 data only".to_string(),
        ))
    }

    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        let base = self.base.clone();
        Ok(Arc::new(move || {
            HttpStore::connect(&base).map(|s| Box::new(s) as Box<dyn EventStore>)
        }))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
