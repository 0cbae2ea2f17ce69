"""A server loading its data at start (dump.rdb, or the append-only log) answers while it
loads, as Redis 7.0 does: `-LOADING` to the commands that need the data (PING and GET
among them), INFO with `loading:1` and the load's progress; and a shutdown asked for
during the load (SIGTERM, SHUTDOWN) ends it at once, without saving and without
changing the files.

The load is slowed down by Redis's own test hook, `key-load-delay` (microseconds after
each key a snapshot's load reads), so that each test passes against Redis too.
Servers are started by hand here: the suite's `Server` waits for PONG, that is for the
load's end.
"""

import hashlib
import os
import shutil
import signal
import subprocess
import time

import pytest
import redis

from conftest import Server, _binary, _external, _free_port, _watchdog

KEYS = 10000
LOADING = "Redis is loading the dataset in memory"


def make_data(dest, aof):
    """Fills a server with KEYS keys and leaves its data files in `dest`: dump.rdb, or
    an append-only log whose base is a snapshot (the RDB preamble) and whose
    incremental file holds a few more writes. Returns two of the values written."""
    extra = ("--appendonly", "yes", "--appendfsync", "always") if aof else ()
    src = Server(extra=extra)
    try:
        c = redis.Redis(port=src.port, socket_timeout=60)
        assert c.execute_command("DEBUG", "POPULATE", KEYS, "key", 16) == b"OK"
        if aof:
            c.bgrewriteaof()
            deadline = time.monotonic() + 30
            while c.info("persistence")["aof_rewrite_in_progress"] or c.info("persistence")["aof_rewrite_scheduled"]:
                assert time.monotonic() < deadline, "the rewrite did not end"
                time.sleep(0.05)
            c.set("after-the-rewrite", "yes")
            shutil.copytree(os.path.join(src.dir.name, "appendonlydir"), os.path.join(dest, "appendonlydir"))
        else:
            c.save()
            shutil.copy(os.path.join(src.dir.name, "dump.rdb"), dest)
        return {k: c.get(k) for k in ("key:0", f"key:{KEYS - 1}")}
    finally:
        src.stop()


def digest(folder):
    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            if name == "server.log":
                continue
            with open(os.path.join(root, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


class Loading:
    """A server started on `folder`, slowed to `delay_us` per key, not waited for."""

    def __init__(self, folder, aof, delay_us, save=""):
        self.port = _free_port()
        args = [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder),
                "--save", save, "--key-load-delay", str(delay_us),
                # Redis serves clients during a load every so many bytes (2 MB by
                # default: more than this data set); Basalt serves throughout.
                "--loading-process-events-interval-bytes", "1024",
                *(("--appendonly", "yes") if aof else ()),
                *os.environ.get("BASALT_SERVER_EXTRA", "").split()]
        self.log = open(os.path.join(folder, "server.log"), "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.watchdog = _watchdog(self.proc.pid)

    def client(self):
        return redis.Redis(port=self.port, socket_timeout=30, socket_connect_timeout=2)

    def wait_loading(self):
        """Until INFO says loading:1 (bounded)."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "the server exited"
            try:
                if self.client().info("persistence")["loading"] == 1:
                    return
            except redis.ConnectionError:
                pass  # not listening yet
            time.sleep(0.01)
        pytest.fail("the server never showed loading:1")

    def stop(self):
        self.watchdog.kill()
        self.watchdog.wait()
        if self.proc.poll() is None:
            self.proc.kill()  # SIGKILL to this PID
        self.proc.wait()
        self.log.close()


@pytest.mark.parametrize("aof", [False, True], ids=["rdb", "aof"])
def test_a_server_loading_its_data_at_start_answers_loading(tmp_path, aof):
    """While it loads, every probe gets a reply at once: PING and GET `-LOADING`, INFO
    loading:1 with the load's size and progress, CONFIG GET its value; DBSIZE is refused
    too. Then everything is there. (Before, Basalt had its listeners open but served
    nobody until the load ended: a client, Sentinel's PING or a monitor just waited.)"""
    if _external():
        pytest.skip("starts its own servers")
    written = make_data(tmp_path, aof)
    srv = Loading(tmp_path, aof, delay_us=300)  # 10,000 keys: 3 s or more
    try:
        srv.wait_loading()
        c = srv.client()
        started = time.monotonic()
        for call in (c.ping, lambda: c.get("key:1"), c.dbsize):
            with pytest.raises(redis.exceptions.BusyLoadingError, match=LOADING):
                call()
        info = c.info("persistence")
        assert info["loading"] == 1
        assert info["loading_total_bytes"] > 0, info
        # The snapshot's writer's memory, from its `used-mem` field (the log's base is
        # a snapshot too).
        assert info["loading_rdb_used_mem"] > 0, info
        assert 0 <= info["loading_loaded_perc"] <= 100, info
        assert c.config_get("key-load-delay") == {"key-load-delay": "300"}
        assert time.monotonic() - started < 2, "the replies waited for the load"
        # Then the load ends and the data is whole.
        deadline = time.monotonic() + 60
        while True:
            try:
                if c.ping():
                    break
            except redis.exceptions.BusyLoadingError:
                pass
            assert time.monotonic() < deadline, "the load did not end"
            time.sleep(0.05)
        assert c.info("persistence")["loading"] == 0
        assert c.dbsize() == KEYS + (1 if aof else 0)
        assert {k: c.get(k) for k in written} == written
        if aof:
            assert c.get("after-the-rewrite") == b"yes"
    finally:
        srv.stop()


def test_a_transaction_of_commands_allowed_during_the_load_runs_at_once(tmp_path):
    """MULTI, commands flagged `loading` (CONFIG GET, INFO, CLIENT SETNAME), EXEC, while
    the data loads: EXEC answers at once, as Redis's (Basalt's EXEC waited for the
    whole load, holding its event loop); one with a command that needs the data is
    refused with `-LOADING`, as Redis refuses it."""
    if _external():
        pytest.skip("starts its own servers")
    make_data(tmp_path, aof=False)
    srv = Loading(tmp_path, aof=False, delay_us=2000)  # 10,000 keys: 20 s or more
    try:
        srv.wait_loading()
        c = srv.client()
        started = time.monotonic()
        with c.pipeline(transaction=True) as tx:
            tx.config_get("key-load-delay")
            tx.info("persistence")
            tx.client_setname("during-the-load")
            config, info, named = tx.execute()
        assert time.monotonic() - started < 5, "EXEC waited for the load"
        assert config == {"key-load-delay": "2000"}
        assert info["loading"] == 1
        assert named is True
        assert c.info("persistence")["loading"] == 1, "the load ended before the test could show anything"
        with pytest.raises(redis.exceptions.BusyLoadingError, match=LOADING):
            with c.pipeline(transaction=True) as tx:
                tx.config_get("key-load-delay")
                tx.get("key:1")
                tx.execute()
    finally:
        srv.stop()


@pytest.mark.parametrize("how", ["sigterm", "shutdown"])
def test_a_shutdown_during_the_load_at_start_ends_it_without_saving(tmp_path, how):
    """SIGTERM, or SHUTDOWN (with save rules set, which would save otherwise), while the
    data loads: the server exits at once with status 0 and leaves the files as they
    were (a save then would write half a data set over the whole one), as Redis does."""
    if _external():
        pytest.skip("starts its own servers")
    make_data(tmp_path, aof=False)
    before = digest(tmp_path)
    srv = Loading(tmp_path, aof=False, delay_us=5000, save="3600 1")  # 10,000 keys: 50 s
    try:
        srv.wait_loading()
        asked = time.monotonic()
        if how == "sigterm":
            srv.proc.send_signal(signal.SIGTERM)
        else:
            try:
                srv.client().shutdown()
            except redis.ConnectionError:
                pass  # the connection closes as the server exits
        assert srv.proc.wait(timeout=20) == 0
        assert time.monotonic() - asked < 10, "the shutdown waited for the load"
        assert digest(tmp_path) == before, "the files changed"
    finally:
        srv.stop()
    # And the data is all there at the next start.
    again = Loading(tmp_path, aof=False, delay_us=0)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if again.client().ping():
                    break
            except redis.ConnectionError:
                pass
            assert time.monotonic() < deadline, "the restart did not answer"
            time.sleep(0.05)
        assert again.client().dbsize() == KEYS
    finally:
        again.stop()


@pytest.mark.parametrize("round_", range(3))
def test_a_server_killed_with_sigkill_restarts_on_its_port_at_once(tmp_path, round_):
    """A supervisor restarts a crashed server right away, on the same port. With the
    io_uring engine the kernel closes a killed process's listening sockets a few
    milliseconds after the process is gone: the new server found the port taken and
    exited (5 restarts in 6). It now waits up to a second for the port. Passes against
    Redis 7.0.15 too (BASALT_TEST_SERVER=redis-server)."""
    first = Server()
    port = first.port
    redis.Redis(port=port, socket_timeout=10).set("k", "v")
    first.proc.kill()
    first.proc.wait()
    extra = [] if "redis-server" in os.path.basename(_binary()) else os.environ.get("BASALT_SERVER_EXTRA", "").split()
    log = open(tmp_path / "restart.log", "wb")
    proc = subprocess.Popen([_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "", *extra],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    watchdog = _watchdog(proc.pid)
    try:
        deadline = time.monotonic() + 20
        up = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                up = redis.Redis(port=port, socket_timeout=2).ping()
                break
            except redis.ConnectionError:
                time.sleep(0.02)
        assert up, (tmp_path / "restart.log").read_text(errors="replace")
    finally:
        proc.kill()
        proc.wait()
        watchdog.kill()
        watchdog.wait()
        log.close()
        first.stop()
