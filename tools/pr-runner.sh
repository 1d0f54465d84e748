#!/usr/bin/env bash
# The pull-request runner: one job per registration, each started from a state no earlier job could
# change (run as root, as a service; docs/pull-request-checks.md, "Run the pull-request runner").
#
#   sudo tools/pr-runner.sh --user RUNNER_USER --runner-dir DIR --repo OWNER/REPO --token-file FILE
#   options: --group-id N (the runner group admitting only pr-check.yml, default 1), --name PREFIX,
#            --jobs N (stop after N jobs; default: run forever), --keep-cache (keep the pull-request
#            dataset cache between jobs: faster, but one job can then poison the next one's datasets)
#
# DIR is an unpacked GitHub Actions runner (https://github.com/actions/runner/releases), never
# configured with config.sh, owned by root and writable by no one else, nor any folder above it: the
# job user cannot change it. Each job runs a fresh copy of it, ~/runner in the recreated home.
# RUNNER_USER is a dedicated account (uid >= UID_MIN): everything it owns is deleted between jobs.
#
# Each round:
#   1. wipe: the user's crontab and at jobs; every process of the user (SIGKILL until none is left);
#      its System V shared memory, semaphores and message queues (ipcrm); every file and folder it
#      owns on every local file system (find over each mount but /proc, /sys and network file
#      systems: /tmp, /var/tmp, /dev/shm, /dev/mqueue (mounted for the wipe when it is not), /run/lock,
#      /run/user/UID, the cron and at spools, $DBPERF_HOME, ...); then its home is recreated from
#      /etc/skel, $DBPERF_HOME is root's and $DBPERF_HOME/cache-pr an empty folder of the user's
#      (--keep-cache: the one thing kept). A second walk checks that nothing of the user is left;
#   2. ask GitHub for a just-in-time runner configuration (labels self-hosted, linux, dbperf-pr),
#      with the token in FILE: a fine-grained token (or GitHub App token) with the repository's
#      "Administration: write" permission, readable by root only. The runner user never sees it;
#   3. copy DIR to ~/runner and run ~/runner/run.sh --jitconfig ... as RUNNER_USER, in a scrubbed
#      environment: the runner takes exactly ONE job, then exits (a just-in-time runner is ephemeral).
set -euo pipefail

runner_user="" runner_dir="" repo="" token_file="" group_id=1 name="dbperf-pr-$(hostname -s)" jobs=0 keep_cache=0
DBPERF_HOME=${DBPERF_HOME:-/var/lib/dbperf}

log() { printf '[pr-runner] %s\n' "$*" >&2; }
die() { printf '[pr-runner] ERROR: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,28s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

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
gid=$(id -g "$runner_user")
uid_min=$(awk '$1 == "UID_MIN" {print $2}' /etc/login.defs 2>/dev/null)
uid_min=${uid_min:-1000}
[ "$uid" -ne 0 ] || die "the pull-request runner must not run as root"
[ "$uid" -ge "$uid_min" ] || die "$runner_user (uid $uid) is a system account: give a dedicated user (every file it owns is deleted between jobs)"
if id -nG "$runner_user" | tr ' ' '\n' | grep -qx docker; then
    die "$runner_user is in the docker group (root-equivalent): tools/setup-runner.sh --role pr takes it out"
fi
case "$repo" in */*) ;; *) die "--repo must be OWNER/REPO" ;; esac
case "$group_id$jobs" in *[!0-9]*) die "--group-id and --jobs must be numbers" ;; esac
[ -r "$token_file" ] || die "cannot read the token file $token_file"
if [ -n "$(find "$token_file" -perm /0077)" ]; then
    die "$token_file can be read by others: chmod 600 it (it can register runners)"
fi

# --- the pristine runner, the home, the state folder: where they may be --------------------------
runner_dir=$(realpath -e "$runner_dir" 2>/dev/null) || die "--runner-dir $runner_dir does not exist"
[ -f "$runner_dir/run.sh" ] || die "$runner_dir/run.sh not found: unpack the Actions runner there (as root)"
# A folder the job user can change, or one above it that it can rename, would let a job replace the
# runner every later job starts.
writable=$(find "$runner_dir" ! -type l \( ! -uid 0 -o -perm /022 \) -print -quit)
[ -z "$writable" ] || die "$writable is not root's or is writable by others: the job user could change the runner (chown -R root: $runner_dir; chmod -R go-w $runner_dir)"
above=$runner_dir
while [ "$above" != / ]; do
    above=$(dirname "$above")
    if [ -n "$(find "$above" -maxdepth 0 \( ! -uid 0 -o \( -perm /022 ! -perm -1000 \) \))" ]; then
        die "$above (above --runner-dir) is not root's or is writable by others: install the runner under a root-only folder such as /opt/actions-runner"
    fi
done
home=$(getent passwd "$runner_user" | cut -d: -f6)
case "$home" in
    /?*/?*) ;;
    *) die "$runner_user's home '$home' is not a folder of its own (it is recreated from /etc/skel for every job): useradd -m gives /home/$runner_user" ;;
esac
case "$home/" in *"/../"*|*"/./"*) die "$runner_user's home '$home' is not a plain path" ;; esac
for other in "$runner_dir" "$DBPERF_HOME"; do
    case "$other/" in "$home"/*) die "$other is inside $runner_user's home, which is recreated for every job" ;; esac
    case "$home/" in "$other"/*) die "$runner_user's home is inside $other" ;; esac
done
parent=$(dirname "$home")
if [ -n "$(find "$parent" -maxdepth 0 \( ! -uid 0 -o -perm /022 \))" ]; then
    die "$parent (the folder of $runner_user's home) must be root's and writable by no one else"
fi
[ ! -L "$DBPERF_HOME" ] || die "$DBPERF_HOME is a symbolic link: give the real folder"
cache="$DBPERF_HOME/cache-pr"

# --- wipe ------------------------------------------------------------------------------------------
kill_all() {
    for _ in $(seq 100); do
        pkill -KILL -u "$uid" 2>/dev/null || true
        pgrep -u "$uid" >/dev/null || return 0
        sleep 0.1
    done
    die "processes of $runner_user survive SIGKILL: $(pgrep -u "$uid" -d ' ')"
}

remove_ipc() {
    # /proc/sysvipc names the owner (uid) and creator (cuid) of every object by number
    local kind flag idcol id
    for kind in shm:m:shmid sem:s:semid msg:q:msqid; do
        IFS=: read -r kind flag idcol <<< "$kind"
        [ -r "/proc/sysvipc/$kind" ] || continue
        while read -r id; do
            ipcrm "-$flag" "$id" 2>/dev/null || true
        done < <(awk -v u="$uid" -v c="$idcol" \
            'NR == 1 {for (i = 1; i <= NF; i++) h[$i] = i; next} $h["uid"] == u || $h["cuid"] == u {print $h[c]}' \
            "/proc/sysvipc/$kind")
    done
}

# Local file systems only: a network share is not this machine's to wipe, and /proc, /sys and the
# other kernel file systems hold no files of the user (its processes are gone).
LOCAL_FS=" ext2 ext3 ext4 xfs btrfs zfs f2fs jfs reiserfs vfat exfat ntfs ntfs3 tmpfs ramfs devtmpfs mqueue overlay hugetlbfs "
mounts() {
    awk '{split($0, parts, " - "); split(parts[2], fs, " "); print fs[1], $5}' /proc/self/mountinfo \
        | while read -r fstype point; do
            point=$(printf '%b' "$point")  # mountinfo escapes spaces and the like as \040
            case "$point" in /proc|/proc/*|/sys|/sys/*) continue ;; esac
            case "$LOCAL_FS" in *" $fstype "*) printf '%s\n' "$point" ;; esac
        done | sort -u
}

# Every file and folder the user owns, on each mount (never crossing into another one); a folder of
# the user's goes whole, with whatever others put in it. --keep-cache spares the dataset cache.
remove_owned() {
    local point keep=()
    if [ "$keep_cache" -eq 1 ]; then keep=(-path "$cache" -prune -o); fi
    while read -r point; do
        find "$point" -xdev "${keep[@]}" -uid "$uid" -prune -exec rm -rf --one-file-system {} + 2>/dev/null || true
    done < <(mounts)
}

left_over() {
    local point keep=()
    if [ "$keep_cache" -eq 1 ]; then keep=(-path "$cache" -prune -o); fi
    while read -r point; do
        # a mount that went away since /proc/self/mountinfo was read is no error
        find "$point" -xdev "${keep[@]}" -uid "$uid" -print -quit 2>/dev/null || true
    done < <(mounts) | head -n 3
}

mq=""
unmount_mq() {
    # lazily if a walk of the file systems (another process's) is in it at this moment
    if [ -n "$mq" ]; then
        umount "$mq" 2>/dev/null || umount -l "$mq" || log "warning: cannot unmount $mq"
        rmdir "$mq" 2>/dev/null || true
        mq=""
    fi
}
trap unmount_mq EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

wipe() {
    crontab -r -u "$runner_user" 2>/dev/null || true
    if command -v atq >/dev/null; then
        atq 2>/dev/null | awk -v u="$runner_user" '$NF == u {print $1}' | xargs -r atrm 2>/dev/null || true
    fi
    kill_all
    remove_ipc
    # POSIX message queues live in the IPC namespace's mqueue file system: mount one for the wipe
    if ! awk '$3 == "mqueue" {found = 1} END {exit !found}' /proc/mounts; then
        mq=$(mktemp -d /run/dbperf-pr-mqueue.XXXXXX)
        mount -t mqueue mqueue "$mq" 2>/dev/null || { rmdir "$mq"; mq=""; log "warning: cannot mount an mqueue file system: POSIX message queues not wiped"; }
    fi
    if [ -d "$DBPERF_HOME" ]; then
        # root's, so that only what is in it goes (and with --keep-cache, the cache stays)
        chown root:root "$DBPERF_HOME" && chmod 0755 "$DBPERF_HOME"
    fi
    remove_owned
    kill_all  # nothing started since (no crontab, no at jobs), but a walk takes seconds
    rm -rf --one-file-system "$home"  # what others (root) left in it
    local left
    left=$(left_over) || true  # head may close the pipe early: what it printed is what counts
    unmount_mq
    [ -z "$left" ] || die "files of $runner_user survive the wipe: ${left//$'\n'/, }"
    cp -a /etc/skel "$home"
    chown -R "$uid:$gid" "$home"
    chmod 0750 "$home"
    install -d -o root -g root -m 0755 "$DBPERF_HOME"
    install -d -o "$uid" -g "$gid" -m 0755 "$cache"
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
    # this job's own copy of the pristine runner: what a job changes in it dies with the next wipe
    cp -R --no-preserve=ownership --preserve=mode,timestamps,links "$runner_dir" "$home/runner"
    chown -R "$uid:$gid" "$home/runner"
    log "job $((done_jobs + 1)): an ephemeral runner for $repo (labels self-hosted, linux, dbperf-pr)"
    status=0
    runuser -u "$runner_user" -- env -i -C "$home" HOME="$home" USER="$runner_user" LANG=C.UTF-8 \
        PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin DBPERF_HOME="$DBPERF_HOME" \
        "$home/runner/run.sh" --jitconfig "$config" || status=$?
    log "the runner ended (exit $status)"
    done_jobs=$((done_jobs + 1))
done
wipe
