"""Weights kept at chosen steps (``train.keep_steps``): one trajectory, its snapshots."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attnlab.errors import DataError, UsageError
from attnlab.nn.model import LanguageModel
from attnlab.train.kept_steps import kept_path, kept_steps, load_kept
from attnlab.train.run_config import RunConfig, load_run_config, run_hash
from attnlab.train.runtime import load_trained
from attnlab.train.trainer import train

TINY = [
    "model.vocab_size=29", "model.d_model=16", "model.n_ctx=16", "model.n_head=2",
    "model.dropout=0.1",  # the kept weights must follow the dropout generator too
    "train.batch_size=4", "train.log_every=2", "train.eval_every=0", "train.ckpt_every=0",
    "train.eval_batch_size=8", "train.device=cpu",
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    steps = np.where(rng.random(3000) < 0.8, 1, rng.integers(0, 29, 3000))
    tokens = np.cumsum(steps) % 29
    return SimpleNamespace(train=tokens[:2700], held=tokens[2700:], tokenizer=None)


def test_a_kept_step_is_the_run_stopped_there(tmp_path, data):
    """With a constant rate, the weights kept after step 5 of a 12-step run are bitwise
    those of the same run trained for 5 steps: a snapshot, not another trajectory."""
    long = load_run_config(None, TINY + ["train.steps=12", "train.keep_steps=1,5"])
    short = load_run_config(None, TINY + ["train.steps=5"])
    train(long, tmp_path / "long", data=data)
    train(short, tmp_path / "short", data=data)
    assert kept_steps(tmp_path / "long") == [1, 5]
    snapshot = load_kept(tmp_path / "long", 5, LanguageModel(long.model))
    stopped = load_trained(tmp_path / "short", "cpu")[1]
    final = load_trained(tmp_path / "long", "cpu")[1]
    kept, final = snapshot.state_dict(), final.state_dict()
    for (name, a), b in zip(kept.items(), stopped.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert any(not torch.equal(kept[k], final[k]) for k in kept)  # and not the end of the run
    assert not snapshot.training


def test_missing_and_damaged_kept_weights_are_one_line(tmp_path, data):
    cfg = load_run_config(None, TINY + ["train.steps=3", "train.keep_steps=2"])
    train(cfg, tmp_path, data=data)
    with pytest.raises(DataError, match=r"kept no weights at step 1 \(it keeps \[2\]"):
        load_kept(tmp_path, 1, LanguageModel(cfg.model))
    kept_path(tmp_path, 2).write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="is not a safetensors file"):
        load_kept(tmp_path, 2, LanguageModel(cfg.model))


def test_keep_steps_are_checked_and_leave_earlier_hashes_alone():
    with pytest.raises(UsageError, match=r"keep_steps must be steps in \[1, train.steps=5\]"):
        load_run_config(None, ["train.steps=5", "train.keep_steps=3,7"])
    assert load_run_config(None, ["train.keep_steps=1, 2"]).train.keep_steps == (1, 2)
    # The defaults' hash from before keep_steps existed: every cached run keeps its hash.
    assert run_hash(RunConfig()) == "c132a12a45f5"
    assert run_hash(load_run_config(None, ["train.keep_steps=1"])) != "c132a12a45f5"
