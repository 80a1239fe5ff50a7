"""Exercise 8: RoPE, with the relative property checked.

Dimension legend: ``n`` positions, ``d`` width. Conventions are ``attnlab.reference``'s:
interleaved pairs (2i, 2i+1), frequency ``10000^(-2i/d)``, positions from 0.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.rope import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=8,
    name="rope",
    function="rope",
    signature="(x, positions)",
    hints=3,
    solution=solution.rope,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=40,
    chapter="positions",
    curriculum="",
)
