"""Exercise 2: the mean of the past as attention, the plainest weights a causal row can have.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.mean import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=2,
    name="mean",
    function="averaging_matrix",
    signature="(n)",
    hints=3,
    solution=solution.averaging_matrix,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=20,
    chapter="mean",
    curriculum="attention",
)
