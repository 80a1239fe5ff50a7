"""Grade-only cases of exercise 2: the averaging matrix at ``size`` positions."""

from __future__ import annotations

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.mean.solution import averaging_matrix
from attnlab.labs.rows import drawn


def _draw(rng, size):
    return (size,), f"averaging_matrix({size})"


HIDDEN = Hidden(drawn(averaging_matrix, _draw), seeds=(1002,), sizes=(13, 33), max_size=256)
