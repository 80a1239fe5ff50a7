#!/usr/bin/env bash
# Try the newest releases of every dependency, without the lock: a scratch virtual
# environment (deleted after; ATTNLAB_KEEP_VENV=1 keeps it and prints where), pip's cache off,
# the package from this clone with its test, cluster and hf extras resolved as a new user's
# `pip install` would resolve them today, then the default test suite run with it. Only torch
# keeps its pin from constraints.in (an unpinned torch is a multi-GB CUDA build).
#
# Run it on a schedule (once a week, say, from cron:
#   0 6 * * 1  cd /path/to/attnlab && bash scripts/try_newest.sh > try_newest.log 2>&1
# ) and before a release: a new release that breaks attnlab is then found before a user
# meets it. When it passes, `bash scripts/lock.sh` moves the lock to those versions.
# Arguments are passed to pytest (e.g. -x, or -k hf).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
SCRATCH=$(mktemp -d)
if [ "${ATTNLAB_KEEP_VENV:-}" = "1" ]; then
    trap 'echo "try_newest: the scratch environment is $SCRATCH/venv"' EXIT
else
    trap 'rm -rf "$SCRATCH"' EXIT
fi
"$PY" -m venv "$SCRATCH/venv"
PIP="$SCRATCH/venv/bin/python -m pip --disable-pip-version-check --no-cache-dir -q"
TORCH=$(grep -E '^torch==' constraints.in)
echo "try_newest: installing $TORCH, then attnlab with the newest of everything else"
if [ -n "${ATTNLAB_TORCH_INDEX:-}" ]; then
    $PIP install "$TORCH" --index-url "$ATTNLAB_TORCH_INDEX"
else
    $PIP install "$TORCH"
fi
$PIP install "$TORCH" -e ".[test,cluster,hf]"
"$SCRATCH/venv/bin/python" -m pip --disable-pip-version-check list --format=freeze \
    > "$SCRATCH/installed.txt"
echo "try_newest: against the lock, these differ:"
diff <(grep -E '^[A-Za-z0-9]' constraints.txt | sed -E 's/\+[A-Za-z0-9.]+$//' | sort -f) \
     <(grep -vi '^attnlab' "$SCRATCH/installed.txt" | sed -E 's/\+[A-Za-z0-9.]+$//' | sort -f) \
    | grep '^[<>]' || echo "  (none)"
echo "try_newest: running the tests"
"$SCRATCH/venv/bin/python" -m pytest "$@"
