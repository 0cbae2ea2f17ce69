//! The commands' side of keyspace notifications: a handler reports the change it made
//! to a key ([`notify`]); `crate::notify` queues and publishes it. Kept here so that
//! the notifications below the command layer never see its `Ctx`.

use super::Ctx;
use crate::shared::Shared;

/// Queues the event `name` of `class` for `key` in the client's database, and publishes
/// it at once unless the dispatcher does after the log (`crate::notify`'s header).
#[inline]
pub fn notify(ctx: &Ctx<'_>, class: u32, name: &'static str, key: &[u8]) {
    notify_in(ctx, class, name, ctx.client.db, key);
}

/// [`notify`] for a key of database `db` (MOVE, COPY ... DB).
#[inline]
pub fn notify_in(ctx: &Ctx<'_>, class: u32, name: &'static str, db: usize, key: &[u8]) {
    crate::notify::queue(ctx.shared, at_once(ctx).map(|(_, writer)| writer), class, name, db, key);
}

/// The server and the writing client when events are published as they are queued
/// (for `crate::notify::publish_under_lock`); None when the log orders them.
#[inline]
pub fn at_once<'a>(ctx: &Ctx<'a>) -> Option<(&'a Shared, u64)> {
    crate::notify::publishes_at_once(ctx.shared, ctx.client.loading).then_some((ctx.shared, ctx.client.info.id))
}
