#!/usr/bin/env bash
# The whole test suite: lint (ruff), types (mypy --strict on askkit/), then pytest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/bootstrap.sh" test
cd "$root"
echo "== ruff"
.venv/bin/ruff check askkit tests benchmarks setup.py
.venv/bin/ruff format --check askkit tests benchmarks setup.py
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
exec .venv/bin/python -m pytest "$@"
