"""The cases of exercise 13 (additive): the hand-worked table (one sentence with a padded
word, then two sentences in one batch), random shapes against the float64 reference
(``attnlab.reference.additive``), then properties. Every call must answer a pair
``(context, weights)``.

Dimension legend: ``b`` batch, ``n`` source positions, ``d_s`` decoder-state width, ``d_h``
encoder-state width, ``a`` attention width.
"""

from __future__ import annotations

from functools import cache
from operator import itemgetter

import numpy as np

from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import close, pair
from attnlab.labs.rows import Row, as_cases
from attnlab.reference.additive import additive_attention_forward

CONTEXT, WEIGHTS = itemgetter(0), itemgetter(1)  # the parts of the pair a row compares


def reference(s, h, w, u, v, src_mask):
    """The verified reference in this exercise's layout: one query per sentence (b, d_s),
    W (d_s, a) and U (d_h, a) as the learner holds them, the source mask (b, n)."""
    context, weights, _ = additive_attention_forward(
        np.asarray(s)[:, None, :], h, np.asarray(w).T, np.asarray(u).T, v,
        np.asarray(src_mask, dtype=bool)[:, None, :])  # (b, 1, d_h), (b, 1, n)
    return context[:, 0], weights[:, 0]


# By hand, a = d_s = d_h = 1: s W = ln 3, so s W + h_j U is [0, ln 3] on the two real words
# (tanh: [0, 0.8]), and v = 2.5·ln 2 makes the scores [0, ln 4]: weights [1, 4] / 5. The
# third word is padding (its h, 5, must not count). A second sentence with three real words,
# [0, ln 4, ln 4], gives [1, 4, 4] / 9.
LN2, LN3 = np.log(2.0), np.log(3.0)
ONE = dict(s=np.array([[1.0]]), h=np.array([[[-LN3], [0.0], [5.0]]]), w=np.array([[LN3]]),
           u=np.array([[1.0]]), v=np.array([2.5 * LN2]), src_mask=np.array([[True, True, False]]))
TWO = dict(ONE, s=np.array([[1.0], [1.0]]), h=np.array([[[-LN3], [0.0], [5.0]],
                                                         [[-LN3], [0.0], [0.0]]]),
           src_mask=np.array([[True, True, False], [True, True, True]]))
SHOWN = ("additive_attention(s=[[1]], h=[[[-ln 3], [0], [5]]], w=[[ln 3]], u=[[1]], "
         "v=[2.5·ln 2], src_mask=[[True, True, False]])")
SHOWN_TWO = ("additive_attention(s=[[1], [1]], h=[[[-ln 3], [0], [5]], [[-ln 3], [0], [0]]], "
             "w=[[ln 3]], u=[[1]], v=[2.5·ln 2], src_mask=[[True, True, False], [True, True, "
             "True]])")

HAND = (  # title, arguments, the part compared, its value worked out by hand, the call, size
    ("hand_weights", ONE, WEIGHTS, [[0.2, 0.8, 0.0]], SHOWN, 10),
    ("hand_context", ONE, CONTEXT, [[-0.2 * LN3]], SHOWN, 10),
    ("two_sentences", TWO, WEIGHTS, [[0.2, 0.8, 0.0], [1 / 9, 4 / 9, 4 / 9]], SHOWN_TWO, 17),
    ("two_contexts", TWO, CONTEXT, [[-0.2 * LN3], [-LN3 / 9]], SHOWN_TWO, 17),
)
RANDOM = ((2, 4, 3, 5, 6), (3, 7, 8, 8, 4))  # b, n, d_s, d_h, a


def _row(title, args, part, want, shown, size, kind="hand", **more) -> Row:
    names = ("s", "h", "w", "u", "v", "src_mask")
    return Row(title, tuple(args[k] for k in names), want, shown, size, kind, part=part,
               form=pair, **more)


def draw(rng: np.random.Generator, b: int, n: int, d_s: int, d_h: int, a: int) -> dict:
    """Random arguments: each sentence has 1 to n real words, then padding."""
    lengths = rng.integers(1, n + 1, size=b)
    lengths[0] = n  # one sentence without padding
    return dict(s=rng.normal(size=(b, d_s)), h=rng.normal(size=(b, n, d_h)),
                w=rng.normal(size=(d_s, a)), u=rng.normal(size=(d_h, a)),
                v=rng.normal(size=a), src_mask=np.arange(n)[None, :] < lengths[:, None])


def size(args: dict) -> int:
    return sum(int(np.size(x)) for x in args.values())


def _random_rows(rng: np.random.Generator) -> list[Row]:
    rows = []
    for shape in RANDOM:
        args = draw(rng, *shape)
        context, weights = reference(**args)
        shown = "s {}, h {}, w {}, u {}, v {}, src_mask {}".format(
            *(np.shape(args[k]) for k in ("s", "h", "w", "u", "v", "src_mask")))
        fields = {"b": shape[0], "n": shape[1]}
        rows += [_row("random_context", args, CONTEXT, context, shown, size(args), "random",
                      fields=fields),
                 _row("random_weights", args, WEIGHTS, weights, shown, size(args), "random",
                      fields=fields)]
    return rows


def _call(fn: Fn, args: dict) -> tuple[Fail | None, tuple]:
    out = fn(*(args[k] for k in ("s", "h", "w", "u", "v", "src_mask")))
    return pair(out), out


@cache
def build() -> list[Case]:
    rng = np.random.default_rng(13)
    rows = [_row(*entry) for entry in HAND] + _random_rows(rng)
    args = draw(rng, 4, 6, 5, 3, 7)
    args["src_mask"][1, 3:] = False  # sentence 2 certainly padded after its third word
    shown = "additive_attention(s, h, w, u, v, src_mask), b 4, n 6, d_s 5, d_h 3, a 7"
    rows.append(_row("sums", args, lambda out: np.sum(out[1], -1), np.ones(4), shown,
                     size(args), "property"))
    noisy = dict(args, h=np.where(args["src_mask"][..., None], args["h"],
                                  rng.normal(size=args["h"].shape) * 50.0))  # padding changed
    perm = rng.permutation(6)
    permuted = dict(args, h=args["h"][:, perm], src_mask=args["src_mask"][:, perm])

    def padding_ignored(fn: Fn) -> Fail | None:
        bad, kept = _call(fn, args)
        if bad is not None:
            return bad
        bad, moved = _call(fn, noisy)
        return bad or close(moved[0], kept[0]) or close(moved[1], kept[1])

    def permute_source(fn: Fn) -> Fail | None:
        bad, kept = _call(fn, args)
        if bad is not None:
            return bad
        bad, moved = _call(fn, permuted)
        return bad or close(moved[0], kept[0]) or close(moved[1], np.asarray(kept[1])[:, perm])

    def alone(fn: Fn) -> Fail | None:
        bad, together = _call(fn, args)
        if bad is not None:
            return bad
        one = {k: (x[1:2] if k in ("s", "h", "src_mask") else x) for k, x in args.items()}
        bad, single = _call(fn, one)
        return (bad or close(single[0], np.asarray(together[0])[1:2])
                or close(single[1], np.asarray(together[1])[1:2]))

    empty = dict(TWO, src_mask=np.array([[False, False, False], [True, True, True]]))
    return as_cases(rows + [
        Case("padding_ignored", "property", padding_ignored,
             shown + ", h changed at the padded words", size(args)),
        Case("permute_source", "property", permute_source,
             shown + ", h[:, perm], src_mask[:, perm]", size(args)),
        Case("alone", "property", alone, shown + ", then s[1:2], h[1:2], src_mask[1:2]",
             size(args)),
        _row("empty_source", empty, CONTEXT, [[0.0], [-LN3 / 9]],
             SHOWN_TWO.replace("[[True, True, False]", "[[False, False, False]"), 17,
             "property"),
    ])
