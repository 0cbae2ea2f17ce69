#!/usr/bin/env bash
# SORT: server CPU per command, Basalt against Redis 7.0.15, same data, rounds alternating
# between the servers. Each server runs alone with one event loop; CPU is utime + stime
# of its process (/proc/PID/stat, 10 ms ticks) around one redis-benchmark run per
# command. Data: a list of 10,000 random integers (nums), 10,000 random words (words),
# and 0..999 (small) with weights wt_0..wt_999.
#
# Usage: scripts/bench-sort.sh
# Environment: ROUNDS [3], N requests per run [1000], BASALT_BIN [target/release/
# basalt-server, built here]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-3}"
n="${N:-1000}"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_redis_tools
ensure_python_deps "$repo/tests/py/requirements.txt"
if [[ -z "${BASALT_BIN:-}" ]]; then
    ensure_rust
    cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server
    BASALT_BIN="$repo/target/release/basalt-server"
fi
. "$repo/scripts/lib/scratch.sh"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() { # name binary -> sets port_<name>, pid_<name>
    local name="$1" bin="$2" port
    port="$(free_port)"
    mkdir -p "$work/$name"
    if [[ "$name" == redis ]]; then
        "$bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/$name" >"$work/$name.log" 2>&1 &
    else
        "$bin" --port "$port" --bind 127.0.0.1 --threads 1 --dir "$work/$name" >"$work/$name.log" 2>&1 &
    fi
    pids+=("$!")
    printf -v "pid_$name" '%s' "$!"
    printf -v "port_$name" '%s' "$port"
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    python3 - "$port" <<'PY'
import random, sys
import redis
c = redis.Redis(port=int(sys.argv[1]))
r = random.Random(1)
c.rpush("nums", *[r.randrange(10**6) for _ in range(10000)])
c.rpush("words", *[f"w{r.randrange(10**6)}" for _ in range(10000)])
c.mset({f"wt_{i}": r.randrange(1000) for i in range(1000)})
c.rpush("small", *range(1000))
PY
}

start redis "$(command -v redis-server)"
start basalt "$BASALT_BIN"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
commands=("SORT nums LIMIT 0 10" "SORT words ALPHA LIMIT 0 10" "SORT small BY wt_* GET wt_* LIMIT 0 10")
declare -A total
for round in $(seq "$rounds"); do
    for name in redis basalt; do
        pid_var="pid_$name" port_var="port_$name"
        for i in "${!commands[@]}"; do
            t0="$(ticks "${!pid_var}")"
            # shellcheck disable=SC2086 # the command's words are redis-benchmark's arguments
            redis-benchmark -p "${!port_var}" -n "$n" -c 10 -q ${commands[$i]} >/dev/null 2>&1
            t1="$(ticks "${!pid_var}")"
            total[$name,$i]=$(( ${total[$name,$i]:-0} + t1 - t0 ))
            echo "round $round $name [${commands[$i]}]: $((t1 - t0)) ticks"
        done
    done
done
echo
echo "| command | Redis ticks | Basalt ticks | Basalt / Redis |"
echo "|---|---:|---:|---:|"
for i in "${!commands[@]}"; do
    r="${total[redis,$i]}" b="${total[basalt,$i]}"
    echo "| \`${commands[$i]}\` | $r | $b | $(python3 -c "print(f'{$b / max($r, 1):.2f}')") |"
done
