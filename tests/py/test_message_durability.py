"""A message that tells of a write leaves once the log holds that write, as the write's
own reply does (docs/persistence.md): a keyspace notification, a PUBLISH sent right
after writes, and the replication stream (Redis sends all of them only after the fsync
of its event loop's turn: a replica never serves a write its master could come back
without). With
`appendfsync always` and the log's writes slowed by DEBUG AOF-FLUSH-SLEEP, neither may
reach a subscriber before that delay has passed. (Both used to arrive within
milliseconds, while the write was not yet on disk: a crash then lost a write the
subscriber had heard of.)

The assertion is that nothing arrives early, not how late it arrives: a slow machine
cannot make it fail. Passes against Redis 7.0.15 too (BASALT_TEST_SERVER=redis-server).
"""

import threading
import time

import redis

from conftest import Server
from test_replication import Node, caught_up, wait_until

DELAY_S = 1.0


def first_messages(sub, count, since, out):
    """Records when each of the first `count` messages arrived (seconds after `since`)."""
    deadline = time.monotonic() + 15
    while len(out) < count and time.monotonic() < deadline:
        m = sub.get_message(timeout=0.05)
        if m and m["type"] in ("message", "pmessage"):
            out[m["channel"]] = time.monotonic() - since


def test_messages_about_a_write_wait_for_the_log():
    srv = Server(extra=("--appendonly", "yes", "--appendfsync", "always", "--notify-keyspace-events", "KA"))
    try:
        c = redis.Redis(port=srv.port, socket_timeout=30)
        sub = redis.Redis(port=srv.port, socket_timeout=30).pubsub()
        sub.psubscribe("__keyspace@0__:*")
        sub.subscribe("news")
        while sub.get_message(timeout=0.2):
            pass
        c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", int(DELAY_S * 1_000_000))
        arrived = {}
        started = time.monotonic()
        reader = threading.Thread(target=first_messages, args=(sub, 2, started, arrived))
        reader.start()
        pipe = c.pipeline(transaction=False)
        pipe.set("k", "v")
        pipe.publish("news", "k was set")
        assert pipe.execute() == [True, 1]
        reader.join()
        c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 0)
        assert set(arrived) == {b"__keyspace@0__:k", b"news"}, arrived
        for channel, at in arrived.items():
            assert at >= DELAY_S / 2, f"{channel!r} arrived {at:.3f} s after the write, before the log held it"
    finally:
        srv.stop()


def test_a_replica_gets_a_write_once_its_masters_log_holds_it():
    master_srv = Node(extra=("--appendonly", "yes", "--appendfsync", "always"))
    replica_srv = Node()
    try:
        m = redis.Redis(port=master_srv.port, socket_timeout=30)
        r = redis.Redis(port=replica_srv.port, socket_timeout=30)
        assert r.replicaof("127.0.0.1", master_srv.port)
        wait_until("the sync", lambda: caught_up(m, r))
        m.execute_command("DEBUG", "AOF-FLUSH-SLEEP", int(DELAY_S * 1_000_000))
        started = time.monotonic()
        writer = threading.Thread(target=lambda: m.set("k", "v"))
        writer.start()
        seen_at = None
        while time.monotonic() - started < DELAY_S / 2:
            if r.get("k") is not None:
                seen_at = time.monotonic() - started
                break
            time.sleep(0.01)
        writer.join()
        m.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 0)
        assert seen_at is None, f"the replica served the write {seen_at:.3f} s after it was sent, before the master's log held it"
        wait_until("the write on the replica", lambda: r.get("k") == b"v")
    finally:
        master_srv.stop()
        replica_srv.stop()
