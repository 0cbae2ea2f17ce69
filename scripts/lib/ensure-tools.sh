# Sourced by scripts/start.sh and scripts/test.sh: makes sure the tools they need are
# installed on a Debian 12 machine, installing only what is missing.

need_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    need_root apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive need_root apt-get install -y -qq "$@" >/dev/null
}

# A Rust toolchain new enough for the workspace (Debian's own cargo is too old).
ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "Installing Rust with rustup (https://rustup.rs)..." >&2
    command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates
    command -v cc >/dev/null 2>&1 || apt_install build-essential
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  command -v cc >/dev/null 2>&1 || apt_install build-essential
}

# Debian's Redis 7.0 server and tools: the reference the tests compare against and the
# client tools they drive.
ensure_redis_tools() {
  if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1 \
     || ! command -v redis-benchmark >/dev/null 2>&1; then
    echo "Installing Debian's redis-server and redis-tools..." >&2
    apt_install redis-server redis-tools
    # The package starts a system service on 6379; the tests do not need it.
    need_root systemctl stop redis-server >/dev/null 2>&1 || true
    need_root service redis-server stop >/dev/null 2>&1 || true
  fi
}

# Debian's Chromium, to open basalt-bench's HTML report headless (tests/py/test_html_report.py).
ensure_chromium() {
  if ! command -v chromium >/dev/null 2>&1; then
    echo "Installing Debian's chromium (headless check of the HTML report)..." >&2
    apt_install chromium
  fi
}

# Python with the packages of tests/py/requirements.txt, in a virtualenv of the project's
# own (`.venv`, git-ignored), so that the system's Python is left as it is. Its `bin` goes
# first on PATH: the caller's `python3` from then on is the virtualenv's.
ensure_python_deps() {
  local req="$1"
  local venv
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.venv"
  command -v python3 >/dev/null 2>&1 || apt_install python3
  if [ ! -x "$venv/bin/python3" ]; then
    # Debian's python3 needs its venv package (ensurepip) to make one.
    python3 -c 'import ensurepip' >/dev/null 2>&1 || apt_install python3-venv
    python3 -m venv "$venv"
  fi
  export PATH="$venv/bin:$PATH"
  if ! python3 -c 'import redis, pytest' >/dev/null 2>&1; then
    python3 -m pip install -q --disable-pip-version-check -r "$req"
  fi
}
