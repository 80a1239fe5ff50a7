"""Grade-only cases of exercise 4: ``size`` queries over ``size`` to ``size + 4`` keys."""

from __future__ import annotations

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.masks.solution import causal_mask
from attnlab.labs.rows import drawn


def _draw(rng, size):
    n_key = size + int(rng.integers(5))
    return (size, n_key), f"causal_mask({size}, {n_key})"


HIDDEN = Hidden(drawn(causal_mask, _draw), seeds=(1004,), sizes=(9, 31), max_size=256)
