#!/usr/bin/env bash
# Snapshot cost, Basalt against Redis 7.0.15 in the same run (issue 5):
#  1. BGSAVE of KEYS keys (DEBUG POPULATE: key:0 .. key:KEYS-1, SIZE-byte values) while a
#     client overwrites random keys among them as fast as it can (basalt-bench memtier,
#     WRITE_CLIENTS connections, closed loop). ROUNDS rounds, servers interleaved, two saves
#     per round and server:
#     - latency: the p99 of GETS GETs of random existing keys (basalt-bench memtier,
#       READ_CLIENTS connections, closed loop) started as the save starts, against the p99
#       of the same GETs just before it. GETS is small enough that the GETs end before the
#       save does (the "in save" column counts the rounds where they did). Few connections
#       are worse, not better, here: on this 2-vCPU VM a process that sleeps between
#       requests wakes with a tail of milliseconds, so -c 4 measures the hypervisor.
#     - memory and duration: PSS of the server and, for Redis, of its fork child
#       (/proc/PID/smaps_rollup) before and at its peak during the save, sampled every
#       100 ms; not during the latency save, since reading smaps_rollup walks the page
#       tables under the process's memory lock and would perturb what is measured.
#     Medians over the rounds (peak: the highest round).
#  2. Start-up: the time each server takes to load the same dump.rdb (written by Redis),
#     from its own log line "DB loaded from disk: X seconds".
# Usage: KEYS=1000000 SIZE=64 THREADS=1 ROUNDS=5 GETS=10000 WRITE_CLIENTS=5 READ_CLIENTS=10 \
#   scripts/bench-snapshot.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
keys="${KEYS:-1000000}"
size="${SIZE:-64}"
threads="${THREADS:-1}"
rounds="${ROUNDS:-5}"
gets="${GETS:-10000}"
write_clients="${WRITE_CLIENTS:-5}"
read_clients="${READ_CLIENTS:-10}"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_rust
ensure_redis_tools
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server -p bench
bench="$repo/target/release/basalt-bench"
. "$repo/scripts/lib/scratch.sh"

# PSS in KiB of a process and its children (Redis's fork child shows up as a child).
pss() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1" || true); do
    local v
    v=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}
field() { redis-cli -p "$1" info persistence | tr -d '\r' | sed -n "s/^$2://p"; }
memtier() { # port, then memtier options; runs in place of the calling (sub)shell
  local port=$1
  shift
  exec "$bench" memtier --server 127.0.0.1 --port "$port" --threads 1 --key-prefix key: \
    --key-minimum 0 --key-maximum $((keys - 1)) --key-pattern R:R --data-size "$size" --hide-histogram "$@"
}
p99_get() { # port, number of GETs -> p99 in ms
  (memtier "$1" --ratio 0:1 --clients "$read_clients" --requests $(($2 / read_clients)) --json-out-file "$work/gets.json" >/dev/null 2>&1)
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ALL STATS"]["Gets"]["Percentile Latencies"]["p99.000"])' "$work/gets.json"
}

start() { # name port -> pid
  local name=$1 port=$2
  mkdir -p "$work/$name"
  if [ "$name" = redis ]; then
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/$name" \
      --enable-debug-command yes >"$work/$name.log" 2>&1 &
  else
    "$repo/target/release/basalt-server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --dir "$work/$name" --threads "$threads" --enable-debug-command yes >"$work/$name.log" 2>&1 &
  fi
  local pid=$!
  pids+=("$pid")
  # PONG, not LOADING: the dataset is in.
  for _ in $(seq 300); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
  echo "$pid"
}

# Peak PSS of $1 (and children) until the file $2.stop appears; written to $2.
sample_peak() {
  local peak=0 now
  while [ ! -e "$2.stop" ]; do
    now=$(pss "$1")
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.1
  done
  echo "$peak" >"$2"
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A port_of pid_of
port=$((22000 + RANDOM % 20000))
echo "BGSAVE of $keys keys ($size-byte values) while $write_clients connections overwrite keys; GETs on $read_clients; $rounds rounds, $gets GETs per measurement; $(date -u '+%Y-%m-%d %H:%M UTC'), basalt --threads $threads"
for name in redis basalt; do
  port=$((port + 1))
  port_of[$name]=$port
  pid_of[$name]=$(start "$name" "$port")
  pids+=("${pid_of[$name]}")
  redis-cli -p "$port" debug populate "$keys" key "$size" >/dev/null
done
for round in $(seq "$rounds"); do
  for name in redis basalt; do
    port=${port_of[$name]}
    pid=${pid_of[$name]}
    # A writer over the same key range (bounded: stopped below, and by --test-time).
    (memtier "$port" --clients "$write_clients" --ratio 1:0 --test-time 120 >/dev/null 2>&1) &
    writer=$!
    pids+=("$writer")
    sleep 0.5
    # First save: latency only (nothing else sampling the server meanwhile).
    idle=$(p99_get "$port" "$gets")
    redis-cli -p "$port" bgsave >/dev/null
    during=$(p99_get "$port" "$gets")
    in_save=$(field "$port" rdb_bgsave_in_progress)
    while [ "$(field "$port" rdb_bgsave_in_progress)" = 1 ]; do sleep 0.05; done
    sync
    sleep 0.5
    # Second save: memory and duration.
    base_pss=$(pss "$pid")
    rm -f "$work/peak" "$work/peak.stop"
    sample_peak "$pid" "$work/peak" &
    sampler=$!
    t0=$(date +%s.%N)
    redis-cli -p "$port" bgsave >/dev/null
    while [ "$(field "$port" rdb_bgsave_in_progress)" = 1 ]; do sleep 0.05; done
    t1=$(date +%s.%N)
    touch "$work/peak.stop"
    wait "$sampler"
    kill "$writer" 2>/dev/null || true
    wait "$writer" 2>/dev/null || true
    echo "$base_pss $(cat "$work/peak") $idle $during $(echo "$t1 - $t0" | bc) $in_save $(field "$port" rdb_last_bgsave_status)" >>"$work/rounds-$name"
    # Let the kernel write the new file back before the next measurement starts.
    sync
    sleep 1
  done
done
echo "| server | PSS before (MiB) | peak PSS during BGSAVE (MiB) | peak / before (max) | GET p99 before (ms) | GET p99 during save (ms) | ratio of medians | median of round ratios | rounds in save | save time (s) | status |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for name in redis basalt; do
  f="$work/rounds-$name"
  b=$(awk '{print $1}' "$f" | median)
  p=$(awk '{print $2}' "$f" | sort -n | tail -1)
  ratio=$(awk '{printf "%.3f\n", $2 / $1}' "$f" | sort -n | tail -1)
  i=$(awk '{print $3}' "$f" | median)
  d=$(awk '{print $4}' "$f" | median)
  rr=$(awk '{printf "%.3f\n", $4 / $3}' "$f" | median)
  t=$(awk '{print $5}' "$f" | median)
  n=$(awk '$6 == 1' "$f" | wc -l)
  st=$(awk '{print $7}' "$f" | sort -u | tr '\n' ' ')
  awk -v n="$name" -v b="$b" -v p="$p" -v r="$ratio" -v i="$i" -v d="$d" -v rr="$rr" -v t="$t" -v k="$n/$rounds" -v st="$st" \
    'BEGIN {printf "| %s | %.1f | %.1f | %.2f | %s | %s | %.2f | %.2f | %s | %.2f | %s|\n", n, b/1024, p/1024, r, i, d, d/i, rr, k, t, st}'
done
echo "Per round (PSS before KiB, peak KiB, p99 before, p99 during, save s, in save, status):"
for name in redis basalt; do sed "s/^/$name /" "$work/rounds-$name"; done
for name in redis basalt; do
  redis-cli -p "${port_of[$name]}" shutdown nosave >/dev/null 2>&1 || true
  wait "${pid_of[$name]}" 2>/dev/null || true
done

echo
echo "Start-up: loading the same dump.rdb ($keys keys, written by Redis 7.0.15)"
port=$((port + 1))
pid=$(start redis "$port")
redis-cli -p "$port" debug populate "$keys" key "$size" >/dev/null
redis-cli -p "$port" save >/dev/null
cp "$work/redis/dump.rdb" "$work/dump.rdb"
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
wait "$pid" 2>/dev/null || true
for round in 1 2 3; do
  for name in redis basalt; do
    rm -rf "${work:?}/$name" && mkdir -p "$work/$name" && cp "$work/dump.rdb" "$work/$name/dump.rdb"
    port=$((port + 1))
    pid=$(start "$name" "$port")
    secs=$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$work/$name.log" | tail -1)
    echo "round $round $name: $secs s ($(redis-cli -p "$port" dbsize) keys)"
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$pid" 2>/dev/null || true
  done
done
