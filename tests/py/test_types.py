"""redis-py smoke tests for hashes, lists, sets, sorted sets, transactions
and pub/sub, run against Basalt by default and against another server (e.g. a
real Redis 7.0.15) when BASALT_TEST_SERVER names it:

    python3 -m pytest tests/py -q                                          # Basalt
    BASALT_TEST_SERVER=/usr/bin/redis-server python3 -m pytest tests/py -q  # Redis
"""

import os
import threading
import time

import pytest
import redis



def _wait_for(pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


# --- hashes -----------------------------------------------------------------

def test_hash_set_get_getall(rd, prefix):
    h = prefix + "h"
    assert rd.hset(h, mapping={"a": "1", "b": "2"}) == 2
    assert rd.hset(h, "a", "10") == 0
    assert not rd.hsetnx(h, "a", "x")
    assert rd.hsetnx(h, "c", "3")
    assert rd.hget(h, "a") == "10"
    assert rd.hget(h, "zz") is None
    assert rd.hmget(h, ["a", "zz", "c"]) == ["10", None, "3"]
    assert rd.hgetall(h) == {"a": "10", "b": "2", "c": "3"}
    assert rd.hkeys(h) == ["a", "b", "c"]          # small hash: insertion order
    assert rd.hvals(h) == ["10", "2", "3"]
    assert rd.hlen(h) == 3
    assert rd.hexists(h, "b") is True
    assert rd.hstrlen(h, "a") == 2
    assert rd.hdel(h, "a", "b", "c", "zz") == 3
    assert rd.exists(h) == 0


def test_hash_increments_and_errors(rd, prefix):
    h = prefix + "h"
    assert rd.hincrby(h, "n", 5) == 5
    assert rd.hincrby(h, "n", -7) == -2
    assert rd.hincrbyfloat(h, "f", 1.5) == 1.5
    assert rd.hincrbyfloat(h, "f", 0.25) == 1.75
    rd.hset(h, "s", "abc")
    with pytest.raises(redis.ResponseError, match="hash value is not an integer"):
        rd.hincrby(h, "s", 1)
    with pytest.raises(redis.ResponseError, match="hash value is not a float"):
        rd.hincrbyfloat(h, "s", 1)
    rd.hset(h, "max", str(2**63 - 1))
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        rd.hincrby(h, "max", 1)
    rd.delete(h)


def test_hash_scan_and_random(rd, prefix):
    h = prefix + "h"
    rd.hset(h, mapping={f"f{i}": str(i) for i in range(300)})
    seen = dict(rd.hscan_iter(h, count=20))
    assert len(seen) == 300 and seen["f42"] == "42"
    assert sorted(k for k, _ in rd.hscan_iter(h, match="f1?")) == [f"f{i}" for i in range(10, 20)]
    assert rd.hrandfield(h) in seen
    fields = rd.hrandfield(h, 5)
    assert len(fields) == 5 and len(set(fields)) == 5
    assert len(rd.hrandfield(h, -400)) == 400
    pairs = rd.hrandfield(h, 3, withvalues=True)
    assert len(pairs) == 6
    for f, v in zip(pairs[::2], pairs[1::2]):
        assert seen[f] == v
    rd.delete(h)


# --- lists ------------------------------------------------------------------

def test_list_push_range_pop(rd, prefix):
    k = prefix + "l"
    assert rd.rpush(k, "a", "b", "c") == 3
    assert rd.lpush(k, "z") == 4
    assert rd.lrange(k, 0, -1) == ["z", "a", "b", "c"]
    assert rd.lrange(k, -2, 100) == ["b", "c"]
    assert rd.llen(k) == 4
    assert rd.lindex(k, -1) == "c"
    assert rd.lset(k, 0, "Z") is True
    assert rd.lpop(k) == "Z"
    assert rd.rpop(k, 2) == ["c", "b"]
    assert rd.lpop(prefix + "missing", 2) is None
    assert rd.lpushx(prefix + "missing", "x") == 0
    assert rd.rpop(k) == "a"
    assert rd.exists(k) == 0
    with pytest.raises(redis.ResponseError, match="no such key"):
        rd.lset(k, 0, "x")


def test_list_search_and_edit(rd, prefix):
    k = prefix + "l"
    rd.rpush(k, "a", "b", "c", "b", "a")
    assert rd.lpos(k, "b") == 1
    assert rd.lpos(k, "b", rank=-1) == 3
    assert rd.lpos(k, "a", count=0) == [0, 4]
    assert rd.lpos(k, "zz") is None
    assert rd.linsert(k, "BEFORE", "c", "X") == 6
    assert rd.linsert(k, "AFTER", "zz", "X") == -1
    assert rd.lrem(k, -1, "a") == 1
    assert rd.lrange(k, 0, -1) == ["a", "b", "X", "c", "b"]
    assert rd.ltrim(k, 1, -2) is True
    assert rd.lrange(k, 0, -1) == ["b", "X", "c"]
    rd.delete(k)


def test_list_move_and_mpop(rd, prefix):
    src, dst = prefix + "{x}src", prefix + "{x}dst"
    rd.rpush(src, "1", "2", "3")
    assert rd.lmove(src, src, "LEFT", "RIGHT") == "1"
    assert rd.lrange(src, 0, -1) == ["2", "3", "1"]
    assert rd.rpoplpush(src, dst) == "1"
    assert rd.lmove(src, dst, "LEFT", "LEFT") == "2"
    assert rd.lrange(dst, 0, -1) == ["2", "1"]
    assert rd.lmpop(2, prefix + "{x}missing", dst, direction="RIGHT", count=5) == [dst, ["1", "2"]]
    assert rd.lmpop(1, dst, direction="LEFT") is None
    rd.delete(src, dst)


def test_blocking_pops(shared_target, prefix):
    rd = shared_target.client(decode_responses=True)
    k = prefix + "q"
    start = time.monotonic()
    assert rd.blpop([k], timeout=0.1) is None
    assert time.monotonic() - start >= 0.09
    rd.rpush(k, "now")
    assert rd.blpop([k], timeout=1) == (k, "now")  # redis-py returns a tuple here

    def push_later():
        time.sleep(0.2)
        shared_target.client().rpush(k, "later")

    th = threading.Thread(target=push_later)
    th.start()
    assert rd.brpop([k], timeout=5) == (k, "later")
    th.join(timeout=5)
    rd.close()


# --- sets -------------------------------------------------------------------

def test_set_basics_and_algebra(rd, prefix):
    a, b = prefix + "{x}a", prefix + "{x}b"
    assert rd.sadd(a, "1", "2", "3", "x") == 4
    assert rd.sadd(b, "2", "3", "4") == 3
    assert rd.smembers(a) == {"1", "2", "3", "x"}
    assert rd.sismember(a, "x")
    assert rd.smismember(a, ["1", "zz"]) == [1, 0]
    assert rd.scard(a) == 4
    assert rd.sinter(a, b) == {"2", "3"}
    assert rd.sintercard(2, [a, b], limit=1) == 1
    assert rd.sunion(a, b) == {"1", "2", "3", "4", "x"}
    assert rd.sdiff(a, b) == {"1", "x"}
    assert rd.sinterstore(prefix + "{x}d", [a, b]) == 2
    assert rd.smove(a, b, "x") is True
    assert rd.srem(a, "1", "2", "3") == 3
    assert rd.exists(a) == 0
    assert rd.sdiffstore(prefix + "{x}d", [a, b]) == 0
    assert rd.exists(prefix + "{x}d") == 0
    rd.delete(b)


def test_set_random_and_scan(rd, prefix):
    k = prefix + "s"
    members = {f"m{i}" for i in range(200)}
    rd.sadd(k, *members)
    assert set(rd.sscan_iter(k, count=15)) == members
    got = rd.srandmember(k, 10)
    assert len(got) == 10 and len(set(got)) == 10 and set(got) <= members
    assert len(rd.srandmember(k, -300)) == 300
    popped = rd.spop(k, 50)
    assert len(popped) == 50 and set(popped) <= members
    assert rd.scard(k) == 150
    assert rd.spop(prefix + "missing") is None
    rd.delete(k)


# --- sorted sets ------------------------------------------------------------

def test_zset_add_score_range(rd, prefix):
    z = prefix + "z"
    assert rd.zadd(z, {"a": 1, "b": 2, "c": 3.5}) == 3
    assert rd.zscore(z, "c") == 3.5
    assert rd.zscore(z, "zz") is None
    assert rd.zmscore(z, ["a", "zz"]) == [1.0, None]
    assert rd.zrange(z, 0, -1) == ["a", "b", "c"]
    assert rd.zrange(z, 0, -1, withscores=True) == [("a", 1.0), ("b", 2.0), ("c", 3.5)]
    assert rd.zrevrange(z, 0, 0, withscores=True) == [("c", 3.5)]
    assert rd.zrank(z, "b") == 1
    assert rd.zrevrank(z, "b") == 1
    assert rd.zcard(z) == 3
    assert rd.zcount(z, "(1", "+inf") == 2
    assert rd.zincrby(z, 0.1, "a") == pytest.approx(1.1)
    # The server prints %.17g: 1.1 reads back as "1.1000000000000001".
    assert rd.zrange(z, 0, 0, withscores=True, score_cast_func=str) == [("a", "1.1000000000000001")]
    rd.delete(z)


def test_zset_add_options(rd, prefix):
    z = prefix + "z"
    rd.zadd(z, {"a": 1, "b": 2})
    assert rd.zadd(z, {"a": 5, "c": 3}, nx=True) == 1
    assert rd.zadd(z, {"a": 5, "d": 4}, xx=True, ch=True) == 1
    assert rd.zadd(z, {"a": 1, "b": 10}, gt=True, ch=True) == 1
    assert rd.zadd(z, {"a": 2}, incr=True) == 7.0
    assert rd.zadd(z, {"a": 2}, incr=True, nx=True) is None
    with pytest.raises(redis.ResponseError, match="not compatible"):
        rd.execute_command("ZADD", z, "NX", "XX", 1, "a")
    assert rd.zadd(z, {"inf": float("inf")}) == 1
    with pytest.raises(redis.ResponseError, match="not a number"):
        rd.zincrby(z, float("-inf"), "inf")
    rd.delete(z)


def test_zset_by_score_and_lex(rd, prefix):
    z, lex = prefix + "z", prefix + "lex"
    rd.zadd(z, {m: i for i, m in enumerate("abcde", start=1)})
    assert rd.zrangebyscore(z, "(1", 4) == ["b", "c", "d"]
    assert rd.zrangebyscore(z, "-inf", "+inf", start=1, num=2) == ["b", "c"]
    assert rd.zrevrangebyscore(z, 4, 2) == ["d", "c", "b"]
    assert rd.zrange(z, "+inf", "(3", desc=True, byscore=True) == ["e", "d"]
    rd.zadd(lex, {m: 0 for m in "abcde"})
    assert rd.zrangebylex(lex, "[b", "(d") == ["b", "c"]
    assert rd.zrevrangebylex(lex, "+", "[d") == ["e", "d"]
    assert rd.zlexcount(lex, "-", "+") == 5
    assert rd.zremrangebylex(lex, "-", "(c") == 2
    assert rd.zremrangebyscore(z, 4, "+inf") == 2
    assert rd.zremrangebyrank(z, 0, 0) == 1
    assert rd.zrange(z, 0, -1) == ["b", "c"]
    rd.delete(z, lex)


def test_zset_store_commands(rd, prefix):
    a, b, d = prefix + "{x}a", prefix + "{x}b", prefix + "{x}d"
    rd.zadd(a, {"x": 1, "y": 2})
    rd.zadd(b, {"y": 10, "z": 20})
    assert rd.zunionstore(d, {a: 2, b: 1}) == 3
    assert rd.zrange(d, 0, -1, withscores=True) == [("x", 2.0), ("y", 14.0), ("z", 20.0)]
    assert rd.zinterstore(d, [a, b], aggregate="MAX") == 1
    assert rd.zrange(d, 0, -1, withscores=True) == [("y", 10.0)]
    assert rd.zdiff([a, b]) == ["x"]
    assert rd.zinter([a, b], withscores=True) == [("y", 12.0)]
    assert rd.zunion([a, b]) == ["x", "y", "z"]
    assert rd.zintercard(2, [a, b]) == 1
    assert rd.zdiffstore(d, [a, a]) == 0
    assert rd.exists(d) == 0
    rd.delete(a, b)


def test_zset_pops(rd, prefix):
    z = prefix + "z"
    rd.zadd(z, {"a": 1, "b": 2, "c": 3, "d": 4})
    assert rd.zpopmin(z) == [("a", 1.0)]
    assert rd.zpopmax(z, 2) == [("d", 4.0), ("c", 3.0)]
    assert rd.bzpopmin([z], timeout=1) == (z, "b", 2.0)
    assert rd.bzpopmax([z], timeout=0.1) is None
    rd.zadd(z, {"m": 5})
    assert rd.zmpop(1, [z], min=True) == [z, [["m", "5"]]]
    assert rd.exists(z) == 0


def test_resp3_client_types(shared_target, prefix):
    c = shared_target.client(protocol=3, decode_responses=True)
    h, z, s = prefix + "h", prefix + "z", prefix + "s"
    c.hset(h, mapping={"a": "1"})
    assert c.hgetall(h) == {"a": "1"}
    c.zadd(z, {"m": 1.5})
    assert c.zscore(z, "m") == 1.5
    assert c.zrange(z, 0, -1, withscores=True) == [["m", 1.5]]
    c.sadd(s, "x")
    assert c.smembers(s) == {"x"}
    c.delete(h, z, s)
    c.close()


def test_wrongtype(rd, prefix):
    k = prefix + "str"
    rd.set(k, "v")
    for call in (lambda: rd.hget(k, "a"), lambda: rd.lpush(k, "a"),
                 lambda: rd.sadd(k, "a"), lambda: rd.zadd(k, {"a": 1})):
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            call()
    assert rd.get(k) == "v"
    rd.delete(k)


# --- transactions -----------------------------------------------------------

def test_transaction_pipeline(rd, prefix):
    k, l = prefix + "{x}k", prefix + "{x}l"
    with rd.pipeline(transaction=True) as pipe:
        pipe.set(k, 1).incr(k).rpush(l, "a", "b").lrange(l, 0, -1).incr(l)
        res = pipe.execute(raise_on_error=False)
    assert res[:4] == [True, 2, 2, ["a", "b"]]
    assert isinstance(res[4], redis.ResponseError) and "WRONGTYPE" in str(res[4])
    with pytest.raises(redis.ResponseError):
        with rd.pipeline(transaction=True) as pipe:
            pipe.set(k, 5).execute_command("NOSUCHCMD").execute()
    assert rd.get(k) == "2"  # the aborted transaction changed nothing
    rd.delete(k, l)


def test_watch_conflict(shared_target, prefix):
    rd = shared_target.client(decode_responses=True)
    other = shared_target.client(decode_responses=True)
    k = prefix + "k"
    rd.set(k, "1")
    with rd.pipeline() as pipe:
        pipe.watch(k)
        assert pipe.get(k) == "1"
        other.set(k, "2")
        pipe.multi()
        pipe.set(k, "3")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert rd.get(k) == "2"

    def bump(pipe):
        v = int(pipe.get(k))
        pipe.multi()
        pipe.set(k, v + 1)

    assert rd.transaction(bump, k) == [True]
    assert rd.get(k) == "3"
    rd.delete(k)
    rd.close()
    other.close()


# --- pub/sub ----------------------------------------------------------------

def test_pubsub_channels(shared_target, prefix):
    sub = shared_target.client(decode_responses=True)
    pub = shared_target.client(decode_responses=True)
    ch = prefix + "ch"
    p = sub.pubsub(ignore_subscribe_messages=True)
    p.subscribe(ch)
    assert _wait_for(lambda: pub.pubsub_numsub(ch) == [(ch, 1)])
    assert pub.publish(ch, "hello") == 1
    msg = None
    deadline = time.monotonic() + 5
    while msg is None and time.monotonic() < deadline:
        msg = p.get_message(timeout=0.5)
    assert msg == {"type": "message", "pattern": None, "channel": ch, "data": "hello"}
    p.unsubscribe(ch)
    assert _wait_for(lambda: pub.publish(ch, "nobody") == 0)
    p.close()
    sub.close()
    pub.close()


def test_pubsub_patterns(shared_target, prefix):
    sub = shared_target.client(decode_responses=True)
    pub = shared_target.client(decode_responses=True)
    p = sub.pubsub()
    p.psubscribe(prefix + "news.*")
    first = p.get_message(timeout=2)
    assert first["type"] == "psubscribe" and first["data"] == 1
    assert _wait_for(lambda: pub.publish(prefix + "news.tech", "n1") == 1)
    msg = None
    deadline = time.monotonic() + 5
    while msg is None and time.monotonic() < deadline:
        msg = p.get_message(timeout=0.5)
    assert msg == {"type": "pmessage", "pattern": prefix + "news.*",
                   "channel": prefix + "news.tech", "data": "n1"}
    assert pub.publish(prefix + "sport", "x") == 0
    p.close()
    sub.close()
    pub.close()
