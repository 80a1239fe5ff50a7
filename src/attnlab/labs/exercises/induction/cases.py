"""The cases of exercise 12 (induction): hand-worked first, then random against the float64
reference, smallest first, then properties."""

from __future__ import annotations

from functools import cache

import numpy as np

from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.exercises.induction.measure import (
    GOOD_LOSS,
    GOOD_SCORE,
    HALF_ROWS,
    BadWeights,
    forward,
    measures,
    probe,
    weights_of,
)


def _score(fn: Fn, size: tuple[int, int, int], name: str) -> Fail | None:
    v, n, seed = size
    try:
        got = measures(weights_of(fn(v, n), v, n), probe(v, n, seed))
    except BadWeights as bad:
        return bad.fail
    if name == "loss":
        if got["loss"] <= GOOD_LOSS:
            return None
        return Fail("induction.fail.loss", {"got": got["loss"], "want": GOOD_LOSS,
                                            "chance": float(np.log(v))})
    if got[name] >= GOOD_SCORE:
        return None
    return Fail("induction.fail.score", {"got": got[name], "want": GOOD_SCORE})


HAND = np.array([0, 1, 2, 3, 0, 1, 2, 3])  # V = 4, n = 8: "A B C D A B C D"


def _hand(fn: Fn, what: str) -> Fail | None:
    try:
        logits, (a1, a2) = forward(weights_of(fn(4, 8), 4, 8), HAND[None])
    except BadWeights as bad:
        return bad.fail
    if what == "next":
        got = int(logits[0, 5].argmax())
        return None if got == 2 else Fail("induction.fail.next", {"got": got, "want": 2})
    block, col = (1, 4) if what == "previous" else (2, 2)
    got = float((a1 if block == 1 else a2)[0, 5, col])
    if got >= GOOD_SCORE:
        return None
    return Fail("induction.fail.hand", {"block": block, "col": col, "got": got,
                                        "want": GOOD_SCORE})


def _complete(fn: Fn) -> Fail | None:
    try:
        weights_of(fn(10, 16), 10, 16)
    except BadWeights as bad:
        return bad.fail
    return None


@cache
def build() -> list[Case]:
    hand = "induction_weights(4, 8) on 0 1 2 3 0 1 2 3, row 5"
    cases = [
        Case("complete", "hand", _complete, "induction_weights(10, 16)", 2),
        Case("hand_previous", "hand", lambda fn: _hand(fn, "previous"), hand, 8),
        Case("hand_induction", "hand", lambda fn: _hand(fn, "induction"), hand, 8),
        Case("hand_next", "hand", lambda fn: _hand(fn, "next"), hand, 8),
    ]
    for size in ((10, 16, 0), (16, 24, 1)):
        v, n, seed = size
        shown = (f"induction_weights({v}, {n}) on {HALF_ROWS} rows of {n // 2} random tokens "
                 f"repeated once (seed {seed})")
        fields = {"vocab": v, "ctx": n}
        cases += [
            Case("previous", "random", lambda fn, s=size: _score(fn, s, "previous1"), shown,
                 v + n, fields),
            Case("induction", "random", lambda fn, s=size: _score(fn, s, "induction2"), shown,
                 v + n, fields),
            Case("loss", "random", lambda fn, s=size: _score(fn, s, "loss"), shown, v + n,
                 fields),
        ]
    return cases
