"""The suite is a function of its inputs: ``reproduce(runner, out, profile, ...)`` returns a
``SuiteOutcome``, no code outside ``suite/pipeline.py`` assigns into a ``Suite``, and one
``attnlab reproduce`` resolves each experiment's settings once and plans it once."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections import Counter
from pathlib import Path

import attnlab
from attnlab import suite
from attnlab.cli.main import main
from attnlab.kit import registry
from attnlab.kit.registry import Experiment
from attnlab.running.runner import Runner

SRC = Path(attnlab.__file__).parent


def test_reproduce_takes_the_runner_first_and_returns_an_outcome():
    params = list(inspect.signature(suite.reproduce).parameters)
    assert params[:3] == ["runner", "out", "profile"]
    assert "workers" not in params and "device" not in params  # the runner's, not its own
    assert inspect.signature(suite.reproduce).return_annotation in ("SuiteOutcome",
                                                                   suite.SuiteOutcome)


def _assigned_into_a_suite(tree: ast.AST) -> list[int]:
    """Lines where ``suite.x = ...``, ``suite.x[k] = ...`` or ``suite._x... = ...`` appear."""
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "suite":
                lines.append(node.lineno)
    return lines


def test_no_code_outside_the_suite_assigns_into_one():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "suite" / "pipeline.py":
            continue  # Suite.of builds its own suite
        lines = _assigned_into_a_suite(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[str(path.relative_to(SRC))] = lines
    assert found == {}


def test_the_check_sees_an_assignment():
    tree = ast.parse("suite.envelopes = {}\nsuite.experiments['x'] = 1\nother.y = 2\n")
    assert _assigned_into_a_suite(tree) == [1, 2]


def counting(monkeypatch) -> Counter:
    """Count every ``Experiment.settings`` (by experiment and profile), every experiment's
    ``plan`` and every ``Runner.resolve`` (by run label) from now on."""
    calls: Counter = Counter()
    settings, load, resolve = Experiment.settings, registry.load, Runner.resolve

    def counted_settings(self, profile, seeds=None):
        calls["settings", self.name, profile] += 1
        return settings(self, profile, seeds)

    def counted_load(name):
        exp = load(name)

        def plan(chosen):
            calls["plan", name] += 1
            return exp.plan(chosen)

        return dataclasses.replace(exp, plan=plan)

    def counted_resolve(self, spec):
        calls["resolve", spec.label] += 1
        return resolve(self, spec)

    monkeypatch.setattr(Experiment, "settings", counted_settings)
    monkeypatch.setattr(registry, "load", counted_load)
    monkeypatch.setattr(Runner, "resolve", counted_resolve)
    return calls


def test_reproduce_resolves_settings_and_plans_once(tmp_path, monkeypatch):
    """``attnlab reproduce`` counts the runs it asks to confirm, trains and reports from one
    planning: each selected experiment's settings resolved once, its plan made once, and
    each planned run resolved (and keyed) once. Before, the confirmation made a suite of its
    own: settings three times, plans and resolutions twice."""
    calls = counting(monkeypatch)
    code = main(["reproduce", "--profile", "micro", "--only", "params,agreement",
                 "--work", str(tmp_path / "work"), "--out", str(tmp_path / "out"),
                 "--jobs", "1"])
    assert code == 0
    assert {k: n for k, n in calls.items() if k[0] != "resolve"} == {
        ("settings", "agreement", "micro"): 1, ("settings", "params", "micro"): 1,
        ("plan", "agreement"): 1, ("plan", "params"): 1}
    resolved = {k[1]: n for k, n in calls.items() if k[0] == "resolve"}
    assert "agreement seed 0" in resolved and set(resolved.values()) == {1}


def test_the_estimate_reads_the_same_one_plan(tmp_path, monkeypatch):
    """``--estimate`` plans once too (its check against finished runs plans the quick and
    full profiles, which are other settings)."""
    calls = counting(monkeypatch)
    code = main(["reproduce", "--profile", "micro", "--only", "agreement", "--estimate",
                 "--extra-seeds", "0", "--work", str(tmp_path / "work"),
                 "--out", str(tmp_path / "out")])
    assert code == 0
    assert calls["settings", "agreement", "micro"] == 1
    assert calls["plan", "agreement"] == 1 + 2  # micro; quick and full for the check
