//! The embedded engine as a target: in this process, through its typed API
//! (`embedded-direct`: [`EngineStore`]) or through redis-rs (`embedded`: the Redis stores on
//! an [`EngineConnection`], no RESP), or served over RESP by edgebench's own server on
//! loopback TCP or a Unix socket (`embedded-tcp`, `embedded-uds`: a
//! [`crate::store::redis::backend::RedisTarget`] like any Redis server).

use std::any::Any;
use std::sync::Arc;

use super::ycsb::EngineYcsb;
use super::EngineStore;
use crate::engine::{Engine, EngineConnection};
use crate::server::tls::{AuthClients, TlsSettings};
use crate::server::Bind;
use crate::store::backend::{
    Backend, BackendError, Kind, ParseError, RedisProtocol, Started, StoreOpener,
};
use crate::store::edgex::EventStore;
use crate::store::layout::Layout;
use crate::store::redis::backend::{in_process_wait, RedisTarget};
use crate::store::redis::edgex3::Redis3Store;
use crate::store::redis::options;
use crate::store::redis::spawn::{Listen, ServerOptions};
use crate::store::redis::RedisStore;
use crate::store::ycsb::{Binding, Setup, YcsbOpener, YcsbStore};
use crate::store::CoreData;
use crate::transport::certs::PrivateCa;
use crate::transport::{Access, Connector, RedisReach, ServerSecurity, TlsOptions};

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
        let way = match what {
            "embedded" => EngineKind::Embedded,
            "embedded-direct" => EngineKind::Direct,
            "embedded-tcp" => EngineKind::Tcp,
            "embedded-uds" => EngineKind::Uds,
            _ => return None,
        };
        Some(Ok(Arc::new(EngineItem::new(way))))
    }

    fn defaults(&self, _notes: &mut Vec<String>) -> Vec<Arc<dyn Kind>> {
        [
            EngineKind::Direct,
            EngineKind::Embedded,
            EngineKind::Tcp,
            EngineKind::Uds,
        ]
        .into_iter()
        .map(|k| Arc::new(EngineItem::new(k)) as Arc<dyn Kind>)
        .collect()
    }
}

/// One engine target: the way in, and how the engine persists (`embedded?appendonly=yes…`:
/// the options spawned Redis targets take, so the two compare under the same durability).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineItem {
    way: EngineKind,
    persistence: ServerOptions,
    /// `tls=yes`, `user=`, `password=`: served over TLS, with an ACL user (the served ways).
    security: ServerSecurity,
}

impl EngineItem {
    fn new(way: EngineKind) -> EngineItem {
        EngineItem {
            way,
            persistence: ServerOptions::default(),
            security: ServerSecurity::default(),
        }
    }
}

impl Kind for EngineItem {
    fn column(&self) -> String {
        match self.way {
            EngineKind::Embedded => "RedisDB_Embedded",
            EngineKind::Direct => "Embedded_Direct",
            EngineKind::Tcp => "Embedded_TCP",
            EngineKind::Uds => "Embedded_UDS",
        }
        .to_string()
            + &self.security.column_suffix()
    }

    fn layouts(&self) -> &'static [Layout] {
        match self.way {
            EngineKind::Direct => &[Layout::Y2018],
            _ => &[Layout::Y2018, Layout::EdgeX3],
        }
    }

    fn no_edgex_layout(&self) -> Option<&'static str> {
        (self.way == EngineKind::Direct).then_some(
            "embedded-direct is the engine's typed API, which has the 2018 layout only, so it has \
             no EdgeX layout to run or serve: use --target embedded, the same engine through \
             redis-rs, which has EdgeX 3.1's (edgex3)",
        )
    }

    fn memory_only(&self) -> bool {
        self.persistence.is_default()
    }

    fn ycsb_bindings(&self) -> &'static [Binding] {
        crate::store::redis::ycsb::BINDINGS
    }

    fn configures_server(&self) -> bool {
        !self.persistence.is_default()
    }

    fn fds_per_connection(&self) -> u8 {
        match self.way {
            EngineKind::Embedded | EngineKind::Direct => 0,
            EngineKind::Tcp | EngineKind::Uds => 2,
        }
    }

    fn with_options(&self, query: &str) -> Result<(Arc<dyn Kind>, u32), String> {
        let parsed = options::parse(query, false)?;
        if parsed.server.replicas > 0 || parsed.wait > 0 {
            return Err(
                "the in-process engine has no replicas (out of scope for it): drop replicas= \
                 and wait=, or use redis-tcp?… or redis-uds?… for them"
                    .to_string(),
            );
        }
        match (self.way, &parsed.security) {
            (EngineKind::Uds, ServerSecurity { tls: true, .. }) => {
                return Err(
                    "TLS is spoken on TCP only (the Unix socket stays plain, as \
                     redis-server's): use embedded-tcp?tls=yes"
                        .to_string(),
                )
            }
            (EngineKind::Embedded | EngineKind::Direct, security) if !security.is_plain() => {
                return Err(
                    "tls= and user= are for a connection, and the in-process engine \
                     has none: use embedded-tcp?tls=yes&user=NAME&password=PW"
                        .to_string(),
                )
            }
            _ => {}
        }
        let item = EngineItem {
            way: self.way,
            persistence: parsed.server,
            security: parsed.security,
        };
        Ok((Arc::new(item), 0))
    }

    fn start(&self, _layout: Layout, wait: u32) -> Result<Box<dyn Started>, BackendError> {
        if wait > 0 {
            return Err(BackendError::Unsuitable(in_process_wait(wait)));
        }
        let (engine, files) = persisting_engine(&self.persistence)?;
        let note = (!self.persistence.is_default()).then(|| self.persistence.to_string());
        Ok(match self.way {
            EngineKind::Embedded | EngineKind::Direct => Box::new(EngineTarget {
                engine,
                direct: self.way == EngineKind::Direct,
                persistence: note,
                _files: files,
            }),
            EngineKind::Tcp => Box::new(serve_secured(
                Listen::Tcp.into(),
                engine,
                note,
                files,
                &self.security,
            )?),
            EngineKind::Uds => Box::new(serve_secured(
                Listen::Unix.into(),
                engine,
                note,
                files,
                &self.security,
            )?),
        })
    }
}

/// A fresh engine persisting as `options` say, into a private temporary directory (as a
/// spawned redis-server's files are), which the caller keeps while the engine runs.
fn persisting_engine(
    options: &ServerOptions,
) -> Result<(Engine, Option<tempfile::TempDir>), BackendError> {
    let engine = Engine::new();
    if options.is_default() {
        return Ok((engine, None));
    }
    let failed = |reason: String| BackendError::Connect {
        endpoint: "in-process engine".to_string(),
        reason,
    };
    let dir = tempfile::Builder::new()
        .prefix("edgebench-engine-")
        .tempdir()
        .map_err(|e| failed(format!("cannot make its data directory: {e}")))?;
    let save = options
        .save
        .iter()
        .map(|p| format!("{} {}", p.seconds, p.changes))
        .collect::<Vec<_>>()
        .join(" ");
    let settings = [
        ("dir", dir.path().to_string_lossy().into_owned()),
        ("save", save),
        (
            "appendonly",
            if options.appendonly { "yes" } else { "no" }.to_string(),
        ),
        ("appendfsync", options.appendfsync.as_str().to_string()),
    ];
    for (name, value) in settings {
        engine
            .configure(name, &value)
            .map_err(|e| failed(format!("CONFIG {name} {value:?}: {e}")))?;
    }
    engine
        .load_from_disk()
        .map_err(|e| failed(format!("cannot open its files: {e}")))?;
    Ok((engine, Some(dir)))
}

/// The engine in this process; `direct` picks its typed API over its redis-rs connection.
#[derive(Debug)]
pub struct EngineTarget {
    engine: Engine,
    direct: bool,
    /// Its persistence, as the run header shows it (`None`: none).
    persistence: Option<String>,
    /// Its files' private directory, removed with the target.
    _files: Option<tempfile::TempDir>,
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
            persistence: None,
            _files: None,
        })
    }
}

/// A fresh engine behind edgebench's RESP server, on a free loopback port or a Unix socket
/// in a temporary directory.
pub fn serve(bind: Bind, wait: u32) -> Result<RedisTarget, BackendError> {
    if wait > 0 {
        return Err(BackendError::Unsuitable(in_process_wait(wait)));
    }
    serve_engine(bind, Engine::new(), None, None)
}

/// `engine` behind edgebench's RESP server as `security` says: its users defined as a spawned
/// redis-server's (the `default` user with the same password, without the dangerous
/// commands, as EdgeX's secure mode has it), and with `tls` on a TLS listener whose
/// certificates a private CA made for it, in a directory kept with the target.
fn serve_secured(
    bind: Bind,
    engine: Engine,
    persistence: Option<String>,
    files: Option<tempfile::TempDir>,
    security: &ServerSecurity,
) -> Result<RedisTarget, BackendError> {
    if security.is_plain() {
        return serve_engine(bind, engine, persistence, files);
    }
    let failed = |reason: String| BackendError::Connect {
        endpoint: "in-process RESP server".to_string(),
        reason,
    };
    let mut access = Access::default();
    if let Some(user) = &security.user {
        let name = user.user.as_deref().unwrap_or("default");
        let password = &user.password;
        for line in [
            format!("default on allkeys allchannels +@all -@dangerous >{password}"),
            format!("{name} on allkeys allchannels +@all >{password}"),
        ] {
            engine
                .acl_define_user(&line)
                .map_err(|e| failed(format!("cannot define its users: {e}")))?;
        }
        access.credentials = Some(user.clone());
    }
    // The certificates go into the engine's data directory when it has one, else into a
    // directory of their own; either goes with the target.
    let mut files = files;
    let bind = match (bind, security.tls) {
        (Bind::Tcp(addr), true) => {
            let dir = match &files {
                Some(data) => data.path().join("tls"),
                None => {
                    let own = tempfile::Builder::new()
                        .prefix("edgebench-tls-")
                        .tempdir()
                        .map_err(|e| {
                            failed(format!("cannot make a directory for its certificates: {e}"))
                        })?;
                    let path = own.path().to_path_buf();
                    files = Some(own);
                    path
                }
            };
            let made = std::fs::create_dir_all(&dir)
                .and_then(|()| PrivateCa::new())
                .and_then(|ca| ca.write_files(&dir))
                .map_err(|e| failed(format!("cannot make its certificates: {e}")))?;
            access.tls = Some(TlsOptions::private(
                &made.ca_cert,
                &made.client_cert,
                &made.client_key,
            ));
            Bind::Tls(
                addr,
                TlsSettings {
                    cert_file: made.server_cert,
                    key_file: made.server_key,
                    ca_cert_file: Some(made.ca_cert),
                    auth_clients: AuthClients::Yes,
                    protocols: None,
                },
            )
        }
        (bind, _) => bind,
    };
    let handle = crate::server::spawn_in_background(bind, engine)
        .map_err(|e| failed(format!("cannot start it: {e}")))?;
    Ok(RedisTarget::served_with(handle, persistence, files, access))
}

/// `engine` behind edgebench's RESP server, keeping its files' directory.
fn serve_engine(
    bind: Bind,
    engine: Engine,
    persistence: Option<String>,
    files: Option<tempfile::TempDir>,
) -> Result<RedisTarget, BackendError> {
    let handle =
        crate::server::spawn_in_background(bind, engine).map_err(|e| BackendError::Connect {
            endpoint: "in-process RESP server".to_string(),
            reason: format!("cannot start it: {e}"),
        })?;
    Ok(RedisTarget::served_persisting(handle, persistence, files))
}

impl Started for EngineTarget {
    fn describe(&self) -> String {
        let way = match self.direct {
            false => "in-process (redis-rs connection)",
            true => "in-process (typed API)",
        };
        match &self.persistence {
            Some(p) => format!("{way} ({p})"),
            None => way.to_string(),
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

    fn ycsb(&self, setup: &Setup) -> Result<YcsbOpener, BackendError> {
        if !self.direct {
            return crate::store::redis::ycsb::opener_of(self, setup);
        }
        let (engine, setup) = (self.engine.clone(), setup.clone());
        EngineYcsb::new(engine.clone(), &setup)
            .map_err(|e| BackendError::Unsuitable(e.to_string()))?;
        Ok(Arc::new(move || {
            Ok(Box::new(EngineYcsb::new(engine.clone(), &setup)?) as Box<dyn YcsbStore>)
        }))
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
