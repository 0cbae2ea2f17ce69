//! Client-side caching: CLIENT TRACKING, as Redis 7.0's.
//!
//! A tracking client is told when a key it may have cached changes. In the default
//! mode the server remembers the keys each read-only command of the client named
//! (the dispatcher calls [`remember`]; OPTIN/OPTOUT and CLIENT CACHING choose which
//! commands count), in one table of key names shared by all databases, as Redis's;
//! when such a key changes, every client that read it gets one `invalidate` message
//! and the key leaves the table (it is tracked again when read again). In BCAST mode a
//! client registers key prefixes instead and hears of every change under them: per
//! prefix, the keys a command changed in one message (Redis: those of one pass of its
//! event loop).
//!
//! Changes come from the keyspace event queue (`notify.rs`): while any client tracks,
//! the keyspace queues every modification event whatever `notify-keyspace-events`
//! says, and [`invalidate`] runs on the events of each command before they are
//! published (so in the order keys changed, and after the log under `always`).
//! FLUSHALL and FLUSHDB send every tracking client a null invalidation ([`flush_all`]).
//!
//! Messages: to a RESP3 client a push `invalidate` with the keys; with REDIRECT to the
//! redirect client, a push if it speaks RESP3, else a `__redis__:invalidate` pub/sub
//! message if it is subscribed to anything (RESP2 has no other way to receive one); a
//! RESP2 client without REDIRECT gets nothing, as in Redis. A redirect to a client
//! that has gone is reported instead, as `tracking-redir-broken`, to a RESP3 client.
//!
//! Limits: `tracking-table-max-keys` bounds the table; past it, keys are dropped and
//! their readers invalidated, as Redis does.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use resp::{encode, Proto};

use crate::shared::{ClientInfo, Mail, Shared};

pub use crate::state::tracking::{Mode, Tracking};
use crate::state::tracking::{Table, Target};

/// Turns tracking on for a client (CLIENT TRACKING ON, options already checked).
/// Returns its options now: turning it on again adds prefixes to those registered.
pub fn enable(shared: &Shared, info: &Arc<ClientInfo>, mode: Mode) -> Mode {
    let mut t = shared.tracking.table.lock();
    let id = info.id;
    for p in &mode.prefixes {
        match t.prefixes.iter_mut().find(|(q, _)| q == p) {
            Some((_, ids)) if !ids.contains(&id) => ids.push(id),
            Some(_) => {}
            None => t.prefixes.push((p.clone(), vec![id])),
        }
    }
    let merged = match t.targets.remove(&id) {
        Some(old) => {
            count_redirect(shared, old.mode.redirect, false);
            let mut prefixes = old.mode.prefixes;
            for p in &mode.prefixes {
                if !prefixes.contains(p) {
                    prefixes.push(p.clone());
                }
            }
            Mode { prefixes, ..mode }
        }
        None => mode,
    };
    count_redirect(shared, merged.redirect, true);
    t.targets.insert(id, Target { info: Arc::clone(info), mode: merged.clone(), broken: false });
    shared.tracking.clients.store(t.targets.len(), Ordering::Relaxed);
    shared.keyspace.events().set_tracking(true);
    merged
}

/// Turns tracking off for a client (CLIENT TRACKING OFF, RESET, disconnect). Keys it
/// read stay in the table until they change, as in Redis; it gets nothing for them.
pub fn disable(shared: &Shared, id: u64) {
    if !shared.tracking.active() {
        return;
    }
    let mut t = shared.tracking.table.lock();
    let Some(gone) = t.targets.remove(&id) else { return };
    count_redirect(shared, gone.mode.redirect, false);
    t.prefixes.retain_mut(|(_, ids)| {
        ids.retain(|&i| i != id);
        !ids.is_empty()
    });
    shared.tracking.clients.store(t.targets.len(), Ordering::Relaxed);
    shared.keyspace.events().set_tracking(!t.targets.is_empty());
}

/// Counts a tracking client redirecting to client `redirect` (0: none) in or out of
/// that client's `redirect_sources`, which keeps it on its event loop (`Conn::can_move`):
/// its invalidations are mailed to the loop that owns it, and mail to a loop it has
/// just left would be lost.
fn count_redirect(shared: &Shared, redirect: u64, add: bool) {
    if redirect == 0 {
        return;
    }
    let Some(info) = shared.clients.lock().get(&redirect).cloned() else { return };
    if add {
        info.redirect_sources.fetch_add(1, Ordering::Relaxed);
    } else {
        let _ = info.redirect_sources.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }
}

/// A tracking client's (redirect id or 0, BCAST, redirect gone), for CLIENT LIST and
/// TRACKINGINFO; None
/// when it does not track.
pub fn state(shared: &Shared, id: u64) -> Option<(u64, bool, bool)> {
    if !shared.tracking.active() {
        return None;
    }
    shared.tracking.table.lock().targets.get(&id).map(|t| (t.mode.redirect, t.mode.bcast, t.broken))
}

/// Remembers that client `id` read `keys` (default mode; the caller checked OPTIN /
/// OPTOUT). Past `tracking-table-max-keys`, other keys are dropped and invalidated.
pub fn remember(shared: &Shared, id: u64, keys: &[&[u8]]) {
    let mut t = shared.tracking.table.lock();
    for &key in keys {
        let ids = t.keys.entry_ref(key).or_default();
        if !ids.contains(&id) {
            ids.push(id);
            t.items += 1;
        }
    }
    let max = shared.tracking.max_keys.load(Ordering::Relaxed);
    if max > 0 && t.keys.len() > max {
        // Redis drops random keys; the table's first ones are as good (hash order).
        let excess: Vec<Vec<u8>> = t.keys.keys().filter(|k| !keys.contains(&k.as_slice())).take(t.keys.len() - max).cloned().collect();
        let mut mails = Vec::new();
        for key in excess {
            drop_key(shared, &mut t, &key, 0, &mut mails);
        }
        drop(t);
        post(shared, mails, 0);
    }
}

/// Invalidates `keys` (changed by the command of client `writer`, 0 for none: expiry):
/// the default-mode readers of each key, one message per key, and the BCAST clients
/// whose prefixes match, one message per prefix with its keys. `need` is the log offset the
/// messages wait for.
pub fn invalidate(shared: &Shared, keys: &[&[u8]], writer: u64, need: u64) {
    let mut mails = Vec::new();
    {
        let mut t = shared.tracking.table.lock();
        // Each changed key once (a set: a command may change many keys).
        let mut unique: hashbrown::HashSet<&[u8]> = hashbrown::HashSet::with_capacity(keys.len());
        let seen: Vec<&[u8]> = keys.iter().copied().filter(|k| unique.insert(*k)).collect();
        for &key in &seen {
            drop_key(shared, &mut t, key, writer, &mut mails);
        }
        // BCAST, as Redis's broadcast: for each prefix (in byte order) with changed keys
        // under it, one message to each client registered for it, with those keys in
        // byte order (a client with two matching prefixes hears of a key twice, as in
        // Redis). A NOLOOP writer hears nothing of its own command's keys.
        let mut batches: Vec<(Vec<u64>, Vec<&[u8]>)> = Vec::new();
        let mut prefixes: Vec<&(Vec<u8>, Vec<u64>)> = t.prefixes.iter().collect();
        prefixes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (prefix, ids) in prefixes {
            let mut under: Vec<&[u8]> = seen.iter().copied().filter(|k| k.starts_with(prefix)).collect();
            if under.is_empty() {
                continue;
            }
            under.sort_unstable();
            let ids = ids
                .iter()
                .copied()
                .filter(|&id| !(id == writer && t.targets.get(&id).is_some_and(|x| x.mode.noloop)))
                .collect();
            batches.push((ids, under));
        }
        for (ids, keys) in batches {
            for id in ids {
                message_for(shared, &mut t, id, Some(&keys), &mut mails);
            }
        }
    }
    post(shared, mails, need);
}

/// FLUSHALL / FLUSHDB: every tracking client is told to drop everything (a null
/// invalidation), and the table is emptied.
pub fn flush_all(shared: &Shared, need: u64) {
    if !shared.tracking.active() {
        return;
    }
    let mut mails = Vec::new();
    {
        let mut t = shared.tracking.table.lock();
        t.keys.clear();
        t.items = 0;
        let ids: Vec<u64> = t.targets.keys().copied().collect();
        for id in ids {
            message_for(shared, &mut t, id, None, &mut mails);
        }
    }
    post(shared, mails, need);
}

/// Removes a key from the table and queues one message for each of its readers
/// (except a NOLOOP `writer`).
fn drop_key(shared: &Shared, t: &mut Table, key: &[u8], writer: u64, mails: &mut Vec<(usize, Mail)>) {
    let Some(ids) = t.keys.remove(key) else { return };
    t.items -= ids.len();
    for id in ids {
        // As Redis: a reader that tracks in BCAST mode now (it read the key before
        // turning tracking off and on again with BCAST) hears of keys by prefix only.
        let skip = t.targets.get(&id).is_some_and(|x| x.mode.bcast || (id == writer && x.mode.noloop));
        if skip {
            continue;
        }
        message_for(shared, t, id, Some(&[key]), mails);
    }
}

/// The invalidation message for tracking client `id` (keys, or None for "everything"),
/// addressed to it or to its redirect client, if it can receive one.
fn message_for(shared: &Shared, t: &mut Table, id: u64, keys: Option<&[&[u8]]>, mails: &mut Vec<(usize, Mail)>) {
    let Some(target) = t.targets.get_mut(&id) else { return };
    // Redis writes a flush's null in the tracking client's protocol, even when the
    // message goes to a redirect client speaking the other.
    let tracker_resp3 = target.info.resp.load(Ordering::Relaxed) == 3;
    let (to, subscribed) = if target.mode.redirect != 0 {
        let found = shared.clients.lock().get(&target.mode.redirect).cloned();
        let Some(r) = found else {
            // The redirect client has gone: said instead of each invalidation, to a
            // client that can hear it, as Redis does.
            target.broken = true;
            if target.info.resp.load(Ordering::Relaxed) == 3 {
                let mut out = Vec::new();
                encode::push_len(&mut out, 2, Proto::Resp3);
                encode::bulk(&mut out, b"tracking-redir-broken");
                encode::integer(&mut out, target.mode.redirect as i64);
                mails.push(mail(&target.info, out));
            }
            return;
        };
        let subscribed = r.sub.load(Ordering::Relaxed) + r.psub.load(Ordering::Relaxed) + r.ssub.load(Ordering::Relaxed) > 0;
        (r, subscribed)
    } else {
        (Arc::clone(&target.info), false)
    };
    let resp3 = to.resp.load(Ordering::Relaxed) == 3;
    let mut out = Vec::new();
    if resp3 {
        encode::push_len(&mut out, 2, Proto::Resp3);
        encode::bulk(&mut out, b"invalidate");
    } else if subscribed {
        encode::array_len(&mut out, 3);
        encode::bulk(&mut out, b"message");
        encode::bulk(&mut out, b"__redis__:invalidate");
    } else {
        // RESP2 without a way to push: nothing can be sent, as in Redis.
        return;
    }
    match keys {
        Some(keys) => {
            encode::array_len(&mut out, keys.len());
            for k in keys {
                encode::bulk(&mut out, k);
            }
        }
        None => encode::null(&mut out, if tracker_resp3 { Proto::Resp3 } else { Proto::Resp2 }),
    }
    mails.push(mail(&to, out));
}

fn mail(to: &ClientInfo, bytes: Vec<u8>) -> (usize, Mail) {
    (to.owner.load(Ordering::Relaxed), Mail::output(to.id, bytes.into()))
}

fn post(shared: &Shared, mails: Vec<(usize, Mail)>, need: u64) {
    for (owner, m) in mails {
        shared.post_mail(owner, m.after_log(need));
    }
}
