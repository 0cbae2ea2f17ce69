#!/usr/bin/env bash
# Benchmark Basalt against Redis 7.0 on loopback with redis-benchmark.
#
# Usage (from the repository root):
#   scripts/bench.sh                       # full run: ~5-8 min, hard cap MAX_SECONDS
#   QUICK=1 scripts/bench.sh               # smoke run: 1 round, fewer requests, 100k keys
#   BASALT_CONFIGS="t1-epoll t2-epoll" scripts/bench.sh
#   BASALT_BIN=/usr/bin/redis-server scripts/bench.sh   # Redis vs Redis: checks the method
#
# What it does:
#   1. installs Debian's redis-server and redis-tools if redis-server or
#      redis-benchmark is missing;
#   2. builds target/release/basalt-server (skipped when BASALT_BIN is set);
#   3. starts Redis and each Basalt configuration (CONFIG = t<threads>-<io engine>)
#      on free loopback ports, with throwaway data directories;
#   4. runs every workload ROUNDS times, interleaving the servers round by round,
#      and reports the median requests/s (redis-benchmark --csv) and the median
#      server CPU time per request (utime+stime from /proc/PID/stat);
#   5. restarts each server empty, loads KEYS keys key:N -> value:N with
#      redis-cli --pipe and reports bytes per key (used_memory and RSS);
#   6. prints Markdown tables for docs/benchmarks.md and saves them, with the
#      raw per-round numbers, under target/bench/;
#   7. kills only the processes it started and removes its temporary directory.
#
# Environment (defaults in brackets; QUICK=1 changes the starred ones):
#   BASALT_BIN       server binary for the Basalt side [target/release/basalt-server].
#                    If its name starts with "redis-server" the --threads and
#                    --io-engine flags are left out.
#   BASALT_CONFIGS   Basalt configurations [t1-epoll t1-uring t2-epoll t2-uring];
#                    "t1-uring+name=value" adds a server flag, "t1-uring@base" runs
#                    BASALT_BASE_BIN (A/B of two builds in one run)
#   BASALT_BASE_BIN  the other build for "@base" configurations
#   WORKLOADS        redis-benchmark tests, "-pN" suffix = pipeline N
#                    [set get incr mset set-p16 get-p16]
#   REQUESTS*        requests per unpipelined run [200000; QUICK 20000]
#   PIPE_REQUESTS*   requests per pipelined run [2000000; QUICK 200000]
#   ROUNDS*          rounds per workload [3; QUICK 1]
#   KEYS*            keys loaded for the memory test [1000000; QUICK 100000]
#   CLIENTS          redis-benchmark -c [50]     RANDOM_KEYS  redis-benchmark -r [100000]
#   SKIP_MEMORY=1    skip the memory test        SKIP_BUILD=1  do not run cargo build
#   MAX_SECONDS      stop starting new runs after this long [840]
#   REDIS_BIN        the reference server [redis-server on PATH]
#   CARGO_JOBS       passed to cargo build as -j
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

# The exact command, with the environment overrides that shape the run.
CMD=""
for v in QUICK BASALT_BIN BASALT_BASE_BIN BASALT_CONFIGS WORKLOADS REQUESTS PIPE_REQUESTS ROUNDS KEYS CLIENTS \
    RANDOM_KEYS SKIP_MEMORY SKIP_BUILD MAX_SECONDS REDIS_BIN; do
    if [[ -n "${!v:-}" ]]; then
        CMD+="$v=$(printf '%q' "${!v}") "
    fi
done
CMD+="scripts/bench.sh"
export BENCH_COMMAND="$CMD"

# 1. Redis tools.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-benchmark >/dev/null 2>&1 ||
    ! command -v redis-cli >/dev/null 2>&1; then
    echo "bench: installing redis-server and redis-tools with apt-get" >&2
    SUDO=""
    if [[ $(id -u) -ne 0 ]]; then SUDO="sudo -n"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends redis-server redis-tools
fi
command -v python3 >/dev/null 2>&1 || { echo "bench: python3 is required" >&2; exit 1; }

# 2. Basalt.
if [[ -z "${BASALT_BIN:-}" ]]; then
    if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
        echo "bench: cargo build --release -p basalt-server" >&2
        cargo build --release -p basalt-server ${CARGO_JOBS:+-j "$CARGO_JOBS"}
    fi
    export BASALT_BIN="$ROOT/target/release/basalt-server"
fi
if [[ ! -x "$BASALT_BIN" ]]; then
    echo "bench: $BASALT_BIN is not an executable" >&2
    exit 1
fi

# 3-7. The run itself. The driver records every PID it starts in $WORK/pids
# and stops those servers itself, also when sent SIGTERM. The EXIT trap asks a
# still-running driver to stop, then kills whichever recorded PIDs are still
# alive and removes the work directory. The driver runs in the background so
# that this shell's INT/TERM traps fire at once instead of after it finishes.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/basalt-bench.XXXXXX")
DRIVER_PID=""
cleanup() {
    local pid
    trap - INT TERM
    if [[ -n "$DRIVER_PID" ]] && kill -0 "$DRIVER_PID" 2>/dev/null; then
        kill -TERM "$DRIVER_PID" 2>/dev/null || true
        wait "$DRIVER_PID" 2>/dev/null || true
    fi
    if [[ -f "$WORK/pids" ]]; then
        while read -r pid; do
            if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
                echo "bench: killing leftover server pid $pid" >&2
                kill -TERM "$pid" 2>/dev/null || true
            fi
        done <"$WORK/pids"
        sleep 0.5
        while read -r pid; do
            if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
                kill -KILL "$pid" 2>/dev/null || true
            fi
        done <"$WORK/pids"
    fi
    rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$ROOT/target/bench"
python3 "$ROOT/scripts/bench/driver.py" --work "$WORK" --results "$ROOT/target/bench" &
DRIVER_PID=$!
wait "$DRIVER_PID"
