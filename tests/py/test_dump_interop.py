"""DUMP / RESTORE between Basalt and Redis 7.0.15: every type in every encoding is
dumped by one server and restored into the other, both ways, and the restored key must
hold the same contents, the same encoding (each server building it with its own
thresholds) and no TTL. The payloads need not be the same bytes (LZF matches and hash
table order differ), only mean the same value.

Needs redis-server (see conftest.pair_of_servers); skipped without one.
"""

import redis

from test_replication import stream_contents

BIG = 700  # past every listpack / intset threshold


def fill(c):
    c.set("str", "hello")
    c.set("int", "-12345")
    c.set("bigint", "9223372036854775807")
    c.set("long", "abc" * 40)  # LZF-compressed in a payload
    c.set("binary", bytes(range(256)))
    c.rpush("list", "a", "1", "x" * 70)
    c.rpush("biglist", *[f"item-{i}" for i in range(BIG * 10)])
    c.rpush("hugeitems", *["y" * 9000, "z", "w" * 20000])  # plain quicklist nodes
    c.sadd("intset", 3, -1, 2**40)
    c.sadd("set", "a", "b", "c")
    c.sadd("bigintset", *range(BIG))
    c.sadd("bigset", *[f"member-{i}" for i in range(BIG)])
    c.hset("hash", mapping={"f": "v", "n": "1"})
    c.hset("bighash", mapping={f"f{i}": f"value {i}" for i in range(BIG)})
    c.hset("longvalue", mapping={"f": "v" * 100})
    c.zadd("zset", {"a": 1.5, "b": float("-inf"), "c": 3, "d": -0.0})
    c.zadd("bigzset", {f"m{i}": i / 3 for i in range(BIG)})
    c.zadd("longmember", {"m" * 100: 1})
    # Streams: nodes cut by entries and by bytes, deleted and trimmed entries, groups
    # with pending entries and consumers, an empty stream that keeps its group.
    for i in range(1, 301):
        c.xadd("stream", {"f": i, "g": "v" * (i % 7)} if i % 5 else {"other": "x" * 900}, id=f"{i}-{i % 3}")
    c.xdel("stream", "7-1", "100-1")
    c.xtrim("stream", maxlen=250, approximate=False)
    c.xgroup_create("stream", "g1", id="0")
    c.xgroup_create("stream", "g2", id="$")
    c.xreadgroup("g1", "alice", {"stream": ">"}, count=30)
    c.xreadgroup("g1", "bob", {"stream": ">"}, count=5, noack=True)
    c.xclaim("stream", "g1", "carol", 0, ["60-0", "61-1"])
    c.xgroup_create("emptystream", "g", id="$", mkstream=True)


def contents(c, key):
    t = c.type(key).decode()
    if t == "string":
        return c.get(key)
    if t == "list":
        return c.lrange(key, 0, -1)
    if t == "set":
        return sorted(c.smembers(key))
    if t == "hash":
        return sorted(c.hgetall(key).items())
    if t == "zset":
        return c.zrange(key, 0, -1, withscores=True)
    if t == "stream":
        return stream_contents(c, key)
    raise AssertionError(f"{key}: type {t}")


def test_dump_of_each_server_restores_in_the_other(pair_of_servers):
    basalt_srv, redis_srv = pair_of_servers
    basalt = redis.Redis(port=basalt_srv.port)
    real = redis.Redis(port=redis_srv.port)
    fill(basalt)
    fill(real)
    keys = sorted(k.decode() for k in real.keys("*"))
    assert sorted(k.decode() for k in basalt.keys("*")) == keys
    for source, target, name in ((real, basalt, "redis -> basalt"), (basalt, real, "basalt -> redis")):
        for key in keys:
            payload = source.dump(key)
            assert target.restore(f"copy:{key}", 0, payload), f"{name}: {key}"
            assert contents(target, f"copy:{key}") == contents(source, key), f"{name}: {key}"
            assert (target.object("encoding", f"copy:{key}") == source.object("encoding", key)), f"{name}: {key}"
            assert target.ttl(f"copy:{key}") == -1
        # With a TTL and REPLACE over the first copy.
        assert target.restore("copy:str", 5000, source.dump("list"), replace=True)
        assert target.lrange("copy:str", 0, -1) == source.lrange("list", 0, -1)
        assert 0 < target.pttl("copy:str") <= 5000
        target.delete(*[f"copy:{k}" for k in keys])


def test_migrate_moves_every_type_between_the_two_servers(pair_of_servers):
    """MIGRATE of every key of `fill`, Basalt -> Redis into database 2, then Redis ->
    Basalt into database 3: each arrives with its contents and encoding, the source is
    left empty, and a key with a TTL keeps it."""
    basalt_srv, redis_srv = pair_of_servers
    basalt = redis.Redis(port=basalt_srv.port)
    real = redis.Redis(port=redis_srv.port)
    fill(basalt)
    basalt.set("timed", "t", px=60000)
    keys = sorted(k.decode() for k in basalt.keys("*"))
    expected = {k: (contents(basalt, k), basalt.object("encoding", k)) for k in keys}
    hops = ((basalt, redis_srv.port, 2, "basalt -> redis"), (redis.Redis(port=redis_srv.port, db=2), basalt_srv.port, 3, "redis -> basalt"))
    for source, port, db, name in hops:
        assert source.execute_command("MIGRATE", "127.0.0.1", port, "", db, 10000, "KEYS", *keys) == b"OK", name
        assert source.dbsize() == 0, name
        target = redis.Redis(port=port, db=db)
        for key in keys:
            assert (contents(target, key), target.object("encoding", key)) == expected[key], f"{name}: {key}"
        assert 50000 < target.pttl("timed") <= 60000, name
