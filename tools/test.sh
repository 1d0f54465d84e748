#!/usr/bin/env bash
# Set up everything (Docker engine, offline images, chromium) and run the whole test suite:
# lint, types, workflow checks, unit and integration tests against real servers and containers, and
# the workflows themselves executed offline by act (tests/workflows).
#
#   bash tools/test.sh          # the whole suite (what CI runs through .ci/run; under 40 minutes on 2 cores)
#   bash tools/test.sh --fast   # everyday tier, a few minutes: lint, types, static workflow checks, unit
#                               # tests, the cost tests on the local server and the bad-input faults
#
# Any further arguments go to pytest (e.g. `bash tools/test.sh --fast -x -k cost`).
#
# The whole suite runs in two parts: everything but the `serial` tests on DBPERF_TEST_WORKERS pytest-xdist
# workers (default 3: most tests wait on servers, containers and act, and a serial run left the 2 cores
# half idle), each file's tests on one worker, the longest files first; then the `serial` tests (timing verdicts and fixed time limits that another
# test's load could flip) alone. The 25 slowest tests and the 15 slowest files of each part are listed at its end.
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

# The suite's own temporary folder: pytest's folders of both parts and the one dataset-snapshot cache
# they share. Folders of earlier suites whose process is gone are removed first (a failed suite keeps
# its folder to look at, until the next suite starts), so no run leaves the next one less disk.
tmp_root="${TMPDIR:-/tmp}"
for old in "$tmp_root"/dbperf-suite.*; do
  [ -d "$old" ] || continue
  owner=$(cat "$old/pid" 2>/dev/null || echo 0)
  if ! kill -0 "$owner" 2>/dev/null; then rm -rf "$old"; fi
done
# The threshold is the peak a full run from a fresh clone was measured to use, with a margin (README).
need_gb=${DBPERF_TEST_FREE_GB:-$([ "$fast" = 1 ] && echo 4 || echo 16)}
free_gb=$(($(df -Pk "$tmp_root" | awk 'NR==2 {print $4}') / 1048576))
if [ "$free_gb" -lt "$need_gb" ]; then
  echo "test.sh: $free_gb GB free in $tmp_root, the suite needs about $need_gb GB (dataset copies, containers," \
    "stores): free space there (e.g. \`dbperf cache clear\`, old folders in $tmp_root) or point TMPDIR at a" \
    "larger disk; DBPERF_TEST_FREE_GB=N sets the threshold" >&2
  exit 1
fi
suite_tmp=$(mktemp -d "$tmp_root/dbperf-suite.XXXXXX")
echo $$ >"$suite_tmp/pid"
export DBPERF_TEST_CACHE_DIR="$suite_tmp/cache"
echo "» $free_gb GB free in $tmp_root; the suite's temporary files go to $suite_tmp"

echo "» ruff"; .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "» mypy"; .venv/bin/mypy harness
echo "» actionlint + zizmor"; bash tools/lint-workflows.sh
mkdir -p artifacts
if [ "$fast" = 1 ]; then
  echo "» pytest (fast tier)"
  status=0
  .venv/bin/pytest -p no:cacheprovider --basetemp "$suite_tmp/fast" \
    -m "not docker and not browser and not workflows" \
    tests/unit tests/workflows/test_static.py tests/integration/test_cost.py \
    tests/faults/test_bad_inputs_and_disks.py "$@" || status=$?
  [ "$status" = 0 ] && rm -rf "$suite_tmp"
  exit "$status"
fi
echo "» act and the offline wheelhouse for the workflow tests (built once into .tools/)"
bash tools/workflow-test-deps.sh >/dev/null
workers=${DBPERF_TEST_WORKERS:-3}
echo "» pytest on $workers workers (everything but the serial tests)"
status=0
.venv/bin/pytest tests -p no:cacheprovider --basetemp "$suite_tmp/parallel" -n "$workers" --dist loadfile \
  -m "not serial" --durations=25 "$@" || status=$?
[ "$status" = 5 ] && status=0
[ "$status" = 0 ] && rm -rf "$suite_tmp/parallel"
echo "» pytest, serial tests alone"
serial=0
.venv/bin/pytest tests -p no:cacheprovider --basetemp "$suite_tmp/serial" -m serial --durations=25 "$@" || serial=$?
[ "$serial" = 5 ] && serial=0  # -k or a path left no serial test: nothing to run is not a failure
echo "» $(($(df -Pk "$tmp_root" | awk 'NR==2 {print $4}') / 1048576)) GB free in $tmp_root at the end"
if [ "$status" != 0 ] || [ "$serial" != 0 ]; then
  echo "» failed: parallel part exit $status, serial part exit $serial; the tests' folders: $suite_tmp" >&2
  exit 1
fi
rm -rf "$suite_tmp"
