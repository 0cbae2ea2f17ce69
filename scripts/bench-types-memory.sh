#!/usr/bin/env bash
# Memory per key of small collections, Basalt against Redis 7.0.15, each server started
# empty: N hashes of 10 fields (field:0..9 -> 16-byte values), N sorted sets of 10
# members (member:0..9, integer scores), N lists of 10 elements (item-<random>), N sets
# of 10 integers (intset) and N sets of 10 strings (tag-<random>), loaded with
# redis-cli --pipe. Prints used_memory bytes per key and the ratio.
#
# With --large: memory per element of ONE large collection of each size given (a sorted
# set of member:<i> with random scores, "zsetlong": the same with 20-byte members
# element:<i, 12 digits> (over SmallBytes's 15 inline bytes), a set of member:<i>, a hash field:<i> ->
# value:<i>, a list of member:<i>, a stream of entries <i>-0 with three fields: sensor
# s<i mod 100>, value, ts), 100 elements a command (one entry an XADD). Hash tables double, so a
# figure at one size lands anywhere in the table's load cycle (Redis's dict as well as
# Basalt's segments): give several sizes.
# Usage: scripts/bench-types-memory.sh [N]
#        scripts/bench-types-memory.sh --large [SIZE ...]   (default 700000 1000000 1500000)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
large=0
if [[ "${1:-}" == --large ]]; then
  large=1
  shift
  sizes=("$@")
  [[ ${#sizes[@]} -gt 0 ]] || sizes=(700000 1000000 1500000)
else
  n="${1:-200000}"
fi
. "$repo/scripts/lib/ensure-tools.sh"
ensure_rust
ensure_redis_tools
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server
. "$repo/scripts/lib/scratch.sh"
if [[ $large == 1 ]]; then args=(large "${sizes[@]}"); else args=(small "$n"); fi
python3 - "$work" "${args[@]}" <<'PY'
import random, sys
work, mode, counts = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
random.seed(1)
def cmd(*a):
    out = [b'*%d\r\n' % len(a)]
    for x in a:
        x = x.encode()
        out.append(b'$%d\r\n%s\r\n' % (len(x), x))
    return b''.join(out)
if mode == 'large':
    sizes = counts
    for size in sizes:
        files = {k: open(f'{work}/{k}-{size}.resp', 'wb') for k in ('zset', 'zsetlong', 'set', 'hash', 'list', 'stream')}
        for i in range(size):
            files['stream'].write(cmd('XADD', 'big', f'{i + 1}-0', 'sensor', f's{i % 100}', 'value', str(i % 50), 'ts', str(1700000000 + i)))
        for start in range(0, size, 100):
            ids = range(start, min(start + 100, size))
            files['zset'].write(cmd('ZADD', 'big', *[x for i in ids for x in (str(random.randint(0, 10**9)), f'member:{i}')]))
            files['zsetlong'].write(cmd('ZADD', 'big', *[x for i in ids for x in (str(random.randint(0, 10**9)), f'element:{i:012d}')]))
            files['set'].write(cmd('SADD', 'big', *[f'member:{i}' for i in ids]))
            files['hash'].write(cmd('HSET', 'big', *[x for i in ids for x in (f'field:{i}', f'value:{i}')]))
            files['list'].write(cmd('RPUSH', 'big', *[f'member:{i}' for i in ids]))
        for f in files.values():
            f.close()
else:
    n = counts[0]
    with open(f'{work}/hashes.resp', 'wb') as f:
        for i in range(n):
            args = ['HSET', f'hash:{i}']
            for j in range(10):
                args += [f'field:{j}', ''.join(random.choice('abcdefghijklmnop') for _ in range(16))]
            f.write(cmd(*args))
    with open(f'{work}/zsets.resp', 'wb') as f:
        for i in range(n):
            args = ['ZADD', f'zset:{i}']
            for j in range(10):
                args += [str(random.randint(0, 1000000)), f'member:{j}']
            f.write(cmd(*args))
    with open(f'{work}/lists.resp', 'wb') as f:
        for i in range(n):
            f.write(cmd('RPUSH', f'list:{i}', *[f'item-{random.randint(0, 99999)}' for _ in range(10)]))
    with open(f'{work}/intsets.resp', 'wb') as f:
        for i in range(n):
            f.write(cmd('SADD', f'iset:{i}', *[str(random.randint(0, 1000000)) for _ in range(10)]))
    with open(f'{work}/sets.resp', 'wb') as f:
        for i in range(n):
            f.write(cmd('SADD', f'sset:{i}', *[f'tag-{random.randint(0, 999)}' for _ in range(10)]))
PY
if [[ $large == 1 ]]; then
  kinds=""
  for size in "${sizes[@]}"; do kinds+=" zset-$size zsetlong-$size set-$size hash-$size list-$size stream-$size"; done
else
  kinds="hashes zsets lists intsets sets"
fi
# Elements a figure is divided by.
count() { if [[ $large == 1 ]]; then echo "${1##*-}"; else echo "$n"; fi; }
port=$((20000 + RANDOM % 20000))
used() { redis-cli -p "$port" info memory | tr -d '\r' | sed -n 's/^used_memory://p'; }
declare -A result
for kind in $kinds; do
  for srv in redis basalt; do
    if [ "$srv" = redis ]; then
      redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null 2>&1 &
    else
      "$repo/target/release/basalt-server" --port "$port" --bind 127.0.0.1 --dir "$work" --threads 1 >/dev/null 2>&1 &
    fi
    pid=$!; pids+=("$pid")
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    before=$(used)
    redis-cli -p "$port" --pipe < "$work/$kind.resp" >/dev/null
    after=$(used)
    result[$kind-$srv]=$(( (after - before) / $(count "$kind") ))
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
if [[ $large == 1 ]]; then
  echo "| one collection | Redis B/element | Basalt B/element | ratio |"
else
  echo "| $n keys | Redis B/key | Basalt B/key | ratio |"
fi
echo "|---|---:|---:|---:|"
for kind in $kinds; do
  r=${result[$kind-redis]}; b=${result[$kind-basalt]}
  if [[ $large == 1 ]]; then label="${kind%-*} of ${kind##*-}"; else label="$kind (10 elements)"; fi
  echo "| $label | $r | $b | $(python3 -c "print(f'{$b/$r:.2f}')") |"
done
