#!/usr/bin/env bash
# Set up everything (Docker engine, offline images, chromium) and run the whole test suite:
# lint, types, workflow checks, unit and integration tests against real servers and containers, and
# the workflows themselves executed offline by act (tests/workflows).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh --docker --browser
export TESTCONTAINERS_RYUK_DISABLED=true
echo "» ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "» mypy"; .venv/bin/mypy harness
if [ -x tools/lint-workflows.sh ] || [ -f tools/lint-workflows.sh ]; then
  echo "» actionlint + zizmor"; bash tools/lint-workflows.sh
fi
echo "» act and the offline wheelhouse for the workflow tests (built once into .tools/)"
bash tools/workflow-test-deps.sh >/dev/null
echo "» pytest"
mkdir -p artifacts
exec .venv/bin/pytest tests -p no:cacheprovider "$@"
