"""Exercise 4, the curriculum's: an additive causal mask, -inf and not -1e9, in any dtype.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.describe import MASKS
from attnlab.labs.exercises.masks import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=4,
    name="masks",
    function="causal_mask",
    signature="(n_query, n_key, dtype=np.float64)",
    hints=3,
    solution=solution.causal_mask,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    describers=MASKS,
    hidden=hidden.HIDDEN,
    minutes=30,
    chapter="masks",
    curriculum="masks",
)
