"""ExactGELU: the exact-erf GELU by either implementation, at decoding and training sizes,
against float64; gradients are F.gelu's own; the input is never modified."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attnlab.nn.block import ExactGELU


def _reference(x: torch.Tensor) -> torch.Tensor:
    x = x.double()
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


@pytest.mark.parametrize("shape", [(1, 1, 512), (2, 3, 7), (64, 4097)])  # small and large
def test_equals_the_exact_formula_without_grad(shape: tuple[int, ...]) -> None:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 3
    kept = x.clone()
    with torch.no_grad():
        y = ExactGELU()(x)
    assert torch.equal(x, kept)  # the in-place steps work on a copy
    # a few float32 ulps of |x| (1 + erf also cancels for x << 0); F.gelu's vectorised kernels
    # differ by processor: 1.2e-6 at x = 3.47, about 5 ulps, on an AVX-512 Xeon, under 1e-6
    # on an AVX2 EPYC
    bound = 4 * torch.finfo(torch.float32).eps * x.double().abs().clamp(min=1.0)
    assert bool(((y.double() - _reference(x)).abs() <= bound).all())
    assert float((y - F.gelu(x)).abs().max()) < 1e-6
    with torch.inference_mode():
        assert torch.allclose(ExactGELU()(x), y, atol=0, rtol=0)


def test_gradients_are_those_of_f_gelu() -> None:
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    ExactGELU()(x).sum().backward()
    ref = x.detach().clone().requires_grad_(True)
    F.gelu(ref).sum().backward()
    assert torch.equal(x.grad, ref.grad)
    assert torch.autograd.gradcheck(ExactGELU(), (torch.randn(3, 5, dtype=torch.float64,
                                                               requires_grad=True),))
