//! What the EdgeX 4.0 document layout on MongoDB sends (what only this layout has; its
//! answers are the conformance suite's, `edgex_conformance::mongo4`): one `find` per event
//! list or event (readings embedded, no per-event query), and an index scan for every
//! filtered `find`.

use std::sync::{Arc, Mutex};

use edgebench::edgex::testing::{at, event_of};
use edgebench::store::edgex::{EventStore, Filter, Page};
use edgebench::store::mongo::edgex4::Mongo4Database;
use mongodb::bson::Document;
use mongodb::event::command::CommandEvent;
use mongodb::event::EventHandler;
use mongodb::options::ClientOptions;

use crate::common::mongo::{is_index_scan, plan_of, server_url};

type Sent = Arc<Mutex<Vec<(String, Document)>>>;

/// A private database whose client records the commands it sends (name and body).
fn recorded() -> (Mongo4Database, Sent) {
    let mut options = ClientOptions::parse(server_url())
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    let sent = Sent::default();
    let log = Arc::clone(&sent);
    options.command_event_handler = Some(EventHandler::callback(move |event| {
        if let CommandEvent::Started(started) = event {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((started.command_name, started.command));
        }
    }));
    let db = Mongo4Database::create_with_options(options).unwrap_or_else(|e| panic!("{e}"));
    (db, sent)
}

fn taken(sent: &Sent) -> Vec<(String, Document)> {
    std::mem::take(&mut *sent.lock().unwrap_or_else(|e| e.into_inner()))
}

fn names(sent: &[(String, Document)]) -> Vec<&str> {
    sent.iter().map(|(name, _)| name.as_str()).collect()
}

#[test]
fn events_and_their_readings_are_one_find_and_adds_two_inserts() {
    let (db, sent) = recorded();
    let mut store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
    let events: Vec<_> = (1..=4)
        .map(|i| event_of("d", at(i), &["a", "b", "c"]))
        .collect();
    taken(&sent);
    for e in &events {
        store.add_event(e).unwrap_or_else(|err| panic!("{err}"));
    }
    assert_eq!(
        names(&taken(&sent)),
        ["insert"; 8],
        "event, then its readings"
    );

    let listed = store.events(Filter::all(), Page::ALL).unwrap();
    assert_eq!(listed.len(), 4);
    assert_eq!(listed[0].readings.len(), 3);
    assert_eq!(names(&taken(&sent)), ["find"]);
    store.event_by_id(&events[1].id).unwrap();
    assert_eq!(names(&taken(&sent)), ["find"]);
    store.events(Filter::device("d"), Page::first(2)).unwrap();
    assert_eq!(names(&taken(&sent)), ["find"]);
    store.delete_event_by_id(&events[1].id).unwrap();
    assert_eq!(
        names(&taken(&sent)),
        ["delete", "delete"],
        "readings, then event"
    );
    assert_eq!(store.reading_count(Filter::all()).unwrap(), 9);
}

/// Every list and by-id call with a filter runs as an index scan. (The unfiltered lists
/// are left out: `mongod` walks `{origin: -1, _id: -1}` for their sort, while SecantusDB,
/// the CI server, may scan and sort; its plan says nothing about ours.)
#[test]
fn every_filtered_find_is_served_by_an_index() {
    let (db, sent) = recorded();
    let mut store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
    let e = event_of("d", at(1), &["temp", "hum"]);
    store.add_event(&e).unwrap_or_else(|err| panic!("{err}"));
    taken(&sent);
    let both = Filter {
        device: Some("d"),
        resource: Some("temp"),
        range: None,
    };
    let page = Page::first(5);
    store.event_by_id(&e.id).unwrap();
    store.events(Filter::device("d"), page).unwrap();
    store
        .events(Filter::all().between(at(0), at(2)), page)
        .unwrap();
    store
        .events(Filter::device("d").between(at(0), at(2)), page)
        .unwrap();
    store.readings(Filter::device("d"), page).unwrap();
    store.readings(Filter::resource("temp"), page).unwrap();
    store.readings(both, page).unwrap();
    store.readings(both.between(at(0), at(2)), page).unwrap();
    store
        .readings(Filter::all().between(at(0), at(2)), page)
        .unwrap();
    let finds: Vec<Document> = taken(&sent)
        .into_iter()
        .filter(|(name, _)| name == "find")
        .map(|(_, find)| find)
        .collect();
    assert_eq!(finds.len(), 9);
    for find in &finds {
        let stages = plan_of(db.client(), db.name(), find);
        assert!(is_index_scan(&stages), "{find} runs as {stages:?}");
    }
}
