#!/usr/bin/env bash
# The GPU checks (docs/gpu.md), as one script for a machine with a GPU, where device
# time may be counted in minutes: run only the stages you need, in one command.
#
#   bash scripts/gpu_check.sh STAGE...     stages, in the order given:
#     env       the GPU, the driver, torch and what it sees
#     tests     the default test suite (on that machine `auto` resolves to CUDA)
#     verify    attnlab verify (the equivalence checks)
#     train     attnlab train, eval and generate on the device, timed
#     bench     the training (fp32 and bf16) and generation benchmarks against HF, on the device
#     cost      the cost experiment measured on the device (memory by the allocator)
#     estimate  how long the profile's suite should take there
#     full      the profile's suite on the device, stopped after GPU_CHECK_LIMIT seconds
#
# Needs: python3 with torch (and the packages of pyproject.toml); attnlab is taken from
# src/, nothing is installed. ATTNLAB_DATA names the folder holding tinyshakespeare.txt
# (a machine without network cannot download it). Everything is logged to
# $OUT/gpu_check.log (OUT defaults to ./gpu-out); `full` also copies report.md and
# results.json there. Settings: GPU_CHECK_DEVICE (cuda), GPU_CHECK_PROFILE (full),
# GPU_CHECK_JOBS (4 workers sharing the GPUs), GPU_CHECK_STEPS (train: 1000),
# GPU_CHECK_LIMIT (full: 480 s). The exit status is the number of stages that failed.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
log="$out/gpu_check.log"
py=${PYTHON:-python3}
device=${GPU_CHECK_DEVICE:-cuda}
profile=${GPU_CHECK_PROFILE:-full}
jobs=${GPU_CHECK_JOBS:-4}
steps=${GPU_CHECK_STEPS:-1000}
limit=${GPU_CHECK_LIMIT:-480}
work=${GPU_CHECK_WORK:-gpu-runs}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

if [ $# -eq 0 ]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
for stage in "$@"; do
  case $stage in
    env|tests|verify|train|bench|cost|estimate|full) ;;
    *) echo "gpu_check: no stage '$stage' (env tests verify train bench cost estimate full)" >&2
       exit 2 ;;
  esac
done
if [ -z "${ATTNLAB_DATA:-}" ] || [ ! -f "$ATTNLAB_DATA/tinyshakespeare.txt" ]; then
  echo "gpu_check: set ATTNLAB_DATA to the folder holding tinyshakespeare.txt" >&2
  exit 2
fi

attnlab() { "$py" -m attnlab.cli.main "$@"; }
say() { printf '%s\n' "$*" | tee -a "$log"; }

stage_env() {
  command -v nvidia-smi >/dev/null && nvidia-smi
  "$py" - <<'EOF'
import os, platform, torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda)
print("cuda available:", torch.cuda.is_available(), "devices:", torch.cuda.device_count())
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"  {i}: {p.name}, {p.total_memory / 2**30:.0f} GiB, {p.multi_processor_count} SMs")
print("cpus:", len(os.sched_getaffinity(0)))
EOF
  git log -1 --format='commit %H%n%s' 2>/dev/null || true
}

stage_tests() {
  local xdist=()
  "$py" -c "import xdist" 2>/dev/null && xdist=(-n 8)
  "$py" -m pytest -q -p no:cacheprovider "${xdist[@]}" --timeout 600
}

stage_verify() { attnlab verify; }

stage_train() {
  local run="$work/train-check"
  attnlab train --set train.steps="$steps" --set train.device="$device" --run-dir "$run" &&
    attnlab eval "$run" --device "$device" &&
    attnlab generate "$run" --device "$device" --prompt "ROMEO:" --tokens 60 --seed 1
}

stage_bench() {
  local rc=0
  "$py" -m benchmarks.train_throughput --device "$device" --rounds 8 --round-steps 4 || rc=1
  "$py" -m benchmarks.train_throughput --device "$device" --precision bf16 --rounds 8 \
    --round-steps 4 --bf16-widths || rc=1
  "$py" -m benchmarks.generate --device "$device" --rounds 5 || rc=1
  return $rc
}

stage_cost() {
  attnlab run cost --profile "$profile" --device "$device" --out "$work/report" --work "$work"
}

stage_estimate() {
  attnlab reproduce --profile "$profile" --device "$device" --jobs "$jobs" --work "$work" \
    --out "$work/report" --estimate
}

stage_full() {
  local rc=0
  timeout --preserve-status --signal=INT --kill-after=120 "$limit" "$py" -m attnlab.cli.main \
    reproduce --profile "$profile" --device "$device" --jobs "$jobs" --work "$work" \
    --out "$work/report" || rc=$?
  for f in report.md results.json; do
    [ -f "$work/report/$f" ] && cp "$work/report/$f" "$out/$f"
  done
  [ $rc -eq 130 ] && echo "gpu_check: stopped after ${limit}s (GPU_CHECK_LIMIT); finished runs are in $work"
  return $rc
}

failed=0
for stage in "$@"; do
  say "=== $stage ($(date -u +%FT%TZ)): device $device, profile $profile, jobs $jobs"
  start=$(date +%s)
  "stage_$stage" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  say "=== $stage: exit $rc after $(( $(date +%s) - start )) s"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
done
exit $failed
