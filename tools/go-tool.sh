#!/usr/bin/env bash
# Build a Go command-line tool from the Go module proxy into .tools/, once per version.
#
#   tools/go-tool.sh NAME MODULE@VERSION     # e.g. act github.com/nektos/act@v0.2.89
#
# Prints the path of the binary (.tools/NAME) on stdout. Safe to run again and from several
# processes at once (a lock serialises builds; a stamp file .tools/NAME.module names what was built,
# so a version bump rebuilds). Needs go 1.24+; without it, the official toolchain is fetched from the
# Go module proxy (as GOTOOLCHAIN=auto does) into .tools/. Used by tools/lint-workflows.sh
# (actionlint) and by the workflow tests in tests/workflows (act).
set -euo pipefail

[ "$#" -eq 2 ] || { echo "usage: $0 NAME MODULE@VERSION" >&2; exit 2; }
name=$1 module=$2
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tools_dir=$(pwd)/.tools
binary=$tools_dir/$name
stamp=$tools_dir/$name.module
mkdir -p "$tools_dir"

log() { printf '[go-tool] %s\n' "$*" >&2; }

built() { [ -x "$binary" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$module" ]; }

if built; then
    echo "$binary"
    exit 0
fi

exec 7>"$tools_dir/.go-tool.lock"
flock 7
if built; then  # another process built it while we waited
    echo "$binary"
    exit 0
fi

go_ok() {
    # go 1.24 or newer; older ones cannot fetch a newer toolchain themselves
    command -v "${1:-go}" >/dev/null 2>&1 || return 1
    "${1:-go}" version | awk '{split(substr($3, 3), v, "."); exit !(v[1] > 1 || (v[1] == 1 && v[2] >= 24))}'
}
go=go
if ! go_ok go; then
    toolchain=golang.org/toolchain@v0.0.1-go1.25.5.linux-amd64
    go=$tools_dir/$toolchain/bin/go
    if ! go_ok "$go"; then
        log "fetching the Go toolchain ($toolchain) from the Go module proxy"
        curl -sSfL -o "$tools_dir/toolchain.zip" \
            "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go1.25.5.linux-amd64.zip"
        python3 -m zipfile -e "$tools_dir/toolchain.zip" "$tools_dir"
        rm -f "$tools_dir/toolchain.zip"
        chmod -R u+x "$tools_dir/$toolchain/bin" "$tools_dir/$toolchain/pkg/tool"
    fi
fi

started=$SECONDS
log "building $module into $tools_dir with $("$go" version) (large modules take a few minutes)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Build into a scratch folder, then move: a half-built binary never looks finished.
GOBIN=$work GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go" install "$module" >&2
built_name=$(basename "${module%@*}")
mv -f "$work/$built_name" "$binary"
echo "$module" > "$stamp"
log "built $binary in $((SECONDS - started)) s"
echo "$binary"
