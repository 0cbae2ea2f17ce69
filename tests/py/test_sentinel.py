"""Redis Sentinel (Debian's redis-sentinel, run as `redis-server --sentinel`) managing a
master and two replicas of the server under test (issue 24): three sentinels see the
group; when the master is killed (SIGKILL), frozen (SIGSTOP) or cut off from the others
(a relay between them cut) a replica is promoted and the other follows it; every write
that WAIT acknowledged before the failover is on the new master; stopped for a planned
restart (SIGTERM), it waits for its replicas first, and every write it acknowledged is
on the new master, WAIT or not; the old master, back, becomes a replica of the new one.
A master whose
log commits are slow (DEBUG AOF-FLUSH-SLEEP) still answers Sentinel, which does not
fail it over. Bounded in time; passes with Redis as the server too.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import Server, _free_port, _watchdog, _ready
from relay import Relay

NAME = "mymaster"
DOWN_AFTER_MS = 2000


def sentinel_binary():
    path = os.environ.get("REDIS_SERVER_BIN", "").strip() or shutil.which("redis-server")
    if not path:
        pytest.skip("needs redis-server (run as redis-sentinel)")
    return path


class Sentinels:
    """Three sentinels watching `master_port`, each with its own config file."""

    def __init__(self, master_port):
        self.dir = tempfile.TemporaryDirectory(prefix="basalt-sentinel-")
        self.procs, self.watchdogs, self.ports = [], [], []
        for i in range(3):
            port = _free_port()
            conf = os.path.join(self.dir.name, f"sentinel-{i}.conf")
            with open(conf, "w") as f:
                f.write(f"port {port}\nbind 127.0.0.1\ndir {self.dir.name}\n"
                        f"sentinel monitor {NAME} 127.0.0.1 {master_port} 2\n"
                        f"sentinel down-after-milliseconds {NAME} {DOWN_AFTER_MS}\n"
                        f"sentinel failover-timeout {NAME} 10000\n"
                        f"sentinel parallel-syncs {NAME} 1\n")
            log = open(os.path.join(self.dir.name, f"sentinel-{i}.log"), "wb")
            p = subprocess.Popen([sentinel_binary(), conf, "--sentinel"], stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=subprocess.STDOUT)
            log.close()
            self.procs.append(p)
            self.watchdogs.append(_watchdog(p.pid))
            self.ports.append(port)
        deadline = time.monotonic() + 10
        while not all(_ready(p) for p in self.ports):
            assert time.monotonic() < deadline, "sentinels did not start"
            time.sleep(0.05)

    def client(self, i=0):
        return redis.Redis(port=self.ports[i], socket_timeout=5, decode_responses=True)

    def master_addr(self):
        addr = self.client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
        return int(addr[1]) if addr else None

    def sees_group(self, replicas):
        for i in range(3):
            m = self.client(i).execute_command("SENTINEL", "MASTER", NAME)
            info = dict(zip(m[::2], m[1::2]))
            if int(info["num-slaves"]) != replicas or int(info["num-other-sentinels"]) != 2:
                return False
            if "s_down" in info["flags"] or "o_down" in info["flags"]:
                return False
        return True

    def log(self):
        out = []
        for i in range(3):
            with open(os.path.join(self.dir.name, f"sentinel-{i}.log")) as f:
                out.append(f.read())
        return "\n".join(out)

    def stop(self):
        for p, w in zip(self.procs, self.watchdogs):
            w.kill()
            w.wait()
            if p.poll() is None:
                p.kill()
            p.wait()
        self.dir.cleanup()


def wait_until(what, check, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except redis.RedisError:
            pass
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def role(port):
    return redis.Redis(port=port, socket_timeout=2).execute_command("ROLE")


def linked_to(port, master_port):
    r = role(port)
    return r[0] == b"slave" and r[2] == master_port and r[3] == b"connected"


class Group:
    """A master and two replicas of the server under test, watched by three sentinels.
    With `via_proxy`, the replicas and the sentinels reach the master through a Relay
    (so that it can be cut off from them while it runs)."""

    def __init__(self, extra=(), via_proxy=False):
        extra = ("--repl-diskless-sync-delay", "0", *extra)
        self.extra = extra
        self.master = Server(extra=extra)
        self.proxy = Relay(self.master.port) if via_proxy else None
        front = self.proxy.port if via_proxy else self.master.port
        self.replicas = [Server(extra=("--replicaof", "127.0.0.1", str(front), *extra)) for _ in range(2)]
        self.servers = {s.port: s for s in [self.master, *self.replicas]}
        wait_until("replicas linked", lambda: all(linked_to(s.port, front) for s in self.replicas), 20)
        self.sentinels = Sentinels(front)
        wait_until("sentinels to see the group", lambda: self.sentinels.sees_group(2), 30)

    def stop(self):
        if self.proxy:
            self.proxy.stop()
        self.sentinels.stop()
        for s in self.servers.values():
            if s.proc.poll() is None:
                os.kill(s.proc.pid, signal.SIGCONT)
            s.stop()


class AckedWriter(threading.Thread):
    """SET then WAIT 1, through redis-py's Sentinel client; records every key that WAIT
    acknowledged (with `wait=False`, every key whose SET was acknowledged). Bounded by
    `stop` and 120 s. Its keys are `<prefix>:<n>`: writers of one group need prefixes of
    their own, or a key one lost could be found there from another's write."""

    def __init__(self, sentinel_ports, prefix="acked", wait=True):
        super().__init__(daemon=True)
        self.sentinel = Sentinel([("127.0.0.1", p) for p in sentinel_ports], socket_timeout=1)
        self.prefix = prefix
        self.wait = wait
        self.acked, self.errors, self.stop = [], 0, threading.Event()

    def run(self):
        deadline = time.monotonic() + 120
        i = 0
        while not self.stop.is_set() and time.monotonic() < deadline:
            key = f"{self.prefix}:{i}"
            i += 1
            try:
                m = self.sentinel.master_for(NAME, socket_timeout=1)
                m.set(key, i)
                if not self.wait or m.execute_command("WAIT", 1, 500) >= 1:
                    self.acked.append(key)
            except redis.RedisError:
                self.errors += 1
                time.sleep(0.05)


# How a master goes away: killed, frozen, or stopped as for a planned restart (SIGTERM:
# it waits for its replicas first, so even writes no WAIT covered must survive).
SIGNALS = {"kill": signal.SIGKILL, "stop": signal.SIGSTOP, "term": signal.SIGTERM}


def fail_over(group, how, master=None, prefix="acked"):
    """Kills, freezes or stops the master (`how`; `master`, the group's first by
    default) while an acked writer (keys `<prefix>:<n>`; WAIT 1 after each SET, except
    for a planned stop) runs; returns (new master port, writer, seconds to the
    promotion)."""
    master = master or group.master
    old = master.port
    writer = AckedWriter(group.sentinels.ports, prefix, wait=how != "term")
    writer.start()
    wait_until("acknowledged writes", lambda: len(writer.acked) >= 20, 20)
    os.kill(master.proc.pid, SIGNALS[how])
    started = time.monotonic()
    wait_until("a promotion", lambda: group.sentinels.master_addr() not in (None, old), 30)
    took = time.monotonic() - started
    new = group.sentinels.master_addr()
    acked_before = len(writer.acked)
    wait_until("writes through the new master", lambda: len(writer.acked) >= acked_before + 20, 30)
    writer.stop.set()
    writer.join(timeout=10)
    return new, writer, took


@pytest.mark.parametrize("how", ["kill", "stop", "term"])
def test_sentinel_fails_over_and_no_acknowledged_write_is_lost(how):
    group = Group()
    try:
        old = group.master.port
        new, writer, took = fail_over(group, how)
        assert new in [s.port for s in group.replicas], group.sentinels.log()[-3000:]
        # Promoted within down-after plus a few seconds of Sentinel's own steps.
        assert took < DOWN_AFTER_MS / 1000 + 15, took
        m = redis.Redis(port=new, socket_timeout=5)
        missing = [k for k in writer.acked if m.get(k) is None]
        assert missing == [], f"{len(missing)} acknowledged writes lost of {len(writer.acked)}"
        other = [s.port for s in group.replicas if s.port != new][0]
        wait_until("the other replica to follow", lambda: linked_to(other, new), 30)
        r = redis.Redis(port=other, socket_timeout=5)
        m.set("last", "v")
        assert m.execute_command("WAIT", 1, 5000) >= 1
        assert r.get("last") == b"v"

        # The old master comes back and is made a replica of the new one.
        if how in ("kill", "term"):
            group.servers[old].stop()
            group.servers[old] = Server(port=old, extra=group.extra)
        else:
            os.kill(group.master.proc.pid, signal.SIGCONT)
        wait_until("the old master to rejoin as a replica", lambda: linked_to(old, new), 40)
        assert redis.Redis(port=old, socket_timeout=5).get("last") == b"v"
    finally:
        group.stop()


def test_a_master_cut_off_is_failed_over_and_what_it_took_alone_was_never_acknowledged():
    """A network partition: the replicas and the sentinels reach the master through a
    relay that is cut, while a client connected to it directly goes on writing. Sentinel
    promotes a replica; every write WAIT acknowledged is on it; the writes the isolated
    master took get WAIT 0 (no replica had them), and are gone once the partition heals
    and Sentinel turns the old master into a replica of the new one."""
    group = Group(via_proxy=True)
    try:
        front = group.proxy.port
        writer = AckedWriter(group.sentinels.ports)
        writer.start()
        wait_until("acknowledged writes", lambda: len(writer.acked) >= 20, 20)
        direct = redis.Redis(port=group.master.port, socket_timeout=5)
        group.proxy.cut()
        direct.set("isolated", "v")
        assert direct.execute_command("WAIT", 1, 300) == 0
        wait_until("a promotion", lambda: group.sentinels.master_addr() not in (None, front), 30)
        new = group.sentinels.master_addr()
        n = len(writer.acked)
        wait_until("writes through the new master", lambda: len(writer.acked) >= n + 20, 30)
        writer.stop.set()
        writer.join(timeout=10)
        m = redis.Redis(port=new, socket_timeout=5)
        missing = [k for k in writer.acked if m.get(k) is None]
        assert missing == [], f"{len(missing)} acknowledged writes lost of {len(writer.acked)}"
        assert m.get("isolated") is None
        group.proxy.heal()
        wait_until("the old master to rejoin as a replica", lambda: linked_to(group.master.port, new), 40)
        assert direct.get("isolated") is None
    finally:
        group.stop()


def test_a_slow_log_does_not_make_sentinel_fail_the_master_over():
    if os.path.basename(os.environ.get("BASALT_TEST_SERVER", "")) == "redis-server":
        pytest.skip("DEBUG AOF-FLUSH-SLEEP is Basalt's")
    group = Group(extra=("--appendonly", "yes", "--appendfsync", "always"))
    try:
        m = redis.Redis(port=group.master.port, socket_timeout=10)
        # Every write of the log takes a second: writes wait, PING and INFO do not.
        m.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 1000000)
        stop = threading.Event()

        def writer():
            c = redis.Redis(port=group.master.port, socket_timeout=10)
            deadline = time.monotonic() + 30
            i = 0
            while not stop.is_set() and time.monotonic() < deadline:
                c.set(f"slow:{i}", i)
                i += 1

        threads = [threading.Thread(target=writer, daemon=True) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(3 * DOWN_AFTER_MS / 1000)
        assert group.sentinels.master_addr() == group.master.port
        assert "+sdown master" not in group.sentinels.log()
        stop.set()
        m.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 0)
        for t in threads:
            t.join(timeout=15)
    finally:
        group.stop()
