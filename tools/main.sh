#!/usr/bin/env bash
# The main job: set up, then run oltp_point_select on the embedded MariaDB, store it, and judge it:
# timing runs against this machine's baseline (when one was recorded here) and cost runs (instructions
# per transaction under callgrind) against the committed cost baseline, which travels between machines.
# Extra arguments go to `dbperf gate`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
exec .venv/bin/dbperf gate --scenario oltp_point_select --server mariadb-local "$@"
