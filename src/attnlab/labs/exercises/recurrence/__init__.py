"""Exercise 11: backpropagation through time by hand in an Elman RNN, the gradient's norm
against the distance k fitted as a geometric decay, and the dependent steps counted against
attention's: the curriculum's exit question ("why did attention replace RNNs?") answered by
the learner's own numbers.

Dimension legend: ``T`` positions, ``d`` state width, ``d_in`` input width. One sequence, no
batch, no bias, the loss ``dout · h_{T-1}`` on the last state only (Elman 1990; the vanishing
gradient: Bengio, Simard & Frasconi 1994; Pascanu, Mikolov & Bengio 2013). Left out: LSTMs and
gates (the ``recurrence`` experiment trains one), gradients of the weights, truncated BPTT.
"""

from __future__ import annotations

from attnlab.labs.checker import Exercise
from attnlab.labs.exercises.recurrence import cases, mistakes, solution

EXERCISE = Exercise(
    number=11,
    name="recurrence",
    function="rnn_backward",
    signature="(w_h, w_x, x, dout)",
    hints=3,
    solution=solution.rnn_backward,
    cases=cases.build,
    mistakes=mistakes.MISTAKES,
    minutes=60,
    chapter="recurrence",
    curriculum="exit",
)
