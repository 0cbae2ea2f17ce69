"""HyperLogLog (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) as Redis 7.0.15 answers.

A HyperLogLog is a string in Redis's layout, so the expected values below (a value's
bytes, the estimates) are redis-server 7.0.15's own answers to the same commands. Every
test passes against Redis too (BASALT_TEST_SERVER=/usr/bin/redis-server). The random
command sequences of test_differential.py compare the commands byte for byte with a
live Redis as well, values and their switch from the sparse to the dense form included.
"""

import pytest
import redis


def add_users(c, key, start, stop):
    for lo in range(start, stop, 1000):
        c.pfadd(key, *(f"user:{j}" for j in range(lo, min(stop, lo + 1000))))


def test_a_value_is_redis_s_bytes(own_target):
    c = own_target.client()
    assert c.pfadd("k", "a", "b", "c") == 1
    assert c.pfadd("k", "a") == 0, "no register changed"
    # Header (HYLL, sparse, stale count), then XZERO, VAL, XZERO ... opcodes.
    assert c.get("k").hex() == "48594c4c01000000000000000000008060f38050b1844bfb80425a"
    assert c.pfcount("k") == 3
    # The count is now cached in the header, little-endian, its stale bit cleared.
    assert c.get("k")[8:16] == (3).to_bytes(8, "little")
    assert c.execute_command("PFDEBUG", "DECODE", "k") == b"Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
    assert c.object("encoding", "k") == b"raw"


def test_estimates_are_redis_s_and_the_value_turns_dense(own_target):
    c = own_target.client()
    add_users(c, "h", 0, 1000)
    assert (c.pfcount("h"), c.execute_command("PFDEBUG", "ENCODING", "h")) == (1007, b"sparse")
    add_users(c, "h", 1000, 20000)
    assert (c.pfcount("h"), c.execute_command("PFDEBUG", "ENCODING", "h")) == (19857, b"dense")
    assert c.strlen("h") == 16 + 16384 * 6 // 8
    add_users(c, "h", 20000, 100000)
    assert c.pfcount("h") == 99471
    assert len(c.execute_command("PFDEBUG", "GETREG", "h")) == 16384


def test_union_count_and_merge(own_target):
    c = own_target.client()
    add_users(c, "a", 0, 3000)
    add_users(c, "b", 2000, 6000)
    assert c.pfcount("a", "b", "missing") == 6045
    assert c.pfmerge("m", "a", "b", "missing") is True
    assert c.pfcount("m") == 6045
    assert c.execute_command("PFDEBUG", "ENCODING", "m") == b"dense", "a dense source makes it dense"
    # The destination is a source too; merging nothing into nothing creates an empty one.
    assert c.pfmerge("m", "a") is True and c.pfcount("m") == 6045
    assert c.pfmerge("empty") is True
    assert c.get("empty").hex() == "48594c4c010000000000000000000080" + "7fff", "stale until counted"
    assert c.pfcount("empty") == 0


def test_hll_sparse_max_bytes_sets_where_the_value_turns_dense(own_target):
    c = own_target.client()
    assert c.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
    c.config_set("hll-sparse-max-bytes", "100")
    try:
        c.pfadd("small", *range(20))
        assert c.execute_command("PFDEBUG", "ENCODING", "small") == b"sparse"
        c.pfadd("small", *range(20, 60))
        assert c.execute_command("PFDEBUG", "ENCODING", "small") == b"dense"
    finally:
        c.config_set("hll-sparse-max-bytes", "3000")


def test_wrong_values_get_redis_s_errors_and_the_server_goes_on(own_target):
    c = own_target.client()
    c.set("str", "not an hll")
    c.rpush("list", "x")
    for cmd in (["PFADD", "str", "a"], ["PFCOUNT", "str"], ["PFCOUNT", "str", "list"], ["PFMERGE", "m", "str"]):
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE Key is not a valid HyperLogLog string value.$"):
            c.execute_command(*cmd)
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE Operation against a key holding the wrong kind"):
        c.pfadd("list", "a")
    # Opcodes covering more registers than there are: corrupt, refused, kept as sent.
    corrupt = bytes.fromhex("48594c4c010000000000000000000080") + b"\x7f\xff\xff"
    c.set("bad", corrupt)
    for cmd in (["PFCOUNT", "bad"], ["PFCOUNT", "bad", "bad"], ["PFMERGE", "m2", "bad"], ["PFDEBUG", "TODENSE", "bad"]):
        with pytest.raises(redis.ResponseError, match="^INVALIDOBJ Corrupted HLL object detected$"):
            c.execute_command(*cmd)
    assert c.get("bad") == corrupt
    errors = c.info("errorstats")
    assert errors["errorstat_INVALIDOBJ"]["count"] >= 4
    assert c.ping()


def test_pfdebug_and_pfselftest(own_target):
    c = own_target.client()
    c.pfadd("h", "a")
    regs = c.execute_command("PFDEBUG", "GETREG", "h")
    assert [(i, v) for i, v in enumerate(regs) if v] == [(12711, 2)]
    assert c.execute_command("PFDEBUG", "ENCODING", "h") == b"dense", "GETREG turns the value dense"
    assert c.execute_command("PFDEBUG", "TODENSE", "h") == 0
    with pytest.raises(redis.ResponseError, match="^HLL encoding is not sparse$"):
        c.execute_command("PFDEBUG", "DECODE", "h")
    with pytest.raises(redis.ResponseError, match="^Unknown PFDEBUG subcommand 'nope'$"):
        c.execute_command("PFDEBUG", "nope", "h")
    with pytest.raises(redis.ResponseError, match="^The specified key does not exist$"):
        c.execute_command("PFDEBUG", "nope", "missing")
    assert c.execute_command("PFSELFTEST") == b"OK"


def test_a_recounting_pfcount_breaks_a_watch_as_in_redis(own_target):
    c, other = own_target.client(), own_target.client()
    c.pfadd("h", "a", "b")
    with c.pipeline() as p:
        p.watch("h")
        assert other.pfcount("h") == 2  # caches the count: the value changed
        p.multi()
        p.get("h")
        with pytest.raises(redis.WatchError):
            p.execute()
    with c.pipeline() as p:
        p.watch("h")
        assert other.pfcount("h") == 2  # cached already: nothing changes
        p.multi()
        p.pfcount("h")
        assert p.execute() == [2]


def test_values_survive_the_log(spawn):
    c = spawn("--appendonly", "yes").client()
    add_users(c, "big", 0, 5000)
    c.pfadd("small", "x", "y")
    c.pfmerge("merged", "big", "small")
    keys = ("big", "small", "merged")
    counts = {k: c.pfcount(k) for k in keys}
    # A PFCOUNT that caches its count is logged too: the replay holds the same bytes.
    values = {k: c.get(k) for k in keys}
    assert all(v[15] & 0x80 == 0 for v in values.values()), "counts cached"
    assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert {k: c.get(k) for k in keys} == values
    assert {k: c.pfcount(k) for k in keys} == counts
