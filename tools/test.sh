#!/usr/bin/env bash
# Set up everything (Docker engine, offline images, chromium) and run the whole test suite:
# lint, types, workflow checks, unit and integration tests against real servers and containers, and
# the workflows themselves executed offline by act (tests/workflows).
#
#   bash tools/test.sh          # the whole suite (what CI runs through .ci/run; about 30-40 minutes on 2 cores)
#   bash tools/test.sh --fast   # everyday tier, a few minutes: lint, types, static workflow checks, unit
#                               # tests, the cost tests on the local server and the bad-input faults
#
# Any further arguments go to pytest (e.g. `bash tools/test.sh --fast -x -k cost`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then
  fast=1
  shift
fi
if [ "$fast" = 1 ]; then
  bash tools/setup.sh
else
  bash tools/setup.sh --docker --browser
fi
export TESTCONTAINERS_RYUK_DISABLED=true
echo "» ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "» mypy"; .venv/bin/mypy harness
echo "» actionlint + zizmor"; bash tools/lint-workflows.sh
mkdir -p artifacts
if [ "$fast" = 1 ]; then
  echo "» pytest (fast tier)"
  exec .venv/bin/pytest -p no:cacheprovider -m "not docker and not browser and not workflows" \
    tests/unit tests/workflows/test_static.py tests/integration/test_cost.py \
    tests/faults/test_bad_inputs_and_disks.py "$@"
fi
echo "» act and the offline wheelhouse for the workflow tests (built once into .tools/)"
bash tools/workflow-test-deps.sh >/dev/null
echo "» pytest"
exec .venv/bin/pytest tests -p no:cacheprovider "$@"
