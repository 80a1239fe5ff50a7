"""Exercise 1, the curriculum's first: a stable softmax along any axis, a row of all -inf
giving zeros.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.softmax import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=1,
    name="softmax",
    function="softmax",
    signature="(x, axis=-1)",
    hints=3,
    solution=solution.softmax,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=30,
    chapter="scores",
    curriculum="softmax",
)
