"""Fixtures for the redis-py smoke suite.

Server selection (same as the Rust black-box harness):
- BASALT_TEST_ADDR=host:port: use an already running server, spawn nothing.
  Tests that need a server of their own then use database 9 (flushed
  first), and tests that need special start flags are skipped.
- BASALT_TEST_SERVER=/path/to/binary: spawn that binary (e.g. redis-server).
- otherwise spawn BASALT_SERVER_BIN, default <repo>/target/debug/basalt-server.
- BASALT_SERVER_EXTRA: flags added to every server under test the suite spawns (not to
  a Redis a test starts beside it), e.g. "--io-engine epoll --threads 3".

Spawned servers get: --port P --bind 127.0.0.1 --dir <tmp>
--enable-debug-command yes --save "" and are killed by PID at the end. A small
sh watchdog also kills them if this Python process dies without cleanup.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPAWN_TIMEOUT = 10.0
EXTERNAL_EXCLUSIVE_DB = 9


def _binary():
    for var in ("BASALT_TEST_SERVER", "BASALT_SERVER_BIN"):
        v = os.environ.get(var, "").strip()
        if v:
            return v
    return os.path.join(REPO, "target", "debug", "basalt-server")


def _external():
    a = os.environ.get("BASALT_TEST_ADDR", "").strip()
    if not a:
        return None
    host, port = a.rsplit(":", 1)
    return host, int(port)


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _ready(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.settimeout(0.5)
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            data = s.recv(64)
            return data.startswith(b"+PONG") or data.startswith(b"-NOAUTH")
    except OSError:
        return False


class Server:
    def __init__(self, extra=(), binary=None, port=None):
        if binary is None:
            # BASALT_SERVER_EXTRA: flags for every server under test (not for a Redis
            # the test starts beside it), e.g. "--io-engine epoll --threads 3".
            extra = (*extra, *os.environ.get("BASALT_SERVER_EXTRA", "").split())
        binary = binary or _binary()
        if not os.path.exists(binary):
            pytest.fail(f"server binary not found: {binary} (build it or set BASALT_TEST_SERVER)")
        last = ""
        for _attempt in range(3):
            self.dir = tempfile.TemporaryDirectory(prefix="basalt-py-")
            self.port = port or _free_port()
            log = open(os.path.join(self.dir.name, "server.log"), "wb")
            args = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                    "--dir", self.dir.name, "--enable-debug-command", "yes",
                    "--save", "", *extra]
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
            log.close()
            self.watchdog = _watchdog(self.proc.pid)
            deadline = time.monotonic() + SPAWN_TIMEOUT
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if _ready(self.port):
                    return
                time.sleep(0.025)
            with open(os.path.join(self.dir.name, "server.log"), "rb") as f:
                last = f.read().decode(errors="replace")
            self.stop()
        pytest.fail(f"could not start {binary}:\n{last}")

    def stop(self):
        if self.watchdog is not None:
            self.watchdog.kill()
            self.watchdog.wait()
            self.watchdog = None
        if self.proc.poll() is None:
            self.proc.kill()  # SIGKILL to this PID
        self.proc.wait()
        self.dir.cleanup()


def _watchdog(pid):
    me = os.getpid()
    script = (f"i=0; while [ $i -lt 21600 ] && kill -0 {me} 2>/dev/null && kill -0 {pid} 2>/dev/null; "
              f"do sleep 0.5; i=$((i+1)); done; kill -9 {pid} 2>/dev/null; exit 0")
    return subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Target:
    """Where a test connects: host, port and database."""

    def __init__(self, host, port, db=0):
        self.host, self.port, self.db = host, port, db

    def client(self, **kw):
        kw.setdefault("socket_timeout", 5)
        return redis.Redis(host=self.host, port=self.port, db=self.db, **kw)


@pytest.fixture(scope="session")
def shared_target():
    ext = _external()
    if ext:
        yield Target(*ext)
        return
    srv = Server()
    try:
        yield Target("127.0.0.1", srv.port)
    finally:
        srv.stop()


@pytest.fixture
def own_target():
    """A server the test may treat as empty and its own."""
    ext = _external()
    if ext:
        t = Target(*ext, db=EXTERNAL_EXCLUSIVE_DB)
        c = t.client()
        c.flushdb()
        c.close()
        yield t
        return
    srv = Server()
    try:
        yield Target("127.0.0.1", srv.port)
    finally:
        srv.stop()


@pytest.fixture
def spawn():
    """Factory for servers started with extra flags (skipped with BASALT_TEST_ADDR)."""
    if _external():
        pytest.skip("needs a server started with extra flags")
    servers = []

    def make(*extra):
        s = Server(extra)
        servers.append(s)
        return Target("127.0.0.1", s.port)

    yield make
    for s in servers:
        s.stop()


@pytest.fixture
def prefix(request):
    """Key prefix unique to the test."""
    return f"py:{request.node.name}:"


@pytest.fixture
def r(shared_target):
    c = shared_target.client()
    yield c
    c.close()


@pytest.fixture
def rd(shared_target):
    c = shared_target.client(decode_responses=True)
    yield c
    c.close()


# Basalt and Redis 7.0.15 side by side (the differential and interop tests).
@pytest.fixture
def pair_of_servers():
    if _external():
        pytest.skip("this test starts its own Basalt and Redis")
    redis_bin = os.environ.get("REDIS_SERVER_BIN", "").strip() or shutil.which("redis-server")
    if not redis_bin:
        pytest.skip("no redis-server to compare with (set REDIS_SERVER_BIN or install redis-server)")
    basalt = Server()
    try:
        redis_srv = Server(binary=redis_bin)
    except BaseException:
        basalt.stop()
        raise
    try:
        yield basalt, redis_srv
    finally:
        basalt.stop()
        redis_srv.stop()
