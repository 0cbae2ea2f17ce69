#!/usr/bin/env python3
"""Replication figures of issue 24, Basalt and Redis 7.0.15 in one run, interleaved:

1. Full sync: a master holding KEYS keys of 100-byte values (DEBUG POPULATE), a fresh
   replica of the same server told REPLICAOF; seconds from the command until the
   replica's link is up with every key (disk-less, both servers' default, with
   `repl-diskless-sync-delay 0`).
2. CPU per SET on the master: `redis-benchmark -t set -P 16` (`--pipeline`) against the
   master alone, then with one replica attached; the master's CPU time (utime+stime)
   per request, and the ratio of the two. On a machine whose CPUs the master shares
   with its replica and the load generator, the replica's share slows the load, and a
   master serving smaller batches spends more per request: that is in the ratio too.
3. Replica lag under that load: the largest gap between the master's offset and the
   replica's, sampled every 50 ms, and how long the replica takes to catch up once the
   benchmark ends.

Every server runs on a free loopback port in its own temporary folder, each measure
ROUNDS times alternating Basalt and Redis; medians are printed as a Markdown table.
Bounded: each wait stops after 120 s. Kills only the processes it started.

Usage: scripts/bench-replication.py [--basalt target/release/basalt-server]
       [--redis redis-server] [--keys 1000000] [--requests 2000000] [--rounds 3]
       [--pipeline 16] [--skip-sync] [--syscalls]
       [--master-cpus 0-3] [--replica-cpus 4-7] [--load-cpus 8-15]
       [--replica-args "--appendonly yes --appendfsync everysec"]
       [--master-args "--appendonly yes --appendfsync always"]

`--syscalls` also counts the master's system calls per SET alone and with its replica
(`perf stat -e raw_syscalls:sys_enter`, needs perf and tracepoint access): counts, not
times, so they compare two builds on a host whose CPU time per request moves by tens
of percent between rounds.

`--master-cpus`, `--replica-cpus` and `--load-cpus` pin the master of the CPU measure,
its replica and redis-benchmark (taskset -c; each where given): on a many-core machine,
three sets of their own measure a master whose replica has other cores, as in a
deployment. On 2 vCPUs, pinning the replica beside the load generator (0 / 1 / 1) slows
the load while the replica runs, and the master, served smaller batches, spends more
per request: 2026-11-27, Basalt 1.44 (1.31-1.72), Redis 1.37 (1.22-1.44) against 1.20
and 1.30 unpinned. The load's pace is part of every such ratio.
"""

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CLK = os.sysconf("SC_CLK_TCK")
# taskset prefixes of the CPU measure's master, replica and load generator (empty: none).
MASTER_PIN, REPLICA_PIN, LOAD_PIN = [], [], []
# Options of the CPU measure's replica (--replica-args) and master (--master-args).
REPLICA_ARGS = ()
MASTER_ARGS = ()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cli(port, *args, timeout=120):
    r = subprocess.run(["redis-cli", "-p", str(port), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return r.stdout.strip()


def info(port, section):
    out = {}
    for line in cli(port, "INFO", section).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


class Server:
    def __init__(self, binary, kind, extra=(), pin=()):
        self.dir = tempfile.mkdtemp(prefix="bench-repl-")
        self.port = free_port()
        # Both disk-less (the default of both), without the 5 s wait for more replicas.
        args = [*pin, binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir, "--save", "",
                "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0", *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while cli(self.port, "PING") != "PONG":
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"{binary} did not start")
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait(what, check, timeout=120):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out: {what}")
        time.sleep(0.01)


def full_sync(binary, kind, keys):
    m, r = Server(binary, kind), Server(binary, kind)
    try:
        cli(m.port, "DEBUG", "POPULATE", keys, "key", 100)
        start = time.monotonic()
        cli(r.port, "REPLICAOF", "127.0.0.1", m.port)
        wait("the sync", lambda: info(r.port, "replication").get("master_link_status") == "up"
             and cli(r.port, "DBSIZE") == str(keys))
        return time.monotonic() - start
    finally:
        r.stop()
        m.stop()


PIPELINE = 16
SYSCALLS = False


class SyscallCount:
    """The system calls process `pid` makes while the block runs (perf stat); `count`
    is None when perf could not count them."""

    def __init__(self, pid):
        self.pid, self.count, self.proc = pid, None, None

    def __enter__(self):
        if SYSCALLS:
            self.proc = subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", str(self.pid)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.send_signal(signal.SIGINT)
            err = self.proc.communicate(timeout=30)[1]
            first = next((line for line in err.splitlines() if line[:1].isdigit()), None)
            self.count = int(first.split(",")[0]) if first else None
        return False


def per(count, requests):
    return None if count is None else count / requests


def bench_set(port, requests):
    subprocess.run([*LOAD_PIN, "redis-benchmark", "-p", str(port), "-t", "set", "-P", str(PIPELINE), "-n", str(requests),
                    "-r", "100000", "-d", "100", "-c", "50", "-q"], capture_output=True, timeout=600)


def cpu_per_set(binary, kind, requests):
    """(µs per SET alone, µs per SET with a replica, max byte lag, catch-up seconds,
    system calls per SET alone and with a replica or None)."""
    m = Server(binary, kind, extra=MASTER_ARGS, pin=MASTER_PIN)
    r = None
    try:
        bench_set(m.port, requests // 10)  # warm up
        c0 = cpu_seconds(m.proc.pid)
        with SyscallCount(m.proc.pid) as calls_alone:
            bench_set(m.port, requests)
        alone = (cpu_seconds(m.proc.pid) - c0) / requests * 1e6
        r = Server(binary, kind, extra=REPLICA_ARGS, pin=REPLICA_PIN)
        cli(r.port, "REPLICAOF", "127.0.0.1", m.port)
        wait("the replica", lambda: info(r.port, "replication").get("master_link_status") == "up")
        lag = [0]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                mo = int(info(m.port, "replication").get("master_repl_offset", 0))
                ro = int(info(r.port, "replication").get("slave_repl_offset", 0))
                lag[0] = max(lag[0], mo - ro)
                time.sleep(0.05)

        t = threading.Thread(target=sample, daemon=True)
        t.start()
        c0 = cpu_seconds(m.proc.pid)
        with SyscallCount(m.proc.pid) as calls_with:
            bench_set(m.port, requests)
        with_replica = (cpu_seconds(m.proc.pid) - c0) / requests * 1e6
        ended = time.monotonic()
        stop.set()
        t.join()
        target = int(info(m.port, "replication")["master_repl_offset"])
        wait("the replica to catch up", lambda: int(info(r.port, "replication").get("slave_repl_offset", 0)) >= target)
        return (alone, with_replica, lag[0], time.monotonic() - ended,
                per(calls_alone.count, requests), per(calls_with.count, requests))
    finally:
        if r:
            r.stop()
        m.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt-server")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=2000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pipeline", type=int, default=16, help="redis-benchmark -P of the CPU measure")
    ap.add_argument("--skip-sync", action="store_true", help="no full-sync measure")
    ap.add_argument("--syscalls", action="store_true", help="also count the master's system calls per SET (perf)")
    ap.add_argument("--master-cpus", default="", help="CPU list of the CPU measure's master (taskset -c)")
    ap.add_argument("--replica-cpus", default="", help="CPU list of its replica")
    ap.add_argument("--load-cpus", default="", help="CPU list of redis-benchmark")
    ap.add_argument("--replica-args", default="",
                    help="options of the CPU measure's replica, both servers (e.g. \"--appendonly yes\": its own log of the stream)")
    ap.add_argument("--master-args", default="",
                    help="options of the CPU measure's master, both servers (e.g. \"--appendonly yes --appendfsync always\": the stream leaves once its log holds it)")
    a = ap.parse_args()
    global PIPELINE, SYSCALLS, MASTER_PIN, REPLICA_PIN, LOAD_PIN, REPLICA_ARGS, MASTER_ARGS
    REPLICA_ARGS = tuple(a.replica_args.split())
    MASTER_ARGS = tuple(a.master_args.split())
    PIPELINE = a.pipeline
    SYSCALLS = a.syscalls
    pin = lambda cpus: ["taskset", "-c", cpus] if cpus else []
    MASTER_PIN, REPLICA_PIN, LOAD_PIN = pin(a.master_cpus), pin(a.replica_cpus), pin(a.load_cpus)
    servers = [("Basalt", a.basalt, "basalt"), ("Redis 7.0.15", a.redis, "redis")]
    keys = ("sync", "alone", "with", "lag", "catch", "calls_alone", "calls_with")
    res = {name: {k: [] for k in keys} for name, _, _ in servers}
    for rnd in range(a.rounds):
        for name, binary, kind in servers:
            s = 0.0 if a.skip_sync else full_sync(binary, kind, a.keys)
            alone, with_r, lag, catch, calls_alone, calls_with = cpu_per_set(binary, kind, a.requests)
            for k, v in zip(keys, (s, alone, with_r, lag, catch, calls_alone, calls_with)):
                res[name][k].append(v)
            print(f"round {rnd + 1} {name}: sync {s:.2f} s, SET {alone:.3f} -> {with_r:.3f} us CPU, "
                  f"lag max {lag} B, caught up {catch:.3f} s", file=sys.stderr, flush=True)
    med = statistics.median
    pinned = "".join(f"; {who} on CPUs {cpus}" for who, cpus in
                     (("master", a.master_cpus), ("replica", a.replica_cpus), ("load", a.load_cpus)) if cpus)
    print(f"\n{a.keys} keys of 100 bytes; SET -P {a.pipeline} -c 50, {a.requests} requests; medians of {a.rounds} rounds{pinned}\n")
    # Each round's ratio comes from one master (alone, then with its replica): their
    # median moves less with the host's slow phases than a ratio of two medians.
    print("| server | full sync (s) | master CPU per SET alone (us) | with a replica (us) | ratio of the medians | median of the rounds' ratios (range) | max lag (bytes) | caught up after the load (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, _, _ in servers:
        r = res[name]
        ratios = [w / a for a, w in zip(r["alone"], r["with"])]
        print(f"| {name} | {med(r['sync']):.2f} | {med(r['alone']):.3f} | {med(r['with']):.3f} | "
              f"{med(r['with']) / med(r['alone']):.2f} | {med(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{int(med(r['lag']))} | {med(r['catch']):.3f} |")
    if a.syscalls:
        print("\n| server | system calls per SET alone | with a replica |")
        print("|---|---|---|")
        for name, _, _ in servers:
            r = res[name]
            counted = [(x, y) for x, y in zip(r["calls_alone"], r["calls_with"]) if x is not None and y is not None]
            if counted:
                print(f"| {name} | {med(x for x, _ in counted):.3f} | {med(y for _, y in counted):.3f} |")
            else:
                print(f"| {name} | (perf could not count) | |")


if __name__ == "__main__":
    main()
