//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS and XINFO CONSUMERS, as Redis 7.0 replies
//! them (its field names and order; maps in RESP3).
//!
//! `radix-tree-keys` is the number of the stream's nodes (`store::types::stream`, laid
//! out as Redis's); `radix-tree-nodes` is the size of the compressed radix tree Redis
//! holds over those node keys (counted from the keys, as the tree's shape follows from
//! them).

use resp::{encode, Proto};
use store::types::stream::{Stream, StreamId};

use super::args::{self, is};
use super::collections as coll;
use super::flags::*;
use super::key_flags as kf;
use super::stream_groups::no_such_group;
use super::stream_reply::{reply_entry, reply_id};
use super::{container, spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};

/// Nodes of a compressed radix tree holding `keys` (sorted, distinct, equal length),
/// as Redis's rax builds one: a node for each run of bytes shared by the keys below it,
/// one for each branching, one for each key's end; an empty tree is its root alone.
fn rax_nodes(keys: &[[u8; 16]]) -> usize {
    fn count(keys: &[[u8; 16]], depth: usize) -> usize {
        if depth == 16 {
            return 1;
        }
        let first = keys[0][depth];
        if keys.iter().all(|k| k[depth] == first) {
            // A compressed node over the shared run, then what follows it.
            let mut end = depth;
            while end < 16 && keys.iter().all(|k| k[end] == keys[0][end]) {
                end += 1;
            }
            return 1 + count(keys, end);
        }
        // A branching node, then one subtree per next byte.
        let mut total = 1;
        let mut start = 0;
        while start < keys.len() {
            let b = keys[start][depth];
            let mut end = start;
            while end < keys.len() && keys[end][depth] == b {
                end += 1;
            }
            total += count(&keys[start..end], depth + 1);
            start = end;
        }
        total
    }
    if keys.is_empty() {
        1
    } else {
        count(keys, 0)
    }
}

fn field(out: &mut Vec<u8>, name: &str) {
    encode::bulk(out, name.as_bytes());
}

fn optional_int(out: &mut Vec<u8>, n: Option<u64>, proto: Proto) {
    match n {
        Some(n) => encode::integer(out, n as i64),
        None => encode::null(out, proto),
    }
}

fn optional_signed(out: &mut Vec<u8>, n: Option<i64>, proto: Proto) {
    match n {
        Some(n) => encode::integer(out, n),
        None => encode::null(out, proto),
    }
}

/// A group's position: `last-delivered-id`, `entries-read`, `lag`.
fn group_position(out: &mut Vec<u8>, s: &Stream, g: &store::types::stream::Group, proto: Proto) {
    field(out, "last-delivered-id");
    reply_id(out, g.last_id);
    field(out, "entries-read");
    optional_int(out, g.entries_read, proto);
    field(out, "lag");
    optional_signed(out, s.lag(g), proto);
}

/// The fields every XINFO STREAM reply starts with.
fn stream_head(out: &mut Vec<u8>, s: &Stream) {
    let keys: Vec<[u8; 16]> = s.nodes().map(|(id, _)| id.to_be_bytes()).collect();
    field(out, "length");
    encode::integer(out, s.len() as i64);
    field(out, "radix-tree-keys");
    encode::integer(out, keys.len() as i64);
    field(out, "radix-tree-nodes");
    encode::integer(out, rax_nodes(&keys) as i64);
    field(out, "last-generated-id");
    reply_id(out, s.last_id);
    field(out, "max-deleted-entry-id");
    reply_id(out, s.max_deleted_id);
    field(out, "entries-added");
    encode::integer(out, s.entries_added as i64);
    field(out, "recorded-first-entry-id");
    reply_id(out, s.first_id());
}

/// XINFO STREAM key [FULL [COUNT count]]
fn xinfo_stream(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let s = coll::read_key::<Stream>(ctx, &mut shard, h, a[2])?.ok_or(CommandError::NoSuchKey)?;
    let syntax = || CommandError::Owned(format!("ERR unknown subcommand or wrong number of arguments for '{}'. Try XINFO HELP.", String::from_utf8_lossy(a[1])));
    let mut full = None;
    if a.len() > 3 {
        if !is(a[3], "full") {
            return Err(syntax());
        }
        let mut count = 10i64;
        if a.len() > 4 {
            if a.len() != 6 || !is(a[4], "count") {
                return Err(syntax());
            }
            count = args::int(a[5])?.max(0);
        }
        full = Some(usize::try_from(count).unwrap_or(usize::MAX));
    }
    let proto = ctx.client.proto;
    let now = ctx.now_ms;
    let out = &mut *ctx.out;
    let Some(count) = full else {
        encode::map_len(out, 10, proto);
        stream_head(out, &s);
        field(out, "groups");
        encode::integer(out, s.groups.len() as i64);
        for (name, entry) in [("first-entry", s.first_entry()), ("last-entry", s.last_entry())] {
            field(out, name);
            match entry {
                Some(e) => reply_entry(out, &e),
                None => encode::null(out, proto),
            }
        }
        return Ok(());
    };
    let limit = if count == 0 { usize::MAX } else { count };
    encode::map_len(out, 9, proto);
    stream_head(out, &s);
    field(out, "entries");
    let entries: Vec<_> = s.range(StreamId::MIN, StreamId::MAX).take(limit).collect();
    encode::array_len(out, entries.len());
    for e in entries {
        reply_entry(out, &e);
    }
    field(out, "groups");
    encode::array_len(out, s.groups.len());
    for (name, g) in &s.groups {
        encode::map_len(out, 7, proto);
        field(out, "name");
        encode::bulk(out, name);
        group_position(out, &s, g, proto);
        field(out, "pel-count");
        encode::integer(out, g.pel.len() as i64);
        field(out, "pending");
        let pending: Vec<_> = g.pel.iter().take(limit).collect();
        encode::array_len(out, pending.len());
        for (id, p) in pending {
            encode::array_len(out, 4);
            reply_id(out, *id);
            encode::bulk(out, &p.consumer);
            encode::integer(out, p.delivery_time);
            encode::integer(out, p.delivery_count as i64);
        }
        field(out, "consumers");
        encode::array_len(out, g.consumers.len());
        for (cname, c) in &g.consumers {
            encode::map_len(out, 4, proto);
            field(out, "name");
            encode::bulk(out, cname);
            field(out, "seen-time");
            encode::integer(out, c.seen_time);
            field(out, "pel-count");
            encode::integer(out, c.pel.len() as i64);
            field(out, "pending");
            let mine: Vec<_> = c.pel.iter().take(limit).collect();
            encode::array_len(out, mine.len());
            for id in mine {
                let p = &g.pel[id];
                encode::array_len(out, 3);
                reply_id(out, *id);
                encode::integer(out, p.delivery_time);
                encode::integer(out, p.delivery_count as i64);
            }
        }
    }
    let _ = now;
    Ok(())
}

/// XINFO GROUPS key
fn xinfo_groups(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let s = coll::read_key::<Stream>(ctx, &mut shard, h, a[2])?.ok_or(CommandError::NoSuchKey)?;
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    encode::array_len(out, s.groups.len());
    for (name, g) in &s.groups {
        encode::map_len(out, 6, proto);
        field(out, "name");
        encode::bulk(out, name);
        field(out, "consumers");
        encode::integer(out, g.consumers.len() as i64);
        field(out, "pending");
        encode::integer(out, g.pel.len() as i64);
        group_position(out, &s, g, proto);
    }
    Ok(())
}

/// XINFO CONSUMERS key group
fn xinfo_consumers(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let s = coll::read_key::<Stream>(ctx, &mut shard, h, a[2])?.ok_or(CommandError::NoSuchKey)?;
    let g = s.groups.get(a[3]).ok_or_else(|| no_such_group(a[2], a[3]))?;
    let proto = ctx.client.proto;
    let now = ctx.now_ms;
    let out = &mut *ctx.out;
    encode::array_len(out, g.consumers.len());
    for (name, c) in &g.consumers {
        encode::map_len(out, 3, proto);
        field(out, "name");
        encode::bulk(out, name);
        field(out, "pending");
        encode::integer(out, c.pel.len() as i64);
        field(out, "idle");
        encode::integer(out, (now - c.seen_time).max(0));
    }
    Ok(())
}

fn xinfo_help(ctx: &mut Ctx<'_>, _a: &[&[u8]]) -> Result<(), CommandError> {
    const HELP: &[&str] = &[
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    ];
    super::reply_help_text(ctx, HELP);
    Ok(())
}

const STREAM: &[&str] = &["stream"];
const KEY2_RO: &[KeySpec] = &[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];

#[rustfmt::skip]
static XINFO_SUBCOMMANDS: &[CommandSpec] = &[
    spec("consumers", 4, READONLY, (2, 2, 1), STREAM, "stream", "Returns a list of the consumers in a consumer group.", xinfo_consumers).since("5.0.0").args(ARGS_CONSUMERS).complexity("O(1)").tips(&["nondeterministic_output"]).key_specs(KEY2_RO),
    spec("groups", 3, READONLY, (2, 2, 1), STREAM, "stream", "Returns a list of the consumer groups of a stream.", xinfo_groups).since("5.0.0").args(ARGS_GROUPS).complexity("O(1)").key_specs(KEY2_RO),
    spec("stream", -3, READONLY, (2, 2, 1), STREAM, "stream", "Returns information about a stream.", xinfo_stream).since("5.0.0").args(ARGS_STREAM).complexity("O(1)").key_specs(KEY2_RO),
    spec("help", 2, LOADING | STALE, (0, 0, 0), STREAM, "stream", "Returns helpful text about the different subcommands.", xinfo_help).since("5.0.0").complexity("O(1)"),
];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    container("xinfo", "stream", "A container for stream introspection commands.", XINFO_SUBCOMMANDS).since("5.0.0").complexity("Depends on subcommand."),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_CONSUMERS: &[Arg] = &[arg("key", Key).key_spec(0), arg("groupname", String)];
    pub const ARGS_GROUPS: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_STREAM: &[Arg] = &[
        arg("key", Key).key_spec(0),
        arg("full", Block).token("FULL").optional().args(&[arg("count", Integer).token("COUNT").optional()]),
    ];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_tree_nodes_as_redis_counts_them() {
        let key = |ms: u64| StreamId::new(ms, 0).to_be_bytes();
        assert_eq!(rax_nodes(&[]), 1);
        assert_eq!(rax_nodes(&[key(1)]), 2);
        // Redis 7.0.15: 250 entries in nodes of 100 (keys 1, 101, 201): 8 nodes.
        assert_eq!(rax_nodes(&[key(1), key(101), key(201)]), 8);
    }
}
