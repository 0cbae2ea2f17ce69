#!/usr/bin/env bash
# User-space instructions per request, Basalt against Redis 7.0.15, counted by valgrind's
# callgrind: the same count for the same binary and requests whatever else the machine is
# doing, so a change to the request path can be judged on this shared 2-vCPU VM without
# timing noise. It does not see the kernel's work (for small requests most of the CPU
# time: the TCP stack on both sides of loopback) nor cache misses; scripts/bench.sh
# measures those, in time.
#
# Each server runs alone under callgrind with instrumentation off; a pop test is preceded
# by its push test (uninstrumented) so that it pops from a full collection; then
# instrumentation goes on for exactly one redis-benchmark run of N requests, and the
# count is divided by N.
#
# Usage: scripts/bench-instructions.sh [N] [workload ...]
#   N          requests per run [200000]
#   workload   redis-benchmark test, "-pN" suffix = pipeline N
#              [set-p16 get-p16 lpush-p16 lpop-p16 sadd-p16 spop-p16 hset-p16 zadd-p16 set get]
# Environment:
#   NO_FILL=1        pop tests pop from a missing key (as in redis-benchmark's default list,
#                    where SPOP and ZPOPMIN outlast the 100,000 members their push added)
#   BASALT_BIN       the Basalt build [target/release/basalt-server, built here]
#   BASALT_BASE_BIN  a second Basalt build, counted beside the first (A/B of two builds)
#   CLIENTS          redis-benchmark -c [50]      RANDOM_KEYS  redis-benchmark -r [100000]
#   REPLICA=1        each server (the master, counted) has a replica of its own kind
#                    attached, not under callgrind: what feeding the replication stream
#                    costs per write (issue 24)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-200000}"
shift || true
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(set-p16 get-p16 lpush-p16 lpop-p16 sadd-p16 spop-p16 hset-p16 zadd-p16 set get)
clients="${CLIENTS:-50}"
random_keys="${RANDOM_KEYS:-100000}"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_redis_tools
command -v valgrind >/dev/null 2>&1 || apt_install valgrind
if [[ -z "${BASALT_BIN:-}" ]]; then
    ensure_rust
    cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server
    BASALT_BIN="$repo/target/release/basalt-server"
fi
. "$repo/scripts/lib/scratch.sh"

servers=("redis=$(command -v redis-server)" "basalt=$BASALT_BIN")
[[ -n "${BASALT_BASE_BIN:-}" ]] && servers+=("base=$BASALT_BASE_BIN")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The test whose run fills the collection a pop test pops from.
filler() {
    case "$1" in
        lpop | rpop) echo lpush ;;
        spop) echo sadd ;;
        zpopmin) echo zadd ;;
        *) echo "" ;;
    esac
}

# count NAME BINARY TEST PIPE -> prints instructions per request
count() {
    local name="$1" bin="$2" test="$3" pipe="$4" port out vpid fill
    port="$(free_port)"
    out="$work/$name-$test-$pipe.cg"
    local args=(--port "$port" --bind 127.0.0.1 --save "")
    if [[ "$name" == redis ]]; then args+=(--appendonly no); else args+=(--threads 1 --dir "$work"); fi
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" "$bin" "${args[@]}" \
        >"$work/$name.log" 2>&1 &
    vpid=$!
    pids+=("$vpid")
    for _ in $(seq 1 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.2
    done
    if [[ "${REPLICA:-0}" == 1 ]]; then
        local rport rdir
        rport="$(free_port)"
        rdir="$work/replica-$name-$test-$pipe"
        mkdir -p "$rdir"
        "$bin" --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$rdir" \
            --replicaof 127.0.0.1 "$port" >"$work/$name-replica.log" 2>&1 &
        pids+=($!)
        for _ in $(seq 1 300); do
            redis-cli -p "$rport" info replication 2>/dev/null | grep -q 'master_link_status:up' && break
            sleep 0.2
        done
    fi
    fill=""
    [[ "${NO_FILL:-0}" == 1 ]] || fill="$(filler "$test")"
    if [[ -n "$fill" ]]; then
        timeout 600 redis-benchmark -p "$port" -c "$clients" -r "$random_keys" -n "$((n * 2))" -P 16 -t "$fill" -q >/dev/null 2>&1
    fi
    callgrind_control -i on "$vpid" >/dev/null 2>&1
    timeout 600 redis-benchmark -p "$port" -c "$clients" -r "$random_keys" -n "$n" -P "$pipe" -t "$test" -q >/dev/null 2>&1
    callgrind_control -i off "$vpid" >/dev/null 2>&1
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$vpid" 2>/dev/null || true
    [[ "${REPLICA:-0}" == 1 ]] && { redis-cli -p "$rport" shutdown nosave >/dev/null 2>&1 || true; }
    local total
    total="$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')"
    echo $((total / n))
}

echo "# User-space instructions per request (callgrind), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- Command: \`scripts/bench-instructions.sh $n ${workloads[*]}\`"
echo "- Basalt: \`$BASALT_BIN\` (commit $(git -C "$repo" rev-parse --short HEAD)), one event loop"
[[ -n "${BASALT_BASE_BIN:-}" ]] && echo "- Base build: \`$BASALT_BASE_BIN\`"
echo "- Redis: $(redis-server --version | awk '{print $3}')"
echo "- redis-benchmark -c $clients -r $random_keys -n $n, each server alone under callgrind"
[[ "${REPLICA:-0}" == 1 ]] && echo "- REPLICA=1: each with a replica of its own kind attached (not counted)"
[[ "${NO_FILL:-0}" == 1 ]] && echo "- NO_FILL=1: pop tests on a missing key"
echo
header="| workload | redis | basalt | basalt/redis |"
rule="|---|---:|---:|---:|"
if [[ -n "${BASALT_BASE_BIN:-}" ]]; then
    header+=" base | basalt/base |"
    rule+="---:|---:|"
fi
echo "$header"
echo "$rule"
for w in "${workloads[@]}"; do
    test="${w%%-p*}"
    pipe=1
    [[ "$w" == *-p* ]] && pipe="${w##*-p}"
    declare -A got=()
    for s in "${servers[@]}"; do
        got[${s%%=*}]="$(count "${s%%=*}" "${s#*=}" "$test" "$pipe")"
    done
    label="${test^^}"
    [[ "$pipe" -gt 1 ]] && label+=" -P $pipe"
    row="| $label | ${got[redis]} | ${got[basalt]} | $(python3 -c "print(f'{${got[basalt]}/${got[redis]}:.2f}')") |"
    if [[ -n "${BASALT_BASE_BIN:-}" ]]; then
        row+=" ${got[base]} | $(python3 -c "print(f'{${got[basalt]}/${got[base]}:.2f}')") |"
    fi
    echo "$row"
    unset got
done
