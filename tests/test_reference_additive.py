"""Additive (Bahdanau) attention: a case worked by hand, the NumPy reference's hand-written
backward against finite differences and against torch autograd, and the torch module
against the reference, padded sources and an empty one included."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.nn.additive import AdditiveAttention
from attnlab.nn.cross import padding_mask
from attnlab.reference import (
    additive_attention_backward,
    additive_attention_forward,
    finite_difference_grad,
)
from attnlab.verify import check_additive

NAMES = ("s", "h", "w", "u", "v")


def _inputs(seed: int = 0, b: int = 2, i: int = 3, j: int = 5, d_s: int = 4, d_h: int = 3,
            a: int = 6) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = {"s": (b, i, d_s), "h": (b, j, d_h), "w": (a, d_s), "u": (a, d_h), "v": (a,)}
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


MASK = np.array([[True, True, True, False, False], [True] * 5])[:, None, :]  # lengths 3, 5


def test_a_case_worked_by_hand() -> None:
    # One query, two source positions, every width 1: W = U = 1, v = 2, s = 0.
    # h_1 = 0:          e_1 = 2·tanh(0 + 0) = 0
    # h_2 = atanh(1/2): e_2 = 2·tanh(atanh(1/2)) = 2 · 1/2 = 1
    # α = softmax([0, 1]) = [1, e] / (1 + e) = [0.26894, 0.73106]
    # c = α_1·h_1 + α_2·h_2 = 0.73106 · 0.54931 = 0.40158
    h2 = np.arctanh(0.5)
    context, weights, _ = additive_attention_forward(
        np.zeros((1, 1)), np.array([[0.0], [h2]]), np.ones((1, 1)), np.ones((1, 1)),
        np.array([2.0]))
    e = np.e
    assert weights[0] == pytest.approx([1 / (1 + e), e / (1 + e)], abs=1e-12)
    assert context[0, 0] == pytest.approx(e / (1 + e) * h2, abs=1e-12)
    assert context[0, 0] == pytest.approx(0.40158, abs=1e-5)


def test_weights_sum_to_one_over_real_positions_and_are_zero_on_padding() -> None:
    x = _inputs()
    _, weights, _ = additive_attention_forward(*x.values(), mask=MASK)
    assert np.allclose(weights.sum(-1), 1.0)
    assert np.all(weights[0, :, 3:] == 0.0)  # exactly zero, not merely small


@pytest.mark.parametrize("name", NAMES)
def test_hand_backward_equals_finite_differences(name: str) -> None:
    x = _inputs(seed=1)
    dc = np.random.default_rng(2).normal(size=(2, 3, 3))  # ∂loss/∂context
    _, _, cache = additive_attention_forward(*x.values(), mask=MASK)
    grads = additive_attention_backward(dc, cache)

    def loss(value: np.ndarray) -> float:
        args = {**x, name: value}
        return float(np.sum(additive_attention_forward(*args.values(), mask=MASK)[0] * dc))

    numeric = finite_difference_grad(loss, x[name])
    assert np.abs(numeric - getattr(grads, name)).max() < 1e-8


def _module(x: dict[str, np.ndarray]) -> AdditiveAttention:
    a, d_s = x["w"].shape
    module = AdditiveAttention(d_s, x["u"].shape[1], a).double()
    with torch.no_grad():
        module.W.weight.copy_(torch.from_numpy(x["w"]))
        module.U.weight.copy_(torch.from_numpy(x["u"]))
        module.v.weight.copy_(torch.from_numpy(x["v"])[None])
    return module


def test_module_and_hand_backward_equal_torch_autograd_float64() -> None:
    x = _inputs(seed=3)
    dc = np.random.default_rng(4).normal(size=(2, 3, 3))
    context_ref, weights_ref, cache = additive_attention_forward(*x.values(), mask=MASK)
    grads = additive_attention_backward(dc, cache)
    module = _module(x)
    s, h = (torch.from_numpy(x[n]).requires_grad_() for n in ("s", "h"))
    context, weights = module(s, h, padding_mask(torch.tensor([3, 5]), 5))
    assert np.abs(context.detach().numpy() - context_ref).max() < 1e-12
    assert np.abs(weights.detach().numpy() - weights_ref).max() < 1e-12
    (context * torch.from_numpy(dc)).sum().backward()
    autograd = {"s": s.grad, "h": h.grad, "w": module.W.weight.grad,
                "u": module.U.weight.grad, "v": module.v.weight.grad[0]}
    for name in NAMES:
        assert np.abs(autograd[name].numpy() - getattr(grads, name)).max() < 1e-12, name


def test_one_decoder_step_is_one_row_of_the_many_query_form() -> None:
    x = _inputs(seed=5)
    module = _module(x)
    s, h = torch.from_numpy(x["s"]), torch.from_numpy(x["h"])
    keep = padding_mask(torch.tensor([3, 5]), 5)
    many, many_w = module(s, h, keep)
    one, one_w = module(s[:, 1], h, keep, keys=module.project_keys(h))  # (b, d_s): one step
    assert one.shape == (2, 3) and one_w.shape == (2, 5)
    assert torch.allclose(one, many[:, 1]) and torch.allclose(one_w, many_w[:, 1])


def test_padded_source_values_change_nothing() -> None:
    x = _inputs(seed=6)
    module = _module(x)
    s, h = torch.from_numpy(x["s"]), torch.from_numpy(x["h"])
    keep = padding_mask(torch.tensor([3, 5]), 5)
    changed = h.clone()
    changed[0, 3:] = 1e3  # the padded positions of the first source
    assert torch.equal(module(s, h, keep)[0], module(s, changed, keep)[0])


def test_a_source_with_no_real_word_gives_zeros_and_no_gradient() -> None:
    x = _inputs(seed=7)
    empty = np.zeros((2, 1, 5), dtype=bool)
    context, weights, cache = additive_attention_forward(*x.values(), mask=empty)
    assert np.all(context == 0.0) and np.all(weights == 0.0)
    grads = additive_attention_backward(np.ones_like(context), cache)
    assert all(np.all(g == 0.0) for g in grads)
    module = _module(x)
    out, w = module(torch.from_numpy(x["s"]), torch.from_numpy(x["h"]),
                    padding_mask(torch.tensor([0, 0]), 5))
    assert not torch.isnan(out).any() and torch.all(out == 0) and torch.all(w == 0)


def test_the_verify_rows_pass() -> None:
    rows = check_additive()
    assert all(r.ok for r in rows), rows
