#!/usr/bin/env bash
# Set up attnlab from nothing: a virtual environment in .venv; torch, unless .venv already
# has one (then that torch is kept, whatever its version); the package from this clone,
# editable, with its test and cluster extras; and Debian's Chromium (the browser tests) and
# bubblewrap (the labs' sandbox). Every Python package comes at the version the lock,
# constraints.txt, pins (made by scripts/lock.sh), so a new machine installs what the tests
# passed with, whatever the registry serves today; ATTNLAB_TORCH_INDEX picks pip's index for
# torch (e.g. PyTorch's CPU-only one). Safe to run again: it only adds what is missing and
# moves a package that differs from the lock to the lock's version.
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
    # version instead of the lock's pin, so it cannot replace it (a torch older than the
    # package's lower bound is an error from pip, not a download).
    TORCH=$(.venv/bin/python -c 'import torch; print(torch.__version__)')
    echo "setup: keeping torch $TORCH"
    CONSTRAINTS=.venv/attnlab-constraints.txt
    { grep -v '^torch\b' constraints.txt; echo "torch==$TORCH"; } > "$CONSTRAINTS"
else
    # pip's default torch for Linux is the CUDA build (several GB); for the CPU build set
    # ATTNLAB_TORCH_INDEX=https://download.pytorch.org/whl/cpu (PyTorch's CPU index).
    echo "setup: installing torch (pinned by the lock, constraints.txt)"
    if [ -n "${ATTNLAB_TORCH_INDEX:-}" ]; then
        $PIP install -c constraints.txt torch --index-url "$ATTNLAB_TORCH_INDEX"
    else
        $PIP install -c constraints.txt torch
    fi
fi
echo "setup: installing attnlab (editable, from this clone) with its test and cluster extras, at the lock's versions"
$PIP install -c "$CONSTRAINTS" -e ".[test,cluster]"

# Debian's headless Chromium (the explorer and report tests; no browser download) and
# bubblewrap (the sandbox `lab check` and `lab grade` run a learner's code in). Skipped, with
# a line, where we cannot install system packages.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
        echo "setup: installing Debian ${missing[*]}"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") \
            >/tmp/attnlab-apt.log 2>&1 || echo "setup: installing ${missing[*]} failed (see /tmp/attnlab-apt.log); the tests that need them will skip"
    else
        echo "setup: ${missing[*]} missing and not root; the tests that need them will skip"
    fi
fi
echo "setup: done"
