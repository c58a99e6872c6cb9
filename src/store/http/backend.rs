//! A core-data service someone else runs (`http://HOST:PORT`, `http+unix:///PATH`) as a
//! target: every call goes through its REST API ([`HttpStore`]); it must answer its ping at
//! start, as a Redis URL must.

use std::any::Any;
use std::sync::Arc;

use super::{HttpBase, HttpStore};
use crate::store::backend::{
    no_wait, Backend, BackendError, Kind, ParseError, Started, StoreOpener,
};
use crate::store::edgex::EventStore;
use crate::store::layout::Layout;
use crate::store::CoreData;

/// The service's `--target` items: `http://HOST:PORT`, `https://HOST:PORT`, `http+unix:///PATH`.
pub struct ServiceBackend;

/// A core-data service at its address (columns `EdgeX_HTTP_TCP`, `EdgeX_HTTP_UDS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceKind(pub HttpBase);

impl Backend for ServiceBackend {
    fn forms(&self) -> &'static str {
        "http://HOST:PORT, https://HOST:PORT[?cacert=FILE], http+unix:///PATH"
    }

    fn urls(&self) -> &'static str {
        "http://HOST:PORT"
    }

    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>> {
        let (scheme, _) = what.split_once("://")?;
        if !["http", "https", "http+unix"]
            .iter()
            .any(|s| scheme.eq_ignore_ascii_case(s))
        {
            return None;
        }
        Some(
            HttpBase::parse(what)
                .map(|base| Arc::new(ServiceKind(base)) as Arc<dyn Kind>)
                .map_err(ParseError::BadUrl),
        )
    }
}

impl Kind for ServiceKind {
    fn column(&self) -> String {
        match self.0 {
            HttpBase::Tcp { .. } => "EdgeX_HTTP_TCP",
            HttpBase::Https { .. } => "EdgeX_HTTP_TCP+TLS",
            HttpBase::Unix(_) => "EdgeX_HTTP_UDS",
        }
        .to_string()
    }

    /// None of its own: it keeps whatever layout the store behind it has.
    fn layouts(&self) -> &'static [Layout] {
        &[]
    }

    fn is_service(&self) -> bool {
        true
    }

    fn is_external(&self) -> bool {
        true
    }

    fn start(&self, _layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        no_wait(wait)?;
        Ok(Box::new(ServiceTarget::connect(&self.0)?))
    }
}

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
