#!/usr/bin/env python3
"""How long one write holds the server while a single collection grows large, Basalt
against Redis 7.0.15: loads N members into one set (SADD, 1,000 members a command) and
N/2 fields into one hash (HSET, 1,000 fields a command) on a fresh server each, with the
slow log recording every command over 2 ms, and prints how many commands went over and
the largest durations. A hash table that doubles in one step shows up as one very slow
command; Redis rehashes incrementally.

Usage: python3 scripts/bench-growth.py [N] [--server-bin PATH]   (N default 4,000,000)
Needs redis-server and the redis Python package (scripts/test.sh installs both).
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import redis

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, port):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            redis.Redis(port=port).ping()
            return proc
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"server did not start: {argv}")


def load(port, kind, n):
    r = redis.Redis(port=port)
    r.config_set("slowlog-max-len", 10000)
    r.config_set("slowlog-log-slower-than", 2000)
    r.slowlog_reset()
    started = time.monotonic()
    for base in range(0, n, 1000):
        if kind == "set":
            r.sadd("big", *[b"member:%d" % i for i in range(base, base + 1000)])
        else:
            r.hset("big", mapping={b"field:%d" % i: b"v" for i in range(base, base + 1000)})
    seconds = time.monotonic() - started
    durations = sorted((e["duration"] for e in r.slowlog_get(10000)
                        if e["command"].split()[0].lower() in (b"sadd", b"hset")), reverse=True)
    r.delete("big")
    return seconds, durations


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=4_000_000)
    ap.add_argument("--server-bin", default=os.path.join(REPO, "target/release/basalt-server"))
    args = ap.parse_args()
    work = tempfile.mkdtemp()
    procs = []
    try:
        rows = []
        for name in ("redis", "basalt"):
            for kind, n in (("set", args.n), ("hash", args.n // 2)):
                port = free_port()
                if name == "redis":
                    argv = [shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                            "--save", "", "--appendonly", "no", "--dir", work]
                else:
                    argv = [args.server_bin, "--port", str(port), "--threads", "1", "--dir", work]
                proc = start(argv, port)
                procs.append(proc)
                seconds, durations = load(port, kind, n)
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
                rows.append((name, f"{kind} of {n:,}", seconds, len(durations), durations[:5]))
        print("| server | collection | load s | commands over 2 ms | largest (us) |")
        print("|---|---|---:|---:|---|")
        for name, what, seconds, over, largest in rows:
            print(f"| {name} | {what} | {seconds:.1f} | {over} | {', '.join(f'{d:,}' for d in largest)} |")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
