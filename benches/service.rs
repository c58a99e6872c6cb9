//! What one core-data request costs, split into its parts, for AddEvent (an event of five
//! Int64 readings, the benchmarks' shape) and Readings (a page of 20, EdgeX's default limit):
//!
//! - `service_decode/<format>`: the request body to a checked [`Event`]: JSON and CBOR;
//! - `service_store/<call>`: the store call, EdgeX 3.1's Redis layout on the in-process engine
//!   (`add_event`, and `readings` of 20 plus the count EdgeX adds);
//! - `service_encode/<reply>`: the answer's JSON: `BaseWithIdResponse` and a
//!   `MultiReadingsResponse` of 20;
//! - `service_http/<request>`: the whole request through `edgebench coredata-service`'s code
//!   over a Unix socket, keep-alive: `ping` (HTTP framing, the socket and a tiny JSON: the
//!   transport's floor), `add_event` and `readings`.
//!
//! `service_http/add_event` minus `ping` is what the request's own work costs; set beside the
//! decode, store and encode rows it shows where that goes. Run:
//! `cargo bench --bench service`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use edgebench::edgex::dto::{
    AddEventRequest, BaseResponse, BaseWithIdResponse, MultiReadingsResponse, ReadingDto,
};
use edgebench::edgex::{self, Event, Reading, ReadingValue, API_VERSION};
use edgebench::engine::{Engine, EngineConnection};
use edgebench::service::{ServiceConfig, ServiceHandle, StoreOpener};
use edgebench::store::edgex::{EventStore, Filter, Page};
use edgebench::store::http::{HttpBase, HttpStore};
use edgebench::store::redis::edgex3::Redis3Store;

/// An event of `device` with the benchmarks' five Int64 readings.
fn event(device: &str, origin: i64) -> Event {
    Event {
        id: edgex::new_uuid(),
        device_name: device.to_string(),
        profile_name: "edgebench-profile".to_string(),
        source_name: "edgebench-source".to_string(),
        origin,
        readings: (0..5)
            .map(|i| Reading {
                id: edgex::new_uuid(),
                origin,
                device_name: device.to_string(),
                resource_name: format!("name{i}"),
                profile_name: "edgebench-profile".to_string(),
                value_type: "Int64".to_string(),
                units: String::new(),
                tags: None,
                value: ReadingValue::Simple(i.to_string()),
            })
            .collect(),
        tags: None,
    }
}

fn request(e: &Event) -> AddEventRequest {
    AddEventRequest {
        api_version: API_VERSION.to_string(),
        request_id: String::new(),
        event: edgebench::edgex::dto::EventDto::of(e),
    }
}

fn decode(c: &mut Criterion) {
    let e = event("device0", 1_700_000_000_000_000_000);
    let json = serde_json::to_vec(&request(&e)).expect("encodes");
    let mut cbor = Vec::new();
    ciborium::into_writer(&request(&e), &mut cbor).expect("encodes");
    let mut g = c.benchmark_group("service_decode");
    g.bench_function("json", |b| {
        b.iter(|| {
            let r: AddEventRequest = serde_json::from_slice(black_box(&json)).expect("decodes");
            r.into_event().expect("valid")
        })
    });
    g.bench_function("cbor", |b| {
        b.iter(|| {
            let r: AddEventRequest = ciborium::from_reader(black_box(&cbor[..])).expect("decodes");
            r.into_event().expect("valid")
        })
    });
    g.finish();
}

fn engine_store() -> Redis3Store<EngineConnection> {
    Redis3Store::new(EngineConnection::new(Engine::new()))
}

fn store(c: &mut Criterion) {
    let mut g = c.benchmark_group("service_store");
    let mut s = engine_store();
    let mut origin = 1_700_000_000_000_000_000;
    g.bench_function("add_event", |b| {
        b.iter(|| {
            origin += 1_000;
            s.add_event(&event("device0", origin)).expect("adds")
        })
    });
    let mut s = engine_store();
    for i in 0..100 {
        s.add_event(&event("device0", 1_700_000_000_000_000_000 + i * 1_000))
            .expect("adds");
    }
    g.bench_function("readings", |b| {
        b.iter(|| {
            let page = s.readings(Filter::all(), Page::first(20)).expect("reads");
            let total = s.reading_count(Filter::all()).expect("counts");
            (page, total)
        })
    });
    g.finish();
}

fn encode(c: &mut Criterion) {
    let e = event("device0", 1_700_000_000_000_000_000);
    let readings: Vec<ReadingDto> = (0..4)
        .flat_map(|_| e.readings.iter().map(ReadingDto::of))
        .collect();
    let mut g = c.benchmark_group("service_encode");
    g.bench_function("base_with_id", |b| {
        b.iter(|| {
            serde_json::to_vec(&BaseWithIdResponse {
                base: BaseResponse::status(201),
                id: black_box(&e.id).clone(),
            })
            .expect("encodes")
        })
    });
    g.bench_function("readings_20", |b| {
        b.iter(|| {
            serde_json::to_vec(&MultiReadingsResponse {
                base: BaseResponse::status(200),
                total_count: 500,
                readings: black_box(&readings).clone(),
            })
            .expect("encodes")
        })
    });
    g.finish();
}

/// A core-data service on a fresh engine, on a Unix socket in `dir`, and a client of it.
fn service_on_engine(dir: &std::path::Path) -> (ServiceHandle, HttpStore) {
    let engine = Engine::new();
    let opener: StoreOpener = std::sync::Arc::new(move || {
        Ok(
            Box::new(Redis3Store::new(EngineConnection::new(engine.clone())))
                as Box<dyn EventStore>,
        )
    });
    let path = dir.join("core-data.sock");
    let config = ServiceConfig {
        // As a run sets it for the engine (Target::in_process).
        inline_store_calls: true,
        ..ServiceConfig::default()
    };
    let service =
        ServiceHandle::start(opener, config, None, Some(path.clone())).expect("service starts");
    let client = HttpStore::connect(&HttpBase::Unix(path)).expect("connects");
    (service, client)
}

fn http(c: &mut Criterion) {
    let mut g = c.benchmark_group("service_http");
    let dir = tempfile::tempdir().expect("temp dir");
    let (service, mut client) = service_on_engine(dir.path());
    g.bench_function("ping", |b| {
        b.iter(|| client.get("/api/v3/ping").expect("pings"))
    });
    let mut origin = 1_700_000_000_000_000_000;
    g.bench_function("add_event", |b| {
        b.iter(|| {
            origin += 1_000;
            client.add_event(&event("device0", origin)).expect("adds")
        })
    });
    drop(client);
    service.stop();
    // Readings on a store of 100 events, as `service_store/readings` reads.
    let dir = tempfile::tempdir().expect("temp dir");
    let (service, mut client) = service_on_engine(dir.path());
    for i in 0..100 {
        client
            .add_event(&event("device0", 1_700_000_000_000_000_000 + i * 1_000))
            .expect("adds");
    }
    g.bench_function("readings", |b| {
        b.iter(|| {
            client
                .readings(Filter::all(), Page::first(20))
                .expect("reads")
        })
    });
    g.finish();
    drop(client);
    service.stop();
}

criterion_group!(benches, decode, store, encode, http);
criterion_main!(benches);
