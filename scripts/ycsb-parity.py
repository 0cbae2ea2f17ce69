#!/usr/bin/env python3
"""YCSB parity check (issue 25; a script, not CI): runs YCSB 0.17.0 itself (core from
Maven Central, its Redis binding compiled from YCSB's source at tag 0.17.0, Jedis 2.9.0)
and `basalt-bench ycsb` on the same server and the same workload files, and prints for
each workload the server's command counts (INFO commandstats) of both, which must agree
per command within 1% (or, for counts of a few thousand, within the sampling noise of two
random operation mixes: three standard deviations), both throughputs, and both clients'
CPU per operation.

Needs java, javac and mvn (the jars are fetched into ~/.m2 with `mvn dependency:get`
when missing), a checkout of YCSB's repository (`--ycsb-src`, which has the tag 0.17.0),
redis-cli, and the server to measure (`--server-bin`, default redis-server; started here
on a free loopback port in a temporary folder, stopped by its PID).

  scripts/ycsb-parity.py --ycsb-src ~/src/YCSB --basalt-bench target/release/basalt-bench \\
      [--server-bin target/release/basalt-server] [--workloads "a b c d e f"] \\
      [--recordcount 10000] [--operationcount 100000] [--threads 4]

Exit status 1 when a command count differs by more than that (or a run failed).
"""

import argparse
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

M2 = os.path.expanduser("~/.m2/repository")
JARS = [
    ("site.ycsb:core:0.17.0", "site/ycsb/core/0.17.0/core-0.17.0.jar"),
    ("redis.clients:jedis:2.9.0", "redis/clients/jedis/2.9.0/jedis-2.9.0.jar"),
    ("org.apache.commons:commons-pool2:2.4.2", "org/apache/commons/commons-pool2/2.4.2/commons-pool2-2.4.2.jar"),
    ("org.hdrhistogram:HdrHistogram:2.1.4", "org/hdrhistogram/HdrHistogram/2.1.4/HdrHistogram-2.1.4.jar"),
    ("org.apache.htrace:htrace-core4:4.1.0-incubating",
     "org/apache/htrace/htrace-core4/4.1.0-incubating/htrace-core4-4.1.0-incubating.jar"),
    ("org.codehaus.jackson:jackson-mapper-asl:1.9.4",
     "org/codehaus/jackson/jackson-mapper-asl/1.9.4/jackson-mapper-asl-1.9.4.jar"),
    ("org.codehaus.jackson:jackson-core-asl:1.9.4",
     "org/codehaus/jackson/jackson-core-asl/1.9.4/jackson-core-asl-1.9.4.jar"),
]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ycsb-src", required=True, help="a git checkout of brianfrankcooper/YCSB (tag 0.17.0)")
    ap.add_argument("--basalt-bench", required=True)
    ap.add_argument("--server-bin", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--workloads", default="a b c d e f")
    ap.add_argument("--recordcount", type=int, default=10000)
    ap.add_argument("--operationcount", type=int, default=100000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=600, help="seconds allowed for each client run")
    return ap.parse_args()


def classpath(work, ycsb_src):
    for coord, rel in JARS:
        if not os.path.exists(os.path.join(M2, rel)):
            subprocess.run(["mvn", "-q", "dependency:get", f"-Dartifact={coord}", "-Dtransitive=false"], check=True)
    cp = ":".join(os.path.join(M2, rel) for _, rel in JARS)
    src = os.path.join(work, "RedisClient.java")
    with open(src, "w") as f:
        f.write(subprocess.run(["git", "-C", ycsb_src, "show", "0.17.0:redis/src/main/java/site/ycsb/db/RedisClient.java"],
                               check=True, capture_output=True, text=True).stdout)
    classes = os.path.join(work, "classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-d", classes, "-cp", cp, src], check=True)
    for w in "abcdef":
        with open(os.path.join(work, f"workload{w}"), "w") as f:
            f.write(subprocess.run(["git", "-C", ycsb_src, "show", f"0.17.0:workloads/workload{w}"],
                                   check=True, capture_output=True, text=True).stdout)
    return classes + ":" + cp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=30).stdout


def commandstats(port):
    out = {}
    for line in cli(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_"):
            name, rest = line[len("cmdstat_"):].split(":", 1)
            out[name] = int(rest.split("calls=")[1].split(",")[0])
    return out


def timed(cmd, timeout):
    """Runs cmd; returns (stdout, CPU seconds of the child: user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed ({r.returncode}): {r.stderr[-400:]}")
    return r.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def value(out, series, metric):
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0] == series and parts[1] == metric:
            return float(parts[2])
    return float("nan")


def one_client(name, port, work, cp, bench, w, a):
    props = ["-p", "redis.host=127.0.0.1", "-p", f"redis.port={port}", "-p", f"recordcount={a.recordcount}",
             "-p", f"operationcount={a.operationcount}", "-threads", str(a.threads)]
    wfile = os.path.join(work, f"workload{w}")
    cli(port, "FLUSHALL")
    cli(port, "CONFIG", "RESETSTAT")
    if name == "ycsb":
        base = ["java", "-cp", cp, "site.ycsb.Client", "-db", "site.ycsb.db.RedisClient", "-P", wfile]
        load, run = base + ["-load"] + props, base + ["-t"] + props
    else:
        load, run = [bench, "ycsb", "load", "-P", wfile] + props, [bench, "ycsb", "run", "-P", wfile] + props
    timed(load, a.timeout)
    loaded = commandstats(port)
    out, cpu = timed(run, a.timeout)
    stats = commandstats(port)
    ran = {k: v - loaded.get(k, 0) for k, v in stats.items() if v - loaded.get(k, 0) > 0 and k not in ("info", "config", "flushall")}
    return ran, value(out, "[OVERALL]", "Throughput(ops/sec)"), cpu * 1e6 / a.operationcount


def main():
    a = parse_args()
    work = tempfile.mkdtemp(prefix="ycsb-parity-")
    cp = classpath(work, a.ycsb_src)
    port = free_port()
    data = os.path.join(work, "data")
    os.makedirs(data)
    server = subprocess.Popen([a.server_bin, "--port", str(port), "--bind", "127.0.0.1", "--dir", data, "--save", ""],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failed = False
    try:
        deadline = time.time() + 10
        while "PONG" not in cli(port, "PING"):
            if time.time() > deadline or server.poll() is not None:
                sys.exit("ycsb-parity: the server did not start")
            time.sleep(0.1)
        print(f"server {a.server_bin} ({cli(port, 'INFO', 'server').split('redis_version:')[1].split()[0]}), "
              f"recordcount {a.recordcount}, operationcount {a.operationcount}, {a.threads} threads")
        print()
        print("| workload | command | YCSB 0.17.0 calls | basalt-bench calls | difference |")
        print("|---|---|---:|---:|---:|")
        summary = []
        for w in a.workloads.split():
            ycsb, y_tput, y_cpu = one_client("ycsb", port, work, cp, a.basalt_bench, w, a)
            ours, o_tput, o_cpu = one_client("basalt-bench", port, work, cp, a.basalt_bench, w, a)
            for cmd in sorted(set(ycsb) | set(ours)):
                y, o = ycsb.get(cmd, 0), ours.get(cmd, 0)
                diff = (o - y) / y * 100 if y else float("inf")
                # Both clients draw their operation mix at random: two counts of a few
                # thousand differ by more than 1% by chance alone. Over the limit is
                # more than 1% and more than three standard deviations of the difference
                # of two such draws (at most sqrt(2 * calls)).
                noise = 3 * (2 * max(y, 1)) ** 0.5
                bad = abs(diff) > 1.0 and abs(o - y) > noise
                failed |= bad
                note = " (over the limit)" if bad else (" (sampling noise)" if abs(diff) > 1.0 else "")
                print(f"| {w} | {cmd} | {y:,} | {o:,} | {diff:+.2f}%{note} |")
            summary.append((w, y_tput, o_tput, y_cpu, o_cpu))
        print()
        print("| workload | YCSB ops/s | basalt-bench ops/s | YCSB client CPU us/op | basalt-bench us/op | ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for w, yt, ot, yc, oc in summary:
            print(f"| {w} | {yt:,.0f} | {ot:,.0f} | {yc:.1f} | {oc:.1f} | {oc / yc:.2f} |")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
