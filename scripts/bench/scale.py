#!/usr/bin/env python3
"""Many-core benchmark (issue 22): Basalt with 1, 2, 4, 8 event loops and its defaults,
Redis 7.0.15 and any other RESP server, on one machine, the server and the load generator
pinned to separate CPU sets; then the durable-write sweep and the disk's own fdatasync
latency. Run by scripts/bench-scale.sh; standard library only (the machines it is meant
for may have no network to install anything).

For each server configuration a fresh server is started (taskset on the server CPUs, a
throwaway data directory under --dir), the keys are loaded, and each workload runs for
--seconds with `basalt-bench memtier` on the client CPUs:

  SET c<clients>    unpipelined SETs of --data-size bytes over --keys keys
  GET c<clients>    unpipelined GETs of the same keys
  SET -P16          --pipe-clients connections, 16 requests in flight on each
  GET -P16

Each figure: ops/s, p50 and p99 (ms, basalt-bench's HDR histograms), the server's CPU
time per request (utime+stime from /proc/PID/stat over the run, divided by the requests
completed), its context switches per request (voluntary and involuntary, every thread,
from /proc/PID/task/*/status: the hand-offs between threads, where no profiler runs),
the server's CPU use in cores, and for Basalt with N loops the scaling
efficiency against one loop (ops/s / (N x one loop's ops/s)).

The durable sweep runs SET c<n> for each n of --durable-conns against Basalt (defaults)
and Redis with no persistence, `appendfsync everysec` and `appendfsync always`, and
prints each ratio to the no-persistence figure and Basalt's to Redis's. --durable-server
adds servers to it (an older build, other settings: everysec and always only, their
ratios to Basalt's figure without persistence).

Every run is bounded by --seconds; the whole run's length is printed before it starts.
Only processes this script started are stopped, by their PID.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--basalt-server", required=True, help="path of basalt-server (a release build)")
    ap.add_argument("--basalt-bench", required=True, help="path of basalt-bench (a release build)")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "", help="path of redis-server ('' to skip)")
    ap.add_argument("--other", action="append", default=[], metavar="NAME=COMMAND",
                    help="another RESP server, e.g. 'valkey=/opt/valkey-server --io-threads 8' "
                         "(started with --port P --bind 127.0.0.1 --dir D --save '' appended)")
    ap.add_argument("--server-cpus", default="0-7", help="CPU list for the servers (taskset -c)")
    ap.add_argument("--client-cpus", default="8-15", help="CPU list for the load generator")
    ap.add_argument("--loops", default="1 2 4 8", help="Basalt --threads values to measure")
    ap.add_argument("--seconds", type=float, default=4, help="length of each measured run")
    ap.add_argument("--keys", type=int, default=10000, help="key space (also try 1000000)")
    ap.add_argument("--data-size", type=int, default=512)
    ap.add_argument("--clients", type=int, default=200, help="connections of the unpipelined runs")
    ap.add_argument("--pipe-clients", type=int, default=64, help="connections of the -P16 runs")
    ap.add_argument("--bench-threads", type=int, default=0, help="basalt-bench --threads [client CPUs]")
    ap.add_argument("--durable-conns", default="48 200 800", help="connections of the durable sweep ('' to skip)")
    ap.add_argument("--durable-server", action="append", default=[], metavar="NAME=COMMAND",
                    help="another server for the durable sweep, e.g. 'basalt-wait0=target/release/basalt-server "
                         "--aof-commit-wait-us 0' or an older build (the persistence flags are appended)")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the data directories go (the disk measured)")
    ap.add_argument("--skip-fsync-probe", action="store_true")
    ap.add_argument("--out", default="", help="also write the Markdown report to this file")
    return ap.parse_args()


def cpu_count(cpus):
    n = 0
    for part in cpus.split(","):
        if "-" in part:
            a, b = part.split("-")
            n += int(b) - int(a) + 1
        elif part.strip():
            n += 1
    return n


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ping(port, timeout=0.5):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def context_switches(pid):
    """Voluntary and involuntary context switches of every thread of `pid` so far. A
    loop that sleeps because its replies wait for another thread (a hand-off) switches
    voluntarily: per request, the count says how often that happens, on machines where
    no profiler runs."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except OSError:
            pass  # a thread that ended meanwhile
    return total


class Server:
    def __init__(self, name, argv, cpus, base_dir):
        self.name = name
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"scale-{name}-", dir=base_dir)
        full = ["taskset", "-c", cpus] + argv + ["--port", str(self.port), "--bind", "127.0.0.1",
                                                   "--dir", self.dir, "--save", ""]
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(full, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited at start: see {self.dir}/server.log")
            if ping(self.port):
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{name} did not answer PING within 10 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def bench(args, port, ratio, conns, pipeline, seconds=None, requests=None, key_pattern="R:R"):
    """One basalt-bench memtier run; returns (ops/s, p50 ms, p99 ms, requests)."""
    threads = args.bench_threads or max(1, cpu_count(args.client_cpus))
    threads = min(threads, conns)
    per_thread = max(1, conns // threads)
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
    out.close()
    cmd = ["taskset", "-c", args.client_cpus, args.basalt_bench, "memtier",
           "--server", "127.0.0.1", "--port", str(port), "--threads", str(threads),
           "--clients", str(per_thread), "--ratio", ratio, "--pipeline", str(pipeline),
           "--data-size", str(args.data_size), "--key-minimum", "1", "--key-maximum", str(args.keys),
           "--key-pattern", key_pattern, "--hide-histogram", "--json-out-file", out.name]
    if requests is not None:
        cmd += ["--requests", str(requests)]
    else:
        cmd += ["--test-time", str(max(1, int(round(seconds))))]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=(seconds or 60) + 120)
    if r.returncode != 0:
        raise RuntimeError(f"basalt-bench failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    with open(out.name) as f:
        data = json.load(f)
    os.unlink(out.name)
    totals = data["ALL STATS"]["Totals"]
    pct = totals.get("Percentile Latencies", {})

    def pick(*names):
        for n in names:
            if n in pct:
                return float(pct[n])
        return float("nan")

    return (float(totals["Ops/sec"]), pick("p50.00", "p50.000"), pick("p99.00", "p99.000"),
            int(totals.get("Count", 0)))


def measure(args, server, ratio, conns, pipeline):
    before, switches_before = cpu_seconds(server.proc.pid), context_switches(server.proc.pid)
    t0 = time.time()
    ops, p50, p99, count = bench(args, server.port, ratio, conns, pipeline, seconds=args.seconds)
    wall = time.time() - t0
    cpu = cpu_seconds(server.proc.pid) - before
    switches = context_switches(server.proc.pid) - switches_before
    return {"ops": ops, "p50": p50, "p99": p99,
            "us_per_req": (cpu * 1e6 / count) if count else float("nan"),
            "switches_per_req": (switches / count) if count else float("nan"),
            "cores": cpu / wall if wall > 0 else float("nan")}


def load_keys(args, server):
    # Every key once, sequentially, so that the GETs hit.
    conns = min(8, max(1, cpu_count(args.client_cpus)))
    per_client = (args.keys + conns - 1) // conns
    bench(args, server.port, "1:0", conns, 16, requests=per_client, key_pattern="P:P")


WORKLOADS = [("SET c{c}", "1:0", "clients", 1), ("GET c{c}", "0:1", "clients", 1),
             ("SET -P16", "1:0", "pipe_clients", 16), ("GET -P16", "0:1", "pipe_clients", 16)]


def run_throughput(args):
    configs = []
    for n in args.loops.split():
        configs.append((f"basalt --threads {n}", [args.basalt_server, "--threads", n]))
    configs.append(("basalt (defaults)", [args.basalt_server]))
    if args.redis_server:
        configs.append(("redis", [args.redis_server]))
    for other in args.other:
        name, _, command = other.partition("=")
        configs.append((name, command.split()))
    results = {}
    for name, argv in configs:
        print(f"-- {name}", flush=True)
        s = Server(name.split()[0], argv, args.server_cpus, args.dir)
        try:
            load_keys(args, s)
            row = {}
            for label, ratio, conns_attr, pipeline in WORKLOADS:
                conns = getattr(args, conns_attr)
                label = label.format(c=conns)
                row[label] = measure(args, s, ratio, conns, pipeline)
                m = row[label]
                print(f"   {label:10} {m['ops']:>12,.0f} ops/s  p50 {m['p50']:.3f} ms  p99 {m['p99']:.3f} ms  "
                      f"{m['us_per_req']:.2f} us/req  {m['switches_per_req']:.3f} switches/req  {m['cores']:.1f} cores",
                      flush=True)
            results[name] = row
        finally:
            s.stop()
    return results


def run_durable(args):
    conns_list = [int(c) for c in args.durable_conns.split()]
    if not conns_list:
        return {}
    modes = [("none", ["--appendonly", "no"]), ("everysec", ["--appendonly", "yes", "--appendfsync", "everysec"]),
             ("always", ["--appendonly", "yes", "--appendfsync", "always"])]
    # A server given with --durable-server runs everysec and always only: its ratios are
    # to Basalt's own figure without persistence.
    servers = [("basalt", [args.basalt_server], modes)]
    for other in args.durable_server:
        name, _, command = other.partition("=")
        servers.append((name, command.split(), modes[1:]))
    if args.redis_server:
        servers.append(("redis", [args.redis_server], modes))
    out = {}
    for sname, argv, server_modes in servers:
        for mode, flags in server_modes:
            print(f"-- {sname} {mode}", flush=True)
            s = Server(sname, argv + flags, args.server_cpus, args.dir)
            try:
                for conns in conns_list:
                    m = measure(args, s, "1:0", conns, 1)
                    out[(sname, mode, conns)] = m
                    print(f"   SET c{conns:<5} {m['ops']:>12,.0f} ops/s  p50 {m['p50']:.3f} ms  p99 {m['p99']:.3f} ms  "
                          f"{m['us_per_req']:.2f} us/req  {m['switches_per_req']:.3f} switches/req  {m['cores']:.1f} cores",
                          flush=True)
            finally:
                s.stop()
    return out


def fsync_probe(directory, n=2000, size=4096):
    """4 KiB appends each followed by fdatasync, as the log's commits: p50 and p99 in us."""
    path = os.path.join(directory, f"scale-fsync-probe-{os.getpid()}")
    block = b"x" * size
    times = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        deadline = time.time() + 20
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(fd, block)
            os.fdatasync(fd)
            times.append((time.perf_counter() - t0) * 1e6)
            if time.time() > deadline:
                break
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], len(times)


def header(names, numbers):
    """A Markdown table's header: left-aligned name columns, right-aligned figures."""
    return ["| " + " | ".join(names + numbers) + " |", "|" + "---|" * len(names) + "---:|" * len(numbers)]


def section(title, names, numbers):
    """A titled table's opening lines: a blank line, the title, a blank line, the header."""
    return ["", title, ""] + header(names, numbers)


def fmt(x, spec):
    return "-" if x != x else format(x, spec)  # NaN


def report(args, results, durable, probe):
    lines = []
    lines.append(f"Server CPUs `{args.server_cpus}`, load generator CPUs `{args.client_cpus}`, "
                 f"{args.keys:,} keys, {args.data_size}-byte values, {args.seconds:g} s per figure, "
                 f"basalt-bench memtier.")
    lines.append("")
    labels = [w[0].format(c=args.clients) for w in WORKLOADS]
    lines += header(["server"], labels + [f"us/req {l}" for l in labels] + ["cores (SET)"])
    for name, row in results.items():
        cells = [fmt(row[l]["ops"] / 1000, ",.0f") + "k" for l in labels]
        cells += [fmt(row[l]["us_per_req"], ".2f") for l in labels]
        cells.append(fmt(row[labels[0]]["cores"], ".1f"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += section("Latency, p50 / p99 (ms):", ["server"], labels)
    for name, row in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{fmt(row[l]['p50'], '.3f')} / {fmt(row[l]['p99'], '.3f')}"
                                                  for l in labels) + " |")
    one = results.get("basalt --threads 1")
    if one:
        lines += section("Scaling against one loop (ops/s ratio / loops = efficiency; CPU per request ratio):", ["loops"], labels)
        for n in args.loops.split():
            row = results.get(f"basalt --threads {n}")
            if not row:
                continue
            cells = []
            for l in labels:
                eff = row[l]["ops"] / (int(n) * one[l]["ops"]) if one[l]["ops"] else float("nan")
                cpu = row[l]["us_per_req"] / one[l]["us_per_req"] if one[l]["us_per_req"] else float("nan")
                cells.append(f"{fmt(eff, '.2f')} ({fmt(cpu, '.2f')}x CPU)")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
    redis = results.get("redis")
    if redis:
        lines += section("Against Redis (ops/s ratio):", ["server"], labels)
        for name, row in results.items():
            if name == "redis":
                continue
            lines.append(f"| {name} | " + " | ".join(fmt(row[l]["ops"] / redis[l]["ops"], ".2f") if redis[l]["ops"]
                                                      else "-" for l in labels) + " |")
    if durable:
        conns_list = [int(c) for c in args.durable_conns.split()]
        lines += section("Durable writes (SET, unpipelined; ops/s, ratio to the same server without persistence, p50 ms):",
                         ["server", "mode"], [f"c{c}" for c in conns_list])
        for (sname, mode) in sorted({(k[0], k[1]) for k in durable}, key=lambda x: (x[0], ["none", "everysec", "always"].index(x[1]))):
            cells = []
            for c in conns_list:
                m = durable.get((sname, mode, c))
                base = durable.get((sname, "none", c)) or durable.get(("basalt", "none", c))
                if not m:
                    cells.append("-")
                    continue
                ratio = m["ops"] / base["ops"] if base and base["ops"] else float("nan")
                cells.append(f"{m['ops'] / 1000:,.0f}k ({fmt(ratio, '.2f')}x, {fmt(m['p50'], '.3f')})")
            lines.append(f"| {sname} | {mode} | " + " | ".join(cells) + " |")
        lines += section("Durable writes, the server's cost (CPU us per request / context switches per request / "
                         "cores busy):", ["server", "mode"], [f"c{c}" for c in conns_list])
        for (sname, mode) in sorted({(k[0], k[1]) for k in durable}, key=lambda x: (x[0], ["none", "everysec", "always"].index(x[1]))):
            cells = []
            for c in conns_list:
                m = durable.get((sname, mode, c))
                cells.append(f"{fmt(m['us_per_req'], '.2f')} / {fmt(m['switches_per_req'], '.3f')} / {fmt(m['cores'], '.1f')}"
                             if m else "-")
            lines.append(f"| {sname} | {mode} | " + " | ".join(cells) + " |")
        if args.redis_server:
            lines.append("")
            lines += header(["Basalt / Redis"], [f"c{c}" for c in conns_list])
            for mode in ["none", "everysec", "always"]:
                cells = []
                for c in conns_list:
                    b, r = durable.get(("basalt", mode, c)), durable.get(("redis", mode, c))
                    cells.append(fmt(b["ops"] / r["ops"], ".2f") if b and r and r["ops"] else "-")
                lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    if probe:
        lines.append("")
        lines.append(f"The data directory's disk (`{args.dir}`): a 4 KiB append plus fdatasync takes "
                     f"p50 {probe[0]:.0f} us, p99 {probe[1]:.0f} us ({probe[2]} tries).")
    return "\n".join(lines)


def main():
    args = parse_args()
    for path in (args.basalt_server, args.basalt_bench):
        if not os.access(path, os.X_OK):
            sys.exit(f"bench-scale: not an executable: {path}")
    if shutil.which("taskset") is None:
        sys.exit("bench-scale: taskset (util-linux) is required")
    n_configs = len(args.loops.split()) + 1 + (1 if args.redis_server else 0) + len(args.other)
    n_durable = len(args.durable_conns.split()) * (3 + 2 * len(args.durable_server) + (3 if args.redis_server else 0))
    est = (n_configs * 4 + n_durable) * (args.seconds + 1.5)
    print(f"bench-scale: {n_configs} configurations x 4 workloads, {n_durable} durable runs, "
          f"about {est / 60:.0f} min", flush=True)
    probe = None if args.skip_fsync_probe else fsync_probe(args.dir)
    if probe:
        print(f"-- fdatasync of a 4 KiB append in {args.dir}: p50 {probe[0]:.0f} us, p99 {probe[1]:.0f} us", flush=True)
    results = run_throughput(args)
    durable = run_durable(args)
    text = report(args, results, durable, probe)
    print()
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
