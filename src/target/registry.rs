//! The one place a kind of target is started: each arm hands the item's parsed form to its
//! backend's folder under `store/`, which starts it and returns a
//! [`Started`](crate::store::backend::Started). A new backend adds its arm here (and its
//! item forms in `spec`).

use super::spec::{TargetKind, TargetSpec};
use super::Layout;
use crate::store::backend::{BackendError, Started};
use crate::store::engine::backend::{self as engine, EngineTarget};
use crate::store::http::backend::ServiceTarget;
use crate::store::mongo::backend as mongo;
use crate::store::postgres::backend as postgres;
use crate::store::redis::backend::{ClusterTarget, RedisTarget};
use crate::store::redis::spawn::Listen;
use crate::store::sqlite::backend as sqlite;

/// Starts the backend of `spec` (its kind, the layout a database is made in, its server
/// options and `--wait`).
pub(super) fn start(spec: &TargetSpec) -> Result<Box<dyn Started>, BackendError> {
    let wait = spec.wait;
    let edgex4 = spec.layout == Layout::EdgeX4;
    Ok(match &spec.kind {
        TargetKind::SpawnRedisTcp => Box::new(RedisTarget::spawn(Listen::Tcp, &spec.server, wait)?),
        TargetKind::SpawnRedisUds => {
            Box::new(RedisTarget::spawn(Listen::Unix, &spec.server, wait)?)
        }
        TargetKind::Redis(endpoint) => Box::new(RedisTarget::at_url(endpoint.clone(), wait)?),
        TargetKind::SpawnCluster(shape) => Box::new(ClusterTarget::spawn(
            *shape,
            &spec.server.persistence_args(),
            wait,
        )?),
        TargetKind::Cluster(nodes) => Box::new(ClusterTarget::at(nodes, wait)?),
        TargetKind::MiniRedis => no_wait(wait)
            .and_then(|()| RedisTarget::mini_redis())
            .map(Box::new)?,
        TargetKind::Embedded => Box::new(EngineTarget::start(false, wait)?),
        TargetKind::EmbeddedDirect => Box::new(EngineTarget::start(true, wait)?),
        TargetKind::EmbeddedTcp => Box::new(engine::serve(Listen::Tcp.into(), wait)?),
        TargetKind::EmbeddedUds => Box::new(engine::serve(Listen::Unix.into(), wait)?),
        TargetKind::Sqlite(at) => {
            no_wait(wait)?;
            Box::new(sqlite::start(at, edgex4)?)
        }
        TargetKind::Postgres(at) => {
            no_wait(wait)?;
            Box::new(postgres::start(at, edgex4)?)
        }
        TargetKind::Mongo {
            url,
            layout,
            fidelity,
        } => {
            no_wait(wait)?;
            Box::new(mongo::start(url, *layout, *fidelity, edgex4)?)
        }
        TargetKind::Service(base) => {
            no_wait(wait)?;
            Box::new(ServiceTarget::connect(base)?)
        }
    })
}

/// `--wait` on a target that is no Redis server with replicas.
fn no_wait(wait: u32) -> Result<(), BackendError> {
    match wait {
        0 => Ok(()),
        n => Err(BackendError::Unsuitable(format!(
            "--wait {n} needs a Redis server with replicas: use redis-tcp?replicas={n}, a \
             redis:// URL of a primary with replicas, or drop --wait"
        ))),
    }
}
