"""`repl-diskless-load swapdb` (issue 24): a replica loads its master's snapshot as it
arrives into a data set aside and exchanges the two once it is whole, as Redis 7.0's.

- When the full sync continues the history the replica holds (its master's replication
  ID; a link that was down longer than the master's backlog covers), the old data set
  is served meanwhile: INFO `async_loading:1`, reads and a writable replica's writes
  answered, only `no-async-loading` commands (BGSAVE ...) refused with `-LOADING`.
- Otherwise clients get `-LOADING` as during a load in place, and a transfer that
  fails (the master killed mid-way) leaves the replica's data set as it was.

Each test passes against Redis 7.0.15 as the replica too
(BASALT_TEST_SERVER=redis-server), and runs with Redis as the master.
"""

import time

import pytest
import redis

from test_replication import Node, caught_up, contents, redis_binary, wait_until

# Redis serves clients during a load every so many bytes read (Basalt throughout):
# small, so that a small snapshot's load is seen from outside.
EVENTS_EVERY = ("--loading-process-events-interval-bytes", "1024")


def master_node(kind, *extra):
    return Node(extra=extra, binary=redis_binary() if kind == "redis" else None)


def persistence(c):
    info = c.info("persistence")
    return info["loading"], info["async_loading"]


@pytest.mark.parametrize("master_kind", ["self", "redis"])
def test_a_full_sync_that_continues_the_history_serves_the_old_data_while_it_loads(master_kind):
    # A backlog too small for what the master writes while the replica is away.
    master_srv = master_node(master_kind, "--repl-backlog-size", "16384")
    replica_srv = Node(extra=("--repl-diskless-load", "swapdb", "--replica-read-only", "no", *EVENTS_EVERY))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=30)
        r = redis.Redis(port=replica_srv.port, socket_timeout=30)
        # Values over EVENTS_EVERY: Redis answers between any two keys of the load.
        pad = "." * 1100
        for i in range(200):
            m.set(f"k:{i}", "old" + pad)
        m.rpush("list", *range(10))
        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
        wait_until("the first sync", lambda: caught_up(m, r))
        full_syncs = m.info("stats")["sync_full"]
        # A key of the replica's own goes with the old data set.
        r.set("replica-only", "x")
        # Transactions watching a key either data set holds fail after the exchange;
        # one watching a key neither holds runs.
        watchers = {}
        for key in ("k:0", "replica-only", "nowhere"):
            w = redis.Redis(port=replica_srv.port, socket_timeout=30).pipeline(transaction=True)
            w.watch(key)
            watchers[key] = w
        # 25 ms after each key the replica loads: 200 keys, about 5 s (Redis answers a
        # command every few hundred ms meanwhile).
        r.config_set("key-load-delay", 25000)
        # The replica dropped and the backlog outgrown at once: its PSYNC cannot continue,
        # and the master's full sync carries the same replication ID.
        with m.pipeline(transaction=True) as tx:
            tx.execute_command("CLIENT", "KILL", "TYPE", "replica")
            for i in range(200):
                tx.set(f"k:{i}", "new" + pad)
            tx.execute()
        wait_until("the load aside", lambda: persistence(r) == (0, 1))
        # What acts on the data set whole waits for the load's end.
        with pytest.raises(redis.exceptions.BusyLoadingError):
            r.bgsave()
        # The old data set serves, the replica's own key with it (Redis answers these
        # slowly during its load: few of them).
        assert r.get("k:0") == b"old" + pad.encode()
        assert r.get("replica-only") == b"x"
        assert r.lrange("list", 0, -1) == [str(i).encode() for i in range(10)]
        wait_until("the exchange", lambda: persistence(r) == (0, 0) and caught_up(m, r), timeout=60)
        r.config_set("key-load-delay", 0)
        assert m.info("stats")["sync_full"] == full_syncs + 1
        assert r.get("k:0") == b"new" + pad.encode()
        assert r.get("replica-only") is None
        assert contents(r) == contents(m)
        for key, expect_run in (("k:0", False), ("replica-only", False), ("nowhere", True)):
            w = watchers[key]
            w.multi()
            w.get(key)
            if expect_run:
                assert w.execute() == [None]
            else:
                with pytest.raises(redis.exceptions.WatchError):
                    w.execute()
        # The stream goes on after the exchange.
        m.set("after", "v")
        wait_until("the stream after the exchange", lambda: r.get("after") == b"v")
    finally:
        replica_srv.stop()
        master_srv.stop()


@pytest.mark.parametrize("master_kind", ["self", "redis"])
def test_a_full_sync_that_fails_mid_transfer_leaves_the_replicas_data_as_it_was(master_kind):
    # Uncompressed: DEBUG POPULATE's values are mostly zeros.
    master_srv = master_node(master_kind, "--rdbcompression", "no")
    replica_srv = Node(extra=("--repl-diskless-load", "swapdb", *EVENTS_EVERY))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=30)
        r = redis.Redis(port=replica_srv.port, socket_timeout=30)
        # 20 MB to send: more than the sockets hold while the replica reads slowly.
        assert m.execute_command("DEBUG", "POPULATE", 20000, "master", 1000) == b"OK"
        r.set("mine", "kept")
        r.rpush("my-list", "a", "b")
        before = contents(r)
        r.config_set("key-load-delay", 100)
        # Another history than the replica's: no async load, `-LOADING` meanwhile.
        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
        wait_until("the load", lambda: persistence(r) == (1, 0))
        with pytest.raises(redis.exceptions.BusyLoadingError):
            r.get("mine")
        master_srv.proc.kill()  # SIGKILL, mid-transfer
        master_srv.proc.wait()
        wait_until("the failed load's end", lambda: persistence(r) == (0, 0), timeout=60)
        r.config_set("key-load-delay", 0)
        assert r.info("replication")["master_link_status"] == "down"
        # Served as stale data (replica-serve-stale-data yes): the data set as it was.
        assert contents(r) == before
        assert r.dbsize() == 2
    finally:
        replica_srv.stop()
        master_srv.stop()


def test_swapdb_to_a_master_with_the_log_on_keeps_a_restarted_replica_whole():
    """A replica with its own log: after a sync loaded aside, the log is rewritten from
    the data exchanged in, so that a restart brings back the master's data, not the old
    data set (Basalt's log of a replica: docs/persistence.md)."""
    master_srv = Node()
    replica_srv = Node(extra=("--repl-diskless-load", "swapdb", "--appendonly", "yes"))
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=30)
        r = redis.Redis(port=replica_srv.port, socket_timeout=30)
        for i in range(100):
            m.set(f"k:{i}", "from-master")
        r.set("mine", "old")
        assert r.execute_command("REPLICAOF", "127.0.0.1", master_srv.port) == b"OK"
        wait_until("the sync", lambda: caught_up(m, r))
        assert r.get("mine") is None and r.dbsize() == 100
        wait_until("the log's rewrite", lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0)
        assert r.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        wait_until("the log settled after the promotion",
                   lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                   and r.info("persistence")["aof_rewrite_scheduled"] == 0)
        r.execute_command("DEBUG", "LOADAOF")
        assert r.get("mine") is None
        assert r.dbsize() == 100
        assert r.get("k:7") == b"from-master"
    finally:
        replica_srv.stop()
        master_srv.stop()
