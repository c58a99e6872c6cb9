//! Geo commands, differentially against a real redis-server: every command and option,
//! the limits of the coordinate ranges (the poles' cut-off, the antimeridian, the equator),
//! zero and huge radii, boxes, COUNT with and without ANY, STORE and STOREDIST, units,
//! and the errors (wrong type, bad coordinates, missing members, bad units, syntax, option
//! conflicts). A seeded random test compares a few hundred random points and searches
//! exactly, order included, on a small (listpack) and a large (skip list) set. RESP3
//! coordinates are compared as raw bytes, since redis-rs parses a double to a number.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use crate::support::diff::Diff;
use crate::support::redis_server::RedisServer;
use edgebench_engine::engine::cmd::geo::{GeoFrom, GeoOrder, GeoQuery, ShapeKind, Unit};
use edgebench_engine::engine::types::zset::AddFlags;
use edgebench_engine::engine::{CmdError, Engine};
use edgebench_engine::resp::{encode::to_bytes, Protocol};
use edgebench_engine::server::Address;

/// Sicily's two cities (Redis's documentation example) and a few more.
const PLACES: &str =
    "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge2 13.583333 37.316667 Agrigento";

/// Runs a script written one command a line: arguments split at spaces, `''` for an empty
/// one; every reply must equal redis-server's.
fn check(d: &mut Diff, script: &[&str]) {
    for line in script {
        let args: Vec<&str> = line
            .split(' ')
            .filter(|a| !a.is_empty())
            .map(|a| if a == "''" { "" } else { a })
            .collect();
        d.check(&[&args]);
    }
}

#[test]
fn geoadd_options_and_errors_match_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
            PLACES,
            "GEOADD Sicily 13.361389 38.115556 Palermo",
            "GEOADD Sicily CH 13.361389 38.115556 Palermo",
            "GEOADD Sicily CH 13.4 38.1 Palermo 1 1 new",
            "GEOADD Sicily NX 0 0 Palermo 2 2 nx1",
            "GEOADD Sicily NX CH 0 0 Palermo 2 2 nx2",
            "GEOADD Sicily XX 0 0 Palermo 3 3 xx1",
            "GEOADD Sicily xx ch 1 1 Palermo 3 3 xx2",
            "GEOADD Sicily ch ch xx 2 2 Palermo",
            "ZRANGE Sicily 0 -1 WITHSCORES",
            "GEOADD missing XX 1 1 a",
            "EXISTS missing",
            // Syntax: NX with XX, point lists not in threes, no points, other ZADD options.
            "GEOADD Sicily NX XX 1 1 a",
            "GEOADD Sicily 1 1 a 2",
            "GEOADD Sicily 1 1 a 2 2",
            "GEOADD Sicily ch ch ch",
            "GEOADD Sicily GT 1 1 a",
            "GEOADD Sicily INCR 1 1",
            "GEOADD Sicily 1 1",
            "GEOADD Sicily",
            // Coordinates: not numbers, out of range (the message prints them with %f).
            "GEOADD Sicily x 1 a",
            "GEOADD Sicily 1 '' a",
            "GEOADD Sicily 1 nan a",
            "GEOADD Sicily 180.000001 0 a",
            "GEOADD Sicily -180.0000001 0 a",
            "GEOADD Sicily 0 85.05112879 a",
            "GEOADD Sicily 0 -85.051128781 a",
            "GEOADD Sicily 1e300 0 a",
            "GEOADD Sicily -inf 0 a",
            "GEOADD Sicily -0 1000 a",
            "GEOADD Sicily 190.0078125 -90.5 a",
            // A bad point anywhere stops the whole command.
            "GEOADD Sicily 1 1 ok 1 100 bad",
            "ZSCORE Sicily ok",
            // The limits themselves are accepted.
            "GEOADD Sicily 180 85.05112878 ne -180 -85.05112878 sw",
            "GEOADD Sicily 0x10 1e1 hex -0 -0 zero",
            "ZRANGE Sicily 0 -1 WITHSCORES",
            // Wrong type, after the coordinates are checked.
            "SET str x",
            "GEOADD str 1 1 a",
            "GEOADD str 1 100 a",
            "GEOADD str nx xx 1 1 a",
        ],
    );
}

#[test]
fn geopos_geohash_geodist_match_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
        PLACES,
        "GEOPOS Sicily Palermo Catania nosuch edge2",
        "GEOHASH Sicily Palermo Catania nosuch edge2 Agrigento",
        "GEOPOS missing a b",
        "GEOHASH missing a b",
        "GEOPOS Sicily",
        "GEOHASH Sicily",
        "GEODIST Sicily Palermo Catania",
        "GEODIST Sicily Palermo Catania m",
        "GEODIST Sicily Palermo Catania KM",
        "GEODIST Sicily Palermo Catania ft",
        "GEODIST Sicily Palermo Catania Mi",
        "GEODIST Sicily Palermo Palermo mi",
        "GEODIST Sicily Palermo nosuch",
        "GEODIST Sicily nosuch Palermo",
        "GEODIST missing a b",
        "GEODIST missing a b yards",
        "GEODIST Sicily Palermo Catania yards",
        "GEODIST Sicily Palermo Catania km extra",
        "GEODIST Sicily Palermo",
        "GEOPOS",
        "GEOHASH",
        // Points at the limits: the poles' cut-off, the antimeridian, the equator.
        "GEOADD w 180 0 e180 -180 0 w180 0 85.05112878 n 0 -85.05112878 s 0 0 origin 179.999999 0.000001 near -179.999999 -0.000001 far 180 85.05112878 corner",
        "ZRANGE w 0 -1 WITHSCORES",
        "GEOPOS w e180 w180 n s origin near far corner",
        "GEOHASH w e180 w180 n s origin near far corner",
        "GEODIST w e180 w180",
        "GEODIST w near far km",
        "GEODIST w n s km",
        "GEODIST w origin corner mi",
        // Any score decodes, as C casts it.
        "ZADD w -5 neg 1e300 big 0.5 half inf pinf -inf ninf 4503599627370496.5 mid 18446744073709551616 two64",
        "GEOPOS w neg big half pinf ninf mid two64",
        "GEOHASH w neg big half pinf ninf mid two64",
        "GEODIST w neg big",
        "GEODIST w pinf origin ft",
        // Wrong type.
        "SET str x",
        "GEOPOS str a",
        "GEOHASH str a",
        "GEODIST str a b",
        "GEODIST str a b parsecs",
    ]);
}

/// Every search command's options on the same data, replies compared exactly.
#[test]
fn search_options_match_redis() {
    let mut d = Diff::new();
    check(&mut d, &[PLACES]);
    let searches = [
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km",
        "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 100 mi",
        "GEOSEARCH Sicily BYBOX 600000 300000 m FROMMEMBER Catania",
        "GEORADIUS Sicily 15 37 200 km",
        "GEORADIUS_RO Sicily 15 37 600000 ft",
        "GEORADIUSBYMEMBER Sicily Agrigento 100 km",
        "GEORADIUSBYMEMBER_RO Sicily Palermo 1000 km",
    ];
    let withs = [
        "",
        "WITHCOORD",
        "WITHDIST",
        "WITHHASH",
        "WITHHASH WITHCOORD WITHDIST",
    ];
    let orders = [
        "",
        "ASC",
        "DESC",
        "COUNT 1",
        "COUNT 2 DESC",
        "COUNT 2 ANY",
        "COUNT 3 ANY ASC",
        "ANY COUNT 10 DESC",
        "COUNT 100",
    ];
    for search in searches {
        for with in withs {
            for order in orders {
                check(&mut d, &[&format!("{search} {with} {order}")]);
            }
        }
    }
}

#[test]
fn search_edges_match_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
        "GEOADD w 180 0 e180 -180 0 w180 0 85.05112878 n 0 -85.05112878 s 0 0 origin 179.999999 0.000001 near -179.999999 -0.000001 far 0 0.0000001 twin 0.00001 0 east -0.00001 0 west 0 85 n85 90 -85 s85",
        // Zero radius: the point itself (and its cell twins).
        "GEOSEARCH w FROMMEMBER origin BYRADIUS 0 m WITHDIST",
        "GEORADIUS w 0 0 0 km WITHCOORD WITHHASH",
        "GEOSEARCH w FROMLONLAT 0 0 BYBOX 0 0 m WITHDIST",
        // Small radii around the origin, either unit.
        "GEORADIUS w 0 0 1 m WITHDIST ASC",
        "GEORADIUS w 0 0 2 m WITHDIST DESC",
        "GEORADIUS w 0 0 3.5 ft WITHDIST",
        // Across the antimeridian.
        "GEORADIUS w 180 0 50 km WITHDIST WITHCOORD",
        "GEORADIUS w -180 0 50 km WITHDIST WITHCOORD",
        "GEOSEARCH w FROMMEMBER near BYBOX 100 100 km WITHDIST",
        "GEORADIUSBYMEMBER w far 1 km WITHDIST",
        // Near the poles' limits.
        "GEORADIUS w 0 85.05112878 100 km WITHDIST WITHHASH",
        "GEORADIUS w 45 -85.05 1000 km WITHDIST ASC",
        "GEOSEARCH w FROMMEMBER n85 BYBOX 2000 20 km WITHCOORD",
        // Huge radii and boxes: the whole world, cells repeated, NaN distances.
        "GEORADIUS w 0 0 20000 km WITHDIST",
        "GEORADIUS w 0 0 20000 km WITHDIST ASC",
        "GEORADIUS w 0 0 20000 km WITHDIST DESC COUNT 4",
        "GEORADIUS w 90 45 1e10 mi WITHDIST",
        "GEORADIUS w 90 45 inf m WITHDIST",
        "GEOSEARCH w FROMLONLAT 10 10 BYBOX 1e9 1e9 m",
        "GEOSEARCH w FROMLONLAT 10 10 BYBOX inf 1 m",
        "GEORADIUSBYMEMBER w e180 20037 km WITHDIST ASC",
        "GEORADIUSBYMEMBER w n 20037 km WITHDIST COUNT 3",
        // Ties: equal distances, sorted by Redis's sorts.
        "GEOADD t 1 1 a 1 1 b 1 1 c -1 -1 d 1 -1 e -1 1 f 1 1 g -1 -1 h 1 -1 i -1 1 j",
        "GEORADIUS t 0 0 500 km WITHDIST",
        "GEORADIUS t 0 0 500 km ASC",
        "GEORADIUS t 0 0 500 km DESC",
        "GEORADIUS t 0 0 500 km COUNT 3",
        "GEORADIUS t 0 0 500 km COUNT 7",
        "GEORADIUS t 0 0 500 km COUNT 5 DESC",
        "GEORADIUSBYMEMBER t a 500 km COUNT 8 WITHDIST",
        // Scores ZADD wrote, not GEOADD: found where their bits fall.
        "ZADD w 0.5 half 3 three 4503599627370495.5 top -5 neg 1e300 big",
        "GEORADIUS w -180 -85.05112878 100 km WITHDIST WITHHASH WITHCOORD",
        "GEOSEARCH w FROMMEMBER half BYBOX 20 20 km WITHHASH ASC",
        "GEOSEARCH w FROMMEMBER top BYRADIUS 1000 km WITHHASH WITHCOORD",
        "GEORADIUS w 0 0 20000 km WITHHASH COUNT 30 DESC",
        // Missing key: an empty reply, options still parsed.
        "GEOSEARCH nokey FROMMEMBER x BYRADIUS 1 m",
        "GEOSEARCH nokey FROMLONLAT 1 1 BYBOX 1 1 m",
        "GEORADIUS nokey 1 1 1 m WITHDIST",
        "GEORADIUSBYMEMBER nokey x bad bad",
        "GEORADIUSBYMEMBER_RO nokey x 1 m COUNT 0",
        "GEOSEARCH nokey FROMLONLAT 1 100 BYRADIUS 1 m",
        "GEOSEARCH nokey FROMMEMBER x BYRADIUS x m",
    ]);
}

#[test]
fn search_errors_match_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
            PLACES,
            "SET str x",
            // Wrong type comes first.
            "GEORADIUS str x x x x",
            "GEOSEARCH str FROMMEMBER a BYRADIUS 1 m",
            "GEOSEARCHSTORE dst str FROMMEMBER a BYRADIUS 1 m",
            "GEORADIUSBYMEMBER_RO str a 1 m",
            // Coordinates and distances.
            "GEORADIUS Sicily x 37 1 km",
            "GEORADIUS Sicily 15 91 1 km",
            "GEORADIUS Sicily 15 37 x km",
            "GEORADIUS Sicily 15 37 -1 km",
            "GEORADIUS Sicily 15 37 1 parsec",
            "GEORADIUS Sicily 15 37 1 m\0x",
            "GEORADIUSBYMEMBER Sicily nosuch 1 km",
            "GEORADIUSBYMEMBER Sicily nosuch x x",
            "GEORADIUSBYMEMBER Sicily Palermo x km",
            "GEORADIUSBYMEMBER Sicily Palermo 1 yd",
            "GEOSEARCH Sicily FROMLONLAT 15 x BYRADIUS 1 m",
            "GEOSEARCH Sicily FROMLONLAT 200 0 BYRADIUS 1 m",
            "GEOSEARCH Sicily FROMMEMBER nosuch BYRADIUS x m",
            "GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX x 1 m",
            "GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 x m",
            "GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX -1 x m",
            "GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 -1 m",
            "GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 1 nm",
            // COUNT and ANY.
            "GEORADIUS Sicily 15 37 1 km COUNT 0",
            "GEORADIUS Sicily 15 37 1 km COUNT -1",
            "GEORADIUS Sicily 15 37 1 km COUNT x",
            "GEORADIUS Sicily 15 37 1 km COUNT",
            "GEORADIUS Sicily 15 37 1 km ANY",
            "GEORADIUS Sicily 15 37 1 km ANY COUNT 9223372036854775807",
            // STORE conflicts and where STORE is refused.
            "GEORADIUS Sicily 15 37 1 km STORE d WITHDIST",
            "GEORADIUS Sicily 15 37 1 km WITHHASH STOREDIST d",
            "GEORADIUS Sicily 15 37 1 km STORE",
            "GEORADIUS_RO Sicily 15 37 1 km STORE d",
            "GEORADIUSBYMEMBER_RO Sicily Palermo 1 km STOREDIST d",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 m STORE d",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 m STOREDIST",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1 m WITHCOORD",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1 m STORE x",
            // GEOSEARCH's FROM and BY.
            "GEOSEARCH Sicily BYRADIUS 1 m WITHDIST",
            "geosearch Sicily FROMLONLAT 1 1 WITHDIST",
            "GeoSearchStore d Sicily COUNT 1 ANY ASC",
            "GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 1 m",
            "GEOSEARCH Sicily FROMLONLAT 1 1 FROMMEMBER Palermo BYRADIUS 1 m",
            "GEOSEARCH Sicily FROMMEMBER Palermo FROMMEMBER Catania BYRADIUS 300 km",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 m BYBOX 1 1 m",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 1 m BYRADIUS 1 m",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 m BYRADIUS 300 km",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 1 1",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 m bogus",
            "GEORADIUS Sicily 15 37 1 km FROMMEMBER Palermo",
            "GEORADIUS Sicily 15 37 1 km withdist\0junk",
            // Arity.
            "GEORADIUS Sicily 15 37 1",
            "GEORADIUSBYMEMBER Sicily Palermo 1",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1",
        ],
    );
}

#[test]
fn store_options_match_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
            PLACES,
            "GEORADIUS Sicily 15 37 200 km STORE near",
            "ZRANGE near 0 -1 WITHSCORES",
            "GEORADIUS Sicily 15 37 200 km STOREDIST near ASC COUNT 2",
            "ZRANGE near 0 -1 WITHSCORES",
            "GEORADIUS Sicily 15 37 200 mi STORE a STOREDIST b",
            "EXISTS a b",
            "ZRANGE b 0 -1 WITHSCORES",
            "GEORADIUSBYMEMBER Sicily Palermo 300 km STORE bym DESC",
            "ZRANGE bym 0 -1 WITHSCORES",
            "GEOSEARCHSTORE gs Sicily FROMLONLAT 15 37 BYBOX 400 400 km",
            "ZRANGE gs 0 -1 WITHSCORES",
            "GEOSEARCHSTORE gs Sicily FROMMEMBER Catania BYRADIUS 200 km STOREDIST COUNT 2 DESC",
            "ZRANGE gs 0 -1 WITHSCORES",
            "GEOSEARCHSTORE gs Sicily FROMLONLAT 15 37 BYRADIUS 200 ft STOREDIST",
            "ZRANGE gs 0 -1 WITHSCORES",
            // A store that finds nothing deletes the destination, whatever its type.
            "SET s x",
            "GEORADIUS Sicily 0 0 1 m STORE s",
            "EXISTS s",
            "SET s x",
            "GEOSEARCHSTORE s nokey FROMMEMBER x BYRADIUS 1 m",
            "EXISTS s",
            "SET s x",
            "GEORADIUSBYMEMBER nokey x bad bad STORE s",
            "EXISTS s",
            // A store replaces any type, and drops a TTL.
            "SET s x EX 100",
            "GEOSEARCHSTORE s Sicily FROMMEMBER Palermo BYRADIUS 10 km",
            "TYPE s",
            "TTL s",
            "ZRANGE s 0 -1 WITHSCORES",
            // Into the source itself.
            "GEOSEARCHSTORE Sicily Sicily FROMMEMBER Palermo BYRADIUS 100 km",
            "ZRANGE Sicily 0 -1 WITHSCORES",
            "GEORADIUS Sicily 13 38 100 km STOREDIST Sicily",
            "ZRANGE Sicily 0 -1 WITHSCORES",
            "GEOPOS Sicily Palermo",
        ],
    );
}

/// Many equal distances: the order of ties is the sorts' (glibc's merge sort for a full
/// sort, Redis's partial quicksort under COUNT, with its median-of-nine pivots past 40).
#[test]
fn ties_follow_redis_sorts() {
    let mut d = Diff::new();
    let spots = ["1 1", "-1 -1", "1 -1", "-1 1", "2 0", "0 2", "0.5 0.5"];
    for key in ["small", "large"] {
        let n = if key == "small" { 100 } else { 300 };
        for i in 0..n {
            let spot = spots[(i * 7 + i / 3) % spots.len()];
            check(&mut d, &[&format!("GEOADD {key} {spot} m{i}")]);
        }
        for count in [1, 2, 5, 6, 7, 8, 13, 40, 41, 50, 99, 100, 101, 250, 400] {
            for order in ["", "ASC", "DESC", "ANY", "ANY ASC", "ANY DESC"] {
                check(
                    &mut d,
                    &[&format!(
                        "GEORADIUS {key} 0 0 500 km WITHDIST COUNT {count} {order}"
                    )],
                );
            }
        }
        check(
            &mut d,
            &[
                &format!("GEORADIUS {key} 0 0 500 km ASC"),
                &format!("GEORADIUS {key} 0 0 500 km DESC"),
                &format!("GEOSEARCH {key} FROMMEMBER m0 BYBOX 600 600 km DESC COUNT 77"),
            ],
        );
    }
}

/// COMMAND GETKEYS finds the keys Redis's key specs name.
#[test]
fn command_getkeys_matches_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
            "COMMAND GETKEYS GEOADD k 1 1 m",
            "COMMAND GETKEYS GEOPOS k m n",
            "COMMAND GETKEYS GEORADIUS k 1 2 3 m",
            "COMMAND GETKEYS GEORADIUS k 1 2 3 m STORE a",
            "COMMAND GETKEYS GEORADIUS k 1 2 3 m store a storedist b",
            "COMMAND GETKEYS GEORADIUS k 1 2 3 m STOREDIST b STORE a",
            "COMMAND GETKEYS GEORADIUS k store 2 3 m",
            "COMMAND GETKEYS GEORADIUSBYMEMBER k m 3 m STORE x",
            "COMMAND GETKEYS GEORADIUSBYMEMBER k store 3 m",
            "COMMAND GETKEYS GEORADIUS_RO k 1 2 3 m",
            "COMMAND GETKEYS GEOSEARCH k FROMMEMBER x BYRADIUS 1 m",
            "COMMAND GETKEYS GEOSEARCHSTORE d s FROMMEMBER x BYRADIUS 1 m",
        ],
    );
}

/// A small deterministic generator (SplitMix64), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A random point: anywhere, or in one of a few dense clusters (so searches find many),
/// or on a limit; some repeated exactly (equal distances).
fn random_point(rng: &mut Rng, previous: &[(String, String)]) -> (String, String) {
    match rng.below(10) {
        0 if !previous.is_empty() => previous[rng.below(previous.len() as u64) as usize].clone(),
        1 => (
            rng.pick(&["180", "-180", "0", "179.9999", "-179.9999"])
                .to_string(),
            rng.pick(&["85.05112878", "-85.05112878", "0", "84.9", "-84.9"])
                .to_string(),
        ),
        2..=5 => {
            let centres = [
                (13.4, 38.1),
                (179.9, 0.0),
                (-0.1, 51.5),
                (0.0, 84.0),
                (-70.0, -60.0),
            ];
            let (lon, lat) = centres[rng.below(centres.len() as u64) as usize];
            let lon = (lon + rng.between(-1.0, 1.0)).clamp(-180.0, 180.0);
            let lat = (lat + rng.between(-1.0, 1.0)).clamp(-85.0, 85.0);
            (format!("{lon:.6}"), format!("{lat:.6}"))
        }
        6 => (
            // Every digit of a double: the encoder's rounding on arbitrary values.
            format!("{}", rng.between(-180.0, 180.0)),
            format!("{}", rng.between(-85.05112878, 85.05112878)),
        ),
        _ => (
            format!("{:.5}", rng.between(-180.0, 180.0)),
            format!("{:.5}", rng.between(-85.05, 85.05)),
        ),
    }
}

/// A random search command over key `key`, whose members are `members`.
fn random_search(
    rng: &mut Rng,
    key: &str,
    members: &[String],
    points: &[(String, String)],
) -> Vec<String> {
    let unit = rng.pick(&["m", "km", "ft", "mi"]).to_string();
    let scale = match unit.as_str() {
        "m" => 1.0,
        "km" => 1000.0,
        "ft" => 0.3048,
        _ => 1609.34,
    };
    let metres = match rng.below(6) {
        0 => 0.0,
        1 => rng.between(0.0, 1000.0),
        2 | 3 => rng.between(1000.0, 300_000.0),
        4 => rng.between(300_000.0, 5_000_000.0),
        _ => rng.between(5_000_000.0, 25_000_000.0),
    };
    let size = format!("{:.3}", metres / scale);
    let size2 = format!("{:.3}", rng.between(0.0, 2.0) * metres / scale);
    let from_member = rng.below(2) == 0 && !members.is_empty();
    let member =
        members[rng.below(members.len().max(1) as u64) as usize % members.len().max(1)].clone();
    let (lon, lat) = if rng.below(3) == 0 {
        points[rng.below(points.len() as u64) as usize].clone()
    } else if rng.below(4) == 0 {
        (
            format!("{}", rng.between(-180.0, 180.0)),
            format!("{}", rng.between(-85.05112878, 85.05112878)),
        )
    } else {
        (
            format!("{:.4}", rng.between(-180.0, 180.0)),
            format!("{:.4}", rng.between(-85.0, 85.0)),
        )
    };
    let mut cmd: Vec<String> = Vec::new();
    let by_box = rng.below(3) == 0;
    match (rng.below(3), by_box) {
        (0, false) if from_member => {
            cmd.extend(["GEORADIUSBYMEMBER".into(), key.into(), member, size, unit]);
        }
        (0, false) => {
            cmd.extend(["GEORADIUS".into(), key.into(), lon, lat, size, unit]);
        }
        _ => {
            cmd.extend(["GEOSEARCH".into(), key.into()]);
            if from_member {
                cmd.extend(["FROMMEMBER".into(), member]);
            } else {
                cmd.extend(["FROMLONLAT".into(), lon, lat]);
            }
            if by_box {
                cmd.extend(["BYBOX".into(), size, size2, unit]);
            } else {
                cmd.extend(["BYRADIUS".into(), size, unit]);
            }
        }
    }
    for opt in ["WITHDIST", "WITHCOORD", "WITHHASH"] {
        if rng.below(3) == 0 {
            cmd.push(opt.into());
        }
    }
    match rng.below(4) {
        0 => cmd.push("ASC".into()),
        1 => cmd.push("DESC".into()),
        _ => {}
    }
    if rng.below(2) == 0 {
        cmd.push("COUNT".into());
        cmd.push((1 + rng.below(60)).to_string());
        if rng.below(3) == 0 {
            cmd.push("ANY".into());
        }
    }
    cmd
}

/// A few hundred random points and searches: every reply equal to redis-server's,
/// order included, on a listpack-sized and on a skip-list-sized set.
#[test]
fn random_points_and_searches_match_redis() {
    let mut d = Diff::new();
    let mut rng = Rng(0x5eed_0f9e);
    for (key, n) in [("small", 100usize), ("large", 500)] {
        let mut points: Vec<(String, String)> = Vec::new();
        let mut members: Vec<String> = Vec::new();
        for i in 0..n {
            let p = random_point(&mut rng, &points);
            points.push(p);
            members.push(format!("m{i}"));
        }
        for (chunk_p, chunk_m) in points.chunks(50).zip(members.chunks(50)) {
            let mut cmd: Vec<&str> = vec!["GEOADD", key];
            for ((lon, lat), m) in chunk_p.iter().zip(chunk_m) {
                cmd.extend([lon.as_str(), lat.as_str(), m.as_str()]);
            }
            d.check(&[&cmd]);
        }
        d.check(&[&["ZRANGE", key, "0", "-1", "WITHSCORES"]]);
        let all: Vec<&str> = ["GEOPOS", key]
            .into_iter()
            .chain(members.iter().map(|m| m.as_str()))
            .collect();
        d.check(&[&all]);
        let mut hashes = all.clone();
        hashes[0] = "GEOHASH";
        d.check(&[&hashes]);
        for _ in 0..40 {
            let a = &members[rng.below(n as u64) as usize];
            let b = &members[rng.below(n as u64) as usize];
            let unit = rng.pick(&["m", "km", "ft", "mi"]);
            d.check(&[&["GEODIST", key, a, b, unit]]);
        }
        for _ in 0..250 {
            let cmd = random_search(&mut rng, key, &members, &points);
            let cmd: Vec<&str> = cmd.iter().map(|s| s.as_str()).collect();
            d.check(&[&cmd]);
        }
        // STORE variants of a few random searches.
        for i in 0..20 {
            let cmd = random_search(&mut rng, key, &members, &points);
            let mut cmd: Vec<&str> = cmd
                .iter()
                .map(|s| s.as_str())
                .filter(|s| !s.starts_with("WITH"))
                .collect();
            let dst = format!("dst{i}");
            if cmd[0] == "GEOSEARCH" {
                cmd[0] = "GEOSEARCHSTORE";
                cmd.insert(1, &dst);
                if i % 2 == 0 {
                    cmd.push("STOREDIST");
                }
            } else {
                cmd.extend([if i % 2 == 0 { "STOREDIST" } else { "STORE" }, dst.as_str()]);
            }
            d.check(&[&cmd, &["ZRANGE", &dst, "0", "-1", "WITHSCORES"]]);
        }
    }
}

// ---- RESP3, byte for byte ----

/// Sends `commands` (RESP arrays) over a raw connection and returns the reply bytes, read
/// up to the reply of a final ECHO.
fn raw_replies(stream: &mut UnixStream, commands: &[&[&str]]) -> Vec<u8> {
    let mut out = Vec::new();
    let marker: &[&str] = &["ECHO", "--end--"];
    for cmd in commands.iter().chain([&marker]) {
        out.extend(format!("*{}\r\n", cmd.len()).into_bytes());
        for a in cmd.iter() {
            out.extend(format!("${}\r\n{a}\r\n", a.len()).into_bytes());
        }
    }
    stream.write_all(&out).expect("write to redis-server");
    let end = b"$7\r\n--end--\r\n";
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.ends_with(end) {
        let n = stream.read(&mut buf).expect("read from redis-server");
        assert!(n > 0, "redis-server closed the connection");
        got.extend_from_slice(&buf[..n]);
    }
    got.truncate(got.len() - end.len());
    got
}

#[test]
fn coordinates_are_redis_bytes_in_resp2_and_resp3() {
    let server = RedisServer::spawn();
    let Address::Unix(path) = server.address() else {
        panic!("the test server listens on a Unix socket");
    };
    let script = [
        PLACES,
        "GEOADD Sicily 180 85.05112878 corner 0 0 origin",
        "GEOPOS Sicily Palermo nosuch corner origin",
        "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 300 km WITHCOORD WITHDIST WITHHASH ASC",
        "GEORADIUS Sicily 0 0 1 km WITHCOORD",
        "GEODIST Sicily Palermo Catania km",
        "GEODIST Sicily Palermo nosuch",
        "GEOHASH Sicily Palermo nosuch",
    ];
    for (resp, protocol) in [(2u8, Protocol::Resp2), (3, Protocol::Resp3)] {
        let mut stream = UnixStream::connect(&path).expect("connect to redis-server");
        raw_replies(&mut stream, &[&["FLUSHALL"], &["HELLO", &resp.to_string()]]);
        let script: Vec<Vec<&str>> = script.iter().map(|l| l.split(' ').collect()).collect();
        let script: Vec<&[&str]> = script.iter().map(Vec::as_slice).collect();
        let real = raw_replies(&mut stream, &script);
        let engine = Engine::new();
        let mut client = engine.client();
        client.resp = resp;
        let mut ours = Vec::new();
        for cmd in &script {
            let argv: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
            ours.extend(to_bytes(&engine.execute(&mut client, &argv), protocol));
        }
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&real),
            "RESP{resp}: engine (left) vs redis-server (right)"
        );
    }
}

// ---- the typed API ----

#[test]
fn typed_api_works_without_argument_parsing() {
    let engine = Engine::new();
    let mut ks = engine.db(0).lock([&b"g"[..], b"s"], engine.now_ms());
    let flags = AddFlags::default();
    let added = ks
        .geoadd(
            b"g",
            flags,
            &[
                (13.361389, 38.115556, b"Palermo"),
                (15.087269, 37.502669, b"Catania"),
            ],
        )
        .expect("geoadd");
    assert_eq!(added.added, 2);
    assert!(ks.geoadd(b"g", flags, &[(0.0, 86.0, b"x")]).is_err());
    let pos = ks.geopos(b"g", &[b"Palermo", b"nosuch"]).expect("geopos");
    assert_eq!(pos[1], None);
    let (lon, lat) = pos[0].expect("Palermo has a position");
    assert!((lon - 13.361389).abs() < 1e-5 && (lat - 38.115556).abs() < 1e-5);
    let km = ks
        .geodist(b"g", b"Palermo", b"Catania", Unit::KM)
        .expect("geodist")
        .expect("both present");
    assert_eq!(format!("{km:.4}"), "166.2742");
    let query = GeoQuery {
        from: GeoFrom::LonLat(15.0, 37.0),
        area: ShapeKind::Radius(100.0),
        unit: Unit::KM,
        order: GeoOrder::Asc,
        count: None,
    };
    let hits = ks.geosearch(b"g", &query).expect("geosearch");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].member, b"Catania");
    let wider = GeoQuery {
        area: ShapeKind::Radius(200.0),
        order: GeoOrder::Desc,
        ..query
    };
    let hits = ks.geosearch(b"g", &wider).expect("geosearch");
    let names: Vec<&[u8]> = hits.iter().map(|h| h.member.as_slice()).collect();
    assert_eq!(names, vec![&b"Palermo"[..], b"Catania"]);
    let missing = GeoQuery {
        from: GeoFrom::Member(b"nosuch"),
        ..query
    };
    assert_eq!(
        ks.geosearch(b"g", &missing).map_err(|e| e.to_string()),
        Err("ERR could not decode requested zset member".to_string())
    );
    let negative = GeoQuery {
        area: ShapeKind::Radius(-1.0),
        ..query
    };
    assert_eq!(
        ks.geosearch(b"g", &negative).map_err(|e| e.to_string()),
        Err("ERR radius cannot be negative".to_string())
    );
    let nan_box = GeoQuery {
        area: ShapeKind::Box {
            width: f64::NAN,
            height: 1.0,
        },
        ..query
    };
    assert!(ks.geosearch(b"g", &nan_box).is_err());
    ks.insert(
        b"s",
        edgebench_engine::engine::Entry::new(edgebench_engine::engine::Value::Str(b"x".to_vec())),
    );
    assert_eq!(ks.geopos(b"s", &[b"a"]), Err(CmdError::WrongType));
}
