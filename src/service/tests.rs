//! HTTP-layer tests: every route through a running [`ServiceHandle`], over TCP and a Unix
//! socket, against an in-memory store double ([`double`]), and [`HttpStore`] round trips
//! through the service. The double checks request parsing and response building only; the
//! real stores are checked by the conformance suite.

mod double;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::Method;
use serde_json::{json, Value};

use self::double::{opener, Shared};
use super::{ServiceConfig, ServiceHandle};
use crate::edgex::dto::{AddEventRequest, EventDto};
use crate::edgex::testing::{event, reading, simple, typed, T0};
use crate::edgex::{Event, Reading, ReadingValue};
use crate::store::edgex::{Doomed, EventStore, Filter, Page};
use crate::store::http::{HttpBase, HttpStore, Reply};
use crate::store::StoreError;

const ANY_PORT: &str = "127.0.0.1:0";

/// A service over a fresh double, on TCP and on a socket in a temporary directory.
struct Fixture {
    shared: Arc<Shared>,
    service: Option<ServiceHandle>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn start(cfg: ServiceConfig) -> Fixture {
        let shared = Arc::new(Shared::default());
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("core-data.sock");
        let tcp: SocketAddr = ANY_PORT.parse().unwrap();
        let service = ServiceHandle::start(opener(&shared), cfg, Some(tcp), Some(socket)).unwrap();
        Fixture {
            shared,
            service: Some(service),
            _dir: dir,
        }
    }

    fn service(&self) -> &ServiceHandle {
        self.service.as_ref().unwrap()
    }

    fn tcp(&self) -> HttpStore {
        let addr = self.service().tcp_addr().unwrap();
        let base = HttpBase::Tcp {
            host: addr.ip().to_string(),
            port: addr.port(),
        };
        HttpStore::connect(&base).unwrap()
    }

    fn unix(&self) -> HttpStore {
        let path = self.service().unix_path().unwrap().to_path_buf();
        HttpStore::connect(&HttpBase::Unix(path)).unwrap()
    }

    fn stored(&self) -> usize {
        self.shared.events.lock().unwrap().len()
    }
}

/// An event of `device` at `origin` with Float64 readings `temp` and `hum` (one ns apart).
fn temp_and_hum(device: &str, origin: i64) -> Event {
    let reading = |resource: &str, at: i64, value: &str| Reading {
        units: "C".to_string(),
        ..typed("Float64", reading(device, resource, at, simple(value)))
    };
    event(
        device,
        origin,
        vec![
            reading("temp", origin, "21.5"),
            reading("hum", origin + 1, "40"),
        ],
    )
}

fn request_body(e: &Event) -> Vec<u8> {
    serde_json::to_vec(&AddEventRequest {
        api_version: "v3".into(),
        request_id: String::new(),
        event: EventDto::of(e),
    })
    .unwrap()
}

fn add_path(e: &Event) -> String {
    format!(
        "/api/v3/event/svc/{}/{}/{}",
        e.profile_name, e.device_name, e.source_name
    )
}

fn post(client: &mut HttpStore, path: &str, content_type: Option<&str>, body: Vec<u8>) -> Reply {
    let headers: Vec<(&str, &str)> = content_type
        .map(|t| ("content-type", t))
        .into_iter()
        .collect();
    client.send(Method::POST, path, &headers, body).unwrap()
}

fn add(client: &mut HttpStore, e: &Event) -> Reply {
    post(
        client,
        &add_path(e),
        Some("application/json"),
        request_body(e),
    )
}

fn json_of(reply: &Reply) -> Value {
    assert_eq!(
        reply
            .headers
            .get("content-type")
            .map(|v| v.to_str().unwrap()),
        Some("application/json"),
        "status {}",
        reply.status
    );
    assert!(reply.headers.contains_key("x-correlation-id"));
    serde_json::from_slice(&reply.body).unwrap()
}

/// The sorted keys of a JSON object.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

/// `GET path`: status 200 and the body.
fn ok(client: &mut HttpStore, path: &str) -> Value {
    let reply = client.get(path).unwrap();
    let body = json_of(&reply);
    assert_eq!(reply.status, 200, "{path}: {body}");
    assert_eq!(body["apiVersion"], "v3", "{path}");
    body
}

/// The status and body of a failed request, checked to be a `BaseResponse` error.
fn refused(reply: &Reply) -> (u16, String) {
    let body = json_of(reply);
    assert_eq!(
        keys(&body),
        ["apiVersion", "message", "statusCode"],
        "{body}"
    );
    assert_eq!(body["statusCode"], reply.status);
    (reply.status, body["message"].as_str().unwrap().to_string())
}

#[test]
fn every_route_answers_with_the_spec_status_and_fields() {
    let fx = Fixture::start(ServiceConfig::default());
    let mut c = fx.tcp();
    let events = [
        temp_and_hum("d1", T0),
        temp_and_hum("d1", T0 + 10),
        temp_and_hum("d2", T0 + 20),
    ];
    for e in &events {
        let reply = add(&mut c, e);
        let body = json_of(&reply);
        assert_eq!(reply.status, 201, "{body}");
        assert_eq!(keys(&body), ["apiVersion", "id", "statusCode"]);
        assert_eq!(body["id"], e.id.as_str());
        assert_eq!(body["statusCode"], 201);
    }

    let all = ok(&mut c, "/api/v3/event/all");
    assert_eq!(
        keys(&all),
        ["apiVersion", "events", "statusCode", "totalCount"]
    );
    assert_eq!(all["totalCount"], 3);
    let ids: Vec<&str> = all["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [&events[2].id, &events[1].id, &events[0].id],
        "newest first"
    );
    assert_eq!(
        keys(&all["events"][0]),
        [
            "apiVersion",
            "deviceName",
            "id",
            "origin",
            "profileName",
            "readings",
            "sourceName"
        ]
    );
    assert_eq!(
        keys(&all["events"][0]["readings"][0]),
        [
            "deviceName",
            "id",
            "origin",
            "profileName",
            "resourceName",
            "units",
            "value",
            "valueType"
        ]
    );

    let one = ok(
        &mut c,
        &format!("/api/v3/event/id/{}", events[0].id.to_uppercase()),
    );
    assert_eq!(keys(&one), ["apiVersion", "event", "statusCode"]);
    assert_eq!(one["event"]["id"], events[0].id.as_str());
    assert_eq!(one["event"]["readings"][1]["resourceName"], "hum");

    let count = |c: &mut HttpStore, path: &str| {
        let body = ok(c, path);
        assert_eq!(keys(&body), ["apiVersion", "count", "statusCode"], "{path}");
        body["count"].as_u64().unwrap()
    };
    assert_eq!(count(&mut c, "/api/v3/event/count"), 3);
    assert_eq!(count(&mut c, "/api/v3/event/count/device/name/d1"), 2);
    assert_eq!(count(&mut c, "/api/v3/reading/count"), 6);
    assert_eq!(count(&mut c, "/api/v3/reading/count/device/name/d1"), 4);

    let (s, e) = (T0 + 5, T0 + 20);
    let event_lists = [
        ("/api/v3/event/device/name/d1".to_string(), 2),
        (format!("/api/v3/event/start/{s}/end/{e}"), 2),
    ];
    for (path, total) in event_lists {
        let body = ok(&mut c, &path);
        assert_eq!(
            keys(&body),
            ["apiVersion", "events", "statusCode", "totalCount"]
        );
        assert_eq!(body["totalCount"], total, "{path}");
        assert_eq!(body["events"].as_array().unwrap().len(), total, "{path}");
    }
    let reading_lists = [
        ("/api/v3/reading/all".to_string(), 6),
        ("/api/v3/reading/device/name/d1".to_string(), 4),
        ("/api/v3/reading/resourceName/temp".to_string(), 3),
        (
            "/api/v3/reading/device/name/d1/resourceName/temp".to_string(),
            2,
        ),
        // Readings at T0+10, T0+11, T0+20 (T0+21 is past the end).
        (format!("/api/v3/reading/start/{s}/end/{e}"), 3),
        (
            format!("/api/v3/reading/resourceName/temp/start/{s}/end/{e}"),
            2,
        ),
        (
            format!("/api/v3/reading/device/name/d1/resourceName/hum/start/{s}/end/{e}"),
            1,
        ),
        (
            format!("/api/v3/reading/device/name/d1/start/{s}/end/{e}"),
            2,
        ),
    ];
    for (path, total) in reading_lists {
        let body = ok(&mut c, &path);
        assert_eq!(
            keys(&body),
            ["apiVersion", "readings", "statusCode", "totalCount"]
        );
        assert_eq!(body["totalCount"], total, "{path}");
        assert_eq!(body["readings"].as_array().unwrap().len(), total, "{path}");
    }

    let ping = ok(&mut c, "/api/v3/ping");
    assert_eq!(keys(&ping), ["apiVersion", "serviceName", "timestamp"]);
    assert_eq!(ping["serviceName"], "core-data");
    assert!(ping["timestamp"].as_str().unwrap().ends_with(" UTC"));
    let version = ok(&mut c, "/api/v3/version");
    assert_eq!(keys(&version), ["apiVersion", "serviceName", "version"]);
    assert_eq!(version["version"], env!("CARGO_PKG_VERSION"));
    let config = ok(&mut c, "/api/v3/config");
    assert_eq!(keys(&config), ["apiVersion", "config", "serviceName"]);
    assert_eq!(
        config["config"],
        json!({"Writable": {"PersistData": true}, "MaxEventSize": 25000,
               "Service": {"MaxResultCount": 1024}})
    );

    let delete = |c: &mut HttpStore, path: &str, status: u16| {
        let reply = c.send(Method::DELETE, path, &[], Vec::new()).unwrap();
        let body = json_of(&reply);
        assert_eq!(reply.status, status, "{path}: {body}");
        assert_eq!(body, json!({"apiVersion": "v3", "statusCode": status}));
    };
    delete(&mut c, &format!("/api/v3/event/id/{}", events[0].id), 200);
    assert_eq!(fx.stored(), 2);
    delete(&mut c, "/api/v3/event/device/name/d2", 202);
    assert_eq!(fx.stored(), 1, "deleted before the 202");
    // Whitespace is a device name EdgeX accepts (the spec documents 202 or 500 here).
    delete(&mut c, "/api/v3/event/device/name/%0A", 202);
    delete(&mut c, "/api/v3/event/device/name/%20", 202);
    assert_eq!(fx.stored(), 1, "no device is named with whitespace");
    delete(&mut c, "/api/v3/event/age/0", 202);
    assert_eq!(fx.stored(), 0);
}

#[test]
fn each_error_is_answered_and_writes_nothing() {
    let cfg = ServiceConfig {
        max_event_size_kb: 1,
        ..ServiceConfig::default()
    };
    let fx = Fixture::start(cfg);
    let mut c = fx.tcp();
    let stored = temp_and_hum("d1", T0);
    assert_eq!(add(&mut c, &stored).status, 201);
    let fresh = temp_and_hum("d1", T0 + 1);
    let path = add_path(&fresh);
    let body = request_body(&fresh);

    let malformed = post(
        &mut c,
        &path,
        Some("application/json"),
        b"{\"apiVersion\":".to_vec(),
    );
    let (status, message) = refused(&malformed);
    assert_eq!(status, 400);
    assert!(message.contains("json decoding failed"), "{message}");

    let (status, message) = refused(&post(&mut c, &path, Some("text/plain"), body.clone()));
    assert_eq!(status, 400);
    assert!(message.contains("text/plain"), "{message}");

    let other_device = "/api/v3/event/svc/profile/d9/source";
    let (status, message) = refused(&post(&mut c, other_device, None, body.clone()));
    assert_eq!(
        (status, message.as_str()),
        (400, "event's deviceName d1 mismatches d9")
    );

    let mut unversioned: Value = serde_json::from_slice(&body).unwrap();
    unversioned["apiVersion"] = json!("");
    let (status, message) = refused(&post(
        &mut c,
        &path,
        None,
        serde_json::to_vec(&unversioned).unwrap(),
    ));
    assert_eq!(
        (status, message.as_str()),
        (400, "AddEventRequest.ApiVersion is required")
    );

    // A requestId that is not a canonical UUID is a 400 answered without one (`refused`
    // checks the body has no requestId); a valid one is echoed even on a refusal.
    for bad_id in [
        "즄4",
        "7A1B2C3D-0000-4000-8000-000000000001",
        "7a1b2c3d000040008000000000000001",
    ] {
        let mut with_id: Value = serde_json::from_slice(&body).unwrap();
        with_id["requestId"] = json!(bad_id);
        let (status, message) = refused(&post(
            &mut c,
            &path,
            None,
            serde_json::to_vec(&with_id).unwrap(),
        ));
        assert_eq!(status, 400, "{bad_id}");
        assert!(
            message.starts_with(&format!(
                "AddEventRequest.RequestId {bad_id:?} is not a UUID"
            )),
            "{message}"
        );
    }
    let mut nameless: Value = serde_json::from_slice(&body).unwrap();
    nameless["requestId"] = json!("7a1b2c3d-0000-4000-8000-000000000001");
    nameless["event"]["deviceName"] = json!("");
    let reply = post(&mut c, &path, None, serde_json::to_vec(&nameless).unwrap());
    let answer = json_of(&reply);
    assert_eq!(reply.status, 400);
    assert_eq!(answer["requestId"], "7a1b2c3d-0000-4000-8000-000000000001");
    assert_eq!(answer["message"], "Event.DeviceName is required");

    let (status, _) = refused(&add(&mut c, &stored));
    assert_eq!(status, 409);

    let mut big = fresh.clone();
    big.readings[0].value = ReadingValue::Simple("9".repeat(2048));
    let (status, message) = refused(&add(&mut c, &big));
    assert_eq!(
        (status, message.as_str()),
        (413, "request size exceed 1 KB")
    );

    let (status, message) = refused(&c.get("/api/v3/event/id/not-a-uuid").unwrap());
    assert_eq!(
        (status, message.as_str()),
        (
            404,
            "event not-a-uuid not found: event ids are UUIDs, and this is not one"
        )
    );
    let missing = format!("/api/v3/event/id/{}", fresh.id);
    assert_eq!(refused(&c.get(&missing).unwrap()).0, 404);
    assert_eq!(
        refused(&c.send(Method::DELETE, &missing, &[], vec![]).unwrap()).0,
        404
    );

    let (status, message) = refused(&c.get("/api/v3/event/all?offset=2").unwrap());
    assert_eq!(status, 416);
    assert_eq!(
        message,
        "query objects bounds out of range. length:1 offset:2"
    );

    for bad in [
        "/api/v3/event/all?limit=abc",
        "/api/v3/event/all?limit=1025",
        "/api/v3/event/all?offset=-2",
        "/api/v3/reading/all?aggregateFunc=SUM",
        "/api/v3/event/start/9/end/8",
        "/api/v3/event/start/x/end/8",
        "/api/v3/reading/start/-1/end/8",
    ] {
        assert_eq!(refused(&c.get(bad).unwrap()).0, 400, "{bad}");
    }
    let bad_age = c
        .send(Method::DELETE, "/api/v3/event/age/old", &[], vec![])
        .unwrap();
    assert_eq!(refused(&bad_age).0, 400);

    assert_eq!(refused(&c.get("/api/v3/nothing/here").unwrap()).0, 404);
    assert_eq!(refused(&c.get("/api/v2/event/all").unwrap()).0, 404);
    let wrong = c
        .send(Method::PUT, "/api/v3/event/all", &[], vec![])
        .unwrap();
    assert_eq!(refused(&wrong).0, 405);

    assert_eq!(fx.stored(), 1, "no error wrote anything");
    let count = ok(&mut c, "/api/v3/event/count");
    assert_eq!(count["count"], 1);
}

#[test]
fn an_oversized_chunked_body_is_refused_without_a_length() {
    let cfg = ServiceConfig {
        max_event_size_kb: 1,
        ..ServiceConfig::default()
    };
    let fx = Fixture::start(cfg);
    let mut stream = std::net::TcpStream::connect(fx.service().tcp_addr().unwrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let chunk = vec![b' '; 1500];
    let mut request = b"POST /api/v3/event/svc/p/d/s HTTP/1.1\r\nHost: x\r\n\
        Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        .to_vec();
    request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
    request.extend_from_slice(&chunk);
    request.extend_from_slice(b"\r\n0\r\n\r\n");
    stream.write_all(&request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("request size exceed 1 KB"), "{text}");
    assert_eq!(fx.stored(), 0);
}

#[test]
fn a_cbor_event_is_stored_and_read_back_as_json() {
    let fx = Fixture::start(ServiceConfig::default());
    let mut c = fx.unix();
    let mut e = temp_and_hum("cam", T0);
    e.readings[0].value_type = "Binary".into();
    e.readings[0].value = ReadingValue::Binary {
        data: vec![0xff, 0x00, 0x10],
        media_type: "image/jpeg".into(),
    };
    let request = AddEventRequest {
        api_version: "v3".into(),
        request_id: "7a1b2c3d-0000-4000-8000-000000000001".into(),
        event: EventDto::of(&e),
    };
    let mut cbor = Vec::new();
    ciborium::into_writer(&request, &mut cbor).unwrap();
    let reply = post(&mut c, &add_path(&e), Some("application/cbor"), cbor);
    let body = json_of(&reply);
    assert_eq!(reply.status, 201, "{body}");
    assert_eq!(body["requestId"], "7a1b2c3d-0000-4000-8000-000000000001");
    assert_eq!(fx.shared.events.lock().unwrap()[0], e);

    let back = ok(&mut c, &format!("/api/v3/event/id/{}", e.id));
    let reading = &back["event"]["readings"][0];
    assert_eq!(reading["binaryValue"], "/wAQ");
    assert_eq!(reading["mediaType"], "image/jpeg");
    assert!(reading.get("value").is_none());
}

#[test]
fn paging_defaults_to_20_and_minus_one_means_max_result_count() {
    let cfg = ServiceConfig {
        max_result_count: 22,
        ..ServiceConfig::default()
    };
    let fx = Fixture::start(cfg);
    let mut c = fx.tcp();
    for i in 0..25 {
        assert_eq!(add(&mut c, &temp_and_hum("d", T0 + i)).status, 201);
    }
    let page = |c: &mut HttpStore, query: &str| {
        let body = ok(c, &format!("/api/v3/event/all{query}"));
        (
            body["events"].as_array().unwrap().len(),
            body["totalCount"].as_u64().unwrap(),
        )
    };
    assert_eq!(page(&mut c, ""), (20, 25));
    assert_eq!(page(&mut c, "?limit=-1"), (22, 25));
    assert_eq!(
        page(&mut c, "?offset=-1"),
        (20, 0),
        "offset=-1 skips the count"
    );
    assert_eq!(page(&mut c, "?offset=20&limit=10"), (5, 25));
    assert_eq!(
        page(&mut c, "?offset=25"),
        (0, 25),
        "offset at the end is an empty page"
    );
    assert_eq!(page(&mut c, "?limit=0"), (0, 25));
    assert_eq!(
        refused(&c.get("/api/v3/event/all?limit=23").unwrap()).0,
        400
    );
    let readings = ok(&mut c, "/api/v3/reading/all?limit=-1&offset=40");
    assert_eq!(readings["readings"].as_array().unwrap().len(), 10);
    assert_eq!(readings["totalCount"], 50);
}

#[test]
fn without_persist_data_an_event_is_answered_and_not_stored() {
    let cfg = ServiceConfig {
        persist: false,
        ..ServiceConfig::default()
    };
    let fx = Fixture::start(cfg);
    let mut c = fx.tcp();
    let e = temp_and_hum("d", T0);
    let reply = add(&mut c, &e);
    assert_eq!(reply.status, 201);
    assert_eq!(json_of(&reply)["id"], e.id.as_str());
    assert_eq!(ok(&mut c, "/api/v3/event/count")["count"], 0);
    assert_eq!(
        ok(&mut c, "/api/v3/config")["config"]["Writable"]["PersistData"],
        false
    );
    assert_eq!(fx.stored(), 0);
}

#[test]
fn the_correlation_id_is_echoed_or_made() {
    let fx = Fixture::start(ServiceConfig::default());
    let mut c = fx.tcp();
    let id = "14a42ea6-c394-41c3-8bcd-a29b9f5e6835";
    let reply = c
        .send(
            Method::GET,
            "/api/v3/ping",
            &[("X-Correlation-ID", id)],
            vec![],
        )
        .unwrap();
    assert_eq!(reply.headers["x-correlation-id"], id);
    let missing = c.get("/api/v3/nowhere").unwrap();
    let made = missing.headers["x-correlation-id"].to_str().unwrap();
    assert!(crate::edgex::normalize_uuid(made).is_some(), "{made}");
}

#[test]
fn stop_lets_the_request_in_flight_finish() {
    let fx = Fixture::start(ServiceConfig::default());
    *fx.shared.add_delay.lock().unwrap() = Duration::from_millis(300);
    let mut c = fx.tcp();
    let e = temp_and_hum("d", T0);
    let in_flight = std::thread::spawn(move || add(&mut c, &e).status);
    std::thread::sleep(Duration::from_millis(100));
    let mut fx = fx;
    fx.service.take().unwrap().stop();
    assert_eq!(in_flight.join().unwrap(), 201);
    assert_eq!(fx.stored(), 1);
    assert!(
        !fx._dir.path().join("core-data.sock").exists(),
        "socket removed"
    );
}

#[test]
fn stores_are_pooled_not_opened_per_request() {
    let fx = Fixture::start(ServiceConfig::default());
    let mut c = fx.tcp();
    for i in 0..5 {
        assert_eq!(add(&mut c, &temp_and_hum("d", T0 + i)).status, 201);
        ok(&mut c, "/api/v3/event/count");
    }
    assert_eq!(*fx.shared.opened.lock().unwrap(), 1);
}

#[test]
fn binding_a_busy_address_names_it_and_the_fix() {
    let fx = Fixture::start(ServiceConfig::default());
    let addr = fx.service().tcp_addr().unwrap();
    let err = ServiceHandle::start(
        opener(&fx.shared),
        ServiceConfig::default(),
        Some(addr),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(&addr.to_string()) && err.contains("--listen HOST:PORT"),
        "{err}"
    );
}

/// The store calls through the service, on one transport.
fn round_trip(client: &mut HttpStore) {
    assert_eq!(client.max_result_count(), 77);
    client.scrub().unwrap();
    let events = [
        temp_and_hum("d1", T0),
        temp_and_hum("d1", T0 + 10),
        temp_and_hum("d2", T0 + 20),
    ];
    for e in &events {
        client.add_event(e).unwrap();
    }
    assert!(matches!(
        client.add_event(&events[0]),
        Err(StoreError::Duplicate { .. })
    ));
    assert_eq!(client.event_by_id(&events[1].id).unwrap(), events[1]);
    let all = client.events(Filter::all(), Page::ALL).unwrap();
    assert_eq!(
        all,
        [events[2].clone(), events[1].clone(), events[0].clone()]
    );
    let page = client
        .events(
            Filter::device("d1"),
            Page {
                offset: 1,
                limit: 5,
            },
        )
        .unwrap();
    assert_eq!(page, [events[0].clone()]);
    assert!(client
        .events(
            Filter::all(),
            Page {
                offset: 9,
                limit: 1
            }
        )
        .unwrap()
        .is_empty());
    assert!(matches!(
        client.events(Filter::device("d1").between(T0, T0 + 5), Page::ALL),
        Err(StoreError::Unsupported(_))
    ));
    assert_eq!(client.event_count(Filter::all()).unwrap(), 3);
    assert_eq!(client.event_count(Filter::device("d1")).unwrap(), 2);
    assert_eq!(
        client
            .event_count(Filter::all().between(T0 + 5, T0 + 20))
            .unwrap(),
        2
    );
    assert_eq!(client.reading_count(Filter::all()).unwrap(), 6);
    assert_eq!(client.reading_count(Filter::resource("hum")).unwrap(), 3);
    let hum = client
        .readings(Filter::device("d1").between(T0, T0 + 5), Page::ALL)
        .unwrap();
    assert_eq!(
        hum,
        [events[0].readings[1].clone(), events[0].readings[0].clone()]
    );
    client.delete_event_by_id(&events[0].id).unwrap();
    assert!(matches!(
        client.event_by_id(&events[0].id),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        client.delete_event_by_id(&events[0].id),
        Err(StoreError::NotFound { .. })
    ));
    client.delete_events(Doomed::Device("d2")).unwrap();
    assert_eq!(client.event_count(Filter::all()).unwrap(), 1);
    // An event from the future survives DELETE /event/age/0; scrub removes it all the same.
    client
        .add_event(&temp_and_hum("later", i64::MAX / 2))
        .unwrap();
    client.scrub().unwrap();
    assert_eq!(client.event_count(Filter::all()).unwrap(), 0);
    let err = client.get("/api/v3/event/all?limit=78").unwrap();
    assert_eq!(err.status, 400);
}

#[test]
fn http_store_round_trips_through_the_service_over_tcp_and_a_unix_socket() {
    let cfg = ServiceConfig {
        max_result_count: 77,
        ..ServiceConfig::default()
    };
    let fx = Fixture::start(cfg);
    round_trip(&mut fx.tcp());
    round_trip(&mut fx.unix());
}
