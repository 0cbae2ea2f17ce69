"""Redis 7.0.15's configuration, as a user moving to Basalt brings it.

- Every parameter Redis 7.0.15 writes into a configuration file (DEBUG
  CONFIG-REWRITE-FORCE-ALL: all of them, at their defaults, hidden ones included) is
  one the server under test starts with, and CONFIG GET * names every parameter of
  Redis's, with Redis's defaults.
- CONFIG SET checks values as Redis does: the same errors for the same bad values.

Needs redis-server (REDIS_SERVER_BIN, else the one on PATH); skipped without one.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import _binary


def redis_binary():
    return os.environ.get("REDIS_SERVER_BIN", "").strip() or shutil.which("redis-server")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ping(port, proc, log):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the server exited with {proc.returncode}:\n{open(log).read()[-3000:]}")
        try:
            if redis.Redis(port=port, socket_timeout=1).ping():
                return
        except redis.exceptions.RedisError:
            time.sleep(0.05)
    pytest.fail("the server did not answer PING")


def test_a_config_file_with_every_redis_parameter_starts_the_server():
    rbin = redis_binary()
    if not rbin:
        pytest.skip("needs redis-server")
    with tempfile.TemporaryDirectory(prefix="config-file-") as d:
        # Redis writes every parameter it has into its configuration file.
        conf = os.path.join(d, "redis.conf")
        port = free_port()
        with open(conf, "w") as f:
            f.write(f"port {port}\nbind 127.0.0.1\nenable-debug-command yes\ndir {d}\nsave \"\"\n")
        proc = subprocess.Popen([rbin, conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ping(port, proc, conf)
            r = redis.Redis(port=port, socket_timeout=10)
            assert r.execute_command("DEBUG", "CONFIG-REWRITE-FORCE-ALL") == b"OK"
            wanted = {k: v for k, v in r.config_get("*").items() if k not in ("port", "dir")}
        finally:
            proc.kill()
            proc.wait()
        lines = open(conf).read().splitlines()
        assert len(lines) > 150, lines
        # That file starts the server under test, on a port of its own.
        port = free_port()
        with open(conf, "w") as f:
            f.write("\n".join(f"port {port}" if line.startswith("port ") else line for line in lines) + "\n")
        log = os.path.join(d, "server.log")
        with open(log, "wb") as out:
            proc = subprocess.Popen([os.path.abspath(_binary()), conf], cwd=d, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_ping(port, proc, log)
            got = redis.Redis(port=port, socket_timeout=10, decode_responses=True).config_get("*")
            missing = sorted(set(wanted) - set(got))
            assert not missing, f"CONFIG GET * lacks {missing}"
            differ = {k: (got[k], v) for k, v in wanted.items() if got[k] != v}
            assert not differ, f"(ours, Redis's): {differ}"
        finally:
            proc.kill()
            proc.wait()


BAD_VALUES = [
    ("maxmemory-clients", "x"), ("maxmemory-clients", "101%"), ("maxmemory-clients", "-1"), ("maxmemory-clients", "50%"),
    ("active-expire-effort", "11"), ("active-defrag-cycle-max", "100"), ("active-defrag-cycle-min", "0"),
    ("active-defrag-threshold-lower", "1001"), ("active-defrag-max-scan-fields", "0"), ("active-defrag-ignore-bytes", "0"),
    ("cluster-node-timeout", "-1"), ("cluster-migration-barrier", "-1"), ("cluster-link-sendbuf-limit", "-1"),
    ("socket-mark-id", "1"), ("propagation-error-behavior", "x"), ("sanitize-dump-payload", "x"),
    ("cluster-preferred-endpoint-type", "x"), ("cluster-replica-validity-factor", "-1"), ("io-threads", "2"),
    ("cluster-announce-port", "70000"), ("unixsocket", "/tmp/x.sock"), ("supervised", "systemd"),
    ("slave-priority", "-1"), ("slave-read-only", "maybe"), ("crash-log-enabled", "x"), ("sanitize-dump-payload", "clients"),
]


def test_config_set_checks_values_as_redis_does(pair_of_servers):
    basalt_srv, redis_srv = pair_of_servers
    differences = []
    for name, value in BAD_VALUES:
        replies = []
        for srv in (basalt_srv, redis_srv):
            try:
                replies.append(redis.Redis(port=srv.port).execute_command("CONFIG", "SET", name, value))
            except redis.ResponseError as e:
                replies.append(str(e))
        if replies[0] != replies[1]:
            differences.append(f"CONFIG SET {name} {value}: basalt {replies[0]!r}, redis {replies[1]!r}")
    assert not differences, "\n".join(differences)
