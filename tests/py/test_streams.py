"""Streams (XADD ... XINFO, consumer groups, blocking reads) as Redis 7.0.15 answers.

The expected values are redis-server 7.0.15's own answers to the same commands; every
test passes against Redis too (BASALT_TEST_SERVER=/usr/bin/redis-server). What the log
and the replicas get is compared with Redis in test_replication.py (both ways) and,
record by record, by the differential test's stream family.
"""

import threading
import time

import pytest
import redis


def fill(c, key, n, start=1, **fields):
    for ms in range(start, start + n):
        c.xadd(key, fields or {"f": ms}, id=f"{ms}-0")


def test_entries_ids_and_ranges(own_target):
    c = own_target.client()
    assert c.xadd("s", {"f": 1}, id="1-0") == b"1-0"
    assert c.xadd("s", {"f": 2}, id="1-*") == b"1-1"
    assert c.xadd("s", {"a": 1, "b": 2}, id="5") == b"5-0"
    with pytest.raises(redis.ResponseError, match="equal or smaller than the target stream top item"):
        c.xadd("s", {"f": 3}, id="5-0")
    with pytest.raises(redis.ResponseError, match="must be greater than 0-0"):
        c.xadd("t", {"f": 3}, id="0-0")
    assert c.exists("t") == 0
    assert c.xadd("nope", {"f": 1}, nomkstream=True) is None
    assert c.xlen("s") == 3
    assert c.xrange("s") == [(b"1-0", {b"f": b"1"}), (b"1-1", {b"f": b"2"}), (b"5-0", {b"a": b"1", b"b": b"2"})]
    assert c.xrange("s", "(1-0", "5", count=1) == [(b"1-1", {b"f": b"2"})]
    assert c.xrevrange("s", "+", "-", count=1) == [(b"5-0", {b"a": b"1", b"b": b"2"})]
    # COUNT 0 is a null array on a stream, an empty one on a missing key.
    assert c.execute_command("XRANGE", "s", "-", "+", "COUNT", "0") is None
    assert c.execute_command("XRANGE", "missing", "-", "+", "COUNT", "0") == []
    with pytest.raises(redis.ResponseError, match="invalid start ID for the interval"):
        c.xrange("s", "(18446744073709551615-18446744073709551615", "+")
    # The ID parser is C's strtoull: a leading space, a '+' and zeros are accepted.
    assert c.xrange("s", "+1-1", "001-1") == [(b"1-1", {b"f": b"2"})]
    assert c.xdel("s", "1-0", "1-0", "9-0") == 1
    info = c.xinfo_stream("s")
    assert (info["length"], info["last-generated-id"], info["max-deleted-entry-id"], info["entries-added"]) == (2, b"5-0", b"1-0", 3)
    assert info["recorded-first-entry-id"] == b"1-1"
    assert c.type("s") == b"stream" and c.object("encoding", "s") == b"stream"
    c.set("str", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.xadd("str", {"f": 1})


def test_approximate_trims_remove_whole_nodes_as_redis_does(own_target):
    c = own_target.client()
    fill(c, "b", 250)
    info = c.xinfo_stream("b")
    assert (info["radix-tree-keys"], info["radix-tree-nodes"]) == (3, 8), "nodes of 100 entries"
    assert c.xtrim("b", maxlen=120, approximate=True) == 100
    assert c.xlen("b") == 150
    assert c.xtrim("b", maxlen=10, approximate=True, limit=50) == 0, "a node of 100 passes the limit"
    assert c.xtrim("b", maxlen=10, approximate=True, limit=100) == 100
    assert c.xtrim("b", maxlen=1, approximate=True) == 0
    assert c.xtrim("b", maxlen=1, approximate=False) == 49
    # Bytes cut nodes too: 500-byte values, about 8 to a 4 KiB node.
    fill(c, "big", 40, v="x" * 500)
    assert c.xtrim("big", maxlen=30, approximate=True) == 7
    assert c.xlen("big") == 33
    fill(c, "m", 10)
    assert c.xtrim("m", minid="5", approximate=True) == 0
    assert c.xtrim("m", minid="5", approximate=False) == 4
    with pytest.raises(redis.ResponseError, match="LIMIT cannot be used without the special ~ option"):
        c.xtrim("m", maxlen=3, approximate=False, limit=2)


def test_consumer_groups_deliver_acknowledge_and_claim(own_target):
    c = own_target.client()
    fill(c, "s", 5)
    assert c.xgroup_create("s", "g", id="0") is True
    with pytest.raises(redis.ResponseError, match="BUSYGROUP"):
        c.xgroup_create("s", "g", id="0")
    with pytest.raises(redis.ResponseError, match="requires the key to exist"):
        c.xgroup_create("nokey", "g", id="$")
    got = c.xreadgroup("g", "c1", {"s": ">"}, count=3)
    assert got == [[b"s", [(b"1-0", {b"f": b"1"}), (b"2-0", {b"f": b"2"}), (b"3-0", {b"f": b"3"})]]]
    assert c.xreadgroup("g", "c2", {"s": ">"}, count=1)[0][1] == [(b"4-0", {b"f": b"4"})]
    summary = c.xpending("s", "g")
    assert (summary["pending"], summary["min"], summary["max"]) == (4, b"1-0", b"4-0")
    assert summary["consumers"] == [{"name": b"c1", "pending": 3}, {"name": b"c2", "pending": 1}]
    assert c.xack("s", "g", "1-0", "1-0", "9-0") == 1
    # History: the consumer's own pending entries, a deleted one as a null.
    c.xdel("s", "2-0")
    raw = own_target.client()
    raw.response_callbacks.pop("XREADGROUP", None)
    assert raw.execute_command("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0") == [[b"s", [[b"2-0", None], [b"3-0", [b"f", b"3"]]]]]
    pending = c.xpending_range("s", "g", "-", "+", 10)
    # (The deleted one is not delivered again: its count stays.)
    assert [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pending] == [(b"2-0", b"c1", 1), (b"3-0", b"c1", 2), (b"4-0", b"c2", 1)]
    # XCLAIM moves an entry; a deleted pending entry is dropped.
    assert c.xclaim("s", "g", "c3", 0, ["3-0", "2-0"], justid=True) == [b"3-0"]
    assert c.xautoclaim("s", "g", "c4", 0, "0-0", count=10) == [b"0-0", [(b"3-0", {b"f": b"3"}), (b"4-0", {b"f": b"4"})], []]
    groups = c.xinfo_groups("s")
    assert [(g["name"], g["consumers"], g["pending"], g["last-delivered-id"], g["entries-read"], g["lag"]) for g in groups] == [(b"g", 4, 2, b"4-0", 4, 1)]
    assert [(x["name"], x["pending"]) for x in c.xinfo_consumers("s", "g")] == [(b"c1", 0), (b"c2", 0), (b"c3", 0), (b"c4", 2)]
    assert c.xgroup_delconsumer("s", "g", "c4") == 2
    assert c.xpending("s", "g")["pending"] == 0
    with pytest.raises(redis.ResponseError, match="NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP"):
        c.xreadgroup("nog", "c", {"s": ">"})
    assert c.xgroup_destroy("s", "g") == 1
    # A group made with MKSTREAM keeps its empty stream.
    assert c.xgroup_create("e", "g", id="$", mkstream=True) is True
    assert c.xlen("e") == 0 and c.exists("e") == 1


def test_xinfo_stream_full(own_target):
    c = own_target.client()
    c.xadd("s", {"a": 1}, id="1-1")
    c.xadd("s", {"a": 2}, id="1-2")
    c.xadd("s", {"b": "x", "c": "y"}, id="2-0")
    c.xgroup_create("s", "g", id="0")
    c.xreadgroup("g", "c1", {"s": ">"}, count=1)
    full = c.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "2")
    head = full[:14]
    assert head == [b"length", 3, b"radix-tree-keys", 1, b"radix-tree-nodes", 2, b"last-generated-id", b"2-0", b"max-deleted-entry-id", b"0-0", b"entries-added", 3, b"recorded-first-entry-id", b"1-1"]
    assert full[14:16] == [b"entries", [[b"1-1", [b"a", b"1"]], [b"1-2", [b"a", b"2"]]]]
    group = full[17][0]
    assert group[:10] == [b"name", b"g", b"last-delivered-id", b"1-1", b"entries-read", 1, b"lag", 2, b"pel-count", 1]


def test_blocking_reads_are_served_by_writes(own_target):
    c = own_target.client()
    c.xadd("s", {"f": 0}, id="1-0")
    c.xgroup_create("s", "g", id="$")
    results = {}

    def read(name, *args):
        other = own_target.client(socket_timeout=10)
        results[name] = other.execute_command(*args)

    readers = [
        threading.Thread(target=read, args=("xread", "XREAD", "BLOCK", "5000", "STREAMS", "s", "$")),
        threading.Thread(target=read, args=("group", "XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">")),
    ]
    for t in readers:
        t.start()
    deadline = time.monotonic() + 5
    while c.info("clients")["blocked_clients"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    c.xadd("s", {"f": 1}, id="2-0")
    for t in readers:
        t.join()
    assert results["xread"] == [[b"s", [(b"2-0", {b"f": b"1"})]]]
    assert results["group"] == [[b"s", [(b"2-0", {b"f": b"1"})]]]
    assert c.xpending("s", "g")["pending"] == 1
    # A timeout answers a null; inside MULTI the read does not wait.
    assert c.execute_command("XREAD", "BLOCK", "50", "STREAMS", "s", "$") == [], "a null array, as redis-py reads it"
    with c.pipeline(transaction=True) as tx:
        tx.execute_command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
        assert tx.execute() == [[]]


@pytest.mark.parametrize("how", ["delete", "destroy"])
def test_a_blocked_group_read_ends_when_its_key_or_group_goes(own_target, how):
    c = own_target.client()
    c.xgroup_create("s", "g", id="$", mkstream=True)
    result = {}

    def read():
        other = own_target.client(socket_timeout=10)
        try:
            other.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">")
        except redis.ResponseError as e:
            result["error"] = str(e)

    t = threading.Thread(target=read)
    t.start()
    deadline = time.monotonic() + 5
    while c.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    if how == "delete":
        c.delete("s")
    else:
        c.xgroup_destroy("s", "g")
    t.join()
    expected = {
        "delete": "UNBLOCKED the stream key no longer exists",
        "destroy": "NOGROUP the consumer group this client was blocked on no longer exists",
    }[how]
    assert result["error"] == expected


def test_streams_survive_a_reload_and_the_log(spawn):
    t = spawn("--appendonly", "yes")
    c = t.client()
    fill(c, "s", 300, v="value")
    c.xtrim("s", maxlen=150, approximate=True)
    c.xdel("s", "250-0")
    c.xgroup_create("s", "g", id="0")
    c.xreadgroup("g", "c1", {"s": ">"}, count=20)
    c.xreadgroup("g", "c2", {"s": ">"}, count=5, noack=True)
    c.xack("s", "g", "101-0")
    c.xclaim("s", "g", "c3", 0, ["102-0"])
    c.xgroup_create("e", "g2", id="$", mkstream=True)
    c.execute_command("XSETID", "e", "7-0", "ENTRIESADDED", "9", "MAXDELETEDID", "3-0")

    def state():
        full = c.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "0")
        # A consumer's seen time is the time its command ran, replayed too (as in
        # Redis); everything else comes back as it was.
        for group in full[-1]:
            for consumer in group[-1]:
                consumer[3] = None
        return full, c.xinfo_stream("e"), c.xinfo_groups("e")

    before = state()
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert state() == before
    assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert state() == before
    # Reloaded or replayed, the last node holds its deleted entry still: it is full (99
    # entries and 1 deleted), so the next entry starts a node, as in Redis.
    c.xadd("s", {"f": 1}, id="400-0")
    assert c.xinfo_stream("s")["radix-tree-keys"] == before[0][3] + 1


def test_watch_of_a_stream_breaks_on_its_entries_not_on_its_groups(own_target):
    """As Redis 7.0.15: XADD, XDEL, XTRIM change the key for WATCH; reading, acknowledging
    and claiming in a group, and the XGROUP subcommands on an existing stream, do not
    (Redis notifies those without signalling the key)."""
    c, other = own_target.client(), own_target.client()
    fill(c, "s", 5)
    c.xgroup_create("s", "g", id="0")

    def watched_exec(*changes):
        with c.pipeline(transaction=True) as tx:
            tx.watch("s")
            for change in changes:
                change()
            tx.multi()
            tx.xlen("s")
            try:
                return tx.execute() == [c.xlen("s")]
            except redis.WatchError:
                return False

    assert watched_exec(
        lambda: other.xreadgroup("g", "c1", {"s": ">"}, count=2),
        lambda: other.execute_command("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", "0"),
        lambda: other.xack("s", "g", "1-0"),
        lambda: other.xclaim("s", "g", "c3", 0, ["2-0"]),
        lambda: other.xautoclaim("s", "g", "c4", 0, "0-0"),
        lambda: other.xgroup_createconsumer("s", "g", "c5"),
        lambda: other.xgroup_delconsumer("s", "g", "c5"),
        lambda: other.xgroup_setid("s", "g", "$"),
        lambda: other.xgroup_create("s", "g2", id="0"),
        lambda: other.xgroup_destroy("s", "g2"),
    ) is True
    assert watched_exec(lambda: other.xadd("s", {"f": 1}, id="9-0")) is False
    assert watched_exec(lambda: other.xdel("s", "9-0")) is False
    assert watched_exec(lambda: other.xtrim("s", maxlen=2, approximate=False)) is False
