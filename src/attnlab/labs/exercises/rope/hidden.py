"""Grade-only cases of exercise 8: ``size`` rows of width 8 at positions from a random start."""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.rope.solution import rope
from attnlab.labs.rows import drawn


def _draw(rng, size):
    x, start = rng.normal(size=(size, 8)), int(rng.integers(50))
    return (x, np.arange(start, start + size)), f"rope(x {x.shape}, positions {start}..)"


HIDDEN = Hidden(drawn(rope, _draw), seeds=(1008,), sizes=(9, 40), max_size=512)
