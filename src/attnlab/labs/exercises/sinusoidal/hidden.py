"""Grade-only cases of exercise 7: the table at ``size`` positions, width 16 or 24."""

from __future__ import annotations

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.sinusoidal.solution import sinusoidal
from attnlab.labs.rows import drawn


def _draw(rng, size):
    d = int(rng.choice([16, 24]))
    return (size, d), f"sinusoidal({size}, {d})"


HIDDEN = Hidden(drawn(sinusoidal, _draw), seeds=(1007,), sizes=(9, 100), max_size=1024)
