"""Grade-only cases of exercise 1: ``size`` rows of random logits, along either axis."""

from __future__ import annotations

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.softmax.solution import softmax
from attnlab.labs.rows import drawn


def _draw(rng, size):
    x = rng.normal(size=(size, size + 3)) * 4
    axis = int(rng.integers(2)) - 1  # -1 or 0
    return (x, axis), f"softmax(x, axis={axis}), x of shape {x.shape}"


HIDDEN = Hidden(drawn(softmax, _draw), seeds=(1001,), sizes=(9, 40), max_size=256)
