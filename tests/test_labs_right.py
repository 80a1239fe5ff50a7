"""Right answers pass, written the ways learners write them (issue 51): every exercise's
reference solution with a learner's extras around it (prints with flush, 5 KB printed per call,
``sys.stdout.flush()`` at import, a self-test with ``numpy.testing``, ``matplotlib.pyplot``
imported, ``numpy.f2py`` imported, asserts, a helper, a module constant), and hand-written
variants with Python loops and float32 inputs. A checker that fails a right answer costs a
learner an evening and a teacher their trust."""

from __future__ import annotations

import re
import textwrap

import pytest
from test_labs_hostile import reaper, survivors  # noqa: F401 - the fixture, by name

from attnlab.labs import EXERCISES, get
from attnlab.labs.notebook import solution_file
from attnlab.labs.sandbox import isolated

HEAD = """\
import sys
import numpy as np
import numpy.testing as npt
import matplotlib.pyplot as plt
import numpy.f2py  # noqa: F401

print("my lab, loading", flush=True)
sys.stdout.flush()
sys.stderr.write("a warning of my own\\n")
CHATTY = True  # a module constant
"""

WRAPPER = """

_mine = {function}  # my first version, kept as a helper


def {function}(*args, **kwargs):
    assert len(args) + len(kwargs) >= 1, "called with nothing"
    if CHATTY:
        print("called with", len(args), "arguments", "." * 5000, flush=True)
    out = _mine(*args, **kwargs)
    print(type(out).__name__, file=sys.stderr)
    return out
"""

LOOPS = {  # exercise -> a right answer with Python loops, float32 kept as float32
    "softmax": """
        def _row(row):
            top = max(row) if len(row) else 0.0
            top = top if np.isfinite(top) else 0.0
            e = [np.exp(v - top) for v in row]
            total = sum(e)
            return [v / total if total > 0 else 0.0 * v for v in e]


        def softmax(x, axis=-1):
            x = np.asarray(x)
            if x.dtype.kind != "f":
                x = x.astype(np.float64)
            moved = np.moveaxis(x, axis, -1)
            out = np.empty_like(moved)
            for index in np.ndindex(*moved.shape[:-1]):
                out[index] = _row(moved[index].astype(np.float64))
            npt.assert_equal(out.shape, moved.shape)
            return np.moveaxis(out, -1, axis)
    """,
    "mean": """
        def averaging_matrix(n):
            a = np.zeros((n, n))
            for i in range(n):
                for j in range(i + 1):
                    a[i, j] = 1.0 / (i + 1)
            return a
    """,
    "masks": """
        def causal_mask(n_query, n_key, dtype=np.float64):
            m = np.zeros((n_query, n_key), dtype=dtype)
            offset = n_key - n_query
            for i in range(n_query):
                for j in range(n_key):
                    if j > i + offset:
                        m[i, j] = -np.inf
            return m
    """,
}


def learner_style(ex) -> str:
    """The reference solution's text inside a learner's file: the extras around it, a
    self-test at import (the function called on its exercise's first hand case)."""
    body = solution_file(ex)
    body = re.sub(r"^# attnlab-lang: \w+\n", "", body)
    return HEAD + "\n\n" + body + WRAPPER.format(function=ex.function)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_a_right_answer_written_as_a_learner_writes_it_passes(ex, tmp_path, reaper):  # noqa: F811
    path = tmp_path / f"{ex.name}.py"
    path.write_text(learner_style(ex))
    result = isolated(ex, path, "en")
    assert result.passed, str(result)
    assert survivors() == []


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_right_answer_with_python_loops_passes(name, tmp_path, reaper):  # noqa: F811
    ex = get(name)
    path = tmp_path / f"{name}.py"
    selftest = {"softmax": "npt.assert_allclose(softmax(np.zeros(2, np.float32)), [0.5, 0.5])",
                "mean": "assert averaging_matrix(3)[2, 0] == 1 / 3",
                "masks": "assert causal_mask(2, 3)[0, 2] == -np.inf"}[name]
    path.write_text(HEAD + "\n\n" + textwrap.dedent(LOOPS[name]).strip("\n") + "\n\n\n"
                    + selftest + "\n")
    result = isolated(ex, path, "en")
    assert result.passed, str(result)
