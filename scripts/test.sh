#!/usr/bin/env bash
# The one test command: set up .venv if missing, install the project with its dev extra,
# lint and type-check, then run pytest with any arguments given (e.g. scripts/test.sh tests/unit -q).
#
# Which broker (tests/conftest.py has the details):
# - RMQCOMPAT_BOOTSTRAP_SERVERS or RMQCOMPAT_TEST_BROKER set: one run, `pytest "$@"`, on
#   that cluster or that dev broker kind (kafka, tansu or noida).
# - Neither set: two runs:
#   1. `pytest "$@"`: Apache Kafka, in Docker where an engine answers, else the kafka dev
#      broker (the first run fetches Kafka's jars from Maven Central: Java 17+ and Maven
#      needed; without them one line says so and this run uses Tansu); without arguments
#      in two parts: every test but those that start a three-node cluster (the
#      runs_alone marker), then those, in one process;
#   2. `pytest -m "integration or faults" "$@"` on Tansu, the embedded broker of the demo
#      and of users without Java: the broker tests of the same selection (a -m in "$@"
#      wins); a selection without any is not a failure there.
#   3. without arguments: the unit tests again on the pure-Python path
#      (RMQCOMPAT_PURE_PYTHON=1), the reference the optional compiled core must match
#      (runs 1 and 2 use the core where the install built it: rmqcompat --version says).
#   Every run always happens; the script fails if any one fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# the spark extra: the audit's tests (tests/spark) need pyspark; their first SparkSession
# resolves Spark's Kafka connector from Maven Central into ~/.cache/rmqcompat/ivy.
# the docs extra: the documentation site (mkdocs.yml) built below.
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev,spark,docs]'
# the per-message paths this run uses: the compiled core (built above where cargo is
# present, see rmqcompat/core.py) or pure Python
.venv/bin/rmqcompat --version
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy --strict on the installed package layout (see the script's docstring).
.venv/bin/python scripts/typecheck.py
# The documentation site: --strict fails on any warning, broken links included; built into
# a temporary directory, never into the repository.
.venv/bin/mkdocs build --strict --site-dir "$(mktemp -d)"

# The pytest script, not `python -m pytest`: the latter puts the repo root on sys.path and
# would import rmqcompat from the source tree instead of the installed package mapping.
# Two xdist workers (RMQCOMPAT_TEST_WORKERS; a -n in "$@" wins): the broker tests spend
# most of their time waiting on the broker and on timers (a run keeps the 2 cores about
# 20% busy), so two at once nearly halve the run. Each worker starts its own session
# broker; tests/conftest.py hands out whole modules in collection order, and the heavy
# tests (the conformance suite, the three-node cluster's and Spark's) as one unit that one
# worker runs one after another (worker_group).
pytest=(.venv/bin/pytest -n "${RMQCOMPAT_TEST_WORKERS:-2}" --no-loadscope-reorder)
if [ -n "${RMQCOMPAT_BOOTSTRAP_SERVERS:-}" ] || [ -n "${RMQCOMPAT_TEST_BROKER:-}" ]; then
  exec "${pytest[@]}" "$@"
fi

status=0
if [ "$#" -eq 0 ]; then
  # The tests that start a three-node cluster run alone, after the rest: its fault
  # scenarios (two consumer and two forwarder processes on three nodes beside two session
  # brokers; nodes killed, frozen and restarted) loaded the two cores so that the other
  # worker's session broker stopped answering for 30 s and more (load average 200-250,
  # KRaft fenced the broker): four CI runs on 2026-11-28 failed consumer tests beside them.
  "${pytest[@]}" -m "not runs_alone" || status=$?
  echo "== the tests that start a three-node cluster, alone =="
  cluster_status=0
  "${pytest[@]}" -n 0 -m runs_alone || cluster_status=$?
  if [ "$cluster_status" -ne 0 ] && [ "$status" -eq 0 ]; then
    status=$cluster_status
  fi
else
  "${pytest[@]}" "$@" || status=$?
fi

echo "== the broker tests again, on Tansu =="
tansu_status=0
RMQCOMPAT_TEST_BROKER=tansu "${pytest[@]}" -m "integration or faults" "$@" || tansu_status=$?
# 5 = nothing selected: e.g. `scripts/test.sh tests/unit` has no broker tests to repeat.
if [ "$tansu_status" -ne 0 ] && [ "$tansu_status" -ne 5 ] && [ "$status" -eq 0 ]; then
  status=$tansu_status
fi

if [ "$#" -eq 0 ]; then
  echo "== the unit tests again, on the pure-Python path =="
  pure_status=0
  RMQCOMPAT_PURE_PYTHON=1 "${pytest[@]}" -q tests/unit || pure_status=$?
  if [ "$pure_status" -ne 0 ] && [ "$status" -eq 0 ]; then
    status=$pure_status
  fi
fi
exit "$status"
