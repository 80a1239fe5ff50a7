"""Grade-only cases of exercise 9: ``size`` queries over ``size + 3`` keys (beyond the 8 keys a
gradient wrong only on long rows gets right), dq, dk and dv each a case."""

from __future__ import annotations

from operator import itemgetter

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.backward.solution import attention_backward
from attnlab.labs.rows import drawn


def _draw(rng, size):
    shapes = ((size, 8), (size + 3, 8), (size + 3, 4), (size, 4))  # q, k, v, dout
    q, k, v, dout = (rng.normal(size=s) for s in shapes)
    return (q, k, v, dout), f"attention_backward(q {q.shape}, k {k.shape}, v {v.shape}, dout)"


PARTS = tuple((name, itemgetter(i)) for i, name in enumerate(("dq", "dk", "dv")))
HIDDEN = Hidden(drawn(attention_backward, _draw, PARTS), seeds=(1009,), sizes=(12, 29),
                max_size=64)
