#!/usr/bin/env bash
# The pull-request runner: one job per registration, then everything the job left is wiped and a new
# runner is registered (run as root, as a service; docs/pull-request-checks.md).
#
#   sudo tools/pr-runner.sh --user RUNNER_USER --runner-dir DIR --repo OWNER/REPO --token-file FILE
#   options: --group-id N (the runner group admitting only pr-check.yml, default 1), --name PREFIX,
#            --jobs N (stop after N jobs; default: run forever), --keep-cache (keep the pull-request
#            dataset cache between jobs: faster, but one job can then poison the next one's datasets)
#
# Each round:
#   1. wipe: kill every process of RUNNER_USER (servers a job left), empty DIR/_work, the user's
#      temporary folders and, unless --keep-cache, $DBPERF_HOME/cache-pr;
#   2. ask GitHub for a just-in-time runner configuration (labels self-hosted, linux, dbperf-pr),
#      with the token in FILE: a fine-grained token (or GitHub App token) with the repository's
#      "Administration: write" permission, readable by root only. The runner user never sees it;
#   3. run DIR/run.sh --jitconfig ... as RUNNER_USER, in a scrubbed environment: the runner takes
#      exactly ONE job, then exits (a just-in-time runner is always ephemeral).
# DIR is an unpacked GitHub Actions runner (https://github.com/actions/runner/releases), owned by
# RUNNER_USER and never configured with config.sh (the just-in-time configuration replaces that).
set -euo pipefail

runner_user="" runner_dir="" repo="" token_file="" group_id=1 name="dbperf-pr-$(hostname -s)" jobs=0 keep_cache=0
DBPERF_HOME=${DBPERF_HOME:-/var/lib/dbperf}

log() { printf '[pr-runner] %s\n' "$*" >&2; }
die() { printf '[pr-runner] ERROR: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

while [ "$#" -gt 0 ]; do
    case "$1" in
        --user) runner_user=${2:?--user needs a name}; shift 2 ;;
        --runner-dir) runner_dir=${2:?--runner-dir needs a folder}; shift 2 ;;
        --repo) repo=${2:?--repo needs OWNER/REPO}; shift 2 ;;
        --token-file) token_file=${2:?--token-file needs a file}; shift 2 ;;
        --group-id) group_id=${2:?--group-id needs a number}; shift 2 ;;
        --name) name=${2:?--name needs a prefix}; shift 2 ;;
        --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
        --keep-cache) keep_cache=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option '$1' (see --help)" ;;
    esac
done

[ "$(id -u)" -eq 0 ] || die "run as root: it wipes the runner user's processes and files between jobs"
if [ -z "$runner_user" ] || [ -z "$runner_dir" ] || [ -z "$repo" ] || [ -z "$token_file" ]; then
    die "--user, --runner-dir, --repo and --token-file are all needed (see --help)"
fi
uid=$(id -u "$runner_user" 2>/dev/null) || die "user '$runner_user' does not exist"
[ "$uid" -ne 0 ] || die "the pull-request runner must not run as root"
if id -nG "$runner_user" | tr ' ' '\n' | grep -qx docker; then
    die "$runner_user is in the docker group (root-equivalent): tools/setup-runner.sh --role pr takes it out"
fi
case "$repo" in */*) ;; *) die "--repo must be OWNER/REPO" ;; esac
case "$group_id$jobs" in *[!0-9]*) die "--group-id and --jobs must be numbers" ;; esac
[ -x "$runner_dir/run.sh" ] || die "$runner_dir/run.sh not found: unpack the Actions runner there"
[ -r "$token_file" ] || die "cannot read the token file $token_file"
if [ -n "$(find "$token_file" -perm /0077)" ]; then
    die "$token_file can be read by others: chmod 600 it (it can register runners)"
fi
home=$(getent passwd "$runner_user" | cut -d: -f6)

wipe() {
    pkill -KILL -u "$runner_user" 2>/dev/null || true
    for _ in $(seq 50); do pgrep -u "$runner_user" >/dev/null || break; sleep 0.1; done
    pgrep -u "$runner_user" >/dev/null && die "processes of $runner_user survive SIGKILL"
    rm -rf "${runner_dir:?}/_work" "${runner_dir:?}/_diag"
    find /tmp /var/tmp -mindepth 1 -maxdepth 1 -user "$runner_user" -exec rm -rf {} + 2>/dev/null || true
    if [ "$keep_cache" -eq 0 ]; then rm -rf "${DBPERF_HOME:?}/cache-pr"; fi
    install -d -o "$runner_user" -m 0755 "$DBPERF_HOME/cache-pr"
}

jit_config() {
    local label_args=(-f 'labels[]=self-hosted' -f 'labels[]=linux' -f 'labels[]=dbperf-pr')
    GH_TOKEN=$(cat "$token_file") gh api --method POST "repos/$repo/actions/runners/generate-jitconfig" \
        -f "name=$name-$(date +%s)-$RANDOM" -F "runner_group_id=$group_id" "${label_args[@]}" \
        -f work_folder=_work --jq .encoded_jit_config
}

done_jobs=0
while [ "$jobs" -eq 0 ] || [ "$done_jobs" -lt "$jobs" ]; do
    wipe
    config=$(jit_config) || { log "could not get a runner configuration from GitHub; retrying in 60 s"; sleep 60; continue; }
    [ -n "$config" ] || die "GitHub returned an empty runner configuration"
    log "job $((done_jobs + 1)): an ephemeral runner for $repo (labels self-hosted, linux, dbperf-pr)"
    status=0
    runuser -u "$runner_user" -- env -i HOME="$home" USER="$runner_user" LANG=C.UTF-8 \
        PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin DBPERF_HOME="$DBPERF_HOME" \
        "$runner_dir/run.sh" --jitconfig "$config" || status=$?
    log "the runner ended (exit $status)"
    done_jobs=$((done_jobs + 1))
done
wipe
