#!/usr/bin/env bash
# Many-core benchmark (issue 22): Basalt with 1, 2, 4, 8 event loops and its defaults,
# Redis 7.0.15 and other RESP servers, the server and basalt-bench pinned to separate
# CPU sets; SET/GET unpipelined and at -P 16; the durable sweep (none / everysec / always
# at 48, 200, 800 connections); the data disk's fdatasync latency. Prints Markdown for
# docs/benchmarks.md. Needs only python3, taskset and the binaries (no network: build
# elsewhere and copy them).
#
# Usage (a 16-CPU machine: server on 0-7, load generator on 8-15):
#   scripts/bench-scale.sh --basalt-server target/release/basalt-server \
#       --basalt-bench target/release/basalt-bench [--redis-server /usr/bin/redis-server] \
#       [--other 'valkey=/opt/valkey-server --io-threads 8'] [--keys 1000000] [--out report.md]
#       [--durable-server "basalt-old=/path/to/older/basalt-server"]
# On 2 CPUs, to check the script itself:
#   scripts/bench-scale.sh ... --server-cpus 0 --client-cpus 1 --loops "1 2" --seconds 2 \
#       --clients 50 --pipe-clients 16 --durable-conns "48"
# Every option: scripts/bench-scale.sh --help
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec python3 "$here/bench/scale.py" "$@"
