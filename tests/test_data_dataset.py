"""The 90/10 split and random training windows (no corpus needed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.data.dataset import sample_batch, split_tokens


def test_split_is_first_ninety_percent_then_the_rest():
    tokens = np.arange(1000)
    train, held = split_tokens(tokens)
    assert train.tolist() == list(range(900)) and held.tolist() == list(range(900, 1000))
    train, held = split_tokens(np.arange(7), frac=0.5)  # floor(3.5) = 3
    assert train.tolist() == [0, 1, 2] and held.tolist() == [3, 4, 5, 6]


@pytest.mark.parametrize(
    ("tokens", "frac", "message"),
    [
        (np.arange(10), 0.0, "frac"),
        (np.arange(10), 1.0, "frac"),
        (np.arange(1), 0.9, "too few"),
        (np.zeros((2, 5)), 0.9, "1-D"),
    ],
)
def test_split_rejects_bad_input(tokens, frac, message):
    with pytest.raises(ValueError, match=message):
        split_tokens(tokens, frac)


def test_batches_are_shifted_windows_of_the_tokens():
    tokens = (np.arange(500) * 7 % 101).astype(np.uint16)  # any dtype is accepted
    x, y = sample_batch(tokens, batch_size=16, n_ctx=12, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (16, 12) and x.dtype == y.dtype == torch.int64
    assert x.is_contiguous() and y.is_contiguous()
    assert torch.equal(x[:, 1:], y[:, :-1])
    for row_x, row_y in zip(x.tolist(), y.tolist(), strict=True):
        start = next(s for s in range(500 - 12) if tokens[s : s + 12].tolist() == row_x)
        assert tokens[start + 1 : start + 13].tolist() == row_y


def test_batches_depend_only_on_the_generator_state():
    tokens = np.arange(1000)
    a = sample_batch(tokens, 8, 16, torch.Generator().manual_seed(3))
    b = sample_batch(tokens, 8, 16, torch.Generator().manual_seed(3))
    c = sample_batch(tokens, 8, 16, torch.Generator().manual_seed(4))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])


def test_every_start_is_reachable_including_the_last():
    # N = 6, T = 4: the only windows are starts 0 and 1 (y of start 1 ends at token 5).
    tokens = np.arange(6)
    x, y = sample_batch(tokens, 200, 4, torch.Generator().manual_seed(0))
    assert set(x[:, 0].tolist()) == {0, 1}
    assert y.max().item() == 5


@pytest.mark.parametrize(
    ("n_tokens", "batch_size", "n_ctx", "message"),
    [(4, 1, 4, "too few"), (100, 0, 4, ">= 1"), (100, 2, 0, ">= 1")],
)
def test_sample_batch_rejects_bad_input(n_tokens, batch_size, n_ctx, message):
    with pytest.raises(ValueError, match=message):
        sample_batch(np.arange(n_tokens), batch_size, n_ctx, torch.Generator())
