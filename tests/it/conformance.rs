//! The core-data conformance suite: every backend gives the same results for the same calls.
//!
//! Each check in [`checks`] is a function over `&mut dyn CoreData` that starts from an empty
//! store and asserts exact results: values, counts, order, limits, error variants. It checks
//! the semantics documented in `edgebench::store`. `conformance_suite!(NAME, OPENER)` turns
//! every check into one `#[test]` in a module `NAME`. `OPENER` is a closure that returns a
//! fresh, empty [`common::Backend`]. Adding a backend is one line at the end of this file.
//!
//! The `redis_layout` module at the end pins what only Redis has: the 2018 key layout.
//!
//! One file, past 800 lines, on purpose: it is one suite, and every check in it runs over
//! every backend; cutting it would hide which checks a new backend must pass.

use edgebench::store::CoreData;

use crate::common;

/// One `#[test]` per check; this list is the only one to extend when a check is added.
macro_rules! conformance_tests {
    ($($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                run(super::checks::$check);
            }
        )*
    };
}

/// `conformance_suite!(backend_name, || open_an_empty_backend())`.
macro_rules! conformance_suite {
    ($backend:ident, $open:expr) => {
        mod $backend {
            use super::*;

            fn run(check: fn(&mut dyn CoreData)) {
                let mut backend: common::Backend = ($open)();
                check(backend.store());
            }

            conformance_tests! {
                add_reading_round_trips_every_field,
                add_event_round_trips_every_field,
                event_without_readings_round_trips,
                ids_are_fresh_24_hex,
                counts_total_and_by_device,
                all_lists_are_in_id_order,
                lists_by_device_and_name_are_by_created_then_id,
                limits_are_exact,
                time_ranges_are_inclusive_at_both_ends,
                events_older_than_age_are_strictly_older,
                events_pushed_are_by_pushed_then_id,
                readings_by_names_go_name_by_name_up_to_the_limit,
                readings_by_device_and_name_are_exact,
                delete_event_deletes_its_readings,
                delete_reading_removes_it_from_its_event,
                update_event_merges_and_keeps_readings,
                update_reading_merges_and_moves_indexes,
                updates_move_records_out_of_empty_device_and_name,
                by_id_calls_reject_malformed_and_unknown_ids,
                ids_are_case_insensitive,
                scrub_all_events_empties_the_store,
                events_come_back_with_readings_in_added_order,
            }
        }
    };
}

conformance_suite!(redis_tcp, || common::spawned_redis("redis-tcp"));
conformance_suite!(redis_uds, || common::spawned_redis("redis-uds"));
conformance_suite!(redis_cluster, common::shared_cluster);
// A replica, WAIT after every write, and the append-only file fsynced on every write: the
// same results as a single scratch server.
conformance_suite!(redis_tcp_replica_wait, || common::spawned_redis(
    "redis-tcp?replicas=1&wait=1"
));
conformance_suite!(redis_uds_replica_wait_aof, || common::spawned_redis(
    "redis-uds?replicas=1&wait=1&appendonly=yes&appendfsync=always&save=60:1000"
));
conformance_suite!(engine_direct, common::engine_direct);
conformance_suite!(redis_embedded, || common::in_process("embedded"));
conformance_suite!(embedded_tcp, || common::in_process("embedded-tcp"));
conformance_suite!(embedded_uds, || common::in_process("embedded-uds"));
conformance_suite!(sqlite_file, common::sqlite::file);
conformance_suite!(sqlite_memory, common::sqlite::memory);
conformance_suite!(mongo_embedded, common::mongo::embedded);
conformance_suite!(mongo_referenced, common::mongo::referenced);
conformance_suite!(mongo_referenced_2018, common::mongo::referenced_2018);
conformance_suite!(pg_tcp, common::postgres::pg_tcp);
conformance_suite!(pg_uds, common::postgres::pg_uds);

/// The checks, one function each; every one starts from an empty store.
mod checks {
    use std::fmt::Debug;

    use edgebench::store::{CoreData, StoreError, StoreResult, UNLIMITED};
    use edgebench::v2018::testing::{event, reading};
    use edgebench::v2018::{is_object_id, now_ms, Event, ObjectId, Reading};

    // ---- helpers ----

    #[track_caller]
    fn ok<T>(result: StoreResult<T>) -> T {
        result.unwrap_or_else(|e| panic!("{e}"))
    }

    #[track_caller]
    fn err<T: Debug>(result: StoreResult<T>) -> StoreError {
        match result {
            Ok(value) => panic!("expected an error, got {value:?}"),
            Err(e) => e,
        }
    }

    #[track_caller]
    fn assert_not_found<T: Debug>(result: StoreResult<T>, kind: &str, id: &str) {
        match err(result) {
            StoreError::NotFound { kind: k, id: i } if k == kind && i == id => {}
            other => panic!("expected NotFound {{ {kind}, {id} }}, got {other:?}"),
        }
    }

    #[track_caller]
    fn assert_invalid<T: Debug>(result: StoreResult<T>, id: &str) {
        match err(result) {
            StoreError::InvalidId(i) if i == id => {}
            other => panic!("expected InvalidId({id:?}), got {other:?}"),
        }
    }

    fn add_reading(store: &mut dyn CoreData, mut r: Reading) -> Reading {
        ok(store.add_reading(&mut r));
        r
    }

    fn add_event(store: &mut dyn CoreData, mut e: Event) -> Event {
        ok(store.add_event(&mut e));
        e
    }

    fn ids_r(readings: &[Reading]) -> Vec<&str> {
        readings.iter().map(|r| r.id.as_str()).collect()
    }

    /// `items` picked by index, for "expected order" lists.
    fn pick<T: Clone>(items: &[T], order: &[usize]) -> Vec<T> {
        order.iter().map(|&i| items[i].clone()).collect()
    }

    fn is_lower_hex_id(id: &str) -> bool {
        is_object_id(id)
            && id
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    }

    // ---- checks ----

    pub fn add_reading_round_trips_every_field(store: &mut dyn CoreData) {
        let mut r = Reading {
            id: "ffffffffffffffffffffffff".into(),
            pushed: 11,
            created: 1_500_000_000_123,
            origin: 22,
            modified: 33,
            device: "dev ü:1".into(),
            name: "temperature".into(),
            value: "21.5 °C, \"quoted\"".into(),
        };
        let id = ok(store.add_reading(&mut r));
        assert_eq!(id, r.id);
        assert_ne!(
            id, "ffffffffffffffffffffffff",
            "the store must assign a fresh id"
        );
        assert!(is_lower_hex_id(&id), "{id}");
        assert_eq!(r.created, 1_500_000_000_123, "a non-zero created is kept");
        assert_eq!(ok(store.reading_by_id(&id)), r);

        // created 0 means "now".
        let before = now_ms();
        let fresh = add_reading(store, reading("d", "n", 0));
        let after = now_ms();
        assert!(
            (before..=after).contains(&fresh.created),
            "{before} <= {} <= {after}",
            fresh.created
        );
        assert_eq!(ok(store.reading_by_id(&fresh.id)), fresh);
    }

    pub fn add_event_round_trips_every_field(store: &mut dyn CoreData) {
        let sent = Event {
            id: "not even an id".into(),
            pushed: 44,
            device: "dev-1".into(),
            created: 1_500_000_000_000,
            modified: 55,
            origin: 66,
            event: "schedule-7".into(),
            readings: vec![
                Reading {
                    id: "bogus".into(),
                    pushed: 7,
                    created: 123,
                    origin: 8,
                    modified: 9,
                    device: String::new(),
                    name: "z".into(),
                    value: "1".into(),
                },
                Reading {
                    device: "other-dev".into(),
                    name: "a".into(),
                    value: "2".into(),
                    ..Reading::default()
                },
                Reading {
                    name: "m".into(),
                    ..Reading::default()
                },
            ],
        };
        let mut e = sent.clone();
        let id = ok(store.add_event(&mut e));
        assert_eq!(id, e.id);
        assert!(is_lower_hex_id(&id), "{id}");
        assert_eq!(e.created, sent.created, "a non-zero created is kept");
        assert_eq!(e.readings.len(), sent.readings.len());
        for (got, sent_r) in e.readings.iter().zip(&sent.readings) {
            let expected = Reading {
                id: got.id.clone(),
                created: sent.created,
                device: if sent_r.device.is_empty() {
                    sent.device.clone()
                } else {
                    sent_r.device.clone()
                },
                ..sent_r.clone()
            };
            assert_eq!(*got, expected);
            assert!(is_lower_hex_id(&got.id), "{}", got.id);
        }
        assert_eq!(ok(store.event_by_id(&id)), e);
        for r in &e.readings {
            assert_eq!(ok(store.reading_by_id(&r.id)), *r);
        }

        // created 0 means "now", and the readings get the same.
        let before = now_ms();
        let fresh = add_event(store, event("d", 0, &["x", "y"]));
        let after = now_ms();
        assert!((before..=after).contains(&fresh.created));
        assert!(fresh.readings.iter().all(|r| r.created == fresh.created));
        assert_eq!(ok(store.event_by_id(&fresh.id)), fresh);
    }

    pub fn event_without_readings_round_trips(store: &mut dyn CoreData) {
        let e = add_event(store, event("d", 1000, &[]));
        assert_eq!(ok(store.event_by_id(&e.id)), e);
        assert!(e.readings.is_empty());
        assert_eq!(ok(store.reading_count()), 0);
        assert_eq!(ok(store.events()), vec![e]);
    }

    pub fn ids_are_fresh_24_hex(store: &mut dyn CoreData) {
        // The 2018 benchmark re-sends one Reading value: every add still gets a new id.
        let mut r = reading("d", "n", 0);
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(ok(store.add_reading(&mut r)));
        }
        let e = add_event(store, event("d", 0, &["a", "b"]));
        ids.push(e.id.clone());
        ids.extend(e.readings.iter().map(|r| r.id.clone()));
        let again = add_event(store, e.clone());
        ids.push(again.id.clone());
        ids.extend(again.readings.iter().map(|r| r.id.clone()));
        assert!(ids.iter().all(|id| is_lower_hex_id(id)), "{ids:?}");
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
    }

    pub fn counts_total_and_by_device(store: &mut dyn CoreData) {
        assert_eq!(ok(store.event_count()), 0);
        assert_eq!(ok(store.reading_count()), 0);
        assert_eq!(ok(store.event_count_by_device("a")), 0);
        add_event(store, event("a", 0, &["x", "y"]));
        add_event(store, event("a", 0, &[]));
        add_event(store, event("b", 0, &["x", "y", "z"]));
        add_reading(store, reading("a", "x", 0));
        add_reading(store, reading("c", "x", 0));
        assert_eq!(ok(store.event_count()), 3);
        assert_eq!(ok(store.reading_count()), 7);
        assert_eq!(ok(store.event_count_by_device("a")), 2);
        assert_eq!(ok(store.event_count_by_device("b")), 1);
        assert_eq!(ok(store.event_count_by_device("c")), 0);
        assert_eq!(ok(store.event_count_by_device("")), 0);
    }

    pub fn all_lists_are_in_id_order(store: &mut dyn CoreData) {
        // created runs against insertion order, so only id order gives this result.
        let e1 = add_event(store, event("a", 3000, &["x"]));
        let r1 = add_reading(store, reading("b", "y", 2500));
        let e2 = add_event(store, event("b", 1000, &["x", "y"]));
        let r2 = add_reading(store, reading("a", "x", 500));
        let e3 = add_event(store, event("a", 2000, &[]));
        assert_eq!(ok(store.events()), vec![e1.clone(), e2.clone(), e3]);
        let mut expected = e1.readings.clone();
        expected.push(r1);
        expected.extend(e2.readings.iter().cloned());
        expected.push(r2);
        assert_eq!(ok(store.readings()), expected);
    }

    pub fn lists_by_device_and_name_are_by_created_then_id(store: &mut dyn CoreData) {
        let created = [30, 10, 20, 10, 30];
        let order = [1, 3, 2, 0, 4]; // by created, ties in insertion (= id) order
        let rs: Vec<Reading> = created
            .iter()
            .map(|&c| {
                add_reading(store, reading("x", "noise", c + 1));
                add_reading(store, reading("d", "n", c))
            })
            .collect();
        assert_eq!(
            ok(store.readings_by_device("d", UNLIMITED)),
            pick(&rs, &order)
        );
        assert_eq!(
            ok(store.readings_by_name("n", UNLIMITED)),
            pick(&rs, &order)
        );

        let es: Vec<Event> = created
            .iter()
            .map(|&c| {
                add_event(store, event("x", c + 1, &["noise"]));
                add_event(store, event("d", c, &["n"]))
            })
            .collect();
        assert_eq!(ok(store.events_for_device("d")), pick(&es, &order));
        assert_eq!(
            ok(store.events_for_device_limit("d", 2)),
            pick(&es, &order[..2])
        );
    }

    pub fn limits_are_exact(store: &mut dyn CoreData) {
        let rs: Vec<Reading> = (1..=5)
            .map(|c| add_reading(store, reading("d", "n", c)))
            .collect();
        let es: Vec<Event> = (1..=5)
            .map(|c| add_event(store, event("d", c, &[])))
            .collect();
        for (limit, n) in [(0, 0), (1, 1), (3, 3), (5, 5), (6, 5), (UNLIMITED, 5)] {
            let want_r = rs[..n].to_vec();
            let want_e = es[..n].to_vec();
            assert_eq!(ok(store.readings_by_device("d", limit)), want_r, "{limit}");
            assert_eq!(ok(store.readings_by_name("n", limit)), want_r, "{limit}");
            assert_eq!(
                ok(store.readings_by_names(&["n"], limit)),
                want_r,
                "{limit}"
            );
            assert_eq!(
                ok(store.readings_by_device_and_name("d", "n", limit)),
                want_r,
                "{limit}"
            );
            assert_eq!(
                ok(store.readings_by_creation_time(0, 100, limit)),
                want_r,
                "{limit}"
            );
            assert_eq!(
                ok(store.events_for_device_limit("d", limit)),
                want_e,
                "{limit}"
            );
            assert_eq!(
                ok(store.events_by_creation_time(0, 100, limit)),
                want_e,
                "{limit}"
            );
        }
    }

    pub fn time_ranges_are_inclusive_at_both_ends(store: &mut dyn CoreData) {
        let created = [100, 200, 300, 400, 200];
        let rs: Vec<Reading> = created
            .iter()
            .map(|&c| add_reading(store, reading("d", "n", c)))
            .collect();
        let es: Vec<Event> = created
            .iter()
            .map(|&c| add_event(store, event("d", c, &[])))
            .collect();
        // (start, end, limit) -> indexes, by created then id.
        let cases: [(i64, i64, usize, &[usize]); 7] = [
            (200, 300, UNLIMITED, &[1, 4, 2]),
            (201, 299, UNLIMITED, &[]),
            (400, 400, UNLIMITED, &[3]),
            (0, 1000, 2, &[0, 1]),
            (0, 1000, UNLIMITED, &[0, 1, 4, 2, 3]),
            (300, 200, UNLIMITED, &[]),
            (200, 200, 1, &[1]),
        ];
        for (start, end, limit, order) in cases {
            assert_eq!(
                ok(store.readings_by_creation_time(start, end, limit)),
                pick(&rs, order),
                "readings [{start}, {end}] limit {limit}"
            );
            assert_eq!(
                ok(store.events_by_creation_time(start, end, limit)),
                pick(&es, order),
                "events [{start}, {end}] limit {limit}"
            );
        }
    }

    pub fn events_older_than_age_are_strictly_older(store: &mut dyn CoreData) {
        // 20 s between events: far more than the test can take between add and query.
        let now = now_ms();
        let es: Vec<Event> = [now - 60_000, now - 40_000, now - 20_000, 0]
            .iter()
            .map(|&c| add_event(store, event("d", c, &["a", "b"])))
            .collect();
        assert_eq!(ok(store.events_older_than_age(50_000)), pick(&es, &[0]));
        assert_eq!(ok(store.events_older_than_age(30_000)), pick(&es, &[0, 1]));
        assert_eq!(
            ok(store.events_older_than_age(10_000)),
            pick(&es, &[0, 1, 2])
        );
        assert_eq!(ok(store.events_older_than_age(3_600_000)), vec![]);
    }

    pub fn events_pushed_are_by_pushed_then_id(store: &mut dyn CoreData) {
        let es: Vec<Event> = [0, 300, 100, 300, 0, 200]
            .iter()
            .map(|&pushed| {
                add_event(
                    store,
                    Event {
                        pushed,
                        ..event("d", 0, &["x"])
                    },
                )
            })
            .collect();
        assert_eq!(ok(store.events_pushed()), pick(&es, &[2, 5, 1, 3]));

        // Pushing an event later moves it into the list, at its pushed time.
        ok(store.update_event(&Event {
            id: es[0].id.clone(),
            pushed: 150,
            ..Event::default()
        }));
        let pushed: Vec<(String, i64)> = ok(store.events_pushed())
            .into_iter()
            .map(|e| (e.id, e.pushed))
            .collect();
        let want: Vec<(String, i64)> = [(2, 100), (0, 150), (5, 200), (1, 300), (3, 300)]
            .iter()
            .map(|&(i, p)| (es[i].id.clone(), p))
            .collect();
        assert_eq!(pushed, want);
    }

    pub fn readings_by_names_go_name_by_name_up_to_the_limit(store: &mut dyn CoreData) {
        let rs: Vec<Reading> = [("a", 20), ("b", 10), ("a", 10), ("c", 5), ("b", 30)]
            .iter()
            .map(|&(name, c)| add_reading(store, reading("d", name, c)))
            .collect();
        let by = |store: &mut dyn CoreData, names: &[&str], limit| {
            ok(store.readings_by_names(names, limit))
        };
        assert_eq!(by(store, &["b", "a"], UNLIMITED), pick(&rs, &[1, 4, 2, 0]));
        assert_eq!(by(store, &["b", "a"], 3), pick(&rs, &[1, 4, 2]));
        assert_eq!(by(store, &["b", "a"], 2), pick(&rs, &[1, 4]));
        assert_eq!(by(store, &["b", "a"], 1), pick(&rs, &[1]));
        assert_eq!(by(store, &["b", "a"], 0), vec![]);
        assert_eq!(
            by(store, &["nope", "c", "a"], UNLIMITED),
            pick(&rs, &[3, 2, 0])
        );
        assert_eq!(by(store, &[], UNLIMITED), vec![]);
    }

    pub fn readings_by_device_and_name_are_exact(store: &mut dyn CoreData) {
        let rs: Vec<Reading> = [
            ("d1", "n1", 30),
            ("d1", "n2", 10),
            ("d2", "n1", 5),
            ("d1", "n1", 10),
            ("d1", "n1", 20),
            ("d2", "n2", 10),
        ]
        .iter()
        .map(|&(d, n, c)| add_reading(store, reading(d, n, c)))
        .collect();
        let by = |store: &mut dyn CoreData, d, n, limit| {
            ok(store.readings_by_device_and_name(d, n, limit))
        };
        assert_eq!(by(store, "d1", "n1", UNLIMITED), pick(&rs, &[3, 4, 0]));
        assert_eq!(by(store, "d1", "n1", 2), pick(&rs, &[3, 4]));
        assert_eq!(by(store, "d1", "n2", UNLIMITED), pick(&rs, &[1]));
        assert_eq!(by(store, "d2", "n1", UNLIMITED), pick(&rs, &[2]));
        assert_eq!(by(store, "d2", "n3", UNLIMITED), vec![]);
        assert_eq!(by(store, "d3", "n1", UNLIMITED), vec![]);
        assert_eq!(by(store, "d1", "n1", 0), vec![]);
    }

    pub fn delete_event_deletes_its_readings(store: &mut dyn CoreData) {
        let gone = add_event(store, event("d", 100, &["a", "b", "c"]));
        let kept = add_event(store, event("d", 200, &["a", "b"]));
        let lone = add_reading(store, reading("d", "a", 300));
        ok(store.delete_event_by_id(&gone.id));

        assert_eq!(ok(store.event_count()), 1);
        assert_eq!(ok(store.event_count_by_device("d")), 1);
        assert_eq!(ok(store.reading_count()), 3);
        assert_eq!(ok(store.events()), vec![kept.clone()]);
        assert_eq!(ok(store.events_for_device("d")), vec![kept.clone()]);
        assert_eq!(
            ok(store.events_by_creation_time(0, 1000, UNLIMITED)),
            vec![kept.clone()]
        );
        let mut remaining = kept.readings.clone();
        remaining.push(lone.clone());
        assert_eq!(ok(store.readings()), remaining);
        assert_eq!(ok(store.readings_by_device("d", UNLIMITED)), remaining);
        assert_eq!(
            ok(store.readings_by_creation_time(0, 1000, UNLIMITED)),
            remaining
        );
        assert_eq!(
            ok(store.readings_by_name("a", UNLIMITED)),
            vec![kept.readings[0].clone(), lone]
        );
        assert_eq!(ok(store.readings_by_name("c", UNLIMITED)), vec![]);
        assert_not_found(store.event_by_id(&gone.id), "event", &gone.id);
        for r in &gone.readings {
            assert_not_found(store.reading_by_id(&r.id), "reading", &r.id);
        }
        assert_not_found(store.delete_event_by_id(&gone.id), "event", &gone.id);
    }

    pub fn delete_reading_removes_it_from_its_event(store: &mut dyn CoreData) {
        let e = add_event(store, event("d", 100, &["a", "b", "c"]));
        let (r0, r1, r2) = (&e.readings[0], &e.readings[1], &e.readings[2]);
        ok(store.delete_reading_by_id(&r1.id));

        let mut without = e.clone();
        without.readings.remove(1);
        assert_eq!(ok(store.event_by_id(&e.id)), without);
        assert_eq!(ok(store.events()), vec![without.clone()]);
        assert_eq!(ok(store.events_for_device("d")), vec![without]);
        assert_eq!(ok(store.reading_count()), 2);
        assert_eq!(ok(store.readings()), vec![r0.clone(), r2.clone()]);
        assert_eq!(
            ok(store.readings_by_device("d", UNLIMITED)),
            vec![r0.clone(), r2.clone()]
        );
        assert_eq!(ok(store.readings_by_name("b", UNLIMITED)), vec![]);
        assert_eq!(
            ok(store.readings_by_device_and_name("d", "b", UNLIMITED)),
            vec![]
        );
        assert_eq!(
            ok(store.readings_by_creation_time(100, 100, UNLIMITED)),
            vec![r0.clone(), r2.clone()]
        );
        assert_not_found(store.reading_by_id(&r1.id), "reading", &r1.id);
        assert_not_found(store.delete_reading_by_id(&r1.id), "reading", &r1.id);

        // The event still deletes cleanly, with its remaining readings.
        ok(store.delete_event_by_id(&e.id));
        assert_eq!(ok(store.event_count()), 0);
        assert_eq!(ok(store.reading_count()), 0);
        assert_eq!(ok(store.readings()), vec![]);
    }

    pub fn update_event_merges_and_keeps_readings(store: &mut dyn CoreData) {
        let e = add_event(
            store,
            Event {
                origin: 5,
                modified: 1,
                event: "s1".into(),
                ..event("a", 1000, &["x", "y"])
            },
        );
        // Empty and zero fields keep the stored value; id and created never change, even when
        // the argument carries a different non-zero created.
        let before = now_ms();
        ok(store.update_event(&Event {
            id: e.id.clone(),
            pushed: 77,
            created: 999_999,
            modified: 2,
            event: "s2".into(),
            readings: vec![reading("zz", "zz", 1)],
            ..Event::default()
        }));
        let after = now_ms();
        let got = ok(store.event_by_id(&e.id));
        assert!(
            (before..=after).contains(&got.modified),
            "modified {} not in [{before}, {after}]",
            got.modified
        );
        assert_eq!(
            got.created, 1000,
            "created is immutable: a non-zero created is ignored"
        );
        let want = Event {
            pushed: 77,
            event: "s2".into(),
            modified: got.modified,
            ..e.clone()
        };
        assert_eq!(got, want);
        assert_eq!(ok(store.events_pushed()), vec![want.clone()]);
        assert_eq!(ok(store.reading_count()), 2);

        // A new device moves the event between device indexes; its readings stay as they are.
        ok(store.update_event(&Event {
            id: e.id.clone(),
            device: "b".into(),
            origin: 6,
            ..Event::default()
        }));
        let got = ok(store.event_by_id(&e.id));
        assert_eq!(
            got,
            Event {
                device: "b".into(),
                origin: 6,
                modified: got.modified,
                ..want
            }
        );
        assert!(got.readings.iter().all(|r| r.device == "a"));
        assert_eq!(ok(store.events_for_device("a")), vec![]);
        assert_eq!(ok(store.events_for_device("b")), vec![got.clone()]);
        assert_eq!(ok(store.event_count_by_device("a")), 0);
        assert_eq!(ok(store.event_count_by_device("b")), 1);
        assert_eq!(
            ok(store.events_by_creation_time(1000, 1000, UNLIMITED)),
            vec![got]
        );
        assert_eq!(ok(store.readings_by_device("a", UNLIMITED)), e.readings);
    }

    /// A record stored with an empty device or name is indexed under the empty suffix; an
    /// update that gives it one moves it out of there (the Embedded_Direct store once
    /// panicked on this).
    pub fn updates_move_records_out_of_empty_device_and_name(store: &mut dyn CoreData) {
        let r = add_reading(store, reading("", "", 1000));
        let e = add_event(store, event("", 1000, &[]));
        ok(store.update_reading(&Reading {
            id: r.id.clone(),
            device: "dev1".into(),
            name: "n1".into(),
            ..Reading::default()
        }));
        ok(store.update_event(&Event {
            id: e.id.clone(),
            device: "dev1".into(),
            ..Event::default()
        }));
        assert_eq!(
            ids_r(&ok(store.readings_by_device("dev1", UNLIMITED))),
            [r.id.as_str()]
        );
        assert_eq!(
            ids_r(&ok(store.readings_by_name("n1", UNLIMITED))),
            [r.id.as_str()]
        );
        assert!(ok(store.readings_by_device("", UNLIMITED)).is_empty());
        assert!(ok(store.readings_by_name("", UNLIMITED)).is_empty());
        let moved: Vec<String> = ok(store.events_for_device("dev1"))
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(moved, std::slice::from_ref(&e.id));
        assert!(ok(store.events_for_device("")).is_empty());
        assert_eq!(ok(store.event_count_by_device("")), 0);
    }

    pub fn update_reading_merges_and_moves_indexes(store: &mut dyn CoreData) {
        let r = add_reading(
            store,
            Reading {
                origin: 5,
                ..reading("d1", "n1", 1000)
            },
        );
        let before = now_ms();
        ok(store.update_reading(&Reading {
            id: r.id.clone(),
            device: "d2".into(),
            value: "v2".into(),
            pushed: 9,
            created: 5,
            modified: 1,
            ..Reading::default()
        }));
        let after = now_ms();
        let got = ok(store.reading_by_id(&r.id));
        assert!((before..=after).contains(&got.modified), "{}", got.modified);
        assert_eq!(
            got.created, 1000,
            "created is immutable: a non-zero created is ignored"
        );
        let want = Reading {
            device: "d2".into(),
            value: "v2".into(),
            pushed: 9,
            modified: got.modified,
            ..r.clone()
        };
        assert_eq!(got, want);
        assert_eq!(ok(store.readings_by_device("d1", UNLIMITED)), vec![]);
        assert_eq!(
            ok(store.readings_by_device("d2", UNLIMITED)),
            vec![want.clone()]
        );
        assert_eq!(
            ok(store.readings_by_name("n1", UNLIMITED)),
            vec![want.clone()]
        );
        assert_eq!(
            ok(store.readings_by_device_and_name("d2", "n1", UNLIMITED)),
            vec![want.clone()]
        );
        assert_eq!(
            ok(store.readings_by_creation_time(1000, 1000, UNLIMITED)),
            vec![want.clone()]
        );

        ok(store.update_reading(&Reading {
            id: r.id.clone(),
            name: "n2".into(),
            ..Reading::default()
        }));
        let got = ok(store.reading_by_id(&r.id));
        let want = Reading {
            name: "n2".into(),
            modified: got.modified,
            ..want
        };
        assert_eq!(got, want);
        assert_eq!(ok(store.readings_by_name("n1", UNLIMITED)), vec![]);
        assert_eq!(
            ok(store.readings_by_name("n2", UNLIMITED)),
            vec![want.clone()]
        );
        assert_eq!(ok(store.readings()), vec![want]);
        assert_eq!(ok(store.reading_count()), 1);
    }

    pub fn by_id_calls_reject_malformed_and_unknown_ids(store: &mut dyn CoreData) {
        let bad_ids = [
            "",
            "xyz",
            "5b4f0000000000000000000g",
            "5b4f00000000000000000001a",
        ];
        for bad in bad_ids {
            assert_invalid(store.event_by_id(bad), bad);
            assert_invalid(store.delete_event_by_id(bad), bad);
            assert_invalid(
                store.update_event(&Event {
                    id: bad.into(),
                    ..Event::default()
                }),
                bad,
            );
            assert_invalid(store.reading_by_id(bad), bad);
            assert_invalid(store.delete_reading_by_id(bad), bad);
            assert_invalid(
                store.update_reading(&Reading {
                    id: bad.into(),
                    ..Reading::default()
                }),
                bad,
            );
        }

        let unknown = ObjectId::new().to_string();
        assert_not_found(store.event_by_id(&unknown), "event", &unknown);
        assert_not_found(store.delete_event_by_id(&unknown), "event", &unknown);
        assert_not_found(
            store.update_event(&Event {
                id: unknown.clone(),
                device: "d".into(),
                ..Event::default()
            }),
            "event",
            &unknown,
        );
        assert_not_found(store.reading_by_id(&unknown), "reading", &unknown);
        assert_not_found(store.delete_reading_by_id(&unknown), "reading", &unknown);
        assert_not_found(
            store.update_reading(&Reading {
                id: unknown.clone(),
                value: "v".into(),
                ..Reading::default()
            }),
            "reading",
            &unknown,
        );

        // An event's id names no reading, and a reading's id names no event.
        let e = add_event(store, event("d", 0, &["a"]));
        let r = &e.readings[0];
        assert_not_found(store.reading_by_id(&e.id), "reading", &e.id);
        assert_not_found(store.delete_reading_by_id(&e.id), "reading", &e.id);
        assert_not_found(store.event_by_id(&r.id), "event", &r.id);
        assert_not_found(store.delete_event_by_id(&r.id), "event", &r.id);
        assert_eq!(ok(store.event_by_id(&e.id)), e);
        assert_eq!(ok(store.reading_count()), 1);

        // Failed calls changed nothing.
        assert_eq!(ok(store.event_count()), 1);
        assert_eq!(ok(store.events_for_device("d")), vec![e]);
    }

    pub fn ids_are_case_insensitive(store: &mut dyn CoreData) {
        let e = add_event(store, event("d", 100, &["a", "b"]));
        let lone = add_reading(store, reading("d", "c", 200));
        // (An id without a-f is its own upper-case form; that is 1 id in 10^5.)
        let upper = |id: &str| id.to_ascii_uppercase();

        // Gets by the upper-case form find the record, with its lowercase id.
        for r in e.readings.iter().chain([&lone]) {
            assert_eq!(ok(store.reading_by_id(&upper(&r.id))), *r);
        }
        assert_eq!(ok(store.event_by_id(&upper(&e.id))), e);

        // Updates by the upper-case form change the record in place: same id, same indexes.
        ok(store.update_event(&Event {
            id: upper(&e.id),
            device: "d2".into(),
            ..Event::default()
        }));
        let got = ok(store.event_by_id(&e.id));
        assert_eq!(got.id, e.id);
        assert_eq!(got.device, "d2");
        assert_eq!(ok(store.events()), vec![got.clone()]);
        assert_eq!(ok(store.events_for_device("d2")), vec![got.clone()]);
        ok(store.update_reading(&Reading {
            id: upper(&lone.id),
            value: "v2".into(),
            ..Reading::default()
        }));
        let lone = ok(store.reading_by_id(&lone.id));
        assert_eq!(lone.value, "v2");
        assert_eq!(
            ok(store.readings_by_name("c", UNLIMITED)),
            vec![lone.clone()]
        );
        assert_eq!(ok(store.reading_count()), 3);

        // Deletes by the upper-case form delete the record and its index entries.
        let (r0, r1) = (&e.readings[0], &e.readings[1]);
        ok(store.delete_reading_by_id(&upper(&r0.id)));
        assert_not_found(store.reading_by_id(&r0.id), "reading", &r0.id);
        assert_eq!(ok(store.event_by_id(&e.id)).readings, vec![r1.clone()]);
        ok(store.delete_event_by_id(&upper(&e.id)));
        assert_not_found(store.event_by_id(&e.id), "event", &e.id);
        assert_not_found(store.reading_by_id(&r1.id), "reading", &r1.id);
        assert_eq!(ok(store.event_count()), 0);
        assert_eq!(ok(store.events_for_device("d2")), vec![]);
        assert_eq!(ok(store.readings()), vec![lone.clone()]);
        ok(store.delete_reading_by_id(&upper(&lone.id)));
        assert_eq!(ok(store.reading_count()), 0);
        assert_eq!(ok(store.readings_by_device("d", UNLIMITED)), vec![]);
    }

    pub fn scrub_all_events_empties_the_store(store: &mut dyn CoreData) {
        ok(store.scrub_all_events()); // on an empty store, too
        let e = add_event(store, event("d", 100, &["a", "b"]));
        add_event(
            store,
            Event {
                pushed: 5,
                ..event("e", 200, &["a"])
            },
        );
        add_reading(store, reading("d", "a", 300));
        ok(store.delete_reading_by_id(&e.readings[0].id)); // leaves a dangling link in Redis
        ok(store.update_event(&Event {
            id: e.id.clone(),
            device: "f".into(),
            ..Event::default()
        }));
        ok(store.scrub_all_events());

        assert_eq!(ok(store.event_count()), 0);
        assert_eq!(ok(store.reading_count()), 0);
        for device in ["d", "e", "f"] {
            assert_eq!(ok(store.event_count_by_device(device)), 0);
            assert_eq!(ok(store.events_for_device(device)), vec![]);
            assert_eq!(ok(store.readings_by_device(device, UNLIMITED)), vec![]);
        }
        assert_eq!(ok(store.events()), vec![]);
        assert_eq!(ok(store.readings()), vec![]);
        assert_eq!(ok(store.events_pushed()), vec![]);
        assert_eq!(ok(store.events_older_than_age(0)), vec![]);
        assert_eq!(
            ok(store.events_by_creation_time(0, 1000, UNLIMITED)),
            vec![]
        );
        assert_eq!(
            ok(store.readings_by_creation_time(0, 1000, UNLIMITED)),
            vec![]
        );
        assert_eq!(ok(store.readings_by_name("a", UNLIMITED)), vec![]);
        assert_not_found(store.event_by_id(&e.id), "event", &e.id);
        let r = &e.readings[1];
        assert_not_found(store.reading_by_id(&r.id), "reading", &r.id);

        // The store is usable again.
        let again = add_event(store, event("d", 100, &["a"]));
        assert_eq!(ok(store.events()), vec![again]);
        assert_eq!(ok(store.reading_count()), 1);
    }

    pub fn events_come_back_with_readings_in_added_order(store: &mut dyn CoreData) {
        let names = ["z", "a", "m", "b", "y"];
        let e = add_event(
            store,
            Event {
                pushed: 1,
                ..event("d", now_ms() - 60_000, &names)
            },
        );
        let got = ok(store.event_by_id(&e.id));
        let got_names: Vec<&str> = got.readings.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(got_names, names);
        // Real readings, not the zero values the 2018 client returned (reference §3.6).
        assert!(got.readings.iter().all(|r| r.value.starts_with(&r.name)));
        assert_eq!(ids_r(&got.readings), ids_r(&e.readings));
        // Every list of events carries the readings the same way.
        let single = vec![e];
        assert_eq!(ok(store.events()), single);
        assert_eq!(ok(store.events_for_device("d")), single);
        assert_eq!(ok(store.events_for_device_limit("d", 1)), single);
        assert_eq!(
            ok(store.events_by_creation_time(0, i64::from(u32::MAX) * 1000, UNLIMITED)),
            single
        );
        assert_eq!(ok(store.events_older_than_age(1000)), single);
        assert_eq!(ok(store.events_pushed()), single);
    }
}

/// What only the Redis store has: the 2018 key layout, checked over a raw connection.
mod redis_layout {
    use edgebench::target::Target;
    use edgebench::v2018::Event;
    use edgebench::v2018::Reading;

    fn raw(target: &Target) -> redis::Connection {
        let client = redis::Client::open(target.endpoint()).unwrap_or_else(|e| panic!("{e}"));
        client.get_connection().unwrap_or_else(|e| panic!("{e}"))
    }

    fn query<T: redis::FromRedisValue>(conn: &mut redis::Connection, args: &[&str]) -> T {
        let mut cmd = redis::cmd(args[0]);
        for arg in &args[1..] {
            cmd.arg(*arg);
        }
        cmd.query(conn).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    #[test]
    fn writes_the_2018_key_layout_with_bare_hex_links() {
        super::common::require_redis_server();
        let target = super::common::start("redis-tcp");
        let mut store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
        let mut e = Event {
            device: "dev".into(),
            created: 1000,
            pushed: 7,
            readings: ["n0", "n1"]
                .iter()
                .map(|n| Reading {
                    name: n.to_string(),
                    ..Reading::default()
                })
                .collect(),
            ..Event::default()
        };
        store
            .add_event(&mut e)
            .unwrap_or_else(|err| panic!("{err}"));
        let (r0, r1) = (e.readings[0].id.as_str(), e.readings[1].id.as_str());

        let mut conn = raw(&target);
        let mut keys: Vec<String> = query(&mut conn, &["KEYS", "*"]);
        keys.sort();
        let mut want: Vec<String> = [
            e.id.as_str(),
            r0,
            r1,
            "event",
            "event:created",
            "event:pushed",
            "event:device:dev",
            &format!("event:readings:{}", e.id),
            "reading",
            "reading:created",
            "reading:device:dev",
            "reading:name:n0",
            "reading:name:n1",
        ]
        .iter()
        .map(|k| k.to_string())
        .collect();
        want.sort();
        assert_eq!(keys, want);

        let with_scores = |conn: &mut redis::Connection, key: &str| -> Vec<(String, i64)> {
            query(conn, &["ZRANGE", key, "0", "-1", "WITHSCORES"])
        };
        let links = format!("event:readings:{}", e.id);
        assert_eq!(
            with_scores(&mut conn, &links),
            [(r0.to_string(), 0), (r1.to_string(), 1)]
        );
        assert_eq!(with_scores(&mut conn, "event"), [(e.id.clone(), 0)]);
        assert_eq!(
            with_scores(&mut conn, "event:created"),
            [(e.id.clone(), 1000)]
        );
        assert_eq!(with_scores(&mut conn, "event:pushed"), [(e.id.clone(), 7)]);
        assert_eq!(
            with_scores(&mut conn, "reading:device:dev"),
            [(r0.to_string(), 1000), (r1.to_string(), 1000)]
        );
        assert_eq!(
            with_scores(&mut conn, "reading:name:n1"),
            [(r1.to_string(), 1000)]
        );
    }

    #[test]
    fn scrub_leaves_an_empty_keyspace() {
        super::common::require_redis_server();
        let target = super::common::start("redis-uds");
        let mut store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
        for i in 0..5000 {
            let mut r = Reading {
                device: format!("device{}", i / 100),
                name: format!("test{i}"),
                ..Reading::default()
            };
            store.add_reading(&mut r).unwrap_or_else(|e| panic!("{e}"));
        }
        let mut e = Event {
            device: "d".into(),
            readings: vec![Reading::default(); 5],
            ..Event::default()
        };
        store
            .add_event(&mut e)
            .unwrap_or_else(|err| panic!("{err}"));
        store
            .delete_reading_by_id(&e.readings[0].id)
            .unwrap_or_else(|err| panic!("{err}"));
        let mut conn = raw(&target);
        assert!(query::<usize>(&mut conn, &["DBSIZE"]) > 5000);
        store
            .scrub_all_events()
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(query::<usize>(&mut conn, &["DBSIZE"]), 0);
    }
}

/// What only the MongoDB store has: how many queries an event list costs in each layout and
/// fidelity, and which index serves each query, from the commands the driver sent.
mod mongo_queries {
    use std::sync::{Arc, Mutex};

    use edgebench::store::mongo::{Fidelity, MongoDatabase, MongoLayout};
    use edgebench::store::{CoreData, StoreResult, UNLIMITED};
    use edgebench::v2018::{Event, Reading};
    use mongodb::bson::Document;
    use mongodb::event::command::CommandEvent;
    use mongodb::event::EventHandler;
    use mongodb::options::ClientOptions;

    type Finds = Arc<Mutex<Vec<Document>>>;

    /// A private database whose client records the `find` commands it sends.
    fn recorded(layout: MongoLayout, fidelity: Fidelity) -> (MongoDatabase, Finds) {
        let url = super::common::mongo::server_url();
        let mut options = ClientOptions::parse(&url)
            .run()
            .unwrap_or_else(|e| panic!("{e}"));
        let finds = Finds::default();
        let log = Arc::clone(&finds);
        options.command_event_handler = Some(EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                if started.command_name == "find" {
                    log.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(started.command);
                }
            }
        }));
        let db = MongoDatabase::create_with_options(options, layout, fidelity)
            .unwrap_or_else(|e| panic!("{e}"));
        (db, finds)
    }

    fn taken(finds: &Finds) -> Vec<Document> {
        std::mem::take(&mut *finds.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// 4 events of 3 readings and one without (12 readings), and 2 lone readings.
    fn fill(store: &mut dyn CoreData) -> Vec<Event> {
        for name in ["n0", "x"] {
            let mut r = Reading {
                device: "d".into(),
                name: name.into(),
                created: 50,
                ..Reading::default()
            };
            store.add_reading(&mut r).unwrap_or_else(|e| panic!("{e}"));
        }
        (0..5)
            .map(|i| {
                let mut e = Event {
                    device: "d".into(),
                    created: 100 + i,
                    pushed: i,
                    readings: (0..if i == 4 { 0 } else { 3 })
                        .map(|j| Reading {
                            name: format!("n{j}"),
                            value: format!("{i}.{j}"),
                            ..Reading::default()
                        })
                        .collect(),
                    ..Event::default()
                };
                store
                    .add_event(&mut e)
                    .unwrap_or_else(|err| panic!("{err}"));
                e
            })
            .collect()
    }

    /// Checks the `find` commands an event list sends: `cost(n)` for a list holding n readings.
    fn check(layout: MongoLayout, fidelity: Fidelity, cost: fn(usize) -> usize) {
        let (db, finds) = recorded(layout, fidelity);
        let mut store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
        let events = fill(&mut store);
        let what = format!("{layout} layout, fidelity {fidelity}");
        taken(&finds);

        let got = store.events().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, events, "{what}");
        assert_eq!(taken(&finds).len(), cost(12), "events(): {what}");

        let got = store
            .events_for_device_limit("d", 2)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, events[..2], "{what}");
        assert_eq!(
            taken(&finds).len(),
            cost(6),
            "events_for_device_limit: {what}"
        );

        let got = store
            .event_by_id(&events[1].id)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, events[1], "{what}");
        assert_eq!(taken(&finds).len(), cost(3), "event_by_id: {what}");
    }

    #[test]
    fn embedded_events_load_in_one_query() {
        check(MongoLayout::Embedded, Fidelity::Modern, |_| 1);
        // There is no per-reading query to make: 2018 fidelity reads the same way.
        check(MongoLayout::Embedded, Fidelity::Y2018, |_| 1);
    }

    #[test]
    fn referenced_events_load_their_readings_in_one_more_query() {
        check(MongoLayout::Referenced, Fidelity::Modern, |_| 2);
    }

    #[test]
    fn referenced_2018_events_load_one_query_per_reading() {
        check(MongoLayout::Referenced, Fidelity::Y2018, |readings| {
            1 + readings
        });
    }

    #[track_caller]
    fn done<T>(result: StoreResult<T>) {
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// Every filtered `find` a CoreData read sends, in both layouts, is an index scan. (An
    /// "all" list has an empty filter: a real mongod walks the `_id` index for its sort, while
    /// SecantusDB, the CI server, scans and sorts; its plan says nothing about ours.)
    #[test]
    fn every_filtered_query_is_served_by_an_index() {
        for layout in [MongoLayout::Embedded, MongoLayout::Referenced] {
            let (db, finds) = recorded(layout, Fidelity::Modern);
            let mut store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
            let events = fill(&mut store);
            let (e, r) = (&events[0], &events[0].readings[0]);
            taken(&finds);
            done(store.event_by_id(&e.id));
            done(store.events());
            done(store.events_for_device_limit("d", 2));
            done(store.events_by_creation_time(101, 103, UNLIMITED));
            done(store.events_older_than_age(1000));
            done(store.events_pushed());
            done(store.reading_by_id(&r.id));
            done(store.readings());
            done(store.readings_by_device("d", 3));
            done(store.readings_by_name("n1", UNLIMITED));
            done(store.readings_by_names(&["n1", "n2"], 4));
            done(store.readings_by_device_and_name("d", "n0", 2));
            done(store.readings_by_creation_time(50, 101, UNLIMITED));

            let sent = taken(&finds);
            let filtered: Vec<&Document> = sent
                .iter()
                .filter(|find| find.get_document("filter").is_ok_and(|f| !f.is_empty()))
                .collect();
            // Everything but events() and readings() filters.
            assert_eq!(filtered.len(), sent.len() - 2, "{layout}: {sent:?}");
            for find in filtered {
                let names = super::common::mongo::plan_of(db.client(), db.name(), find);
                assert!(
                    super::common::mongo::is_index_scan(&names),
                    "{layout}: {find} runs as {names:?}"
                );
            }
        }
    }
}
