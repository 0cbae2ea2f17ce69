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

With `--resync`, the load is a replica's second full sync, one that continues the
history it holds: once it has synced, its master drops it and outgrows its backlog in
one transaction, so that its PSYNC gets `+FULLRESYNC` with the same replication ID. The
replica has `repl-diskless-load` LOAD (`--load`; with `swapdb` it serves its old data
meanwhile, INFO `async_loading:1`, which counts as loading seen). Probed from the drop
until the master has made its second full sync and the replica's load is over, its
link up.

    python3 scripts/bench-replica-load.py --basalt target/release/basalt-server \
        [--redis /usr/bin/redis-server] [--keys 3000000] [--rounds 3] [--also LABEL=PATH]
        [--at-start | --resync [--load disabled|on-empty-db|swapdb] [--replica-args '...']]

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


def link_up(port):
    return b"master_link_status:up" in request(port, b"INFO", b"replication")[0]


def one_round_resync(binary, keys, load, replica_args=()):
    # A backlog that the transaction below outgrows.
    master = Proc(binary, "--repl-diskless-sync-delay", "0", "--repl-backlog-size", "16384")
    replica = Proc(binary, "--repl-diskless-load", load, *replica_args)
    try:
        reply, _ = request(master.port, b"DEBUG", b"POPULATE", str(keys).encode(), b"key", b"100", timeout=300)
        assert reply.startswith(b"+OK"), reply
        request(replica.port, b"REPLICAOF", b"127.0.0.1", str(master.port).encode())
        deadline = time.monotonic() + 300
        while not link_up(replica.port):
            assert time.monotonic() < deadline, "the first sync did not end"
            time.sleep(0.05)
        cmds = [(b"MULTI",), (b"CLIENT", b"KILL", b"TYPE", b"replica")]
        cmds += [(b"SET", b"pad:%d" % i, b"x" * 1024) for i in range(200)] + [(b"EXEC",)]
        with socket.create_connection(("127.0.0.1", master.port), timeout=60) as s:
            s.sendall(b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in c) for c in cmds))
            data = b""
            while b"\r\n*" not in data or data.count(b"+OK\r\n") < 201:
                chunk = s.recv(65536)
                assert chunk, "the master closed the connection"
                data += chunk
        def done(replies):
            if b"loading:1" in replies[b"INFO"]:  # loading:1 or async_loading:1
                return False
            stats = request(master.port, b"INFO", b"stats")[0]
            return b"sync_full:2\r\n" in stats and link_up(replica.port)
        return probe_until(replica.port, done)
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
    ap.add_argument("--resync", action="store_true", help="probe a replica's second full sync, of the same history")
    ap.add_argument("--load", default="disabled", choices=["disabled", "on-empty-db", "swapdb"],
                    help="the replica's repl-diskless-load under --resync")
    ap.add_argument("--replica-args", default="", help="more settings of the replica under --resync, e.g. '--replica-lazy-flush yes'")
    args = ap.parse_args()
    if args.at_start:
        measure = one_round_at_start
    elif args.resync:
        measure = lambda binary, keys: one_round_resync(binary, keys, args.load, args.replica_args.split())  # noqa: E731
    else:
        measure = one_round
    servers = [("Basalt", args.basalt), ("Redis 7.0.15", args.redis)]
    servers += [tuple(a.split("=", 1)) for a in args.also]
    results = {name: [] for name, _ in servers}
    for r in range(1, args.rounds + 1):
        for name, binary in servers:
            loading_s, worst, kinds = measure(binary, args.keys)
            results[name].append((loading_s, worst))
            slowest = ", ".join(f"{k.decode()} {v * 1000:.0f} ms" for k, v in worst.items())
            print(f"round {r} {name}: loading seen for {loading_s:.2f} s; errors {sorted(kinds)}; slowest replies: {slowest}", flush=True)
    where = ("the load at start" if args.at_start
             else f"a replica's second full sync of the same history, repl-diskless-load {args.load} {args.replica_args}".rstrip() if args.resync
             else "a replica's full-sync load")
    print(f"\n{where}, {args.keys} keys of 100 bytes; medians of {args.rounds} rounds\n")
    print("| server | loading seen (s) | slowest PING (ms) | slowest GET (ms) | slowest INFO (ms) | slowest ROLE (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, rows in results.items():
        med = lambda k: statistics.median(w[k] for _, w in rows) * 1000  # noqa: E731
        load = statistics.median(l for l, _ in rows)
        print(f"| {name} | {load:.2f} | {med(b'PING'):.0f} | {med(b'GET'):.0f} | {med(b'INFO'):.0f} | {med(b'ROLE'):.0f} |")


if __name__ == "__main__":
    main()
