"""The mistake probes of exercise 13 (additive): each compares the learner's weights on a
targeted input with what one common mistake gives. The input is square where a mistake
needs it to run: as many sentences as source positions (b == n, so a mask laid on the wrong
axis still broadcasts) and the two state widths equal (d_s == d_h, so swapped maps still
multiply).

Dimension legend: ``b`` batch, ``n`` source positions, ``d_s`` decoder-state width, ``d_h``
encoder-state width, ``a`` attention width.
"""

from __future__ import annotations

import numpy as np

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same
from attnlab.reference.softmax import softmax

_RNG = np.random.default_rng(1300)
_B = _N = 4
_S, _H = _RNG.normal(size=(_B, 3)), _RNG.normal(size=(_B, _N, 3))  # d_s == d_h == 3
_W, _U, _V = _RNG.normal(size=(3, 5)), _RNG.normal(size=(3, 5)), _RNG.normal(size=5)
_MASK = np.array([[True, True, True, True], [True, True, False, False],
                  [True, False, False, False], [True, True, True, False]])  # (b, n), not symmetric


def _weights(mask=_MASK, axis=-1, squash=np.tanh, swap=False) -> np.ndarray:
    """(b, n): the weights one mistake gives (none of them: the right ones)."""
    w, u = (_U, _W) if swap else (_W, _U)
    scores = squash((_S @ w)[:, None, :] + _H @ u) @ _V  # (b, n)
    return softmax(np.where(mask, scores, -np.inf), axis=axis)


def _got(fn: Fn) -> np.ndarray:
    return np.asarray(fn(_S, _H, _W, _U, _V, _MASK)[1])


MISTAKES = (
    Mistake("additive.mistake.mask_ignored",
            lambda fn: same(_got(fn), _weights(mask=np.ones_like(_MASK)))),
    Mistake("additive.mistake.mask_on_queries", lambda fn: same(_got(fn), _weights(mask=_MASK.T))),
    Mistake("additive.mistake.wrong_axis", lambda fn: same(_got(fn), _weights(axis=0))),
    Mistake("additive.mistake.swapped_maps", lambda fn: same(_got(fn), _weights(swap=True))),
    Mistake("additive.mistake.no_tanh", lambda fn: same(_got(fn), _weights(squash=lambda x: x))),
)
