//! Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH and PUBSUB, and
//! Redis 7's sharded pub/sub (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH): shard channels are
//! a namespace of their own, which patterns do not match (without a cluster, one shard
//! holds them all).
//!
//! Subscriptions live in `Shared::pubsub` (channel -> subscribers; patterns in
//! subscription order; shard channel -> subscribers). PUBLISH encodes each message once per protocol and posts it to
//! each subscriber's event loop mailbox (`Shared::post`), which wakes that loop; the
//! loop appends it to the connection's output. Messages from one publisher reach a
//! subscriber in publish order (one mailbox per loop, drained in order). A subscriber
//! whose pending output exceeds the pubsub output limit is disconnected by its loop.
//! RESP2 clients in subscribed mode may only run the commands Redis allows there.

use std::sync::atomic::Ordering;

use resp::{encode, Proto};

use super::flags::*;
pub use super::client::Subscriptions;
use super::key_flags as kf;
use super::{container, spec, BeginSearch, Channels, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use crate::shared::{PubSub, Shared, Subscriber};

fn me(ctx: &Ctx<'_>) -> Subscriber {
    Subscriber {
        owner: ctx.client.info.owner.load(Ordering::Relaxed),
        id: ctx.client.info.id,
        resp3: ctx.client.proto == Proto::Resp3,
    }
}

fn frame(ctx: &mut Ctx<'_>, kind: &[u8], name: Option<&[u8]>, count: usize) {
    if ctx.client.reply_mode != super::ReplyMode::On {
        // Sent under CLIENT REPLY OFF / SKIP too, as Redis's pushes are (conn.rs).
        ctx.client.reply_is_push = true;
    }
    let proto = ctx.client.proto;
    encode::push_len(ctx.out, 3, proto);
    encode::bulk(ctx.out, kind);
    match name {
        Some(n) => encode::bulk(ctx.out, n),
        None => encode::null(ctx.out, proto),
    }
    encode::integer(ctx.out, count as i64);
}

/// SUBSCRIBE channel [channel ...] — one confirmation per channel.
fn subscribe(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let who = me(ctx);
    for ch in &a[1..] {
        if !ctx.client.subs.channels.iter().any(|c| c == ch) {
            ctx.client.subs.channels.push(ch.to_vec());
            ctx.shared.pubsub.lock().channels.entry(ch.to_vec()).or_default().push(who);
        }
        let n = ctx.client.subs.plain_count();
        frame(ctx, b"subscribe", Some(ch), n);
    }
    Ok(())
}

/// PSUBSCRIBE pattern [pattern ...] — one confirmation per pattern.
fn psubscribe(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let who = me(ctx);
    for pat in &a[1..] {
        if !ctx.client.subs.patterns.iter().any(|p| p == pat) {
            ctx.client.subs.patterns.push(pat.to_vec());
            let mut ps = ctx.shared.pubsub.lock();
            match ps.patterns.iter_mut().find(|(p, _)| p == pat) {
                Some((_, subs)) => subs.push(who),
                None => ps.patterns.push((pat.to_vec(), vec![who])),
            }
        }
        let n = ctx.client.subs.plain_count();
        frame(ctx, b"psubscribe", Some(pat), n);
    }
    Ok(())
}

fn remove_channel(shared: &Shared, ch: &[u8], id: u64) {
    remove_from(&mut shared.pubsub.lock().channels, ch, id);
}

fn remove_from(map: &mut hashbrown::HashMap<Vec<u8>, Vec<Subscriber>>, ch: &[u8], id: u64) {
    if let Some(subs) = map.get_mut(ch) {
        subs.retain(|s| s.id != id);
        if subs.is_empty() {
            map.remove(ch);
        }
    }
}

/// SSUBSCRIBE shardchannel [shardchannel ...] — one confirmation per shard channel,
/// with the count of the client's shard channels.
fn ssubscribe(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    // Unlike SUBSCRIBE, refused inside a transaction (Redis 7.0's DENY_BLOCKING check).
    if ctx.client.in_exec {
        return Err(CommandError::msg("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"));
    }
    let who = me(ctx);
    for ch in &a[1..] {
        if !ctx.client.subs.shard_channels.iter().any(|c| c == ch) {
            ctx.client.subs.shard_channels.push(ch.to_vec());
            ctx.shared.pubsub.lock().shard_channels.entry(ch.to_vec()).or_default().push(who);
        }
        let n = ctx.client.subs.shard_channels.len();
        frame(ctx, b"ssubscribe", Some(ch), n);
    }
    Ok(())
}

/// SUNSUBSCRIBE [shardchannel ...] — one confirmation per shard channel (all when
/// none given).
fn sunsubscribe(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let remove = |shared: &Shared, ch: &[u8], id: u64| remove_from(&mut shared.pubsub.lock().shard_channels, ch, id);
    unsubscribe_generic(ctx, a, b"sunsubscribe", |s| &mut s.shard_channels, remove, |s| s.shard_channels.len());
    Ok(())
}

/// UNSUBSCRIBE, PUNSUBSCRIBE and SUNSUBSCRIBE: each name given (every one of the
/// client's `list` when none), dropped if subscribed, and confirmed with the count
/// `count` gives after it (a confirmation without a name when there is none).
fn unsubscribe_generic(
    ctx: &mut Ctx<'_>,
    a: &[&[u8]],
    kind: &[u8],
    list: fn(&mut Subscriptions) -> &mut Vec<Vec<u8>>,
    remove: impl Fn(&Shared, &[u8], u64),
    count: fn(&Subscriptions) -> usize,
) {
    let id = ctx.client.info.id;
    let targets: Vec<Vec<u8>> = if a.len() > 1 { a[1..].iter().map(|c| c.to_vec()).collect() } else { list(&mut ctx.client.subs).clone() };
    if targets.is_empty() {
        let n = count(&ctx.client.subs);
        frame(ctx, kind, None, n);
    }
    for name in targets {
        let subscribed = list(&mut ctx.client.subs);
        if let Some(i) = subscribed.iter().position(|c| *c == name) {
            subscribed.remove(i);
            remove(ctx.shared, &name, id);
        }
        let n = count(&ctx.client.subs);
        frame(ctx, kind, Some(&name), n);
    }
}

fn remove_pattern(shared: &Shared, pat: &[u8], id: u64) {
    let mut ps = shared.pubsub.lock();
    if let Some(i) = ps.patterns.iter().position(|(p, _)| p == pat) {
        ps.patterns[i].1.retain(|s| s.id != id);
        if ps.patterns[i].1.is_empty() {
            ps.patterns.remove(i);
        }
    }
}

/// UNSUBSCRIBE [channel ...] — one confirmation per channel (all when none given).
fn unsubscribe(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    unsubscribe_generic(ctx, a, b"unsubscribe", |s| &mut s.channels, remove_channel, Subscriptions::plain_count);
    Ok(())
}

/// PUNSUBSCRIBE [pattern ...] — one confirmation per pattern (all when none given).
fn punsubscribe(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    unsubscribe_generic(ctx, a, b"punsubscribe", |s| &mut s.patterns, remove_pattern, Subscriptions::plain_count);
    Ok(())
}

/// Drops every subscription of a closing or resetting client.
pub fn unsubscribe_all(shared: &Shared, client: &mut super::Client) {
    let id = client.info.id;
    for ch in client.subs.channels.drain(..) {
        remove_channel(shared, &ch, id);
    }
    for pat in client.subs.patterns.drain(..) {
        remove_pattern(shared, &pat, id);
    }
    for ch in client.subs.shard_channels.drain(..) {
        remove_from(&mut shared.pubsub.lock().shard_channels, &ch, id);
    }
}

/// PUBLISH channel message — the number of clients that received it.
fn publish(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut deliveries = Vec::new();
    crate::publish::collect(&ctx.shared.pubsub.lock(), a[1], a[2], &mut deliveries);
    post_and_propagate(ctx, a, deliveries);
    Ok(())
}

/// SPUBLISH shardchannel message — the number of clients that received it (the shard
/// channel's subscribers; patterns do not match shard channels).
fn spublish(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut deliveries = Vec::new();
    crate::publish::collect_shard(&ctx.shared.pubsub.lock(), a[1], a[2], &mut deliveries);
    post_and_propagate(ctx, a, deliveries);
    Ok(())
}

/// A message's deliveries posted, the command passed on to replicas, and the count
/// replied (PUBLISH, SPUBLISH).
fn post_and_propagate(ctx: &mut Ctx<'_>, a: &[&[u8]], deliveries: Vec<crate::publish::Delivery>) {
    // The message may tell of writes made just before it (by this client, or seen by
    // it): it leaves once the log holds everything appended so far, as Redis sends
    // it only after the fsync of its event loop's turn.
    let n = match ctx.shared.aof.as_ref() {
        // Inside EXEC the log's EXEC record is not appended yet: the messages wait for
        // the transaction's end (`transactions.rs` posts them), which they may tell of.
        Some(_) if ctx.client.in_exec => crate::publish::hold_until_exec_ends(deliveries),
        Some(aof) if !deliveries.is_empty() => crate::publish::post_all(ctx.shared, deliveries, aof.appended()),
        _ => crate::publish::post_all(ctx.shared, deliveries, 0),
    };
    // As Redis: replicas get the message too (their subscribers hear it), the log not.
    if !ctx.client.loading && !ctx.shared.replica.is_replica() {
        crate::propagate::message(ctx.shared, ctx.client.db, a);
    }
    encode::integer(ctx.out, n as i64);
}

/// PUBSUB CHANNELS [pattern] — active channels.
fn pubsub_channels(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    active_channels(ctx, a, |ps| &ps.channels)
}

/// PUBSUB SHARDCHANNELS [pattern] — active shard channels.
fn pubsub_shardchannels(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    active_channels(ctx, a, |ps| &ps.shard_channels)
}

type ChannelMap = hashbrown::HashMap<Vec<u8>, Vec<Subscriber>>;

fn active_channels(ctx: &mut Ctx<'_>, a: &[&[u8]], of: impl Fn(&PubSub) -> &ChannelMap) -> Result<(), CommandError> {
    if a.len() > 3 {
        return Err(CommandError::Owned(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
            String::from_utf8_lossy(a[1])
        )));
    }
    let pattern = a.get(2).copied();
    let names: Vec<Vec<u8>> = of(&ctx.shared.pubsub.lock())
        .keys()
        .filter(|c| pattern.is_none_or(|p| store::glob::glob_match(p, c, false)))
        .cloned()
        .collect();
    encode::array_len(ctx.out, names.len());
    for n in names {
        encode::bulk(ctx.out, &n);
    }
    Ok(())
}

/// PUBSUB NUMSUB [channel ...] — channel, count pairs (a flat array, as Redis).
fn pubsub_numsub(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    subscriber_counts(ctx, a, |ps| &ps.channels)
}

/// PUBSUB SHARDNUMSUB [shardchannel ...] — as NUMSUB, for shard channels.
fn pubsub_shardnumsub(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    subscriber_counts(ctx, a, |ps| &ps.shard_channels)
}

fn subscriber_counts(ctx: &mut Ctx<'_>, a: &[&[u8]], of: impl Fn(&PubSub) -> &ChannelMap) -> Result<(), CommandError> {
    let counts: Vec<usize> = {
        let ps = ctx.shared.pubsub.lock();
        a[2..].iter().map(|c| of(&ps).get(*c).map_or(0, Vec::len)).collect()
    };
    encode::array_len(ctx.out, counts.len() * 2);
    for (c, n) in a[2..].iter().zip(counts) {
        encode::bulk(ctx.out, c);
        encode::integer(ctx.out, n as i64);
    }
    Ok(())
}

/// PUBSUB NUMPAT — number of distinct patterns subscribed.
fn pubsub_numpat(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let n = ctx.shared.pubsub.lock().patterns.len();
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// PUBSUB HELP — Redis 7.0's text.
fn pubsub_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help_text(
        ctx,
        &[
            "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
            "HELP",
            "    Prints this help.",
        ],
    );
    Ok(())
}

/// True when a RESP2 client in subscribed mode may not run `command` (a top-level
/// command: a subcommand is judged by its parent); the error to send.
#[inline]
pub fn subscribed_mode_error(ctx: &Ctx<'_>, command: &CommandSpec) -> Option<String> {
    let allowed = command.flags & WHILE_SUBSCRIBED != 0;
    // (A script's commands are its own client's, which subscribes to nothing.)
    (ctx.client.proto == Proto::Resp2 && ctx.client.subs.count() > 0 && !allowed && !ctx.client.in_script).then(|| {
        let name = command.name;
        format!("ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
    })
}

const PUBSUB_ACL: &[&str] = &["pubsub"];

static PUBSUB_SUBCOMMANDS: &[CommandSpec] = &[
    spec("channels", -2, PUBSUB | LOADING | STALE, (0, 0, 0), PUBSUB_ACL, "pubsub", "Returns the active channels.", pubsub_channels).since("2.8.0").args(ARGS_PUBSUB_CHANNELS).complexity("O(N)"),
    spec("numsub", -2, PUBSUB | LOADING | STALE, (0, 0, 0), PUBSUB_ACL, "pubsub", "Returns a count of subscribers to channels.", pubsub_numsub).since("2.8.0").args(ARGS_PUBSUB_NUMSUB).complexity("O(N)"),
    spec("numpat", 2, PUBSUB | LOADING | STALE, (0, 0, 0), PUBSUB_ACL, "pubsub", "Returns a count of unique pattern subscriptions.", pubsub_numpat).since("2.8.0").complexity("O(1)"),
    spec("help", 2, LOADING | STALE, (0, 0, 0), &[], "pubsub", "Returns helpful text about the different subcommands.", pubsub_help).since("6.2.0").complexity("O(1)"),
    spec("shardchannels", -2, PUBSUB | LOADING | STALE, (0, 0, 0), PUBSUB_ACL, "pubsub", "Returns the active shard channels.", pubsub_shardchannels).since("7.0.0").args(ARGS_PUBSUB_CHANNELS).complexity("O(N)"),
    spec("shardnumsub", -2, PUBSUB | LOADING | STALE, (0, 0, 0), PUBSUB_ACL, "pubsub", "Returns the count of subscribers of shard channels.", pubsub_shardnumsub).since("7.0.0").args(ARGS_PUBSUB_SHARDNUMSUB).complexity("O(N)"),
];

pub static COMMANDS: &[CommandSpec] = &[
    spec("subscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE | WHILE_SUBSCRIBED, (0, 0, 0), PUBSUB_ACL, "pubsub", "Listens for messages published to channels.", subscribe).since("2.0.0").channels(Channels::All).args(ARGS_SUBSCRIBE).complexity("O(N)"),
    spec("unsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE | WHILE_SUBSCRIBED, (0, 0, 0), PUBSUB_ACL, "pubsub", "Stops listening to messages posted to channels.", unsubscribe).since("2.0.0").args(ARGS_UNSUBSCRIBE).complexity("O(N)"),
    spec("psubscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE | WHILE_SUBSCRIBED, (0, 0, 0), PUBSUB_ACL, "pubsub", "Listens for messages published to channels that match one or more patterns.", psubscribe).since("2.0.0").channels(Channels::AllPatterns).args(ARGS_PSUBSCRIBE).complexity("O(N)"),
    spec("punsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE | WHILE_SUBSCRIBED, (0, 0, 0), PUBSUB_ACL, "pubsub", "Stops listening to messages published to channels that match one or more patterns.", punsubscribe).since("2.0.0").args(ARGS_PUNSUBSCRIBE).complexity("O(N+M)"),
    spec("publish", 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE, (0, 0, 0), PUBSUB_ACL, "pubsub", "Posts a message to a channel.", publish).since("2.0.0").channels(Channels::First).args(ARGS_PUBLISH).complexity("O(N+M)"),
    container("pubsub", "pubsub", "A container for Pub/Sub commands.", PUBSUB_SUBCOMMANDS).since("2.8.0").complexity("Depends on the subcommand."),
    spec("ssubscribe", -2, PUBSUB | NOSCRIPT | LOADING | STALE | WHILE_SUBSCRIBED | CHANNEL_KEYS, (1, -1, 1), PUBSUB_ACL, "pubsub", "Listens for messages published to shard channels.", ssubscribe).since("7.0.0").channels(Channels::All).args(ARGS_SSUBSCRIBE).complexity("O(N)").key_specs(SHARD_CHANNELS_ALL),
    spec("sunsubscribe", -1, PUBSUB | NOSCRIPT | LOADING | STALE | WHILE_SUBSCRIBED | CHANNEL_KEYS, (1, -1, 1), PUBSUB_ACL, "pubsub", "Stops listening to messages posted to shard channels.", sunsubscribe).since("7.0.0").args(ARGS_SUNSUBSCRIBE).complexity("O(N)").key_specs(SHARD_CHANNELS_ALL),
    spec("spublish", 3, PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE | CHANNEL_KEYS, (1, 1, 1), PUBSUB_ACL, "pubsub", "Post a message to a shard channel.", spublish).since("7.0.0").channels(Channels::First).args(ARGS_SPUBLISH).complexity("O(N)").key_specs(&[KeySpec { flags: kf::NOT_KEY, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
];

/// Shard channels are named where a cluster would look for keys (their key specs say
/// `not_key`): no key of the keyspace.
const SHARD_CHANNELS_ALL: &[KeySpec] = &[KeySpec { flags: kf::NOT_KEY, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }];


/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_PUBSUB_CHANNELS: &[Arg] = &[arg("pattern", Pattern).optional()];
    pub const ARGS_PUBSUB_NUMSUB: &[Arg] = &[arg("channel", String).optional().multiple()];
    pub const ARGS_SUBSCRIBE: &[Arg] = &[arg("channel", String).multiple()];
    pub const ARGS_UNSUBSCRIBE: &[Arg] = &[arg("channel", String).optional().multiple()];
    pub const ARGS_PSUBSCRIBE: &[Arg] = &[arg("pattern", Block).multiple().args(&[arg("pattern", Pattern)])];
    pub const ARGS_PUNSUBSCRIBE: &[Arg] = &[arg("pattern", Pattern).optional().multiple()];
    pub const ARGS_PUBLISH: &[Arg] = &[arg("channel", String), arg("message", String)];
    pub const ARGS_PUBSUB_SHARDNUMSUB: &[Arg] = &[arg("shardchannel", String).optional().multiple()];
    pub const ARGS_SSUBSCRIBE: &[Arg] = &[arg("shardchannel", String).multiple()];
    pub const ARGS_SUNSUBSCRIBE: &[Arg] = &[arg("shardchannel", String).optional().multiple()];
    pub const ARGS_SPUBLISH: &[Arg] = &[arg("shardchannel", String), arg("message", String)];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn client_list_and_info_show_subscriptions_and_transactions() {
        let mut h = Harness::new();
        assert!(h.raw("SUBSCRIBE a b").ends_with(b":2\r\n"));
        assert!(h.raw("PSUBSCRIBE p*").ends_with(b":3\r\n"));
        // Subscribed RESP2 clients may not run CLIENT INFO or INFO: read the shared state.
        let line = crate::command::client_line::describe(&h.shared, crate::command::registry::table(), &h.client.info, 0);
        assert!(line.contains(" flags=P ") && line.contains(" sub=2 psub=1 "), "{line}");
        let info = crate::info::render(&h.shared, crate::command::registry::table(), &["stats".to_string()]);
        assert!(info.contains("pubsub_channels:2\r\npubsub_patterns:1"), "{info}");
        h.text("RESET");
        assert!(h.text("INFO stats").contains("pubsub_channels:0\r\npubsub_patterns:0"));
        h.text("MULTI");
        h.text("SET k v");
        // CLIENT INFO would be queued; the shared record shows the transaction.
        let line = crate::command::client_line::describe(&h.shared, crate::command::registry::table(), &h.client.info, 0);
        assert!(line.contains(" flags=x ") && line.contains(" multi=1 "), "{line}");
    }
}
