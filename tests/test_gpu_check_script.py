"""scripts/gpu_check.sh, the GPU checks in one script, run here on the CPU:
its refusals, and the env and train stages end to end (GPU_CHECK_DEVICE=cpu)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_check.sh"


def _run(*stages: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {**os.environ, "PYTHON": sys.executable, "OUT": str(tmp_path / "out"),
            "GPU_CHECK_WORK": str(tmp_path / "work"), "GPU_CHECK_DEVICE": "cpu"}
    return subprocess.run(["bash", str(SCRIPT), *stages], env={**base, **env},
                          capture_output=True, text=True, timeout=600)


def test_bad_calls_are_refused_in_one_line(tmp_path):
    usage = _run(tmp_path=tmp_path)
    assert usage.returncode == 2 and "env       the GPU" in usage.stdout
    bad = _run("env", "fly", tmp_path=tmp_path, ATTNLAB_DATA=str(tmp_path))
    assert bad.returncode == 2
    assert bad.stderr.strip() == "gpu_check: no stage 'fly' " \
        "(env tests verify train bench cost estimate full)"
    no_data = _run("env", tmp_path=tmp_path, ATTNLAB_DATA=str(tmp_path))
    assert no_data.returncode == 2 and "set ATTNLAB_DATA" in no_data.stderr
    assert not (tmp_path / "out" / "gpu_check.log").exists()  # refused before any stage


def test_env_and_train_stages_on_the_cpu(tmp_path):
    data = os.environ.get("ATTNLAB_DATA") or SCRIPT.parents[2] / "shared" / "data"
    if not (Path(data) / "tinyshakespeare.txt").is_file():
        pytest.skip("corpus not found (set ATTNLAB_DATA)")
    done = _run("env", "train", tmp_path=tmp_path, ATTNLAB_DATA=str(data),
                GPU_CHECK_STEPS="3")
    log = (tmp_path / "out" / "gpu_check.log").read_text()
    assert done.returncode == 0, log[-2000:]
    assert "=== env: exit 0" in log and "torch " + __import__("torch").__version__ in log
    assert "=== train: exit 0" in log and "held-out" in log and "ROMEO:" in log
    assert (tmp_path / "work" / "train-check" / "result.json").is_file()
    failing = _run("train", tmp_path=tmp_path, ATTNLAB_DATA=str(data),
                   GPU_CHECK_STEPS="not-a-number")
    assert failing.returncode == 1  # one stage failed
    assert "=== train: exit 2" in (tmp_path / "out" / "gpu_check.log").read_text()
