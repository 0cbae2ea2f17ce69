//! A consumer group's deliveries, shared by XREADGROUP and the blocked XREADGROUP served
//! later (`stream_serve.rs`): the entries after the group's last ID handed to a
//! consumer, pending for it unless NOACK, and the records that say it for the log and
//! the replicas (see `stream_groups.rs` for what they are and why).

use resp::encode;
use store::types::stream::{Consumer, Group, Pending, Stream, StreamId};

use super::stream_reply::{id_text, reply_entry};
use crate::propagate::Record;

/// The idempotent record of a pending entry's state (Redis's `streamPropagateXCLAIM`).
pub(super) fn xclaim_record(key: &[u8], group_name: &[u8], group: &Group, id: StreamId, p: &Pending) -> Record {
    vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group_name.to_vec(),
        p.consumer.clone(),
        b"0".to_vec(),
        id_text(id),
        b"TIME".to_vec(),
        p.delivery_time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        p.delivery_count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        id_text(group.last_id),
    ]
}

/// `XGROUP SETID key group last-id ENTRIESREAD n` (Redis's `streamPropagateGroupID`).
pub(super) fn setid_record(key: &[u8], group_name: &[u8], group: &Group) -> Record {
    let read = group.entries_read.map_or(-1, |n| n as i64);
    vec![b"XGROUP".to_vec(), b"SETID".to_vec(), key.to_vec(), group_name.to_vec(), id_text(group.last_id), b"ENTRIESREAD".to_vec(), read.to_string().into_bytes()]
}

pub(super) fn createconsumer_record(key: &[u8], group_name: &[u8], consumer: &[u8]) -> Record {
    vec![b"XGROUP".to_vec(), b"CREATECONSUMER".to_vec(), key.to_vec(), group_name.to_vec(), consumer.to_vec()]
}

/// Looks a consumer up, refreshing its seen time, or creates it (then `created`).
pub(super) fn consumer_of<'g>(group: &'g mut Group, name: &[u8], now_ms: i64, created: &mut bool) -> &'g mut Consumer {
    if !group.consumers.contains_key(name) {
        *created = true;
    }
    let c = group.consumers.entry(name.to_vec()).or_default();
    c.seen_time = now_ms;
    c
}

/// What a delivery to a consumer did, beyond its reply.
#[derive(Default)]
pub(super) struct Delivery {
    pub records: Vec<Record>,
    pub consumer_created: bool,
}

/// Delivers to `consumer` of `group_name` the entries after the group's last ID (`>`),
/// at most `count` (0: all), as Redis's `streamReplyWithRange` with a group: each one
/// pending for the consumer unless `noack`, the group advanced. Writes the entries
/// array to `out`; the records say it for the log.
#[allow(clippy::too_many_arguments)]
pub(super) fn deliver_new(s: &mut Stream, key: &[u8], group_name: &[u8], consumer: &[u8], count: usize, noack: bool, now_ms: i64, out: &mut Vec<u8>) -> Delivery {
    let mut d = Delivery::default();
    let Some(group) = s.groups.get_mut(group_name) else { return d };
    consumer_of(group, consumer, now_ms, &mut d.consumer_created);
    let start = match group.last_id.next() {
        Some(id) => id,
        None => {
            encode::array_len(out, 0);
            return d;
        }
    };
    let limit = if count == 0 { usize::MAX } else { count };
    let ids: Vec<StreamId> = s.range(start, StreamId::MAX).take(limit).map(|e| e.id).collect();
    encode::array_len(out, ids.len());
    let delivered = ids.len();
    for id in ids {
        s.advance_group(group_name, id);
        if let Some(fields) = s.get(id) {
            reply_entry(out, &fields);
        }
        if noack {
            continue;
        }
        let group = s.groups.get_mut(group_name).expect("group");
        // An entry pending for another consumer (after XGROUP SETID) moves to this one.
        if let Some(old) = group.pel.get(&id).map(|p| p.consumer.clone()) {
            if let Some(c) = group.consumers.get_mut(&old) {
                c.pel.remove(&id);
            }
        }
        group.pel.insert(id, Pending { delivery_time: now_ms, delivery_count: 1, consumer: consumer.to_vec() });
        group.consumers.get_mut(consumer).expect("consumer").pel.insert(id);
        let p = &group.pel[&id];
        d.records.push(xclaim_record(key, group_name, group, id, p));
    }
    let group = &s.groups[group_name];
    if noack && delivered > 0 && d.consumer_created {
        d.records.push(createconsumer_record(key, group_name, consumer));
    }
    // The group's read counter goes too: the XCLAIMs carry its last ID only, and a
    // replica left to estimate the counter may not know it (Redis 7.0.15 sends this
    // record after NOACK reads only, and its replicas can then show `entries-read`
    // nil where the master shows a number; later Redis versions send it always).
    if delivered > 0 {
        d.records.push(setid_record(key, group_name, group));
    }
    d
}

