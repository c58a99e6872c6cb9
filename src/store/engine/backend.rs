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
use crate::store::backend::{BackendError, RedisProtocol, Started, StoreOpener};
use crate::store::edgex::EventStore;
use crate::store::redis::backend::{in_process_wait, RedisTarget};
use crate::store::redis::edgex3::Redis3Store;
use crate::store::redis::RedisStore;
use crate::store::CoreData;
use crate::transport::{Connector, RedisReach};

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
