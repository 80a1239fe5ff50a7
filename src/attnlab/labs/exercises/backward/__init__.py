"""Exercise 9: the backward of attention by hand.

Dimension legend: ``i`` query positions, ``j`` key positions, ``d_k`` q/k width, ``d_v`` value
width. One head, no batch, no mask: the shapes a learner can follow.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.backward import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=9,
    name="backward",
    function="attention_backward",
    signature="(q, k, v, dout)",
    hints=3,
    solution=solution.attention_backward,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=60,
    chapter="training",
    curriculum="",
)
