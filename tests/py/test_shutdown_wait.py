"""A master with replicas that is asked to stop (SIGTERM, SHUTDOWN) first waits for
lagging replicas, as Redis 7.0 does (`shutdown-timeout`, 10 s by default): writes are
held meanwhile and reads answered, and the exit comes once every replica acknowledged
the whole stream, or at the timeout. So a write acknowledged just before a planned
restart is on the replica that Sentinel promotes next. `SHUTDOWN NOW` does not wait;
`SHUTDOWN ABORT` ends the wait, and the waiting SHUTDOWN gets an error.

A replica is made to lag by stopping it (SIGSTOP). Each test passes against Redis
7.0.15 too (BASALT_TEST_SERVER=redis-server).
"""

import os
import signal
import threading
import time

import pytest
import redis

from test_replication import Node, caught_up, wait_until


def group(timeout_s, *extra):
    master = Node(extra=("--shutdown-timeout", str(timeout_s), *extra))
    replica = Node(extra=("--replicaof", "127.0.0.1", str(master.port)))
    m = redis.Redis(port=master.port, socket_timeout=10)
    r = redis.Redis(port=replica.port, socket_timeout=10)
    wait_until("the replica's sync", lambda: caught_up(m, r))
    return master, replica, m, r


def seconds_to_exit(master, replica, m, ask):
    """Stops the replica, writes, asks the master to stop (`ask()`) and times its exit."""
    os.kill(replica.proc.pid, signal.SIGSTOP)
    m.set("k", "v")
    asked = time.monotonic()
    ask()
    assert master.proc.wait(timeout=20) == 0
    return time.monotonic() - asked


def stop_all(*servers):
    for s in servers:
        if s.proc.poll() is None:
            os.kill(s.proc.pid, signal.SIGCONT)
        s.stop()


def test_sigterm_waits_for_a_lagging_replica_which_then_has_every_write():
    master, replica, m, r = group(30)
    try:
        os.kill(replica.proc.pid, signal.SIGSTOP)
        for i in range(100):
            m.set(f"k:{i}", i)
        master.proc.send_signal(signal.SIGTERM)
        time.sleep(1)
        assert master.proc.poll() is None, "the master did not wait for its replica"
        # Meanwhile reads are answered and writes held.
        assert m.get("k:99") == b"99"
        held = redis.Redis(port=master.port, socket_timeout=0.5)
        with pytest.raises(redis.exceptions.TimeoutError):
            held.set("during-the-wait", "v")
        os.kill(replica.proc.pid, signal.SIGCONT)
        assert master.proc.wait(timeout=20) == 0
        assert r.get("k:99") == b"99"
        assert sum(1 for _ in r.scan_iter("k:*")) == 100
    finally:
        stop_all(replica, master)


def test_a_replica_waits_for_its_own_lagging_replica_which_then_has_every_write():
    # A chain: the middle server passes its master's stream on. Stopped, it waits for
    # its replica as a master does (no GETACK: its stream is its master's), its master's
    # writes held meanwhile, as Redis's.
    master, middle, m, r = group(30)
    leaf = Node(extra=("--replicaof", "127.0.0.1", str(middle.port)))
    try:
        leaf_c = redis.Redis(port=leaf.port, socket_timeout=10)
        wait_until("the leaf's sync", lambda: caught_up(r, leaf_c))
        os.kill(leaf.proc.pid, signal.SIGSTOP)
        for i in range(100):
            m.set(f"k:{i}", i)
        assert m.wait(1, 5000) == 1
        middle.proc.send_signal(signal.SIGTERM)
        time.sleep(1.5)
        assert middle.proc.poll() is None, "the middle replica did not wait for its replica"
        os.kill(leaf.proc.pid, signal.SIGCONT)
        assert middle.proc.wait(timeout=20) == 0
        assert sum(1 for _ in leaf_c.scan_iter("k:*")) == 100
        with open(os.path.join(middle.dir.name, "server.log"), "rb") as f:
            assert b"Waiting for replicas before shutting down." in f.read()
    finally:
        stop_all(leaf, middle, master)


def test_the_wait_ends_at_shutdown_timeout():
    master, replica, m, r = group(2)
    try:
        took = seconds_to_exit(master, replica, m, lambda: master.proc.send_signal(signal.SIGTERM))
        assert 1.5 <= took < 10, f"exited {took:.1f} s after SIGTERM"
    finally:
        stop_all(replica, master)


def test_shutdown_abort_ends_the_wait_and_the_server_goes_on():
    master, replica, m, r = group(30)
    try:
        os.kill(replica.proc.pid, signal.SIGSTOP)
        m.set("k", "v")
        result = {}

        def shut():
            c = redis.Redis(port=master.port, socket_timeout=20)
            try:
                result["reply"] = c.execute_command("SHUTDOWN")
            except redis.exceptions.ResponseError as e:
                result["error"] = str(e)
            except redis.exceptions.ConnectionError as e:
                result["closed"] = str(e)

        def writes_held():
            try:
                redis.Redis(port=master.port, socket_timeout=0.2).set("probe", "v")
                return False
            except redis.exceptions.TimeoutError:
                return True  # (the SET runs once the writes go again)

        t = threading.Thread(target=shut)
        t.start()
        wait_until("the shutdown to wait", writes_held)
        assert t.is_alive()
        assert m.execute_command("SHUTDOWN", "ABORT") is True  # +OK
        t.join(timeout=10)
        assert result == {"error": "Errors trying to SHUTDOWN. Check logs."}
        assert master.proc.poll() is None
        # Writes go again.
        wait_until("writes let go", lambda: m.set("after", "v"), timeout=5)
        with pytest.raises(redis.exceptions.ResponseError, match="No shutdown in progress"):
            m.execute_command("SHUTDOWN", "ABORT")
    finally:
        stop_all(replica, master)


def test_shutdown_now_does_not_wait():
    master, replica, m, r = group(30)
    try:
        def shutdown_now():
            with pytest.raises(redis.exceptions.ConnectionError):
                m.execute_command("SHUTDOWN", "NOW")
        assert seconds_to_exit(master, replica, m, shutdown_now) < 5
    finally:
        stop_all(replica, master)


def test_shutdown_on_sigterm_now_does_not_wait():
    master, replica, m, r = group(30, "--shutdown-on-sigterm", "now")
    try:
        assert seconds_to_exit(master, replica, m, lambda: master.proc.send_signal(signal.SIGTERM)) < 5
    finally:
        stop_all(replica, master)


def test_the_shutdown_settings_as_redis_shows_them():
    srv = Node()
    try:
        c = redis.Redis(port=srv.port, socket_timeout=10)
        assert c.config_get("shutdown-timeout") == {"shutdown-timeout": "10"}
        for value, shown in (("now nosave", "nosave now"), ("default", "default"), ("save force", "save force")):
            assert c.config_set("shutdown-on-sigterm", value) is True
            assert c.config_get("shutdown-on-sigterm") == {"shutdown-on-sigterm": shown}
        with pytest.raises(redis.exceptions.ResponseError, match="must be one of the following: default, save, nosave, now, force"):
            c.config_set("shutdown-on-sigint", "bogus")
        assert c.config_get("shutdown-on-sigint") == {"shutdown-on-sigint": "default"}
    finally:
        srv.stop()


def test_a_second_sigint_during_the_wait_exits_at_once_without_the_final_save():
    # As Redis: "You insist... exiting now.", exit status 1, no final save even with
    # save rules (the first SIGINT's save comes after the wait, which never ends).
    master, replica, m, r = group(30, "--save", "3600 1")
    try:
        os.kill(replica.proc.pid, signal.SIGSTOP)
        m.set("k", "v")
        master.proc.send_signal(signal.SIGINT)
        time.sleep(1)
        assert master.proc.poll() is None, "the master did not wait for its replica"
        asked = time.monotonic()
        master.proc.send_signal(signal.SIGINT)
        assert master.proc.wait(timeout=20) == 1
        assert time.monotonic() - asked < 5
        assert not os.path.exists(os.path.join(master.dir.name, "dump.rdb"))
        with open(os.path.join(master.dir.name, "server.log"), "rb") as f:
            assert b"You insist... exiting now." in f.read()
    finally:
        stop_all(replica, master)
