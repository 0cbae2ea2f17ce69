//! Delivering published messages (PUBLISH, keyspace notifications) to subscribers: the
//! channels and patterns that match, each message encoded once per protocol, posted to
//! each subscriber's event loop in order. Subscribing and the commands are
//! `command/pubsub.rs`.

use bytes::Bytes;
use resp::{encode, Proto};

use crate::shared::{Mail, PubSub, Shared, Subscriber};

fn encode_message(parts: &[&[u8]], resp3: bool) -> Bytes {
    let mut out = Vec::with_capacity(32 + parts.iter().map(|p| p.len() + 16).sum::<usize>());
    encode::push_len(&mut out, parts.len(), if resp3 { Proto::Resp3 } else { Proto::Resp2 });
    for p in parts {
        encode::bulk(&mut out, p);
    }
    out.into()
}

/// One message for one subscriber, encoded for its protocol.
pub type Delivery = (Subscriber, Bytes);

/// Adds the deliveries of `msg` on `ch` to `out` (the subscriptions are locked by the
/// caller, so that several messages, keyspace notifications, take the lock once).
pub fn collect(ps: &PubSub, ch: &[u8], msg: &[u8], out: &mut Vec<Delivery>) {
    let mut cache: [Option<Bytes>; 2] = [None, None];
    if let Some(subs) = ps.channels.get(ch) {
        for s in subs {
            let bytes = cache[usize::from(s.resp3)]
                .get_or_insert_with(|| encode_message(&[b"message", ch, msg], s.resp3))
                .clone();
            out.push((*s, bytes));
        }
    }
    for (pat, subs) in &ps.patterns {
        if !store::glob::glob_match(pat, ch, false) {
            continue;
        }
        let mut cache: [Option<Bytes>; 2] = [None, None];
        for s in subs {
            let bytes = cache[usize::from(s.resp3)]
                .get_or_insert_with(|| encode_message(&[b"pmessage", pat, ch, msg], s.resp3))
                .clone();
            out.push((*s, bytes));
        }
    }
}

/// Adds the deliveries of SPUBLISH's `msg` on shard channel `ch` (its subscribers
/// alone: patterns do not see shard channels).
pub fn collect_shard(ps: &PubSub, ch: &[u8], msg: &[u8], out: &mut Vec<Delivery>) {
    let mut cache: [Option<Bytes>; 2] = [None, None];
    for s in ps.shard_channels.get(ch).into_iter().flatten() {
        let bytes = cache[usize::from(s.resp3)].get_or_insert_with(|| encode_message(&[b"smessage", ch, msg], s.resp3)).clone();
        out.push((*s, bytes));
    }
}

thread_local! {
    /// PUBLISH messages of the EXEC running on this thread, with the log on.
    static HELD_FOR_EXEC: std::cell::RefCell<Vec<Delivery>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps a PUBLISH's deliveries inside EXEC until [`post_held_for_exec`]; returns how
/// many there are (PUBLISH's reply).
pub fn hold_until_exec_ends(deliveries: Vec<Delivery>) -> usize {
    let n = deliveries.len();
    HELD_FOR_EXEC.with(|h| h.borrow_mut().extend(deliveries));
    n
}

/// The EXEC ended: its PUBLISH messages go, held until the log reaches `need` (all it
/// appended, its closing EXEC record included).
pub fn post_held_for_exec(shared: &Shared, need: u64) {
    let held = HELD_FOR_EXEC.with(|h| std::mem::take(&mut *h.borrow_mut()));
    if !held.is_empty() {
        post_all(shared, held, need);
    }
}

/// Posts collected deliveries, in order, each held until the log reaches `need`.
/// Returns how many there were.
pub fn post_all(shared: &Shared, deliveries: Vec<Delivery>, need: u64) -> usize {
    let n = deliveries.len();
    for (to, bytes) in deliveries {
        shared.post_mail(to.owner, Mail::output(to.id, bytes).after_log(need));
    }
    n
}
