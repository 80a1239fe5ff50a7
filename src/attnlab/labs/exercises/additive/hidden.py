"""Grade-only cases of exercise 13: three sentences over ``size`` source positions, each
padded after a random length, with widths d_s 6, d_h 4 and attention width 8."""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from attnlab.labs.checker import Hidden
from attnlab.labs.compare import pair
from attnlab.labs.exercises.additive.solution import additive_attention
from attnlab.labs.rows import drawn


def _draw(rng, size):
    s, h = rng.normal(size=(3, 6)), rng.normal(size=(3, size, 4))
    w, u, v = rng.normal(size=(6, 8)), rng.normal(size=(4, 8)), rng.normal(size=8)
    lengths = rng.integers(1, size + 1, size=3)
    src_mask = np.arange(size)[None, :] < lengths[:, None]  # (b, n): real words, then padding
    return ((s, h, w, u, v, src_mask),
            f"additive_attention(s {s.shape}, h {h.shape}, w {w.shape}, u {u.shape}, "
            f"v {v.shape}, src_mask {src_mask.shape}), lengths {lengths.tolist()}")


HIDDEN = Hidden(drawn(additive_attention, _draw,
                      (("context", itemgetter(0)), ("weights", itemgetter(1))), form=pair),
                seeds=(1013,), sizes=(9, 33), max_size=128)
