"""Exercise 13, attention across two sequences: Bahdanau's additive attention, a decoder
state scoring every encoder state of a padded source, returning (context, weights).
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.additive import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=13,
    name="additive",
    function="additive_attention",
    signature="(s, h, w, u, v, src_mask)",
    hints=3,
    solution=solution.additive_attention,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=45,
    chapter="recurrence",
    curriculum="",
)
