//! Redis's geohash arithmetic, written for this engine: the 52-bit interleaved cell numbers a
//! geo set stores as scores, their decoding to a cell's centre, the haversine distance and
//! the nine-cell cover of a search area.
//!
//! Replies must be Redis's to the byte, so every formula here performs the same floating
//! point operations in the same order as Redis 7.0's `geohash.c` and `geohash_helper.c`
//! (the same constants, the same divisions before multiplications, the same clamps); a
//! mathematically equal rewrite would round differently in the last bit and print another
//! `%.17Lf` coordinate. Where Redis relies on C conversions (a score cast to `uint64_t`, a
//! `uint32_t` that wraps), the conversion is spelled out ([`score_to_bits`]).
//!
//! Bit layout: a cell at `step` holds `2 × step` bits, latitude bits at the even positions
//! and longitude bits at the odd ones. Coordinates at the top of a range (longitude 180)
//! give an offset of `2^step`, one bit more than the step holds, as in Redis; such scores are
//! stored anyway and decode back to the range's edge.

use std::f64::consts::PI;

/// Bits per coordinate of a stored score: 26 × 2 = 52 bits, a double's mantissa.
pub const STEP_MAX: u8 = 26;
/// The longitudes a geo set accepts.
pub const LON_MIN: f64 = -180.0;
/// The longitudes a geo set accepts.
pub const LON_MAX: f64 = 180.0;
/// The latitudes a geo set accepts: EPSG:3857's limits (no cell at the poles).
pub const LAT_MIN: f64 = -85.05112878;
/// The latitudes a geo set accepts.
pub const LAT_MAX: f64 = 85.05112878;

/// Redis's earth radius (the WGS-84 quadratic mean), in metres.
const EARTH_RADIUS_M: f64 = 6372797.560856;
/// Half the earth's circumference in Web Mercator metres: the step estimate's yardstick.
const MERCATOR_MAX: f64 = 20037726.37;
/// Degrees to radians as Redis computes it (`M_PI / 180.0`, one rounding).
const DEG_TO_RAD: f64 = PI / 180.0;

fn deg_rad(deg: f64) -> f64 {
    deg * DEG_TO_RAD
}

fn rad_deg(rad: f64) -> f64 {
    rad / DEG_TO_RAD
}

/// A closed interval of one coordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Low end.
    pub min: f64,
    /// High end.
    pub max: f64,
}

/// The coordinate ranges stored scores are encoded in.
pub const LON_SPAN: Span = Span {
    min: LON_MIN,
    max: LON_MAX,
};
/// See [`LON_SPAN`].
pub const LAT_SPAN: Span = Span {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// A cell: `bits` (2 × `step` bits, see the module doc) at a precision of `step` bits per
/// coordinate, 1 to 32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The interleaved bits.
    pub bits: u64,
    /// Bits per coordinate.
    pub step: u8,
}

/// A cell's extent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    /// Longitudes covered.
    pub lon: Span,
    /// Latitudes covered.
    pub lat: Span,
}

/// Spreads the 32 bits of `v` to the even bit positions of a u64.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gathers the even bit positions of `v` into 32 bits (the inverse of [`spread`]).
fn gather(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((x | (x >> 16)) & 0xFFFF_FFFF) as u32
}

/// The cell of `(lon, lat)` at `step` within the given ranges; `None` where Redis's encoder
/// refuses (a step outside 1..=32, or a point outside the global limits or the ranges).
pub fn encode(lon_span: Span, lat_span: Span, lon: f64, lat: f64, step: u8) -> Option<Cell> {
    if step == 0 || step > 32 {
        return None;
    }
    let outside = |v: f64, s: Span| !(v >= s.min && v <= s.max);
    if outside(lon, LON_SPAN)
        || !(LAT_MIN..=LAT_MAX).contains(&lat)
        || outside(lat, lat_span)
        || outside(lon, lon_span)
    {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_offset = (lat - lat_span.min) / (lat_span.max - lat_span.min) * scale;
    let lon_offset = (lon - lon_span.min) / (lon_span.max - lon_span.min) * scale;
    // C's double → uint32_t conversion truncates; the offsets lie in [0, 2^step].
    let bits = spread(lat_offset as u32) | (spread(lon_offset as u32) << 1);
    Some(Cell { bits, step })
}

/// The cell of a point at full precision, in the stored ranges.
pub fn encode_stored(lon: f64, lat: f64) -> Option<Cell> {
    encode(LON_SPAN, LAT_SPAN, lon, lat, STEP_MAX)
}

/// A cell's extent in the given ranges.
pub fn decode(lon_span: Span, lat_span: Span, cell: Cell) -> Area {
    let lat_bits = gather(cell.bits);
    let lon_bits = gather(cell.bits >> 1);
    let cells = (1u64 << cell.step) as f64;
    // `n + 1` is computed in 32 bits in Redis, so the last cell's end wraps to 0.
    let edge = |n: u32, s: Span| s.min + (f64::from(n) / cells) * (s.max - s.min);
    Area {
        lat: Span {
            min: edge(lat_bits, lat_span),
            max: edge(lat_bits.wrapping_add(1), lat_span),
        },
        lon: Span {
            min: edge(lon_bits, lon_span),
            max: edge(lon_bits.wrapping_add(1), lon_span),
        },
    }
}

/// A cell's centre, clamped to the global limits: `(longitude, latitude)`.
pub fn centre(area: &Area) -> (f64, f64) {
    let lon = ((area.lon.min + area.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((area.lat.min + area.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// What C's `(uint64_t)score` gives on x86-64 (gcc's sequence around `cvttsd2si`): scores
/// a user wrote with ZADD can be negative, fractional or huge, and Redis decodes them too.
pub fn score_to_bits(score: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    // cvttsd2si: truncation, or the "integer indefinite" 2^63 when out of range or NaN.
    let cvtt = |x: f64| -> u64 {
        if x.is_nan() || !(-TWO_63..TWO_63).contains(&x) {
            1 << 63
        } else {
            (x as i64) as u64
        }
    };
    if score < TWO_63 || score.is_nan() {
        cvtt(score)
    } else {
        cvtt(score - TWO_63) ^ (1 << 63)
    }
}

/// The point a stored score stands for: its cell's centre.
pub fn decode_score(score: f64) -> (f64, f64) {
    let cell = Cell {
        bits: score_to_bits(score),
        step: STEP_MAX,
    };
    centre(&decode(LON_SPAN, LAT_SPAN, cell))
}

/// The score a point is stored with (`None` outside the limits).
pub fn score_of(lon: f64, lat: f64) -> Option<f64> {
    // Redis writes the bits as a decimal integer and ZADD reads it back as a double: the
    // nearest double, which `as` also gives.
    encode_stored(lon, lat).map(|c| c.bits as f64)
}

/// The 11-character standard geohash of a stored score (GEOHASH): re-encoded over
/// latitudes ±90, the last character always `0` (Redis has 52 bits, not 55).
pub fn standard_geohash(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = decode_score(score);
    let world = Span {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode(LON_SPAN, world, lon, lat, STEP_MAX).map_or(0, |c| c.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().take(10).enumerate() {
        *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    out
}

// ---- neighbours ----

/// Moves a cell east (`+1`) or west (`-1`) by whole cells, wrapping around.
fn move_lon(cell: &mut Cell, d: i8) {
    move_bits(cell, d, 0xaaaa_aaaa_aaaa_aaaa, 0x5555_5555_5555_5555);
}

/// Moves a cell north (`+1`) or south (`-1`), wrapping around.
fn move_lat(cell: &mut Cell, d: i8) {
    move_bits(cell, d, 0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa);
}

/// Adds or subtracts one to the coordinate at the `mine` bit positions, carrying through
/// the other coordinate's positions (filled with ones, or zeros, so the carry passes).
fn move_bits(cell: &mut Cell, d: i8, mine: u64, other: u64) {
    if d == 0 {
        return;
    }
    let shift = 64 - u32::from(cell.step) * 2;
    let mut x = cell.bits & mine;
    let keep = cell.bits & other;
    let fill = other >> shift;
    if d > 0 {
        x = x.wrapping_add(fill.wrapping_add(1));
    } else {
        x = (x | fill).wrapping_sub(fill.wrapping_add(1));
    }
    x &= mine >> shift;
    cell.bits = x | keep;
}

// ---- search areas ----

/// A search area: a circle of `radius` units, or a `width` × `height` box, around a centre;
/// `to_metres` is the unit's length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// `(longitude, latitude)` of the centre.
    pub centre: (f64, f64),
    /// The unit, in metres (1, 1000, 0.3048, 1609.34).
    pub to_metres: f64,
    /// The extent, in units.
    pub kind: ShapeKind,
}

/// A search area's extent (BYRADIUS or BYBOX), in its units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShapeKind {
    /// BYRADIUS.
    Radius(f64),
    /// BYBOX width height.
    Box {
        /// East-west extent.
        width: f64,
        /// North-south extent.
        height: f64,
    },
}

/// How many bits per coordinate the nine cells of a search of `range_m` metres at latitude
/// `lat` use (Redis's estimate, slightly coarse near the poles).
fn steps_for_radius(mut range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return STEP_MAX;
    }
    let mut step: i32 = 1;
    // At most ~2100 doublings, from the smallest double (a negative range, which the
    // commands refuse, would never get there).
    while range_m > 0.0 && range_m < MERCATOR_MAX {
        range_m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, i32::from(STEP_MAX)) as u8
}

/// The shape's bounding box: `[min lon, min lat, max lon, max lat]`.
fn bounding_box(shape: &Shape) -> [f64; 4] {
    let (lon, lat) = shape.centre;
    let (half_w, half_h) = match shape.kind {
        ShapeKind::Radius(r) => (r, r),
        ShapeKind::Box { width, height } => (width / 2.0, height / 2.0),
    };
    let height = shape.to_metres * half_h;
    let width = shape.to_metres * half_w;
    let lat_delta = rad_deg(height / EARTH_RADIUS_M);
    let lon_delta_top = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat + lat_delta).cos());
    let lon_delta_bottom = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat - lat_delta).cos());
    // The box is widest at the edge nearer the equator.
    let lon_delta = if lat < 0.0 {
        lon_delta_bottom
    } else {
        lon_delta_top
    };
    [
        lon - lon_delta,
        lat - lat_delta,
        lon + lon_delta,
        lat + lat_delta,
    ]
}

/// The cells a search visits, in Redis's order: the centre's cell, then north, south, east,
/// west, north-east, north-west, south-east, south-west; `None` for a neighbour the search
/// area cannot reach.
pub fn search_cells(shape: &Shape) -> [Option<Cell>; 9] {
    let [min_lon, min_lat, max_lon, max_lat] = bounding_box(shape);
    let (lon, lat) = shape.centre;
    let radius_m = match shape.kind {
        ShapeKind::Radius(r) => r,
        ShapeKind::Box { width, height } => {
            ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
        }
    } * shape.to_metres;
    let mut steps = steps_for_radius(radius_m, lat);
    let Some(mut cell) = encode(LON_SPAN, LAT_SPAN, lon, lat, steps) else {
        return [None; 9];
    };
    let mut around = neighbours(cell);
    // A neighbour too close to the area's edge to cover it: one step coarser.
    let area_of = |c: Cell| decode(LON_SPAN, LAT_SPAN, c);
    let [n, s, e, w, ..] = around;
    let too_fine = area_of(n).lat.max < max_lat
        || area_of(s).lat.min > min_lat
        || area_of(e).lon.max < max_lon
        || area_of(w).lon.min > min_lon;
    if steps > 1 && too_fine {
        steps -= 1;
        let Some(coarser) = encode(LON_SPAN, LAT_SPAN, lon, lat, steps) else {
            return [None; 9];
        };
        cell = coarser;
        around = neighbours(cell);
    }
    let area = area_of(cell);
    let [n, s, e, w, ne, nw, se, sw] = around.map(Some);
    let mut out = [Some(cell), n, s, e, w, ne, nw, se, sw];
    if steps >= 2 {
        // Indices into `out` of the cells past each edge.
        let drop = |out: &mut [Option<Cell>; 9], idx: [usize; 3]| idx.map(|i| out[i] = None);
        if area.lat.min < min_lat {
            drop(&mut out, [2, 8, 7]);
        }
        if area.lat.max > max_lat {
            drop(&mut out, [1, 5, 6]);
        }
        if area.lon.min < min_lon {
            drop(&mut out, [4, 8, 6]);
        }
        if area.lon.max > max_lon {
            drop(&mut out, [3, 7, 5]);
        }
    }
    out
}

/// The eight neighbours: north, south, east, west, north-east, north-west, south-east,
/// south-west.
fn neighbours(cell: Cell) -> [Cell; 8] {
    let moved = |dlon: i8, dlat: i8| {
        let mut c = cell;
        move_lon(&mut c, dlon);
        move_lat(&mut c, dlat);
        c
    };
    [
        moved(0, 1),
        moved(0, -1),
        moved(1, 0),
        moved(-1, 0),
        moved(1, 1),
        moved(-1, 1),
        moved(1, -1),
        moved(-1, -1),
    ]
}

/// The stored scores of a cell's points: `[min, max)` (the cell's bits, and the next
/// cell's, aligned to 52 bits).
pub fn score_range(cell: Cell) -> (f64, f64) {
    let shift = 52 - u32::from(cell.step) * 2;
    let min = cell.bits << shift;
    let max = cell.bits.wrapping_add(1) << shift;
    (min as f64, max as f64)
}

// ---- distances ----

/// The distance between two latitudes on a meridian, in metres.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The haversine great-circle distance in metres (NaN where rounding pushes the haversine
/// of nearly antipodal points past 1, as in Redis).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = deg_rad(lon1);
    let lon2r = deg_rad(lon2);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = deg_rad(lat1);
    let lat2r = deg_rad(lat2);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// Whether a point is in the shape, and if so its distance from the centre in metres.
pub fn within(shape: &Shape, lon: f64, lat: f64) -> Option<f64> {
    let (clon, clat) = shape.centre;
    match shape.kind {
        ShapeKind::Radius(r) => {
            let d = distance(clon, clat, lon, lat);
            // NaN is not "farther": Redis keeps such a point.
            (d <= r * shape.to_metres || d.is_nan()).then_some(d)
        }
        ShapeKind::Box { width, height } => {
            let (w, h) = (width * shape.to_metres, height * shape.to_metres);
            if lat_distance(lat, clat) > h / 2.0 {
                return None;
            }
            if distance(lon, lat, clon, lat) > w / 2.0 {
                return None;
            }
            Some(distance(clon, clat, lon, lat))
        }
    }
}

/// Redis's `fixedpoint_d2string(d, 4)`, the text of a distance: `llrint(d × 10^4)` (so NaN
/// and overflow become `LLONG_MIN`, as on x86-64) written with four decimals.
pub fn format_distance(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".into();
    }
    let scaled = (d * 10_000.0).round_ties_even();
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let n: i64 = if scaled.is_nan() || !(-TWO_63..TWO_63).contains(&scaled) {
        i64::MIN
    } else {
        scaled as i64
    };
    let sign = if n < 0 { "-" } else { "" };
    let v = n.unsigned_abs();
    format!("{sign}{}.{:04}", v / 10_000, v % 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_round_trips() {
        for v in [0u32, 1, 0x3ff_ffff, 0xdead_beef, u32::MAX] {
            assert_eq!(gather(spread(v)), v);
            assert_eq!(spread(v) & 0xaaaa_aaaa_aaaa_aaaa, 0);
        }
    }

    #[test]
    fn scores_match_redis() {
        // GEOADD g 13.361389 38.115556 p → ZSCORE 3479099956230698 (redis-server 7.0.15).
        assert_eq!(score_of(13.361389, 38.115556), Some(3479099956230698.0));
        // Longitude 180 sets the 53rd bit, and the score keeps it.
        assert_eq!(score_of(180.0, 0.0), Some(10133099161583616.0));
        assert_eq!(score_of(180.1, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
    }

    #[test]
    fn decoding_matches_redis() {
        // GEOPOS prints 13.36138933897018433 38.11555639549629859.
        let (lon, lat) = decode_score(3479099956230698.0);
        let human = |v: f64| crate::engine::types::cfloat::LongDouble::from_f64(v).to_human();
        assert_eq!(human(lon), "13.36138933897018433");
        assert_eq!(human(lat), "38.11555639549629859");
        // ZADD g -5 neg → GEOPOS 180 85.0511287799999991.
        assert_eq!(decode_score(-5.0), (180.0, LAT_MAX));
        assert_eq!(score_to_bits(1e300), 0);
        assert_eq!(score_to_bits(f64::NEG_INFINITY), 1 << 63);
    }

    #[test]
    fn geohash_strings_match_redis() {
        assert_eq!(&standard_geohash(3479099956230698.0), b"sqc8b49rny0");
        // GEOADD g -180 0 b 0 85.05112878 n 0 -85.05112878 s (redis-server 7.0.15).
        assert_eq!(&standard_geohash(1125899906842624.0), b"80000000000");
        assert_eq!(&standard_geohash(6755399441055744.0), b"up05b5048p0");
        assert_eq!(&standard_geohash(2251799813685248.0), b"h0bh0hbj200");
    }

    #[test]
    fn distances_print_like_fixedpoint_d2string() {
        assert_eq!(format_distance(0.0), "0.0000");
        assert_eq!(format_distance(-0.0), "0.0000");
        assert_eq!(format_distance(0.00004), "0.0000");
        assert_eq!(format_distance(0.00006), "0.0001");
        assert_eq!(format_distance(1.23456), "1.2346");
        assert_eq!(format_distance(15566.00055), "15566.0006");
        assert_eq!(format_distance(f64::NAN), "-922337203685477.5808");
    }

    #[test]
    fn step_estimate_frames_the_radius() {
        assert_eq!(steps_for_radius(0.0, 0.0), 26);
        assert_eq!(steps_for_radius(f64::INFINITY, 0.0), 1);
        assert_eq!(steps_for_radius(1.0, 0.0), 24);
        assert_eq!(steps_for_radius(1.0, 70.0), 23);
        assert_eq!(steps_for_radius(1.0, -85.0), 22);
        assert_eq!(steps_for_radius(f64::MIN_POSITIVE / 4.0, 0.0), 26);
        assert_eq!(steps_for_radius(-1.0, 0.0), 1);
        assert_eq!(steps_for_radius(f64::NAN, 0.0), 1);
    }
}
