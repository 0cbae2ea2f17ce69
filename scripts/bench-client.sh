#!/usr/bin/env bash
# Client efficiency: CPU (utime+stime of the client process, from /usr/bin/time) per request of
# basalt-bench vs redis-benchmark against the same redis-server, same load, interleaved rounds.
# Usage: scripts/bench-client.sh [ROUNDS] [REQUESTS]   (env PORT, default 7431)
set -euo pipefail
ROUNDS=${1:-5}
N=${2:-200000}
PORT=${PORT:-7431}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BB=$ROOT/target/release/basalt-bench
[ -x "$BB" ] || cargo build --release -p bench -j 1 --manifest-path "$ROOT/Cargo.toml" >&2
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || { echo "redis-server/redis-benchmark not installed" >&2; exit 1; }
TMP=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$TMP" >"$TMP/server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# cpu_us_per_req TOOL P : runs one client and prints CPU microseconds per request (2 tests x N).
cpu_per_req() {
  local tool=$1 p=$2 bin n=$N
  # Pipelined runs are short: 5x the requests so the 10 ms resolution of /usr/bin/time matters less.
  [ "$p" -gt 1 ] && n=$((N * 5))
  if [ "$tool" = rb ]; then bin=redis-benchmark; else bin=$BB; fi
  /usr/bin/time -f "%U %S" -o "$TMP/t" "$bin" -p "$PORT" -c 50 -n "$n" -t get,set -P "$p" -q >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; return 1; }
  awk -v n="$n" '{ printf "%.4f\n", ($1 + $2) * 1e6 / (2 * n) }' "$TMP/t"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "redis-server $(redis-server --version | awk '{print $3}'), -c 50 -t get,set -n $N, $ROUNDS interleaved rounds"
printf "%-6s %-16s %-16s %-8s\n" "-P" "redis-benchmark" "basalt-bench" "ratio"
for P in 1 16; do
  : >"$TMP/rb"; : >"$TMP/bb"
  for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then
      cpu_per_req rb "$P" >>"$TMP/rb"; cpu_per_req bb "$P" >>"$TMP/bb"
    else
      cpu_per_req bb "$P" >>"$TMP/bb"; cpu_per_req rb "$P" >>"$TMP/rb"
    fi
  done
  RB=$(median <"$TMP/rb"); BBM=$(median <"$TMP/bb")
  printf "%-6s %-16s %-16s %-8s\n" "$P" "${RB} us/req" "${BBM} us/req" "$(awk -v a="$BBM" -v b="$RB" 'BEGIN { printf "%.2fx", a / b }')"
  echo "  redis-benchmark rounds: $(tr '\n' ' ' <"$TMP/rb")" >&2
  echo "  basalt-bench rounds:    $(tr '\n' ' ' <"$TMP/bb")" >&2
done
