#!/usr/bin/env bash
# Builds basalt-server (release) and starts it on 127.0.0.1:6379 with its data folder
# ./data in the current working directory, where the append-only log keeps every write
# (appendfsync everysec, as Redis's default). Extra arguments are passed to the server
# and override these, e.g. scripts/start.sh --port 6380 --appendfsync always
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/lib/ensure-tools.sh"
ensure_rust
cargo build --release --quiet --manifest-path "$repo/Cargo.toml" -p basalt-server
mkdir -p ./data
exec "$repo/target/release/basalt-server" --bind 127.0.0.1 --port 6379 --dir ./data --appendonly yes "$@"
