"""The suite is a function of its inputs: ``reproduce(runner, out, profile, ...)`` returns a
``SuiteOutcome``, and no code outside ``suite/pipeline.py`` assigns into a ``Suite``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import attnlab
from attnlab import suite

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
