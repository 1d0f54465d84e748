#!/usr/bin/env bash
# Start a local Docker engine for dbperf, if one is not already answering.
#
# Idempotent: exits 0 at once when `docker info` answers. Otherwise installs
# docker.io if dockerd is missing, starts
#   dockerd --iptables=false --ip-forward=false --bridge=none
# detached from the calling shell (setsid + nohup, stdin from /dev/null),
# logging to /var/log/dbperf-dockerd.log, and waits up to 60 s for it.
# With --bridge=none only host networking exists: run containers with
# --network host (network_mode="host") and a free loopback port.
set -euo pipefail

LOG=${DBPERF_DOCKERD_LOG:-/var/log/dbperf-dockerd.log}
WAIT_SECONDS=${DBPERF_DOCKERD_WAIT:-60}
LOCK=/tmp/dbperf-start-docker.lock

docker_answers() {
    command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1
}

if docker_answers; then
    echo "start-docker: docker engine already running"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "start-docker: docker engine not reachable and not running as root; cannot start dockerd" >&2
    exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
    echo "start-docker: dockerd missing, installing docker.io"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update </dev/null
    apt-get install -y docker.io </dev/null
fi

# Serialise concurrent callers, and start dockerd only when none is running
# (another caller, or one that is slow to come up). fd 8 is closed for dockerd
# so the lock is released when this script ends.
exec 8>"$LOCK"
flock 8
if docker_answers; then
    echo "start-docker: docker engine ready"
    exit 0
fi
if command -v pgrep >/dev/null 2>&1 && pgrep -x dockerd >/dev/null 2>&1; then
    echo "start-docker: dockerd process present, waiting for it to answer"
else
    echo "start-docker: starting dockerd (log: $LOG)"
    mkdir -p "$(dirname "$LOG")"
    setsid nohup dockerd --iptables=false --ip-forward=false --bridge=none \
        </dev/null >>"$LOG" 2>&1 8>&- &
fi

for _ in $(seq 1 "$WAIT_SECONDS"); do
    if docker_answers; then
        echo "start-docker: docker engine ready"
        exit 0
    fi
    sleep 1
done

echo "start-docker: ERROR: docker engine did not answer within ${WAIT_SECONDS} s" >&2
if [ -f "$LOG" ]; then
    echo "start-docker: last lines of $LOG:" >&2
    tail -n 40 "$LOG" >&2
fi
exit 1
