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

/// Posts collected deliveries, in order, each held until the log reaches `need`.
/// Returns how many there were.
pub fn post_all(shared: &Shared, deliveries: Vec<Delivery>, need: u64) -> usize {
    let n = deliveries.len();
    for (to, bytes) in deliveries {
        shared.post_mail(to.owner, Mail { client_id: to.id, bytes, unblock: false, need, repl_woff: 0 });
    }
    n
}
