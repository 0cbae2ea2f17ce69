//! A log damaged by a crash or a power loss, and how a start reads it: a torn tail cut
//! (Redis's messages), a MULTI without EXEC dropped, garbage in the middle refused, the
//! zero-filled space ahead of the writer, a block that never reached the disk, a torn
//! file that only empty files follow. The helpers are the parent module's.

use super::*;

#[test]
fn torn_tail_is_truncated_and_the_aof_stays_usable() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    for i in 0..20 {
        ok(&mut c, &["SET", &format!("k{i}"), &i.to_string()]);
    }
    int(&mut c, &["RPUSH", "l", "a", "b"]);
    p.kill();
    let incr = last_incr(&p.aof_dir());
    let name = file_name(&incr);
    append(&incr, b"*3\r\n$3\r\nSET\r\n$1\r\nk");

    p.restart();
    let log = p.server().log();
    let want = format!("Truncating the AOF {name} at offset ");
    assert!(log.contains(&want), "log lacks {want:?}:\n{log}");
    let mut c = p.conn();
    for i in 0..20 {
        assert_eq!(
            r(&mut c, &["GET", &format!("k{i}")]),
            Resp::Bulk(i.to_string().into_bytes())
        );
    }
    assert_bytes!(c.cmd(&["GET", "k"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":21\r\n");

    // New writes go after the last whole command and survive another crash.
    ok(&mut c, &["SET", "after", "torn"]);
    int(&mut c, &["RPUSH", "l", "c"]);
    p.crash_and_restart();
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "after"]), b"$4\r\ntorn\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", "l", "0", "-1"]),
        b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    assert_bytes!(c.cmd(&["GET", "k19"]), b"$2\r\n19\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":22\r\n");
}

#[test]
fn incomplete_multi_at_the_tail_is_dropped() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "before", "1"]);
    p.kill();
    let incr = last_incr(&p.aof_dir());
    append(
        &incr,
        b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$7\r\nin-txn1\r\n$1\r\nv\r\n",
    );
    p.restart();
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "before"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["GET", "in-txn1"]), b"$-1\r\n");
    // Later writes are not swallowed by the dangling MULTI on the next load.
    ok(&mut c, &["SET", "after", "2"]);
    p.crash_and_restart();
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "before"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["GET", "after"]), b"$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["GET", "in-txn1"]), b"$-1\r\n");
}

#[test]
fn garbage_in_the_middle_refuses_to_start() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "a", "1"]);
    ok(&mut c, &["SET", "b", "2"]);
    p.kill();
    let incr = last_incr(&p.aof_dir());
    let name = file_name(&incr);
    let mut data = std::fs::read(&incr).expect("read incr");
    let offsets = command_offsets(&data);
    let last = *offsets.last().expect("a command in the incr file");
    data.splice(last..last, b"xyz\r\n".iter().copied());
    std::fs::write(&incr, &data).expect("write incr");

    let started = Instant::now();
    let out = p.start_expecting_failure();
    assert!(
        !out.answered,
        "server started on a corrupt AOF; log:\n{}",
        out.log
    );
    assert!(
        matches!(out.code, Some(c) if c != 0),
        "exit code {:?} within {:?}; log:\n{}",
        out.code,
        started.elapsed(),
        out.log
    );
    let want = format!("Bad file format reading the append only file {name}");
    assert!(out.log.contains(&want), "log lacks {want:?}:\n{}", out.log);
}

/// The log file is zero-filled ahead of its end only under `appendfsync always`, whose
/// every commit waits for an fdatasync (the zeros spare it a journal commit); under
/// everysec they would double the bytes sent to the disk. A switch to `always` at run
/// time starts the zero-filling. (Redis preallocates nothing: Basalt only.)
#[test]
fn the_log_is_zero_filled_ahead_only_under_always() {
    let args: &[&'static str] = &["--appendonly", "yes", "--appendfsync", "everysec"];
    let Some((mut p, mut c)) = start_basalt_only(args, " (Redis preallocates nothing)") else {
        return;
    };
    let value = "v".repeat(512);
    for i in 0..200 {
        ok(&mut c, &["SET", &format!("k{i}"), &value]);
    }
    let incr = last_incr(&p.aof_dir());
    let len = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    // Everything is written (everysec replies after the write), and nothing more.
    let written = len(&incr);
    assert!(written > 200 * 512 && written < 256 * 1024, "log of {written} bytes");
    assert_ne!(std::fs::read(&incr).expect("read log").last(), Some(&0u8));
    ok(&mut c, &["CONFIG", "SET", "appendfsync", "always"]);
    ok(&mut c, &["SET", "after", "1"]);
    assert!(
        wait_until(Duration::from_secs(10), || len(&incr) >= written + 1024 * 1024),
        "no zeros ahead of the log under always: {} bytes",
        len(&incr)
    );
    // The zeros are skipped after a crash, and cut off.
    p.crash_and_restart();
    let mut c = p.conn();
    assert_eq!(bytes(&r(&mut c, &["GET", "after"])), b"1");
    assert_eq!(int(&mut c, &["DBSIZE"]), 201);
}

/// A power loss under `always` with commits in flight: a block of the log that never
/// reached the disk reads as zeros, here inside a value, where the command would still
/// parse. The server starts, and the log ends at the piece (segment) that holds the
/// hole: the writes before it are there, that one and the later ones are not (none of
/// them was acknowledged when the power went). Redis refuses to start on such a file:
/// Basalt only.
#[test]
fn a_block_that_never_reached_the_disk_ends_the_log_at_its_segment() {
    let Some((mut p, mut c)) = start_basalt_only(AOF_ALWAYS, " (Redis refuses to start on a holed log)") else {
        return;
    };
    let value = "v".repeat(3000);
    for i in 0..50 {
        ok(&mut c, &["SET", &format!("a{i}"), &value]);
    }
    p.kill();
    let incr = last_incr(&p.aof_dir());
    let mut data = std::fs::read(&incr).expect("read incr");
    let key = b"$3\r\na30\r\n";
    let at = data.windows(key.len()).position(|w| w == key).expect("a30 in the log");
    let hole = (at + 1024) / 512 * 512;
    data[hole..hole + 512].fill(0);
    std::fs::write(&incr, &data).expect("write incr");
    p.restart();
    let mut c = p.conn();
    let present: Vec<bool> = (0..50).map(|i| int(&mut c, &["EXISTS", &format!("a{i}")]) == 1).collect();
    assert!(present[..30].iter().all(|&p| p), "the writes before the hole are there: {present:?}");
    assert!(present[30..].iter().all(|&p| !p), "the log ends at the hole: {present:?}");
    // The file was cut there: the next start reads the same.
    ok(&mut c, &["SET", "after", "1"]);
    p.crash_and_restart();
    let mut c = p.conn();
    assert_eq!(int(&mut c, &["DBSIZE"]), 31);
}

/// A kill inside the writer's last write to the old incremental file, after a rewrite
/// named its new one in the manifest: the old file ends in a torn command and the new
/// one is empty. Nothing after the torn command was written, so the start cuts it as a
/// torn tail of the log, rather than refusing a truncated file that is not the last
/// (Redis, which writes the old file's end before naming the new one, refuses).
#[test]
fn a_torn_incr_file_that_only_empty_files_follow_ends_the_log() {
    let Some((mut p, mut c)) = start_basalt_only(AOF_ALWAYS, " (Redis refuses a truncated file that is not the last)") else {
        return;
    };
    for i in 0..20 {
        ok(&mut c, &["SET", &format!("k{i}"), &"v".repeat(100)]);
    }
    p.kill();
    let aof_dir = p.aof_dir();
    let incr = last_incr(&aof_dir);
    let data = std::fs::read(&incr).expect("read incr");
    let key = b"$3\r\nk15\r\n";
    let at = data.windows(key.len()).position(|w| w == key).expect("k15 in the log");
    // Cut inside the value of k15's SET: the command is torn.
    std::fs::write(&incr, &data[..at + key.len() + 20]).expect("write incr");
    let entries = read_manifest(&aof_dir);
    let seq = entries.iter().filter(|e| e.kind == "i").map(|e| e.seq).max().expect("an incr") + 1;
    let next = format!("appendonly.aof.{seq}.incr.aof");
    std::fs::write(aof_dir.join(&next), b"").expect("create the next incr");
    let mut manifest = std::fs::read_to_string(manifest_path(&aof_dir)).expect("read manifest");
    manifest.push_str(&format!("file {next} seq {seq} type i\n"));
    std::fs::write(manifest_path(&aof_dir), manifest).expect("write manifest");

    p.restart();
    let mut c = p.conn();
    let present: Vec<bool> = (0..20).map(|i| int(&mut c, &["EXISTS", &format!("k{i}")]) == 1).collect();
    assert!(present[..15].iter().all(|&p| p), "the writes before the torn one are there: {present:?}");
    assert!(present[15..].iter().all(|&p| !p), "the log ends at the torn command: {present:?}");
    // New writes go to the new file; the old one was cut, so the next start reads the same.
    ok(&mut c, &["SET", "after", "1"]);
    p.crash_and_restart();
    let mut c = p.conn();
    assert_eq!(int(&mut c, &["DBSIZE"]), 16);

    // A later file that holds data: the torn one is damage, and the start is refused.
    p.kill();
    let incr = aof_dir.join(&next);
    let data = std::fs::read(&incr).expect("read the new incr");
    assert!(!data.is_empty(), "the write after the restart went to the new file");
    let old = aof_dir.join(entries.iter().rev().find(|e| e.kind == "i").map(|e| e.name.clone()).expect("old incr"));
    let mut torn = std::fs::read(&old).expect("read the old incr");
    torn.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nx");
    std::fs::write(&old, torn).expect("tear the old incr");
    let out = p.start_expecting_failure();
    assert!(!out.answered && out.log.contains("not the last file"), "a torn file before one with data is refused; log:\n{}", out.log);
}
