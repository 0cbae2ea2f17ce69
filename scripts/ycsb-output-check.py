#!/usr/bin/env python3
"""YCSB output read by a real YCSB parser (issue 25; a script, not CI): runs `basalt-bench
ycsb load` and `run` for the stock workloads against a Basalt server (started here on a free
loopback port in a temporary folder, stopped by its PID), parses each output with
PerfKitBenchmarker's YCSB parser (`perfkitbenchmarker.linux_packages.ycsb_stats.
ParseResults`, the parser PKB uses for YCSB runs against cloud databases), and checks that
what it read equals what basalt-bench printed: the run time and throughput, and for each
operation its count, average/min/max latency, percentiles and return codes.

Needs a PerfKitBenchmarker checkout (`--pkb`) and PKB's Python requirements in the Python
that runs this script (absl-py, pandas, seaborn, jinja2, numpy, PyYAML, pint, ...; a
virtualenv: `python3 -m venv V && V/bin/pip install -r PKB/requirements.txt`).

  V/bin/python3 scripts/ycsb-output-check.py --pkb ~/src/PerfKitBenchmarker \\
      [--bench target/release/basalt-bench] [--server-bin target/release/basalt-server] \\
      [--workloads "a b c d e f"] [--recordcount 2000] [--operationcount 10000]

Exit status 1 when PKB fails to parse an output or reads something else than was printed.
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary, folder):
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as c:
                c.sendall(b"PING\r\n")
                if c.recv(16).startswith(b"+PONG"):
                    return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    sys.exit(f"{binary} did not answer on port {port}")


def printed(text):
    """What basalt-bench printed: {OPERATION: {statistic: value}} from its [X], name, value lines."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\[([A-Z-]+)\], ([^,]+), (.+)$", line)
        if m:
            out.setdefault(m.group(1), {})[m.group(2).strip()] = float(m.group(3))
    return out


def compare(name, text, ycsb_stats):
    """Parses `text` with PKB; returns the list of differences from what was printed."""
    try:
        result = ycsb_stats.ParseResults(text, "hdrhistogram")
    except Exception as e:  # noqa: BLE001 (any failure of the parser is the finding)
        return [f"{name}: PKB could not parse the output: {type(e).__name__}: {e}"]
    ours = printed(text)
    problems = []
    for op, stats in ours.items():
        if not re.fullmatch(r"[A-Z]+", op):
            # PKB keeps only `[A-Z]+` groups (it drops YCSB's own [READ-MODIFY-WRITE] too).
            continue
        group = result.groups.get(op.lower())
        if group is None:
            problems.append(f"{name}: PKB has no group for [{op}]")
            continue
        for stat, value in stats.items():
            # PKB converts (us) to (ms).
            key, want = (stat.replace("(us)", "(ms)"), value / 1000.0) if "(us)" in stat else (stat, value)
            got = group.statistics.get(key)
            if got is None or abs(got - want) > 1e-9 * max(1.0, abs(want)):
                problems.append(f"{name}: [{op}] {stat}: printed {value}, PKB read {got}")
    if "overall" not in result.groups:
        problems.append(f"{name}: PKB found no [OVERALL]")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pkb", required=True, help="a PerfKitBenchmarker checkout")
    ap.add_argument("--bench", default="target/release/basalt-bench")
    ap.add_argument("--server-bin", default="target/release/basalt-server")
    ap.add_argument("--workloads", default="a b c d e f")
    ap.add_argument("--recordcount", type=int, default=2000)
    ap.add_argument("--operationcount", type=int, default=10000)
    a = ap.parse_args()

    sys.path.insert(0, os.path.abspath(a.pkb))
    from absl import flags  # PKB's modules define absl flags at import

    flags.FLAGS(["ycsb-output-check"])
    from perfkitbenchmarker.linux_packages import ycsb_stats

    folder = tempfile.mkdtemp(prefix="ycsb-output-check-")
    proc, port = start_server(a.server_bin, folder)
    problems = []
    try:
        for w in a.workloads.split():
            props = ["-p", f"redis.port={port}", "-p", f"recordcount={a.recordcount}", "-p", f"operationcount={a.operationcount}"]
            subprocess.run(["redis-cli", "-p", str(port), "FLUSHALL"], check=True, stdout=subprocess.DEVNULL)
            for phase in ("load", "run"):
                r = subprocess.run([a.bench, "ycsb", phase, "--workload", w, *props], capture_output=True, text=True, timeout=600)
                if r.returncode != 0:
                    problems.append(f"workload {w} {phase}: basalt-bench exited {r.returncode}: {r.stderr[-500:]}")
                    continue
                found = compare(f"workload {w} {phase}", r.stdout, ycsb_stats)
                groups = sorted(printed(r.stdout))
                print(f"workload {w} {phase}: {'read by PKB as printed' if not found else 'DIFFERENT'} ({', '.join(groups)})")
                problems.extend(found)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
