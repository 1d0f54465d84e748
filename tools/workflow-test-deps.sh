#!/usr/bin/env bash
# What the workflow tests (tests/workflows, act) need, built once and cached in .tools/:
#
#   .tools/act                         act (nektos/act) from the Go module proxy (tools/go-tool.sh)
#   .tools/wheelhouse/<lock hash>/     the wheels of requirements.lock (+ setuptools and wheel to build
#                                      dbperf), so the workflows' "Install dbperf" steps run offline
#
# Prints two lines: the act binary and the wheelhouse folder. Safe to run again and concurrently.
# Environment: ACT_VERSION (default v0.2.89).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ACT_VERSION=${ACT_VERSION:-v0.2.89}
act=$(bash tools/go-tool.sh act "github.com/nektos/act@$ACT_VERSION")

hash=$(cat requirements.lock pyproject.toml | sha256sum | cut -c1-16)
wheelhouse=$(pwd)/.tools/wheelhouse/$hash
if [ ! -f "$wheelhouse/.complete" ]; then
    exec 6>"$(pwd)/.tools/.wheelhouse.lock"
    flock 6
    if [ ! -f "$wheelhouse/.complete" ]; then
        [ -x .venv/bin/pip ] || { echo "workflow-test-deps: no .venv (run tools/setup.sh)" >&2; exit 2; }
        echo "[workflow-test-deps] downloading the wheels of requirements.lock into $wheelhouse" >&2
        rm -rf "$wheelhouse"
        mkdir -p "$wheelhouse"
        .venv/bin/pip download -q --disable-pip-version-check --require-hashes -r requirements.lock \
            -d "$wheelhouse" </dev/null >&2
        .venv/bin/pip download -q --disable-pip-version-check -d "$wheelhouse" "setuptools>=77" wheel </dev/null >&2
        touch "$wheelhouse/.complete"
        # (wheelhouses of earlier lock files stay: a test session may still use one; rm -rf .tools/wheelhouse)
    fi
fi
echo "$act"
echo "$wheelhouse"
