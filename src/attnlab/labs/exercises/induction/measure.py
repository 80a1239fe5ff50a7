"""The model the checker of exercise 12 runs on a learner's weights: the weights checked, the
forward pass, the probe rows, and the head scores and loss measured on them. ``pattern``
draws the two heads in the explorer."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Fail

NAMES = ("E", "P", "Q1", "K1", "V1", "O1", "Q2", "K2", "V2", "O2", "U")
GOOD_SCORE = 0.9  # a head that does its role scores 1; chance is about 1/(t+1)
GOOD_LOSS = 0.5  # nats on the repeat; chance is ln V (2.3 at V = 10)
HALF_ROWS = 8  # probe rows, as attnlab.interp's standard probe


class BadWeights(Exception):
    """The returned weights cannot make a model: carries the case's :class:`Fail`."""

    def __init__(self, fail: Fail) -> None:
        super().__init__(fail.key)
        self.fail = fail


def _array(out: dict, name: str) -> np.ndarray:
    try:
        a = np.asarray(out[name], dtype=np.float64)
    except (TypeError, ValueError):
        raise BadWeights(Fail("induction.fail.not_array", {"name": name})) from None
    if a.ndim != 2:
        raise BadWeights(Fail("induction.fail.shape", {"name": name, "got": a.shape,
                                                       "want": "2 axes"}))
    if not np.isfinite(a).all():
        raise BadWeights(Fail("induction.fail.not_finite", {"name": name}))
    return a


def weights_of(out: Any, n_vocab: int, n_ctx: int) -> dict[str, np.ndarray]:
    """The learner's dict checked into float64 arrays of agreeing shapes, else BadWeights."""
    if not isinstance(out, dict):
        raise BadWeights(Fail("induction.fail.not_dict", {"kind": type(out).__name__}))
    missing = [name for name in NAMES if name not in out]
    if missing:
        raise BadWeights(Fail("induction.fail.missing", {"names": ", ".join(missing)}))
    w = {name: _array(out, name) for name in NAMES}
    d = w["E"].shape[1]
    want = {"E": (n_vocab, d), "P": (n_ctx, d), "U": (d, n_vocab)}
    for b in "12":
        e, f = w[f"Q{b}"].shape[1], w[f"V{b}"].shape[1]
        want |= {f"Q{b}": (d, e), f"K{b}": (d, e), f"V{b}": (d, f), f"O{b}": (f, d)}
    for name in NAMES:
        if w[name].shape != want[name]:
            raise BadWeights(Fail("induction.fail.shape", {"name": name, "got": w[name].shape,
                                                           "want": want[name]}))
    return w


def forward(w: dict[str, np.ndarray], ids: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Logits (r, t, V) and each block's attention weights (r, t, s) of the model on ``ids``
    (r, t): ``x = E[ids] + P[:t]``, then per block ``x += softmax(causal(x Q (x K)ᵀ / √e))
    x V O``, then ``x U``."""
    ids = np.atleast_2d(np.asarray(ids))
    t = ids.shape[1]
    x = w["E"][ids] + w["P"][:t]  # (r, t, d)
    mask = np.where(ref.causal_mask(t, t), 0.0, -np.inf)  # (t, s): key s hidden after t
    pattern = []
    for b in "12":
        q, k = x @ w[f"Q{b}"], x @ w[f"K{b}"]  # (r, t, e)
        a = ref.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + mask)  # (r, t, s)
        x = x + a @ (x @ w[f"V{b}"]) @ w[f"O{b}"]
        pattern.append(a)
    return x @ w["U"], pattern


def pattern(weights: dict[str, Any], ids: Sequence[int]) -> np.ndarray:
    """The two heads' weights (2, 1, t, t) on one sequence, to draw in the explorer::

        import attnlab.explorer as ax
        ax.show(weights=pattern(w, ids), tokens=[str(i) for i in ids])
    """
    ids = np.asarray(ids)
    w = weights_of(weights, len(weights["E"]), max(len(weights["P"]), len(ids)))
    return np.stack(forward(w, ids[None])[1])  # (2 blocks, 1 head, t, t)


@cache
def probe(n_vocab: int, n_ctx: int, seed: int) -> np.ndarray:
    """(r, 2·m) rows ``x x`` of m = n_ctx // 2 distinct random tokens (interp's probe)."""
    from attnlab.data.repeated import repeated_probe

    return repeated_probe(n_vocab, n_ctx // 2, n=HALF_ROWS, seed=seed)


def measures(w: dict[str, np.ndarray], ids: np.ndarray) -> dict[str, Any]:
    """Scores of both heads (attnlab.interp.scores_of_weights) and the loss on the repeat."""
    from attnlab.interp.scores import scores_of_weights

    m = ids.shape[1] // 2
    logits, (a1, a2) = forward(w, ids)
    scores = scores_of_weights([a1[:, None], a2[:, None]], m)  # name -> (2 blocks, 1 head)
    t = np.arange(m, 2 * m - 1)  # the repeat's positions that have a next token
    logp = logits[:, t] - logits[:, t].max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))  # (r, m - 1, V)
    target = ids[:, t + 1]
    loss = -np.take_along_axis(logp, target[..., None], -1).mean()
    s = np.arange(1, ids.shape[1])
    return {**{f"{k}{b + 1}": float(v[b, 0]) for k, v in scores.items() for b in range(2)},
            "self1": float(a1[:, s, s].mean()), "loss": float(loss),
            "argmax1": float((a1[:, s].argmax(-1) == s - 1).mean()),
            "argmax2": float((a2[:, t].argmax(-1) == t - m + 1).mean()),
            "echo": float((logits[:, t].argmax(-1) == ids[:, t]).mean())}
