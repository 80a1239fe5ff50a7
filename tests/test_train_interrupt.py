"""A training run cut off by SIGTERM keeps its work and resumes to the same weights.

Runs ``attnlab train`` as a real subprocess and signals it at a synchronisation
point: the run's progress sink, at step ``AT``, announces itself in a file and
waits until the test has sent the signal (and said so in another file). So
the signal always lands mid-run, and a handler that does not work makes the
test fail (the run finishes, exit 0), never skip. Checks: exit code 130 with a
one-line message, a checkpoint at the step it stopped (not merely the last
periodic one), and that re-running the same command ends with exactly the
weights of an uninterrupted run.
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

STEPS = 60
AT = 5  # the step at which the run waits for the signal
SETTINGS = [
    "--set", "model.vocab_size=300", "--set", "data.vocab_size=300", "--set", "model.d_model=16",
    "--set", "model.n_ctx=16", "--set", "model.n_head=2", "--set", f"train.steps={STEPS}",
    "--set", "train.batch_size=4", "--set", "train.eval_every=0", "--set", "train.device=cpu",
    "--set", "train.ckpt_every=1000", "--set", "train.log_every=1",
]


# The real command, with its progress printer replaced by one that stops at step AT
# until the test has signalled (the progress sink runs in the training loop itself).
_PROGRAM = """
import sys, time
from pathlib import Path
import attnlab.train.progress as progress
from attnlab.cli.main import main

ready, sent = Path(sys.argv[1]), Path(sys.argv[2])

class WaitForSignal:
    def __init__(self, stream, **_):
        pass

    def __call__(self, record):
        if record.get("kind") == "train" and record["step"] == {at}:
            ready.touch()
            deadline = time.time() + 120
            while not sent.exists() and time.time() < deadline:
                time.sleep(0.01)  # the signal lands here; its handler runs before we return

progress.ProgressPrinter = WaitForSignal
sys.argv = ["attnlab", *sys.argv[3:]]
sys.exit(main())
"""


def _train(corpus: Path, run_dir: Path, env: dict, sync: Path | None = None) -> subprocess.Popen:
    args = ["train", "--corpus", str(corpus), "--run-dir", str(run_dir), "--json", *SETTINGS]
    if sync is None:
        cmd = [sys.executable, "-m", "attnlab.cli.main", *args, "--quiet"]
    else:
        cmd = [sys.executable, "-c", _PROGRAM.format(at=AT), str(sync / "ready"),
               str(sync / "sent"), *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


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

    # The same run, signalled at step AT while it waits for exactly that.
    run_dir, sync = tmp_path / "cut", tmp_path / "sync"
    sync.mkdir()
    proc = _train(corpus, run_dir, env, sync)
    deadline = time.time() + 240
    while not (sync / "ready").exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    assert (sync / "ready").exists(), proc.communicate(timeout=60)[1]
    proc.send_signal(signal.SIGTERM)
    (sync / "sent").touch()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"the handler did not stop the run: {err}"
    last = err.strip().splitlines()[-1]
    assert f"interrupted at step {AT}" in last and "resume" in last
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    assert state["step"] == AT  # saved where it stopped, not only every 1000 steps

    again = _train(corpus, run_dir, env)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert json.loads(out)["weights_sha256"] == expected
