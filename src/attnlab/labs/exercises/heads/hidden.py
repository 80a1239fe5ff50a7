"""Grade-only cases of exercise 5: a batch of two sequences of ``size`` positions, width 8,
two or four heads."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.heads.solution import multi_head_attention
from attnlab.labs.rows import drawn


def _draw(rng, size):
    x = rng.normal(size=(2, size, 8))
    w = tuple(rng.normal(size=(8, 8)) / np.sqrt(8) for _ in range(4))
    n_head = int(rng.choice([2, 4]))
    return (x, *w, n_head), f"multi_head_attention(x {x.shape}, ..., n_head={n_head})"


HIDDEN = Hidden(drawn(multi_head_attention, _draw), seeds=(1005,), sizes=(9, 24), max_size=64)
