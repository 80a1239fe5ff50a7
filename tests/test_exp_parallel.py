"""Side-by-side training (``Context.prefetch``): same results as in order, failures retried."""

from __future__ import annotations

import logging

import pytest

from attnlab.cli.run import resolve_jobs
from attnlab.experiments import norm
from attnlab.experiments.base import Context
from attnlab.experiments.parallel import Job, default_workers, run_jobs
from attnlab.nn.config import ModelConfig
from attnlab.train.config import DataConfig, TrainConfig


def test_two_workers_give_the_same_runs_as_one(tmp_path, shakespeare_head, caplog):
    s = norm.PROFILES["micro"]
    events = []
    with caplog.at_level(logging.INFO, logger="attnlab.experiments.parallel"):
        parallel = norm.run(s, Context(work=tmp_path / "a", corpus=str(shakespeare_head),
                                       workers=2, progress=events.append))
    started = [r.getMessage() for r in caplog.records if r.getMessage().startswith("training norm")]
    assert len(started) == 4 and all("(worker " in m for m in started)  # each run is named
    in_order = norm.run(s, Context(work=tmp_path / "b", corpus=str(shakespeare_head)))
    for cells in (parallel["cells"], in_order["cells"]):
        for runs in cells.values():
            for r in runs:
                r.pop("wall_s")  # the only thing that may differ
    assert parallel == in_order  # bitwise: every run is one thread in both
    assert len(list((tmp_path / "a").iterdir())) == 4  # the four cells, trained once each
    assert {e["run"] for e in events if e.get("kind") == "train"} == {
        f"norm {n} warmup={w} seed 0" for n in ("pre", "post") for w in (False, True)}


def test_a_failed_job_is_reported_and_the_in_order_call_raises(tmp_path):
    bad = DataConfig(corpus=str(tmp_path / "missing.txt"), vocab_size=64)
    model = ModelConfig(vocab_size=64, d_model=8, n_ctx=8, n_head=2)
    jobs = [Job(f"bad {i}", model, TrainConfig(steps=1, seed=i), bad) for i in range(2)]
    status = run_jobs(jobs, tmp_path, workers=2)
    assert set(status) == {"bad 0", "bad 1"}
    assert all(v.startswith("failed: ") and "missing.txt" in v for v in status.values())
    with pytest.raises(ValueError, match="missing.txt"):
        Context(work=tmp_path, corpus=str(tmp_path / "missing.txt")).train(
            "bad 0", model, TrainConfig(steps=1), data_cfg=bad)


def test_finished_runs_are_not_sent_to_workers(tmp_path, shakespeare_head, monkeypatch):
    ctx = Context(work=tmp_path, corpus=str(shakespeare_head), workers=2)
    s = norm.PROFILES["micro"]
    norm.run(s, ctx)
    sent = []
    monkeypatch.setattr("attnlab.experiments.parallel.run_jobs",
                        lambda jobs, *a, **k: sent.append(jobs))
    norm.run(s, ctx)
    assert sent == []


def test_jobs_option():
    assert resolve_jobs(3) == 3 and resolve_jobs(None) == default_workers() >= 1
    with pytest.raises(ValueError, match="--jobs must be at least 1"):
        resolve_jobs(0)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        run_jobs([], None, 0)
