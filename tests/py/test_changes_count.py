"""`rdb_changes_since_last_save` counts what Redis 7.0 counts (its `server.dirty`): an
MSET's keys, an LPUSH's elements, a DEL's deleted keys, a ZADD's added and updated
members, a FLUSHALL's keys ... and nothing for a write that changed nothing (a DEL of a
missing key, an SADD of members already there). The save rules (`save <seconds>
<changes>`) compare that count, so a server that counted one per command saved far
later under multi-key writes than Redis does.

The expected counts were read from Redis 7.0.15; every test passes against it too
(BASALT_TEST_SERVER=redis-server).
"""

import os
import threading
import time

import pytest
import redis

from conftest import Server

# (setup, command, the change count Redis 7.0.15 adds)
CASES = [
    ([], "SET k v", 1),
    ([], "MSET a 1 b 2 c 3", 3),
    (["SET a 1"], "MSETNX a 1 b 2", 0),
    (["MSET a 1 b 2 c 3"], "DEL a b c d", 3),
    ([], "DEL missing", 0),
    ([], "RPUSH l a b c", 3),
    ([], "LPUSHX missing a b", 0),
    (["RPUSH l a b c d"], "LPOP l 3", 3),
    ([], "LPOP missing", 0),
    (["RPUSH l a a b a"], "LREM l 0 a", 3),
    (["RPUSH l a b c d"], "LTRIM l 1 2", 2),
    (["RPUSH l a"], "LINSERT l BEFORE z y", 0),
    ([], "SADD s a b c", 3),
    (["SADD s a"], "SADD s a", 0),
    (["SADD s a b c"], "SPOP s 2", 2),
    (["SADD s a b c"], "SMOVE s t a", 2),
    (["SADD s a", "SADD t a"], "SMOVE s t a", 1),
    ([], "HSET h a 1 b 2 c 3", 3),
    (["HSET h a 1"], "HSET h a 1 b 2", 2),
    (["HSET h a 1"], "HSETNX h a 2", 0),
    (["HSET h a 1 b 2 c 3"], "HDEL h a b z", 2),
    (["ZADD z 1 a"], "ZADD z 5 a 2 b", 2),
    (["ZADD z 1 a"], "ZADD z 1 a", 0),
    (["ZADD z 1 a 2 b 3 c"], "ZREMRANGEBYLEX z - +", 3),
    (["ZADD z 1 a 2 b 3 c"], "ZMPOP 1 z MIN COUNT 2", 2),
    (["SADD s a"], "SINTERSTORE d s missing", 0),
    (["SET k v", "SET k2 v"], "RENAMENX k k2", 0),
    ([], "GETDEL missing", 0),
    ([], "BITFIELD k SET u8 0 5 SET u8 8 6", 2),
    (["MSET a 1 b 2 c 3"], "FLUSHALL", 3),
]


@pytest.fixture(scope="module")
def server():
    srv = Server()
    yield redis.Redis(port=srv.port, socket_timeout=10)
    srv.stop()


def changes(c):
    return c.info("persistence")["rdb_changes_since_last_save"]


@pytest.mark.parametrize("setup,command,expected", CASES, ids=[c[1] for c in CASES])
def test_a_write_counts_what_it_changed(server, setup, command, expected):
    server.flushall()
    for s in setup:
        server.execute_command(*s.split())
    before = changes(server)
    server.execute_command(*command.split())
    assert changes(server) - before == expected


def test_a_transaction_counts_its_commands_changes(server):
    server.flushall()
    before = changes(server)
    pipe = server.pipeline(transaction=True)
    pipe.mset({"a": 1, "b": 2})
    pipe.incr("c")
    pipe.delete("missing")
    pipe.execute()
    assert changes(server) - before == 3


def test_blocking_pops_count_as_redis_counts_them(server):
    server.flushall()
    server.rpush("q", "a", "b", "c")
    before = changes(server)
    server.execute_command("BLMPOP", 0, 1, "q", "LEFT", "COUNT", 2)
    assert changes(server) - before == 2, "served at once: its pops"
    before = changes(server)
    server.blpop("empty", 0.1)
    assert changes(server) - before == 0, "timed out: nothing"
    # Served later: Redis 7.0 counts BZPOPMIN's pop (and BLMPOP's, BZMPOP's), not
    # BLPOP's (nor BRPOP's, BLMOVE's, BRPOPLPUSH's).
    for block, push, expected in ((("BLPOP", "l", 0), ("RPUSH", "l", "a"), 1),
                                  (("BZPOPMIN", "z", 0), ("ZADD", "z", 1, "a", 2, "b"), 3)):
        waiter = redis.Redis(port=server.connection_pool.connection_kwargs["port"], socket_timeout=10)
        t = threading.Thread(target=lambda: waiter.execute_command(*block))
        t.start()
        deadline = time.monotonic() + 10
        while server.info("clients")["blocked_clients"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        before = changes(server)
        server.execute_command(*push)
        t.join(timeout=10)
        assert changes(server) - before == expected, block[0]


def test_a_save_rule_fires_on_the_keys_of_one_mset():
    # `save 1 5`: five changes, at least a second after the last save. One MSET of five
    # keys is five changes (it was one).
    srv = Server(extra=("--save", "1 5"))
    try:
        c = redis.Redis(port=srv.port, socket_timeout=10)
        last = c.lastsave()
        time.sleep(1.1)
        c.mset({f"k{i}": i for i in range(5)})
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and c.lastsave() == last:
            time.sleep(0.1)
        assert c.lastsave() != last, "no save within 10 s of five changes under 'save 1 5'"
        assert changes(c) == 0
        assert os.path.exists(os.path.join(srv.dir.name, "dump.rdb"))
    finally:
        srv.stop()
