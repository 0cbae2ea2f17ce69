#!/usr/bin/env bash
# Runs every test: unit and in-process tests, the store's unit tests again under
# AddressSanitizer, the black-box suite against Basalt with redis-rs, the same
# black-box suite against Redis 7.0.15 (to show each test encodes Redis's behaviour),
# and the redis-py smoke suite. Installs what it needs.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
. scripts/lib/ensure-tools.sh
ensure_rust
ensure_redis_tools
ensure_python_deps tests/py/requirements.txt
ensure_chromium

echo "== import circles: no file of the server crate in a circle of more than 4 (issue 23)"
python3 scripts/import-circles.py --max 4 crates/server crates/store crates/resp crates/bench 2>&1 | grep -v '^    '

echo "== cargo test (unit, in-process and black-box tests against Basalt)"
cargo test --workspace --quiet 2>&1

echo "== store's unit tests under AddressSanitizer (the unsafe code of entry.rs and small_bytes.rs)"
# Sanitizers are a -Z flag; RUSTC_BOOTSTRAP lets the stable toolchain take it (its
# rust-std ships the ASan runtime for this target). Own target dir: other flags.
RUSTFLAGS="-Zsanitizer=address" RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$repo/target/asan" \
  cargo test --quiet -p store --lib --target x86_64-unknown-linux-gnu 2>&1

echo "== black-box suite against Basalt's epoll engine, connection balancing on (the default is io_uring with the kernel's spread)"
# The default run above has the kernel spread each test's clients over the loops (pub/sub,
# blocking pops and transactions between clients on different loops); this one packs
# them with the balancer, which moves connections between loops under the whole suite.
BASALT_TEST_ARGS="--io-engine epoll --loop-spread-busy 85" cargo test --quiet -p basalt-server --test blackbox 2>&1

echo "== black-box suite against Redis $(redis-server --version | sed 's/.*v=\([0-9.]*\).*/\1/') (conformance of the tests themselves)"
# Ignored tests run here too (they encode Redis behaviour Basalt lacks so far), except
# those for Redis 7.2 additions that 7.0 does not have (names ending in _7_2).
BASALT_TEST_SERVER="$(command -v redis-server)" cargo test --quiet -p basalt-server --test blackbox \
  -- --include-ignored --skip _7_2 2>&1

echo "== crash test: SIGKILL under concurrent writers with appendfsync always, no acknowledged write lost"
# Each run prints its last three lines; a failed one prints all it wrote and the tail of
# the server's log (kept in the data dir it names), so that CI's log says what went wrong.
crash_test() {
  local out rc=0
  out="$(python3 scripts/crash-test.py --server-bin "$repo/target/debug/basalt-server" "$@" 2>&1)" || rc=$?
  if [ "$rc" -eq 0 ]; then
    printf '%s\n' "$out" | tail -3
  else
    printf '%s\n' "$out"
    local log
    log="$(printf '%s\n' "$out" | sed -n 's/.*; log: \(.*\)$/\1/p' | tail -1)"
    if [ -n "$log" ] && [ -f "$log" ]; then
      echo "-- the last 40 lines of $log:"
      tail -40 "$log"
    fi
  fi
  return "$rc"
}
# A short run for CI; the 200-cycle run of issue 5 is: python3 scripts/crash-test.py --cycles 200
crash_test --cycles 8 --max-seconds 120
# A slow disk (writes held in memory for 2 ms) with readers on other loops than the
# writers: a reply that revealed a write before the log had it is caught here.
crash_test --cycles 6 --max-seconds 90 --slow-disk-us 2000 --extra-args "--loop-spread-busy 0"
# appendfsync everysec (a kill must not lose what was handed to the kernel) with log
# rewrites in flight: kills land around the switch to a new file and the new base.
crash_test --cycles 6 --max-seconds 90 --appendfsync everysec --rewrite-every 0.3

# Large values (300 KB - 3 MB SETs): a kill inside a large write leaves a command's start
# before the zero-filled space; the restart must cut it off, apply nothing of it (issue 26).
crash_test --cycles 5 --max-seconds 60 --appendfsync everysec --large-values

echo "== replication, the final save, held messages, TLS, scripts and functions again on the epoll engine with three event loops (a stream written differently to the sockets; a script alone among three loops; libraries loaded into each loop's state)"
BASALT_SERVER_BIN="$repo/target/debug/basalt-server" BASALT_SERVER_EXTRA="--io-engine epoll --threads 3" \
  python3 -m pytest -q tests/py/test_replication.py tests/py/test_replication_faults.py tests/py/test_failover.py tests/py/test_repl_swapdb.py tests/py/test_replica_log.py tests/py/test_shutdown_save.py \
    tests/py/test_message_durability.py tests/py/test_tls.py tests/py/test_scripting.py tests/py/test_functions.py 2>&1 | tail -3

echo "== redis-py smoke suite against Basalt, the differential test against Redis (RESP2 and RESP3), and the log replay of concurrent writes"
BASALT_SERVER_BIN="$repo/target/debug/basalt-server" python3 -m pytest -q tests/py 2>&1
