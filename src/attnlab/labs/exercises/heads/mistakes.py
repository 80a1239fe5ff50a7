"""The mistake probes of exercise 5 (heads): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

import math

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.compare import same
from attnlab.labs.exercises.heads.cases import _mha, _weights

_R = np.random.default_rng(50)
_X = _R.normal(size=(2, 4, 6))
_W = _weights(_R, 6)
_H = 2


def _heads(w, split="block"):
    y = _X @ w.T  # (b, n, d)
    if split == "block":
        return y.reshape(2, 4, _H, 3).transpose(0, 2, 1, 3)  # (b, h, n, d_k)
    return y.reshape(2, 4, 3, _H).transpose(0, 3, 1, 2)  # head h owns columns h, h + H, ...


def _per_head(split="block", factor=None, axis=-1, shared=False):
    """Each head's output, (b, h, n, d_k): as it must be, or with one mistake made."""
    factor = 1 / math.sqrt(3) if factor is None else factor
    w_q, w_k, w_v, _ = _W
    q, k, v = _heads(w_q, split), _heads(w_k, split), _heads(w_v, split)
    if shared:  # head 0's K and V for every head
        k, v = k[:, :1], v[:, :1]  # (b, 1, n, d_k), broadcast over the heads
    return ref.softmax(q @ k.transpose(0, 1, 3, 2) * factor, axis) @ v


def _merged(heads):
    return heads.transpose(0, 2, 1, 3).reshape(2, 4, 6)  # (b, n, h * d_k)


def _run(fn: Fn) -> np.ndarray:
    return np.asarray(fn(_X, *_W, _H))


MISTAKES = (
    Mistake("heads.mistake.no_w_o", lambda fn: same(_run(fn), _merged(_per_head()))),
    Mistake(
        "heads.mistake.merge_order",
        lambda fn: same(_run(fn), _per_head().reshape(2, 4, 6) @ _W[3].T),
    ),
    Mistake(
        "heads.mistake.interleaved_split",
        lambda fn: (
            same(_run(fn), _merged(_per_head("interleaved")) @ _W[3].T)
            or same(
                _run(fn), _per_head("interleaved").transpose(0, 2, 3, 1).reshape(2, 4, 6) @ _W[3].T
            )
        ),
    ),
    Mistake(
        "heads.mistake.transposed_weights",
        lambda fn: (
            same(_run(fn), _mha(_X, *(w.T for w in _W), _H))
            or same(_run(fn), _mha(_X, _W[0].T, _W[1].T, _W[2].T, _W[3], _H))
        ),
    ),
    Mistake(
        "heads.mistake.scale_d_model",
        lambda fn: same(_run(fn), _merged(_per_head(factor=1 / math.sqrt(6))) @ _W[3].T),
    ),
    Mistake(  # scores (b, h, n, n): axis 1 is the heads
        "heads.mistake.softmax_heads",
        lambda fn: same(_run(fn), _merged(_per_head(axis=1)) @ _W[3].T),
    ),
    Mistake(
        "heads.mistake.shared_kv",
        lambda fn: same(_run(fn), _merged(_per_head(shared=True)) @ _W[3].T),
    ),
)
