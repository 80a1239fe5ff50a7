"""Exercise 13 (additive): the learner's reference solution, self-contained, agrees with the
verified reference ``attnlab.reference.additive`` (W and U stored transposed there, one query
per sentence), padding and a sentence of no words included."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.labs.exercises.additive.solution import additive_attention
from attnlab.reference.additive import additive_attention_forward


@pytest.mark.parametrize("shape", [(1, 1, 1, 1, 1), (2, 5, 3, 4, 6), (4, 9, 8, 8, 3)])
def test_the_solution_agrees_with_the_verified_reference(shape):
    b, n, d_s, d_h, a = shape
    rng = np.random.default_rng(sum(shape))
    s, h = rng.normal(size=(b, d_s)), rng.normal(size=(b, n, d_h))
    w, u, v = rng.normal(size=(d_s, a)), rng.normal(size=(d_h, a)), rng.normal(size=a)
    mask = rng.random((b, n)) < 0.6
    mask[0] = False  # a sentence of no words: zero weights, zero context
    context, weights = additive_attention(s, h, w, u, v, mask)
    ref_context, ref_weights, _ = additive_attention_forward(
        s[:, None, :], h, w.T, u.T, v, mask[:, None, :])  # (b, 1, d_h), (b, 1, n)
    np.testing.assert_allclose(context, ref_context[:, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weights, ref_weights[:, 0], rtol=1e-12, atol=1e-14)
    assert context.shape == (b, d_h) and weights.shape == (b, n)
    assert not np.any(weights[~mask]) and not np.any(context[0])


def test_the_hand_case_of_the_statement():
    ln2, ln3 = np.log(2.0), np.log(3.0)
    context, weights = additive_attention([[1.0]], [[[-ln3], [0.0], [5.0]]], [[ln3]], [[1.0]],
                                          [2.5 * ln2], [[True, True, False]])
    np.testing.assert_allclose(weights, [[0.2, 0.8, 0.0]], atol=1e-15)
    np.testing.assert_allclose(context, [[-0.2 * ln3]])
