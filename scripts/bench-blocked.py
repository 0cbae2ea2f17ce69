#!/usr/bin/env python3
"""Writes while many clients wait in BLPOP on other keys: Basalt against Redis 7.0.15.

A job-queue deployment keeps one blocked BLPOP per idle worker, each on its own key,
while the rest of the traffic writes elsewhere. For each server, in rounds interleaved
between the servers: start it, run redis-benchmark SET and LPUSH (-P 16) with no client
blocked, park N clients in BLPOP on distinct keys (timeout 60 s, so they leave by
themselves), run the same benchmark again, stop it. Prints each figure's median and
the ratio of Basalt to Redis.

    python3 scripts/bench-blocked.py --basalt target/release/basalt-server [--clients 2000] [--rounds 3]
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, port, folder):
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{binary} did not start")


def bench(port, tests, n):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", tests, "-n", str(n), "-c", "50", "-P", "16", "-q"],
                         capture_output=True, text=True, timeout=300).stdout
    figures = {}
    for part in out.replace("\r", "\n").splitlines():
        if "requests per second" in part:
            name, rest = part.split(":", 1)
            figures[name.strip()] = float(rest.split("requests per second")[0])
    return figures


def park(port, clients):
    socks = []
    for i in range(clients):
        s = socket.create_connection(("127.0.0.1", port))
        key = b"bench-blocked:%d" % i
        s.sendall(b"*3\r\n$5\r\nBLPOP\r\n$%d\r\n%s\r\n$2\r\n60\r\n" % (len(key), key))
        socks.append(s)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        info = subprocess.run(["redis-cli", "-p", str(port), "info", "clients"], capture_output=True, text=True).stdout
        if f"blocked_clients:{clients}" in info:
            return socks
        time.sleep(0.05)
    raise SystemExit("the clients did not all block")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default=os.path.join(REPO, "target/release/basalt-server"))
    ap.add_argument("--redis", default=shutil.which("redis-server"))
    ap.add_argument("--clients", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    a = ap.parse_args()
    results = {}
    for r in range(a.rounds):
        for name, binary in (("basalt", a.basalt), ("redis", a.redis)):
            folder = tempfile.mkdtemp(prefix="bench-blocked-")
            port = free_port()
            proc = start(binary, port, folder)
            try:
                for label, parked in (("none blocked", 0), (f"{a.clients} blocked", a.clients)):
                    socks = park(port, parked) if parked else []
                    for test, rps in bench(port, "set,lpush", a.requests).items():
                        results.setdefault((test, label, name), []).append(rps)
                    for s in socks:
                        s.close()
            finally:
                proc.kill()
                proc.wait()
                shutil.rmtree(folder, ignore_errors=True)
        print(f"round {r + 1} of {a.rounds} done", file=sys.stderr)
    print(f"| workload | clients blocked on other keys | Basalt | Redis | ratio |")
    print("|---|---|---|---|---|")
    for (test, label) in sorted({(t, l) for t, l, _ in results}):
        b = statistics.median(results[(test, label, "basalt")])
        rd = statistics.median(results[(test, label, "redis")])
        print(f"| {test} -P 16 | {label} | {b:,.0f} | {rd:,.0f} | {b / rd:.2f} |")


if __name__ == "__main__":
    main()
