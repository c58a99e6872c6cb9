//! The embedded engine as a target: in this process, through its typed API
//! (`embedded-direct`: [`EngineStore`]) or through redis-rs (`embedded`: the Redis stores on
//! an [`EngineConnection`], no RESP), or served over RESP by edgebench's own server on
//! loopback TCP or a Unix socket (`embedded-tcp`, `embedded-uds`: a
//! [`crate::store::redis::backend::RedisTarget`] like any Redis server).

use std::any::Any;
use std::sync::Arc;

use super::EngineStore;
use crate::engine::{Engine, EngineConnection};
use crate::server::Bind;
use crate::store::backend::{
    Backend, BackendError, Kind, ParseError, RedisProtocol, Started, StoreOpener,
};
use crate::store::edgex::EventStore;
use crate::store::layout::Layout;
use crate::store::redis::backend::{in_process_wait, RedisTarget};
use crate::store::redis::edgex3::Redis3Store;
use crate::store::redis::spawn::Listen;
use crate::store::redis::RedisStore;
use crate::store::CoreData;
use crate::transport::{Connector, RedisReach};

/// The engine's `--target` items: `embedded`, `embedded-direct`, `embedded-tcp`,
/// `embedded-uds`, each also in a run without `--target`.
pub struct EngineBackend;

/// One of the engine's four ways in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// `embedded`: through its redis-rs connection, no socket (`RedisDB_Embedded`, the 2018
    /// eredis column's name).
    Embedded,
    /// `embedded-direct`: its typed API, called by its own store.
    Direct,
    /// `embedded-tcp`: served over loopback TCP by edgebench's RESP server, in this process.
    Tcp,
    /// `embedded-uds`: served over a Unix socket by edgebench's RESP server, in this process.
    Uds,
}

impl Backend for EngineBackend {
    fn forms(&self) -> &'static str {
        "embedded, embedded-direct, embedded-tcp, embedded-uds"
    }

    fn parse(&self, what: &str) -> Option<Result<Arc<dyn Kind>, ParseError>> {
        let kind = match what {
            "embedded" => EngineKind::Embedded,
            "embedded-direct" => EngineKind::Direct,
            "embedded-tcp" => EngineKind::Tcp,
            "embedded-uds" => EngineKind::Uds,
            _ => return None,
        };
        Some(Ok(Arc::new(kind)))
    }

    fn defaults(&self, _notes: &mut Vec<String>) -> Vec<Arc<dyn Kind>> {
        [
            EngineKind::Direct,
            EngineKind::Embedded,
            EngineKind::Tcp,
            EngineKind::Uds,
        ]
        .into_iter()
        .map(|k| Arc::new(k) as Arc<dyn Kind>)
        .collect()
    }
}

impl Kind for EngineKind {
    fn column(&self) -> String {
        match self {
            EngineKind::Embedded => "RedisDB_Embedded",
            EngineKind::Direct => "Embedded_Direct",
            EngineKind::Tcp => "Embedded_TCP",
            EngineKind::Uds => "Embedded_UDS",
        }
        .to_string()
    }

    fn layouts(&self) -> &'static [Layout] {
        match self {
            EngineKind::Direct => &[Layout::Y2018],
            _ => &[Layout::Y2018, Layout::EdgeX3],
        }
    }

    fn no_edgex_layout(&self) -> Option<&'static str> {
        (*self == EngineKind::Direct).then_some(
            "embedded-direct is the engine's typed API, which has the 2018 layout only, so it has \
             no EdgeX layout to run or serve: use --target embedded, the same engine through \
             redis-rs, which has EdgeX 3.1's (edgex3)",
        )
    }

    fn memory_only(&self) -> bool {
        true
    }

    fn fds_per_connection(&self) -> u8 {
        match self {
            EngineKind::Embedded | EngineKind::Direct => 0,
            EngineKind::Tcp | EngineKind::Uds => 2,
        }
    }

    fn with_options(&self, _query: &str) -> Result<(Arc<dyn Kind>, u32), String> {
        Err(
            "the in-process engine has no persistence or replicas (out of scope for it): use \
             redis-tcp?… or redis-uds?… for these options"
                .to_string(),
        )
    }

    fn start(&self, _layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        Ok(match self {
            EngineKind::Embedded => Box::new(EngineTarget::start(false, wait)?),
            EngineKind::Direct => Box::new(EngineTarget::start(true, wait)?),
            EngineKind::Tcp => Box::new(serve(Listen::Tcp.into(), wait)?),
            EngineKind::Uds => Box::new(serve(Listen::Unix.into(), wait)?),
        })
    }
}

/// The engine in this process; `direct` picks its typed API over its redis-rs connection.
#[derive(Debug)]
pub struct EngineTarget {
    engine: Engine,
    direct: bool,
}

impl EngineTarget {
    /// A fresh engine, reached through its typed API (`direct`) or redis-rs.
    pub fn start(direct: bool, wait: u32) -> Result<EngineTarget, BackendError> {
        if wait > 0 {
            return Err(BackendError::Unsuitable(in_process_wait(wait)));
        }
        Ok(EngineTarget {
            engine: Engine::new(),
            direct,
        })
    }
}

/// A fresh engine behind edgebench's RESP server, on a free loopback port or a Unix socket
/// in a temporary directory.
pub fn serve(bind: Bind, wait: u32) -> Result<RedisTarget, BackendError> {
    if wait > 0 {
        return Err(BackendError::Unsuitable(in_process_wait(wait)));
    }
    let handle = crate::server::spawn_in_background(bind, Engine::new()).map_err(|e| {
        BackendError::Connect {
            endpoint: "in-process RESP server".to_string(),
            reason: format!("cannot start it: {e}"),
        }
    })?;
    Ok(RedisTarget::served(handle))
}

impl Started for EngineTarget {
    fn describe(&self) -> String {
        match self.direct {
            false => "in-process (redis-rs connection)".into(),
            true => "in-process (typed API)".into(),
        }
    }

    fn open_2018(&self) -> Result<Box<dyn CoreData>, BackendError> {
        Ok(match self.direct {
            false => Box::new(RedisStore::new(EngineConnection::new(self.engine.clone()))),
            true => Box::new(EngineStore::new(self.engine.clone(), 0)),
        })
    }

    fn event_store_opener(&self) -> Result<StoreOpener, BackendError> {
        let engine = self.engine.clone();
        Ok(Arc::new(move || {
            Ok(
                Box::new(Redis3Store::new(EngineConnection::new(engine.clone())))
                    as Box<dyn EventStore>,
            )
        }))
    }

    fn in_process(&self) -> bool {
        true
    }

    fn redis(&self) -> Option<&dyn RedisProtocol> {
        Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl RedisProtocol for EngineTarget {
    fn reach(&self) -> RedisReach {
        RedisReach::InProcess(self.engine.clone())
    }

    fn connector(&self) -> Result<Box<Connector>, BackendError> {
        let engine = self.engine.clone();
        Ok(Box::new(move || {
            Ok(Box::new(EngineConnection::new(engine.clone()))
                as Box<dyn redis::ConnectionLike + Send>)
        }))
    }
}
