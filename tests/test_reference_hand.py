"""Tiny hand-derived cases for the NumPy reference: every expected number is worked out here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.reference import (
    alibi_bias,
    alibi_slopes,
    attention_backward,
    attention_forward,
    causal_mask,
    rope,
    scaled_dot_product_attention,
    sinusoidal,
    softmax,
)

E = math.e


def test_softmax_of_zero_and_one_is_one_and_e_over_one_plus_e() -> None:
    # exp(0) = 1 and exp(1) = e, normalised by their sum 1 + e.
    expected = np.array([1.0, E]) / (1.0 + E)  # = [0.2689..., 0.7310...]
    np.testing.assert_allclose(softmax(np.array([0.0, 1.0])), expected, rtol=0, atol=1e-15)


def test_softmax_does_not_overflow() -> None:
    # Naively exp(1000) = inf and inf/inf = NaN. After subtracting the max
    # (1000) the scores are [0, 0] -> [1, 1] / 2, and [0, -1000] -> [1, ~0].
    np.testing.assert_array_equal(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    np.testing.assert_allclose(softmax(np.array([1000.0, 0.0])), [1.0, 0.0], atol=1e-300)


def test_two_tokens_q_equals_k_unscaled() -> None:
    # Q = K = [[1, 0],      V = [[1, 2],
    #          [0, 1]]           [3, 4]]
    # Scores Q Kᵀ = identity: [[1, 0], [0, 1]] (no √d division).
    # Row 0: softmax([1, 0]) = [e, 1] / (1 + e);  row 1: softmax([0, 1]) = [1, e] / (1 + e).
    # Out row 0 = (e·[1, 2] + 1·[3, 4]) / (1 + e) = [e + 3, 2e + 4] / (1 + e)
    # Out row 1 = (1·[1, 2] + e·[3, 4]) / (1 + e) = [1 + 3e, 2 + 4e] / (1 + e)
    q = k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, w = scaled_dot_product_attention(q, k, v, scale=False)
    np.testing.assert_allclose(w, np.array([[E, 1.0], [1.0, E]]) / (1 + E), atol=1e-15)
    expected = np.array([[E + 3, 2 * E + 4], [1 + 3 * E, 2 + 4 * E]]) / (1 + E)
    np.testing.assert_allclose(out, expected, atol=1e-14)


def test_two_tokens_scaled_by_root_two() -> None:
    # Q = K = [[1,  1],     Q Kᵀ = [[1+1, 1-1],  = [[2, 0],
    #          [1, -1]]             [1-1, 1+1]]     [0, 2]]
    # d_k = 2, so divide by √2: scores = [[√2, 0], [0, √2]].
    # Row 0: [e^√2, 1] / (1 + e^√2) = [4.1133, 1] / 5.1133 = [0.80443, 0.19557]; row 1 mirrored.
    q = k = np.array([[1.0, 1.0], [1.0, -1.0]])
    v = np.eye(2)  # identity values: the output equals the weights
    out, w = scaled_dot_product_attention(q, k, v, scale=True)
    a = math.exp(math.sqrt(2.0))
    expected = np.array([[a, 1.0], [1.0, a]]) / (1 + a)
    np.testing.assert_allclose(w, expected, atol=1e-15)
    np.testing.assert_allclose(out, expected, atol=1e-15)
    assert w[0, 0] == pytest.approx(0.80443, abs=1e-5)


def test_two_tokens_causal() -> None:
    # Same Q, K, V as the unscaled case, with the causal mask [[1, 0], [1, 1]].
    # Row 0 sees only key 0: softmax([1, -inf]) = [1, 0], so out row 0 = v0 = [1, 2].
    # Row 1 sees both keys: unchanged, [1, e] / (1 + e).
    q = k = np.eye(2)
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(2, 2), scale=False)
    np.testing.assert_allclose(w, [[1.0, 0.0], [1 / (1 + E), E / (1 + E)]], atol=1e-15)
    np.testing.assert_allclose(out[0], [1.0, 2.0], atol=1e-15)


def test_fully_masked_row_is_zero() -> None:
    # Row 0 may attend to nothing: softmax([-inf, -inf]) is defined as [0, 0],
    # so its output is 0·v0 + 0·v1 = [0, 0]. Row 1 is untouched: scores [0, 1]
    # -> [1, e] / (1 + e).
    q = k = np.eye(2)
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    mask = np.array([[False, False], [True, True]])
    out, w = scaled_dot_product_attention(q, k, v, mask=mask, scale=False)
    np.testing.assert_array_equal(w[0], [0.0, 0.0])
    np.testing.assert_array_equal(out[0], [0.0, 0.0])
    np.testing.assert_allclose(w[1], [1 / (1 + E), E / (1 + E)], atol=1e-15)


def test_backward_two_tokens_by_hand() -> None:
    # Q = 0, K = I, V = I (unscaled). Scores Q Kᵀ = 0, so P = [[.5, .5], [.5, .5]].
    # Take dO = [[1, 0], [0, 0]] (the loss is O[0, 0]).
    # dV = Pᵀ dO = [[.5, 0], [.5, 0]].
    # dP = dO Vᵀ = [[1, 0], [0, 0]].
    # Row 0: rowsum(dP ⊙ P) = 1·.5 = .5; dS = P ⊙ (dP - .5) = .5·[.5, -.5] = [.25, -.25].
    # Row 1: dP = 0, so dS = 0.
    # dQ = dS K = dS (K = I) = [[.25, -.25], [0, 0]];  dK = dSᵀ Q = 0 since Q = 0.
    q = np.zeros((2, 2))
    k = v = np.eye(2)
    dout = np.array([[1.0, 0.0], [0.0, 0.0]])
    _, cache = attention_forward(q, k, v, scale=False)
    dq, dk, dv = attention_backward(dout, cache)
    np.testing.assert_allclose(dv, [[0.5, 0.0], [0.5, 0.0]], atol=1e-15)
    np.testing.assert_allclose(dq, [[0.25, -0.25], [0.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(dk, np.zeros((2, 2)), atol=1e-15)
    # Scaled: every score gradient picks up s = 1/√2, so dQ does too.
    _, cache = attention_forward(q, k, v, scale=True)
    dq, _, _ = attention_backward(dout, cache)
    np.testing.assert_allclose(dq, [[0.25 / math.sqrt(2), -0.25 / math.sqrt(2)], [0, 0]],
                               atol=1e-15)


def test_sinusoidal_by_hand() -> None:
    # d = 4: pair 0 has frequency 10000^(-0/4) = 1, pair 1 has 10000^(-2/4) = 1/100.
    # p = 0: [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1]
    # p = 1: [sin 1, cos 1, sin 0.01, cos 0.01]
    pe = sinusoidal(2, 4)
    np.testing.assert_allclose(pe[0], [0.0, 1.0, 0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
                               atol=1e-15)


def test_rope_by_hand() -> None:
    # d = 2, one pair with frequency 1: at position p the angle is p radians.
    # x = [1, 0] at p = 1 -> [1·cos 1 - 0·sin 1, 1·sin 1 + 0·cos 1] = [cos 1, sin 1].
    # x = [0, 1] at p = 2 -> [-sin 2, cos 2].  At p = 0 nothing turns.
    x = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]])
    out = rope(x, [1, 2, 0])
    np.testing.assert_allclose(out[0], [math.cos(1), math.sin(1)], atol=1e-15)
    np.testing.assert_allclose(out[1], [-math.sin(2), math.cos(2)], atol=1e-15)
    np.testing.assert_array_equal(out[2], [3.0, 4.0])


def test_alibi_by_hand() -> None:
    # 2 heads: 2^(-8·1/2) = 1/16, 2^(-8·2/2) = 1/256.
    # 3 heads (not a power of two): the 2-head slopes [1/16, 1/256], then every
    # other slope of the 4-head list [1/4, 1/16, 1/64, 1/256] -> [1/4, 1/64], first 1 of it.
    np.testing.assert_array_equal(alibi_slopes(2), [1 / 16, 1 / 256])
    np.testing.assert_array_equal(alibi_slopes(3), [1 / 16, 1 / 256, 1 / 4])
    # 1 head: slope 2^-8 = s. Bias -s·(i - j) below the diagonal, 0 on and above:
    # [[0, 0, 0], [-s, 0, 0], [-2s, -s, 0]].
    s = 2.0**-8
    expected = np.array([[0.0, 0.0, 0.0], [-s, 0.0, 0.0], [-2 * s, -s, 0.0]])
    np.testing.assert_array_equal(alibi_bias(1, 3, 3)[0], expected)
    # The last 2 queries of 3 keys are rows 1 and 2 of the square bias.
    np.testing.assert_array_equal(alibi_bias(1, 2, 3)[0], expected[1:])
