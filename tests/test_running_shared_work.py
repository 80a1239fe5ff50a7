"""Two commands training into one ``--work``: the second waits for the run the first is
training and reads its result, instead of a "failed: UsageError" for a run that ends right
(issue 27)."""

from __future__ import annotations

import fcntl
import logging
import shutil
import threading
import time

from attnlab.nn.model_config import ModelConfig
from attnlab.running.runner import Runner, RunSpec
from attnlab.running.train_run import train_spec
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig
from attnlab.train.rundir import LOCK

TINY = RunConfig(model=ModelConfig(vocab_size=64, d_model=8, n_ctx=8, n_head=2),
                 train=TrainConfig(steps=2, batch_size=2, eval_every=0, ckpt_every=0),
                 data=DataConfig(vocab_size=64))


class Tokens:
    def __init__(self) -> None:
        import numpy as np

        self.train = np.arange(400) % 64
        self.held = np.arange(100) % 64


def _locked_by_another(run_dir):
    """The exclusive lock a training process holds (flock: another open file conflicts,
    even in this process)."""
    run_dir.mkdir(parents=True)
    fh = open(run_dir / LOCK, "a")  # noqa: SIM115 - closed by the test
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fh


def test_a_run_another_process_trains_is_waited_for_then_read(tmp_path, trained_hashes,
                                                              caplog):
    data = Tokens()
    spec = Runner(tmp_path / "a", device="cpu").resolve(RunSpec("tiny", TINY, data))
    first = train_spec(spec, tmp_path / "a")  # what the other command will have written
    assert len(trained_hashes) == 1
    run_dir = tmp_path / "b" / first["run_dir"].rsplit("/", 1)[-1]
    held = _locked_by_another(run_dir)
    got: dict = {}
    with caplog.at_level(logging.INFO, logger="attnlab.running.train_run"):
        waiter = threading.Thread(target=lambda: got.update(train_spec(spec, tmp_path / "b")))
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive() and not got  # waiting, not failed
        for f in (tmp_path / "a" / run_dir.name).iterdir():  # the other process finishes
            if f.name != LOCK:
                shutil.copytree(f, run_dir / f.name) if f.is_dir() else shutil.copy(f, run_dir)
        held.close()
        waiter.join(10)
    assert not waiter.is_alive()
    assert got["held_ppl"] == first["held_ppl"] and len(trained_hashes) == 1  # read, not trained
    assert "is being trained by another process" in caplog.text and "failed" not in caplog.text


def test_a_run_the_other_process_left_unfinished_is_trained_after_it(tmp_path, trained_hashes):
    spec = Runner(tmp_path, device="cpu").resolve(RunSpec("tiny", TINY, Tokens()))
    from attnlab.running.spec import run_key

    held = _locked_by_another(tmp_path / run_key(spec))
    got: dict = {}
    waiter = threading.Thread(target=lambda: got.update(train_spec(spec, tmp_path)))
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive() and not trained_hashes
    held.close()  # the other command was stopped before finishing
    waiter.join(30)
    assert "held_ppl" in got and len(trained_hashes) == 1
