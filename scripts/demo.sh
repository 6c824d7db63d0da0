#!/usr/bin/env bash
# Installs rmqcompat (with the dev broker) into .venv and runs the retry demo.
# Uses RMQCOMPAT_BOOTSTRAP_SERVERS when set, otherwise starts a dev broker on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
exec .venv/bin/rmqcompat demo
