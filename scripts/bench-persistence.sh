#!/usr/bin/env bash
# Durable-write throughput, Basalt against Redis 7.0.15 in the same run (issue 5):
# redis-benchmark -t set -c 50 -d 128 against each server with no persistence,
# appendfsync always and appendfsync everysec, ROUNDS rounds, servers interleaved
# round by round, median requests/s and the ratios that issue 5 asks for.
# Usage: ROUNDS=5 N=200000 THREADS=1 scripts/bench-persistence.sh
# CLIENT=basalt-bench drives the servers with basalt-bench (the same flags) instead of
# redis-benchmark, which saturates its core here and so bounds every server's figure.
# BASALT_BASE_BIN=/path/to/basalt-server adds that build with `always` beside the others
# (an A/B of two builds' durable writes in one run, as "base-always").
# For each Basalt `always` server it also prints the time a durable commit took, from
# INFO's basalt_aof_sync_usec / basalt_aof_syncs over its runs.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-5}"
n="${N:-200000}"
threads="${THREADS:-1}"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_rust
ensure_redis_tools
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server -p bench
case "${CLIENT:-redis-benchmark}" in
  redis-benchmark) client=(redis-benchmark) ;;
  basalt-bench) client=("$repo/target/release/basalt-bench") ;;
  *) echo "CLIENT must be redis-benchmark or basalt-bench" >&2; exit 2 ;;
esac
. "$repo/scripts/lib/scratch.sh"

declare -A port
names=(redis-none redis-always redis-everysec basalt-none basalt-always basalt-everysec)
[[ -n "${BASALT_BASE_BIN:-}" ]] && names+=(base-always)
next=$((21000 + RANDOM % 20000))
for name in "${names[@]}"; do
  p=$next; next=$((next + 1)); port[$name]=$p
  mkdir -p "$work/$name"
  case "$name" in
    redis-none) args=(--appendonly no) ;;
    *-always) args=(--appendonly yes --appendfsync always) ;;
    *-everysec) args=(--appendonly yes --appendfsync everysec) ;;
    basalt-none) args=(--appendonly no) ;;
  esac
  if [[ $name == redis-* ]]; then
    redis-server --port "$p" --bind 127.0.0.1 --save '' --dir "$work/$name" "${args[@]}" >"$work/$name.log" 2>&1 &
  elif [[ $name == base-* ]]; then
    "$BASALT_BASE_BIN" --port "$p" --bind 127.0.0.1 --save '' --dir "$work/$name" --threads "$threads" "${args[@]}" >"$work/$name.log" 2>&1 &
  else
    "$repo/target/release/basalt-server" --port "$p" --bind 127.0.0.1 --save '' --dir "$work/$name" --threads "$threads" "${args[@]}" >"$work/$name.log" 2>&1 &
  fi
  pids+=($!)
done
for name in "${names[@]}"; do
  for _ in $(seq 50); do redis-cli -p "${port[$name]}" ping >/dev/null 2>&1 && break; sleep 0.1; done
done

# "<commits> <usec>" from INFO persistence (0 0 for Redis, which has no such fields).
sync_stats() {
  redis-cli -p "$1" info persistence | tr -d '\r' |
    awk -F: '/^basalt_aof_syncs:/ {s = $2} /^basalt_aof_sync_usec:/ {u = $2} END {print s + 0, u + 0}'
}

declare -A runs commit_us
for r in $(seq "$rounds"); do
  # Rotate the order each round so no server always runs first.
  order=("${names[@]:$((r % ${#names[@]}))}" "${names[@]:0:$((r % ${#names[@]}))}")
  for name in "${order[@]}"; do
    read -r s0 u0 < <(sync_stats "${port[$name]}")
    rps=$("${client[@]}" -p "${port[$name]}" -c 50 -d 128 -t set -n "$n" -r 100000 -q 2>/dev/null \
      | tr '\r' '\n' | sed -n 's/^ *SET: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
    runs[$name]="${runs[$name]:-} $rps"
    read -r s1 u1 < <(sync_stats "${port[$name]}")
    if [[ $name == *-always && $name != redis-* && $s1 -gt $s0 ]]; then
      commit_us[$name]="${commit_us[$name]:-} $(( (u1 - u0) / (s1 - s0) ))"
    fi
  done
done

median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
echo "$(basename "${client[0]}") -t set -c 50 -d 128 -n $n -r 100000, $rounds rounds interleaved, basalt --threads $threads, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| server | persistence | median SET/s | rounds |"
echo "|---|---|---:|---|"
for name in "${names[@]}"; do
  med[$name]=$(median "${runs[$name]}")
  echo "| ${name%%-*} | ${name#*-} | ${med[$name]} |${runs[$name]} |"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo
echo "- basalt always / basalt none: $(ratio "${med[basalt-always]}" "${med[basalt-none]}") (issue 5 target >= 0.9; redis always / redis none: $(ratio "${med[redis-always]}" "${med[redis-none]}"))"
echo "- basalt always / redis always: $(ratio "${med[basalt-always]}" "${med[redis-always]}") (target >= 1.5)"
echo "- basalt everysec / redis everysec: $(ratio "${med[basalt-everysec]}" "${med[redis-everysec]}")"
for name in basalt-always base-always; do
  if [[ -n "${commit_us[$name]:-}" ]]; then
    echo "- $name: us per durable commit, by round:${commit_us[$name]}"
  fi
done
if [[ -n "${BASALT_BASE_BIN:-}" ]]; then
  echo "- basalt always / base always ($BASALT_BASE_BIN): $(ratio "${med[basalt-always]}" "${med[base-always]}")"
fi
