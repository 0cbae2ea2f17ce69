#!/usr/bin/env bash
# Client efficiency: CPU (utime+stime of the client process, from /usr/bin/time) per request of
# basalt-bench vs redis-benchmark against the same redis-server, same load, interleaved rounds.
# Usage: scripts/bench-client.sh [ROUNDS] [REQUESTS]   (env PORT, default 7431; ENGINES, the
# basalt-bench --io-engine values to measure, default "epoll uring")
set -euo pipefail
ROUNDS=${1:-5}
N=${2:-200000}
PORT=${PORT:-7431}
ENGINES=${ENGINES:-epoll uring}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BB=$ROOT/target/release/basalt-bench
[ -x "$BB" ] || cargo build --release -p bench -j 1 --manifest-path "$ROOT/Cargo.toml" >&2
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || { echo "redis-server/redis-benchmark not installed" >&2; exit 1; }
TMP=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$TMP" >"$TMP/server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# cpu_per_req TOOL P : runs one client and prints CPU microseconds per request (2 tests x N).
# TOOL is rb (redis-benchmark) or bb-ENGINE (basalt-bench --io-engine ENGINE).
cpu_per_req() {
  local tool=$1 p=$2 n=$N cmd
  # Pipelined runs are short: 5x the requests so the 10 ms resolution of /usr/bin/time matters less.
  [ "$p" -gt 1 ] && n=$((N * 5))
  if [ "$tool" = rb ]; then cmd=(redis-benchmark); else cmd=("$BB" --io-engine "${tool#bb-}"); fi
  /usr/bin/time -f "%U %S" -o "$TMP/t" "${cmd[@]}" -p "$PORT" -c 50 -n "$n" -t get,set -P "$p" -q >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; return 1; }
  awk -v n="$n" '{ printf "%.4f\n", ($1 + $2) * 1e6 / (2 * n) }' "$TMP/t"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

TOOLS=(rb)
for e in $ENGINES; do TOOLS+=("bb-$e"); done
echo "redis-server $(redis-server --version | awk '{print $3}'), -c 50 -t get,set -n $N, $ROUNDS interleaved rounds (pipelined: 5x the requests)"
printf "%-4s %-18s" "-P" "redis-benchmark"
for e in $ENGINES; do printf " %-26s" "basalt-bench $e (ratio)"; done
echo
for P in 1 16; do
  for t in "${TOOLS[@]}"; do : >"$TMP/$t"; done
  for r in $(seq "$ROUNDS"); do
    # Rotate the order of the tools round by round.
    k=${#TOOLS[@]}
    for j in $(seq 0 $((k - 1))); do
      t=${TOOLS[$(((j + r) % k))]}
      cpu_per_req "$t" "$P" >>"$TMP/$t"
    done
  done
  RB=$(median <"$TMP/rb")
  printf "%-4s %-18s" "$P" "${RB} us/req"
  for e in $ENGINES; do
    M=$(median <"$TMP/bb-$e")
    printf " %-26s" "${M} us/req ($(awk -v a="$M" -v b="$RB" 'BEGIN { printf "%.2fx", a / b }'))"
  done
  echo
  for t in "${TOOLS[@]}"; do echo "  $t rounds: $(tr '\n' ' ' <"$TMP/$t")" >&2; done
done
