#!/usr/bin/env bash
# Sets up dbperf on a Debian 12 machine as root. Safe to run again: it only installs what is missing.
#
#   tools/setup.sh                 # sysbench, MariaDB and PostgreSQL binaries, perf, valgrind, jq, curl, shellcheck, cron and at (workflow tests), the venv
#   tools/setup.sh --docker        # ... plus the Docker engine (started) and the offline server images
#   tools/setup.sh --browser       # ... plus chromium (trend-site tests)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
with_docker=0
with_browser=0
for arg in "$@"; do
  case "$arg" in
    --docker) with_docker=1 ;;
    --browser) with_browser=1 ;;
    *) echo "setup.sh: unknown option $arg (use --docker, --browser)" >&2; exit 2 ;;
  esac
done

log() { printf '\033[36m» %s\033[0m\n' "$*" >&2; }

# postgresql: the shared-store (DuckLake) tests start their own throwaway cluster (tools/postgres.py);
# cron, at: the pull-request runner test plants a crontab and an at job (tests/workflows/test_runners.py)
packages=(sysbench mariadb-server mariadb-client postgresql linux-perf valgrind python3-venv git procps util-linux jq curl shellcheck cron at)
[ "$with_docker" = 1 ] && packages+=(docker.io debootstrap)
[ "$with_browser" = 1 ] && packages+=(chromium)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup.sh: missing packages (${missing[*]}); run as root or install them with apt-get" >&2
    exit 2
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq < /dev/null
  # the Debian packages would start MariaDB and PostgreSQL as services; dbperf and its tests start their own
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends "${missing[@]}" < /dev/null > /tmp/dbperf-apt.log 2>&1 \
    || { tail -20 /tmp/dbperf-apt.log >&2; exit 1; }
  rm -f /usr/sbin/policy-rc.d
else
  log "system packages present"
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
  echo "setup.sh: dbperf needs Python 3.11 or newer ($python is older)" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  "$python" -m venv .venv
fi
stamp=.venv/.dbperf-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements-dev.lock -nt "$stamp" ]; then
  log "installing Python dependencies into .venv (pinned, with hashes: requirements-dev.lock)"
  .venv/bin/python -m pip install -q --upgrade pip < /dev/null
  .venv/bin/python -m pip install -q --require-hashes -r requirements-dev.lock < /dev/null
  .venv/bin/python -m pip install -q --no-deps -e . < /dev/null
  touch "$stamp"
else
  log "Python dependencies present"
fi

if [ "$with_docker" = 1 ]; then
  log "starting the Docker engine"
  bash tools/start-docker.sh
  log "building offline server images (skipped when present)"
  bash tools/build-images.sh
fi
log "setup done"
