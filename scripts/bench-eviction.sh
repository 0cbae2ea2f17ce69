#!/usr/bin/env bash
# Eviction quality, Basalt against Redis 7.0.15 in the same run (issue 26): both servers
# with the same maxmemory and policy, the same zipfian read/write mix from basalt-bench
# memtier over a key space several times the limit, rounds interleaved; prints each
# round's GET hit ratio, the median per server, their ratio, and the memory in use
# against the limit (INFO used_memory, sampled after each round).
#
# Usage: ROUNDS=3 SECONDS_PER_ROUND=10 MAXMEMORY=64mb POLICY=allkeys-lru \
#        KEYS=300000 DATA_SIZE=1000 RATIO=1:10 scripts/bench-eviction.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_ROUND:-10}"
maxmemory="${MAXMEMORY:-64mb}"
policy="${POLICY:-allkeys-lru}"
keys="${KEYS:-300000}"
size="${DATA_SIZE:-1000}"
ratio="${RATIO:-1:10}"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_rust
ensure_redis_tools
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server -p bench
. "$repo/scripts/lib/scratch.sh"
bench="$repo/target/release/basalt-bench"

declare -A port
next=$((21000 + RANDOM % 20000))
for name in redis basalt; do
  p=$next; next=$((next + 1)); port[$name]=$p
  mkdir -p "$work/$name"
  args=(--port "$p" --bind 127.0.0.1 --save '' --dir "$work/$name" --maxmemory "$maxmemory" --maxmemory-policy "$policy")
  if [[ $name == redis ]]; then
    redis-server "${args[@]}" >"$work/$name.log" 2>&1 &
  else
    "$repo/target/release/basalt-server" "${args[@]}" >"$work/$name.log" 2>&1 &
  fi
  pids+=($!)
done
for name in redis basalt; do
  for _ in $(seq 50); do redis-cli -p "${port[$name]}" ping >/dev/null 2>&1 && break; sleep 0.1; done
done

echo "maxmemory $maxmemory, $policy, $keys keys of $size bytes (zipfian), SET:GET $ratio, $rounds x $secs s per server"
declare -A hits
for round in $(seq "$rounds"); do
  for name in redis basalt; do
    out="$work/$name-$round.json"
    "$bench" memtier --server 127.0.0.1 --port "${port[$name]}" --threads 2 --clients 10 \
      --test-time "$secs" --ratio "$ratio" --key-pattern Z:Z --key-minimum 1 --key-maximum "$keys" \
      --data-size "$size" --hide-histogram --json-out-file "$out" >/dev/null 2>&1
    h=$(python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["ALL STATS"]["Gets"]
hit, miss = g["Hits/sec"], g["Misses/sec"]
print(f"{hit / (hit + miss):.4f}" if hit + miss > 0 else "0")' "$out")
    used=$(redis-cli -p "${port[$name]}" info memory | tr -d '\r' | awk -F: '/^used_memory:/ {print $2}')
    max=$(redis-cli -p "${port[$name]}" config get maxmemory | tail -1)
    evicted=$(redis-cli -p "${port[$name]}" info stats | tr -d '\r' | awk -F: '/^evicted_keys:/ {print $2}')
    echo "round $round $name: GET hit ratio $h, used_memory $used of $max ($(python3 -c "print(f'{$used/$max:.3f}')")), evicted_keys $evicted"
    hits[$name]+="$h "
  done
done
python3 - "${hits[redis]}" "${hits[basalt]}" <<'PY'
import statistics, sys
r = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
mr, mb = statistics.median(r), statistics.median(b)
print(f"median GET hit ratio: redis {mr:.4f}, basalt {mb:.4f}, basalt/redis {mb / mr if mr else float('nan'):.3f}")
PY
