#!/usr/bin/env bash
# Set up attnlab from nothing: a virtual environment in .venv; torch, unless .venv
# already has one (then that torch is kept, whatever its version), pinned by
# constraints.txt (ATTNLAB_TORCH_INDEX picks pip's index for it, e.g. PyTorch's
# CPU-only one); the package from this clone, editable, with its test and cluster
# extras; and Debian's Chromium for the browser tests. Safe to run again: it only
# adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PY" -m venv .venv
fi
PIP=".venv/bin/python -m pip --disable-pip-version-check -q"
CONSTRAINTS=constraints.txt
# A torch that imports but has no version is the leftover of an interrupted install: not kept.
if .venv/bin/python -c "import torch; torch.__version__" 2>/dev/null; then
    # Keep the torch that is there: the second pip call is constrained to exactly that
    # version instead of constraints.txt's pin, so it cannot replace it (a torch older
    # than the package's lower bound is an error from pip, not a download).
    TORCH=$(.venv/bin/python -c 'import torch; print(torch.__version__)')
    echo "setup: keeping torch $TORCH"
    CONSTRAINTS=.venv/attnlab-constraints.txt
    { grep -v '^torch\b' constraints.txt; echo "torch==$TORCH"; } > "$CONSTRAINTS"
else
    # On this project's machines the pin takes a CPU wheel lying on disk. Elsewhere pip's
    # default torch for Linux is the CUDA build (several GB); for the CPU build set
    # ATTNLAB_TORCH_INDEX=https://download.pytorch.org/whl/cpu (PyTorch's CPU index).
    echo "setup: installing torch (pinned by constraints.txt)"
    if [ -n "${ATTNLAB_TORCH_INDEX:-}" ]; then
        $PIP install -c constraints.txt torch --index-url "$ATTNLAB_TORCH_INDEX"
    else
        $PIP install -c constraints.txt torch
    fi
fi
echo "setup: installing attnlab (editable, from this clone) with its test and cluster extras"
$PIP install -c "$CONSTRAINTS" -e ".[test,cluster]"

# Headless Chromium for the explorer and report tests (Debian's package; no
# browser download). Skipped quietly where we cannot install system packages.
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
        echo "setup: installing Debian chromium"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
            >/tmp/attnlab-apt.log 2>&1 || echo "setup: chromium install failed (see /tmp/attnlab-apt.log); browser tests will skip"
    else
        echo "setup: /usr/bin/chromium missing and not root; browser tests will skip"
    fi
fi
echo "setup: done"
