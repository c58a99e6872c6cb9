//! Geo sets: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
//! GEORADIUS_RO, GEORADIUSBYMEMBER, GEORADIUSBYMEMBER_RO — Redis 7.0's `geo.c`.
//!
//! A geo set is a sorted set whose scores are 52-bit geohashes (module `geohash`): GEOADD is a
//! ZADD of encoded points, and every other sorted-set command works on a geo set. A search
//! visits the cell around its centre and the eight around it (Redis's cover of the search
//! area), and in each cell the set's members in score order, keeping those inside the
//! circle or box; unsorted results come out in that order, cell by cell, as Redis's do.
//! Sorted ones follow Redis's two sorts exactly (module `order`), ties included.
//!
//! The typed operations on [`Locked`] come first, then the `run` functions, which parse as
//! Redis does — same checks, same order, same error texts. The search commands are one
//! parser (`search_generic`), as in Redis, since their options and their quirks are
//! shared: a GEORADIUSBYMEMBER or a GEOSEARCH FROMMEMBER on a missing key skips the checks
//! that need the member, and an option's value is checked where the option is read.
//!
//! Coordinates in replies are Redis's "human" long doubles (`%.17Lf` with trailing zeros
//! cut, [`Reply::HumanDouble`]); distances have four decimals (`format_distance`).
//! A reply's size is bounded by the set's size, never by a number in the request: COUNT
//! only ever shortens a result.
//!
//! Keyspace events, as Redis's geo.c emits them: GEOADD is ZADD's `zadd`, a search that
//! stores announces `georadiusstore` or `geosearchstore` (class `z`), or `del` when an
//! empty result removed the destination.

mod geohash;
mod order;

use std::borrow::Cow;
use std::ops::Bound::{Excluded, Included};

use super::zset::ZAdded;
use super::{is, parse_f64, parse_i64, spec, Ctx, KeySpec, Spec, ONE_KEY, TWO_KEYS};
use crate::engine::error::CmdError;
use crate::engine::keyspace::Locked;
use crate::engine::types::cfloat::LongDouble;
use crate::engine::types::zset::{AddFlags, ZSet};
use crate::resp::reply::Reply;
use geohash::Shape;
pub use geohash::ShapeKind;
pub use geohash::{LAT_MAX, LAT_MIN, LON_MAX, LON_MIN};

/// The geo commands. GEORADIUS and GEORADIUSBYMEMBER may write the key after a STORE or
/// STOREDIST; GEOSEARCHSTORE writes its first key.
pub const COMMANDS: &[Spec] = &[
    spec("geoadd", -5, ONE_KEY, true, geoadd_cmd),
    spec("geodist", -4, ONE_KEY, false, geodist_cmd),
    spec("geohash", -2, ONE_KEY, false, geohash_cmd),
    spec("geopos", -2, ONE_KEY, false, geopos_cmd),
    spec(
        "georadius",
        -6,
        KeySpec::Custom(georadius_keys),
        true,
        georadius_cmd,
    ),
    spec("georadius_ro", -6, ONE_KEY, false, georadius_ro_cmd),
    spec(
        "georadiusbymember",
        -5,
        KeySpec::Custom(georadiusbymember_keys),
        true,
        georadiusbymember_cmd,
    ),
    spec(
        "georadiusbymember_ro",
        -5,
        ONE_KEY,
        false,
        georadiusbymember_ro_cmd,
    ),
    spec("geosearch", -7, ONE_KEY, false, geosearch_cmd),
    spec("geosearchstore", -8, TWO_KEYS, true, geosearchstore_cmd),
];

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

const NO_MEMBER: &str = "ERR could not decode requested zset member";
const BAD_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";

/// GEORADIUS's keys: the source, and the argument after each STORE, then after each
/// STOREDIST, among the options (from argument 6). Redis's key specs name only the first
/// STORE and the first STOREDIST; the parser takes the last one given, so locking takes
/// them all (COMMAND GETKEYS then lists more keys than Redis's for a repeated STORE).
fn georadius_keys(args: &[&[u8]]) -> Vec<usize> {
    store_keys(args, 6)
}

/// GEORADIUSBYMEMBER's keys, as [`georadius_keys`] with options from argument 5.
fn georadiusbymember_keys(args: &[&[u8]]) -> Vec<usize> {
    store_keys(args, 5)
}

fn store_keys(args: &[&[u8]], options: usize) -> Vec<usize> {
    let mut keys = vec![1];
    for word in ["store", "storedist"] {
        let values = (options..args.len().saturating_sub(1)).filter(|&i| kw(args[i], word));
        keys.extend(values.map(|i| i + 1));
    }
    keys
}

/// Redis compares option names with `strcasecmp`, which stops at a NUL byte.
fn kw(arg: &[u8], word: &str) -> bool {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    is(&arg[..end], word)
}

// ---- the typed API ----

/// A length unit: how many metres it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit(pub f64);

impl Unit {
    /// Metres.
    pub const M: Unit = Unit(1.0);
    /// Kilometres.
    pub const KM: Unit = Unit(1000.0);
    /// Feet.
    pub const FT: Unit = Unit(0.3048);
    /// Miles, as Redis rounds them.
    pub const MI: Unit = Unit(1609.34);

    /// `m`, `km`, `ft` or `mi`, any case.
    pub fn parse(arg: &[u8]) -> Result<Unit, CmdError> {
        [
            ("m", Unit::M),
            ("km", Unit::KM),
            ("ft", Unit::FT),
            ("mi", Unit::MI),
        ]
        .into_iter()
        .find(|(name, _)| kw(arg, name))
        .map(|(_, unit)| unit)
        .ok_or(err(BAD_UNIT))
    }
}

/// Where a search is centred.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GeoFrom<'a> {
    /// A member's position (FROMMEMBER, GEORADIUSBYMEMBER).
    Member(&'a [u8]),
    /// A longitude and latitude (FROMLONLAT, GEORADIUS).
    LonLat(f64, f64),
}

/// The order of a search's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GeoOrder {
    /// As found, cell by cell (Redis's order when neither ASC nor DESC is given).
    #[default]
    Found,
    /// Nearest first.
    Asc,
    /// Farthest first.
    Desc,
}

/// A GEOSEARCH query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeoQuery<'a> {
    /// The centre.
    pub from: GeoFrom<'a>,
    /// BYRADIUS or BYBOX, in `unit`s.
    pub area: ShapeKind,
    /// The unit of `area` and of the distances returned.
    pub unit: Unit,
    /// ASC, DESC or neither.
    pub order: GeoOrder,
    /// COUNT n, and whether with ANY (stop at the first n found).
    pub count: Option<(usize, bool)>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct GeoHit {
    /// The member.
    pub member: Vec<u8>,
    /// Its distance from the centre, in the query's unit.
    pub dist: f64,
    /// Its stored score (the geohash).
    pub score: f64,
    /// `(longitude, latitude)` of its cell's centre.
    pub pos: (f64, f64),
}

/// A point found by a search, borrowing its member from the set.
#[derive(Debug, Clone, Copy)]
struct Found<'z> {
    member: &'z [u8],
    pos: (f64, f64),
    /// Metres.
    dist: f64,
    score: f64,
}

/// Redis's check of a GEOADD or FROMLONLAT point.
fn check_lonlat(lon: f64, lat: f64) -> Result<(), CmdError> {
    if (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat) {
        return Ok(());
    }
    Err(CmdError::Other(
        format!("ERR invalid longitude,latitude pair {lon:.6},{lat:.6}").into(),
    ))
}

/// A member's position: its score's cell centre.
fn member_pos(z: &ZSet, member: &[u8]) -> Option<(f64, f64)> {
    z.score(member).map(geohash::decode_score)
}

/// Every point of `z` in `shape`, in Redis's order (cell by cell, score order within a
/// cell); with `limit`, stops once that many are found (COUNT ... ANY).
fn find<'z>(z: &'z ZSet, shape: &Shape, limit: Option<usize>) -> Vec<Found<'z>> {
    let cells = geohash::search_cells(shape);
    let mut out: Vec<Found<'z>> = Vec::new();
    let full = |out: &Vec<Found<'z>>| limit.is_some_and(|l| !out.is_empty() && out.len() >= l);
    // Index into `cells` of the last cell searched; like Redis, the first (0) is never
    // compared, so only equal consecutive neighbours are skipped.
    let mut last = 0usize;
    for (i, cell) in cells.iter().enumerate() {
        let Some(cell) = *cell else { continue };
        if last != 0 && cells[last] == Some(cell) {
            continue;
        }
        if full(&out) {
            break;
        }
        let (min, max) = geohash::score_range(cell);
        for (member, score) in z.range_by_score(Included(min), Excluded(max)) {
            let pos = geohash::decode_score(score);
            if let Some(dist) = geohash::within(shape, pos.0, pos.1) {
                out.push(Found {
                    member,
                    pos,
                    dist,
                    score,
                });
            }
            if full(&out) {
                break;
            }
        }
        last = i;
    }
    out
}

/// Orders `found` as Redis does and cuts it to `count`.
fn arrange(found: &mut Vec<Found<'_>>, order: GeoOrder, count: Option<usize>) {
    let keep = count.map_or(found.len(), |c| c.min(found.len()));
    let cmp = |a: &Found<'_>, b: &Found<'_>| match order {
        GeoOrder::Desc => -order::compare_distance(a.dist, b.dist),
        _ => order::compare_distance(a.dist, b.dist),
    };
    if order != GeoOrder::Found {
        if keep == found.len() {
            order::merge_sort(found, cmp);
        } else {
            order::partial_sort(found, keep, cmp);
        }
    }
    found.truncate(keep);
}

/// Searches `z` and arranges the results: Redis's order, COUNT applied (a COUNT without
/// ANY sorts nearest first unless DESC is given).
fn search<'z>(
    z: &'z ZSet,
    shape: &Shape,
    mut order: GeoOrder,
    count: Option<(usize, bool)>,
) -> Vec<Found<'z>> {
    if matches!(count, Some((_, false))) && order == GeoOrder::Found {
        order = GeoOrder::Asc;
    }
    let limit = count.and_then(|(n, any)| any.then_some(n));
    let mut found = find(z, shape, limit);
    arrange(&mut found, order, count.map(|(n, _)| n));
    found
}

impl Locked<'_> {
    /// GEOADD: adds or moves `(longitude, latitude, member)` points under `flags` (NX, XX;
    /// not GT, LT or INCR). Errors: a point outside the limits (before anything changes),
    /// NX with XX, WRONGTYPE.
    pub fn geoadd(
        &mut self,
        key: &[u8],
        flags: AddFlags,
        points: &[(f64, f64, &[u8])],
    ) -> Result<ZAdded, CmdError> {
        let pairs = points
            .iter()
            .map(|&(lon, lat, member)| {
                check_lonlat(lon, lat)?;
                let score = geohash::score_of(lon, lat).ok_or(CmdError::NotFloat)?;
                Ok((score, member))
            })
            .collect::<Result<Vec<_>, CmdError>>()?;
        self.zadd(key, flags, &pairs)
    }

    /// GEOPOS: each member's `(longitude, latitude)`.
    pub fn geopos(
        &mut self,
        key: &[u8],
        members: &[&[u8]],
    ) -> Result<Vec<Option<(f64, f64)>>, CmdError> {
        let z = self.get_zset(key)?;
        Ok(members
            .iter()
            .map(|m| z.and_then(|z| member_pos(z, m)))
            .collect())
    }

    /// GEODIST: the distance between two members in `unit`s (`None` if either is missing).
    pub fn geodist(
        &mut self,
        key: &[u8],
        a: &[u8],
        b: &[u8],
        unit: Unit,
    ) -> Result<Option<f64>, CmdError> {
        let Some(z) = self.get_zset(key)? else {
            return Ok(None);
        };
        let (Some(a), Some(b)) = (member_pos(z, a), member_pos(z, b)) else {
            return Ok(None);
        };
        Ok(Some(geohash::distance(a.0, a.1, b.0, b.1) / unit.0))
    }

    /// GEOSEARCH: the members in the query's area, in Redis's order. A missing key finds
    /// nothing; a FROMMEMBER that is not in the set is "could not decode requested zset
    /// member"; FROMLONLAT outside the limits is "invalid longitude,latitude pair"; a
    /// negative (or NaN) radius, width or height is refused as the commands refuse it.
    pub fn geosearch(&mut self, key: &[u8], q: &GeoQuery<'_>) -> Result<Vec<GeoHit>, CmdError> {
        if let GeoFrom::LonLat(lon, lat) = q.from {
            check_lonlat(lon, lat)?;
        }
        check_area(q.area)?;
        let Some(z) = self.get_zset(key)? else {
            return Ok(Vec::new());
        };
        let centre = match q.from {
            GeoFrom::Member(m) => member_pos(z, m).ok_or(err(NO_MEMBER))?,
            GeoFrom::LonLat(lon, lat) => (lon, lat),
        };
        let shape = Shape {
            centre,
            to_metres: q.unit.0,
            kind: q.area,
        };
        Ok(search(z, &shape, q.order, q.count)
            .into_iter()
            .map(|f| GeoHit {
                member: f.member.to_vec(),
                dist: f.dist / q.unit.0,
                score: f.score,
                pos: f.pos,
            })
            .collect())
    }
}

// ---- commands ----

/// A coordinate in a reply: Redis's human long double (a bulk string in RESP2, a double in
/// RESP3, the same text in both).
fn coordinate(v: f64) -> Reply {
    Reply::HumanDouble(LongDouble::from_f64(v).to_human())
}

/// `longitude latitude` arguments, parsed and checked.
fn parse_lonlat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), CmdError> {
    let lon = parse_f64(lon)?;
    let lat = parse_f64(lat)?;
    check_lonlat(lon, lat)?;
    Ok((lon, lat))
}

/// A number argument with Redis's custom message for a non-number.
fn parse_measure(arg: &[u8], not_number: &'static str) -> Result<f64, CmdError> {
    parse_f64(arg).map_err(|_| err(not_number))
}

/// Redis's check of a radius or a box (the parser never yields NaN; the typed API might).
fn check_area(area: ShapeKind) -> Result<(), CmdError> {
    match area {
        ShapeKind::Radius(r) if r < 0.0 || r.is_nan() => Err(err("ERR radius cannot be negative")),
        ShapeKind::Box { width, height }
            if height < 0.0 || width < 0.0 || (height + width).is_nan() =>
        {
            Err(err("ERR height or width cannot be negative"))
        }
        _ => Ok(()),
    }
}

/// `radius unit` (GEORADIUS, BYRADIUS).
fn parse_radius(radius: &[u8], unit: &[u8]) -> Result<(ShapeKind, Unit), CmdError> {
    let area = ShapeKind::Radius(parse_measure(radius, "ERR need numeric radius")?);
    check_area(area)?;
    Ok((area, Unit::parse(unit)?))
}

/// `width height unit` (BYBOX).
fn parse_box(width: &[u8], height: &[u8], unit: &[u8]) -> Result<(ShapeKind, Unit), CmdError> {
    let width = parse_measure(width, "ERR need numeric width")?;
    let height = parse_measure(height, "ERR need numeric height")?;
    let area = ShapeKind::Box { width, height };
    check_area(area)?;
    Ok((area, Unit::parse(unit)?))
}

fn geoadd_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut flags = AddFlags::default();
    let mut ch = false;
    let mut first = 2;
    while let Some(opt) = args.get(first) {
        if kw(opt, "nx") {
            flags.nx = true;
        } else if kw(opt, "xx") {
            flags.xx = true;
        } else if kw(opt, "ch") {
            ch = true;
        } else {
            break;
        }
        first += 1;
    }
    let rest = &args[first..];
    // Redis hands an empty point list to ZADD, which calls it a syntax error too.
    if rest.is_empty() || !rest.len().is_multiple_of(3) || (flags.nx && flags.xx) {
        return Err(CmdError::Syntax);
    }
    let points = rest
        .chunks_exact(3)
        .map(|p| {
            let (lon, lat) = parse_lonlat(p[0], p[1])?;
            Ok((lon, lat, p[2]))
        })
        .collect::<Result<Vec<_>, CmdError>>()?;
    let added = ctx.ks.geoadd(args[1], flags, &points)?;
    let n = if ch {
        added.added + added.updated
    } else {
        added.added
    };
    Ok(Reply::Int(n as i64))
}

fn geodist_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let unit = match args.len() {
        4 => Unit::M,
        5 => Unit::parse(args[4])?,
        _ => return Err(CmdError::Syntax),
    };
    let d = ctx.ks.geodist(args[1], args[2], args[3], unit)?;
    Ok(d.map_or(Reply::Nil, |d| {
        Reply::Bulk(geohash::format_distance(d).into_bytes())
    }))
}

fn geohash_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let z = ctx.ks.get_zset(args[1])?;
    Ok(Reply::Array(
        args[2..]
            .iter()
            .map(|m| {
                z.and_then(|z| z.score(m))
                    .map_or(Reply::Nil, |s| Reply::bulk(&geohash::standard_geohash(s)))
            })
            .collect(),
    ))
}

fn geopos_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let positions = ctx.ks.geopos(args[1], &args[2..])?;
    Ok(Reply::Array(
        positions
            .into_iter()
            .map(|p| {
                p.map_or(Reply::NilArray, |(lon, lat)| {
                    Reply::Array(vec![coordinate(lon), coordinate(lat)])
                })
            })
            .collect(),
    ))
}

/// Which search command: its centre and shape arguments, and where it may store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// GEORADIUS key lon lat radius unit ...
    Coords { store: bool },
    /// GEORADIUSBYMEMBER key member radius unit ...
    Member { store: bool },
    /// GEOSEARCH key ... / GEOSEARCHSTORE dst key ...
    Search { store: bool },
}

fn georadius_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    search_generic(ctx, args, Variant::Coords { store: true })
}

fn georadius_ro_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    search_generic(ctx, args, Variant::Coords { store: false })
}

fn georadiusbymember_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    search_generic(ctx, args, Variant::Member { store: true })
}

fn georadiusbymember_ro_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    search_generic(ctx, args, Variant::Member { store: false })
}

fn geosearch_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    search_generic(ctx, args, Variant::Search { store: false })
}

fn geosearchstore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    search_generic(ctx, args, Variant::Search { store: true })
}

/// What a search command asked for, once parsed.
#[derive(Debug, Default)]
struct SearchArgs<'a> {
    centre: Option<(f64, f64)>,
    area: Option<(ShapeKind, Unit)>,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    order: GeoOrder,
    any: bool,
    count: Option<usize>,
    store: Option<&'a [u8]>,
    store_dist: bool,
    from_member: bool,
    from_lonlat: bool,
}

/// Parses the options after `base`, in Redis's order: each option's value is checked when
/// it is read (so an early bad value wins over a later syntax error), and FROMMEMBER looks
/// its member up in `z` at once (or not at all when the key is missing).
fn parse_options<'a>(
    args: &[&'a [u8]],
    base: usize,
    variant: Variant,
    z: Option<&ZSet>,
    p: &mut SearchArgs<'a>,
) -> Result<(), CmdError> {
    let radius_store = matches!(
        variant,
        Variant::Coords { store: true } | Variant::Member { store: true }
    );
    let search = matches!(variant, Variant::Search { .. });
    let mut i = base;
    while i < args.len() {
        let arg = args[i];
        let left = args.len() - i - 1;
        if kw(arg, "withdist") {
            p.with_dist = true;
        } else if kw(arg, "withhash") {
            p.with_hash = true;
        } else if kw(arg, "withcoord") {
            p.with_coord = true;
        } else if kw(arg, "any") {
            p.any = true;
        } else if kw(arg, "asc") {
            p.order = GeoOrder::Asc;
        } else if kw(arg, "desc") {
            p.order = GeoOrder::Desc;
        } else if kw(arg, "count") && left >= 1 {
            let n = parse_i64(args[i + 1])?;
            if n <= 0 {
                return Err(err("ERR COUNT must be > 0"));
            }
            p.count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            i += 1;
        } else if (kw(arg, "store") || kw(arg, "storedist")) && left >= 1 && radius_store {
            p.store = Some(args[i + 1]);
            p.store_dist = kw(arg, "storedist");
            i += 1;
        } else if kw(arg, "storedist") && variant == (Variant::Search { store: true }) {
            p.store_dist = true;
        } else if kw(arg, "frommember") && left >= 1 && search && !p.from_lonlat {
            if let Some(z) = z {
                p.centre = Some(member_pos(z, args[i + 1]).ok_or(err(NO_MEMBER))?);
            }
            p.from_member = true;
            i += 1;
        } else if kw(arg, "fromlonlat") && left >= 2 && search && !p.from_member {
            p.centre = Some(parse_lonlat(args[i + 1], args[i + 2])?);
            p.from_lonlat = true;
            i += 2;
        } else if kw(arg, "byradius")
            && left >= 2
            && search
            && !matches!(p.area, Some((ShapeKind::Box { .. }, _)))
        {
            p.area = Some(parse_radius(args[i + 1], args[i + 2])?);
            i += 2;
        } else if kw(arg, "bybox")
            && left >= 3
            && search
            && !matches!(p.area, Some((ShapeKind::Radius(_), _)))
        {
            p.area = Some(parse_box(args[i + 1], args[i + 2], args[i + 3])?);
            i += 3;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    Ok(())
}

/// Checks the option combinations, in Redis's order.
fn check_combinations(p: &SearchArgs<'_>, variant: Variant, name: &[u8]) -> Result<(), CmdError> {
    if p.store.is_some() && (p.with_dist || p.with_hash || p.with_coord) {
        return Err(err(if variant == (Variant::Search { store: true }) {
            "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        } else {
            "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        }));
    }
    if let Variant::Search { .. } = variant {
        // Redis names the command as the client spelled it (up to a NUL).
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let name = String::from_utf8_lossy(&name[..end]);
        if !(p.from_member || p.from_lonlat) {
            return Err(CmdError::Other(
                format!("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}")
                    .into(),
            ));
        }
        if p.area.is_none() {
            return Err(CmdError::Other(
                format!("ERR exactly one of BYRADIUS and BYBOX can be specified for {name}").into(),
            ));
        }
    }
    if p.any && p.count.is_none() {
        return Err(err("ERR the ANY argument requires COUNT argument"));
    }
    Ok(())
}

/// What a search produced: a reply, or `(member, score)` points to store at a key.
enum Outcome<'a> {
    Reply(Reply),
    Store(&'a [u8], Vec<(Vec<u8>, f64)>),
}

/// Redis's `georadiusGeneric`.
fn search_generic(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    variant: Variant,
) -> Result<Reply, CmdError> {
    let src = if variant == (Variant::Search { store: true }) {
        2
    } else {
        1
    };
    let outcome = {
        let z = ctx.ks.get_zset(args[src])?;
        let p = parse_search(args, variant, src, z)?;
        outcome_of(z, &p)
    };
    Ok(match outcome {
        Outcome::Reply(reply) => reply,
        Outcome::Store(dst, points) => {
            let event = if matches!(variant, Variant::Search { .. }) {
                "geosearchstore"
            } else {
                "georadiusstore"
            };
            Reply::Int(ctx.ks.store_pairs(dst, &points, event) as i64)
        }
    })
}

/// Parses a search command's arguments against its source set `z` (`None`: missing).
fn parse_search<'a>(
    args: &[&'a [u8]],
    variant: Variant,
    src: usize,
    z: Option<&ZSet>,
) -> Result<SearchArgs<'a>, CmdError> {
    let mut p = SearchArgs::default();
    let base = match variant {
        Variant::Coords { .. } => {
            p.centre = Some(parse_lonlat(args[2], args[3])?);
            p.area = Some(parse_radius(args[4], args[5])?);
            6
        }
        Variant::Member { .. } => {
            // Without the key Redis checks neither the member nor the radius.
            if let Some(z) = z {
                p.centre = Some(member_pos(z, args[2]).ok_or(err(NO_MEMBER))?);
                p.area = Some(parse_radius(args[3], args[4])?);
            }
            5
        }
        Variant::Search { store } => {
            if store {
                p.store = Some(args[1]);
            }
            src + 1
        }
    };
    parse_options(args, base, variant, z, &mut p)?;
    check_combinations(&p, variant, args[0])?;
    Ok(p)
}

/// Runs a parsed search: the reply, or what to store.
fn outcome_of<'a>(z: Option<&ZSet>, p: &SearchArgs<'a>) -> Outcome<'a> {
    let (Some(z), Some(centre), Some((kind, unit))) = (z, p.centre, p.area) else {
        // A missing key (its centre or area may be unparsed): nothing found.
        return match p.store {
            Some(dst) => Outcome::Store(dst, Vec::new()),
            None => Outcome::Reply(Reply::Array(Vec::new())),
        };
    };
    let shape = Shape {
        centre,
        to_metres: unit.0,
        kind,
    };
    let found = search(z, &shape, p.order, p.count.map(|n| (n, p.any)));
    let Some(dst) = p.store else {
        return Outcome::Reply(results_reply(&found, p, unit));
    };
    let stored = found.iter().map(|f| {
        let score = if p.store_dist {
            f.dist / unit.0
        } else {
            f.score
        };
        (f.member.to_vec(), score)
    });
    Outcome::Store(dst, stored.collect())
}

/// The reply to a search: members, or per member an array of the member and what the
/// WITH options asked for (always in the order distance, hash, coordinates).
fn results_reply(found: &[Found<'_>], p: &SearchArgs<'_>, unit: Unit) -> Reply {
    let nested = p.with_dist || p.with_hash || p.with_coord;
    Reply::Array(
        found
            .iter()
            .map(|f| {
                if !nested {
                    return Reply::bulk(f.member);
                }
                let mut item = vec![Reply::bulk(f.member)];
                if p.with_dist {
                    item.push(Reply::Bulk(
                        geohash::format_distance(f.dist / unit.0).into_bytes(),
                    ));
                }
                if p.with_hash {
                    // C's (long long) cast: truncation.
                    item.push(Reply::Int(f.score as i64));
                }
                if p.with_coord {
                    item.push(Reply::Array(vec![coordinate(f.pos.0), coordinate(f.pos.1)]));
                }
                Reply::Array(item)
            })
            .collect(),
    )
}
