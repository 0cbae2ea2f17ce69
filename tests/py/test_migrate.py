"""MIGRATE between two servers of the binary under test (Basalt, or Redis 7.0.15 with
BASALT_TEST_SERVER=$(command -v redis-server): every test passes against both).

What is checked: keys move with their time to live and leave the source; the source's
append-only log and keyspace events record a DEL of the moved keys; COPY, REPLACE, AUTH
and AUTH2, KEYS; the target's errors (BUSYKEY with the other keys moved all the same,
a bad database, a wrong password) and the I/O errors (nobody listening, a target that
never answers) as Redis words them; WATCH broken only by a key that moved; the password
never shown by SLOWLOG or MONITOR.
"""

import glob
import os
import socket
import threading
import time

import pytest
import redis


def err(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


def test_keys_move_with_their_ttl_and_the_log_holds_a_del(spawn):
    src_t, dst_t = spawn("--appendonly", "yes"), spawn()
    src, dst = src_t.client(), dst_t.client()
    src.set("plain", "v")
    src.set("timed", "t", px=60000)
    src.rpush("list", *range(100))
    src.hset("hash", mapping={"a": 1, "b": 2})
    assert src.execute_command("MIGRATE", "127.0.0.1", dst_t.port, "plain", 0, 5000) == b"OK"
    assert src.execute_command("MIGRATE", "127.0.0.1", dst_t.port, "", 0, 5000, "KEYS", "timed", "list", "missing", "hash") == b"OK"
    assert src.dbsize() == 0
    assert dst.get("plain") == b"v" and dst.get("timed") == b"t"
    assert 50000 < dst.pttl("timed") <= 60000
    assert dst.pttl("plain") == -1
    assert dst.lrange("list", 0, -1) == [str(i).encode() for i in range(100)]
    assert dst.hgetall("hash") == {b"a": b"1", b"b": b"2"}
    # Nothing left to move.
    assert src.execute_command("MIGRATE", "127.0.0.1", dst_t.port, "plain", 0, 5000) == b"NOKEY"
    # The source's log: the moved keys as DELs, no MIGRATE (a replay must not migrate).
    d = src.config_get("dir")["dir"]
    text = b"".join(open(f, "rb").read() for f in sorted(glob.glob(os.path.join(d, "appendonlydir", "*.incr.aof"))))
    assert b"MIGRATE" not in text.upper()
    assert b"$3\r\nDEL\r\n$5\r\nplain\r\n" in text
    assert b"*4\r\n$3\r\nDEL\r\n$5\r\ntimed\r\n$4\r\nlist\r\n$4\r\nhash\r\n" in text


def test_copy_replace_and_the_targets_errors(spawn):
    src_t, dst_t = spawn("--appendonly", "yes"), spawn()
    src, dst = src_t.client(), dst_t.client()
    src.config_set("notify-keyspace-events", "KEA")
    events = src.pubsub()
    events.psubscribe("__keyevent@0__:del")
    for k in ("a", "busy", "c"):
        src.set(k, "src-" + k)
    dst.set("busy", "dst")
    port = dst_t.port
    # COPY: the keys stay here too; a key the target holds is an error, the others move.
    assert err(src, "MIGRATE", "127.0.0.1", port, "busy", 0, 5000, "COPY") == \
        "Target instance replied with error: BUSYKEY Target key name already exists."
    assert src.execute_command("MIGRATE", "127.0.0.1", port, "a", 0, 5000, "COPY") == b"OK"
    assert src.get("a") == b"src-a" and dst.get("a") == b"src-a"
    assert err(src, "MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", "busy", "c") == \
        "Target instance replied with error: BUSYKEY Target key name already exists."
    assert src.get("busy") == b"src-busy" and src.get("c") is None and dst.get("c") == b"src-c"
    # The key that moved is deleted in the log too, though the reply was an error; the
    # error counts as a failed call.
    d = src.config_get("dir")["dir"]
    log = b"".join(open(f, "rb").read() for f in sorted(glob.glob(os.path.join(d, "appendonlydir", "*.incr.aof"))))
    assert b"*2\r\n$3\r\nDEL\r\n$1\r\nc\r\n" in log
    assert src.info("commandstats")["cmdstat_migrate"]["failed_calls"] == 2
    assert src.execute_command("MIGRATE", "127.0.0.1", port, "", 0, 5000, "REPLACE", "KEYS", "busy", "a") == b"OK"
    assert dst.get("busy") == b"src-busy" and src.dbsize() == 0
    deleted = []
    deadline = time.monotonic() + 5
    while len(deleted) < 3 and time.monotonic() < deadline:
        m = events.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            deleted.append(m["data"])
    assert deleted == [b"c", b"busy", b"a"]
    src.set("k", "v")
    assert err(src, "MIGRATE", "127.0.0.1", port, "k", 99, 5000) == \
        "Target instance replied with error: ERR DB index is out of range"
    assert src.execute_command("MIGRATE", "127.0.0.1", port, "k", 3, 5000) == b"OK"
    assert redis.Redis(host=dst_t.host, port=dst_t.port, db=3).get("k") == b"v"


def test_auth_and_auth2_and_the_password_stays_hidden(spawn):
    src_t, dst_t = spawn(), spawn("--requirepass", "sesame")
    src = src_t.client()
    dst = dst_t.client(password="sesame")
    dst.execute_command("ACL", "SETUSER", "mover", "on", ">open", "+@all", "~*")
    src.config_set("slowlog-log-slower-than", 0)
    src.set("k1", "1")
    src.set("k2", "2")
    src.set("k3", "3")
    port = dst_t.port
    assert err(src, "MIGRATE", "127.0.0.1", port, "k1", 0, 5000).startswith("Target instance replied with error: NOAUTH")
    assert err(src, "MIGRATE", "127.0.0.1", port, "k1", 0, 5000, "AUTH", "wrong") == \
        "Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled."
    assert src.execute_command("MIGRATE", "127.0.0.1", port, "k1", 0, 5000, "AUTH", "sesame") == b"OK"
    assert src.execute_command("MIGRATE", "127.0.0.1", port, "", 0, 5000, "AUTH2", "mover", "open", "KEYS", "k2", "k3") == b"OK"
    assert dst.mget("k1", "k2", "k3") == [b"1", b"2", b"3"]
    src.set_response_callback("SLOWLOG GET", lambda r, **kw: r)
    shown = [b" ".join(e[3]) for e in src.execute_command("SLOWLOG GET", 128)]
    migrates = [c for c in shown if c.upper().startswith(b"MIGRATE")]
    assert len(migrates) == 4, shown
    assert not any(b"sesame" in c or b"open" in c or b"wrong" in c or b"mover" in c for c in shown), shown
    assert b"MIGRATE 127.0.0.1 %d  0 5000 AUTH2 (redacted) (redacted) KEYS k2 k3" % port in migrates


def test_arguments_are_checked_as_redis_checks_them(spawn):
    src = spawn().client()
    src.set("k", "v")
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", 0, 100, "KEYS", "a") == \
        "When using MIGRATE KEYS option, the key argument must be set to the empty string"
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", 0, 100, "BOGUS") == "syntax error"
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", 0, 100, "AUTH") == "syntax error"
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", 0, 100, "AUTH2", "u") == "syntax error"
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", "x", 100) == "value is not an integer or out of range"
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", 0, "y") == "value is not an integer or out of range"
    assert err(src, "MIGRATE", "127.0.0.1", 1, "k", 0) == "wrong number of arguments for 'migrate' command"
    assert src.execute_command("MIGRATE", "127.0.0.1", 1, "nokey", 0, 100) == b"NOKEY"
    assert src.command_getkeys("MIGRATE", "h", "1", "", "0", "0", "COPY", "KEYS", "a", "b") == ["a", "b"]


def test_io_errors_leave_the_keys_here(spawn):
    src = spawn().client()
    src.set("k", "v")
    # Nobody listening: Redis's non-blocking connect reports this as a failed write.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    assert err(src, "MIGRATE", "127.0.0.1", closed_port, "k", 0, 200) == "IOERR error or timeout writing to target instance"
    # A target that takes the connection and never answers: the read times out.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    accepted = []
    stop = threading.Event()

    def hold():
        silent.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(silent.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    try:
        assert err(src, "MIGRATE", "127.0.0.1", silent.getsockname()[1], "k", 0, 300) == \
            "IOERR error or timeout reading to target instance"
    finally:
        stop.set()
        t.join()
        silent.close()
        for c in accepted:
            c.close()
    assert src.get("k") == b"v"
    assert src.ping()


def test_watch_is_broken_only_by_a_key_that_moved(spawn):
    src_t, dst_t = spawn(), spawn()
    src, dst = src_t.client(), dst_t.client()
    src.set("moves", "1")
    src.set("stays", "1")
    dst.set("stays", "there")
    for key, moved in (("stays", False), ("moves", True)):
        p = src.pipeline()
        p.watch(key)
        src.execute_command("MIGRATE", "127.0.0.1", dst_t.port, "", 0, 5000, "KEYS", key) if moved else \
            err(src, "MIGRATE", "127.0.0.1", dst_t.port, "", 0, 5000, "KEYS", key)
        p.multi()
        p.set("after", key)
        if moved:
            with pytest.raises(redis.WatchError):
                p.execute()
        else:
            assert p.execute() == [True]
