"""Every path that trains a run gives the same bits: the runner in order (``--jobs 1``), a
local pool worker, the driver's retrain of a run whose worker failed, and ``attnlab train``
with the run's config, each started from a process on two threads (the count they must not
inherit). Two threads do change the last bits (the control), so the test can fail."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
import torch

from attnlab.cli import main as cli_main
from attnlab.nn.model_config import ModelConfig
from attnlab.running.executors import Job, LocalPool
from attnlab.running.runner import Runner, RunSpec
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(words) for _ in range(10)) + "."
                                for _ in range(400)) + "\n", encoding="utf-8")
    cfg = RunConfig(model=ModelConfig(vocab_size=300, d_model=16, n_ctx=16, n_head=2),
                    train=TrainConfig(steps=4, batch_size=4, eval_every=0, ckpt_every=0),
                    data=DataConfig(corpus=str(corpus), vocab_size=300))
    return RunSpec("tiny seed 0", cfg)


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


class WorkerDied:
    """An executor whose worker dies before it reports: the runner retrains in order."""

    name = "dies"

    def slots(self, n_pending: int) -> int:
        return 2

    def run(self, pending: list[RunSpec], job: Job) -> dict[str, str]:
        return {s.label: "failed: worker died" for s in pending}


def weights(record: dict) -> str:
    return record["weights_sha256"]


def test_every_training_path_gives_the_same_weights(tmp_path, spec, two_threads):
    twin = RunSpec("tiny twin", spec.config.replace(  # a second run, so the pool gets two
        train=dataclasses.replace(spec.config.train, seed=1)))
    in_order = Runner(tmp_path / "order", "cpu").train([spec])[spec.label]
    assert torch.get_num_threads() == 2  # the caller's count is restored after training
    pooled = Runner(tmp_path / "pool", "cpu", executor=LocalPool(2, "cpu")).train(
        [spec, twin])[spec.label]
    retried = Runner(tmp_path / "retry", "cpu", executor=WorkerDied()).train(
        [spec, twin])[spec.label]
    assert weights(in_order) == weights(pooled) == weights(retried)

    runner = Runner(tmp_path / "x", "cpu")
    config = tmp_path / "run.json"  # the run's own resolved config, as the runner wrote it
    stored = tmp_path / "order" / runner.key(runner.resolve(spec)) / "config.json"
    config.write_text(json.dumps(json.loads(stored.read_text(encoding="utf-8"))["config"]))
    for name, extra in (("cli", []), ("control", ["--threads", "2"])):
        code = cli_main.main(["train", str(config), "--run-dir", str(tmp_path / name),
                              "--quiet", "--json", *extra])
        assert code == 0
    cli = json.loads((tmp_path / "cli" / "result.json").read_text())
    control = json.loads((tmp_path / "control" / "result.json").read_text())
    assert weights(cli) == weights(in_order)
    assert weights(control) != weights(in_order)  # two threads: other last bits
