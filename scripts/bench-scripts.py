#!/usr/bin/env python3
"""Scripts' throughput, Basalt and Redis 7.0.15 in one run, interleaved: redis-benchmark
running, with 50 clients,

- `EVAL` of a script that does one SET (`return redis.call('set', KEYS[1], ARGV[1])`),
- `EVALSHA` of the same script,
- `EVAL` of a read-only script with five GETs and a table built from them,
- plain `SET` as the yardstick (what a script's own SET costs without a script),

- `FCALL` of a function that does the same SET,

each ROUNDS times alternating the servers; medians of requests/s, and Basalt's ratio to
Redis, as a Markdown table. `--suite hll-geo` runs HyperLogLog and geospatial commands
instead: PFADD of random elements to one key, PFCOUNT of it (cached) and of two keys
(a union: 16,384 registers merged per call), GEOADD of random positions, and
GEOSEARCH BYRADIUS 5 km COUNT 10 ASC among 20,000 positions (about 40 in the circle).
`--suite streams` runs stream commands: XADD of a three-field entry (`*` IDs), XADD
with `MAXLEN ~ 1000`, and over a stream of 100,000 entries XRANGE and XREVRANGE of 10
entries from a random ID, and XREAD COUNT 10 after a random ID. A script runs alone (every event loop waits for it), so on
many cores scripts do not scale with loops as plain commands do: the SET row beside
them shows how much of a server's speed a script-heavy load keeps.

Every server runs on a free loopback port in its own temporary folder. Bounded: each
benchmark runs REQUESTS requests; each start waits 10 s at most. Kills only the
processes it started.

Usage: scripts/bench-scripts.py [--basalt target/release/basalt-server]
       [--redis redis-server] [--requests 200000] [--rounds 5] [--threads N]
       [--server-cpus 0] [--load-cpus 1] [--suite scripts|hll-geo|streams]
"""

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

SET_SCRIPT = "return redis.call('set', KEYS[1], ARGV[1])"
READ_SCRIPT = ("local t = {} for i = 1, 5 do t[i] = redis.call('get', KEYS[1] .. i) or false end "
               "return #t")
SET_LIBRARY = "#!lua name=bench\nredis.register_function('set1', function(keys, args) return redis.call('set', keys[1], args[1]) end)"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def command(port, *args):
    out = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=10)
    return out.stdout.strip()


def fill_stream(port, n):
    """`n` entries (IDs 1-0 .. n-0, three fields) in `big`, written in pipelined batches."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for lo in range(1, n + 1, 1000):
            batch = b"".join(
                b"*9\r\n$4\r\nXADD\r\n$3\r\nbig\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in (
                    b"%d-0" % i, b"sensor", b"s%d" % (i % 100), b"value", b"%d" % (i % 50), b"ts", b"%d" % (1700000000 + i)))
                for i in range(lo, min(lo + 1000, n + 1)))
            sock.sendall(batch)
            got = b""
            while got.count(b"\r\n") < 2 * min(1000, n + 1 - lo):
                got += sock.recv(65536)


def start(binary, args, cpus):
    folder = tempfile.mkdtemp(prefix="bench-scripts-")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "", *args]
    if cpus:
        argv = ["taskset", "-c", cpus, *argv]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if command(port, "ping") == "PONG":
                return proc, port, folder
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{binary} did not start")


def rps(port, requests, cpus, args):
    argv = ["redis-benchmark", "-p", str(port), "-c", "50", "-n", str(requests), "-r", "100000", "-q", *args]
    if cpus:
        argv = ["taskset", "-c", cpus, *argv]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
    # "NAME: 123456.79 requests per second, p50=0.239 msec" (the last progress line wins)
    figures = [float(part.split(" requests per second")[0].split()[-1])
               for part in out.replace("\r", "\n").splitlines() if "requests per second" in part]
    return figures[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--basalt", default="target/release/basalt-server")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="Basalt's event loops (default: its own)")
    ap.add_argument("--server-cpus", default="")
    ap.add_argument("--load-cpus", default="")
    ap.add_argument("--suite", choices=["scripts", "hll-geo", "streams"], default="scripts")
    a = ap.parse_args()
    basalt_args = ["--threads", str(a.threads)] if a.threads else []
    servers = {}
    try:
        servers["Basalt"] = start(a.basalt, basalt_args, a.server_cpus)
        servers["Redis 7.0.15"] = start(a.redis, [], a.server_cpus)
        sha = {}
        for name, (_, port, _) in servers.items():
            sha[name] = command(port, "script", "load", SET_SCRIPT)
            command(port, "function", "load", SET_LIBRARY)
            command(port, "pfadd", "hll2", *(str(i) for i in range(5000)))
            # 20,000 positions over about 170 x 220 km around Sicily (about 40 within
            # 5 km of the search's centre).
            rng = random.Random(7)
            points = [f"{v:.6f}" if j < 2 else f"p{i}" for i in range(20000) for j, v in
                      enumerate((rng.uniform(12.5, 14.5), rng.uniform(37.5, 39.5), 0))]
            command(port, "geoadd", "geo", *points)
            if a.suite == "streams":
                fill_stream(port, 100000)
        if a.suite == "scripts":
            tests = {
                "EVAL, one SET": lambda name: ["eval", SET_SCRIPT, "1", "key:__rand_int__", "v"],
                "EVALSHA, one SET": lambda name: ["evalsha", sha[name], "1", "key:__rand_int__", "v"],
                "EVAL, five GETs": lambda name: ["eval", READ_SCRIPT, "1", "key:__rand_int__"],
                "FCALL, one SET": lambda name: ["fcall", "set1", "1", "key:__rand_int__", "v"],
                "SET (no script)": lambda name: ["set", "key:__rand_int__", "v"],
            }
        elif a.suite == "streams":
            tests = {
                "XADD *, three fields": lambda name: ["xadd", "s_w", "*", "sensor", "s:__rand_int__", "value", "21.5", "ts", "1700000000"],
                "XADD MAXLEN ~ 1000": lambda name: ["xadd", "s_cap", "maxlen", "~", "1000", "*", "f", "v:__rand_int__"],
                "XRANGE, 10 entries": lambda name: ["xrange", "big", "__rand_int__", "+", "count", "10"],
                "XREVRANGE, 10 entries": lambda name: ["xrevrange", "big", "__rand_int__", "-", "count", "10"],
                "XREAD COUNT 10": lambda name: ["xread", "count", "10", "streams", "big", "__rand_int__"],
            }
        else:
            tests = {
                "PFADD, one key": lambda name: ["pfadd", "hll", "e:__rand_int__"],
                "PFCOUNT, one key": lambda name: ["pfcount", "hll"],
                "PFCOUNT, two keys": lambda name: ["pfcount", "hll", "hll2"],
                "GEOADD": lambda name: ["geoadd", "geo_w", "13.__rand_int__", "38.__rand_int__", "m:__rand_int__"],
                "GEOSEARCH, 5 km, COUNT 10": lambda name: ["geosearch", "geo", "fromlonlat", "13.5", "38.5", "byradius", "5", "km", "count", "10", "asc"],
            }
        results = {(t, n): [] for t in tests for n in servers}
        for _ in range(a.rounds):
            for test, argv in tests.items():
                for name, (_, port, _) in servers.items():
                    results[(test, name)].append(rps(port, a.requests, a.load_cpus, argv(name)))
        names = list(servers)
        print(f"| 50 clients, {a.requests} requests, {a.rounds} rounds | " + " | ".join(f"{n} req/s (median)" for n in names) + " | Basalt / Redis |")
        print("|---|" + "---|" * (len(names) + 1))
        for test in tests:
            med = [statistics.median(results[(test, n)]) for n in names]
            print(f"| {test} | " + " | ".join(f"{m:,.0f}" for m in med) + f" | {med[0] / med[1]:.2f} |")
    finally:
        for proc, _, folder in servers.values():
            proc.kill()
            proc.wait()
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
