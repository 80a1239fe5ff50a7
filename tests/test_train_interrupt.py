"""A training run cut off by SIGTERM keeps its work and resumes to the same weights.

Runs ``attnlab train`` as a real subprocess, signals it once it has logged a
few steps, and checks: exit code 130 with a one-line message, a checkpoint at
the step it stopped (not merely the last periodic one), and that re-running
the same command ends with exactly the weights of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

STEPS = 60
SETTINGS = [
    "--set", "model.vocab_size=300", "--set", "data.vocab_size=300", "--set", "model.d_model=16",
    "--set", "model.n_ctx=16", "--set", "model.n_head=2", "--set", f"train.steps={STEPS}",
    "--set", "train.batch_size=4", "--set", "train.eval_every=0", "--set", "train.device=cpu",
    "--set", "train.ckpt_every=1000", "--set", "train.log_every=1",
]


def _train(corpus: Path, run_dir: Path, env: dict) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "attnlab.cli.main", "train", "--corpus", str(corpus),
           "--run-dir", str(run_dir), "--quiet", "--json", *SETTINGS]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _steps_logged(run_dir: Path) -> int:
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return 0
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return max((r.get("step", 0) for r in lines), default=0)


def test_sigterm_checkpoints_and_resume_matches(tmp_path: Path) -> None:
    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(words) for _ in range(10)) + "."
                                for _ in range(400)) + "\n", encoding="utf-8")
    env = {**os.environ, "ATTNLAB_CACHE": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}

    # An uninterrupted run for reference (it also warms the tokenizer cache).
    ref = _train(corpus, tmp_path / "ref", env)
    out, err = ref.communicate(timeout=300)
    assert ref.returncode == 0, err
    expected = json.loads(out)["weights_sha256"]

    # The same run, signalled mid-way.
    run_dir = tmp_path / "cut"
    proc = _train(corpus, run_dir, env)
    deadline = time.time() + 240
    while _steps_logged(run_dir) < 5 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal landed; nothing was interrupted")
    assert proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert "interrupted at step" in last and "resume" in last
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    assert 5 <= state["step"] < STEPS  # saved where it stopped, not only every 1000 steps

    again = _train(corpus, run_dir, env)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert json.loads(out)["weights_sha256"] == expected
