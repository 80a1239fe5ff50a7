"""Exercise 12: an induction head by hand. The learner sets every weight of a two-block,
attention-only model so that a block-1 head attends to the previous token and a block-2 head
to the token after the earlier copy of the present one; the checker runs the model here, on
the learner's returned weights, and measures it with ``attnlab.interp``'s head scores and the
loss on the repeat (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits";
Olsson et al. 2022). ``pattern`` draws a learner's two heads in the explorer.

Dimension legend: ``r`` probe rows, ``t`` query positions, ``s`` key positions, ``d`` the
residual width and ``e`` a head's width (both the learner's choice), ``V`` the vocabulary,
``n`` the context. One head per block, no layer norm, no MLP, no biases. Left out: learning
the weights (the ``induction`` experiment trains them), several heads per block, the copying
(OV) score.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.induction import cases, mistakes, solution
from attnlab.labs.exercises.induction.measure import pattern

EXERCISE = Exercise(
    number=12,
    name="induction",
    function="induction_weights",
    signature="(n_vocab, n_ctx)",
    hints=3,
    solution=solution.induction_weights,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    minutes=60,
    chapter="induction",
    curriculum="exit",
)

__all__ = ["EXERCISE", "pattern"]
