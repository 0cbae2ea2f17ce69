"""Replication with real Redis on the other side (issue 24): Redis 7.0.15 as a replica
of the server under test. After writes of every type (before, during and after the
sync), expiries, transactions, served blocking pops, FLUSHALL, the replica holds the
same data; WAIT counts the replicas that acknowledged a write; a broken link resumes with a partial resync (`+CONTINUE`); ROLE, INFO
replication, CLIENT LIST and CLIENT KILL TYPE see the replica. Each test passes
against Redis as the master too (BASALT_TEST_SERVER=redis-server).
"""

import os
import shutil
import signal
import socket
import threading
import time

import pytest
import redis

from conftest import Server
from relay import Relay

DBS = (0, 3, 5)

# Full syncs at once: the default disk-less sync waits 5 s for more replicas to join.
FAST = ("--repl-diskless-sync-delay", "0")


def Node(extra=(), **kw):
    """A server of the group (the one under test, or Redis with `binary`), its full syncs
    not delayed."""
    return Server(extra=(*FAST, *extra), **kw)


def redis_binary():
    path = os.environ.get("REDIS_SERVER_BIN", "").strip() or shutil.which("redis-server")
    if not path:
        pytest.skip("needs redis-server (set REDIS_SERVER_BIN or install redis-server)")
    return path


def contents(c):
    """Every key of the databases used: type, value and TTL in whole minutes."""
    out = {}
    for db in DBS:
        c.execute_command("SELECT", db)
        for k in sorted(c.keys("*")):
            t = c.type(k)
            value = {
                b"string": lambda: c.get(k),
                b"list": lambda: c.lrange(k, 0, -1),
                b"hash": lambda: sorted(c.hgetall(k).items()),
                b"set": lambda: sorted(c.smembers(k)),
                b"zset": lambda: c.zrange(k, 0, -1, withscores=True),
                b"stream": lambda: stream_contents(c, k),
            }[t]()
            ttl = c.pttl(k)
            out[(db, k)] = (t, value, -1 if ttl < 0 else round(ttl / 60000))
    c.execute_command("SELECT", 0)
    return out


def stream_contents(c, k):
    """A stream's entries, IDs and counters, its groups (read counters and lags
    included), their pending entries (owner and delivery count: a delivery's time is
    propagated, a consumer's seen time is the replica's own) and consumers."""
    info = c.xinfo_stream(k)
    head = [info[f] for f in ("length", "last-generated-id", "max-deleted-entry-id", "entries-added", "recorded-first-entry-id")]
    groups = c.xinfo_groups(k)
    pending = [[(p["message_id"], p["consumer"], p["times_delivered"]) for p in c.xpending_range(k, g["name"], "-", "+", 10000)] for g in groups]
    consumers = [[(x["name"], x["pending"]) for x in c.xinfo_consumers(k, g["name"])] for g in groups]
    return head, c.xrange(k), groups, pending, consumers


def wait_until(what, check, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def caught_up(master, replica):
    """The replica's link is up and it applied everything the master fed so far."""
    m = master.info("replication")
    r = replica.info("replication")
    return r.get("master_link_status") == "up" and r.get("slave_repl_offset") == m["master_repl_offset"]


def start_replica(master_port):
    return Node(extra=("--replicaof", "127.0.0.1", str(master_port)), binary=redis_binary())


def writes_of_every_type(c, tag):
    """Commands whose effect the master propagates in a form of its own (relative
    times, random pops, float increments, stores) as well as plain ones."""
    p = f"{tag}:"
    c.set(p + "s", "v")
    c.incr(p + "n")
    c.incrbyfloat(p + "f", 1.1)
    c.append(p + "s", "-more")
    c.setrange(p + "s", 1, "X")
    c.set(p + "ex", "v", ex=600)
    c.setex(p + "setex", 900, "v")
    c.set(p + "getex", "v")
    c.getex(p + "getex", px=1200000)
    c.set(p + "persist", "v", ex=100)
    c.persist(p + "persist")
    c.set(p + "gone", "v", px=1)  # expires on the master: a DEL in the stream
    c.setbit(p + "bits", 7, 1)
    # HyperLogLogs: a sparse one, a dense one, a merge; a PFCOUNT caches the count in
    # the value, which the master propagates (the replica's bytes must match).
    c.pfadd(p + "hll", "a", "b", "c")
    c.pfadd(p + "hllbig", *range(3000))
    c.pfmerge(p + "hllmerged", p + "hll", p + "hllbig")
    c.pfcount(p + "hll")
    c.pfcount(p + "hllmerged")
    # Positions: GEOADD is propagated as the ZADD of their scores; the stores as sent.
    c.geoadd(p + "geo", [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"])
    c.execute_command("GEOSEARCHSTORE", p + "near", p + "geo", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "STOREDIST")
    c.execute_command("GEORADIUS", p + "geo", 15, 37, 100, "km", "STORE", p + "near2")
    c.rpush(p + "l", *[f"e{i}" for i in range(10)])
    c.lpush(p + "l", "head")
    c.lmove(p + "l", p + "l2", "LEFT", "RIGHT")
    c.rpoplpush(p + "l", p + "l2")
    c.ltrim(p + "l", 1, 5)
    c.linsert(p + "l", "BEFORE", "e3", "ins")
    c.hset(p + "h", mapping={f"f{i}": i for i in range(5)})
    c.hincrbyfloat(p + "h", "f1", 0.5)
    c.hdel(p + "h", "f2")
    c.sadd(p + "set", *range(20))
    c.spop(p + "set", 3)
    c.smove(p + "set", p + "set2", 19)
    c.sinterstore(p + "inter", [p + "set", p + "set"])
    c.zadd(p + "z", {f"m{i}": i for i in range(10)})
    c.zincrby(p + "z", 2.5, "m1")
    c.zpopmin(p + "z")
    c.zrangestore(p + "zr", p + "z", 0, 2)
    c.sort(p + "l2", alpha=True, store=p + "sorted")
    c.copy(p + "s", p + "copy")
    c.rename(p + "copy", p + "renamed")
    c.delete(p + "n")
    c.unlink(p + "bits")
    with c.pipeline(transaction=True) as tx:
        tx.incr(p + "tx")
        tx.rpush(p + "txl", "a", "b")
        tx.expire(p + "txl", 3000)
        tx.execute()
    # The large encodings (hash table, skiplist, quicklist, big strings), in the snapshot
    # when written before a sync, in the stream after.
    c.hset(p + "bighash", mapping={f"field:{i}": "v" * (i % 100) for i in range(1000)})
    c.zadd(p + "bigz", {f"member:{i}": i / 7 for i in range(500)})
    c.sadd(p + "bigset", *[f"m{i}" for i in range(1000)])
    c.sadd(p + "bigints", *range(0, 100000, 97))
    c.rpush(p + "biglist", *[f"e{i}" * 10 for i in range(2000)])
    c.set(p + "bigstring", "x" * 20000)
    # Streams: IDs the master makes (`*`, `ms-*`), approximate trims (propagated as
    # the exact trims they were), deletions, groups, deliveries (as XCLAIM), NOACK
    # reads (as XGROUP SETID), acknowledgements, claims, deleted pending entries.
    x = p + "stream"
    for i in range(300):
        c.xadd(x, {"f": i, "g": "v" * (i % 50)}, maxlen=250, approximate=True)
    c.xadd(x, {"f": "explicit"}, id="99999999999999-*")
    c.xdel(x, c.xrange(x, count=3)[1][0])
    c.xgroup_create(x, "g", id="0")
    c.xgroup_create(x, "late", id="$")
    c.xreadgroup("g", "alice", {x: ">"}, count=20)
    c.xreadgroup("g", "bob", {x: ">"}, count=5, noack=True)
    first = [e[0] for e in c.xrange(x, count=6)]
    c.xack(x, "g", first[0])
    c.xclaim(x, "g", "carol", 0, first[1:3])
    c.xdel(x, first[3])
    c.xautoclaim(x, "g", "dave", 0, "0-0", count=3)
    c.xgroup_createconsumer(x, "g", "erin")
    c.xgroup_delconsumer(x, "g", "bob")
    c.xtrim(x, minid=first[5], approximate=False)
    c.execute_command("XSETID", x, "99999999999999-50")
    c.xgroup_create(p + "emptystream", "g", id="$", mkstream=True)
    c.execute_command("SELECT", 5)
    c.set(p + "db5", "five")
    c.execute_command("SELECT", 0)


@pytest.mark.parametrize("sync", [(), ("--repl-diskless-sync", "no")], ids=["diskless", "disk"])
@pytest.mark.parametrize("log", [(), ("--appendonly", "yes", "--appendfsync", "everysec")], ids=["no-log", "log"])
def test_a_redis_replica_holds_what_the_master_holds(log, sync):
    master_srv = Node(extra=(*log, *sync))
    replica_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        writes_of_every_type(m, "before")
        m.execute_command("SELECT", 3)
        m.set("db3", "three")
        m.execute_command("SELECT", 0)
        replica_srv = start_replica(master_srv.port)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        wait_until("the first sync", lambda: caught_up(m, r))
        writes_of_every_type(m, "after")
        # A blocked pop served by a later push: propagated as the pop it amounts to.
        popped = []
        blocker = threading.Thread(target=lambda: popped.append(
            redis.Redis(port=master_srv.port, socket_timeout=10).blpop("waits", timeout=10)))
        blocker.start()
        wait_until("the pop to block", lambda: m.info("clients")["blocked_clients"] == 1)
        m.rpush("waits", "x", "y")
        blocker.join(timeout=15)
        assert popped == [(b"waits", b"x")]
        # A blocked XREADGROUP served by an XADD: its delivery is propagated (XCLAIM).
        m.xgroup_create("events", "workers", id="$", mkstream=True)
        read = []
        reader = threading.Thread(target=lambda: read.append(redis.Redis(port=master_srv.port, socket_timeout=10).xreadgroup(
            "workers", "w1", {"events": ">"}, block=10000)))
        reader.start()
        wait_until("the read to block", lambda: m.info("clients")["blocked_clients"] == 1)
        m.xadd("events", {"job": "1"}, id="5-0")
        reader.join(timeout=15)
        assert read == [[[b"events", [(b"5-0", {b"job": b"1"})]]]]
        m.execute_command("SELECT", 3)
        m.flushdb()
        m.set("db3-after-flush", "v")
        m.execute_command("SELECT", 0)
        wait_until("the stream", lambda: caught_up(m, r))
        want = contents(m)
        assert (0, b"before:gone") not in want and (0, b"before:s") in want
        assert contents(r) == want
        # And by Redis's own signature of the data sets, computed by each server.
        assert r.execute_command("DEBUG", "DIGEST") == m.execute_command("DEBUG", "DIGEST")

        # The replica's view of its master, and the master's of its replica.
        role = m.execute_command("ROLE")
        assert role[0] == b"master" and role[1] == m.info("replication")["master_repl_offset"]
        assert [x[1] for x in role[2]] == [str(replica_srv.port).encode()]
        info = m.info("replication")
        assert info["connected_slaves"] == 1
        assert info["slave0"]["port"] == replica_srv.port and info["slave0"]["state"] == "online"
        assert info["repl_backlog_active"] == 1
        line = [x for x in m.client_list() if x["flags"] == "S"]
        assert len(line) == 1

        # WAIT: acknowledged by the one replica, which then holds the write; a second
        # replica that does not exist is waited for until the timeout.
        m.set("waited", "v")
        assert m.execute_command("WAIT", 1, 10000) == 1
        assert r.get("waited") == b"v"
        assert m.execute_command("WAIT", 2, 200) == 1
        assert m.execute_command("WAIT", 0, 0) == 1
        # After EXEC, WAIT covers the whole transaction (its closing EXEC included).
        with m.pipeline(transaction=True) as tx:
            tx.set("tx-a", "1")
            tx.set("tx-b", "2")
            tx.execute()
        assert m.execute_command("WAIT", 1, 10000) == 1
        assert r.mget("tx-a", "tx-b") == [b"1", b"2"]

        # A broken link resumes from the backlog.
        stats = m.info("stats")
        assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        m.set("while-away", "v")
        wait_until("the partial resync", lambda: caught_up(m, r) and r.get("while-away") == b"v")
        after = m.info("stats")
        assert after["sync_partial_ok"] == stats["sync_partial_ok"] + 1
        assert after["sync_full"] == stats["sync_full"]

        # And the master's side can cut it: the replica comes back by itself.
        assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
        m.set("after-kill", "v")
        wait_until("the link back", lambda: caught_up(m, r) and r.get("after-kill") == b"v")

        m.flushall()
        wait_until("FLUSHALL", lambda: caught_up(m, r))
        assert contents(r) == {}
    finally:
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


def test_a_full_sync_while_writes_go_on_loses_and_repeats_nothing():
    """The snapshot and the stream meet exactly: counters incremented and lists pushed
    by writers all through the sync end equal on both sides."""
    master_srv = Node()
    replica_srv = None
    stop = threading.Event()
    done = {}

    def writer(n):
        c = redis.Redis(port=master_srv.port, socket_timeout=10)
        i = 0
        deadline = time.monotonic() + 20
        while not stop.is_set() and time.monotonic() < deadline:
            with c.pipeline(transaction=False) as p:
                for _ in range(50):
                    p.incr(f"counter:{n}:{i % 100}")
                    p.rpush(f"list:{n}", i)
                    i += 1
                p.execute()
        done[n] = i

    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        with m.pipeline(transaction=False) as p:
            for i in range(20000):
                p.set(f"filler:{i}", "x" * 100)
            p.execute()
        writers = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
        for w in writers:
            w.start()
        time.sleep(0.3)
        replica_srv = start_replica(master_srv.port)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        wait_until("the replica online", lambda: r.info("replication").get("master_link_status") == "up", timeout=30)
        time.sleep(0.5)
        stop.set()
        for w in writers:
            w.join(timeout=30)
        assert len(done) == 3 and all(n > 0 for n in done.values())
        wait_until("the stream", lambda: caught_up(m, r), timeout=30)
        for n in range(3):
            assert r.llen(f"list:{n}") == done[n] == m.llen(f"list:{n}")
            assert r.lrange(f"list:{n}", 0, -1) == m.lrange(f"list:{n}", 0, -1)
            keys = [f"counter:{n}:{k}" for k in range(100)]
            assert r.mget(keys) == m.mget(keys)
        assert r.dbsize() == m.dbsize()
    finally:
        stop.set()
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


def test_a_replica_lists_its_master_as_a_client_and_kills_it_by_id():
    """As Redis: while the link is up, CLIENT LIST shows the master (flag M, the
    stream's database and last command), TYPE master finds it, `connected_clients`
    counts it, and CLIENT KILL ID cuts the link, which comes back by a partial resync
    as the same client (Redis's cached master)."""
    master_srv = Node(binary=redis_binary())
    replica_srv = None
    try:
        m3 = redis.Redis(port=master_srv.port, db=3, socket_timeout=10)
        replica_srv = Node(extra=("--replicaof", "127.0.0.1", str(master_srv.port)))
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        wait_until("the link", lambda: caught_up(m, r))
        m3.set("k", "v")
        wait_until("the write", lambda: caught_up(m, r))
        [master] = r.client_list(_type="master")
        assert master["flags"] == "M"
        assert master["addr"] == f"127.0.0.1:{master_srv.port}"
        assert (master["db"], master["cmd"]) == ("3", "set")
        assert [c["id"] for c in r.client_list() if c["flags"] == "M"] == [master["id"]]
        assert r.client_list(_type="normal") and all(c["flags"] != "M" for c in r.client_list(_type="normal"))
        assert r.info("clients")["connected_clients"] == 2
        partial = m.info("stats")["sync_partial_ok"]
        assert r.client_kill_filter(_id=master["id"]) == 1
        wait_until("the link back", lambda: m.info("stats")["sync_partial_ok"] == partial + 1 and caught_up(m, r))
        assert [c["id"] for c in r.client_list(_type="master")] == [master["id"]]
    finally:
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


class StreamReader:
    """A bare replica's end of the replication stream: PSYNC ? -1 without `capa eof`
    (so the snapshot comes as `$<len>`), then the stream's commands one by one."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.sock.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$14\r\nlistening-port\r\n$4\r\n9999\r\n")
        assert self.line() == b"+OK"
        self.sock.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
        line = self.line()
        while line == b"":  # newlines a master sends while it prepares the snapshot
            line = self.line()
        assert line.startswith(b"+FULLRESYNC"), line
        line = self.line()
        while line == b"":
            line = self.line()
        assert line.startswith(b"$"), line
        self.take(int(line[1:]))

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("the master closed the stream")
        self.buf += data

    def line(self):
        while b"\n" not in self.buf:
            self.fill()
        line, _, self.buf = self.buf.partition(b"\n")
        return line.rstrip(b"\r")

    def take(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def command(self):
        head = self.line()
        assert head.startswith(b"*"), head
        args = []
        for _ in range(int(head[1:])):
            size = self.line()
            assert size.startswith(b"$"), size
            args.append(self.take(int(size[1:]) + 2)[:-2])
        return args


def test_a_published_message_follows_the_clients_earlier_writes_in_the_stream():
    """As Redis's single thread orders them: a client's SET and then PUBLISH reach the
    replicas in that order (a replica's subscribers hear the message after the write
    it may announce). Each loop's records wait in its own part of the stream until its
    batch ends; a PUBLISH fed around that part would overtake them."""
    master_srv = Node()
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        reader = StreamReader(master_srv.port)
        wait_until("the bare replica online", lambda: m.info("replication")["connected_slaves"] == 1)
        n = 400
        with m.pipeline(transaction=False) as p:
            for i in range(n):
                p.set("announced", i)
                p.publish("news", i)
            p.execute()
        last_set, seen = None, 0
        while seen < n:
            cmd = reader.command()
            name = cmd[0].upper()
            if name == b"SET" and cmd[1] == b"announced":
                last_set = cmd[2]
            elif name == b"PUBLISH" and cmd[1] == b"news":
                assert last_set == cmd[2], f"PUBLISH {cmd[2]!r} came after SET {last_set!r}"
                seen += 1
    finally:
        master_srv.stop()


def test_writes_to_shared_keys_from_many_connections_reach_the_replica_in_the_masters_order():
    """Many connections (on every event loop of the master) pipelining writes to the
    same few keys, with keys expiring meanwhile: the replica ends with the master's
    lists in the master's order, its counters and its expired keys. (A loop's records
    wait in its own part of the stream until its batch ends; a write to a key whose last
    record waits in another loop's part must come after it.)"""
    master_srv = Node()
    replica_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        replica_srv = start_replica(master_srv.port)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        wait_until("the replica online", lambda: r.info("replication").get("master_link_status") == "up", timeout=30)
        errors = []

        def writer(n):
            try:
                c = redis.Redis(port=master_srv.port, socket_timeout=10)
                deadline = time.monotonic() + 10
                for i in range(60):
                    if time.monotonic() > deadline:
                        break
                    with c.pipeline(transaction=False) as p:
                        for j in range(16):
                            p.rpush("shared:list", f"{n}:{i}:{j}")
                            p.incr(f"shared:counter:{j % 4}")
                            p.lpush(f"shared:list:{j % 3}", f"{n}:{i}:{j}")
                            p.set(f"shared:expiring:{j % 5}", f"{n}:{i}", px=2)
                            p.append("shared:string", f"{n}.")
                        p.execute()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        writers = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for w in writers:
            w.start()
        for w in writers:
            w.join(timeout=30)
        assert not errors, errors
        time.sleep(0.05)
        for j in range(5):
            m.get(f"shared:expiring:{j}")  # each expired key removed (and propagated)
        wait_until("the stream", lambda: caught_up(m, r), timeout=30)
        assert m.llen("shared:list") > 0
        assert r.lrange("shared:list", 0, -1) == m.lrange("shared:list", 0, -1)
        for j in range(3):
            assert r.lrange(f"shared:list:{j}", 0, -1) == m.lrange(f"shared:list:{j}", 0, -1)
        assert r.mget([f"shared:counter:{j}" for j in range(4)]) == m.mget([f"shared:counter:{j}" for j in range(4)])
        assert r.get("shared:string") == m.get("shared:string")
        assert contents(r) == contents(m)
    finally:
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


@pytest.mark.parametrize("master_kind", ["redis", "self"])
def test_the_server_as_a_replica_follows_its_master(master_kind):
    """The server under test as the replica: of Redis 7.0.15 (whose disk-less sync sends
    the `$EOF:` form) and of itself. A read-only replica refuses writes with Redis's
    error; a broken link resumes with a partial resync; REPLICAOF NO ONE makes it a
    writable master holding the data."""
    master_srv = Node(binary=redis_binary() if master_kind == "redis" else None)
    replica_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        writes_of_every_type(m, "before")
        replica_srv = Node()
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK Already connected to specified master"
        wait_until("the first sync", lambda: caught_up(m, r))
        writes_of_every_type(m, "after")
        m.execute_command("SELECT", 3)
        m.flushdb()
        m.execute_command("SELECT", 0)
        assert m.execute_command("WAIT", 1, 10000) == 1
        assert contents(r) == contents(m)
        assert r.execute_command("DEBUG", "DIGEST") == m.execute_command("DEBUG", "DIGEST")

        info = r.info("replication")
        assert info["role"] == "slave" and info["master_port"] == master_srv.port
        assert info["master_link_status"] == "up"
        role = r.execute_command("ROLE")
        assert role[:4] == [b"slave", b"127.0.0.1", master_srv.port, b"connected"]
        with pytest.raises(redis.ResponseError, match="^You can't write against a read only replica.$"):
            r.set("refused", "v")
        # replica-read-only no (at run time): the replica takes a client's write too.
        assert r.config_set("replica-read-only", "no")
        assert r.set("local-write", "v")
        assert r.get("local-write") == b"v"
        assert r.delete("local-write") == 1
        assert r.config_set("replica-read-only", "yes")
        with pytest.raises(redis.ResponseError, match="^You can't write against a read only replica.$"):
            r.set("refused", "v")

        # A broken link resumes from the master's backlog, cut from either side.
        stats = m.info("stats")
        assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
        m.set("while-away", "v")
        wait_until("the partial resync", lambda: caught_up(m, r) and r.get("while-away") == b"v")
        assert m.info("stats")["sync_partial_ok"] == stats["sync_partial_ok"] + 1
        assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        m.set("while-away-2", "v")
        wait_until("the second partial resync", lambda: caught_up(m, r) and r.get("while-away-2") == b"v")
        assert m.info("stats")["sync_partial_ok"] == stats["sync_partial_ok"] + 2

        assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        assert r.info("replication")["role"] == "master"
        r.set("now-writable", "v")
        assert r.get("while-away") == b"v"
    finally:
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


@pytest.mark.parametrize("other_kind", ["self", "redis"])
def test_a_promoted_replica_continues_the_other_replicas_partially(other_kind):
    """PSYNC2: two replicas of one master; one is promoted (REPLICAOF NO ONE) and the
    other, told to follow it, continues from its backlog under the old master's ID
    (`+CONTINUE <new id>`): no full sync, the same data, and new writes flow. The old
    master is stopped first, as in a failover, and feeds no PING meanwhile (a replica
    that got one more byte than the promoted one would need a full sync, as in Redis)."""
    master_srv = Node(extra=("--repl-ping-replica-period", "3600"))
    promoted_srv = other_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        promoted_srv = Node(extra=("--replicaof", "127.0.0.1", str(master_srv.port)))
        other_srv = Node(extra=("--replicaof", "127.0.0.1", str(master_srv.port)),
                           binary=redis_binary() if other_kind == "redis" else None)
        p = redis.Redis(port=promoted_srv.port, socket_timeout=10)
        o = redis.Redis(port=other_srv.port, socket_timeout=10)
        writes_of_every_type(m, "old")
        assert m.execute_command("WAIT", 2, 10000) == 2
        wait_until("both replicas", lambda: caught_up(m, p) and caught_up(m, o))
        old_id = m.info("replication")["master_replid"]
        master_srv.stop()

        assert p.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        info = p.info("replication")
        assert info["role"] == "master" and info["master_replid2"] == old_id
        before = p.info("stats")
        assert o.execute_command("REPLICAOF", "127.0.0.1", promoted_srv.port) == b"OK"
        p.set("after-promotion", "v")
        wait_until("the other replica to follow", lambda: o.get("after-promotion") == b"v")
        after = p.info("stats")
        assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
        assert after["sync_full"] == before["sync_full"]
        assert contents(o) == contents(p)
        assert o.info("replication")["master_replid"] == p.info("replication")["master_replid"]
    finally:
        for s in (other_srv, promoted_srv, master_srv):
            if s:
                s.stop()


def test_min_replicas_to_write_refuses_writes_without_enough_good_replicas():
    master_srv = Node()
    replica_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        m.config_set("min-replicas-to-write", 1)
        with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
            m.set("k", "v")
        assert m.get("k") is None
        # An EXEC of a queue with a write, queued while writes were taken, is refused
        # whole (Redis's is_write_command); one of reads alone runs.
        admin = redis.Redis(port=master_srv.port, socket_timeout=10)
        for queued, refused in ((("SET", "k", "v"), True), (("GET", "k"), False)):
            admin.config_set("min-replicas-to-write", 0)
            conn = m.connection_pool.get_connection("_")
            try:
                conn.send_command("MULTI")
                assert conn.read_response() == b"OK"
                conn.send_command(*queued)
                assert conn.read_response() == b"QUEUED"
                admin.config_set("min-replicas-to-write", 1)
                conn.send_command("EXEC")
                if refused:
                    with pytest.raises(redis.exceptions.ExecAbortError,
                                       match="^Transaction discarded because of: NOREPLICAS Not enough good replicas to write.$"):
                        conn.read_response()
                else:
                    assert conn.read_response() == [None]
            finally:
                m.connection_pool.release(conn)
        assert m.get("k") is None
        replica_srv = start_replica(master_srv.port)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        def can_write():
            try:
                return m.set("k", "v")
            except redis.ResponseError:
                return False

        wait_until("a good replica", lambda: caught_up(m, r) and can_write(), timeout=20)
        m.config_set("min-replicas-to-write", 2)
        with pytest.raises(redis.ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
            m.set("k", "w")
        m.config_set("min-replicas-to-write", 0)
        assert m.set("k", "w")
    finally:
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


@pytest.mark.parametrize("leaf_kind", ["self", "redis"])
def test_a_replica_serves_replicas_of_its_own(leaf_kind):
    """Chained: master -> replica -> replica (the last Basalt or Redis 7.0.15). The
    middle one passes its master's stream on byte for byte; a replica that syncs from
    it mid-stream starts in the database that stream is in (`repl-stream-db` in the
    snapshot), so a write in that database with no new SELECT lands there."""
    master_srv = Node()
    middle_srv = leaf_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10, db=5)
        m.set("a", "1")
        middle_srv = Node(extra=("--replicaof", "127.0.0.1", str(master_srv.port)))
        mid = redis.Redis(port=middle_srv.port, socket_timeout=10)
        wait_until("the middle replica", lambda: caught_up(m, mid))
        m.set("b", "2")  # the master's stream is now in database 5
        assert m.execute_command("WAIT", 1, 10000) == 1
        leaf_srv = Node(extra=("--replicaof", "127.0.0.1", str(middle_srv.port)),
                          binary=redis_binary() if leaf_kind == "redis" else None)
        leaf = redis.Redis(port=leaf_srv.port, socket_timeout=10)
        wait_until("the leaf replica", lambda: leaf.info("replication").get("master_link_status") == "up")
        m.set("c", "3")  # same client, same database: no SELECT in the stream
        writes_of_every_type(redis.Redis(port=master_srv.port, socket_timeout=10), "chained")
        with m.pipeline(transaction=True) as tx:
            tx.incr("tx")
            tx.rpush("txl", "x")
            tx.execute()
        wait_until("the chain", lambda: caught_up(m, mid) and caught_up(mid, leaf))
        want = contents(m)
        assert (5, b"c") in want
        assert contents(leaf) == want == contents(mid)
    finally:
        for s in (leaf_srv, middle_srv, master_srv):
            if s:
                s.stop()


def test_a_promoted_replica_with_the_log_on_keeps_everything_across_a_restart():
    """A replica logs its master's stream (after the rewrite that follows its full
    sync), so a promoted replica killed and restarted has every key: the snapshot's,
    the stream's and its own."""
    master_srv = Node()
    replica_srv = restarted = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        with m.pipeline(transaction=False) as p:
            for i in range(1000):
                p.set(f"before:{i}", i)
            p.execute()
        replica_srv = Node(extra=("--appendonly", "yes", "--replicaof", "127.0.0.1", str(master_srv.port)))
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        wait_until("the sync", lambda: caught_up(m, r))
        with m.pipeline(transaction=False) as p:
            for i in range(1000):
                p.set(f"streamed:{i}", i)
            p.execute()
        assert m.execute_command("WAIT", 1, 10000) == 1
        assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        r.set("after", "v")

        def log_settled():
            p = r.info("persistence")
            return p["aof_rewrite_in_progress"] == 0 and p["aof_rewrite_scheduled"] == 0 and p["aof_rewrites"] >= 1

        wait_until("the rewrite after the sync", log_settled)
        r.set("after-rewrite", "v")
        want = contents(r)
        assert len(want) == 2002
        replica_srv.proc.kill()
        replica_srv.proc.wait()
        restarted = Node(extra=("--appendonly", "yes", "--dir", replica_srv.dir.name))
        assert contents(redis.Redis(port=restarted.port, socket_timeout=10)) == want
    finally:
        for s in (restarted, replica_srv, master_srv):
            if s:
                s.stop()


def test_a_master_alone_for_repl_backlog_ttl_frees_its_backlog():
    master_srv = Node(extra=("--repl-backlog-ttl", "1"))
    replica_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        replica_srv = start_replica(master_srv.port)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        m.set("k", "v")
        wait_until("the replica", lambda: caught_up(m, r))
        before = m.info("replication")
        assert before["repl_backlog_active"] == 1
        replica_srv.stop()
        replica_srv = None
        wait_until("the backlog freed", lambda: m.info("replication")["repl_backlog_active"] == 0, timeout=15)
        after = m.info("replication")
        assert after["master_replid"] != before["master_replid"]
        assert after["repl_backlog_histlen"] == 0
        assert m.get("k") == b"v"
    finally:
        if replica_srv:
            replica_srv.stop()
        master_srv.stop()


@pytest.mark.parametrize("master_kind", ["self", "redis"])
@pytest.mark.parametrize("diskless_sync", ["yes", "no"])
def test_repl_diskless_load_on_empty_db_loads_the_rdb_from_the_socket(master_kind, diskless_sync):
    """`repl-diskless-load on-empty-db`: an empty replica loads its master's RDB as it
    arrives (the `$EOF:<mark>` form of a disk-less master and the `$<len>` form of one
    that sends a saved file), with no temporary file: its data folder is moved away
    while it syncs, and the sync still succeeds, then the stream after the RDB flows.
    With the default (`disabled`) the same sync cannot write its temporary file and
    does not complete."""
    master_srv = Node(extra=("--repl-diskless-sync", diskless_sync),
                      binary=redis_binary() if master_kind == "redis" else None)
    replicas = []
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        writes_of_every_type(m, "before")
        for load, expect_sync in (("on-empty-db", True), ("disabled", False)):
            srv = Node(extra=("--repl-diskless-load", load))
            replicas.append(srv)
            shutil.rmtree(srv.dir.name)
            try:
                r = redis.Redis(port=srv.port, socket_timeout=10)
                assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
                if expect_sync:
                    wait_until("the sync from the socket", lambda: caught_up(m, r))
                    m.set("after-the-rdb", "v")
                    wait_until("the stream after the RDB", lambda: r.get("after-the-rdb") == b"v")
                    assert contents(r) == contents(m)
                else:
                    time.sleep(3)
                    assert r.info("replication")["master_link_status"] == "down"
                    assert r.dbsize() == 0
                assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
            finally:
                os.makedirs(srv.dir.name, exist_ok=True)
    finally:
        for s in replicas:
            s.stop()
        master_srv.stop()


@pytest.mark.parametrize("lazy", ["yes", "no"])
def test_replica_lazy_flush_frees_the_old_data_in_the_background(lazy):
    """`replica-lazy-flush yes`: the data a full sync replaces is freed on the lazy-free
    thread (INFO memory `lazyfreed_objects` counts it); `no` (the default) frees it at
    once, as Redis's."""
    master_srv = Node()
    replica_srv = Node(extra=("--replica-lazy-flush", lazy))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        m.set("from-master", "v")
        r.set("mine", "old")
        assert r.info("memory")["lazyfreed_objects"] == 0
        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
        wait_until("the sync", lambda: caught_up(m, r))
        assert r.get("mine") is None and r.get("from-master") == b"v"
        if lazy == "yes":
            wait_until("the background free", lambda: r.info("memory")["lazyfreed_objects"] >= 1)
        else:
            assert r.info("memory")["lazyfreed_objects"] == 0
    finally:
        replica_srv.stop()
        master_srv.stop()


@pytest.mark.parametrize("load", ["disabled", "on-empty-db"])
def test_a_replica_answers_loading_while_it_loads_a_full_sync(load):
    """While a replica loads its master's snapshot, it keeps answering, as Redis does:
    commands that need the data get `-LOADING` (PING and GET among them), INFO shows
    `loading:1` with the load's progress, ROLE answers; none of its replies waits for
    the load's end. Then the data is the master's. (Before, a Basalt replica held every
    client, Sentinel's PINGs and INFOs too, for the whole load.)"""
    master_srv = Node(extra=("--enable-debug-command", "yes"))
    replica_srv = Node(extra=("--repl-diskless-load", load))
    stop = threading.Event()
    seen = {"get": set(), "ping": set(), "info": set(), "role": set()}
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=60)
        r = redis.Redis(port=replica_srv.port, socket_timeout=60)
        assert m.execute_command("DEBUG", "POPULATE", 500000, "key", 64) == b"OK"

        def probe():
            # Fresh connections: a reply each, whatever it is (bounded by `stop`).
            c = redis.Redis(port=replica_srv.port, socket_timeout=60)
            deadline = time.monotonic() + 60
            while not stop.is_set() and time.monotonic() < deadline:
                for name, call in (("get", lambda: c.get("key:1")), ("ping", c.ping),
                                   ("info", lambda: c.info("persistence")["loading"]),
                                   ("role", lambda: c.execute_command("ROLE")[0])):
                    try:
                        seen[name].add(repr(call()))
                    except (redis.ResponseError, redis.exceptions.BusyLoadingError) as e:
                        # (redis-py raises -LOADING as BusyLoadingError.)
                        seen[name].add(str(e))
                time.sleep(0.002)

        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
        t = threading.Thread(target=probe, daemon=True)
        t.start()
        wait_until("the full sync", lambda: caught_up(m, r), timeout=60)
        stop.set()
        t.join(70)
        loading = "Redis is loading the dataset in memory"
        assert loading in seen["get"], seen
        assert loading in seen["ping"], seen
        assert "1" in seen["info"], seen
        assert seen["role"] <= {"b'slave'"}, seen
        assert r.dbsize() == m.dbsize() == 500000
        assert r.get("key:1") == m.get("key:1")
    finally:
        stop.set()
        replica_srv.stop()
        master_srv.stop()


def test_a_replica_over_maxmemory_evicts_nothing():
    """A replica ignores its maxmemory (Redis's `replica-ignore-maxmemory yes`): over the
    limit, with an evicting policy, it keeps every key its master sends and serves reads,
    evicting none (a key it dropped on its own would be one its clients miss)."""
    master_srv = Node()
    replica_srv = Node(extra=("--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru",
                              "--replicaof", "127.0.0.1", str(master_srv.port)))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        wait_until("the replica's first sync", lambda: caught_up(m, r))
        p = m.pipeline(transaction=False)
        for i in range(4000):
            p.set(f"k:{i}", "v" * 1000)
        p.execute()
        wait_until("the replica to catch up", lambda: caught_up(m, r))
        for _ in range(20):
            assert r.get("k:0") == b"v" * 1000
        assert r.dbsize() == 4000
        assert r.info("stats")["evicted_keys"] == 0
    finally:
        replica_srv.stop()
        master_srv.stop()


def test_a_replica_told_not_to_ignore_maxmemory_evicts_and_propagates_nothing():
    """`replica-ignore-maxmemory no` (as Redis): the replica over its limit evicts keys
    of its own, while its master keeps them all; it passes none of its evictions on:
    its own replica gets its master's stream unchanged (the same offsets, every key).
    The setting was not known before (a config file naming it stopped the start)."""
    master_srv = Node()
    replica_srv = Node(extra=("--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru",
                              "--replica-ignore-maxmemory", "no",
                              "--replicaof", "127.0.0.1", str(master_srv.port)))
    chained_srv = Node(extra=("--replicaof", "127.0.0.1", str(replica_srv.port)))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        c = redis.Redis(port=chained_srv.port, socket_timeout=10)
        assert r.config_get("replica-ignore-maxmemory") == {"replica-ignore-maxmemory": "no"}
        wait_until("the first syncs", lambda: caught_up(m, r) and caught_up(m, c))
        p = m.pipeline(transaction=False)
        for i in range(4000):
            p.set(f"k:{i}", "v" * 1000)
        p.execute()
        wait_until("the replica to evict", lambda: r.info("stats")["evicted_keys"] > 0 and r.dbsize() < 4000)
        wait_until("both replicas to catch up", lambda: caught_up(m, r) and caught_up(m, c))
        assert m.dbsize() == 4000 and c.dbsize() == 4000
        assert m.info("stats")["evicted_keys"] == 0
        # Back to the default: the replica keeps what its master sends from now on.
        r.config_set("replica-ignore-maxmemory", "yes")
        evicted = r.info("stats")["evicted_keys"]
        m.set("after", "v" * 1000)
        wait_until("the replica to catch up", lambda: caught_up(m, r))
        assert r.get("after") == b"v" * 1000
        assert r.info("stats")["evicted_keys"] == evicted
    finally:
        chained_srv.stop()
        replica_srv.stop()
        master_srv.stop()


def test_a_key_past_its_time_on_the_replica_stays_for_its_masters_commands():
    """The master's stream held back (a relay between the two): a key whose time passes
    on the replica meanwhile is read there as absent but kept, and the master's PERSIST
    that arrives late finds it; a PEXPIREAT, or a RESTORE ... ABSTTL, that arrives after
    its time sets the time instead of deleting (or not creating), and the PERSIST after
    it finds the key. Both keys are then the
    master's on the replica. (Before, the replica removed such keys on a read or on the
    late PEXPIREAT, and lost them for good: the master still had them, persistent.) As
    Redis 7.0's replica."""
    master_srv = Node()
    relay = Relay(master_srv.port)
    replica_srv = Node(extra=("--replicaof", "127.0.0.1", str(relay.port)))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        wait_until("the replica's first sync", lambda: caught_up(m, r))
        m.set("persisted", "v", px=1000)
        m.set("reexpired", "v")
        payload = m.dump("reexpired")
        wait_until("the replica to catch up", lambda: caught_up(m, r))
        relay.hold()
        assert m.persist("persisted") is True
        assert m.pexpire("reexpired", 300) is True
        assert m.persist("reexpired") is True
        # RESTORE with a TTL goes to the replica with its time made absolute (ABSTTL).
        assert m.restore("restored", 300, payload) == b"OK"
        assert m.persist("restored") is True
        time.sleep(1.3)
        # Past its time by the replica's clock, its master's PERSIST still held back.
        assert r.get("persisted") is None
        assert r.exists("persisted") == 0
        relay.release()
        wait_until("the replica to catch up", lambda: caught_up(m, r))
        for c in (m, r):
            assert c.get("persisted") == b"v" and c.ttl("persisted") == -1
            assert c.get("reexpired") == b"v" and c.ttl("reexpired") == -1
            assert c.get("restored") == b"v" and c.ttl("restored") == -1
    finally:
        relay.release()
        replica_srv.stop()
        relay.stop()
        master_srv.stop()


def test_a_replica_passes_keys_past_their_time_on_to_a_replica_of_its_own():
    """A key past its time on a replica (its master's PERSIST held back by a relay) is in
    the snapshot that replica makes for a replica of its own, so that the PERSIST, when
    it arrives and is passed on, finds it there too. As Redis, whose snapshots hold
    such keys."""
    master_srv = Node()
    relay = Relay(master_srv.port)
    middle_srv = Node(extra=("--replicaof", "127.0.0.1", str(relay.port)))
    leaf_srv = None
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        mid = redis.Redis(port=middle_srv.port, socket_timeout=10)
        wait_until("the replica's first sync", lambda: caught_up(m, mid))
        m.set("k", "v", px=1000)
        wait_until("the replica to catch up", lambda: caught_up(m, mid))
        relay.hold()
        assert m.persist("k") is True
        time.sleep(1.3)
        leaf_srv = Node(extra=("--replicaof", "127.0.0.1", str(middle_srv.port)))
        leaf = redis.Redis(port=leaf_srv.port, socket_timeout=10)
        wait_until("the leaf's sync", lambda: caught_up(mid, leaf))
        relay.release()
        wait_until("the chain to catch up", lambda: caught_up(m, mid) and caught_up(m, leaf))
        for c in (m, mid, leaf):
            assert c.get("k") == b"v" and c.ttl("k") == -1
    finally:
        relay.release()
        if leaf_srv:
            leaf_srv.stop()
        middle_srv.stop()
        relay.stop()
        master_srv.stop()


@pytest.mark.parametrize("pop", ["BLPOP", "BLMOVE"])
def test_wait_after_a_served_blocked_pop_counts_only_replicas_that_have_the_pop(pop):
    """A blocked pop served by another client's push is the popped client's write: its
    WAIT counts the replicas that have the pop, so that an element WAIT called safe is
    not back in the list after a failover. Basalt only: Redis 7.0.15's WAIT there uses
    the offset from when the client blocked (it answers 1 with the replica stopped);
    Redis 7.2 re-runs the served command, which counts it."""
    if os.path.basename(os.environ.get("BASALT_TEST_SERVER", "")) == "redis-server":
        pytest.skip("Redis 7.0 does not count a served pop for the popped client's WAIT")
    master_srv = Node()
    replica_srv = start_replica(master_srv.port)
    stopped = False
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        r = redis.Redis(port=replica_srv.port, socket_timeout=10)
        m.set("before", 1)
        assert m.execute_command("WAIT", 1, 10000) == 1
        # Several poppers, so that some wait on another event loop than the pusher's.
        poppers = [redis.Redis(port=master_srv.port, socket_timeout=10) for _ in range(4)]
        results = [None] * len(poppers)

        def blocked_pop(i):
            c = poppers[i]
            if pop == "BLPOP":
                results[i] = c.blpop(f"q{i}", 0)
            else:
                results[i] = c.blmove(f"q{i}", f"dst{i}", 0, "LEFT", "RIGHT")

        threads = [threading.Thread(target=blocked_pop, args=(i,)) for i in range(len(poppers))]
        for t in threads:
            t.start()
        wait_until("the poppers blocked", lambda: m.info("clients")["blocked_clients"] == len(poppers))
        os.kill(replica_srv.proc.pid, signal.SIGSTOP)
        stopped = True
        pusher = redis.Redis(port=master_srv.port, socket_timeout=10)
        for i in range(len(poppers)):
            pusher.rpush(f"q{i}", f"v{i}")
        for t in threads:
            t.join(timeout=10)
        assert all(res is not None for res in results)
        for c in poppers:
            assert c.execute_command("WAIT", 1, 200) == 0
        os.kill(replica_srv.proc.pid, signal.SIGCONT)
        stopped = False
        for i, c in enumerate(poppers):
            assert c.execute_command("WAIT", 1, 10000) == 1
            assert r.llen(f"q{i}") == 0
            if pop == "BLMOVE":
                assert r.lrange(f"dst{i}", 0, -1) == [f"v{i}".encode()]
    finally:
        if stopped:
            os.kill(replica_srv.proc.pid, signal.SIGCONT)
        master_srv.stop()
        replica_srv.stop()


def test_wait_after_a_blocking_pop_served_at_once_counts_only_replicas_that_have_the_pop():
    """BLPOP/BLMOVE that find an element pop at once, a write like LPOP: WAIT then
    counts only the replicas that have the pop (as Redis 7.0)."""
    master_srv = Node()
    replica_srv = start_replica(master_srv.port)
    stopped = False
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=10)
        m.rpush("q", "a", "b")
        assert m.execute_command("WAIT", 1, 10000) == 1
        popper = redis.Redis(port=master_srv.port, socket_timeout=10)
        os.kill(replica_srv.proc.pid, signal.SIGSTOP)
        stopped = True
        assert popper.blpop("q", 0) == (b"q", b"a")
        assert popper.execute_command("WAIT", 1, 200) == 0
        assert popper.blmove("q", "dst", 0, "LEFT", "RIGHT") == b"b"
        assert popper.execute_command("WAIT", 1, 200) == 0
        os.kill(replica_srv.proc.pid, signal.SIGCONT)
        stopped = False
        assert popper.execute_command("WAIT", 1, 10000) == 1
    finally:
        if stopped:
            os.kill(replica_srv.proc.pid, signal.SIGCONT)
        master_srv.stop()
        replica_srv.stop()
