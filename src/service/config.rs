//! What a core-data service is configured with: the few EdgeX settings its `/api/v3` routes
//! read, with EdgeX's defaults, and their `/api/v3/config` form under EdgeX's key names, so a
//! client reads `Service.MaxResultCount` from edgebench as it would from EdgeX.

use serde_json::{json, Value};

use crate::store::edgex::Behaviour;

/// The settings of one core-data service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceConfig {
    /// `Writable.PersistData`: when false, an added event is answered 201 and not stored
    /// (EdgeX's `AddEvent` is then a no-op). Default true.
    pub persist: bool,
    /// `Service.MaxResultCount`: the most records one list answers; `limit=-1` means this many.
    /// Default 1024 (EdgeX's `core-common-config-bootstrapper` value).
    pub max_result_count: usize,
    /// `MaxEventSize`, KB: a larger `POST /event` body is answered 413. EdgeX's default is
    /// 25000 KB; 0 means no limit.
    pub max_event_size_kb: u64,
    /// The `serviceName` of `/ping`, `/version` and `/config` answers. Default "core-data".
    pub service_name: String,
    /// Whether store calls run on the request's own task instead of tokio's blocking pool:
    /// for a store that answers from memory in this process (the engine), where the hop to
    /// a blocking thread and back costs more than the call. A store that waits on a socket or
    /// a disk must not (it would stall the runtime). Default false.
    pub inline_store_calls: bool,
    /// What the store behind the service keeps and checks, published under `Edgebench` in
    /// `/config` (EdgeX has no such key; its clients ignore it) so that edgebench's client
    /// knows it too. `None`: not published.
    pub store: Option<Behaviour>,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            persist: true,
            max_result_count: 1024,
            max_event_size_kb: 25_000,
            service_name: "core-data".to_string(),
            inline_store_calls: false,
            store: None,
        }
    }
}

impl ServiceConfig {
    /// The largest body `POST /event` reads, bytes; `None` for no limit.
    pub fn max_event_bytes(&self) -> Option<usize> {
        match self.max_event_size_kb {
            0 => None,
            kb => Some(usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX)),
        }
    }

    /// The `config` object of `/api/v3/config`. The keys are those of EdgeX's core-data
    /// configuration struct (`Writable`, top-level `MaxEventSize`, `Service`); the v4.0.2
    /// specification's example spells `Writeable`, which is a typo in its example, not the key
    /// EdgeX serves.
    pub fn as_edgex_json(&self) -> Value {
        let mut config = json!({
            "Writable": { "PersistData": self.persist },
            "MaxEventSize": self.max_event_size_kb,
            "Service": { "MaxResultCount": self.max_result_count },
        });
        if let (Some(b), Some(map)) = (self.store, config.as_object_mut()) {
            map.insert(
                "Edgebench".to_string(),
                json!({
                    "ChecksDuplicateIds": b.checks_duplicate_ids,
                    "KeepsReadingIds": b.keeps_reading_ids,
                    "KeepsBinaryValues": b.keeps_binary_values,
                }),
            );
        }
        config
    }
}
