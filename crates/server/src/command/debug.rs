//! DEBUG: test and diagnosis helpers (SLEEP, POPULATE, OBJECT, SET-ACTIVE-EXPIRE),
//! refused unless `enable-debug-command` allows them, as in Redis 7.

use std::sync::atomic::Ordering;

use resp::encode;
use store::entry::{Entry, Payload};

use super::args::{self, is};
use super::flags::*;
use super::{spec, CommandError, CommandSpec, Ctx};

fn allowed(ctx: &Ctx<'_>) -> bool {
    let mode = ctx.shared.config.read().enable_debug_command.clone();
    crate::config::enabled_for(&mode, &ctx.client.info.addr)
}

/// DEBUG subcommand [args ...].
fn debug(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if !allowed(ctx) {
        return Err(CommandError::msg("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."));
    }
    let sub = a[1];
    // Dispatch releases the loop's gate before DEBUG so that LOADAOF and RELOAD can
    // take every gate; the other subcommands take their own back (POPULATE writes, and
    // must not land in the middle of another loop's EXEC).
    let _gate = (!is(sub, "loadaof") && !is(sub, "reload") && !ctx.client.in_exec).then(|| {
        let owner = ctx.client.info.owner.load(Ordering::Relaxed).min(ctx.shared.gates.len() - 1);
        ctx.shared.gates[owner].read()
    });
    if is(sub, "sleep") && a.len() == 3 {
        // Redis reads the number with atof: anything unparsable is 0.
        let secs = args::float(a[2]).unwrap_or(0.0);
        if secs > 0.0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
        }
        ctx.ok();
    } else if is(sub, "set-active-expire") && a.len() == 3 {
        // Redis reads it with atoi: anything unparsable is 0 (off).
        let on = args::int(a[2]).unwrap_or(0) != 0;
        ctx.shared.active_expire_enabled.store(on, Ordering::Relaxed);
        ctx.ok();
    } else if is(sub, "aof-flush-sleep") && a.len() == 3 {
        // Redis reads it with atoi: anything unparsable is 0 (no sleep).
        let us = u64::try_from(args::int(a[2]).unwrap_or(0)).unwrap_or(0);
        if let Some(aof) = ctx.shared.aof.as_ref() {
            aof.debug_flush_sleep_us.store(us, Ordering::Relaxed);
        }
        ctx.ok();
    } else if is(sub, "loadaof") && a.len() == 2 {
        let Some(aof) = ctx.shared.aof.as_ref() else {
            return Err(CommandError::msg("ERR the append-only log is off (appendonly no): nothing to load"));
        };
        // Exclusive, as EXEC: no command runs on any loop while the keyspace is
        // emptied and replayed (dispatch released this loop's gate for DEBUG).
        let _gates = ctx.shared.all_gates(ctx.client.in_exec);
        if !aof.wait_written(std::time::Duration::from_secs(10)) {
            return Err(CommandError::msg("ERR the append-only log could not be written out in 10 s (disk errors?)"));
        }
        let ks = ctx.ks();
        for db in 0..ks.databases() {
            drop(ks.flush_db(db));
        }
        let dir = ctx.shared.config.read().dir.clone();
        crate::aof::load::reload(ctx.shared, &dir, &mut super::replay::Replayer::new(ctx.shared, ctx.table, "aof-loader")).map_err(|e| CommandError::Owned(format!("ERR Error reloading the append-only log: {e}")))?;
        ctx.ok();
    } else if is(sub, "reload") && a.len() == 2 {
        if ctx.shared.snapshots.bg_in_progress.load(Ordering::Acquire) {
            return Err(CommandError::msg("ERR Background save already in progress"));
        }
        // Save, empty the keyspace, load the file back: a round trip through RDB.
        let _gates = ctx.shared.all_gates(ctx.client.in_exec);
        crate::snapshot::save_and_reload(ctx.shared).map_err(|e| CommandError::Owned(format!("ERR Error trying to load the RDB dump: {e}")))?;
        ctx.ok();
    } else if is(sub, "populate") && (3..=5).contains(&a.len()) {
        populate(ctx, a)?;
    } else if is(sub, "object") && a.len() == 3 {
        let ks = ctx.ks();
        let (h, shard) = ks.lock_key(ctx.client.db, a[2]);
        let Some(e) = shard.peek(h, a[2], ctx.now_ms) else {
            return Err(CommandError::NoSuchKey);
        };
        let enc = e.encoding();
        let len = match e.value() {
            store::ValueRef::Str(s) => s.len(),
            store::ValueRef::Obj(_) => 0,
        };
        let idle = store::clock::lru_idle_seconds(ctx.now_ms, e.lru());
        let text = format!(
            "Value at:0x{:x} refcount:1 encoding:{enc} serializedlength:{len} lru:{} lru_seconds_idle:{idle}",
            e as *const Entry as usize,
            (e.lru() / store::clock::LRU_UNITS_PER_SECOND) & 0xff_ffff,
        );
        encode::simple(ctx.out, text.as_bytes());
    } else if is(sub, "digest") && a.len() == 2 {
        // One point in time: no command runs on any loop meanwhile (dispatch released
        // this loop's gate for DEBUG).
        drop(_gate);
        let _gates = ctx.shared.all_gates(ctx.client.in_exec);
        let d = crate::digest::dataset(ctx.ks(), ctx.now_ms);
        encode::simple(ctx.out, crate::digest::hex(&d).as_bytes());
    } else if is(sub, "digest-value") {
        // As Redis: a key whose time has passed still counts until it is removed.
        let ks = ctx.ks();
        encode::array_len(ctx.out, a.len() - 2);
        for key in &a[2..] {
            let (h, shard) = ks.lock_key(ctx.client.db, key);
            let d = shard.peek(h, key, i64::MIN).map(crate::digest::of_value).unwrap_or([0; 20]);
            drop(shard);
            encode::simple(ctx.out, crate::digest::hex(&d).as_bytes());
        }
    } else if is(sub, "protocol") && a.len() == 3 {
        protocol(ctx, a[2])?;
    } else if is(sub, "error") && a.len() == 3 {
        // The text as the whole error reply (no code added), as Redis's.
        return Err(CommandError::Owned(String::from_utf8_lossy(a[2]).into_owned()));
    } else if is(sub, "log") && a.len() == 3 {
        crate::log::warning(&format!("DEBUG LOG: {}", String::from_utf8_lossy(a[2])));
        ctx.ok();
    } else if is(sub, "help") {
        super::reply_help(
            ctx,
            "DEBUG",
            &[
                "AOF-FLUSH-SLEEP <microsec>",
                "    Server will sleep before flushing the AOF, this is used for testing.",
                "DIGEST",
                "    Output a hex signature representing the current DB content.",
                "DIGEST-VALUE <key> [<key> ...]",
                "    Output a hex signature of the values of all the specified keys.",
                "ERROR <string>",
                "    Return a Redis protocol error with <string> as message. Useful for clients",
                "    unit tests to simulate Redis errors.",
                "LOG <message>",
                "    Write <message> to the server log.",
                "LOADAOF",
                "    Flush the AOF buffers on disk and reload the AOF in memory.",
                "RELOAD",
                "    Save the RDB on disk and reload it back to memory.",
                "OBJECT <key>",
                "    Show low level info about the key and associated value.",
                "PROTOCOL <type>",
                "    Reply with a test value of the specified type. <type> can be: string,",
                "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
                "    true, false.",
                "POPULATE <count> [<prefix>] [<size>]",
                "    Create <count> string keys named key:<num>. If <prefix> is specified then",
                "    it is used instead of the 'key' prefix. These are not propagated to",
                "    replicas. Cluster slots are not respected so keys not belonging to the",
                "    current node can be created in cluster mode.",
                "SET-ACTIVE-EXPIRE <0|1>",
                "    Setting it to 0 disables expiring keys in background when they are not",
                "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
                "    default.",
                "SLEEP <seconds>",
                "    Stop the server for <seconds>. Decimals allowed.",
            ],
        );
    } else {
        return Err(CommandError::Owned(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(sub)
        )));
    }
    Ok(())
}

/// DEBUG PROTOCOL type: Redis's test value of each RESP type (for client libraries'
/// tests), in the client's protocol.
#[allow(clippy::approx_constant)] // Redis's test double is 3.141, not pi.
fn protocol(ctx: &mut Ctx<'_>, name: &[u8]) -> Result<(), CommandError> {
    let proto = ctx.client.proto;
    let resp3 = proto == resp::Proto::Resp3;
    let out = &mut *ctx.out;
    if is(name, "string") {
        encode::bulk(out, b"Hello World");
    } else if is(name, "integer") {
        encode::integer(out, 12345);
    } else if is(name, "double") {
        encode::double(out, 3.141, proto);
    } else if is(name, "bignum") {
        encode::big_number(out, b"1234567999999999999999999999999999999", proto);
    } else if is(name, "null") {
        encode::null(out, proto);
    } else if is(name, "array") {
        encode::array_len(out, 3);
        (0..3).for_each(|j| encode::integer(out, j));
    } else if is(name, "set") {
        encode::set_len(out, 3, proto);
        (0..3).for_each(|j| encode::integer(out, j));
    } else if is(name, "map") {
        encode::map_len(out, 3, proto);
        for j in 0..3 {
            encode::integer(out, j);
            encode::boolean(out, j == 1, proto);
        }
    } else if is(name, "attrib") {
        if resp3 {
            out.extend_from_slice(b"|1\r\n");
            encode::bulk(out, b"key-popularity");
            encode::array_len(out, 2);
            encode::bulk(out, b"key:123");
            encode::integer(out, 90);
        }
        // (An attribute is no reply of its own: a real one follows.)
        encode::bulk(out, b"Some real reply following the attribute");
    } else if is(name, "push") {
        if !resp3 {
            return Err(CommandError::msg("ERR RESP2 is not supported by this command"));
        }
        out.extend_from_slice(b">2\r\n");
        encode::bulk(out, b"server-cpu-usage");
        encode::integer(out, 42);
        encode::bulk(out, b"Some real reply following the push reply");
    } else if is(name, "true") {
        encode::boolean(out, true, proto);
    } else if is(name, "false") {
        encode::boolean(out, false, proto);
    } else if is(name, "verbatim") {
        encode::verbatim(out, b"txt", b"This is a verbatim\nstring", proto);
    } else {
        return Err(CommandError::msg("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false"));
    }
    Ok(())
}

/// DEBUG POPULATE count [prefix] [size]: creates missing keys prefix:N with value
/// "value:N" (padded or cut to `size` bytes when given).
fn populate(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
    let count = store::types::string::parse_i64(a[2]).ok_or(CommandError::msg(NOT_POSITIVE))?;
    let count = u64::try_from(count).map_err(|_| CommandError::msg(NOT_POSITIVE))?;
    let prefix = a.get(3).copied().unwrap_or(b"key");
    let size = a.get(4).map(|v| args::uint(v)).transpose()?;
    let ks = ctx.ks();
    let lru = ctx.lru();
    let mut key = Vec::with_capacity(prefix.len() + 21);
    let mut value = Vec::new();
    for i in 0..count {
        key.clear();
        key.extend_from_slice(prefix);
        key.push(b':');
        key.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
        value.clear();
        value.extend_from_slice(b"value:");
        value.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
        if let Some(size) = size {
            value.resize(size, 0);
        }
        let (h, mut shard) = ks.lock_key(ctx.client.db, &key);
        if shard.get(h, &key, ctx.now_ms).is_none() {
            shard.insert(h, Entry::new(&key, Payload::Str(&value), None, lru));
        }
    }
    ctx.ok();
    Ok(())
}

pub static COMMANDS: &[CommandSpec] = &[spec(
    "debug",
    -2,
    ADMIN | NOSCRIPT | LOADING | STALE | ALL_GATES | READS_ANY_KEY,
    (0, 0, 0),
    &[],
    "server",
    "A container for debugging commands.",
    debug,
).since("1.0.0").complexity("Depends on the subcommand.").syscmd()];
