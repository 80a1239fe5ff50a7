"""Exercise 7: the sinusoidal table, with the relative property checked.

Dimension legend: ``n`` positions, ``d`` width. Conventions are ``attnlab.reference``'s:
interleaved pairs (2i, 2i+1), frequency ``10000^(-2i/d)``, positions from 0.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.sinusoidal import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=7,
    name="sinusoidal",
    function="sinusoidal",
    signature="(n, d)",
    hints=3,
    solution=solution.sinusoidal,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=30,
    chapter="positions",
    curriculum="",
)
