"""Exercise 10: one decoding step with a KV cache.

Dimension legend: ``t`` cached positions, ``d`` q/k width, ``d_v`` value width. One head, no
batch, no mask: the shapes a learner can follow.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.cache import cases, hidden, mistakes, solution

EXERCISE = Exercise(
    number=10,
    name="cache",
    function="decode_step",
    signature="(q_new, k_new, v_new, cache_k, cache_v)",
    hints=3,
    solution=solution.decode_step,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    hidden=hidden.HIDDEN,
    minutes=30,
    chapter="cost",
    curriculum="",
)
