//! Geospatial indexes over sorted sets: Redis 7.0's 52-bit geohash scores, its search
//! areas and its distances, computed in the same floating-point steps so that scores,
//! positions, distances and the members a search finds are Redis's.
//!
//! A position is stored as a sorted set member whose score is its geohash: longitude
//! (-180..180) and latitude (-85.05112878..85.05112878, the Web Mercator limits) each
//! cut into 2^26 steps, their bits interleaved (latitude in the even bits, longitude in
//! the odd ones). A search by radius or box picks a geohash precision from the size of
//! the shape, takes the cell of the centre and its eight neighbours (dropping those the
//! shape cannot reach), reads each cell's score interval from the sorted set, and keeps
//! the members within the shape by great-circle (haversine) distance on a sphere of
//! Redis's radius.

/// Earth's radius in metres, as Redis uses it.
pub const EARTH_RADIUS_IN_METERS: f64 = 6_372_797.560856;
/// Half the Mercator projection's width in metres (geohashEstimateStepsByRadius).
const MERCATOR_MAX: f64 = 20_037_726.37;

pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
pub const LAT_MIN: f64 = -85.051_128_78;
pub const LAT_MAX: f64 = 85.051_128_78;
/// The precision of a stored score: 26 steps per coordinate, 52 bits.
pub const STEP_MAX: u8 = 26;

const D_R: f64 = std::f64::consts::PI / 180.0;

fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}

fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// A geohash: `bits` holds `step` bits of each coordinate, interleaved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hash {
    pub bits: u64,
    pub step: u8,
}

impl Hash {
    const ZERO: Hash = Hash { bits: 0, step: 0 };

    fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The sorted set scores this cell covers: `min <= score < max`.
    pub fn score_interval(self) -> (u64, u64) {
        let shift = 52 - u32::from(self.step) * 2;
        (self.bits << shift, (self.bits + 1) << shift)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Range {
    min: f64,
    max: f64,
}

/// The rectangle a geohash stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Area {
    longitude: Range,
    latitude: Range,
}

const LONG_RANGE: Range = Range { min: LONG_MIN, max: LONG_MAX };
const LAT_RANGE: Range = Range { min: LAT_MIN, max: LAT_MAX };

/// Spreads the 32 bits of `x` to the even bits and those of `y` to the odd ones.
fn interleave(x: u32, y: u32) -> u64 {
    fn spread(v: u32) -> u64 {
        let mut v = u64::from(v);
        v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v << 2)) & 0x3333_3333_3333_3333;
        (v | (v << 1)) & 0x5555_5555_5555_5555
    }
    spread(x) | (spread(y) << 1)
}

/// The inverse of [`interleave`]: (even bits, odd bits).
fn deinterleave(bits: u64) -> (u32, u32) {
    fn squash(mut v: u64) -> u32 {
        v &= 0x5555_5555_5555_5555;
        v = (v | (v >> 1)) & 0x3333_3333_3333_3333;
        v = (v | (v >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v >> 4)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v >> 8)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v >> 16)) & 0x0000_0000_FFFF_FFFF;
        v as u32
    }
    (squash(bits), squash(bits >> 1))
}

/// Whether a position may be indexed.
pub fn valid(longitude: f64, latitude: f64) -> bool {
    (LONG_MIN..=LONG_MAX).contains(&longitude) && (LAT_MIN..=LAT_MAX).contains(&latitude)
}

fn encode_in(long_range: Range, lat_range: Range, longitude: f64, latitude: f64, step: u8) -> Option<Hash> {
    if !valid(longitude, latitude)
        || latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min) * scale;
    let long_offset = (longitude - long_range.min) / (long_range.max - long_range.min) * scale;
    // Truncated to integers as C converts a double to uint32_t.
    Some(Hash { bits: interleave(lat_offset as u32, long_offset as u32), step })
}

fn encode(longitude: f64, latitude: f64, step: u8) -> Option<Hash> {
    encode_in(LONG_RANGE, LAT_RANGE, longitude, latitude, step)
}

/// The score a position is stored with (GEOADD), None outside the indexable range.
pub fn score_of(longitude: f64, latitude: f64) -> Option<u64> {
    encode(longitude, latitude, STEP_MAX).map(|h| h.score_interval().0)
}

fn decode(hash: Hash) -> Option<Area> {
    if hash.is_zero() {
        return None;
    }
    let (ilat, ilong) = deinterleave(hash.bits);
    let scale = (1u64 << hash.step) as f64;
    let lat_scale = LAT_RANGE.max - LAT_RANGE.min;
    let long_scale = LONG_RANGE.max - LONG_RANGE.min;
    let at = |i: u32, range: Range, width: f64| range.min + (f64::from(i) / scale) * width;
    Some(Area {
        latitude: Range { min: at(ilat, LAT_RANGE, lat_scale), max: at(ilat.wrapping_add(1), LAT_RANGE, lat_scale) },
        longitude: Range { min: at(ilong, LONG_RANGE, long_scale), max: at(ilong.wrapping_add(1), LONG_RANGE, long_scale) },
    })
}

/// The position a score stands for: the centre of its cell, clamped to the indexable
/// range (GEOPOS). None for a score that is not a geohash (0 with step 0 never is).
pub fn position_of(score: f64) -> Option<(f64, f64)> {
    // C's double to uint64_t conversion: truncation (a negative score is undefined in
    // C; here it saturates to 0).
    let area = decode(Hash { bits: score as u64, step: STEP_MAX })?;
    let longitude = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let latitude = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    Some((longitude, latitude))
}

/// The 11-character standard geohash of a stored score (GEOHASH): the position
/// encoded again with the standard latitude range of -90..90.
pub fn geohash_string(score: f64) -> Option<[u8; 11]> {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (longitude, latitude) = position_of(score)?;
    let standard = encode_in(LONG_RANGE, Range { min: -90.0, max: 90.0 }, longitude, latitude, STEP_MAX);
    let bits = standard.map_or(0, |h| h.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        *c = ALPHABET[((bits >> (52 - (i + 1) * 5)) & 0x1f) as usize];
    }
    Some(out)
}

/// The distance in metres along the latitude alone.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The great-circle distance in metres between two positions (haversine).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let v = ((deg_rad(lon2) - deg_rad(lon1)) / 2.0).sin();
    // On one meridian the formula reduces to the latitude difference.
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

/// The shape of a search, its sizes in the search's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Radius(f64),
    Box { width: f64, height: f64 },
}

/// A search: a shape around a centre (longitude, latitude), and the unit's size in
/// metres. (The sizes stay in the unit, converted where Redis converts them: the same
/// products and quotients give the same cells and the same edge decisions.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    pub center: (f64, f64),
    pub shape: Shape,
    pub to_meters: f64,
}

impl Search {
    /// The distance in metres from the centre to a position inside the shape, None
    /// when it lies outside (a box compares the latitude and longitude distances with
    /// its half height and half width first).
    pub fn distance_if_within(&self, longitude: f64, latitude: f64) -> Option<f64> {
        let (cx, cy) = self.center;
        match self.shape {
            Shape::Radius(radius) => Some(distance(cx, cy, longitude, latitude)).filter(|&d| d <= radius * self.to_meters),
            Shape::Box { width, height } => {
                let (width, height) = (width * self.to_meters, height * self.to_meters);
                if lat_distance(latitude, cy) > height / 2.0 {
                    return None;
                }
                if distance(longitude, latitude, cx, latitude) > width / 2.0 {
                    return None;
                }
                Some(distance(cx, cy, longitude, latitude))
            }
        }
    }

    /// [min longitude, min latitude, max longitude, max latitude] of the shape; the
    /// longitude span is measured at the edge nearer the pole.
    fn bounding_box(&self) -> [f64; 4] {
        let (longitude, latitude) = self.center;
        let (height, width) = match self.shape {
            Shape::Radius(r) => (self.to_meters * r, self.to_meters * r),
            Shape::Box { width, height } => (self.to_meters * (height / 2.0), self.to_meters * (width / 2.0)),
        };
        let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
        let long_delta_top = rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
        let long_delta_bottom = rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
        let long_delta = if latitude < 0.0 { long_delta_bottom } else { long_delta_top };
        [longitude - long_delta, latitude - lat_delta, longitude + long_delta, latitude + lat_delta]
    }

    /// The cells to read, in Redis's order (the centre's, then north, south, east,
    /// west, north-east, north-west, south-east, south-west), without those the shape
    /// cannot reach and without one equal to the cell read just before it.
    pub fn cells(&self) -> Vec<Hash> {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounding_box();
        let (longitude, latitude) = self.center;
        let radius = match self.shape {
            Shape::Radius(r) => r,
            // The distance from the centre to a corner.
            Shape::Box { width, height } => ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt(),
        } * self.to_meters;
        let mut steps = estimate_steps(radius, latitude);
        let mut hash = encode(longitude, latitude, steps).unwrap_or(Hash { bits: 0, step: steps });
        let mut around = neighbors(hash);
        let mut area = decode(hash).unwrap_or_default();
        // A cell next to the shape's edge may be too small to cover it: one step less.
        let decrease = {
            let edge = |h: Hash| decode(h).unwrap_or_default();
            edge(around.north).latitude.max < max_lat
                || edge(around.south).latitude.min > min_lat
                || edge(around.east).longitude.max < max_lon
                || edge(around.west).longitude.min > min_lon
        };
        if steps > 1 && decrease {
            steps -= 1;
            hash = encode(longitude, latitude, steps).unwrap_or(Hash { bits: 0, step: steps });
            around = neighbors(hash);
            area = decode(hash).unwrap_or_default();
        }
        // The neighbours on a side the shape does not reach are not read.
        if steps >= 2 {
            let n = &mut around;
            let clear = |side: [&mut Hash; 3]| side.into_iter().for_each(|h| *h = Hash::ZERO);
            if area.latitude.min < min_lat {
                clear([&mut n.south, &mut n.south_west, &mut n.south_east]);
            }
            if area.latitude.max > max_lat {
                clear([&mut n.north, &mut n.north_east, &mut n.north_west]);
            }
            if area.longitude.min < min_lon {
                clear([&mut n.west, &mut n.south_west, &mut n.north_west]);
            }
            if area.longitude.max > max_lon {
                clear([&mut n.east, &mut n.south_east, &mut n.north_east]);
            }
        }
        let all = [
            hash,
            around.north,
            around.south,
            around.east,
            around.west,
            around.north_east,
            around.north_west,
            around.south_east,
            around.south_west,
        ];
        // A huge shape can make neighbours equal: a cell equal to the one read just
        // before it is skipped (as in Redis, not when that one was the centre's).
        let mut cells: Vec<Hash> = Vec::with_capacity(9);
        let mut last = 0usize;
        for (i, cell) in all.into_iter().enumerate() {
            if cell.is_zero() || (last > 0 && all[last] == cell) {
                continue;
            }
            cells.push(cell);
            last = i;
        }
        cells
    }
}

/// The geohash precision whose cells cover a shape of this radius at this latitude.
fn estimate_steps(range_meters: f64, latitude: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut range = range_meters;
    let mut step: i32 = 1;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    // Meridians converge towards the poles: wider cells.
    if !(-66.0..=66.0).contains(&latitude) {
        step -= 1;
        if !(-80.0..=80.0).contains(&latitude) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

struct Neighbors {
    north: Hash,
    south: Hash,
    east: Hash,
    west: Hash,
    north_east: Hash,
    south_east: Hash,
    north_west: Hash,
    south_west: Hash,
}

/// Moves a cell along one coordinate's bits (odd: longitude, even: latitude), wrapping
/// around at the edges of the range.
fn moved(hash: Hash, odd: bool, d: i8) -> Hash {
    if d == 0 {
        return hash;
    }
    const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let shift = 64 - u32::from(hash.step) * 2;
    let (mine, other, fill, keep) = if odd {
        (hash.bits & ODD, hash.bits & EVEN, EVEN.checked_shr(shift).unwrap_or(0), ODD.checked_shr(shift).unwrap_or(0))
    } else {
        (hash.bits & EVEN, hash.bits & ODD, ODD.checked_shr(shift).unwrap_or(0), EVEN.checked_shr(shift).unwrap_or(0))
    };
    let mine = if d > 0 {
        mine.wrapping_add(fill.wrapping_add(1))
    } else {
        (mine | fill).wrapping_sub(fill.wrapping_add(1))
    };
    Hash { bits: (mine & keep) | other, step: hash.step }
}

fn neighbors(hash: Hash) -> Neighbors {
    let at = |dx: i8, dy: i8| moved(moved(hash, true, dx), false, dy);
    Neighbors {
        east: at(1, 0),
        west: at(-1, 0),
        south: at(0, -1),
        north: at(0, 1),
        north_west: at(-1, 1),
        south_west: at(-1, -1),
        north_east: at(1, 1),
        south_east: at(1, -1),
    }
}

/// A distance as GEODIST and WITHDIST write it: rounded to 4 decimals as Redis's
/// fixed-point writer rounds (the value times 10^4, to the nearest integer, ties to
/// even).
pub fn format_distance(d: f64) -> String {
    let scaled = (d * 10_000.0).round_ties_even();
    if !scaled.is_finite() || scaled.abs() >= 9.0e18 {
        return format!("{d:.4}");
    }
    let n = scaled as i64;
    let sign = if n < 0 { "-" } else { "" };
    let abs = n.unsigned_abs();
    format!("{sign}{}.{:04}", abs / 10_000, abs % 10_000)
}

/// A coordinate as GEOPOS and WITHCOORD write it (Redis's `%.17Lf` with the trailing
/// zeros removed).
pub fn format_coordinate(v: f64) -> String {
    let mut s = format!("{v:.17}");
    if s.contains('.') {
        let trimmed = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(trimmed);
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_round_trips() {
        for (x, y) in [(0u32, 0u32), (1, 0), (0, 1), (0x3ff_ffff, 0x155_5555), (u32::MAX, 7)] {
            assert_eq!(deinterleave(interleave(x, y)), (x, y));
        }
        assert_eq!(interleave(1, 0), 1);
        assert_eq!(interleave(0, 1), 2);
    }

    #[test]
    fn scores_and_positions_are_redis_s() {
        // GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania" on
        // redis-server 7.0.15, then ZSCORE, GEOPOS, GEOHASH and GEODIST.
        assert_eq!(score_of(13.361389, 38.115556), Some(3_479_099_956_230_698));
        assert_eq!(score_of(15.087269, 37.502669), Some(3_479_447_370_796_909));
        let (lon, lat) = position_of(3_479_099_956_230_698.0).expect("a position");
        assert_eq!((format_coordinate(lon).as_str(), format_coordinate(lat).as_str()), ("13.36138933897018433", "38.11555639549629859"));
        assert_eq!(&geohash_string(3_479_099_956_230_698.0).expect("a hash"), b"sqc8b49rny0");
        let (lon2, lat2) = position_of(3_479_447_370_796_909.0).expect("a position");
        assert_eq!(format_distance(distance(lon, lat, lon2, lat2)), "166274.1516");
        assert_eq!(format_distance(distance(lon, lat, lon2, lat2) / 1000.0), "166.2742");
        assert_eq!(score_of(180.1, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
    }

    #[test]
    fn distances_format_as_redis_does() {
        assert_eq!(format_distance(0.0), "0.0000");
        assert_eq!(format_distance(1.23456), "1.2346");
        assert_eq!(format_coordinate(-0.0), "0");
        assert_eq!(format_coordinate(2.5), "2.5");
        assert_eq!(format_coordinate(10.0), "10");
    }

    #[test]
    fn neighbours_wrap_and_cells_cover_the_centre() {
        let h = encode(0.0, 0.0, 4).expect("a hash");
        let n = neighbors(h);
        let area = decode(h).expect("an area");
        let east = decode(n.east).expect("an area");
        assert_eq!(east.longitude.min, area.longitude.max);
        assert_eq!(east.latitude, area.latitude);
        let north = decode(n.north).expect("an area");
        assert_eq!(north.latitude.min, area.latitude.max);
        let search = Search { center: (13.361389, 38.115556), shape: Shape::Radius(200.0), to_meters: 1000.0 };
        let cells = search.cells();
        assert!(!cells.is_empty() && cells.len() <= 9);
        let palermo = score_of(13.361389, 38.115556).expect("a score");
        let (min, max) = cells[0].score_interval();
        assert!((min..max).contains(&palermo), "the centre's cell comes first");
    }
}
