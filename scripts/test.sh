#!/usr/bin/env bash
# The one test command: set up .venv if missing, install the project with its dev extra,
# lint, then run pytest with any arguments given (e.g. scripts/test.sh tests/unit -q).
#
# Which broker (tests/conftest.py has the details):
# - RMQCOMPAT_BOOTSTRAP_SERVERS or RMQCOMPAT_TEST_BROKER set: one run, `pytest "$@"`, on
#   that cluster or that dev broker kind.
# - Neither set: two runs, so the suite passes on two independent Kafka implementations:
#   1. `pytest "$@"`: Apache Kafka in Docker where an engine answers, else Tansu;
#   2. `pytest -m "integration or faults" "$@"` on noida-db: the broker tests of the same
#      selection (a -m in "$@" wins); a selection without any is not a failure there.
#   Both runs always happen; the script fails if either one fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# The pytest script, not `python -m pytest`: the latter puts the repo root on sys.path and
# would import rmqcompat from the source tree instead of the installed package mapping.
if [ -n "${RMQCOMPAT_BOOTSTRAP_SERVERS:-}" ] || [ -n "${RMQCOMPAT_TEST_BROKER:-}" ]; then
  exec .venv/bin/pytest "$@"
fi

status=0
.venv/bin/pytest "$@" || status=$?

echo "== the broker tests again, on noida-db =="
noida_status=0
RMQCOMPAT_TEST_BROKER=noida .venv/bin/pytest -m "integration or faults" "$@" || noida_status=$?
# 5 = nothing selected: e.g. `scripts/test.sh tests/unit` has no broker tests to repeat.
if [ "$noida_status" -ne 0 ] && [ "$noida_status" -ne 5 ] && [ "$status" -eq 0 ]; then
  status=$noida_status
fi
exit "$status"
