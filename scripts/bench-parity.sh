#!/usr/bin/env bash
# Do basalt-bench and redis-benchmark report the same throughput for the same load?
# Runs each test of the default list with `-q`, one tool then the other (the order
# alternates), against one redis-server, ROUNDS times, and prints per test both medians
# and the ratio basalt-bench / redis-benchmark.
# Usage: scripts/bench-parity.sh [ROUNDS] [REQUESTS] [PIPELINE]   (env PORT, default 7432)
# Pipelined runs use 10x the requests, LRANGE tests a tenth. With 2 or more CPUs the server is pinned to CPU 0
# and the clients to CPU 1 (PIN=0 turns that off), so that the two do not take each
# other's core and a client that saturates its core shows as such.
set -euo pipefail
ROUNDS=${1:-3}
N=${2:-200000}
P=${3:-16}
PORT=${PORT:-7432}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BB=$ROOT/target/release/basalt-bench
[ -x "$BB" ] || cargo build --release -p bench -j 1 --manifest-path "$ROOT/Cargo.toml" >&2
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || { echo "redis-server/redis-benchmark not installed" >&2; exit 1; }
[ "$P" -gt 1 ] && N=$((N * 10))
SRV_PIN=() CLI_PIN=()
if [ "${PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  SRV_PIN=(taskset -c 0) CLI_PIN=(taskset -c 1)
fi
TMP=$(mktemp -d)
"${SRV_PIN[@]}" redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$TMP" >"$TMP/server.log" 2>&1 &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

TESTS="ping_inline ping_mbulk set get incr lpush rpush lpop rpop sadd hset spop zadd zpopmin lrange_100 lrange_300 lrange_500 lrange_600 mset"
# run TOOL ROUND TEST: one -q run of one test, "TEST<TAB>rps" lines appended to $TMP/TOOL.ROUND.
run() {
  local tool=$1 r=$2 t=$3 bin n=$N
  if [ "$tool" = rb ]; then bin=redis-benchmark; else bin=$BB; fi
  # LRANGE replies are 100-600 elements: a tenth of the requests keeps each run a few seconds.
  case $t in lrange_*) n=$((N / 10)) ;; esac
  "${CLI_PIN[@]}" "$bin" -p "$PORT" -n "$n" -P "$P" -t "$t" -q </dev/null 2>"$TMP/err" | tr '\r' '\n' \
    | awk -F': ' '/requests per second/ { split($2, a, " "); print $1 "\t" a[1] }' >>"$TMP/$tool.$r" \
    || { cat "$TMP/err" >&2; return 1; }
}

# Tests alternate between the tools one by one (this machine's noise moves within
# seconds), and which tool goes first alternates too.
i=0
for r in $(seq "$ROUNDS"); do
  : >"$TMP/rb.$r"; : >"$TMP/bb.$r"
  for t in $TESTS; do
    i=$((i + 1))
    if [ $((i % 2)) -eq 1 ]; then run rb "$r" "$t"; run bb "$r" "$t"; else run bb "$r" "$t"; run rb "$r" "$t"; fi
  done
done
# The full list once with each tool, to check the same tests come out in the same order.
"$BB" -p "$PORT" -n 1000 -q </dev/null 2>/dev/null | tr '\r' '\n' | awk -F': ' '/requests per second/ { print $1 }' >"$TMP/bb.order"
redis-benchmark -p "$PORT" -n 1000 -q </dev/null 2>/dev/null | tr '\r' '\n' | awk -F': ' '/requests per second/ { print $1 }' >"$TMP/rb.order"

python3 - "$TMP" "$ROUNDS" "$N" "$P" "$([ ${#SRV_PIN[@]} -gt 0 ] && echo 1 || echo 0)" <<'EOF'
import statistics, sys
tmp, rounds, n, p = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(tool):
    runs = []
    for r in range(1, rounds + 1):
        with open(f"{tmp}/{tool}.{r}") as f:
            runs.append([line.rstrip("\n").split("\t") for line in f if line.strip()])
    return runs
rb, bb = load("rb"), load("bb")
order_rb = open(f"{tmp}/rb.order").read().split("\n")
order_bb = open(f"{tmp}/bb.order").read().split("\n")
print(f"-n {n} -P {p}, {rounds} rounds, tools alternating test by test{', server and client pinned to CPUs 0 and 1' if sys.argv[5] == '1' else ''}; "
      f"full default list has the same tests in the same order: {order_rb == order_bb} ({len(order_rb) - 1} tests)")
order_rb = list(dict.fromkeys(t for t, _ in rb[0]))
print(f"| test | redis-benchmark rps | basalt-bench rps | ratio |")
print(f"|---|---:|---:|---:|")
ratios = []
for t in order_rb:
    a = statistics.median(float(v) for run in rb for tt, v in run if tt == t)
    b = statistics.median(float(v) for run in bb for tt, v in run if tt == t)
    ratios.append(b / a)
    print(f"| {t} | {a:,.0f} | {b:,.0f} | {b / a:.2f} |")
print(f"ratios: min {min(ratios):.2f}, median {statistics.median(ratios):.2f}, max {max(ratios):.2f}")
EOF
