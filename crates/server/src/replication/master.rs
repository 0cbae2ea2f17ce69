//! The master's side of replication: a replica's PSYNC or SYNC answered with a full
//! sync (the next snapshot, then the stream from that snapshot's point in time) or a
//! partial one (`+CONTINUE` and the backlog after the replica's offset); the stream
//! delivered to online replicas after each batch of the event loops ([`flush`]); and,
//! from loop 0's tick ([`cron`]), the PING fed every `repl-ping-replica-period`
//! seconds, replicas that acknowledged nothing for `repl-timeout` seconds dropped, and
//! the replica class of `client-output-buffer-limit` enforced.

use std::sync::atomic::Ordering;

use crate::replication::stream::Resync;
use crate::shared::{Mail, Shared};

/// Who asks: the replica's client and what it told with REPLCONF.
pub struct Asker<'a> {
    pub client_id: u64,
    pub owner: usize,
    pub addr: &'a str,
    /// REPLCONF ip-address, which INFO and ROLE show instead of the connection's.
    pub announced_ip: Option<&'a str>,
    /// It said `REPLCONF capa eof` (reads a disk-less snapshot).
    pub capa_eof: bool,
    pub listening_port: u16,
}

impl Asker<'_> {
    fn ip(&self) -> String {
        match self.announced_ip {
            Some(ip) => ip.to_string(),
            None => self.addr.rsplit_once(':').map_or(self.addr, |(ip, _)| ip).to_string(),
        }
    }

    fn name(&self) -> String {
        format!("{}:{}", self.ip(), self.listening_port)
    }
}

/// A full sync: the replica waits for the next snapshot, gets `+FULLRESYNC <replid>
/// <offset>` when it begins and its file when written, then the stream from that
/// offset on. Switches the stream on if it was off. The caller holds every loop's gate.
pub fn full_sync(shared: &Shared, who: &Asker<'_>, psync: bool) {
    shared.repl.start_feeding();
    shared.repl.add_for_full_sync(who.client_id, who.owner, who.ip(), who.listening_port, psync, who.capa_eof);
    crate::log::notice(&format!("Replica {} asks for synchronization: full sync from the next snapshot", who.name()));
    crate::snapshot::begin_for_replicas(shared, who.capa_eof);
}

/// PSYNC replid offset: `+CONTINUE` and the bytes after `offset` (the replica's next
/// byte, 1-based as Redis counts) when the backlog holds them; None when a full sync
/// is needed. The caller holds every loop's gate.
pub fn partial_sync(shared: &Shared, who: &Asker<'_>, replid: &[u8], offset: i64) -> Option<Vec<u8>> {
    if replid == b"?" {
        crate::log::notice(&format!("Full resync requested by replica {}", who.name()));
        return None;
    }
    // Redis's PSYNC offset is that of the next byte the replica needs, counting from 1;
    // the stream counts bytes, so the replica holds `offset - 1` of them.
    let have = u64::try_from(offset.saturating_sub(1)).ok();
    let outcome = match have {
        Some(have) => shared.repl.try_continue(replid, have, who.client_id, who.owner, who.ip(), who.listening_port, store::Clock::System.now_ms()),
        None => Resync::Full("negative offset"),
    };
    match outcome {
        Resync::Continue(bytes) => {
            shared.snapshots.syncs_partial_ok.fetch_add(1, Ordering::Relaxed);
            crate::log::notice(&format!(
                "Partial resynchronization request from {} accepted. Sending {} bytes of backlog starting from offset {offset}.",
                who.name(),
                bytes.len()
            ));
            let (id, _) = shared.repl.position();
            let mut reply = format!("+CONTINUE {id}\r\n").into_bytes();
            reply.extend_from_slice(&bytes);
            Some(reply)
        }
        Resync::Full(why) => {
            if replid != b"?" {
                shared.snapshots.syncs_partial_err.fetch_add(1, Ordering::Relaxed);
            }
            crate::log::notice(&format!("Replica {} asks for a partial resync: {why}, full sync instead", who.name()));
            None
        }
    }
}

/// WAIT's request: every replica is asked to acknowledge its offset now (`REPLCONF
/// GETACK *` in the stream, as Redis), and the stream is posted at once. Not while
/// clients are paused or a failover holds writes (as Redis: it would move the offset
/// a failover waits for); the replicas' acknowledgements every second answer then.
pub fn request_acks(shared: &Shared) {
    if shared.pause.active(shared.keyspace.now_ms()) {
        return;
    }
    shared.repl.feed_keyless(&[b"REPLCONF", b"GETACK", b"*"]);
    flush(shared);
}

/// Posts the stream fed since the last call to each online replica (one mail per
/// replica per call), waking the loops that own them. One atomic load when nothing is
/// waiting.
#[inline]
pub fn flush(shared: &Shared) {
    flush_here(shared, usize::MAX);
}

/// [`flush`] after a batch of event loop `here`, which drains its own mailbox next:
/// the mail of the replicas it owns is left there without a wake-up. (Woken, the loop
/// took one more turn, and a write to its eventfd, per batch that fed the stream:
/// unpipelined SETs with a replica on the same loop paid both for nearly every
/// request.)
#[inline]
pub fn flush_here(shared: &Shared, here: usize) {
    // Records of this loop's that no connection's batch published (served pops).
    shared.repl.publish_mine();
    // Each piece leaves once this server's log holds the records in it
    // (`net::apply_mail` holds it in the replica's output until then).
    shared.repl.deliver(|owner, client_id, bytes, need| {
        let mail = Mail::output(client_id, bytes).after_log(need);
        if owner == here {
            shared.post_mail_quietly(owner, mail);
        } else {
            shared.post_mail(owner, mail);
        }
    });
}

/// Replication's periodic work, from loop 0's tick.
pub fn cron(shared: &Shared, now_ms: i64) {
    if !shared.repl.feeding() {
        return;
    }
    super::failover::progress(shared, now_ms);
    shared.repl.recount_good(now_ms);
    let (period_s, timeout_s, limit) = {
        let c = shared.config.read();
        (c.repl_ping_replica_period, c.repl_timeout, c.client_output_buffer_limit[1])
    };
    let replicas = shared.repl.info().replicas;
    // repl-backlog-ttl: a master alone that long frees its backlog (a replica never).
    let ttl_s: i64 = shared.config.read().recorded.get("repl-backlog-ttl").and_then(|v| v.parse().ok()).unwrap_or(3600);
    if replicas.is_empty() && !shared.replica.is_replica() {
        let since = shared.repl.alone_since_ms.load(Ordering::Relaxed);
        if since == 0 {
            shared.repl.alone_since_ms.store(now_ms, Ordering::Relaxed);
        } else if ttl_s > 0 && now_ms - since > ttl_s.saturating_mul(1000) {
            shared.repl.stop_feeding();
            shared.repl.alone_since_ms.store(0, Ordering::Relaxed);
            crate::log::notice(&format!("Replication backlog freed after {ttl_s} seconds without connected replicas."));
            return;
        }
    } else {
        shared.repl.alone_since_ms.store(0, Ordering::Relaxed);
    }
    let last_ping_ms = shared.repl.last_ping_ms.load(Ordering::Relaxed);
    // A replica passes its master's stream on, PINGs included: none of its own; nor
    // a master whose failover waits for a replica to have the whole stream.
    if !replicas.is_empty() && !shared.replica.is_replica() && !shared.failover.active() && now_ms - last_ping_ms >= (period_s as i64).saturating_mul(1000) {
        // As Redis: a PING in the stream, so that replicas see the link alive (their
        // repl-timeout) and offsets move while nothing is written. Under loop 0's gate,
        // so never inside an EXEC's MULTI/EXEC block.
        let _gate = shared.gate(0).read();
        shared.repl.feed_keyless(&[b"PING"]);
        shared.repl.last_ping_ms.store(now_ms, Ordering::Relaxed);
    }
    for (client_id, _) in shared.repl.overdue(now_ms, (timeout_s as i64).saturating_mul(1000)) {
        let name = shared.repl.name(client_id).unwrap_or_else(|| format!("id={client_id}"));
        crate::log::warning(&format!("Disconnecting timedout replica (streaming sync): {name}"));
        shared.kill_client(client_id);
    }
    // The replica class's output limit: what its connection has pending plus what waits
    // in its outbox.
    let now_s = now_ms.div_euclid(1000);
    for (client_id, outbox) in shared.repl.outbox_sizes() {
        let pending = outbox + shared.clients.lock().get(&client_id).map_or(0, |c| c.obuf.load(Ordering::Relaxed) as u64);
        if shared.repl.over_output_limit(client_id, pending, &limit, now_s) {
            crate::log::warning(&format!(
                "Client id={client_id} closed for overcoming of output buffer limits (slave: {pending} bytes pending)."
            ));
            shared.repl.remove(client_id);
            shared.kill_client(client_id);
        }
    }
    flush(shared);
}
