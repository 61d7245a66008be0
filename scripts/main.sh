#!/usr/bin/env bash
# The main job on the bundled sample data: install, show the sample answer's
# sources, index data/vault (BM25, and kimun's dense retrieval with all-MiniLM-L6-v2,
# run offline) and start JupyterLab on copies of notebooks/ (a folder per vault in
# askkit's cache; notebooks/ itself is never written) with the explorer notebook
# open (printing its URL). Extra arguments go to `askkit lab`, e.g.
#   bash scripts/main.sh --no-browser
#   bash scripts/main.sh --vault ~/notes --queries my-questions.tsv --qrels my-qrels.tsv
#   bash scripts/main.sh --server http://127.0.0.1:8080 --vault-id notes
#   bash scripts/main.sh --vault ~/notes --prepare-only   # index and embed, start nothing
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/bootstrap.sh" main
cd "$root"
.venv/bin/askkit sources data/answer_job.json
exec .venv/bin/askkit lab --vault data/vault --embedder fastembed:AllMiniLML6V2 \
    --notebooks notebooks --open explore.ipynb "$@"
