"""Two-sequence views of the explorer's data (/work/FORMAT.md): a view's ``sources`` (its
keys, m of them, when they are another sequence) and ``attends`` (the model's own mask),
checked by ``validate_data`` and computed by ``head_weights`` on hand-worked cases."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from explorer_support import two_sequence_page

from attnlab.explorer.page.data import DataError, head_weights, validate_data, view_attends
from attnlab.explorer.page.encoding import decode_data, encode_page

E = math.e

# q (n=2, d=4) over k (m=3): q·kᵀ = [[1, 0, 1], [0, 2, 2]]; ÷√4 -> [[.5, 0, .5], [0, 1, 1]]
CROSS = {"name": "h", "d_k": 4, "q": [[1.0, 0, 0, 0], [0, 2.0, 0, 0]],
         "k": [[1.0, 0, 0, 0], [0, 1.0, 0, 0], [1.0, 1.0, 0, 0]]}  # fmt: skip
CROSS_WEIGHTS = [
    [E**0.5 / (2 * E**0.5 + 1), 1 / (2 * E**0.5 + 1), E**0.5 / (2 * E**0.5 + 1)],
    [1 / (1 + 2 * E), E / (1 + 2 * E), E / (1 + 2 * E)],
]


@pytest.mark.parametrize("causal", [False, True])
def test_cross_weights_are_n_by_m_and_ignore_the_causal_switch(causal: bool) -> None:
    w = head_weights(CROSS, causal=causal, scale=True, attends="cross")
    assert w.shape == (2, 3)
    np.testing.assert_allclose(w, CROSS_WEIGHTS, rtol=1e-12)
    scores = {"name": "h", "d_k": 4, "scores": [[1.0, 0, 1], [0, 2, 2]]}  # the same, as scores
    np.testing.assert_allclose(head_weights(scores, causal=causal, scale=True, attends="cross"),
                               CROSS_WEIGHTS, rtol=1e-12)  # fmt: skip


def test_a_views_own_mask_overrides_the_switch_both_ways() -> None:
    flat = {"name": "h", "d_k": 1, "scores": [[0.0, 0.0], [0.0, 0.0]]}
    causal = [[1.0, 0.0], [0.5, 0.5]]
    assert head_weights(flat, causal=False, scale=True, attends="causal").tolist() == causal
    assert head_weights(flat, causal=True, scale=True, attends="bidirectional").tolist() == [
        [0.5, 0.5], [0.5, 0.5]]  # fmt: skip
    assert head_weights(flat, causal=True, scale=True).tolist() == causal  # no attends: the switch
    with pytest.raises(ValueError, match="attends must be one of"):
        head_weights(flat, causal=True, scale=True, attends="sideways")


def test_a_fixed_alignment_shows_its_own_weights() -> None:
    align = two_sequence_page()["views"][3]["layers"][0]["heads"][0]
    w = head_weights(align, causal=True, scale=False, attends="cross")
    assert w.tolist() == align["weights"] and w.shape == (3, 4)


def test_view_attends_defaults_to_cross_with_sources_and_to_the_switch_without() -> None:
    views = two_sequence_page()["views"]
    assert [view_attends(v) for v in views] == ["cross", "bidirectional", "causal", "cross"]
    assert view_attends({"name": "v", "tokens": ["a"]}) is None


def test_a_two_sequence_page_is_valid_and_survives_encoding() -> None:
    data = two_sequence_page()
    validate_data(data)
    enc = encode_page(data)
    validate_data(enc)
    k = enc["views"][0]["layers"][0]["heads"][0]["k"]
    assert k["shape"] == [4, 4]  # m = 4 source tokens of width d = 4
    back = decode_data(enc)["views"][3]["layers"][0]["heads"][0]["weights"]
    np.testing.assert_allclose(back, data["views"][3]["layers"][0]["heads"][0]["weights"],
                               rtol=2**-11)  # fmt: skip


def _cross_head(d: dict) -> dict:
    return d["views"][0]["layers"][1]["heads"][1]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: _cross_head(d).update(k=_cross_head(d)["k"][:3]),
         r"views\[0\].layers\[1\].heads\[1\].k: expected 4 rows"),
        (lambda d: _cross_head(d).update(q=_cross_head(d)["q"] + [[0.0] * 4]),
         r"views\[0\].layers\[1\].heads\[1\].q: expected 3 rows"),
        (lambda d: _cross_head(d).update(weights=np.eye(3).tolist()),
         r"heads\[1\].weights\[0\]: expected 4 numbers"),
        (lambda d: _cross_head(d).update(bias=np.zeros((4, 3)).tolist()),
         r"heads\[1\].bias: expected 3 rows"),
        (lambda d: d["views"][3]["layers"][0]["heads"][0].update(weights=np.eye(3).tolist()),
         r"views\[3\].layers\[0\].heads\[0\].weights\[0\]: expected 4 numbers"),
        (lambda d: d["views"][0].update(sources=[]), r"views\[0\].sources: must not be empty"),
        (lambda d: d["views"][0].update(sources="the cat"), r"views\[0\].sources: expected a list"),
        (lambda d: d["views"][0].update(attends="sideways"),
         r"views\[0\].attends: expected one of causal, bidirectional, cross, got 'sideways'"),
        (lambda d: d["views"][0].update(attends="bidirectional"),
         r"views\[0\].sources: a bidirectional self-attention has no sources"),
        (lambda d: d["views"][2].update(sources=["x", "y", "z"]),
         r"views\[2\].sources: a causal self-attention has no sources"),
        (lambda d: d["views"][1].update(attends="cross"),
         r"views\[1\].sources: a cross view needs its source tokens"),
        (lambda d: d["views"][0].update(composed={"rollout": [], "note": ""}),
         r"views\[0\].composed: a view with sources has no composed attention"),
        (lambda d: d["views"][3].pop("fixed"), r"views\[3\].fixed: a head has only weights"),
    ],
)
def test_bad_two_sequence_views_are_refused_with_their_place(mutate, message: str) -> None:
    data = copy.deepcopy(two_sequence_page())
    mutate(data)
    with pytest.raises(DataError, match=message):
        validate_data(data)
