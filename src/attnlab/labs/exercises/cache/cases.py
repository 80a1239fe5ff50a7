"""The cases of exercise 10 (cache): one step by hand from an empty cache and from a cache of
one, random caches against attention over the whole sequence (the output, and the caches
grown by one), then six steps against causal attention recomputed."""

from __future__ import annotations

from functools import cache, partial
from operator import itemgetter

import numpy as np

from attnlab import reference as ref
from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close
from attnlab.labs.rows import Row, as_cases

OUTPUT = itemgetter(0)  # the attention output, first of (output, cache_k, cache_v)


def _attend_one(q, k, v):
    return ref.scaled_dot_product_attention(q, k, v)[0]


Q, K, V = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[3.0, 4.0]])  # the new token
EMPTY = np.zeros((0, 2))

HAND = (  # title, (cache_k, cache_v), the output worked out by hand, the call as typed, size
    ("first", (EMPTY, EMPTY), [[3.0, 4.0]],  # alone, the token attends to itself
     "decode_step(q=[[1, 0]], k=[[0, 1]], v=[[3, 4]], cache_k=cache_v=np.zeros((0, 2)))", 6),
    ("two", (np.array([[1.0, 0.0]]), np.array([[1.0, 2.0]])),
     _attend_one(Q, np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]])),
     "decode_step(q=[[1, 0]], k=[[0, 1]], v=[[3, 4]], cache_k=[[1, 0]], cache_v=[[1, 2]])", 10),
)
RANDOM = ((3, 4), (7, 8))  # t cached positions, width d


def _grown(fn: Fn, args: tuple[np.ndarray, ...], all_k: np.ndarray, all_v: np.ndarray
           ) -> Fail | None:
    """The returned caches are the old ones with the new key and value appended."""
    return close(fn(*args)[1], all_k) or close(fn(*args)[2], all_v)


def _recompute(fn: Fn, x_q: np.ndarray, x_k: np.ndarray, x_v: np.ndarray, full: np.ndarray
               ) -> Fail | None:
    """Six steps from an empty cache equal causal attention over the six tokens at once."""
    ck, cv, rows = np.zeros((0, 4)), np.zeros((0, 4)), []
    for p in range(6):
        out, ck, cv = fn(x_q[p : p + 1], x_k[p : p + 1], x_v[p : p + 1], ck, cv)
        rows.append(np.asarray(out).reshape(-1))
    return close(np.stack(rows), full)


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(10)
    entries: list[Row | Case] = [Row(title, (Q, K, V, *caches), want, shown, size, part=OUTPUT)
                                 for title, caches, want, shown, size in HAND]
    for t, d in RANDOM:
        q, k, v = rng.normal(size=(1, d)), rng.normal(size=(1, d)), rng.normal(size=(1, d))
        ck, cv = rng.normal(size=(t, d)), rng.normal(size=(t, d))
        all_k, all_v = np.concatenate([ck, k]), np.concatenate([cv, v])
        shown = f"decode_step(q, k, v, cache_k, cache_v), cache ({t}, {d})"
        entries += [
            Row("random_out", (q, k, v, ck, cv), _attend_one(q, all_k, all_v), shown, t * 2 * d,
                "random", fields={"t": t}, part=OUTPUT),
            Case("random_cache", "random",
                 partial(_grown, args=(q, k, v, ck, cv), all_k=all_k, all_v=all_v), shown,
                 t * 2 * d, {"t": t}),
        ]
    x_q, x_k, x_v = (rng.normal(size=(6, 4)) for _ in range(3))
    full = ref.scaled_dot_product_attention(x_q, x_k, x_v, mask=ref.causal_mask(6, 6))[0]
    return as_cases(entries + [Case(
        "recompute", "property", partial(_recompute, x_q=x_q, x_k=x_k, x_v=x_v, full=full),
        "decode_step(q[p], k[p], v[p], cache_k, cache_v) for p in range(6), q, k, v (6, 4)", 72)])
