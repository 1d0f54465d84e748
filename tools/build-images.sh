#!/usr/bin/env bash
# Build dbperf's offline database server images (no image registry needed).
#
# Usage: tools/build-images.sh [--force] [NAME...]
#   NAME: mariadb-10.11 | mariadb-11.8 | mysql-9.7 | all   (default: all)
#   --force: rebuild even when the short alias tag already exists.
#
# Each image is a Debian root filesystem made with
#   debootstrap --variant=minbase --include=PACKAGE,valgrind SUITE ROOTFS MIRROR
# (valgrind inside the image is what dbperf's cost mode runs the server under)
# and loaded with `docker import`. It has no CMD and no entrypoint: the
# harness starts it with --network host and an explicit command, e.g.
#   mariadbd --no-defaults --datadir=/data --user=root --port=P --bind-address=127.0.0.1
# Tags: dbperf/<flavour>:<full upstream version> and dbperf/<flavour>:<major.minor>;
# labels: org.dbperf.server-version, org.dbperf.flavour, org.dbperf.debian-suite,
# org.dbperf.package-version, org.dbperf.valgrind-version, org.dbperf.recipe.
#
# Environment: DBPERF_DEBIAN_MIRROR (default http://deb.debian.org/debian),
#              DBPERF_BUILD_TMPDIR (where root filesystems are made, default /var/tmp).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MIRROR=${DBPERF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
BUILD_TMPDIR=${DBPERF_BUILD_TMPDIR:-/var/tmp}
LOCK=/tmp/dbperf-build-images.lock

# name -> "suite package flavour repository expected-short-version"
declare -A SPECS=(
    [mariadb-10.11]="bookworm mariadb-server mariadb dbperf/mariadb 10.11"
    [mariadb-11.8]="trixie mariadb-server mariadb dbperf/mariadb 11.8"
    [mysql-9.7]="sid mysql-server mysql dbperf/mysql 9.7"
)
ORDER=(mariadb-10.11 mariadb-11.8 mysql-9.7)

# Bump when what goes into an image changes: an existing image of an older recipe is rebuilt.
RECIPE=2  # 2: valgrind for cost mode
log() { printf '[build-images %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[build-images] ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,6s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

FORCE=0
WANTED=()
for arg in "$@"; do
    case "$arg" in
        -h|--help) usage; exit 0 ;;
        --force) FORCE=1 ;;
        all) WANTED+=("${ORDER[@]}") ;;
        *)
            [ -n "${SPECS[$arg]+set}" ] || die "unknown image '$arg' (known: ${ORDER[*]} all)"
            WANTED+=("$arg")
            ;;
    esac
done
[ "${#WANTED[@]}" -gt 0 ] || WANTED=("${ORDER[@]}")
# Drop repeats, keep the order given.
mapfile -t WANTED < <(printf '%s\n' "${WANTED[@]}" | awk '!seen[$0]++')

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap and chroot need it)"
command -v debootstrap >/dev/null 2>&1 || {
    log "debootstrap missing, installing it"
    DEBIAN_FRONTEND=noninteractive apt-get update </dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap </dev/null
}

"$HERE/start-docker.sh"

exec 9>"$LOCK"
if ! flock -n 9; then
    log "another build holds $LOCK, waiting for it"
    flock 9
fi

ROOTFS=""

# Unmount anything debootstrap left mounted under $1 (it mounts /proc, /sys,
# /dev/pts inside the target and may leave them after a failure), deepest first.
unmount_under() {
    local root=$1 target
    [ -d "$root" ] || return 0
    while read -r target; do
        umount -l "$target" 2>/dev/null || true
    done < <(awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r)
}

remove_rootfs() {
    local dir=$1
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    unmount_under "$dir"
    rm -rf --one-file-system "$dir"
}

cleanup() {
    if [ -n "$ROOTFS" ]; then
        remove_rootfs "$(dirname "$ROOTFS")"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Upstream version (e.g. 10.11.14) printed by the server binary inside the rootfs.
server_version() {
    local rootfs=$1 binary=$2 out
    out=$(chroot "$rootfs" "$binary" --no-defaults --version 2>/dev/null ||
          chroot "$rootfs" "$binary" --version 2>/dev/null) || return 1
    printf '%s\n' "$out" | sed -n 's/.*Ver \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1
}

# Make the rootfs small and ready for `--user=root` servers with host networking.
prepare_rootfs() {
    local rootfs=$1
    chroot "$rootfs" apt-get clean
    rm -rf "${rootfs:?}"/var/lib/apt/lists/* \
           "$rootfs"/var/cache/apt/* \
           "$rootfs"/var/cache/debconf/*-old \
           "$rootfs"/usr/share/doc/* \
           "$rootfs"/usr/share/man/* \
           "$rootfs"/usr/share/info/* \
           "$rootfs"/usr/share/lintian \
           "$rootfs"/var/log/*.log \
           "$rootfs"/var/log/apt/* \
           "$rootfs"/tmp/* "$rootfs"/var/tmp/*
    # The package's postinst may have initialised a datadir: the harness
    # always brings its own (mounted at /data or /var/lib/mysql), so ship an
    # empty, world-writable directory.
    rm -rf "${rootfs:?}"/var/lib/mysql
    mkdir -p "$rootfs"/var/lib/mysql "$rootfs"/run/mysqld "$rootfs"/data
    chmod 0777 "$rootfs"/var/lib/mysql "$rootfs"/run/mysqld "$rootfs"/data
    chmod 1777 "$rootfs"/tmp "$rootfs"/var/tmp
    # Debian's convention for images: an empty machine-id, filled at boot.
    : >"$rootfs"/etc/machine-id
}

build_one() {
    local name=$1 suite package flavour repo short
    read -r suite package flavour repo short <<<"${SPECS[$name]}"
    local alias_tag="$repo:$short"

    if [ "$FORCE" -eq 0 ] && docker image inspect "$alias_tag" >/dev/null 2>&1; then
        local have
        have=$(docker image inspect -f '{{index .Config.Labels "org.dbperf.recipe"}}' "$alias_tag" 2>/dev/null || true)
        if [ "$have" = "$RECIPE" ]; then
            log "$name: $alias_tag already exists, skipped (use --force to rebuild)"
            return 0
        fi
        log "$name: $alias_tag was built by an older recipe (${have:-1}, now $RECIPE): rebuilding"
    fi

    local started=$SECONDS workdir old_id
    old_id=$(docker image inspect -f '{{.Id}}' "$alias_tag" 2>/dev/null || true)
    workdir=$(mktemp -d "$BUILD_TMPDIR/dbperf-image-$name.XXXXXX")
    ROOTFS="$workdir/rootfs"

    log "$name: debootstrap $suite with $package from $MIRROR (log: $workdir/debootstrap.log)"
    if ! debootstrap --variant=minbase --include="$package,valgrind" "$suite" "$ROOTFS" "$MIRROR" \
            </dev/null >"$workdir/debootstrap.log" 2>&1; then
        tail -n 30 "$workdir/debootstrap.log" >&2
        die "$name: debootstrap failed (tail of its log above)"
    fi
    log "$name: debootstrap done after $((SECONDS - started)) s"

    local binaries server
    if [ "$flavour" = mariadb ]; then
        binaries="mariadbd mariadb-install-db"
        server=mariadbd
    else
        binaries="mysqld"
        server=mysqld
    fi
    local b
    for b in $binaries; do
        chroot "$ROOTFS" sh -c "command -v $b" >/dev/null ||
            die "$name: $b not found in the root filesystem"
    done

    local version package_version valgrind_version
    # valgrind needs /proc to run, which the chroot lacks: read the package's upstream version instead
    # shellcheck disable=SC2016 # ${Version} is dpkg-query's format, not ours
    valgrind_version=$(chroot "$ROOTFS" dpkg-query -W -f='${Version}' valgrind 2>/dev/null) ||
        die "$name: valgrind is not in the root filesystem"
    valgrind_version=${valgrind_version#*:}
    valgrind_version="valgrind-${valgrind_version%%-*}"
    version=$(server_version "$ROOTFS" "$server") || true
    [ -n "$version" ] || die "$name: could not read the version of $server"
    # shellcheck disable=SC2016 # ${Version} is dpkg-query's format, not ours
    package_version=$(chroot "$ROOTFS" dpkg-query -W -f='${Version}' "$package")
    case "$version" in
        "$short".*) ;;
        *) die "$name: $suite now ships $package $version, not $short.x; update SPECS in $0" ;;
    esac
    log "$name: server version $version (package $package $package_version)"

    prepare_rootfs "$ROOTFS"

    local full_tag="$repo:$version"
    log "$name: importing as $full_tag ($(du -sh --one-file-system "$ROOTFS" | cut -f1) on disk)"
    tar --numeric-owner --one-file-system -C "$ROOTFS" -c . |
        docker import \
            --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV LANG=C.UTF-8' \
            --change "LABEL org.dbperf.server-version=$version" \
            --change "LABEL org.dbperf.flavour=$flavour" \
            --change "LABEL org.dbperf.debian-suite=$suite" \
            --change "LABEL org.dbperf.package-version=$package_version" \
            --change "LABEL org.dbperf.valgrind-version=$valgrind_version" \
            --change "LABEL org.dbperf.recipe=$RECIPE" \
            - "$full_tag" >/dev/null
    docker tag "$full_tag" "$alias_tag"
    # A --force rebuild leaves the previous image untagged: drop it unless a
    # container still uses it or another tag still points at it.
    if [ -n "$old_id" ] && [ "$old_id" != "$(docker image inspect -f '{{.Id}}' "$full_tag")" ]; then
        docker image rm "$old_id" >/dev/null 2>&1 || true
    fi

    remove_rootfs "$workdir"
    ROOTFS=""

    # Smoke check: the image runs and its server reports the same version.
    local reported
    reported=$(docker run --rm --network host "$full_tag" "$server" --no-defaults --version)
    case "$reported" in
        *"$version"*) ;;
        *) die "$name: image answered '$reported', expected version $version" ;;
    esac

    local size
    size=$(docker image inspect -f '{{.Size}}' "$full_tag")
    log "$name: built $full_tag and $alias_tag ($((size / 1000000)) MB) in $((SECONDS - started)) s"
}

total_started=$SECONDS
for name in "${WANTED[@]}"; do
    build_one "$name"
done
log "all done in $((SECONDS - total_started)) s"
docker image ls --filter 'label=org.dbperf.flavour' \
    --format 'table {{.Repository}}:{{.Tag}}\t{{.ID}}\t{{.Size}}'
