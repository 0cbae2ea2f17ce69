#!/usr/bin/env python3
"""A replica's replies while it loads a full sync (issue 24): how long a client waits.

For each server (Basalt and Redis 7.0.15, interleaved round by round): a master holding
KEYS keys of 100 bytes (DEBUG POPULATE), a replica told REPLICAOF, and a prober that
sends PING, GET, INFO persistence and ROLE on fresh connections until the replica has
caught up. It prints, per round, the load's length (INFO `loading:1` first to last seen),
the replies seen during it and the slowest reply of each command; then the medians.

With `--at-start`, the load is the one at start instead: a server holding KEYS keys
saves them (SAVE) and stops; a server started on that folder is probed from its start
until it answers PING with PONG.

    python3 scripts/bench-replica-load.py --basalt target/release/basalt-server \
        [--redis /usr/bin/redis-server] [--keys 3000000] [--rounds 3] [--also LABEL=PATH]
        [--at-start]

Every server is started here on loopback ports, in a temporary folder, and killed by
its PID; each wait is bounded.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, *args, timeout=60.0):
    """One command on a fresh connection: (reply's first line, seconds waited)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        started = time.monotonic()
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        waited = time.monotonic() - started
        # INFO: the whole bulk, for its `loading:` line.
        if data.startswith(b"$"):
            size = int(data[1:data.index(b"\r\n")])
            while size >= 0 and len(data) < size + len(b"$\r\n\r\n") + len(str(size)):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data, waited


class Proc:
    def __init__(self, binary, *args, folder=None, wait=True):
        self.dir = folder or tempfile.mkdtemp(prefix="bench-replica-load-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "log"), "wb")
        self.p = subprocess.Popen([binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                                   "--save", "", "--enable-debug-command", "yes", *args],
                                  stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if not wait:
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if request(self.port, b"PING", timeout=1)[0].startswith(b"+PONG"):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{binary} did not start")

    def stop(self):
        self.p.kill()
        self.p.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def probe_until(port, done):
    """PING, GET, INFO persistence and ROLE on fresh connections, over and over, until
    `done(replies)` (bounded: 300 s): how long INFO said loading:1, the slowest reply
    of each command, the error replies seen."""
    worst = {}
    kinds = set()
    first = last = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        replies = {}
        try:
            for cmd in ((b"PING",), (b"GET", b"key:1"), (b"INFO", b"persistence"), (b"ROLE",)):
                reply, waited = request(port, *cmd)
                replies[cmd[0]] = reply
                worst[cmd[0]] = max(worst.get(cmd[0], 0.0), waited)
                if cmd[0] == b"INFO":
                    if b"loading:1" in reply:
                        now = time.monotonic()
                        first = first or now
                        last = now
                elif reply.startswith(b"-"):
                    kinds.add(reply.split(b"\r\n")[0].decode())
        except OSError:
            time.sleep(0.005)  # not listening yet
            continue
        if done(replies):
            break
        time.sleep(0.005)
    loading_s = (last - first) if first else 0.0
    return loading_s, worst, kinds


def one_round(binary, keys):
    master = Proc(binary, "--repl-diskless-sync-delay", "0")
    replica = Proc(binary)
    try:
        reply, _ = request(master.port, b"DEBUG", b"POPULATE", str(keys).encode(), b"key", b"100", timeout=300)
        assert reply.startswith(b"+OK"), reply
        request(replica.port, b"REPLICAOF", b"127.0.0.1", str(master.port).encode())
        # (A new replica's link is up only once its sync is done.)
        return probe_until(replica.port, lambda _: b"master_link_status:up" in request(replica.port, b"INFO", b"replication")[0])
    finally:
        replica.stop()
        master.stop()


def one_round_at_start(binary, keys):
    src = Proc(binary)
    folder = tempfile.mkdtemp(prefix="bench-load-at-start-")
    try:
        reply, _ = request(src.port, b"DEBUG", b"POPULATE", str(keys).encode(), b"key", b"100", timeout=300)
        assert reply.startswith(b"+OK"), reply
        reply, _ = request(src.port, b"SAVE", timeout=300)
        assert reply.startswith(b"+OK"), reply
        shutil.copy(os.path.join(src.dir, "dump.rdb"), folder)
    finally:
        src.stop()
    server = Proc(binary, folder=folder, wait=False)
    try:
        return probe_until(server.port, lambda replies: replies[b"PING"].startswith(b"+PONG"))
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", required=True)
    ap.add_argument("--redis", default=shutil.which("redis-server"))
    ap.add_argument("--keys", type=int, default=3000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=PATH",
                    help="another build to run beside them (e.g. basalt-cb7d8d8=/tmp/old/basalt-server)")
    ap.add_argument("--at-start", action="store_true", help="probe the load at start, not a replica's")
    args = ap.parse_args()
    measure = one_round_at_start if args.at_start else one_round
    servers = [("Basalt", args.basalt), ("Redis 7.0.15", args.redis)]
    servers += [tuple(a.split("=", 1)) for a in args.also]
    results = {name: [] for name, _ in servers}
    for r in range(1, args.rounds + 1):
        for name, binary in servers:
            loading_s, worst, kinds = measure(binary, args.keys)
            results[name].append((loading_s, worst))
            slowest = ", ".join(f"{k.decode()} {v * 1000:.0f} ms" for k, v in worst.items())
            print(f"round {r} {name}: loading seen for {loading_s:.2f} s; errors {sorted(kinds)}; slowest replies: {slowest}", flush=True)
    where = "the load at start" if args.at_start else "a replica's full-sync load"
    print(f"\n{where}, {args.keys} keys of 100 bytes; medians of {args.rounds} rounds\n")
    print("| server | loading seen (s) | slowest PING (ms) | slowest GET (ms) | slowest INFO (ms) | slowest ROLE (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, rows in results.items():
        med = lambda k: statistics.median(w[k] for _, w in rows) * 1000  # noqa: E731
        load = statistics.median(l for l, _ in rows)
        print(f"| {name} | {load:.2f} | {med(b'PING'):.0f} | {med(b'GET'):.0f} | {med(b'INFO'):.0f} | {med(b'ROLE'):.0f} |")


if __name__ == "__main__":
    main()
