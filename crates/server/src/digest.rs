//! DEBUG DIGEST and DIGEST-VALUE: Redis 7.0's signature of a data set, so that a Basalt
//! replica and a Redis master (or any two servers) can be compared with one command
//! each: the same data gives the same 40 hex digits on both.
//!
//! The rules are Redis's (debug.c): every key contributes the SHA-1 chain of its name,
//! its type (a big-endian u32: string 0, list 1, set 2, sorted set 3, hash 4, stream 6)
//! and its value, plus "!!expire!!" when it has a time to live (the time itself is left
//! out); the SHA-1s of the keys' digests are XORed together, so their order does not
//! matter, and each non-empty database mixes its number in first. Inside a value, a
//! list's elements and a stream's entries (ID as `ms.seq`, then fields and values) are
//! chained in order, and the members of a set, hash or sorted set are XORed (a hash's
//! field and value, and a sorted set's member and score as `%.17g`, chained per
//! member). Numbers stored as integers count as their decimal text, as Redis's decoded
//! objects do.
//!
//! A difference: Redis walks keys whose time has passed but that no one has removed yet;
//! Basalt leaves out every key whose time has passed.

use sha1::{Digest as _, Sha1};
use store::StrRef;
use store::types::{hash::Hash, set::Set, stream::Stream, stream_id::StreamId, zset::ZSet};
use store::{Entry, Object, ValueRef};

/// A digest: 20 bytes, shown as 40 lower-case hex digits.
pub type Digest = [u8; 20];

/// XORs the SHA-1 of `data` into `digest` (Redis's xorDigest).
fn xor(digest: &mut Digest, data: &[u8]) {
    let hash = Sha1::digest(data);
    for (d, h) in digest.iter_mut().zip(hash.iter()) {
        *d ^= h;
    }
}

/// XORs `data` in, then replaces `digest` by its own SHA-1 (Redis's mixDigest: order
/// matters).
fn mix(digest: &mut Digest, data: &[u8]) {
    xor(digest, data);
    let hash = Sha1::digest(&digest[..]);
    digest.copy_from_slice(&hash);
}

fn mix_str(digest: &mut Digest, s: StrRef<'_>) {
    match s {
        StrRef::Bytes(b) => mix(digest, b),
        StrRef::Int(n) => mix(digest, itoa::Buffer::new().format(n).as_bytes()),
    }
}

/// The whole data set's digest: all zeros when it is empty.
pub fn dataset(keyspace: &store::Keyspace, now_ms: i64) -> Digest {
    let mut total = [0u8; 20];
    for db in 0..keyspace.databases() {
        let mut mixed_db = false;
        for s in 0..keyspace.shards_per_db() {
            let shard = keyspace.lock(db, s);
            shard.for_each_live(now_ms, |e| {
                if !mixed_db {
                    mix(&mut total, &(db as u32).to_be_bytes());
                    mixed_db = true;
                }
                let mut d = [0u8; 20];
                mix(&mut d, e.key());
                value(&mut d, e);
                xor(&mut total, &d);
            });
        }
    }
    total
}

/// A value's digest, as DIGEST-VALUE reports it (the key's name left out).
pub fn of_value(e: &Entry) -> Digest {
    let mut d = [0u8; 20];
    value(&mut d, e);
    d
}

/// Redis's xorObjectDigest: the type, the value, and the expiry mark.
fn value(d: &mut Digest, e: &Entry) {
    match e.value() {
        ValueRef::Str(s) => {
            mix(d, &0u32.to_be_bytes());
            mix_str(d, s);
        }
        ValueRef::Obj(o) => match &*o.view() {
            Object::Str(b) => {
                mix(d, &0u32.to_be_bytes());
                mix(d, b);
            }
            Object::List(l) => {
                mix(d, &1u32.to_be_bytes());
                for item in l.iter() {
                    mix(d, item);
                }
            }
            Object::Set(s) => {
                mix(d, &2u32.to_be_bytes());
                set(d, s);
            }
            Object::ZSet(z) => {
                mix(d, &3u32.to_be_bytes());
                zset(d, z);
            }
            Object::Hash(h) => {
                mix(d, &4u32.to_be_bytes());
                hash(d, h);
            }
            Object::Stream(s) => {
                mix(d, &6u32.to_be_bytes());
                stream(d, s);
            }
        },
    }
    if e.expire_at_ms().is_some() {
        xor(d, b"!!expire!!");
    }
}

fn set(d: &mut Digest, s: &Set) {
    match s {
        Set::Ints(v) => {
            for n in v {
                xor(d, itoa::Buffer::new().format(*n).as_bytes());
            }
        }
        Set::Packed(p) => p.items().for_each(|m| xor(d, m)),
        Set::Table(t) => t.iter().for_each(|m| xor(d, m)),
    }
}

fn zset(d: &mut Digest, z: &ZSet) {
    let mut buf = [0u8; 32];
    for (score, member) in z.iter() {
        let mut one = [0u8; 20];
        mix(&mut one, member);
        mix(&mut one, resp::double::format_g17(score, &mut buf));
        xor(d, &one);
    }
}

fn hash(d: &mut Digest, h: &Hash) {
    for (field, value) in h.iter() {
        let mut one = [0u8; 20];
        mix(&mut one, field);
        mix(&mut one, value);
        xor(d, &one);
    }
}

fn stream(d: &mut Digest, s: &Stream) {
    for entry in s.range(StreamId::MIN, StreamId::MAX) {
        if entry.deleted {
            continue;
        }
        mix(d, format!("{}.{}", entry.id.ms, entry.id.seq).as_bytes());
        for item in entry.iter() {
            mix_str(d, item);
        }
    }
}

/// A digest as Redis shows it: 40 lower-case hex digits.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
