"""Exercise 6: why the scores are divided by √d_k, measured by sampling: the variance of q·k
and the share of rows the softmax freezes.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.scale import cases, mistakes, solution

EXERCISE = Exercise(
    number=6,
    name="scale",
    function="score_statistics",
    signature="(d, scaled, rng, rows=1000, keys=64)",
    hints=3,
    solution=solution.score_statistics,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    minutes=30,
    chapter="scale",
    curriculum="",
)
