#!/usr/bin/env bash
# The main job on the bundled sample data.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/bootstrap.sh" main
cd "$root"
exec .venv/bin/askkit sources data/answer_job.json "$@"
