# Sourced by the benchmark scripts: a scratch folder ($work) and a list of processes they
# start ($pids, append with pids+=("$pid")); on exit, those processes (by PID) are ended
# and the folder removed.
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
