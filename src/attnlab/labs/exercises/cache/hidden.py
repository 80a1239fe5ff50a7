"""Grade-only cases of exercise 10: one step on a cache of ``size`` positions, width 8; the
output and both grown caches each a case."""

from __future__ import annotations

from operator import itemgetter

from attnlab.labs.checker import Hidden
from attnlab.labs.exercises.cache.solution import decode_step
from attnlab.labs.rows import drawn


def _draw(rng, size):
    q, k, v = (rng.normal(size=(1, 8)) for _ in range(3))
    ck, cv = rng.normal(size=(size, 8)), rng.normal(size=(size, 8))
    return (q, k, v, ck, cv), f"decode_step(q, k, v, cache_k {ck.shape}, cache_v {cv.shape})"


PARTS = tuple((name, itemgetter(i)) for i, name in enumerate(("output", "cache_k", "cache_v")))
HIDDEN = Hidden(drawn(decode_step, _draw, PARTS), seeds=(1010,), sizes=(9, 40), max_size=256)
