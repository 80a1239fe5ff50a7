"""Properties, gradient checks and torch cross-checks of the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnlab.nn.attention import attention as torch_attention
from attnlab.reference import (
    additive_mask,
    alibi_bias,
    alibi_slopes,
    attention_backward,
    attention_forward,
    boolean_mask,
    causal_mask,
    finite_difference_grad,
    multi_head_attention,
    padding_mask,
    rope,
    scaled_dot_product_attention,
    sinusoidal,
    softmax,
)

FAST = settings(max_examples=40, deadline=None)


def _qkv(rng: np.random.Generator, b: int = 2, h: int = 3, i: int = 5, j: int = 5, d: int = 4):
    return (rng.standard_normal((b, h, i, d)), rng.standard_normal((b, h, j, d)),
            rng.standard_normal((b, h, j, d)))


# --- softmax and masks ---------------------------------------------------------------------


@FAST
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 7)),
              elements=st.floats(-1e3, 1e3)))
def test_softmax_rows_sum_to_one_and_ignore_shifts(scores: np.ndarray) -> None:
    w = softmax(scores)
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(softmax(scores + 123.0), w, atol=1e-12)


def test_softmax_fully_masked_rows_are_zero_not_nan() -> None:
    scores = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0]])
    w = softmax(scores)
    assert not np.isnan(w).any()
    np.testing.assert_array_equal(w[0], 0.0)
    assert w[1].sum() == pytest.approx(1.0) and w[1, 1] == 0.0


def test_causal_mask_queries_are_the_last_positions() -> None:
    np.testing.assert_array_equal(causal_mask(3, 3), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(causal_mask(1, 4), [[True] * 4])
    np.testing.assert_array_equal(causal_mask(2, 4), np.tril(np.ones((4, 4), bool))[2:])


def test_padding_mask_shape_and_values() -> None:
    m = padding_mask([3, 1, 0], 4)
    assert m.shape == (3, 1, 1, 4) and m.dtype == np.bool_
    np.testing.assert_array_equal(m[:, 0, 0], [[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])


def test_mask_conversions_round_trip() -> None:
    m = np.random.default_rng(0).random((2, 3, 4)) > 0.5
    add = additive_mask(m)
    assert add.dtype == np.float64 and set(np.unique(add)) <= {0.0, -np.inf}
    np.testing.assert_array_equal(boolean_mask(add), m)


@pytest.mark.parametrize("kind", ["causal", "padding", "both", "cross-causal"])
def test_boolean_and_additive_masks_give_identical_weights(kind: str) -> None:
    rng = np.random.default_rng(1)
    n_query = 3 if kind == "cross-causal" else 5
    q, k, v = _qkv(rng, i=n_query, j=5)
    pad = padding_mask([5, 2], 5)  # (b, 1, 1, j)
    mask = {"causal": causal_mask(n_query, 5), "padding": pad,
            "both": pad & causal_mask(5, 5), "cross-causal": causal_mask(n_query, 5)}[kind]
    out_b, w_b = scaled_dot_product_attention(q, k, v, mask=mask)
    out_a, w_a = scaled_dot_product_attention(q, k, v, mask=additive_mask(mask))
    np.testing.assert_array_equal(w_b, w_a)
    np.testing.assert_array_equal(out_b, out_a)
    assert np.all(w_b[~np.broadcast_to(mask, w_b.shape)] == 0.0)
    np.testing.assert_allclose(w_b.sum(-1), 1.0, atol=1e-12)


def test_padding_of_length_zero_gives_zero_rows_not_nan() -> None:
    q, k, v = _qkv(np.random.default_rng(2))
    out, w = scaled_dot_product_attention(q, k, v, mask=padding_mask([5, 0], 5))
    assert not np.isnan(out).any() and not np.isnan(w).any()
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)


def test_causality_changing_the_future_leaves_the_past() -> None:
    rng = np.random.default_rng(3)
    q, k, v = _qkv(rng)
    out, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(5, 5))
    k2, v2 = k.copy(), v.copy()
    k2[..., 3:, :] += 10.0
    v2[..., 3:, :] -= 7.0
    out2, _ = scaled_dot_product_attention(q, k2, v2, mask=causal_mask(5, 5))
    np.testing.assert_array_equal(out[..., :3, :], out2[..., :3, :])


# --- hand-written backward -----------------------------------------------------------------


def _rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a) + np.linalg.norm(b), 1e-300))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [True, False])
def test_backward_matches_finite_differences(causal: bool, scale: bool) -> None:
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    mask = causal_mask(4, 4) if causal else None
    g = rng.standard_normal((4, 3))  # loss = sum(out * g), so dout = g

    def loss(q_: np.ndarray, k_: np.ndarray, v_: np.ndarray) -> float:
        return float(np.sum(attention_forward(q_, k_, v_, mask=mask, scale=scale)[0] * g))

    _, cache = attention_forward(q, k, v, mask=mask, scale=scale)
    dq, dk, dv = attention_backward(g, cache)
    fd_q = finite_difference_grad(lambda t: loss(t, k, v), q)
    fd_k = finite_difference_grad(lambda t: loss(q, t, v), k)
    fd_v = finite_difference_grad(lambda t: loss(q, k, t), v)
    for name, ours, fd in (("dq", dq, fd_q), ("dk", dk, fd_k), ("dv", dv, fd_v)):
        assert _rel_err(ours, fd) < 1e-6, name
    if causal:  # query 0 sees key 0 only: its weight is 1 whatever q0 is, so dq0 = 0
        assert np.abs(dq[0]).max() < 1e-15


def test_backward_matches_torch_autograd_batched_with_padding() -> None:
    rng = np.random.default_rng(5)
    q, k, v = _qkv(rng, d=6)
    mask = padding_mask([5, 3], 5) & causal_mask(5, 5)
    g = rng.standard_normal(q.shape)
    _, cache = attention_forward(q, k, v, mask=mask)
    ours = attention_backward(g, cache)
    tq, tk, tv = (torch.tensor(t, requires_grad=True) for t in (q, k, v))
    out, _ = torch_attention(tq, tk, tv, causal=False, mask=torch.from_numpy(mask))
    (out * torch.from_numpy(g)).sum().backward()
    for mine, theirs in zip(ours, (tq.grad, tk.grad, tv.grad), strict=True):
        np.testing.assert_allclose(mine, theirs.numpy(), rtol=0, atol=1e-12)


# --- positions -----------------------------------------------------------------------------


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(0, 500), st.integers(0, 500), st.integers(-200, 200))
def test_rope_score_depends_only_on_relative_position(seed: int, p: int, p2: int, t: int) -> None:
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, 8))  # one row each, d = 8

    def score(a: int, b: int) -> float:
        return float(rope(q, [a])[0] @ rope(k, [b])[0])

    shift = t if min(p, p2) + t >= 0 else -t
    assert score(p + shift, p2 + shift) == pytest.approx(score(p, p2), abs=1e-9)
    assert np.linalg.norm(rope(q, [p])) == pytest.approx(np.linalg.norm(q))  # a rotation


def test_sinusoidal_shift_is_a_fixed_rotation_per_pair() -> None:
    d, k = 16, 7
    pe = sinusoidal(60, d)
    freq = 10000.0 ** (-np.arange(0, d, 2) / d)
    for pair, w in enumerate(freq):
        c, s = np.cos(k * w), np.sin(k * w)
        rot = np.array([[c, s], [-s, c]])  # (sin a, cos a) -> (sin(a + kw), cos(a + kw))
        cols = pe[:, 2 * pair: 2 * pair + 2]  # (n, 2): (sin, cos) of one frequency
        np.testing.assert_allclose(cols[:-k] @ rot.T, cols[k:], atol=1e-12)
    np.testing.assert_array_equal(sinusoidal(4, d, offset=5), sinusoidal(9, d)[5:])


def test_alibi_slopes_for_eight_heads_and_bias_shape() -> None:
    np.testing.assert_array_equal(alibi_slopes(8), [2.0**-k for k in range(1, 9)])
    assert len(alibi_slopes(12)) == 12 and len(set(alibi_slopes(12))) == 12
    bias = alibi_bias(8, 6, 6)
    assert bias.shape == (8, 6, 6)
    i, j = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    for h, slope in enumerate(alibi_slopes(8)):
        np.testing.assert_array_equal(np.diag(bias[h]), 0.0)
        below = i > j
        np.testing.assert_allclose(bias[h][below], -slope * (i - j)[below], rtol=0, atol=0)


# --- multi-head attention ------------------------------------------------------------------


def _mha_weights(rng: np.random.Generator, d: int) -> dict[str, np.ndarray]:
    names = ("w_q", "w_k", "w_v", "w_o")
    ws = {n: rng.standard_normal((d, d)) / np.sqrt(d) for n in names}
    ws.update({n: rng.standard_normal(d) for n in ("b_q", "b_k", "b_v", "b_o")})
    return ws


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_equals_concat_of_per_head_calls(causal: bool) -> None:
    rng = np.random.default_rng(6)
    b, n, d, n_head = 2, 5, 12, 3
    x, ws = rng.standard_normal((b, n, d)), _mha_weights(rng, d)
    out, weights = multi_head_attention(x, ws["w_q"], ws["w_k"], ws["w_v"], ws["w_o"], ws["b_o"],
                                        n_head, b_q=ws["b_q"], b_k=ws["b_k"], b_v=ws["b_v"],
                                        causal=causal)
    q = x @ ws["w_q"].T + ws["b_q"]  # (b, n, d)
    k = x @ ws["w_k"].T + ws["b_k"]
    v = x @ ws["w_v"].T + ws["b_v"]
    d_k, heads = d // n_head, []
    for h in range(n_head):
        cols = slice(h * d_k, (h + 1) * d_k)
        mask = causal_mask(n, n) if causal else None
        o, w = scaled_dot_product_attention(q[..., cols], k[..., cols], v[..., cols], mask=mask)
        np.testing.assert_allclose(weights[:, h], w, atol=1e-14)
        heads.append(o)
    expected = np.concatenate(heads, axis=-1) @ ws["w_o"].T + ws["b_o"]
    np.testing.assert_allclose(out, expected, atol=1e-13)


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_matches_torch_multihead_attention(causal: bool) -> None:
    rng = np.random.default_rng(7)
    b, n, d, n_head = 2, 6, 8, 2
    x = rng.standard_normal((b, n, d))
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(d, n_head, bias=True, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        tx = torch.from_numpy(x)
        forbid = torch.from_numpy(~causal_mask(n, n)) if causal else None  # torch: True = block
        t_out, t_w = mha(tx, tx, tx, attn_mask=forbid, average_attn_weights=False)
    w_q, w_k, w_v = mha.in_proj_weight.detach().numpy().reshape(3, d, d)
    b_q, b_k, b_v = mha.in_proj_bias.detach().numpy().reshape(3, d)
    out, weights = multi_head_attention(x, w_q, w_k, w_v, mha.out_proj.weight.detach().numpy(),
                                        mha.out_proj.bias.detach().numpy(), n_head,
                                        b_q=b_q, b_k=b_k, b_v=b_v, causal=causal)
    np.testing.assert_allclose(out, t_out.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights, t_w.numpy(), rtol=0, atol=1e-12)


def test_multi_head_rope_and_alibi_options() -> None:
    rng = np.random.default_rng(8)
    b, n, d, n_head = 1, 4, 8, 2
    x, ws = rng.standard_normal((b, n, d)), _mha_weights(rng, d)
    args = (ws["w_q"], ws["w_k"], ws["w_v"], ws["w_o"], None, n_head)
    _, w = multi_head_attention(x, *args, causal=True, rope=True, bias=alibi_bias(n_head, n, n))
    q = rope((x @ ws["w_q"].T).reshape(b, n, n_head, 4).transpose(0, 2, 1, 3), np.arange(n))
    k = rope((x @ ws["w_k"].T).reshape(b, n, n_head, 4).transpose(0, 2, 1, 3), np.arange(n))
    scores = q @ k.transpose(0, 1, 3, 2) / 2.0 + alibi_bias(n_head, n, n)
    np.testing.assert_allclose(w, softmax(scores + additive_mask(causal_mask(n, n))), atol=1e-14)


# --- cross-check against the torch core ----------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("scale", [True, False])
def test_reference_matches_torch_naive_attention(causal: bool, with_bias: bool,
                                                 scale: bool) -> None:
    rng = np.random.default_rng(9)
    q, k, v = _qkv(rng, b=2, h=4, i=6, j=6, d=8)
    bias = alibi_bias(4, 6, 6) if with_bias else None
    mask = causal_mask(6, 6) if causal else None
    out, w = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale, bias=bias)
    t_out, t_w = torch_attention(*(torch.from_numpy(t) for t in (q, k, v)), causal=causal,
                                 bias=None if bias is None else torch.from_numpy(bias),
                                 scale=scale, backend="naive")
    assert np.abs(out - t_out.numpy()).max() <= 1e-12
    assert np.abs(w - t_w.numpy()).max() <= 1e-12


# --- bad input -----------------------------------------------------------------------------


def _bad_mha(d: int = 6, n_head: int = 4, x_shape: tuple[int, ...] = (1, 3, 6)) -> None:
    w = np.zeros((d, d))
    multi_head_attention(np.zeros(x_shape), w, w, w, w, None, n_head)


def _bad_sdpa(q: tuple[int, ...], k: tuple[int, ...], v: tuple[int, ...], mask=None) -> None:
    scaled_dot_product_attention(np.zeros(q), np.zeros(k), np.zeros(v), mask=mask)


def _bad_backward() -> None:
    _, cache = attention_forward(np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)))
    attention_backward(np.zeros((2, 2)), cache)


BAD_INPUT = {
    "q_k_width": lambda: _bad_sdpa((3, 4), (3, 5), (3, 5)),
    "k_v_positions": lambda: _bad_sdpa((3, 4), (3, 4), (2, 4)),
    "one_dim": lambda: _bad_sdpa((4,), (4,), (4,)),
    "int_mask": lambda: _bad_sdpa((2, 2), (2, 2), (2, 2), mask=np.ones((2, 2), dtype=int)),
    "plus_inf_mask": lambda: _bad_sdpa((2, 2), (2, 2), (2, 2), mask=np.array([0.0, np.inf])),
    "heads_not_dividing": lambda: _bad_mha(n_head=4),
    "zero_heads": lambda: _bad_mha(n_head=0),
    "x_not_3d": lambda: _bad_mha(n_head=2, x_shape=(3, 6)),
    "x_wrong_width": lambda: _bad_mha(n_head=2, x_shape=(1, 3, 5)),
    "nan_scores": lambda: softmax(np.array([np.nan, 0.0])),
    "causal_more_queries": lambda: causal_mask(4, 3),
    "padding_too_long": lambda: padding_mask([4], 3),
    "padding_not_int": lambda: padding_mask([1.5], 3),
    "additive_of_float": lambda: additive_mask(np.zeros(3)),
    "boolean_of_bias": lambda: boolean_mask(np.array([0.0, 0.5])),
    "sinusoidal_odd": lambda: sinusoidal(4, 5),
    "rope_positions": lambda: rope(np.zeros((3, 4)), [0, 1]),
    "rope_odd_width": lambda: rope(np.zeros((3, 3)), [0, 1, 2]),
    "alibi_zero_heads": lambda: alibi_slopes(0),
    "alibi_more_queries": lambda: alibi_bias(2, 4, 3),
    "backward_dout_shape": _bad_backward,
}


@pytest.mark.parametrize("name", list(BAD_INPUT))
def test_bad_input_raises_value_error(name: str) -> None:
    with pytest.raises(ValueError):
        BAD_INPUT[name]()
