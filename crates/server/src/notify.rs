//! Keyspace notifications (`notify-keyspace-events`), as Redis 7.0's: each change a
//! command makes to a key is an event (`set`, `lpush`, `del`, `expired`, ...) of a class
//! (`$`, `l`, `g`, `x`, ...); for the classes configured, it is published on
//! `__keyspace@<db>__:<key>` (message: the event, flag `K`) and on
//! `__keyevent@<db>__:<event>` (message: the key, flag `E`).
//!
//! Events are queued per thread in the order they happen (`store::events`: the store
//! queues the `expired` and `new` events only it sees; handlers queue theirs through
//! `command::keyspace_events::notify`, which calls [`queue`]) and published by [`flush`]:
//!
//! - without the append-only log, as soon as a handler queues one, while it still holds
//!   the key's shard lock: two loops changing one key publish in the order they
//!   changed it, as Redis's single thread does (the client-side caching invalidations
//!   of those keys wait for the end of the command, so that one command's keys go in
//!   one BCAST message);
//! - with the log, by the dispatcher once the command's record is appended and before
//!   its ordering stripes are released (same order guarantee), each message held until
//!   the log is durable up to the write it reveals (`Mail::need`), as replies are.
//!
//! With no class configured, each point that could report costs one relaxed load, and
//! the dispatcher's check for queued events after each command one thread-local load.
//!
//! Reads report too: every key a command reads as Redis's read lookup does goes through
//! `Ctx::lookup` (a keyspace hit, or a miss: INFO's counter and a `keymiss` event).

use std::cell::{Cell, RefCell};

use store::events::{self, class, Event};

use crate::publish;
use crate::shared::{PubSub, Shared};

/// Queues the event `name` of `class` for `key` of database `db`, and publishes it at
/// once when `at_once` holds the writing client (events published as they are queued:
/// [`publishes_at_once`]); otherwise the dispatcher publishes it after the log (see the
/// module header). The commands' entry is `command::keyspace_events`.
#[inline]
pub fn queue(shared: &Shared, at_once: Option<u64>, class: u32, name: &'static str, db: usize, key: &[u8]) {
    let flags = shared.keyspace.events();
    if flags.wants(class) {
        events::push(flags, class, name, db, key);
        if let Some(writer) = at_once {
            publish_queued(shared, 0, writer, Invalidate::AfterCommand);
        }
    }
}

/// Whether events are published as they are queued: with no log to wait for, and
/// during the log's replay at start-up (`loading`: a loading client's commands).
#[inline]
pub fn publishes_at_once(shared: &Shared, loading: bool) -> bool {
    shared.aof.is_none() || loading
}

/// Publishes what this thread has queued, when events are published at once
/// (`at_once`: the server and the writing client), for the paths that change or expire keys without going through
/// `notify` (LMOVE's move, a served blocked pop, a read that found its key expired):
/// called while they still hold the keys' locks, so that their events keep the order in
/// which the keys changed across loops. One thread-local load when nothing is queued.
#[inline]
pub fn publish_under_lock(at_once: Option<(&Shared, u64)>) {
    if let Some((shared, writer)) = at_once {
        if events::pending() {
            publish_queued(shared, 0, writer, Invalidate::AfterCommand);
        }
    }
}

/// Publishes this thread's queued events, oldest first, after the invalidations of
/// client-side caching they cause (`tracking.rs`); `need` is the log offset their
/// messages wait for (0: none), `writer` the client whose command caused them (0: none,
/// expiry). One thread-local load when nothing is queued. Events queued before the
/// setting was turned off are dropped, never kept for later.
#[inline]
pub fn flush(shared: &Shared, need: u64, writer: u64) {
    if events::pending() || DEFERRED_PENDING.with(Cell::get) {
        publish_queued(shared, need, writer, Invalidate::Now);
    }
}

/// When the client-side caching invalidations of published events are sent.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Invalidate {
    /// With the events (and those deferred before them).
    Now,
    /// Without the log, events are published one by one as handlers queue them; their
    /// keys wait for the dispatcher's flush after the command, so that a BCAST client
    /// hears of the keys one command changed in one message (MSET), as Redis's
    /// per-iteration message would tell them.
    AfterCommand,
}

thread_local! {
    /// Keys changed by the running command whose invalidations wait (`AfterCommand`).
    static DEFERRED: RefCell<Vec<Box<[u8]>>> = const { RefCell::new(Vec::new()) };
    static DEFERRED_PENDING: Cell<bool> = const { Cell::new(false) };
}

fn publish_queued(shared: &Shared, need: u64, writer: u64, when: Invalidate) {
    let queued = events::take();
    if shared.tracking.active() {
        // Reads inside an EXEC under the log are queued among its changes (`TRACK`):
        // the table takes changes and reads in the order they ran, as Redis's would.
        // A flush ends a segment too: the keys changed before it are told first.
        let mut rest = &queued[..];
        loop {
            let cut = match rest.iter().position(|e| e.class == class::TRACK || e.class == class::FLUSH) {
                Some(i) if rest[i].class == class::FLUSH => i + 1,
                Some(i) => i,
                None => rest.len(),
            };
            invalidate(shared, &rest[..cut], need, writer, when);
            let reads = rest[cut..].iter().take_while(|e| e.class == class::TRACK).count();
            if reads > 0 {
                let keys: Vec<&[u8]> = rest[cut..cut + reads].iter().map(|e| &e.key[..]).collect();
                crate::tracking::remember(shared, writer, &keys);
            }
            rest = &rest[cut + reads..];
            if rest.is_empty() {
                break;
            }
        }
    } else if DEFERRED_PENDING.with(|p| p.replace(false)) {
        // Tracking was turned off meanwhile: nobody to tell.
        DEFERRED.with(|d| d.borrow_mut().clear());
    }
    let flags = shared.keyspace.events().get();
    if flags == 0 {
        return;
    }
    // The subscriptions are locked once for all the events; with nobody subscribed
    // (no channel, no pattern) no channel name is even formatted.
    let mut deliveries = Vec::new();
    {
        let ps = shared.pubsub.lock();
        if ps.channels.is_empty() && ps.patterns.is_empty() {
            return;
        }
        for event in queued.iter().filter(|e| e.class & flags != 0) {
            collect(&ps, flags, event, &mut deliveries);
        }
    }
    publish::post_all(shared, deliveries, need);
}

/// Client-side caching's part of publishing `queued` (changes only, a flush only as the
/// last event): the invalidations of the keys changed, now or after the command
/// (`when`), then the flush's.
fn invalidate(shared: &Shared, queued: &[Event], need: u64, writer: u64, when: Invalidate) {
    let flushes = queued.iter().any(|e| e.class == class::FLUSH);
    // `new` always comes with the command's own event for that key, and Redis
    // signals the change where that one is: in its order.
    let changed = queued
        .iter()
        .filter(|e| e.class & events::CHANGES & !(class::FLUSH | class::NEW) != 0 && e.class & class::UNSIGNALED == 0)
        .map(|e| &e.key[..]);
    if when == Invalidate::AfterCommand && !flushes {
        DEFERRED.with(|d| d.borrow_mut().extend(changed.map(Box::from)));
        DEFERRED_PENDING.with(|p| p.set(true));
    } else {
        let deferred = if DEFERRED_PENDING.with(|p| p.replace(false)) {
            DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()))
        } else {
            Vec::new()
        };
        // `queued` ends at its flush, if any (the caller cuts there): the keys changed
        // before it are told before it, as they happened.
        let keys: Vec<&[u8]> = deferred.iter().map(|k| &k[..]).chain(changed).collect();
        if !keys.is_empty() {
            crate::tracking::invalidate(shared, &keys, writer, need);
        }
        if flushes {
            crate::tracking::flush_all(shared, need);
        }
    }
}

/// The deliveries of one event on its keyspace and keyevent channels, as the flags ask.
fn collect(ps: &PubSub, flags: u32, event: &Event, out: &mut Vec<publish::Delivery>) {
    if flags & class::KEYSPACE != 0 {
        let mut channel = format!("__keyspace@{}__:", event.db).into_bytes();
        channel.extend_from_slice(&event.key);
        publish::collect(ps, &channel, event.name.as_bytes(), out);
    }
    if flags & class::KEYEVENT != 0 {
        let channel = format!("__keyevent@{}__:{}", event.db, event.name);
        publish::collect(ps, channel.as_bytes(), &event.key, out);
    }
}
