"""Exercise 5: multi-head attention.

Dimension legend: ``b`` batch, ``h`` heads, ``n`` positions, ``d`` model width, ``d_k`` head
width. Weights use the ``nn.Linear`` layout, ``y = x @ W.T``, as ``attnlab.reference`` does.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.heads import cases, describers, hidden, mistakes, solution

EXERCISE = Exercise(
    number=5,
    name="heads",
    function="multi_head_attention",
    signature="(x, w_q, w_k, w_v, w_o, n_head)",
    hints=3,
    solution=solution.multi_head_attention,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    describers=describers.DESCRIBERS,
    hidden=hidden.HIDDEN,
    minutes=45,
    chapter="heads",
    curriculum="heads",
)
