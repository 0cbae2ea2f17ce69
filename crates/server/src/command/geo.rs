//! Geospatial commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE and
//! the deprecated GEORADIUS family, as Redis 7.0 runs them over sorted sets.
//!
//! The geometry (scores, cells, distances, number formats) is `store::types::geo`; this
//! file parses arguments with Redis's checks and error texts, in its order, reads the
//! sorted set cell by cell and writes replies. GEOADD is ZADD with the positions turned
//! into scores, and is propagated as that ZADD, as Redis does. A search keeps its
//! members in the order Redis finds them (cell by cell, by score), and sorts them by
//! distance with a stable sort, as glibc's qsort does; only a COUNT smaller than the
//! matches with ties in distance may order the tied members differently (Redis then
//! uses an unstable partial sort).

use resp::{encode, Proto};
use store::events::class;
use store::types::geo::{self, Search, Shape};
use store::types::zset::{ScoreBound, ZSet};

use super::args::{self, is};
use super::collections::{self as coll, CollRef};
use super::flags::*;
use super::key_flags as kf;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Movable, Writes};

/// A longitude/latitude pair from two arguments, checked against the indexable range.
fn lon_lat(a: &[&[u8]]) -> Result<(f64, f64), CommandError> {
    let (lon, lat) = (args::float(a[0])?, args::float(a[1])?);
    if !geo::valid(lon, lat) {
        return Err(CommandError::Owned(format!("ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")));
    }
    Ok((lon, lat))
}

/// A unit's size in metres.
fn unit(arg: &[u8]) -> Result<f64, CommandError> {
    for (name, meters) in [("m", 1.0), ("km", 1000.0), ("ft", 0.3048), ("mi", 1609.34)] {
        if is(arg, name) {
            return Ok(meters);
        }
    }
    Err(CommandError::msg("ERR unsupported unit provided. please use M, KM, FT, MI"))
}

/// A non-negative size, with Redis's texts for a non-number (`not_number`) and a
/// negative one.
fn size(arg: &[u8], not_number: &'static str) -> Result<f64, CommandError> {
    args::float(arg).map_err(|_| CommandError::msg(not_number))
}

/// `radius unit` (BYRADIUS, GEORADIUS): (radius, metres per unit).
fn radius(a: &[&[u8]]) -> Result<(f64, f64), CommandError> {
    let r = size(a[0], "ERR need numeric radius")?;
    if r < 0.0 {
        return Err(CommandError::msg("ERR radius cannot be negative"));
    }
    Ok((r, unit(a[1])?))
}

/// `width height unit` (BYBOX): (width, height, metres per unit).
fn box_size(a: &[&[u8]]) -> Result<(f64, f64, f64), CommandError> {
    let w = size(a[0], "ERR need numeric width")?;
    let h = size(a[1], "ERR need numeric height")?;
    if h < 0.0 || w < 0.0 {
        return Err(CommandError::msg("ERR height or width cannot be negative"));
    }
    Ok((w, h, unit(a[2])?))
}

/// A coordinate as Redis writes one (GEOPOS, WITHCOORD): a bulk string in RESP2, a
/// double in RESP3.
fn coordinate(out: &mut Vec<u8>, v: f64, proto: Proto) {
    let text = geo::format_coordinate(v);
    match proto {
        Proto::Resp2 => encode::bulk(out, text.as_bytes()),
        Proto::Resp3 => {
            out.push(b',');
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// The position of a member, None when absent (or its score is not a geohash).
fn position(z: &CollRef<'_, ZSet>, member: &[u8]) -> Option<(f64, f64)> {
    geo::position_of(z.member_score(member)?)
}

/// GEOADD key [NX|XX] [CH] longitude latitude member [...] — ZADD of the positions'
/// scores, propagated as that ZADD.
fn geoadd(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut nx, mut xx) = (false, false);
    let mut first = 2;
    while first < a.len() {
        if is(a[first], "nx") {
            nx = true;
        } else if is(a[first], "xx") {
            xx = true;
        } else if !is(a[first], "ch") {
            break;
        }
        first += 1;
    }
    if !(a.len() - first).is_multiple_of(3) || (xx && nx) {
        return Err(CommandError::Syntax);
    }
    let mut zadd: Vec<Vec<u8>> = Vec::with_capacity(first + (a.len() - first) / 3 * 2);
    zadd.push(b"zadd".to_vec());
    zadd.extend(a[1..first].iter().map(|w| w.to_vec()));
    for triple in a[first..].chunks_exact(3) {
        let (lon, lat) = lon_lat(triple)?;
        let score = geo::score_of(lon, lat).ok_or(CommandError::msg("ERR invalid longitude,latitude pair"))?;
        zadd.push(score.to_string().into_bytes());
        zadd.push(triple[2].to_vec());
    }
    let words: Vec<&[u8]> = zadd.iter().map(Vec::as_slice).collect();
    super::sorted_sets::zadd(ctx, &words)?;
    if !ctx.client.changed_nothing {
        ctx.propagate_as(|| vec![zadd]);
    }
    Ok(())
}

/// GEODIST key member1 member2 [M|KM|FT|MI] — the distance, nil when a member is
/// missing.
fn geodist(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let to_meters = match a.len() {
        5 => unit(a[4])?,
        n if n > 5 => return Err(CommandError::Syntax),
        _ => 1.0,
    };
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let positions = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?.map(|z| (position(&z, a[2]), position(&z, a[3])));
    drop(shard);
    match positions {
        Some((Some((lon1, lat1)), Some((lon2, lat2)))) => {
            let d = geo::distance(lon1, lat1, lon2, lat2) / to_meters;
            encode::bulk(ctx.out, geo::format_distance(d).as_bytes());
        }
        _ => ctx.null(),
    }
    Ok(())
}

/// GEOPOS key [member ...] — each member's [longitude, latitude], nil when missing.
fn geopos(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let z = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?;
    let positions: Vec<Option<(f64, f64)>> = a[2..].iter().map(|m| z.as_ref().and_then(|z| position(z, m))).collect();
    drop(z);
    drop(shard);
    let proto = ctx.client.proto;
    encode::array_len(ctx.out, positions.len());
    for p in positions {
        match p {
            None => encode::null_array(ctx.out, proto),
            Some((lon, lat)) => {
                encode::array_len(ctx.out, 2);
                coordinate(ctx.out, lon, proto);
                coordinate(ctx.out, lat, proto);
            }
        }
    }
    Ok(())
}

/// GEOHASH key [member ...] — each member's 11-character standard geohash.
fn geohash(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let z = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?;
    let hashes: Vec<Option<[u8; 11]>> = a[2..]
        .iter()
        .map(|m| z.as_ref().and_then(|z| z.member_score(m)).and_then(geo::geohash_string))
        .collect();
    drop(z);
    drop(shard);
    let proto = ctx.client.proto;
    encode::array_len(ctx.out, hashes.len());
    for hash in hashes {
        match hash {
            None => encode::null(ctx.out, proto),
            Some(text) => encode::bulk(ctx.out, &text),
        }
    }
    Ok(())
}

/// Which search command runs (Redis's georadiusGeneric flags).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// GEORADIUS[_RO] key longitude latitude radius unit ...
    Radius { store: bool },
    /// GEORADIUSBYMEMBER[_RO] key member radius unit ...
    ByMember { store: bool },
    /// GEOSEARCH key FROMMEMBER|FROMLONLAT ... BYRADIUS|BYBOX ...
    Search,
    /// GEOSEARCHSTORE destination source ...
    SearchStore,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// One member a search found.
struct Found {
    member: Vec<u8>,
    score: f64,
    longitude: f64,
    latitude: f64,
    /// Metres from the centre.
    distance: f64,
}

/// What a search asked for, once its arguments are parsed.
#[derive(Default)]
struct Options {
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    any: bool,
    count: usize,
    store: Option<usize>,
    store_dist: bool,
}

/// The members of the sorted set inside the search's shape, cell by cell (at most
/// `limit` of them when not 0: ANY).
fn find(z: &ZSet, search: &Search, limit: usize) -> Vec<Found> {
    let mut found = Vec::new();
    for cell in search.cells() {
        if limit > 0 && found.len() >= limit {
            break;
        }
        let (min, max) = cell.score_interval();
        let (first, last) = z.score_ranks(
            ScoreBound { value: min as f64, exclusive: false },
            ScoreBound { value: max as f64, exclusive: true },
        );
        if first >= last {
            continue;
        }
        for (score, member) in z.range(first, last - 1) {
            if let Some((longitude, latitude)) = geo::position_of(score) {
                if let Some(distance) = search.distance_if_within(longitude, latitude) {
                    found.push(Found { member, score, longitude, latitude, distance });
                }
            }
            if limit > 0 && found.len() >= limit {
                break;
            }
        }
    }
    found
}

/// A search's outcome, before its reply or its store.
struct Outcome {
    options: Options,
    found: Vec<Found>,
    to_meters: f64,
    source_exists: bool,
}

/// The keys a search may store to (every argument after a STORE or STOREDIST among its
/// options; GEOSEARCHSTORE's destination), locked with its source so that the read
/// and the store are one step.
fn store_candidates<'a>(a: &[&'a [u8]], form: Form) -> Vec<&'a [u8]> {
    let from = match form {
        Form::SearchStore => return vec![a[1]],
        Form::Radius { store: true } => 6,
        Form::ByMember { store: true } => 5,
        _ => return Vec::new(),
    };
    (from..a.len().saturating_sub(1)).filter(|&i| is(a[i], "store") || is(a[i], "storedist")).map(|i| a[i + 1]).collect()
}

/// The search commands (Redis's georadiusGeneric): parse in Redis's order, find, sort,
/// then reply or store.
fn search_generic(ctx: &mut Ctx<'_>, a: &[&[u8]], form: Form) -> Result<(), CommandError> {
    let db = ctx.client.db;
    let src = a[if form == Form::SearchStore { 2 } else { 1 }];
    let mut keys = store_candidates(a, form);
    keys.push(src);
    let mut locked = ctx.ks().lock_keys(db, &keys);
    let outcome = {
        let (h, shard) = locked.shard_for(db, src);
        let z = coll::read_key::<ZSet>(ctx, shard, h, src)?;
        parse_and_find(a, form, z.as_ref())?
    };
    let Outcome { options: o, found, to_meters, source_exists } = outcome;
    match o.store {
        None => {
            drop(locked);
            // (GEORADIUS is a write command: without STORE it changes nothing.)
            ctx.client.changed_nothing = true;
            reply(ctx, &found, &o, to_meters);
        }
        Some(dest_at) => {
            let dest = a[dest_at];
            let limits = ctx.shared.type_limits.zset();
            let mut result = ZSet::new();
            if source_exists {
                for f in &found {
                    let score = if o.store_dist { f.distance / to_meters } else { f.score };
                    result.insert(&f.member, score, limits);
                }
            }
            let event = if form == Form::SearchStore { "geosearchstore" } else { "georadiusstore" };
            let (dh, dest_shard) = locked.shard_for(db, dest);
            let changed = coll::store(ctx, dest_shard, dh, dest, result, (class::ZSET, event));
            drop(locked);
            ctx.client.changed_nothing = !changed;
            ctx.client.changes = Some((found.len() as u64).max(1));
            encode::integer(ctx.out, found.len() as i64);
        }
    }
    Ok(())
}

/// Parses a search's arguments with Redis's checks, in its order, and finds its members
/// in `z` (the source, None when absent).
fn parse_and_find(a: &[&[u8]], form: Form, z: Option<&CollRef<'_, ZSet>>) -> Result<Outcome, CommandError> {
    let mut center = None;
    let mut shape = None;
    let mut to_meters = 1.0;
    let base = match form {
        Form::Radius { .. } => {
            center = Some(lon_lat(&a[2..4])?);
            let (r, m) = radius(&a[4..6])?;
            (shape, to_meters) = (Some(Shape::Radius(r)), m);
            6
        }
        Form::ByMember { .. } => {
            // Without a source key neither the member nor the radius is read: the
            // reply is empty (Redis goes on to check the options only).
            if let Some(z) = z {
                center = Some(position(z, a[2]).ok_or(CommandError::msg("ERR could not decode requested zset member"))?);
                let (r, m) = radius(&a[3..5])?;
                (shape, to_meters) = (Some(Shape::Radius(r)), m);
            }
            5
        }
        Form::Search => 2,
        Form::SearchStore => 3,
    };
    let searching = matches!(form, Form::Search | Form::SearchStore);
    let can_store = matches!(form, Form::Radius { store: true } | Form::ByMember { store: true });
    let mut o = Options { store: (form == Form::SearchStore).then_some(1), ..Options::default() };
    let mut sort = Sort::None;
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) = (false, false, false, false);
    let mut i = base;
    while i < a.len() {
        let w = a[i];
        let left = a.len() - 1 - i;
        if is(w, "withdist") {
            o.with_dist = true;
        } else if is(w, "withhash") {
            o.with_hash = true;
        } else if is(w, "withcoord") {
            o.with_coord = true;
        } else if is(w, "any") {
            o.any = true;
        } else if is(w, "asc") {
            sort = Sort::Asc;
        } else if is(w, "desc") {
            sort = Sort::Desc;
        } else if is(w, "count") && left >= 1 {
            let n = args::int(a[i + 1])?;
            if n <= 0 {
                return Err(CommandError::msg("ERR COUNT must be > 0"));
            }
            o.count = usize::try_from(n).unwrap_or(usize::MAX);
            i += 1;
        } else if (is(w, "store") || is(w, "storedist")) && left >= 1 && can_store {
            o.store = Some(i + 1);
            o.store_dist = is(w, "storedist");
            i += 1;
        } else if is(w, "storedist") && form == Form::SearchStore {
            o.store_dist = true;
        } else if is(w, "frommember") && left >= 1 && searching && !from_lonlat {
            // Without a source key the member is not looked for: the reply is empty.
            if let Some(z) = z {
                center = Some(position(z, a[i + 1]).ok_or(CommandError::msg("ERR could not decode requested zset member"))?);
            }
            from_member = true;
            i += 1;
        } else if is(w, "fromlonlat") && left >= 2 && searching && !from_member {
            center = Some(lon_lat(&a[i + 1..i + 3])?);
            from_lonlat = true;
            i += 2;
        } else if is(w, "byradius") && left >= 2 && searching && !by_box {
            let (r, m) = radius(&a[i + 1..i + 3])?;
            (shape, to_meters) = (Some(Shape::Radius(r)), m);
            by_radius = true;
            i += 2;
        } else if is(w, "bybox") && left >= 3 && searching && !by_radius {
            let (width, height, m) = box_size(&a[i + 1..i + 4])?;
            (shape, to_meters) = (Some(Shape::Box { width, height }), m);
            by_box = true;
            i += 3;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    let name = String::from_utf8_lossy(a[0]);
    if o.store.is_some() && (o.with_dist || o.with_hash || o.with_coord) {
        let what = if form == Form::SearchStore { "GEOSEARCHSTORE" } else { "STORE option in GEORADIUS" };
        return Err(CommandError::Owned(format!("ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options")));
    }
    if searching && !(from_member || from_lonlat) {
        return Err(CommandError::Owned(format!("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}")));
    }
    if searching && !(by_radius || by_box) {
        return Err(CommandError::Owned(format!("ERR exactly one of BYRADIUS and BYBOX can be specified for {name}")));
    }
    if o.any && o.count == 0 {
        return Err(CommandError::msg("ERR the ANY argument requires COUNT argument"));
    }
    // A COUNT without an order takes the nearest (not with ANY).
    if o.count != 0 && sort == Sort::None && !o.any {
        sort = Sort::Asc;
    }
    let mut found = match (z, center, shape) {
        (Some(z), Some(center), Some(shape)) => find(z, &Search { center, shape, to_meters }, if o.any { o.count } else { 0 }),
        _ => Vec::new(),
    };
    match sort {
        Sort::None => {}
        Sort::Asc => found.sort_by(|x, y| x.distance.partial_cmp(&y.distance).unwrap_or(std::cmp::Ordering::Equal)),
        Sort::Desc => found.sort_by(|x, y| y.distance.partial_cmp(&x.distance).unwrap_or(std::cmp::Ordering::Equal)),
    }
    if o.count != 0 && found.len() > o.count {
        found.truncate(o.count);
    }
    Ok(Outcome { options: o, found, to_meters, source_exists: z.is_some() })
}

/// A search's reply: members, each with what WITHDIST, WITHHASH and WITHCOORD ask for.
fn reply(ctx: &mut Ctx<'_>, found: &[Found], o: &Options, to_meters: f64) {
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    let extras = usize::from(o.with_dist) + usize::from(o.with_hash) + usize::from(o.with_coord);
    encode::array_len(out, found.len());
    for f in found {
        if extras > 0 {
            encode::array_len(out, extras + 1);
        }
        encode::bulk(out, &f.member);
        if o.with_dist {
            encode::bulk(out, geo::format_distance(f.distance / to_meters).as_bytes());
        }
        if o.with_hash {
            encode::integer(out, f.score as i64);
        }
        if o.with_coord {
            encode::array_len(out, 2);
            coordinate(out, f.longitude, proto);
            coordinate(out, f.latitude, proto);
        }
    }
}

fn georadius(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    search_generic(ctx, a, Form::Radius { store: true })
}

fn georadius_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    search_generic(ctx, a, Form::Radius { store: false })
}

fn georadiusbymember(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    search_generic(ctx, a, Form::ByMember { store: true })
}

fn georadiusbymember_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    search_generic(ctx, a, Form::ByMember { store: false })
}

fn geosearch(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    search_generic(ctx, a, Form::Search)
}

fn geosearchstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    search_generic(ctx, a, Form::SearchStore)
}

const GEO: &[&str] = &["geo"];
const KEY1_RO: &[KeySpec] = &[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];
const fn radius_store_specs(start_from: i32) -> [KeySpec; 3] {
    [
        KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } },
        KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Keyword { keyword: "STORE", start_from }, find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } },
        KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Keyword { keyword: "STOREDIST", start_from }, find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } },
    ]
}
const GEORADIUS_SPECS: [KeySpec; 3] = radius_store_specs(6);
const GEORADIUSBYMEMBER_SPECS: [KeySpec; 3] = radius_store_specs(5);

pub static COMMANDS: &[CommandSpec] = &[
    spec("geoadd", -5, WRITE | DENYOOM, (1, 1, 1), GEO, "geo", "Adds members with their positions to a geospatial index, creating the key if needed.", geoadd).since("3.2.0").args(ARGS_GEOADD).complexity("O(log(N)) for each item added").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("geodist", -4, READONLY, (1, 1, 1), GEO, "geo", "Returns the distance between two members of a geospatial index.", geodist).since("3.2.0").args(ARGS_GEODIST).complexity("O(log(N))").key_specs(KEY1_RO),
    spec("geohash", -2, READONLY, (1, 1, 1), GEO, "geo", "Returns members' positions as standard geohash strings.", geohash).since("3.2.0").args(ARGS_GEOHASH).complexity("O(log(N)) for each member").key_specs(KEY1_RO),
    spec("geopos", -2, READONLY, (1, 1, 1), GEO, "geo", "Returns members' longitudes and latitudes.", geopos).since("3.2.0").args(ARGS_GEOPOS).complexity("O(N)").key_specs(KEY1_RO),
    spec("georadius", -6, WRITE | DENYOOM, (1, 1, 1), GEO, "geo", "Finds the members within a radius of a position, optionally storing them.", georadius).since("3.2.0").args(ARGS_GEORADIUS).complexity("O(N+log(M))").deprecated("6.2.0").key_specs(&GEORADIUS_SPECS).movable(Movable::GeoStore { from: 6 }).writes(Writes::AfterFirst),
    spec("georadius_ro", -6, READONLY, (1, 1, 1), GEO, "geo", "Finds the members within a radius of a position.", georadius_ro).since("3.2.10").args(ARGS_GEORADIUS_RO).complexity("O(N+log(M))").deprecated("6.2.0").key_specs(KEY1_RO),
    spec("georadiusbymember", -5, WRITE | DENYOOM, (1, 1, 1), GEO, "geo", "Finds the members within a radius of a member, optionally storing them.", georadiusbymember).since("3.2.0").args(ARGS_GEORADIUSBYMEMBER).complexity("O(N+log(M))").deprecated("6.2.0").key_specs(&GEORADIUSBYMEMBER_SPECS).movable(Movable::GeoStore { from: 5 }).writes(Writes::AfterFirst),
    spec("georadiusbymember_ro", -5, READONLY, (1, 1, 1), GEO, "geo", "Finds the members within a radius of a member.", georadiusbymember_ro).since("3.2.10").args(ARGS_GEORADIUSBYMEMBER_RO).complexity("O(N+log(M))").deprecated("6.2.0").key_specs(KEY1_RO),
    spec("geosearch", -7, READONLY, (1, 1, 1), GEO, "geo", "Finds the members inside a circle or a box around a position or a member.", geosearch).since("6.2.0").args(ARGS_GEOSEARCH).complexity("O(N+log(M))").key_specs(KEY1_RO),
    spec("geosearchstore", -8, WRITE | DENYOOM, (1, 2, 1), GEO, "geo", "Stores the members inside a circle or a box around a position or a member.", geosearchstore).since("6.2.0").args(ARGS_GEOSEARCHSTORE).complexity("O(N+log(M))").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    const UNIT: &[Arg] = &[arg("m", PureToken).token("M"), arg("km", PureToken).token("KM"), arg("ft", PureToken).token("FT"), arg("mi", PureToken).token("MI")];
    const ORDER: &[Arg] = &[arg("asc", PureToken).token("ASC"), arg("desc", PureToken).token("DESC")];
    const FROM: &[Arg] = &[arg("member", String).token("FROMMEMBER"), arg("longitude_latitude", Block).token("FROMLONLAT").args(&[arg("longitude", Double), arg("latitude", Double)])];
    const BY: &[Arg] = &[arg("circle", Block).args(&[arg("radius", Double).token("BYRADIUS"), arg("unit", OneOf).args(UNIT)]), arg("box", Block).args(&[arg("width", Double).token("BYBOX"), arg("height", Double), arg("unit", OneOf).args(UNIT)])];

    pub const ARGS_GEOADD: &[Arg] = &[arg("key", Key).key_spec(0), arg("condition", OneOf).since("6.2.0").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX")]), arg("change", PureToken).token("CH").since("6.2.0").optional(), arg("longitude_latitude_member", Block).multiple().args(&[arg("longitude", Double), arg("latitude", Double), arg("member", String)])];
    pub const ARGS_GEODIST: &[Arg] = &[arg("key", Key).key_spec(0), arg("member1", String), arg("member2", String), arg("unit", OneOf).optional().args(UNIT)];
    pub const ARGS_GEOHASH: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_GEOPOS: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_GEORADIUS: &[Arg] = &[arg("key", Key).key_spec(0), arg("longitude", Double), arg("latitude", Double), arg("radius", Double), arg("unit", OneOf).args(UNIT), arg("withcoord", PureToken).token("WITHCOORD").optional(), arg("withdist", PureToken).token("WITHDIST").optional(), arg("withhash", PureToken).token("WITHHASH").optional(), arg("count", Block).optional().args(&[arg("count", Integer).token("COUNT"), arg("any", PureToken).token("ANY").since("6.2.0").optional()]), arg("order", OneOf).optional().args(ORDER), arg("key", Key).key_spec(1).token("STORE").optional(), arg("key", Key).key_spec(2).token("STOREDIST").optional()];
    pub const ARGS_GEORADIUS_RO: &[Arg] = &[arg("key", Key).key_spec(0), arg("longitude", Double), arg("latitude", Double), arg("radius", Double), arg("unit", OneOf).args(UNIT), arg("withcoord", PureToken).token("WITHCOORD").optional(), arg("withdist", PureToken).token("WITHDIST").optional(), arg("withhash", PureToken).token("WITHHASH").optional(), arg("count", Block).optional().args(&[arg("count", Integer).token("COUNT"), arg("any", PureToken).token("ANY").since("6.2.0").optional()]), arg("order", OneOf).optional().args(ORDER)];
    pub const ARGS_GEORADIUSBYMEMBER: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String), arg("radius", Double), arg("unit", OneOf).args(UNIT), arg("withcoord", PureToken).token("WITHCOORD").optional(), arg("withdist", PureToken).token("WITHDIST").optional(), arg("withhash", PureToken).token("WITHHASH").optional(), arg("count", Block).optional().args(&[arg("count", Integer).token("COUNT"), arg("any", PureToken).token("ANY").optional()]), arg("order", OneOf).optional().args(ORDER), arg("key", Key).key_spec(1).token("STORE").optional(), arg("key", Key).key_spec(2).token("STOREDIST").optional()];
    pub const ARGS_GEORADIUSBYMEMBER_RO: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String), arg("radius", Double), arg("unit", OneOf).args(UNIT), arg("withcoord", PureToken).token("WITHCOORD").optional(), arg("withdist", PureToken).token("WITHDIST").optional(), arg("withhash", PureToken).token("WITHHASH").optional(), arg("count", Block).optional().args(&[arg("count", Integer).token("COUNT"), arg("any", PureToken).token("ANY").optional()]), arg("order", OneOf).optional().args(ORDER)];
    pub const ARGS_GEOSEARCH: &[Arg] = &[arg("key", Key).key_spec(0), arg("from", OneOf).args(FROM), arg("by", OneOf).args(BY), arg("order", OneOf).optional().args(ORDER), arg("count", Block).optional().args(&[arg("count", Integer).token("COUNT"), arg("any", PureToken).token("ANY").optional()]), arg("withcoord", PureToken).token("WITHCOORD").optional(), arg("withdist", PureToken).token("WITHDIST").optional(), arg("withhash", PureToken).token("WITHHASH").optional()];
    pub const ARGS_GEOSEARCHSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("source", Key).key_spec(1), arg("from", OneOf).args(FROM), arg("by", OneOf).args(BY), arg("order", OneOf).optional().args(ORDER), arg("count", Block).optional().args(&[arg("count", Integer).token("COUNT"), arg("any", PureToken).token("ANY").optional()]), arg("storedist", PureToken).token("STOREDIST").optional()];
}
use docs_args::*;
