#!/usr/bin/env python3
"""Crash test for AOF persistence: no acknowledged write may be lost to a SIGKILL.

Each cycle starts the server (a free port on 127.0.0.1, one temp dir kept across
all cycles, `--appendonly yes --appendfsync always --save ""`), runs W writer
threads for a random 0.2-1.5 s, then SIGKILLs the server by the PID this script
started (while the writers are still writing), starts it again in the same dir
and checks that every write whose reply arrived is there.

Each writer has its own connection and, per cycle, does a random mix of:
  - INCR of its own counter `crash:ctr:<w>` (one key for the whole run),
  - SET of a unique key `crash:k:<cycle>:<w>:<seq>`,
  - RPUSH of a unique element to its own list `crash:l:<cycle>:<w>`,
  - HSET of a unique field in its own hash `crash:h:<cycle>:<w>`,
  - sometimes two of those at once: MULTI/EXEC, or one Lua script (EVAL).
A write is acknowledged when its reply (EXEC's, for a transaction) arrived. A
connection error makes the outcome unknown, never a failure: the writer stops,
and its one in-flight write may or may not be there after the restart.

R reader threads (their own connections) meanwhile read the writers' counters
(GET) and lists (LLEN): a read that saw a write is an acknowledgement too
(`appendfsync always` may not reveal a write before it is durable), so after the
restart each counter must be at least the largest value a reader saw, and each
list at least as long as a reader saw it. A SIGKILL loses only what the server
had not yet handed to the kernel, a short window on a fast disk; --slow-disk-us
(DEBUG AOF-FLUSH-SLEEP before every write of the log) widens it, so that a reply
released too early is caught (see docs/persistence.md).

--appendfsync everysec runs the same checks under `everysec`: a SIGKILL is not a
power loss, and Basalt acknowledges nothing (a read included) before the log is
handed to the kernel, so nothing acknowledged may be lost there either (Redis
holds the same for a kill; a power loss is another matter). --rewrite-every S has
a thread send BGREWRITEAOF every 0.5-1.5 S seconds, so that kills land in and
around log rewrites (the switch to a new incremental file, the new base, the
manifest's replacement).

After each restart it checks, for the cycle just ended:
  - each counter is >= its last acknowledged value and <= the INCRs attempted;
  - every acknowledged key holds its value and every acknowledged hash field is
    there;
  - each list is exactly its acknowledged elements, in order (plus the
    in-flight one at the end, if that landed);
  - nothing else: no element or field that was never written, no duplicate;
  - no counter below, and no list shorter than, what a reader saw.
What the restart showed is then taken as fact (the in-flight writes resolved),
and the previous cycle and one random earlier cycle are checked again, exactly.
After the last cycle every cycle is checked again. Error replies from the
server (other than the connection being cut by the kill) also count as failures.

Prints one line per cycle and a summary
  crash-test: N cycles, M acknowledged writes and R reads checked, L lost
and exits 1 if anything was lost or wrong, or the server failed to (re)start.
Bounded by --cycles and --max-seconds (no new cycle starts after that).

Usage (from the repository root; needs Python 3 and redis-py, see
tests/py/requirements.txt):
  cargo build --release -p basalt-server
  python3 scripts/crash-test.py [--server-bin target/release/basalt-server]
      [--cycles 200] [--writers 4] [--readers 2] [--max-seconds 900] [--seed N]
      [--extra-args "--io-engine epoll"] [--slow-disk-us 2000] [--keep-dir]
      [--appendfsync everysec] [--rewrite-every 0.3] [--large-values]
Check the script itself against real Redis:
  python3 scripts/crash-test.py --server-bin /usr/bin/redis-server --cycles 10
"""

import argparse
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT = 60.0  # seconds for a (re)start, AOF replay included
SOCKET_TIMEOUT = 10.0
CHUNK = 500  # keys per MGET while verifying


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(path, n=40):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError as e:
        return f"(no log: {e})"


class Server:
    """One server process started by this script, killed only by its own PID."""

    def __init__(self, binary, data_dir, extra_args, slow_disk_us=0, appendfsync="always"):
        self.binary = binary
        self.appendfsync = appendfsync
        self.data_dir = data_dir
        self.extra_args = extra_args
        self.slow_disk_us = slow_disk_us
        self.proc = None
        self.port = None
        self.log_path = os.path.join(data_dir, "crash-test-server.log")

    def start(self):
        """Starts the server and waits until it answers PING; raises on failure."""
        self.port = free_port()
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", self.data_dir,
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            "--save", "",
        ] + (["--enable-debug-command", "yes"] if self.slow_disk_us else []) + self.extra_args
        log = open(self.log_path, "ab")
        log.write(f"\n===== crash-test start: {shlex.join(args)}\n".encode())
        log.flush()
        try:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            code = self.proc.poll()
            if code is not None:
                raise RuntimeError(
                    f"server exited with code {code} during start; log tail:\n"
                    + log_tail(self.log_path)
                )
            try:
                c = redis.Redis(
                    host="127.0.0.1", port=self.port, socket_timeout=1.0,
                    socket_connect_timeout=1.0,
                )
                if c.ping():
                    if self.slow_disk_us:
                        c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", self.slow_disk_us)
                    c.close()
                    return
            except redis.exceptions.RedisError:
                pass  # not listening yet, or -LOADING
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(
                    f"server did not answer PING within {START_TIMEOUT:.0f} s; log tail:\n"
                    + log_tail(self.log_path)
                )
            time.sleep(0.02)

    def kill(self):
        """SIGKILL by PID (only the process this script started), then reap it."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None

    def client(self):
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=SOCKET_TIMEOUT,
            socket_connect_timeout=SOCKET_TIMEOUT, retry_on_timeout=False,
            single_connection_client=True,
        )


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------

def ctr_key(w):
    return f"crash:ctr:{w}"


def set_key(cycle, w, seq):
    return f"crash:k:{cycle}:{w}:{seq}"


# --large-values: each SET's value is 300 KB to 3 MB (issue 26: a kill in the middle of
# a large write must leave nothing of it, and nothing corrupt, after the restart).
LARGE_VALUES = False
_LARGE_FILL = bytes(range(33, 127)) * 40000  # printable, about 3.7 MB


def set_value(cycle, w, seq):
    head = f"v{cycle}:{w}:{seq}"
    if not LARGE_VALUES:
        return head
    size = 300_000 + (seq * 7919 + w * 104729 + cycle * 1299709) % 2_700_000
    return head + ":" + _LARGE_FILL[:size].decode()


def list_key(cycle, w):
    return f"crash:l:{cycle}:{w}"


def hash_key(cycle, w):
    return f"crash:h:{cycle}:{w}"


class WriterLog:
    """What one writer did in one cycle."""

    def __init__(self):
        self.incr_acked = 0   # INCRs whose reply arrived
        self.ctr_acked = None  # the last value an INCR returned
        self.sets = []        # acked SET seqs
        self.hsets = []       # acked HSET seqs (field f<seq> = <seq>)
        self.pushes = []      # acked RPUSH seqs, in order
        self.multis = 0       # acked MULTI/EXEC
        self.scripts = 0      # of which acked as one script (EVAL)
        self.pending = []     # ops of the in-flight write (unknown outcome)
        self.errors = []      # unexpected error replies
        self.ops = 0

    def acked(self):
        return self.incr_acked + len(self.sets) + len(self.hsets) + len(self.pushes)


def writer(server_port, cycle, w, rng, stop, out):
    c = redis.Redis(
        host="127.0.0.1", port=server_port, socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=SOCKET_TIMEOUT, retry_on_timeout=False,
    )
    seq = 0
    kinds = ["incr", "set", "rpush", "hset"]
    while not stop.is_set():
        choice = rng.random()
        if choice < 0.1:
            ops = rng.sample(kinds, 2)
        else:
            ops = [rng.choice(kinds)]
        planned = []
        for kind in ops:
            seq += 1
            planned.append((kind, seq))
        out.pending = planned
        try:
            if len(planned) == 1:
                kind, s = planned[0]
                results = [run_op(c, cycle, w, kind, s)]
            elif rng.random() < 0.5:
                p = c.pipeline(transaction=True)
                for kind, s in planned:
                    queue_op(p, cycle, w, kind, s)
                results = p.execute()
            else:
                results = script_ops(c, cycle, w, planned)
                out.scripts += 1
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
            return  # unknown outcome: out.pending stays
        except redis.exceptions.RedisError as e:
            out.pending = []
            out.errors.append(f"{planned}: {e!r}")
            return
        out.pending = []
        out.ops += 1
        if len(planned) > 1:
            out.multis += 1
        for (kind, s), res in zip(planned, results):
            if kind == "incr":
                out.incr_acked += 1
                out.ctr_acked = int(res)
            elif kind == "set":
                out.sets.append(s)
            elif kind == "rpush":
                out.pushes.append(s)
            else:
                out.hsets.append(s)


class ReaderLog:
    """The most one reader saw of each writer's counter and list in one cycle."""

    def __init__(self):
        self.ctr_seen = {}   # w -> largest counter value read
        self.llen_seen = {}  # w -> longest list length read
        self.reads = 0
        self.errors = []


def reader(server_port, cycle, writers, rng, stop, out):
    c = redis.Redis(
        host="127.0.0.1", port=server_port, socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=SOCKET_TIMEOUT, retry_on_timeout=False,
    )
    while not stop.is_set():
        w = rng.randrange(writers)
        try:
            if rng.random() < 0.5:
                v = c.get(ctr_key(w))
                if v is not None:
                    out.ctr_seen[w] = max(out.ctr_seen.get(w, 0), int(v))
            else:
                n = c.llen(list_key(cycle, w))
                out.llen_seen[w] = max(out.llen_seen.get(w, 0), n)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
            return  # the kill: what this reader saw stands
        except redis.exceptions.RedisError as e:
            out.errors.append(repr(e))
            return
        out.reads += 1


class RewriterLog:
    def __init__(self):
        self.started = 0
        self.errors = []


def rewriter(server_port, every, rng, stop, out):
    """BGREWRITEAOF every 0.5-1.5 `every` seconds until the kill."""
    c = redis.Redis(
        host="127.0.0.1", port=server_port, socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=SOCKET_TIMEOUT, retry_on_timeout=False,
    )
    while not stop.wait(rng.uniform(0.5, 1.5) * every):
        try:
            c.execute_command("BGREWRITEAOF")
            out.started += 1
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
            return
        except redis.exceptions.ResponseError as e:
            if "already in progress" not in str(e):
                out.errors.append(repr(e))
                return


def run_op(c, cycle, w, kind, s):
    if kind == "incr":
        return c.incr(ctr_key(w))
    if kind == "set":
        return c.set(set_key(cycle, w, s), set_value(cycle, w, s))
    if kind == "rpush":
        return c.rpush(list_key(cycle, w), str(s))
    return c.hset(hash_key(cycle, w), f"f{s}", str(s))


def script_ops(c, cycle, w, planned):
    """The writes of `planned` as one Lua script (EVAL), each one's reply in a list:
    acknowledged, as a transaction's, when the script's reply arrives."""
    lines, keys, argv = [], [], []
    for kind, s in planned:
        if kind == "incr":
            keys.append(ctr_key(w))
            lines.append(f"redis.call('incr', KEYS[{len(keys)}])")
        elif kind == "set":
            keys.append(set_key(cycle, w, s))
            argv.append(set_value(cycle, w, s))
            lines.append(f"redis.call('set', KEYS[{len(keys)}], ARGV[{len(argv)}])")
        elif kind == "rpush":
            keys.append(list_key(cycle, w))
            argv.append(str(s))
            lines.append(f"redis.call('rpush', KEYS[{len(keys)}], ARGV[{len(argv)}])")
        else:
            keys.append(hash_key(cycle, w))
            argv += [f"f{s}", str(s)]
            lines.append(f"redis.call('hset', KEYS[{len(keys)}], ARGV[{len(argv) - 1}], ARGV[{len(argv)}])")
    body = "return {" + ", ".join(lines) + "}"
    return c.eval(body, len(keys), *keys, *argv)


def queue_op(p, cycle, w, kind, s):
    if kind == "incr":
        p.incr(ctr_key(w))
    elif kind == "set":
        p.set(set_key(cycle, w, s), set_value(cycle, w, s))
    elif kind == "rpush":
        p.rpush(list_key(cycle, w), str(s))
    else:
        p.hset(hash_key(cycle, w), f"f{s}", str(s))


# ---------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------

class Known:
    """What one writer's data of one cycle must be, once the restart resolved it."""

    def __init__(self, sets, hsets, pushes):
        self.sets = sets      # seqs of keys that exist
        self.hsets = hsets    # seqs of fields that exist
        self.pushes = pushes  # list elements, in order

    def count(self):
        return len(self.sets) + len(self.hsets) + len(self.pushes)


class Problems:
    def __init__(self):
        self.lost = 0
        self.wrong = 0
        self.messages = []

    def lose(self, n, msg):
        self.lost += n
        self.note(msg)

    def bad(self, msg):
        self.wrong += 1
        self.note(msg)

    def note(self, msg):
        if len(self.messages) < 50:
            self.messages.append(msg)
        print(f"  PROBLEM: {msg}", flush=True)


def mget_existing(c, keys):
    """Values of `keys` (None where missing), in chunks."""
    out = []
    for i in range(0, len(keys), CHUNK):
        out.extend(c.mget(keys[i:i + CHUNK]))
    return out


def verify_first(c, cycle, w, log, problems):
    """Checks a writer's writes right after the restart that ended its cycle;
    returns the resolved Known state, and for each in-flight (unknown) write
    kind whether it landed. In-flight writes may be there or not."""
    pending = dict((k, s) for k, s in log.pending)
    landed = {}
    # SET keys.
    seqs = list(log.sets)
    if "set" in pending:
        seqs.append(pending["set"])
    vals = mget_existing(c, [set_key(cycle, w, s) for s in seqs])
    known_sets = []
    missing = 0
    for s, v in zip(seqs, vals):
        is_pending = "set" in pending and s == pending["set"]
        if v is None:
            if not is_pending:
                missing += 1
        elif v.decode() != set_value(cycle, w, s):
            problems.bad(f"cycle {cycle} writer {w}: key {set_key(cycle, w, s)} = {v!r}")
        else:
            known_sets.append(s)
            if is_pending:
                landed["set"] = True
    if "set" in pending:
        landed.setdefault("set", False)
    if missing:
        problems.lose(missing, f"cycle {cycle} writer {w}: {missing} acknowledged SET keys missing")
    # Hash fields.
    h = c.hgetall(hash_key(cycle, w))
    got = {k.decode(): v.decode() for k, v in h.items()}
    known_hsets = []
    missing = 0
    for s in log.hsets:
        if got.pop(f"f{s}", None) == str(s):
            known_hsets.append(s)
        else:
            missing += 1
    if missing:
        problems.lose(missing, f"cycle {cycle} writer {w}: {missing} acknowledged HSET fields missing")
    if "hset" in pending and got.get(f"f{pending['hset']}") == str(pending["hset"]):
        got.pop(f"f{pending['hset']}")
        known_hsets.append(pending["hset"])
        landed["hset"] = True
    elif "hset" in pending:
        landed["hset"] = False
    if got:
        problems.bad(f"cycle {cycle} writer {w}: unexpected hash fields {sorted(got)[:5]}")
    # List: exactly the acked elements in order, maybe plus the in-flight one.
    items = [x.decode() for x in c.lrange(list_key(cycle, w), 0, -1)]
    want = [str(s) for s in log.pushes]
    if items == want:
        known_pushes = list(log.pushes)
        if "rpush" in pending:
            landed["rpush"] = False
    elif "rpush" in pending and items == want + [str(pending["rpush"])]:
        known_pushes = list(log.pushes) + [pending["rpush"]]
        landed["rpush"] = True
    else:
        present = set(items)
        missing = sum(1 for x in want if x not in present)
        if missing:
            problems.lose(missing, f"cycle {cycle} writer {w}: {missing} acknowledged RPUSH elements missing")
        else:
            problems.bad(
                f"cycle {cycle} writer {w}: list {list_key(cycle, w)} has {len(items)} elements, "
                f"not the {len(want)} acknowledged in order (first: {items[:5]} vs {want[:5]})"
            )
        known_pushes = [int(x) for x in items if x.isdigit()]
    return Known(known_sets, known_hsets, known_pushes), landed


def verify_known(c, cycle, w, known, problems):
    """Checks a writer's data of an earlier cycle exactly against what was resolved."""
    keys = [set_key(cycle, w, s) for s in known.sets]
    vals = mget_existing(c, keys)
    missing = sum(1 for v in vals if v is None)
    if missing:
        problems.lose(missing, f"recheck cycle {cycle} writer {w}: {missing} SET keys missing")
    for s, v in zip(known.sets, vals):
        if v is not None and v.decode() != set_value(cycle, w, s):
            problems.bad(f"recheck cycle {cycle} writer {w}: key {set_key(cycle, w, s)} = {v!r}")
    h = c.hgetall(hash_key(cycle, w))
    got = {k.decode(): v.decode() for k, v in h.items()}
    want = {f"f{s}": str(s) for s in known.hsets}
    if got != want:
        missing = sum(1 for k, v in want.items() if got.get(k) != v)
        if missing:
            problems.lose(missing, f"recheck cycle {cycle} writer {w}: {missing} HSET fields missing")
        else:
            problems.bad(f"recheck cycle {cycle} writer {w}: unexpected hash fields")
    items = [x.decode() for x in c.lrange(list_key(cycle, w), 0, -1)]
    want_l = [str(s) for s in known.pushes]
    if items != want_l:
        present = set(items)
        missing = sum(1 for x in want_l if x not in present)
        if missing:
            problems.lose(missing, f"recheck cycle {cycle} writer {w}: {missing} list elements missing")
        else:
            problems.bad(f"recheck cycle {cycle} writer {w}: list differs from before")
    return known.count()


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server-bin", default=os.path.join(REPO, "target/release/basalt-server"))
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--slow-disk-us", type=int, default=0,
                    help="delay every write of the log this long (DEBUG AOF-FLUSH-SLEEP): a slow disk, "
                         "which keeps writes in memory long enough for a kill to find them there")
    ap.add_argument("--max-seconds", type=float, default=900)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--extra-args", default="", help="more server flags, e.g. \"--io-engine epoll\"")
    ap.add_argument("--keep-dir", action="store_true", help="keep the data dir even on success")
    ap.add_argument("--appendfsync", choices=["always", "everysec"], default="always")
    ap.add_argument("--rewrite-every", type=float, default=0,
                    help="send BGREWRITEAOF every 0.5-1.5 times this many seconds (0: never)")
    ap.add_argument("--large-values", action="store_true",
                    help="SET values of 300 KB to 3 MB, so that kills land inside large writes")
    args = ap.parse_args()
    global LARGE_VALUES
    LARGE_VALUES = args.large_values

    if not os.path.isfile(args.server_bin) or not os.access(args.server_bin, os.X_OK):
        print(f"crash-test: no server binary at {args.server_bin} (build it, or pass --server-bin)")
        return 2
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    data_dir = tempfile.mkdtemp(prefix="basalt-crash-test-")
    print(f"crash-test: server {args.server_bin}, appendfsync {args.appendfsync}, {args.writers} writers, "
          f"{args.readers} readers" + (f", BGREWRITEAOF every ~{args.rewrite_every} s" if args.rewrite_every else "")
          + (", SET values of 300 KB to 3 MB" if args.large_values else "")
          + f", up to {args.cycles} cycles / {args.max_seconds:.0f} s, seed {seed}, dir {data_dir}", flush=True)

    server = Server(args.server_bin, data_dir, shlex.split(args.extra_args), args.slow_disk_us, args.appendfsync)
    problems = Problems()
    known = {}          # (cycle, w) -> Known
    ctr = {}            # w -> value after the last restart
    checked = 0         # acknowledged writes checked (each counted once)
    reads_checked = 0   # reads whose result was checked against the restart
    rewrites = 0        # BGREWRITEAOFs started
    cycles_done = 0
    start_failed = False
    t0 = time.monotonic()

    try:
        server.start()
        c0 = server.client()
        for w in range(args.writers):
            v = c0.get(ctr_key(w))
            ctr[w] = int(v) if v is not None else 0
        c0.close()
        for cycle in range(1, args.cycles + 1):
            if time.monotonic() - t0 > args.max_seconds:
                print(f"crash-test: --max-seconds {args.max_seconds:.0f} reached", flush=True)
                break
            run_for = rng.uniform(0.2, 1.5)
            stop = threading.Event()
            logs = [WriterLog() for _ in range(args.writers)]
            threads = [
                threading.Thread(
                    target=writer,
                    args=(server.port, cycle, w, random.Random(rng.randrange(1 << 30)), stop, logs[w]),
                    daemon=True,
                )
                for w in range(args.writers)
            ]
            readers = [ReaderLog() for _ in range(args.readers)]
            threads += [
                threading.Thread(
                    target=reader,
                    args=(server.port, cycle, args.writers, random.Random(rng.randrange(1 << 30)), stop, readers[r]),
                    daemon=True,
                )
                for r in range(args.readers)
            ]
            rw = RewriterLog()
            if args.rewrite_every > 0:
                threads.append(threading.Thread(
                    target=rewriter,
                    args=(server.port, args.rewrite_every, random.Random(rng.randrange(1 << 30)), stop, rw),
                    daemon=True,
                ))
            for t in threads:
                t.start()
            time.sleep(run_for)
            server.kill()  # while the writers are writing
            stop.set()
            for t in threads:
                t.join(timeout=SOCKET_TIMEOUT + 5)
                if t.is_alive():
                    problems.bad(f"cycle {cycle}: a client thread did not stop")
            t_restart = time.monotonic()
            try:
                server.start()
            except RuntimeError as e:
                start_failed = True
                problems.note(f"cycle {cycle}: restart failed: {e}")
                break
            restart_s = time.monotonic() - t_restart
            c = server.client()
            cycle_checked = 0
            lost_before = problems.lost
            rewrites += rw.started
            for e in rw.errors:
                problems.bad(f"cycle {cycle} rewriter: error reply {e}")
            for rl in readers:
                for e in rl.errors:
                    problems.bad(f"cycle {cycle} reader: error reply {e}")
                reads_checked += rl.reads
            for w, log in enumerate(logs):
                for e in log.errors:
                    problems.bad(f"cycle {cycle} writer {w}: error reply {e}")
                # Counter: >= last acked, <= attempted.
                v = c.get(ctr_key(w))
                v = int(v) if v is not None else 0
                attempted = ctr[w] + log.incr_acked + sum(1 for k, _ in log.pending if k == "incr")
                lo = log.ctr_acked if log.ctr_acked is not None else ctr[w]
                if v < lo:
                    problems.lose(lo - v, f"cycle {cycle} writer {w}: counter {v} < acknowledged {lo}")
                elif v > attempted:
                    problems.bad(f"cycle {cycle} writer {w}: counter {v} > attempted {attempted}")
                seen = max((rl.ctr_seen.get(w, 0) for rl in readers), default=0)
                if v < seen:
                    problems.lose(seen - v, f"cycle {cycle} writer {w}: counter {v} < {seen} seen by a reader")
                ctr[w] = v
                cycle_checked += log.incr_acked
                known[(cycle, w)], landed = verify_first(c, cycle, w, log, problems)
                seen = max((rl.llen_seen.get(w, 0) for rl in readers), default=0)
                if len(known[(cycle, w)].pushes) < seen:
                    problems.lose(
                        seen - len(known[(cycle, w)].pushes),
                        f"cycle {cycle} writer {w}: list of {len(known[(cycle, w)].pushes)} elements, "
                        f"a reader saw {seen}",
                    )
                # An in-flight MULTI/EXEC landed whole or not at all.
                if any(k == "incr" for k, _ in log.pending):
                    landed["incr"] = v == attempted
                if len(log.pending) > 1 and len(set(landed.values())) > 1:
                    problems.bad(
                        f"cycle {cycle} writer {w}: in-flight MULTI/EXEC {log.pending} "
                        f"landed in part: {landed}"
                    )
                cycle_checked += log.acked() - log.incr_acked
            # Recheck the previous cycle and one random earlier one.
            recheck = set()
            if cycle > 1:
                recheck.add(cycle - 1)
            if cycle > 2:
                recheck.add(rng.randrange(1, cycle - 1))
            for rc in sorted(recheck):
                for w in range(args.writers):
                    verify_known(c, rc, w, known[(rc, w)], problems)
            c.close()
            checked += cycle_checked
            cycles_done = cycle
            acks = sum(l.acked() for l in logs)
            unknown = sum(1 for l in logs if l.pending)
            print(
                f"cycle {cycle}: ran {run_for:.2f} s, {acks} acked "
                f"(incr {sum(l.incr_acked for l in logs)}, set {sum(len(l.sets) for l in logs)}, "
                f"rpush {sum(len(l.pushes) for l in logs)}, hset {sum(len(l.hsets) for l in logs)}, "
                f"in {sum(l.multis for l in logs)} multi, {sum(l.scripts for l in logs)} of them scripts), {unknown} in flight, "
                f"{sum(rl.reads for rl in readers)} reads, "
                + (f"{rw.started} rewrites, " if args.rewrite_every else "")
                + f"restart {restart_s:.2f} s, lost {problems.lost - lost_before}, "
                f"rechecked {sorted(recheck)}",
                flush=True,
            )
        if not start_failed and cycles_done:
            # Everything, once more.
            c = server.client()
            total = 0
            for (cy, w), k in sorted(known.items()):
                total += verify_known(c, cy, w, k, problems)
            for w in range(args.writers):
                v = c.get(ctr_key(w))
                v = int(v) if v is not None else 0
                if v != ctr[w]:
                    problems.bad(f"final: counter {w} = {v}, was {ctr[w]} after the last restart")
            c.close()
            print(f"final check: {total} writes of {cycles_done} cycles and {args.writers} counters", flush=True)
    except Exception as e:  # noqa: BLE001 - report any crash of the script as a failure
        problems.note(f"crash-test aborted: {e!r}")
        start_failed = True
    finally:
        server.kill()

    failed = problems.lost > 0 or problems.wrong > 0 or start_failed
    print(f"crash-test: {cycles_done} cycles, {checked} acknowledged writes and {reads_checked} reads checked, "
          + (f"{rewrites} rewrites started, " if args.rewrite_every else "") + f"{problems.lost} lost")
    if problems.wrong:
        print(f"crash-test: {problems.wrong} other problems (unexpected data or error replies)")
    if start_failed:
        print(f"crash-test: the server failed to restart or the run was aborted; log: {server.log_path}")
    if failed or args.keep_dir:
        print(f"crash-test: data dir kept: {data_dir}")
    else:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
