"""The torch attention core and mixers: hand-computed cases, gradients, properties, errors."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.nn.attention import attention, causal_mask, stable_softmax
from attnlab.nn.mixers import MultiHeadAttention, UniformCausalMean
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.positions import alibi_bias, alibi_slopes, rope_rotate, sinusoidal_table
from attnlab.reference import alibi_slopes as np_alibi_slopes
from attnlab.reference import rope as np_rope
from attnlab.reference import sinusoidal as np_sinusoidal


def test_two_token_case_by_hand() -> None:
    # q = k = [[1, 0], [0, 1]], v = [[1, 2], [3, 4]], d_k = 2, causal.
    # Row 0 sees only key 0: weights [1, 0], output v0 = [1, 2].
    # Row 1 scores: q1·k0 = 0, q1·k1 = 1, scaled by 1/√2 -> [0, 0.7071].
    #   weights = [1, e^0.7071] / (1 + e^0.7071) = [0.3302, 0.6698].
    #   output = 0.3302·[1, 2] + 0.6698·[3, 4] = [2.3396, 3.3396].
    q = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]], dtype=torch.float64)
    v = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=torch.float64)
    out, w = attention(q, q, v, causal=True)
    e = math.exp(1 / math.sqrt(2))
    w1 = torch.tensor([1 / (1 + e), e / (1 + e)], dtype=torch.float64)
    assert torch.allclose(w[0, 0, 0], torch.tensor([1.0, 0.0], dtype=torch.float64))
    assert torch.allclose(w[0, 0, 1], w1)
    assert torch.allclose(out[0, 0, 1], w1[0] * v[0, 0, 0] + w1[1] * v[0, 0, 1])
    # Without the division: [1, e] / (1 + e).
    _, w_raw = attention(q, q, v, causal=True, scale=False)
    expected = torch.tensor([1, math.e], dtype=torch.float64) / (1 + math.e)
    assert torch.allclose(w_raw[0, 0, 1], expected)


def test_rows_sum_to_one_and_causal_zeros() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 9, 4) for _ in range(3))
    _, w = attention(q, k, v, causal=True)
    assert torch.allclose(w.sum(-1), torch.ones(2, 3, 9))
    assert (w.masked_select(~causal_mask(9, 9)) == 0).all()


def test_fully_masked_rows_are_zero_not_nan() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 1, 3, 4) for _ in range(3))
    mask = torch.tensor([[True, True, False], [False, False, False], [True, True, True]])
    out, w = attention(q, k, v, causal=False, mask=mask)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    assert (w[0, 0, 1] == 0).all() and (out[0, 0, 1] == 0).all()
    out_fused, _ = attention(q, k, v, causal=False, mask=mask, backend="sdpa")
    assert torch.allclose(out, out_fused, atol=1e-6)
    assert torch.equal(stable_softmax(torch.full((2, 3), float("-inf"))), torch.zeros(2, 3))


def test_neg_inf_masking_survives_float16() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 6, 8).half() for _ in range(3))
    out, w = attention(q, k, v, causal=True)
    assert out.dtype == torch.float16 and torch.isfinite(out).all()
    assert (w.masked_select(~causal_mask(6, 6)) == 0).all()
    ref, _ = attention(q.float(), k.float(), v.float(), causal=True)
    assert (out.float() - ref).abs().max() < 1e-2


def test_gradcheck_core_float64() -> None:
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 3, dtype=torch.float64, requires_grad=True) for _ in range(3))
    bias = alibi_bias(2, 5, 5).double()
    assert torch.autograd.gradcheck(lambda a, b, c: attention(a, b, c, bias=bias)[0], (q, k, v))


def test_gradcheck_multihead_float64() -> None:
    torch.manual_seed(0)
    cfg = ModelConfig(d_model=8, n_head=2, position="rope", qkv_bias=True)
    mha = MultiHeadAttention(cfg).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: mha(t, torch.arange(5)), (x,))


@pytest.mark.parametrize("position", ["none", "rope", "alibi"])
@pytest.mark.parametrize("backend", ["naive", "sdpa"])
def test_future_tokens_do_not_change_past_outputs(position: str, backend: str) -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(ModelConfig(d_model=16, n_head=4, position=position, backend=backend))
    x = torch.randn(1, 10, 16)
    x2 = x.clone()
    x2[:, 6:] = torch.randn(1, 4, 16)
    y1 = mha(x, torch.arange(10))
    y2 = mha(x2, torch.arange(10))
    assert torch.allclose(y1[:, :6], y2[:, :6], atol=1e-6)
    assert not torch.allclose(y1[:, 6:], y2[:, 6:])


def test_permutation_equivariance_without_positions() -> None:
    # Non-causal self-attention with no positions: f(Px) = P f(x).
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 7, 4) for _ in range(3))
    perm = torch.randperm(7)
    out, _ = attention(q, k, v, causal=False)
    out_p, _ = attention(q[:, :, perm], k[:, :, perm], v[:, :, perm], causal=False)
    assert torch.allclose(out[:, :, perm], out_p, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(p=st.integers(0, 500), shift=st.integers(0, 500), offset=st.integers(-20, 20))
def test_rope_scores_depend_only_on_offset(p: int, shift: int, offset: int) -> None:
    gen = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 8, generator=gen, dtype=torch.float64), torch.randn(
        1, 8, generator=gen, dtype=torch.float64
    )
    pq, pk = p + offset if p + offset >= 0 else p, p

    def score(a: int, b: int) -> float:
        return float(rope_rotate(q, torch.tensor([a])) @ rope_rotate(k, torch.tensor([b])).T)

    assert abs(score(pq, pk) - score(pq + shift, pk + shift)) < 1e-9


def test_positions_match_numpy_reference() -> None:
    import numpy as np

    pos = torch.arange(3, 40)
    assert np.abs(sinusoidal_table(pos, 16).numpy() - np_sinusoidal(37, 16, offset=3)).max() < 1e-6
    x = torch.randn(2, 37, 8, dtype=torch.float64)
    assert np.abs(rope_rotate(x, pos).numpy() - np_rope(x.numpy(), pos.numpy())).max() < 1e-12
    for h in (1, 4, 6, 8, 12):
        assert np.allclose(alibi_slopes(h).numpy(), np_alibi_slopes(h))
    assert torch.allclose(alibi_slopes(8), torch.tensor([2.0**-i for i in range(1, 9)]))


def test_uniform_mean_matrix_is_lower_triangular_rows_sum_to_one() -> None:
    x = torch.randn(1, 6, 3)
    _, traced = UniformCausalMean().trace(x, torch.arange(6))
    w = traced.weights[0, 0]
    assert torch.allclose(w.sum(-1), torch.ones(6))
    assert torch.equal(w.triu(1), torch.zeros(6, 6))
    assert torch.allclose(w[3, :4], torch.full((4,), 0.25))


def test_bad_shapes_raise() -> None:
    with pytest.raises(ValueError, match="batch, heads"):
        attention(torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3))
    with pytest.raises(ValueError, match="shape mismatch"):
        attention(torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 5), torch.randn(1, 1, 3, 4))
    with pytest.raises(ValueError, match="boolean"):
        attention(*(torch.randn(1, 1, 3, 4) for _ in range(3)), mask=torch.zeros(3, 3))
    with pytest.raises(ValueError, match="backend"):
        attention(*(torch.randn(1, 1, 3, 4) for _ in range(3)), backend="flash")


@pytest.mark.parametrize("case", ["causal", "cached", "alibi", "mask"])
def test_fused_kernel_matches_the_readable_one(case: str) -> None:
    # Each branch of the sdpa backend (plain causal self-attention goes straight to
    # is_causal; the others build an additive mask), forward and gradients.
    torch.manual_seed(0)
    n_query = 3 if case == "cached" else 7
    q = torch.randn(2, 2, n_query, 4, dtype=torch.float64, requires_grad=True)
    k, v = (torch.randn(2, 2, 7, 4, dtype=torch.float64, requires_grad=True) for _ in range(2))
    kwargs = {
        "causal": {}, "cached": {},
        "alibi": {"bias": alibi_bias(2, 7, 7).double()},
        "mask": {"causal": False, "mask": torch.rand(7, 7) > 0.3},
    }[case]
    grads = []
    for backend in ("naive", "sdpa"):
        out, _ = attention(q, k, v, backend=backend, **kwargs)
        grads.append((out, *torch.autograd.grad(out.square().sum(), (q, k, v))))
    for ours, fused in zip(*grads, strict=True):
        assert torch.allclose(ours, fused, atol=1e-12)
