#!/usr/bin/env bash
# The one test command: set up .venv if missing, install the project with its dev extra,
# lint, then run pytest with any arguments given (e.g. scripts/test.sh tests/unit -q).
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
exec .venv/bin/pytest "$@"
