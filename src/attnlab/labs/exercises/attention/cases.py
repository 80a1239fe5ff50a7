"""The cases of exercise 3 (attention): the hand-worked table (the two-token case and the
agreement of `he`), random shapes against the float64 reference, padding and additive masks,
then properties. Every call must answer a pair ``(output, weights)``."""

from __future__ import annotations

from functools import cache
from operator import itemgetter

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close, pair
from attnlab.labs.rows import Row, as_cases

OUTPUT, WEIGHTS = itemgetter(0), itemgetter(1)  # the parts of the pair a row compares

Q, K = np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
V = np.array([[1.0, 2.0], [3.0, 4.0]])
W1 = 1.0 / (1.0 + np.exp(-1.0 / np.sqrt(2.0)))  # logistic of the score gap 1/√2
# `I work , you work , he`: each word's key and value say [pronoun, verb]; the query at `he`
# asks for pronouns with a score of ln 4 (after the division by √2).
WORDS = np.array([[1, 0], [0, 1], [0, 0], [1, 0], [0, 1], [0, 0], [1, 0]], dtype=float)
HE = np.array([[np.sqrt(2.0) * np.log(4.0), 0.0]])
SHOWN = "attention(q=[[1, 0]], k=[[1, 0], [0, 1]], v=[[1, 2], [3, 4]])"

HAND = (  # title, arguments, the part compared, its value worked out by hand, the call, size
    ("hand_weights", (Q, K, V), WEIGHTS, [[W1, 1 - W1]], SHOWN, 8),
    ("hand_output", (Q, K, V), OUTPUT, np.array([[W1, 1 - W1]]) @ V, SHOWN, 8),
    ("hand_mask", (Q, K, V, np.array([[True, False]])), WEIGHTS, [[1.0, 0.0]],
     SHOWN[:-1] + ", mask=[[True, False]])", 10),
    ("agreement", (HE, WORDS, WORDS), OUTPUT, [[0.75, 0.125]],
     "attention(q=[[√2·ln 4, 0]], k=w, v=w), "
     "w = [[1, 0], [0, 1], [0, 0], [1, 0], [0, 1], [0, 0], [1, 0]]", 16),
)
RANDOM = (((3, 2), (4, 2), (4, 3)), ((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3)))  # q, k, v


def _row(title, args, part, want, shown, size, kind="hand", **more) -> Row:
    return Row(title, args, want, shown, size, kind, part=part, form=pair, **more)


def _random_rows(rng: np.random.Generator) -> list[Row]:
    rows = []
    for sq, sk, sv in RANDOM:
        a, b, c = rng.normal(size=sq), rng.normal(size=sk), rng.normal(size=sv)
        out, weights = ref.scaled_dot_product_attention(a, b, c)
        shown, size = f"q {sq}, k {sk}, v {sv}", a.size + b.size + c.size
        rows += [_row("random_out", (a, b, c), OUTPUT, out, shown, size, "random",
                      fields={"shape": sq}),
                 _row("random_weights", (a, b, c), WEIGHTS, weights, shown, size, "random",
                      fields={"shape": sq})]
    return rows


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(3)
    rows = [_row(*entry) for entry in HAND] + _random_rows(rng)
    a, b, c = (rng.normal(size=(2, 1, 5, 4)) for _ in range(3))
    pad = ref.padding_mask([5, 3], 5)  # (b, 1, 1, n): sequence 2 has 2 padded keys
    causal = ref.additive_mask(ref.causal_mask(5, 5))
    perm = rng.permutation(5)
    big = rng.normal(size=(3, 4)) * 60.0
    shown = "q, k, v (2, 1, 5, 4)"
    rows += [
        _row("padding", (a, b, c, pad), OUTPUT,
             ref.scaled_dot_product_attention(a, b, c, mask=pad)[0],
             shown + ", mask=padding_mask([5, 3], 5)", 120, "random"),
        _row("additive", (a, b, c, causal), OUTPUT,
             ref.scaled_dot_product_attention(a, b, c, mask=causal)[0],
             shown + ", mask=np.where(causal, 0.0, -np.inf)", 120, "random"),
        _row("sums", (a, b, c), lambda out: np.sum(out[1], -1), np.ones((2, 1, 5)), shown, 120,
             "property"),
    ]

    def permute_keys(fn: Fn) -> Fail | None:
        moved = fn(a, b[..., perm, :], c[..., perm, :])
        if (bad := pair(moved)) is not None:
            return bad
        kept = fn(a, b, c)
        return pair(kept) or close(moved[0], kept[0])

    return as_cases(rows + [
        Case("permute_keys", "property", permute_keys,
             "attention(q, k[..., perm, :], v[..., perm, :]), q, k, v (2, 1, 5, 4)", 120),
        _row("overflow", (big, big, big), OUTPUT,
             ref.scaled_dot_product_attention(big, big, big)[0],
             "attention(x, x, x), x = rng.normal(size=(3, 4)) * 60", 12, "property"),
        _row("hidden_row", (Q, K, V, np.array([[False, False]])), OUTPUT, np.zeros((1, 2)),
             SHOWN[:-1] + ", mask=[[False, False]])", 10, "property"),
    ])
