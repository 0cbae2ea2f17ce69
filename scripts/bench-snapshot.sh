#!/usr/bin/env bash
# Snapshot cost, Basalt against Redis 7.0.15 in the same run (issue 5):
#  1. BGSAVE of KEYS keys (DEBUG POPULATE, SIZE-byte values) while a client writes:
#     memory before and at its peak during the save (PSS of the server and, for Redis,
#     of its fork child, from /proc/PID/smaps_rollup, sampled every 20 ms), and the p99
#     of concurrent GETs during the save against the p99 without a save.
#  2. Start-up: the time each server takes to load the same dump.rdb (written by Redis),
#     from its own log line "DB loaded from disk: X seconds".
# Usage: KEYS=1000000 SIZE=64 THREADS=1 scripts/bench-snapshot.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
keys="${KEYS:-1000000}"
size="${SIZE:-64}"
threads="${THREADS:-1}"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_rust
ensure_redis_tools
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

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
p99_get() {
  redis-benchmark -p "$1" -t get -c 10 -n "$2" -r "$keys" --csv 2>/dev/null \
    | awk -F'","' '/^"GET"/ {gsub(/"/, "", $7); print $7}'
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

declare -A r
port=$((22000 + RANDOM % 20000))
echo "BGSAVE of $keys keys ($size-byte values) while a client writes; $(date -u '+%Y-%m-%d %H:%M UTC'), basalt --threads $threads"
for name in redis basalt; do
  port=$((port + 1))
  pid=$(start "$name" "$port")
  redis-cli -p "$port" debug populate "$keys" key "$size" >/dev/null
  sleep 1
  base_pss=$(pss "$pid")
  p99_idle=$(p99_get "$port" 200000)
  # A writer over the same key range while the save runs (bounded: it stops by itself).
  redis-benchmark -p "$port" -t set -c 10 -n 3000000 -r "$keys" -d "$size" -q >/dev/null 2>&1 &
  writer=$!
  pids+=("$writer")
  sleep 1
  redis-cli -p "$port" bgsave >/dev/null
  t0=$(date +%s.%N)
  ( p99_get "$port" 200000 >"$work/p99-$name" ) &
  getter=$!
  peak=$base_pss
  while [ "$(field "$port" rdb_bgsave_in_progress)" = 1 ]; do
    now=$(pss "$pid")
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.02
  done
  t1=$(date +%s.%N)
  wait "$getter" || true
  kill "$writer" 2>/dev/null || true
  wait "$writer" 2>/dev/null || true
  status=$(field "$port" rdb_last_bgsave_status)
  r[$name]="$base_pss $peak $p99_idle $(cat "$work/p99-$name") $(echo "$t1 - $t0" | bc) $status"
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" 2>/dev/null || true
done
echo "| server | PSS before (MiB) | peak PSS during BGSAVE (MiB) | peak / before | GET p99 idle (ms) | GET p99 during save (ms) | ratio | save time (s) | status |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
for name in redis basalt; do
  read -r b p i s t st <<<"${r[$name]}"
  awk -v n="$name" -v b="$b" -v p="$p" -v i="$i" -v s="$s" -v t="$t" -v st="$st" \
    'BEGIN {printf "| %s | %.1f | %.1f | %.2f | %s | %s | %.2f | %.2f | %s |\n", n, b/1024, p/1024, p/b, i, s, s/i, t, st}'
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
