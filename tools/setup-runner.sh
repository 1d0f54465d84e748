#!/usr/bin/env bash
# Prepare a Debian or Ubuntu machine as a dbperf self-hosted GitHub Actions runner (run as root,
# from a clone of the project). Safe to run again: it only installs or builds what is missing.
#
#   sudo tools/setup-runner.sh --role trusted --user RUNNER_USER   # history: perf.yml (push, nightly)
#   sudo tools/setup-runner.sh --role pr --user RUNNER_USER        # pull-request checks: pr-check.yml
#   options: --skip-images (trusted: build no server images), --skip-venv (leave .venv alone)
#
# The two roles never share a machine (docs/pull-request-checks.md, "Runners a fork cannot own"):
#   trusted  runner label dbperf-trusted; the runner user joins the docker group (container servers).
#   pr       runner label dbperf-pr; runs pull-request code, so it is ephemeral (tools/pr-runner.sh
#            registers a just-in-time runner for ONE job, wipes what the job left, and starts over)
#            and gets NO docker group (the group is root-equivalent): local servers only. A runner
#            user already in the docker group is taken out of it, and may not use cron or at
#            (/etc/cron.deny, /etc/at.deny: a job could otherwise leave work for later).
#
# What it does:
#   1. apt packages: mariadb-server/-client, sysbench, perf, chromium, python3-venv, git (trusted
#      also docker.io and debootstrap); the distro's MariaDB service is disabled (dbperf starts its own);
#   2. trusted: the Docker engine (systemd unit where there is one, else tools/start-docker.sh);
#   3. trusted: the server images the targets in servers/*.toml name: official images are pulled where
#      a registry is reachable, dbperf/* images are built offline by tools/build-images.sh;
#   4. dbperf's state folder (DBPERF_HOME, default /var/lib/dbperf): the runner user's, with the
#      history store and dataset cache (trusted); root's, with the pull-request dataset cache the
#      runner user's (pr);
#   5. the project's virtualenv at .venv/ (for trying dbperf by hand; CI jobs make their own);
#   6. prints the machine's measurement settings and what to change (nothing is tuned for you).
#
# It does not register the runner. Trusted: as GitHub's "New self-hosted runner" page shows, with the
# label dbperf-trusted. Pull requests: run tools/pr-runner.sh as a service (docs/pull-request-checks.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

DBPERF_HOME=${DBPERF_HOME:-/var/lib/dbperf}
runner_user=""
role=""
skip_images=0
skip_venv=0

log() { printf '\033[36m[setup-runner]\033[0m %s\n' "$*" >&2; }
warn() { printf '\033[33m[setup-runner] warning:\033[0m %s\n' "$*" >&2; }
die() { printf '[setup-runner] ERROR: %s\n' "$*" >&2; exit 2; }

usage() { sed -n '2,30s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

while [ "$#" -gt 0 ]; do
    case "$1" in
        --user) [ "$#" -ge 2 ] || die "--user needs a name"; runner_user=$2; shift 2 ;;
        --user=*) runner_user=${1#--user=}; shift ;;
        --role) [ "$#" -ge 2 ] || die "--role needs trusted or pr"; role=$2; shift 2 ;;
        --role=*) role=${1#--role=}; shift ;;
        --skip-images) skip_images=1; shift ;;
        --skip-venv) skip_venv=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

case "$role" in
    trusted|pr) ;;
    "") die "say which runner this is: --role trusted (history jobs) or --role pr (pull-request checks; see --help)" ;;
    *) die "unknown role '$role': trusted or pr" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 --role $role --user RUNNER_USER)"
[ -r /etc/os-release ] || die "no /etc/os-release: only Debian and Ubuntu are supported"
# shellcheck source=/dev/null
. /etc/os-release
case " ${ID:-} ${ID_LIKE:-} " in
    *" debian "*|*" ubuntu "*) ;;
    *) die "this is ${PRETTY_NAME:-an unknown system}; only Debian and Ubuntu are supported" ;;
esac
if [ -n "$runner_user" ] && ! id "$runner_user" >/dev/null 2>&1; then
    die "user '$runner_user' does not exist; create the runner's account first"
fi
if [ "$role" = trusted ]; then
    [ -n "$runner_user" ] || warn "no --user given: the runner account will not be added to the docker group"
else
    [ -n "$runner_user" ] || die "--role pr needs --user: the unprivileged account that runs the pull-request jobs"
    if [ "$(id -u "$runner_user")" -eq 0 ]; then
        die "the pull-request runner must not run as root: give an unprivileged --user"
    fi
fi

# --- 1. packages ---------------------------------------------------------------------------------
packages=(mariadb-server mariadb-client sysbench python3-venv git procps util-linux ca-certificates)
if [ "$role" = trusted ]; then packages+=(docker.io debootstrap); fi
if [ "${ID:-}" = ubuntu ]; then
    # perf ships per kernel; chromium is a snap on Ubuntu, so it is left to you there (optional:
    # only the trend-site screenshots need it).
    packages+=(linux-tools-common)
    if apt-cache show "linux-tools-$(uname -r)" >/dev/null 2>&1; then
        packages+=("linux-tools-$(uname -r)")
    fi
else
    packages+=(linux-perf chromium)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq </dev/null
    # Keep the packaged MariaDB from starting as a service while it installs.
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy"
        chmod +x "$policy"
        created_policy=1
    fi
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
    if [ "$created_policy" -eq 1 ]; then rm -f "$policy"; fi
else
    log "packages present"
fi

have_systemd=0
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then have_systemd=1; fi

if [ "$have_systemd" -eq 1 ]; then
    for unit in mariadb mysql; do
        if systemctl is-enabled --quiet "$unit" 2>/dev/null || systemctl is-active --quiet "$unit" 2>/dev/null; then
            log "disabling the distro's $unit service (dbperf starts its own servers)"
            systemctl disable --now "$unit" >/dev/null 2>&1 || warn "could not disable $unit"
        fi
    done
fi

# --- 2. Docker engine (trusted only) ------------------------------------------------------------
if [ "$role" = trusted ]; then
    if [ "$have_systemd" -eq 1 ] && systemctl list-unit-files docker.service >/dev/null 2>&1; then
        systemctl enable --now docker >/dev/null 2>&1 || warn "systemctl could not start docker; trying dockerd directly"
    fi
    bash tools/start-docker.sh
fi

# --- 3. server images (trusted only) --------------------------------------------------------------
if [ "$role" = pr ]; then
    log "no Docker for the pull-request runner: its checks use local servers"
elif [ "$skip_images" -eq 1 ]; then
    log "skipping server images (--skip-images)"
else
    mapfile -t images < <(sed -n 's/^[[:space:]]*image[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' servers/*.toml | sort -u)
    build=()
    for image in "${images[@]}"; do
        if docker image inspect "$image" >/dev/null 2>&1; then
            log "image $image present"
            continue
        fi
        case "$image" in
            dbperf/*)
                # dbperf/<flavour>:<major.minor> is built from Debian packages (tools/build-images.sh).
                name=${image#dbperf/}
                build+=("${name%%:*}-${name#*:}")
                ;;
            *)
                log "pulling $image"
                if ! timeout 600 docker pull -q "$image" >/dev/null; then
                    warn "cannot pull $image (no registry reachable?): targets using it will fail until it is loaded"
                fi
                ;;
        esac
    done
    if [ "${#build[@]}" -gt 0 ]; then
        log "building offline images: ${build[*]}"
        bash tools/build-images.sh "${build[@]}"
    fi
fi

# --- 4. state folder and the runner account ---------------------------------------------------------
in_docker_group() { id -nG "$1" | tr ' ' '\n' | grep -qx docker; }
if [ "$role" = trusted ]; then
    mkdir -p "$DBPERF_HOME/cache" "$DBPERF_HOME/history"
else
    mkdir -p "$DBPERF_HOME/cache-pr"
fi
if [ -n "$runner_user" ]; then
    if [ "$role" = trusted ]; then
        chown -R "$runner_user:" "$DBPERF_HOME"
    else
        # root's, with only the dataset cache the job user's: tools/pr-runner.sh deletes everything
        # the job user owns between jobs (and recreates the cache)
        chown root:root "$DBPERF_HOME" && chmod 0755 "$DBPERF_HOME"
        chown -R "$runner_user:" "$DBPERF_HOME/cache-pr"
    fi
    if [ "$role" = trusted ]; then
        if getent group docker >/dev/null && ! in_docker_group "$runner_user"; then
            log "adding $runner_user to the docker group (restart the runner service to pick it up)"
            usermod -aG docker "$runner_user"
        fi
    elif getent group docker >/dev/null && in_docker_group "$runner_user"; then
        log "taking $runner_user out of the docker group: pull-request code must not get a root-equivalent group"
        gpasswd -d "$runner_user" docker >/dev/null
    fi
    if [ "$role" = pr ]; then
        for deny in /etc/cron.deny /etc/at.deny; do
            if ! grep -qx "$runner_user" "$deny" 2>/dev/null; then
                log "$runner_user may not use ${deny#/etc/} jobs: a pull request's job must leave no work for later"
                printf '%s\n' "$runner_user" >> "$deny"
            fi
        done
    fi
fi
log "state folder: $DBPERF_HOME (set the repository variable DBPERF_HOME if you move it)"

# --- 5. the virtualenv ------------------------------------------------------------------------------
if [ "$skip_venv" -eq 0 ]; then
python=${PYTHON:-python3}
"$python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null \
    || die "dbperf needs Python 3.11 or newer; $python is older (Debian 12 / Ubuntu 24.04 have it)"
if [ ! -x .venv/bin/python ]; then
    log "creating .venv"
    "$python" -m venv .venv
fi
pip_log=$(mktemp)
if ! { .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements.lock \
        && .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e .; } </dev/null >"$pip_log" 2>&1; then
    tail -n 30 "$pip_log" >&2
    rm -f "$pip_log"
    die "pip could not install dbperf into .venv"
fi
rm -f "$pip_log"
log "dbperf $(.venv/bin/dbperf --version 2>/dev/null | awk '{print $NF}') installed in $here/.venv"
fi

# --- 6. measurement settings ------------------------------------------------------------------------
read_or() { if [ -r "$1" ]; then tr -d '\n' < "$1"; else printf '%s' "$2"; fi; }
cpus=$(nproc)
governor=$(read_or /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor "n/a (no cpufreq: VM or fixed clock)")
smt=$(read_or /sys/devices/system/cpu/smt/control "n/a")
if [ -r /sys/devices/system/cpu/intel_pstate/no_turbo ]; then
    turbo="intel_pstate no_turbo=$(cat /sys/devices/system/cpu/intel_pstate/no_turbo) (1 = turbo off)"
elif [ -r /sys/devices/system/cpu/cpufreq/boost ]; then
    turbo="cpufreq boost=$(cat /sys/devices/system/cpu/cpufreq/boost) (0 = boost off)"
else
    turbo="n/a"
fi
paranoid=$(read_or /proc/sys/kernel/perf_event_paranoid "n/a")
thp=$(read_or /sys/kernel/mm/transparent_hugepage/enabled "n/a")
if command -v perf >/dev/null 2>&1 && perf stat -x, -e instructions true >/dev/null 2>&1; then
    perf_ok="yes"
else
    perf_ok="no (instructions per transaction will be missing; QPS, p95 and CPU time still work)"
fi

cat <<EOF

==================== dbperf runner: measurement settings ====================
CPUs: $cpus    load: $(cut -d' ' -f1-3 /proc/loadavg)
CPU governor:          $governor
SMT (hyper-threading): $smt
Turbo / boost:         $turbo
perf counts instructions: $perf_ok (kernel.perf_event_paranoid=$paranoid)
Transparent huge pages: $thp

Numbers are only comparable on a quiet, fixed machine. Before trusting a verdict:
 * Dedicate the machine: one runner process, no other services, no desktop, no backups or
   indexing during the day. dbperf's preflight warns when the load average is above half the
   cores, when more than 50 % of the CPU is busy or more than 5 % is stolen by a hypervisor
   before a run, and when the governor is not 'performance'. A cloud VM works, a bare-metal
   or dedicated host is far steadier (steal time and noisy neighbours vanish).
 * CPU frequency: cpupower frequency-set -g performance
   (or: echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)
 * Turbo off, so results do not follow the room temperature:
   echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo   (Intel)
   echo 0 > /sys/devices/system/cpu/cpufreq/boost           (AMD / acpi-cpufreq)
 * SMT: either off (echo off > /sys/devices/system/cpu/smt/control), or keep the server and
   sysbench on different physical cores: set cpuset / client_cpuset in servers/*.toml so that
   no two siblings (see lscpu -e) are split between them.
 * perf: for instructions per transaction of servers in containers, the runner account needs
   sysctl kernel.perf_event_paranoid=-1 (or CAP_PERFMON); a persistent setting goes into
   /etc/sysctl.d/99-dbperf.conf.
 * Databases prefer transparent huge pages off ('never' or 'madvise').
None of these are changed for you, and those written to /sys do not survive a reboot: put
them in a systemd unit or your configuration management.

Role: $role runner (label dbperf-$role). Next: docs/pull-request-checks.md (registration, the
repository settings, then a pull request that touches servers/).
EOF
