"""Exercise 3, the curriculum's: scaled dot-product attention, returning (output, weights),
with a boolean or additive mask.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.attention import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=3,
    name="attention",
    function="attention",
    signature="(q, k, v, mask=None)",
    hints=3,
    solution=solution.attention,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=45,
    chapter="scores",
    curriculum="attention",
)
