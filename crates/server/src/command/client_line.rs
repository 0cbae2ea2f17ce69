//! One client's CLIENT LIST line, in Redis's field order, and its type: for CLIENT
//! LIST and INFO, CLIENT KILL's TYPE filter and ACL LOG's `client-info`.

use std::fmt::Write;
use std::sync::atomic::Ordering;

use crate::shared::{ClientInfo, Shared};

/// A client's type for CLIENT LIST and CLIENT KILL's TYPE filters, as Redis's: `pubsub`
/// while subscribed to anything, `slave` for a replica, otherwise `normal` (MONITOR
/// clients too). The same classes as `client-output-buffer-limit`'s. (The master of a
/// replica, type `master`, is no client of the registry: [`describe_master`].)
pub fn client_type(info: &ClientInfo) -> &'static str {
    let subscriptions = info.sub.load(Ordering::Relaxed) + info.psub.load(Ordering::Relaxed) + info.ssub.load(Ordering::Relaxed);
    crate::output_limit::Class::of_client(info.replica.load(Ordering::Relaxed), subscriptions).name()
}

/// The CLIENT LIST line of a replica's master, while its link is up, as Redis lists its
/// master client (flag `M`, the stream's database and last command, user
/// `(superuser)`): (its id, the line). The link reads through a 64 KiB buffer, shown as
/// its read buffer and memory.
pub fn describe_master(link: &crate::replication::role::Link, now_ms: i64) -> Option<(u64, String)> {
    let client = link.master_client.lock().clone()?;
    let idle = ((now_ms - link.last_io_ms.load(Ordering::Relaxed)) / 1000).max(0);
    let cmd = link.last_cmd.lock().clone();
    let line = format!(
        "id={} addr={} laddr={} fd={} name= age={} idle={} flags=M db={} sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=65536 rbp=0 obl=0 oll=0 omem=0 tot-mem=65536 events=r cmd={} user=(superuser) redir=-1 resp=2 lib-name= lib-ver=",
        client.id,
        client.addr,
        client.laddr,
        client.fd,
        client.since.elapsed().as_secs(),
        idle,
        link.stream_db_now.load(Ordering::Relaxed),
        if cmd.is_empty() { "NULL" } else { &cmd },
    );
    Some((client.id, line))
}

/// The size of Redis's per-client reply buffer, and of its reply list's blocks.
const REPLY_CHUNK: usize = 16 * 1024;

/// One CLIENT LIST line for a client, in Redis's field order.
pub fn describe(shared: &Shared, t: &super::table::CommandTable, info: &ClientInfo, now_ms: i64) -> String {
    let cmd = match info.last_cmd.load(Ordering::Relaxed) {
        usize::MAX => "NULL".to_string(),
        i => t.entries.get(i).map_or("NULL".to_string(), |e| e.fullname.clone()),
    };
    let age = info.created.elapsed().as_secs();
    let idle = ((now_ms - info.last_interaction_ms.load(Ordering::Relaxed)) / 1000).max(0);
    let mut flags = String::new();
    // Redis marks a MONITOR client `O` (a kind of replica), before any other flag.
    if shared.monitor_count.load(Ordering::Acquire) > 0 && shared.monitors.lock().iter().any(|&(_, id)| id == info.id) {
        flags.push('O');
    } else if info.replica.load(Ordering::Relaxed) {
        flags.push('S');
    }
    // Redis's order: O, P, x, b, t, R, B, then e and T.
    if info.sub.load(Ordering::Relaxed) + info.psub.load(Ordering::Relaxed) + info.ssub.load(Ordering::Relaxed) > 0 {
        flags.push('P');
    }
    if info.multi.load(Ordering::Relaxed) >= 0 {
        flags.push('x');
    }
    if info.blocked.load(Ordering::Relaxed) {
        flags.push('b');
    }
    let tracking = crate::tracking::state(shared, info.id);
    if let Some((_, bcast, broken)) = tracking {
        flags.push('t');
        if broken {
            flags.push('R');
        }
        if bcast {
            flags.push('B');
        }
    }
    if info.no_evict.load(Ordering::Relaxed) {
        flags.push('e');
    }
    if info.no_touch.load(Ordering::Relaxed) {
        flags.push('T');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let qbuf = info.qbuf.load(Ordering::Relaxed);
    let argv_mem = info.argv_mem.load(Ordering::Relaxed);
    // Pending output shown as Redis's: its first 16 KiB in the client's buffer (`obl`),
    // the rest in a reply list (`oll` blocks, `omem` bytes).
    let obuf = info.obuf.load(Ordering::Relaxed);
    let obl = obuf.min(REPLY_CHUNK);
    let omem = obuf - obl;
    let mut s = String::with_capacity(256);
    let _ = write!(
        s,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free=0 argv-mem={} multi-mem=0 rbs={} rbp=0 obl={} oll={} omem={} tot-mem={} events=r cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
        info.id,
        info.addr,
        info.laddr,
        info.fd,
        String::from_utf8_lossy(&info.name.lock()),
        age,
        idle,
        flags,
        info.db.load(Ordering::Relaxed),
        info.sub.load(Ordering::Relaxed),
        info.psub.load(Ordering::Relaxed),
        info.ssub.load(Ordering::Relaxed),
        info.multi.load(Ordering::Relaxed),
        qbuf,
        argv_mem,
        qbuf,
        obl,
        omem.div_ceil(REPLY_CHUNK),
        omem,
        qbuf + argv_mem + obuf,
        cmd,
        info.user.lock(),
        tracking.map_or(-1, |(redirect, _, _)| redirect as i64),
        info.resp.load(Ordering::Relaxed),
        String::from_utf8_lossy(&info.lib_name.lock()),
        String::from_utf8_lossy(&info.lib_ver.lock()),
    );
    s
}
