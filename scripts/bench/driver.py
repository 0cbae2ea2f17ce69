#!/usr/bin/env python3
"""Benchmark driver behind scripts/bench.sh (Python standard library only).

Starts Redis and the Basalt configurations on loopback, runs redis-benchmark
against them interleaved, measures each server's CPU time per request from
/proc/PID/stat, loads a key set with redis-cli --pipe to measure bytes per key,
and prints Markdown tables. Every PID it starts is appended to WORK/pids so
that bench.sh can kill leftovers; it also stops them itself on the way out.

Settings come from the environment; see scripts/bench.sh for the list.
"""

import argparse
import csv
import io
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST = "127.0.0.1"


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def env_int(name, default):
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


# ---------------------------------------------------------------- settings


class Settings:
    def __init__(self):
        quick = os.environ.get("QUICK", "0") not in ("", "0")
        self.quick = quick
        self.requests = env_int("REQUESTS", 20_000 if quick else 200_000)
        self.pipe_requests = env_int("PIPE_REQUESTS", 200_000 if quick else 2_000_000)
        self.rounds = env_int("ROUNDS", 1 if quick else 3)
        self.keys = env_int("KEYS", 100_000 if quick else 1_000_000)
        self.clients = env_int("CLIENTS", 50)
        self.random_keys = env_int("RANDOM_KEYS", 100_000)
        self.max_seconds = env_int("MAX_SECONDS", 840)
        self.skip_memory = os.environ.get("SKIP_MEMORY", "0") not in ("", "0")
        self.workloads = [
            parse_workload(w)
            for w in os.environ.get("WORKLOADS", "set get incr mset set-p16 get-p16").split()
        ]
        self.configs = [
            parse_config(c)
            for c in os.environ.get("BASALT_CONFIGS", "t1-epoll t1-uring t2-epoll t2-uring").split()
        ]
        self.redis_bin = os.environ.get("REDIS_BIN") or shutil.which("redis-server")
        self.basalt_bin = os.environ["BASALT_BIN"]
        # A second Basalt build for A/B runs: configurations ending in "@base" run it.
        self.base_bin = os.environ.get("BASALT_BASE_BIN", "")
        if any(c[3] for c in self.configs) and not os.access(self.base_bin, os.X_OK):
            sys.exit("bench: a configuration ends in @base but BASALT_BASE_BIN is not an executable")
        self.basalt_is_redis = os.path.basename(self.basalt_bin).startswith("redis-server")
        self.benchmark_bin = shutil.which("redis-benchmark")
        self.cli_bin = shutil.which("redis-cli")
        self.command = os.environ.get("BENCH_COMMAND", "scripts/bench.sh")


def parse_workload(text):
    """'set' -> ('set', 1); 'get-p16' -> ('get', 16)."""
    name, _, pipe = text.partition("-p")
    if not name or (pipe and not pipe.isdigit()):
        sys.exit(f"bench: bad workload {text!r} (want e.g. set, get-p16)")
    return name, int(pipe) if pipe else 1


def parse_config(text):
    """'t2-uring' -> (2, 'uring', [], False); 't1-uring+io-uring-min-wait-us=20' adds
    ['--io-uring-min-wait-us', '20'] to the server's flags (for A/B runs of a tunable);
    a trailing '@base' runs BASALT_BASE_BIN instead of BASALT_BIN (A/B of two builds)."""
    text, at, which = text.partition("@")
    if at and which != "base":
        sys.exit(f"bench: bad Basalt config suffix {'@' + which!r} (only @base)")
    base, *extras = text.split("+")
    threads, _, engine = base.partition("-")
    if not (threads.startswith("t") and threads[1:].isdigit() and engine in ("epoll", "uring")):
        sys.exit(f"bench: bad Basalt config {text!r} (want t<threads>-<epoll|uring>[+name=value...])")
    flags = []
    for e in extras:
        name, eq, value = e.partition("=")
        if not name or not eq:
            sys.exit(f"bench: bad extra flag {e!r} in {text!r} (want +name=value)")
        flags += ["--" + name, value]
    return int(threads[1:]), engine, flags, bool(at)


def workload_label(workload):
    name, pipe = workload
    return name.upper() + (f" -P {pipe}" if pipe > 1 else "")


# ------------------------------------------------------------ small client


def resp_command(port, *args, timeout=5.0):
    """Sends one command and returns the reply (bulk strings decoded)."""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            arg = arg.encode() if isinstance(arg, str) else arg
            out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
        sock.sendall(b"".join(out))
        reader = sock.makefile("rb")
        return read_reply(reader)


def read_reply(reader):
    line = reader.readline()
    if not line:
        raise ConnectionError("connection closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode(errors="replace"))
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        return None if size < 0 else reader.read(size + 2)[:-2].decode(errors="replace")
    if kind == b"*":
        size = int(rest)
        return None if size < 0 else [read_reply(reader) for _ in range(size)]
    raise RuntimeError(f"unexpected reply {line!r}")


def info_fields(port, section):
    text = resp_command(port, "INFO", section)
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key] = value
    return fields


# ---------------------------------------------------------------- servers


def free_port():
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, name, argv_fn, work, pidfile):
        self.name = name
        self.argv_fn = argv_fn  # (port, dir) -> argv
        self.work = work
        self.pidfile = pidfile
        self.proc = None
        self.port = None
        self.starts = 0

    def start(self):
        self.starts += 1
        data_dir = os.path.join(self.work, f"{self.name}.{self.starts}")
        os.makedirs(data_dir)
        self.port = free_port()
        argv = self.argv_fn(self.port, data_dir)
        log_path = os.path.join(data_dir, "server.log")
        with open(log_path, "wb") as log_file:
            self.proc = subprocess.Popen(
                argv,
                cwd=data_dir,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        with open(self.pidfile, "a") as f:
            f.write(f"{self.proc.pid}\n")
        deadline = time.monotonic() + 20
        while True:
            if self.proc.poll() is not None:
                tail = open(log_path, "rb").read()[-2000:].decode(errors="replace")
                self.proc = None
                raise RuntimeError(f"{self.name} exited at start-up:\n{tail}")
            try:
                if resp_command(self.port, "PING", timeout=1) == "PONG":
                    return
            except (OSError, RuntimeError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not answer PING within 20 s")
            time.sleep(0.1)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def cpu_ticks(self):
        """utime + stime of the whole process (all threads), in clock ticks."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                stat = f.read()
        except OSError:  # the server died
            return math.nan
        fields = stat[stat.rindex(")") + 2 :].split()
        # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
        return int(fields[11]) + int(fields[12])

    def vmrss(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return math.nan


def make_servers(s, work, pidfile):
    redis_args = ["--bind", HOST, "--save", "", "--appendonly", "no"]
    servers = [
        Server(
            "redis",
            lambda port, d: [s.redis_bin, "--port", str(port), *redis_args, "--dir", d],
            work,
            pidfile,
        )
    ]
    for threads, engine, flags, on_base in s.configs:
        binary = s.base_bin if on_base else s.basalt_bin

        def argv(port, d, threads=threads, engine=engine, flags=flags, binary=binary):
            args = [binary, "--port", str(port), "--bind", HOST, "--dir", d, "--save", ""]
            if s.basalt_is_redis:
                return args + ["--appendonly", "no"]
            return args + ["--threads", str(threads), "--io-engine", engine] + flags

        label = f"basalt-t{threads}-{engine}" + "".join(f"+{f.lstrip('-')}" if i % 2 == 0 else f"={f}" for i, f in enumerate(flags))
        label += "@base" if on_base else ""
        servers.append(Server(label, argv, work, pidfile))
    return servers


# -------------------------------------------------------------- benchmark


# redis-benchmark's LRANGE tests: LRANGE mylist 0 (N-1). Given as "-t lrange_N" it first
# runs an LPUSH test of the same size to fill the list and prints that test's line
# first, so its CPU time and requests/s would be the LPUSH's, or a mix of both (as
# this driver reported before 2026-11-25). Instead the list is filled beforehand,
# outside the measurement, and the LRANGE alone is run as a custom command.
LRANGE_FILL = 1000


def lrange_length(name):
    if name.startswith("lrange_") and name[len("lrange_"):].isdigit():
        return int(name[len("lrange_"):])
    return None


def fill_list(s, server, timeout):
    """Tops mylist up to LRANGE_FILL elements (redis-benchmark's own LPUSH test)."""
    argv = [
        s.benchmark_bin, "-h", HOST, "-p", str(server.port),
        "-c", "1", "-n", str(LRANGE_FILL), "-t", "lpush", "-q",
    ]
    subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def run_benchmark(s, server, workload, timeout):
    name, pipe = workload
    requests = s.pipe_requests if pipe > 1 else s.requests
    argv = [
        s.benchmark_bin, "-h", HOST, "-p", str(server.port),
        "-c", str(s.clients), "-n", str(requests), "-r", str(s.random_keys),
        "-q", "--csv",
    ]
    if pipe > 1:
        argv += ["-P", str(pipe)]
    lrange = lrange_length(name)
    if lrange is not None:
        fill_list(s, server, timeout)
        argv += ["LRANGE", "mylist", "0", str(lrange - 1)]
    else:
        argv += ["-t", name]
    before = server.cpu_ticks()
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return math.nan, math.nan, time.monotonic() - started, "timed out"
    wall = time.monotonic() - started
    ticks = server.cpu_ticks() - before
    rps = math.nan
    for row in csv.reader(io.StringIO(done.stdout)):
        if len(row) >= 2 and row[0] != "test":
            try:
                rps = float(row[1])
            except ValueError:
                pass
            break
    if done.returncode != 0 or math.isnan(rps):
        err = (done.stderr.strip() or done.stdout.strip())[-300:]
        return math.nan, math.nan, wall, f"redis-benchmark rc={done.returncode}: {err}"
    us_per_req = ticks / CLK_TCK * 1e6 / requests
    return rps, us_per_req, wall, None


def estimate_seconds(s, n_servers):
    # Sized for ~2.5 s per run at the default request counts on Redis.
    per_workload = [
        2.5 * (s.pipe_requests / 2_000_000 if pipe > 1 else s.requests / 200_000) + 0.3
        for _, pipe in s.workloads
    ]
    bench = sum(per_workload) * s.rounds * n_servers
    memory = 0 if s.skip_memory else 2 + n_servers * (2 + 6 * s.keys / 1_000_000)
    return bench + memory + 2 * n_servers


# ----------------------------------------------------------------- memory


def write_set_commands(path, n):
    """RESP-encoded SET key:N value:N for N in 0..n, for redis-cli --pipe."""
    with open(path, "wb") as f:
        chunk = []
        for i in range(n):
            key = b"key:%d" % i
            value = b"value:%d" % i
            chunk.append(
                b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value)
            )
            if len(chunk) == 10_000:
                f.write(b"".join(chunk))
                chunk.clear()
        f.write(b"".join(chunk))


def memory_snapshot(server):
    try:
        fields = info_fields(server.port, "memory")
    except (OSError, RuntimeError):
        fields = {}

    def num(key):
        try:
            return float(fields[key])
        except (KeyError, ValueError):
            return math.nan

    return {"used_memory": num("used_memory"), "used_memory_rss": num("used_memory_rss"),
            "vmrss": server.vmrss()}


def measure_memory(s, server, commands_path, timeout):
    server.start()
    try:
        time.sleep(1)
        before = memory_snapshot(server)
        with open(commands_path, "rb") as stdin:
            done = subprocess.run(
                [s.cli_bin, "-h", HOST, "-p", str(server.port), "--pipe"],
                stdin=stdin, capture_output=True, text=True, timeout=timeout,
            )
        summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
        if done.returncode != 0:
            log(f"{server.name}: redis-cli --pipe rc={done.returncode}: {summary[0]}")
        time.sleep(1)
        keys = resp_command(server.port, "DBSIZE")
        if keys != s.keys:
            log(f"{server.name}: DBSIZE is {keys}, expected {s.keys}")
        after = memory_snapshot(server)
        return {k: (after[k] - before[k]) / s.keys for k in after}, before, after
    finally:
        server.stop()


# ----------------------------------------------------------------- report


def fmt_rps(x):
    return "n/a" if math.isnan(x) else f"{x:,.0f}"


def fmt_us(x):
    return "n/a" if math.isnan(x) else f"{x:.2f}"


def fmt_ratio(a, b):
    return "n/a" if math.isnan(a) or math.isnan(b) or b == 0 else f"{a / b:.2f}"


def round_ratios(b, r):
    """The CPU ratio of each round (the servers ran back to back in it), sorted."""
    redis_by_round = {x[2]: x[1] for x in r}
    return sorted(x[1] / redis_by_round[x[2]] for x in b
                  if x[2] in redis_by_round
                  and not (math.isnan(x[1]) or math.isnan(redis_by_round[x[2]]) or redis_by_round[x[2]] == 0))


def fmt_rounds(b, r):
    """The median and range of the rounds' own CPU ratios, which show how much of a
    difference this host's noise can make."""
    ratios = round_ratios(b, r)
    if not ratios:
        return "n/a"
    return f"{statistics.median(ratios):.2f} [{ratios[0]:.2f}-{ratios[-1]:.2f}]"


def median_interval(sorted_values, confidence=0.90):
    """A distribution-free confidence interval for the median: the k-th smallest and
    k-th largest values, with the largest k for which the chance that the true median
    lies outside them (two binomial tails at p = 1/2) stays under 1 - confidence.
    None when there are too few values for that confidence (under 5 at 90%)."""
    n = len(sorted_values)
    best = None
    tail = 0.0
    for k in range(1, n // 2 + 1):
        # tail = P(Binomial(n, 1/2) <= k - 1)
        tail += math.comb(n, k - 1) / 2 ** n
        if 1 - 2 * tail < confidence:
            break
        best = k
    if best is None:
        return None
    return sorted_values[best - 1], sorted_values[n - best]


def fmt_round_interval(b, r):
    """The 90% interval of the median round ratio (`median_interval`)."""
    interval = median_interval(round_ratios(b, r))
    return "n/a" if interval is None else f"{interval[0]:.2f}-{interval[1]:.2f}"


def fmt_bytes(x):
    return "n/a" if math.isnan(x) else f"{x:.1f}"


def median(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def command_output(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def build_report(s, servers, results, memory, notes, elapsed):
    redis = servers[0]
    lines = []
    out = lines.append
    out(f"## Basalt vs Redis — {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    out("")
    out(f"- Command: `{s.command}`")
    commit = command_output(["git", "rev-parse", "--short", "HEAD"])
    dirty = command_output(["git", "status", "--porcelain", "--untracked-files=no"])
    out(f"- Basalt: `{s.basalt_bin}` (commit {commit}{', dirty tree' if dirty else ''})")
    if s.base_bin and any(c[3] for c in s.configs):
        out(f"- Base build for the configurations ending in @base: `{s.base_bin}`")
    if s.basalt_is_redis:
        out("- NOTE: BASALT_BIN is redis-server, so the Basalt side is Redis too and the "
            "configuration names are labels only (--threads/--io-engine not passed).")
    out(f"- Redis: `{command_output([s.redis_bin, '--version'])}`")
    out(f"- Host: Linux {platform.release()}, {os.cpu_count()} CPUs ({cpu_model()})")
    out(f"- redis-benchmark -c {s.clients} -r {s.random_keys}; -n {s.requests} "
        f"(pipelined: {s.pipe_requests}); median of {s.rounds} round(s), servers interleaved "
        "round by round; client and servers share the host, over loopback.")
    out("- rps: requests/s reported by redis-benchmark (higher is better). us/req: server "
        "CPU time (utime+stime, all threads) per request (lower is better). "
        "ratio = basalt / redis, of the medians; by round: the median and range of each "
        "round's own CPU ratio; 90% CI: a distribution-free confidence interval (at least 90%) of "
        "that median (order statistics; n/a under 5 rounds).")
    out(f"- Wall time of this run: {elapsed / 60:.1f} min.")
    out("")
    for server in servers[1:]:
        out(f"### {server.name} vs redis")
        out("")
        out(f"| workload | redis rps | {server.name} rps | ratio | redis us/req | "
            f"{server.name} us/req | ratio | us/req ratio by round | 90% CI |")
        out("|---|---:|---:|---:|---:|---:|---:|---|---|")
        for workload in s.workloads:
            r = results.get((workload, redis.name), [])
            b = results.get((workload, server.name), [])
            r_rps, r_us = median([x[0] for x in r]), median([x[1] for x in r])
            b_rps, b_us = median([x[0] for x in b]), median([x[1] for x in b])
            out(f"| {workload_label(workload)} | {fmt_rps(r_rps)} | {fmt_rps(b_rps)} | "
                f"{fmt_ratio(b_rps, r_rps)} | {fmt_us(r_us)} | {fmt_us(b_us)} | "
                f"{fmt_ratio(b_us, r_us)} | {fmt_rounds(b, r)} | {fmt_round_interval(b, r)} |")
        out("")
    if memory:
        out(f"### Memory: {s.keys:,} keys `key:N` -> `value:N` (SET via redis-cli --pipe)")
        out("")
        out("Bytes per key = (after - before) / keys, each server started empty. RSS is "
            "VmRSS from /proc/PID/status; used_memory and used_memory_rss come from INFO memory.")
        out("")
        out("| server | used_memory B/key | ratio | RSS (VmRSS) B/key | ratio | "
            "used_memory_rss B/key |")
        out("|---|---:|---:|---:|---:|---:|")
        base = memory.get(redis.name)
        for server in servers:
            m = memory.get(server.name)
            if m is None:
                out(f"| {server.name} | n/a | n/a | n/a | n/a | n/a |")
                continue
            um_ratio = fmt_ratio(m["used_memory"], base["used_memory"]) if base else "n/a"
            rss_ratio = fmt_ratio(m["vmrss"], base["vmrss"]) if base else "n/a"
            out(f"| {server.name} | {fmt_bytes(m['used_memory'])} | {um_ratio} | "
                f"{fmt_bytes(m['vmrss'])} | {rss_ratio} | {fmt_bytes(m['used_memory_rss'])} |")
        out("")
    if notes:
        out("Problems during the run:")
        out("")
        for note in notes:
            out(f"- {note}")
        out("")
    return "\n".join(lines)


# ------------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", required=True, help="scratch directory (removed by bench.sh)")
    parser.add_argument("--results", required=True, help="where report and raw CSV are saved")
    args = parser.parse_args()
    s = Settings()
    for tool, path in (("redis-server", s.redis_bin), ("redis-benchmark", s.benchmark_bin),
                       ("redis-cli", s.cli_bin)):
        if not path:
            sys.exit(f"bench: {tool} not found")

    # Signals become SystemExit so that the finally block stops the servers.
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))

    pidfile = os.path.join(args.work, "pids")
    servers = make_servers(s, args.work, pidfile)
    start = time.monotonic()
    deadline = start + s.max_seconds
    estimate = estimate_seconds(s, len(servers))
    log(f"{len(servers)} servers x {len(s.workloads)} workloads x {s.rounds} rounds"
        f"{'' if s.skip_memory else f' + memory test with {s.keys:,} keys'}: "
        f"about {estimate / 60:.1f} min if Basalt is about as fast as Redis; "
        f"no new runs start after {s.max_seconds / 60:.0f} min (MAX_SECONDS)")

    results = {}  # (workload, server name) -> [(rps, us_per_req), ...]
    raw = []
    notes = []
    memory = {}
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    try:
        live = []
        for server in servers:
            try:
                server.start()
                live.append(server)
                log(f"started {server.name} on port {server.port} (pid {server.proc.pid})")
            except RuntimeError as e:
                if server is servers[0]:
                    raise
                notes.append(f"{server.name} did not start; skipped. {str(e).strip()[-300:]}")
                log(notes[-1])
        total = len(s.workloads) * s.rounds * len(live)
        done = 0
        out_of_time = 0
        for workload in s.workloads:
            for rnd in range(s.rounds):
                # Rotate the order each round so that no server always goes first.
                order = live[rnd % len(live):] + live[: rnd % len(live)]
                for server in order:
                    done += 1
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        out_of_time += 1
                        continue
                    if server.proc is None:
                        continue
                    if server.proc.poll() is not None:
                        notes.append(f"{server.name} exited (status {server.proc.returncode}) "
                                     f"before {workload_label(workload)} round {rnd + 1}; "
                                     "its remaining runs are skipped.")
                        log(notes[-1])
                        server.proc = None
                        continue
                    timeout = max(10.0, min(120.0, remaining))
                    rps, us, wall, err = run_benchmark(s, server, workload, timeout)
                    results.setdefault((workload, server.name), []).append((rps, us, rnd))
                    raw.append((workload_label(workload), rnd + 1, server.name, rps, us, wall))
                    if err:
                        notes.append(f"{workload_label(workload)} round {rnd + 1} on "
                                     f"{server.name}: {err}")
                    log(f"[{done}/{total}] {workload_label(workload):<12} round {rnd + 1} "
                        f"{server.name:<18} {fmt_rps(rps):>11} rps {fmt_us(us):>7} us/req "
                        f"({wall:.1f} s){'  ERROR: ' + err if err else ''}")
        if out_of_time:
            notes.append(f"MAX_SECONDS={s.max_seconds} reached: {out_of_time} run(s) skipped.")
            log(notes[-1])
        for server in servers:
            server.stop()

        if not s.skip_memory:
            if time.monotonic() > deadline:
                notes.append("MAX_SECONDS reached: memory test skipped.")
            else:
                commands = os.path.join(args.work, "set-commands.resp")
                log(f"writing {s.keys:,} SET commands for redis-cli --pipe")
                write_set_commands(commands, s.keys)
                for server in live:
                    if time.monotonic() > deadline:
                        notes.append(f"MAX_SECONDS reached: memory test of {server.name} skipped.")
                        continue
                    try:
                        per_key, before, after = measure_memory(s, server, commands, 300)
                    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                        notes.append(f"memory test of {server.name} failed: {str(e)[-300:]}")
                        log(notes[-1])
                        continue
                    memory[server.name] = per_key
                    log(f"memory {server.name:<18} used_memory {fmt_bytes(per_key['used_memory'])}"
                        f" B/key, VmRSS {fmt_bytes(per_key['vmrss'])} B/key "
                        f"(VmRSS before {before['vmrss'] / 2**20:.1f} MiB, "
                        f"after {after['vmrss'] / 2**20:.1f} MiB)")
    finally:
        for server in servers:
            try:
                server.stop()
            except Exception as e:  # keep stopping the others
                log(f"stopping {server.name}: {e}")

    elapsed = time.monotonic() - start
    report = build_report(s, servers, results, memory, notes, elapsed)
    report_path = os.path.join(args.results, f"report-{stamp}.md")
    raw_path = os.path.join(args.results, f"raw-{stamp}.csv")
    with open(report_path, "w") as f:
        f.write(report + "\n")
    with open(raw_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["workload", "round", "server", "rps", "cpu_us_per_req", "wall_s"])
        writer.writerows(raw)
    print(report)
    log(f"report saved to {report_path}; raw numbers in {raw_path}")


if __name__ == "__main__":
    main()
