"""Exercises 5-6: multi-head attention, and why the scores are divided by √d_k.

Dimension legend: ``b`` batch, ``h`` heads, ``n`` positions, ``d`` model width, ``d_k`` head
width. Weights use the ``nn.Linear`` layout, ``y = x @ W.T``, as ``attnlab.reference`` does.
"""

from __future__ import annotations

import itertools
import math
import weakref
from functools import cache

import numpy as np

from attnlab import reference as ref
from attnlab.labs import solutions
from attnlab.labs.compare import close, same
from attnlab.labs.core import Case, Exercise, Fail, Fn, Mistake
from attnlab.labs.describe import Describer

# -- 5. multi-head attention -----------------------------------------------------------------


def _weights(rng: np.random.Generator, d: int) -> tuple[np.ndarray, ...]:
    return tuple(rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4))


def _mha(x, w_q, w_k, w_v, w_o, h):
    return ref.multi_head_attention(x, w_q, w_k, w_v, w_o, None, h)[0]


@cache
def _random_inputs() -> tuple[tuple[np.ndarray, tuple[np.ndarray, ...], int], ...]:
    """The random cases' ``(x, (w_q, w_k, w_v, w_o), n_head)``, drawn from seed 5."""
    rng = np.random.default_rng(5)
    drawn = []
    for shape, h in (((1, 3, 4), 2), ((2, 5, 8), 4), ((2, 4, 6), 3)):
        drawn.append((rng.normal(size=shape), _weights(rng, shape[-1]), h))
    return tuple(drawn)


@cache
def _mha_cases() -> list[Case]:
    rng = np.random.default_rng(6)
    x = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    eye = np.eye(2)
    w1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # logistic of the score gap 1/√2
    by_hand = np.array([[[w1, 1 - w1], [1 - w1, w1]]])
    cases = [
        Case(
            "hand",
            "hand",
            lambda fn: close(fn(x, eye, eye, eye, eye, 1), by_hand),
            "multi_head_attention(x=[[[1, 0], [0, 1]]], I, I, I, I, n_head=1)",
            4,
        )
    ]
    for xs, ws, h in _random_inputs():
        shape = xs.shape
        cases.append(
            Case(
                "random",
                "random",
                lambda fn, xs=xs, ws=ws, h=h: close(fn(xs, *ws, h), _mha(xs, *ws, h)),
                f"x {shape}, n_head={h}",
                xs.size,
                {"shape": shape, "h": h},
            )
        )
    xs, ws = rng.normal(size=(2, 5, 6)), _weights(rng, 6)
    w_q, w_k, w_v, w_o = ws
    one = ref.scaled_dot_product_attention(xs @ w_q.T, xs @ w_k.T, xs @ w_v.T)[0] @ w_o.T
    perm = rng.permutation(5)
    cases += [
        Case(
            "one_head",
            "property",
            lambda fn: close(fn(xs, *ws, 1), one),
            "x (2, 5, 6), n_head=1",
            60,
        ),
        Case(
            "width_one",
            "property",
            lambda fn: close(fn(xs, *ws, 6), _mha(xs, *ws, 6)),
            "x (2, 5, 6), n_head=6 (d_k = 1)",
            60,
        ),
        Case(
            "permute",
            "property",
            lambda fn: close(fn(xs[:, perm], *ws, 2), fn(xs, *ws, 2)[:, perm]),
            "multi_head_attention(x[:, perm], ...), x (2, 5, 6), n_head=2",
            60,
        ),
    ]
    return cases


_R = np.random.default_rng(50)
_X = _R.normal(size=(2, 4, 6))
_W = _weights(_R, 6)
_H = 2


def _heads(w, split="block"):
    y = _X @ w.T  # (b, n, d)
    if split == "block":
        return y.reshape(2, 4, _H, 3).transpose(0, 2, 1, 3)  # (b, h, n, d_k)
    return y.reshape(2, 4, 3, _H).transpose(0, 3, 1, 2)  # head h owns columns h, h + H, ...


def _per_head(split="block", factor=None):
    factor = 1 / math.sqrt(3) if factor is None else factor
    w_q, w_k, w_v, _ = _W
    q, k, v = _heads(w_q, split), _heads(w_k, split), _heads(w_v, split)
    return ref.softmax(q @ k.transpose(0, 1, 3, 2) * factor) @ v  # (b, h, n, d_k)


def _merged(heads):
    return heads.transpose(0, 2, 1, 3).reshape(2, 4, 6)  # (b, n, h * d_k)


def _run(fn: Fn) -> np.ndarray:
    return np.asarray(fn(_X, *_W, _H))


MHA_MISTAKES = (
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
)


def _split(x: np.ndarray, w: np.ndarray, h: int, straight: bool) -> np.ndarray:
    b, n, d = x.shape
    y = x @ w.T  # (b, n, d)
    if straight:  # reshaped as if the heads came first: heads and positions mixed
        return y.reshape(b, h, n, d // h)
    return y.reshape(b, n, h, d // h).transpose(0, 2, 1, 3)  # (b, h, n, d_k)


def _head_outputs(x, ws, h, straight=False) -> np.ndarray:
    q, k, v = (_split(x, w, h, straight) for w in ws[:3])
    return ref.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(x.shape[-1] // h)) @ v


def _heads_of(want: np.ndarray):
    """The random case whose expected output ``want`` is, as ``(x, ws, h)``; None if none."""
    return next(((x, ws, h) for x, ws, h in _random_inputs() if same(want, _mha(x, *ws, h))), None)


def _heads_order(got: np.ndarray, want: np.ndarray) -> dict | None:
    """The heads' outputs are right but concatenated in another order."""
    if (found := _heads_of(want)) is None:
        return None
    x, ws, h = found
    heads = _head_outputs(x, ws, h)  # (b, h, n, d_k)
    for order in itertools.permutations(range(h)):
        if list(order) != list(range(h)) and same(got, _merged_as(heads[:, order], x) @ ws[3].T):
            return {"order": ", ".join(map(str, order)), "last": h - 1}
    return None


def _heads_positions(got: np.ndarray, want: np.ndarray) -> dict | None:
    """q, k and v were reshaped straight from (b, n, d) to (b, H, n, d_k)."""
    if (found := _heads_of(want)) is None:
        return None
    x, ws, h = found
    heads = _head_outputs(x, ws, h, straight=True)  # (b, h, n, d_k), positions mixed in
    merges = (_merged_as(heads, x), heads.reshape(x.shape))  # transposed back, or straight
    return {"h": h} if any(same(got, m @ ws[3].T) for m in merges) else None


def _merged_as(heads: np.ndarray, x: np.ndarray) -> np.ndarray:
    return heads.transpose(0, 2, 1, 3).reshape(x.shape)  # (b, n, h * d_k)


MHA_DESCRIBERS = (
    Describer("describe.heads_order", _heads_order),
    Describer("describe.heads_positions", _heads_positions),
)


# -- 6. why divide by √d_k -------------------------------------------------------------------

ROWS, KEYS, SIGMAS = 400, 32, 5.0  # the checker's sample, and its tolerance in standard errors


def variance_tolerance(d: int, scaled: bool, rows: int = ROWS, keys: int = KEYS) -> float:
    """``SIGMAS`` standard errors of the sample variance of ``rows · keys`` scores q·k.

    Var(q·k) = d; E[(q·k)⁴] = 3d² + 6d, so one score's square has variance 2d² + 6d; two
    scores sharing a query have squares with covariance 2d. Over rows of ``keys`` scores
    sharing one query: SE = d·√((2 + (6 + 2(keys − 1))/d) / (rows·keys)); divided by √d,
    everything scales by 1/d.
    """
    se = d * math.sqrt((2 + (6 + 2 * (keys - 1)) / d) / (rows * keys))
    return SIGMAS * (se / d if scaled else se)


def frozen_tolerance(p: float, rows: int = ROWS) -> float:
    """``SIGMAS`` standard errors of the difference of two shares measured on ``rows`` rows each."""
    return SIGMAS * math.sqrt(2 * p * (1 - p) / rows) + 0.02


_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn -> its answers so far


def _stats(fn: Fn, d: int, scaled: bool, seed: int = 0) -> tuple[float, float]:
    """The learner's ``(variance, frozen)``, computed once per function and arguments (a
    simulation takes a tenth of a second, and the cases and probes ask again and again)."""
    seen = _SEEN.setdefault(fn, {})
    if (d, scaled, seed) not in seen:
        out = fn(d, scaled, np.random.default_rng(seed), rows=ROWS, keys=KEYS)
        variance, frozen = out  # a pair, or this raises and the case says so
        seen[d, scaled, seed] = float(variance), float(frozen)
    return seen[d, scaled, seed]


@cache
def _scale_cases() -> list[Case]:
    cases = []
    for d, scaled in ((1, False), (4, False), (64, False), (256, False), (64, True), (256, True)):
        want = 1.0 if scaled else float(d)
        tol = variance_tolerance(d, scaled)

        def variance(fn, d=d, scaled=scaled, want=want, tol=tol):
            got = _stats(fn, d, scaled)[0]
            if abs(got - want) <= tol:
                return None
            return Fail("fail.sampled", {"got": got, "want": want, "tol": tol}, [got], [want])

        cases.append(
            Case(
                "variance",
                "hand" if d == 1 else "random",
                variance,
                f"score_statistics({d}, scaled={scaled}, rng, rows={ROWS}, keys={KEYS})",
                d,
                {"d": d, "scaled": scaled, "want": want, "tol": tol},
            )
        )
    for d, scaled in ((256, False), (256, True), (16, False)):
        want = solutions.score_statistics(d, scaled, np.random.default_rng(99), ROWS, KEYS)[1]
        tol = frozen_tolerance(want)

        def frozen(fn, d=d, scaled=scaled, want=want, tol=tol):
            got = _stats(fn, d, scaled)[1]
            if abs(got - want) <= tol:
                return None
            return Fail("fail.sampled", {"got": got, "want": want, "tol": tol}, [got], [want])

        cases.append(
            Case(
                "frozen",
                "random",
                frozen,
                f"score_statistics({d}, scaled={scaled}, rng, rows={ROWS}, keys={KEYS})",
                d,
                {"d": d, "scaled": scaled, "want": round(want, 3), "tol": tol},
            )
        )

    def seeded(fn):  # calls fn itself: a remembered answer would prove nothing here
        a, b, c = (
            tuple(fn(16, False, np.random.default_rng(s), rows=ROWS, keys=KEYS)) for s in (7, 7, 8)
        )
        return None if a == b and c != a else Fail("fail.seed")

    cases.append(
        Case(
            "seeded",
            "property",
            seeded,
            "score_statistics(16, False, np.random.default_rng(s)), s = 7, 7, 8",
            16,
        )
    )
    return cases


def _near(fn: Fn, d: int, scaled: bool, value: float) -> bool:
    got = _stats(fn, d, scaled)[0]
    return abs(got - value) <= variance_tolerance(d, False) * value / d + 1e-9


SCALE_MISTAKES = (
    Mistake(
        "scale.mistake.divides_by_d",
        lambda fn: _near(fn, 64, True, 1 / 64) and _near(fn, 64, False, 64.0),
    ),
    Mistake("scale.mistake.std", lambda fn: _near(fn, 64, False, 8.0) and _near(fn, 64, True, 1.0)),
    Mistake(
        "scale.mistake.products",
        lambda fn: _near(fn, 64, False, 1.0) and not _near(fn, 64, True, 1.0),
    ),
    Mistake(
        "scale.mistake.scaled_ignored",
        lambda fn: _near(fn, 64, True, 64.0) and _near(fn, 64, False, 64.0),
    ),
    Mistake("scale.mistake.frozen_count", lambda fn: _stats(fn, 256, False)[1] > 1.0),
    Mistake(
        "scale.mistake.global_rng",
        lambda fn: (
            fn(4, False, np.random.default_rng(3), rows=8, keys=4)
            != fn(4, False, np.random.default_rng(3), rows=8, keys=4)
        ),
    ),
)


EXERCISES = (
    Exercise(
        5,
        "heads",
        "multi_head_attention",
        "(x, w_q, w_k, w_v, w_o, n_head)",
        3,
        solutions.multi_head_attention,
        _mha_cases,
        MHA_MISTAKES,
        MHA_DESCRIBERS,
    ),
    Exercise(
        6,
        "scale",
        "score_statistics",
        "(d, scaled, rng, rows=1000, keys=64)",
        3,
        solutions.score_statistics,
        _scale_cases,
        SCALE_MISTAKES,
    ),
)
