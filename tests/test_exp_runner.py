"""The runner: each planned run trained once, cached by its resolved config, in order or on
worker processes with the same bits, diverged runs recorded, GPUs assigned one per worker."""

from __future__ import annotations

import dataclasses
import logging
import os

import pytest

from attnlab.cli.common import resolve_jobs
from attnlab.nn.model_config import ModelConfig
from attnlab.running.executors import LocalPool, default_workers, worker_envs
from attnlab.running.runner import DIVERGED, Results, Runner, RunSpec, seeded, train_cost
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig, run_hash
from attnlab.train.trainer import TrainingDiverged

TINY = RunConfig(model=ModelConfig(vocab_size=64, d_model=8, n_ctx=8, n_head=2),
                 train=TrainConfig(steps=2, batch_size=2, eval_every=0, ckpt_every=0),
                 data=DataConfig(vocab_size=64))


class Tokens:
    """Token data given directly, as the synthetic languages are."""

    def __init__(self) -> None:
        import numpy as np

        self.train = np.arange(400) % 64
        self.held = np.arange(100) % 64


def test_each_planned_run_is_trained_once(tmp_path, trained_hashes):
    calls = trained_hashes
    data = Tokens()
    specs = seeded("tiny", TINY, 3, data=data)
    twin = RunSpec("tiny again", specs[0].config, data)  # the same run under another label
    runner = Runner(work=tmp_path, device="cpu")
    results = runner.train([*specs, twin])
    assert len(calls) == 3 == len(set(calls))  # three seeds, the twin shares seed 0's run
    assert results["tiny again"] == results["tiny seed 0"]
    assert [r["run_dir"] for r in results.seeds("tiny")] == \
        [results[f"tiny seed {s}"]["run_dir"] for s in range(3)]
    assert runner.train([*specs, twin]) == results and len(calls) == 3  # all cached
    assert runner.pending(runner.resolve_all(specs)) == []


def test_the_key_names_the_resolved_device_and_precision(tmp_path):
    runner = Runner(work=tmp_path, device="cpu")
    spec = runner.resolve(RunSpec("r", TINY))
    assert (spec.config.train.device, spec.config.train.precision) == ("cpu", "fp32")
    assert runner.key(spec) == run_hash(spec.config) != run_hash(TINY)
    given = runner.resolve(RunSpec("r", TINY, Tokens()))
    assert runner.key(given).startswith(run_hash(given.config) + "-")  # + the data's hash
    corpus = Runner(work=tmp_path, corpus="/x/y.txt").resolve(RunSpec("r", TINY))
    assert corpus.config.data.corpus == "/x/y.txt"


def test_a_diverged_run_is_recorded_where_the_plan_allows_it(tmp_path, monkeypatch):
    import attnlab.train.trainer as trainer

    calls = []

    def diverge(cfg, run_dir, **kw):  # as the trainer does: the marker, then the error
        calls.append(1)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / DIVERGED).write_text('{"message": "non-finite loss (nan) at step 1 of 2"}')
        raise TrainingDiverged("non-finite loss (nan) at step 1 of 2")

    monkeypatch.setattr(trainer, "train", diverge)
    runner = Runner(work=tmp_path, device="cpu")
    spec = RunSpec("wild", TINY, Tokens(), may_diverge=True)
    record = runner.train([spec])["wild"]
    assert record["diverged"] and "non-finite" in record["message"]
    assert (tmp_path / runner.key(runner.resolve(spec)) / DIVERGED).is_file()
    assert runner.train([spec])["wild"]["diverged"] and len(calls) == 1  # not trained again
    with pytest.raises(TrainingDiverged):
        runner.train([RunSpec("strict", TINY.replace(train=TrainConfig(steps=3)), Tokens())])
    strict = RunSpec("strict", spec.config, spec.data)  # the same run, divergence not allowed
    with pytest.raises(TrainingDiverged):
        runner.train([strict])  # its marker is no result for a spec that does not allow it


def test_labels_must_be_unique(tmp_path):
    with pytest.raises(ValueError, match="unique labels"):
        Runner(work=tmp_path).train([RunSpec("a", TINY), RunSpec("a", TINY)])


def test_results_by_seed_and_the_longest_runs_first():
    results = Results({"x seed 1": {"v": 1}, "x seed 0": {"v": 0}, "y seed 0": {"v": 9}})
    assert [r["v"] for r in results.seeds("x")] == [0, 1]
    with pytest.raises(KeyError, match="no planned run"):
        results.seeds("z")
    long = TINY.replace(train=dataclasses.replace(TINY.train, steps=20))
    assert train_cost(long) == 10 * train_cost(TINY)


def test_in_order_and_on_workers_give_the_same_bits(tmp_path, caplog):
    specs = seeded("tiny", TINY.replace(train=dataclasses.replace(TINY.train, steps=6)), 4,
                   data=Tokens())
    events = []
    with caplog.at_level(logging.INFO, logger="attnlab.running.executors"):
        pooled = Runner(work=tmp_path / "a", device="cpu", executor=LocalPool(2, "cpu"),
                        progress=events.append).train(specs)
    started = [r.getMessage() for r in caplog.records if "(worker " in r.getMessage()]
    assert len(started) == 4  # each run named as a worker starts it
    in_order = Runner(work=tmp_path / "b", device="cpu").train(specs)

    def same(r: dict) -> dict:  # everything but time, speed and where it lives
        return {k: v for k, v in r.items() if k not in ("wall_s", "tokens_per_s", "run_dir")}

    assert {k: same(v) for k, v in pooled.items()} == {k: same(v) for k, v in in_order.items()}
    assert len({r["weights_sha256"] for r in pooled.values()}) == 4  # four seeds, four models
    assert len(list((tmp_path / "a").iterdir())) == 4  # every run trained once
    assert {e["run"] for e in events if e.get("kind") == "train"} == {s.label for s in specs}


def test_a_run_that_fails_in_a_worker_raises_in_order(tmp_path):
    bad = TINY.replace(data=DataConfig(corpus=str(tmp_path / "missing.txt"), vocab_size=64))
    runner = Runner(work=tmp_path, device="cpu", corpus=str(tmp_path / "missing.txt"),
                    executor=LocalPool(2, "cpu"))
    specs = [RunSpec(f"bad {i}", bad.replace(train=TrainConfig(steps=1, seed=i))) for i in (0, 1)]
    with pytest.raises(ValueError, match="missing.txt"):
        runner.train(specs)


def test_one_worker_per_gpu_by_default_more_share_them(monkeypatch, tmp_path):
    import attnlab.running.executors as pool

    monkeypatch.setattr(pool, "gpu_count", lambda: 2)
    assert default_workers() == 2 and resolve_jobs(None) == 2  # --jobs not given: one per GPU
    cores = max(1, min(8, len(os.sched_getaffinity(0))))
    assert resolve_jobs(None, "cpu") == default_workers("cpu") == cores  # --device cpu: per core
    assert LocalPool(2, "cuda").slots(5) == 2
    pool8 = LocalPool(8, "cuda")  # --jobs 8: four on each GPU
    assert pool8.slots(5) == 5 and pool8.slots(1) == 1
    assert LocalPool(1, "cuda").slots(5) == 1  # --jobs 1
    assert worker_envs(2, "cuda", 2) == [{"CUDA_VISIBLE_DEVICES": "0"},
                                         {"CUDA_VISIBLE_DEVICES": "1"}]
    assert worker_envs(3, "cuda", 2, "3,5") == [{"CUDA_VISIBLE_DEVICES": "3"},
                                                {"CUDA_VISIBLE_DEVICES": "5"},
                                                {"CUDA_VISIBLE_DEVICES": "3"}]
    with pytest.raises(ValueError, match="visible GPU"):
        worker_envs(3, "cuda", 0)
    assert worker_envs(2, "cpu", 0) == [{}, {}]
    monkeypatch.setattr(pool, "gpu_count", lambda: 0)  # asked for CUDA, none there
    assert LocalPool(8, "cuda").slots(5) == 1
    assert Runner(work=tmp_path, executor=LocalPool(2)).slots(5) == 2


def test_jobs_option():
    assert resolve_jobs(3) == 3 and resolve_jobs(None) == default_workers() >= 1
    with pytest.raises(ValueError, match="--jobs must be at least 1"):
        resolve_jobs(0)


def test_a_damaged_result_of_a_finished_run_is_one_data_error(tmp_path) -> None:
    from attnlab.errors import DataError

    runner = Runner(work=tmp_path, device="cpu")
    spec = runner.resolve(RunSpec("r", TINY))
    run_dir = tmp_path / runner.key(spec)
    run_dir.mkdir(parents=True)
    (run_dir / "result.json").write_bytes(b"\x00garbage")
    with pytest.raises(DataError, match="result.json"):
        runner.finished(spec)
    (run_dir / "result.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="expected a JSON object"):
        runner.finished(spec)


def test_the_executor_contract(tmp_path):
    """An executor gets the pending runs resolved and longest first with a Job, answers a
    status per label; the runner trains what it left in order, through ``train_spec``."""
    import pickle

    from attnlab.running.executors import Job
    from attnlab.running.train_run import train_spec

    class HalfDone:
        name = "half"

        def __init__(self) -> None:
            self.seen: list[list[str]] = []

        def slots(self, n_pending: int) -> int:
            return 2

        def run(self, pending: list[RunSpec], job: Job) -> dict[str, str]:
            self.seen.append([s.label for s in pending])
            assert all(s.config.train.device == "cpu" for s in pending)  # resolved
            assert [train_cost(s.config) for s in pending] == \
                sorted((train_cost(s.config) for s in pending), reverse=True)
            first = pending[0]
            train_spec(first, job.work, progress=job.progress)
            return {first.label: "done", pending[1].label: "failed: not tried"}

    assert pickle.loads(pickle.dumps(train_spec)) is train_spec  # top level: any process runs it
    short = seeded("short", TINY, 1, data=Tokens())
    long = seeded("long", TINY.replace(train=dataclasses.replace(TINY.train, steps=4)), 1,
                  data=Tokens())
    executor = HalfDone()
    runner = Runner(work=tmp_path, device="cpu", executor=executor)
    results = runner.train([*short, *long])
    assert executor.seen == [["long seed 0", "short seed 0"]]
    assert set(results) == {"short seed 0", "long seed 0"}
    assert runner.pending(runner.resolve_all([*short, *long])) == []  # the rest trained here
    runner.train([*short, *long])
    assert executor.seen == [["long seed 0", "short seed 0"]]  # nothing pending: not called
