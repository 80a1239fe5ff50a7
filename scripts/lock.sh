#!/usr/bin/env bash
# Regenerate the lock, constraints.txt: every package scripts/setup.sh installs (the default
# install and the test, cluster and hf extras, direct and transitive) pinned to one version,
# compiled by pip-tools' pip-compile from pyproject.toml and constraints.in. setup.sh and CI
# install through it, so a new machine gets what the tests last passed with.
#
# Upgrading is a commit that runs this, then the tests (bash scripts/setup.sh on a fresh
# .venv, then .venv/bin/python -m pytest), and commits constraints.txt when they pass.
# scripts/try_newest.sh tries the newest releases first, without touching the lock.
#
# pip-compile runs in a scratch virtual environment of its own (not .venv); it resolves for
# this machine's platform and Python (Linux, CPython 3.11). The torch pin is written without
# its local label (2.13.0, not 2.13.0+cpu): which build comes (CPU or CUDA) is the index's
# choice at install time (ATTNLAB_TORCH_INDEX), the version is the lock's.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
TOOLS=$(mktemp -d)
trap 'rm -rf "$TOOLS"' EXIT
"$PY" -m venv "$TOOLS/venv"
"$TOOLS/venv/bin/python" -m pip --disable-pip-version-check -q install "pip-tools==7.7.0"
CUSTOM_COMPILE_COMMAND="bash scripts/lock.sh" "$TOOLS/venv/bin/pip-compile" --quiet \
    --all-extras --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links \
    --upgrade --output-file constraints.txt pyproject.toml constraints.in
sed -i -E 's/^(torch==[0-9.]+)\+[A-Za-z0-9.]+/\1/' constraints.txt
echo "lock: constraints.txt pins $(grep -c '^[A-Za-z0-9]' constraints.txt) packages"
