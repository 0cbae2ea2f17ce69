"""`redis-cli --rdb` against Basalt (issue 24's first acceptance item): the backup it takes
(REPLCONF rdb-only 1, then SYNC) is an RDB that Redis 7.0.15 loads with the same keys,
values and TTLs. Passes against Redis too.
"""

import os
import shutil
import subprocess
import tempfile

import pytest
import redis

from conftest import Server


def fill(c):
    c.set("s", "hello")
    c.set("n", 12345)
    c.set("ttl", "v", ex=1000)
    c.rpush("l", "a", "b", "c")
    c.hset("h", mapping={"f1": "v1", "f2": "v2"})
    c.sadd("set", "x", "y")
    c.zadd("z", {"m1": 1.5, "m2": 2})
    c.select(3)
    c.set("other-db", "here")
    c.select(0)


def snapshot(c):
    """Every key of databases 0 and 3: type, value and whether it has a TTL."""
    out = {}
    for db in (0, 3):
        c.select(db)
        for k in sorted(c.keys("*")):
            t = c.type(k)
            value = {
                b"string": lambda: c.get(k),
                b"list": lambda: c.lrange(k, 0, -1),
                b"hash": lambda: c.hgetall(k),
                b"set": lambda: sorted(c.smembers(k)),
                b"zset": lambda: c.zrange(k, 0, -1, withscores=True),
            }[t]()
            out[(db, k)] = (t, value, c.ttl(k) > 0)
    c.select(0)
    return out


def test_redis_cli_rdb_backup_loads_in_redis(own_target):
    redis_bin = os.environ.get("REDIS_SERVER_BIN", "").strip() or shutil.which("redis-server")
    cli = shutil.which("redis-cli")
    if not redis_bin or not cli:
        pytest.skip("needs redis-server and redis-cli")
    c = redis.Redis(host=own_target.host, port=own_target.port)
    c.flushall()
    fill(c)
    want = snapshot(c)
    with tempfile.TemporaryDirectory(prefix="rdb-backup-") as d:
        path = os.path.join(d, "backup.rdb")
        r = subprocess.run([cli, "-h", own_target.host, "-p", str(own_target.port), "--rdb", path],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Transfer finished with success" in r.stdout + r.stderr
        assert c.info("stats")["sync_full"] >= 1
        loaded = Server(extra=("--dir", d, "--dbfilename", "backup.rdb"), binary=redis_bin)
        try:
            got = snapshot(redis.Redis(port=loaded.port))
        finally:
            loaded.stop()
    assert got == want
    c.flushall()
