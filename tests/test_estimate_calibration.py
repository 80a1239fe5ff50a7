"""The estimate checks itself against the finished runs of the cache: the ratio per
experiment, the correction, the error bar, and the words when nothing has finished."""

from __future__ import annotations

import pytest

import attnlab.suite.forecast as estimate_module
from attnlab.kit.registry import load
from attnlab.running.runner import Runner
from attnlab.suite import estimate
from attnlab.suite.forecast import Calibration, calibrate, run_seconds, shape_of

STEP_S = 0.01  # the fake timing of every shape


def test_the_ratio_is_the_experiments_own_or_the_median():
    c = Calibration({"a": 10.0, "b": 20.0, "c": 10.0}, {"a": 12.0, "b": 30.0, "c": 20.0},
                    {"a": 2, "b": 1, "c": 1}, [("a", 1.1), ("a", 1.3), ("b", 1.5), ("c", 2.0)])
    assert c.ratio("a") == pytest.approx(1.2) and c.ratio("b") == pytest.approx(1.5)
    assert c.ratio("unseen") == pytest.approx(1.5)  # the median of 1.2, 1.5, 2.0
    lo, hi = c.error_bar()
    assert lo == pytest.approx(1.1 / 1.2 if 1.1 / 1.2 < 1.2 / 1.5 else 1.2 / 1.5)
    assert hi == pytest.approx(2.0 / 1.5)
    text = "\n".join(c.text())
    assert "checked against the 4 finished runs" in text
    assert "a: 2 runs, estimated 10s, measured 12s: ×1.20" in text
    assert "by the median, ×1.50" in text


def test_calibrate_compares_each_run_with_its_own_estimate():
    cfg = load("agreement").plan(load("agreement").settings("micro"))[0].config
    timed = {shape_of(cfg): STEP_S}
    est = run_seconds(cfg, STEP_S, 100)
    c = calibrate({"agreement": [(cfg, 2 * est, 100, "quick"), (cfg, 0.0, 100, "quick")]},
                  timed, "full")
    assert c.runs == {"agreement": 1}  # a run without a wall time checks nothing
    assert c.ratio("agreement") == pytest.approx(2.0)
    assert "these are quick runs only: full runs are longer" in "\n".join(c.text())
    same = calibrate({"agreement": [(cfg, 2 * est, 100, "full")]}, timed, "full")
    assert "runs only" not in "\n".join(same.text())
    assert calibrate({"agreement": []}, timed) is None


def test_the_estimate_corrects_itself_by_the_runs_it_finds(monkeypatch, tmp_path):
    monkeypatch.setattr(estimate_module, "step_seconds", lambda configs: [STEP_S] * len(configs))
    runner = Runner(tmp_path)
    first = estimate("micro", 3, runner, only=["agreement"])
    assert first.calibration is None and "not checked: no finished run" in first.text()
    exp = load("agreement")
    runner.train(exp.plan(exp.settings("micro")))  # seed 0 finishes, for real
    monkeypatch.setattr(estimate_module, "CHECKED_PROFILES", ("micro",))
    second = estimate("micro", 3, runner, only=["agreement"])
    assert second.runs == {"agreement": 2}  # seeds 1 and 2 are still to train
    cal = second.calibration
    assert cal is not None and cal.runs == {"agreement": 1}
    measured = runner.finished(runner.resolve(exp.plan(exp.settings("micro"))[0]))["wall_s"]
    assert cal.measured["agreement"] == pytest.approx(measured)
    assert second.per_experiment["agreement"] == pytest.approx(
        second.raw["agreement"] * cal.ratio("agreement"))
    text = second.text()
    assert "checked against the 1 finished run of this cache" in text
    assert f"× {cal.ratio('agreement'):.2f})" in text  # the per-experiment line says the factor
    assert "should take about" in text and "between" in text
