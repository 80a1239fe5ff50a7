"""Grade-only cases of exercise 3: ``size`` queries over ``size + 3`` keys, with a boolean
padding mask on one draw of two."""

from __future__ import annotations

from operator import itemgetter

from attnlab.labs.checker import Hidden
from attnlab.labs.compare import pair
from attnlab.labs.exercises.attention.solution import attention
from attnlab.labs.rows import drawn


def _draw(rng, size):
    q, k, v = (rng.normal(size=s) for s in ((size, 8), (size + 3, 8), (size + 3, 5)))
    if rng.integers(2):
        mask = rng.random((size, size + 3)) < 0.7
        mask[:, 0] = True  # every query keeps a key
        return (q, k, v, mask), f"attention(q {q.shape}, k {k.shape}, v {v.shape}, mask)"
    return (q, k, v), f"attention(q {q.shape}, k {k.shape}, v {v.shape})"


HIDDEN = Hidden(drawn(attention, _draw, (("output", itemgetter(0)), ("weights", itemgetter(1))),
                      form=pair), seeds=(1003,), sizes=(9, 33), max_size=128)
