"""Perplexity: windows, exact values for models whose logits we control, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnlab.data.perplexity import exp_nll, nll_sum_and_count, perplexity, train_eval_slice


def uniform(vocab: int):
    return lambda x: torch.zeros(*x.shape, vocab)


def test_uniform_logits_give_perplexity_v():
    # -log(1/V) at every target, so exp(mean NLL) = V exactly (up to float32 log).
    tokens = np.random.default_rng(0).integers(0, 50, size=1001)
    for n_ctx in (1, 7, 128, 5000):
        assert perplexity(uniform(50), tokens, n_ctx) == pytest.approx(50.0, rel=1e-6)


@pytest.mark.parametrize(("n", "n_ctx"), [(7, 3), (8, 3), (2, 5), (129, 128), (1000, 64)])
def test_every_token_after_the_first_is_predicted_once(n, n_ctx):
    seen_x = []
    tokens = np.arange(n) % 97

    def recording(x):
        seen_x.append(x.clone())
        return torch.zeros(*x.shape, 97)

    total, count = nll_sum_and_count(recording, tokens, n_ctx, batch_size=4)
    assert count == n - 1 and total == pytest.approx((n - 1) * math.log(97), rel=1e-6)
    fed = torch.cat([x.reshape(-1) for x in seen_x]).tolist()
    assert fed == tokens[:-1].tolist()  # windows are consecutive, non-overlapping, in order
    assert all(x.shape[1] == n_ctx for x in seen_x[:-1])


def test_hand_worked_windows():
    # N = 8 tokens, T = 3: windows start at 0 and 3 (full), then 6 (short, 1 target):
    #   x = [0 1 2] -> y = [1 2 3];  x = [3 4 5] -> y = [4 5 6];  x = [6] -> y = [7].
    calls = []

    def recording(x):
        calls.append(x.tolist())
        return torch.zeros(*x.shape, 8)

    nll_sum_and_count(recording, np.arange(8), n_ctx=3, batch_size=64)
    assert calls == [[[0, 1, 2], [3, 4, 5]], [[6]]]


def test_a_model_that_knows_the_next_token_has_perplexity_one():
    # tokens count up mod V; a model putting all mass on (input + 1) mod V is never wrong,
    # which also proves targets are the inputs shifted by one.
    vocab = 11
    tokens = np.arange(300) % vocab

    def next_token(x):
        return 100.0 * torch.nn.functional.one_hot((x + 1) % vocab, vocab).float()

    assert perplexity(next_token, tokens, n_ctx=16) == pytest.approx(1.0, abs=1e-6)
    off_by_one = lambda x: next_token(x + 1)  # noqa: E731 - predicts two ahead
    assert perplexity(off_by_one, tokens, n_ctx=16) > 1e6


def test_bigram_count_model_matches_a_hand_count():
    # A bigram model ignores context, so windowing cannot change its NLL: the perplexity must
    # equal exp(-mean log p(t[i+1] | t[i])) counted directly over all N - 1 transitions.
    rng = np.random.default_rng(1)
    vocab = 6
    tokens = rng.integers(0, vocab, size=777)
    counts = np.ones((vocab, vocab))  # add-one smoothing
    np.add.at(counts, (tokens[:-1], tokens[1:]), 1)
    probs = counts / counts.sum(axis=1, keepdims=True)
    expected = math.exp(-np.mean(np.log(probs[tokens[:-1], tokens[1:]])))
    table = torch.tensor(np.log(probs), dtype=torch.float64)
    bigram = lambda x: table[x]  # noqa: E731 - (B, T) -> (B, T, V)
    for n_ctx, batch in [(1, 64), (10, 7), (64, 3), (1000, 1)]:
        assert perplexity(bigram, tokens, n_ctx, batch) == pytest.approx(expected, rel=1e-6)


def test_deterministic_and_independent_of_batch_size():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(20, 8), torch.nn.Linear(8, 20))
    tokens = np.random.default_rng(2).integers(0, 20, size=513)
    a = perplexity(model, tokens, n_ctx=32, batch_size=64)
    assert a == perplexity(model, tokens, n_ctx=32, batch_size=64)
    assert a == pytest.approx(perplexity(model, tokens, n_ctx=32, batch_size=1), rel=1e-6)


def test_no_grad_and_eval_mode_then_mode_restored():
    class Probe(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = torch.nn.Dropout(0.9)
            self.out = torch.nn.Linear(1, 5)

        def forward(self, x):
            assert not torch.is_grad_enabled() and not self.training
            return self.out(self.drop(x[..., None].float()))

    model = Probe().train()
    first = perplexity(model, np.arange(100) % 5, n_ctx=10)
    assert model.training  # given back in train mode
    assert first == perplexity(model, np.arange(100) % 5, n_ctx=10)  # dropout was off


@pytest.mark.parametrize(
    ("fn", "tokens", "n_ctx", "message"),
    [
        (uniform(5), np.arange(1), 4, "at least 2"),
        (uniform(5), np.zeros((2, 3), dtype=int), 4, "1-D"),
        (uniform(5), np.arange(5), 0, ">= 1"),
        (lambda x: torch.zeros(x.shape[0], 5), np.arange(5), 4, "logits"),
        (uniform(3), np.arange(5), 4, "outside"),
    ],
)
def test_bad_input_raises_value_error(fn, tokens, n_ctx, message):
    with pytest.raises(ValueError, match=message):
        perplexity(fn, tokens, n_ctx)


def test_train_eval_slice_is_the_first_n_tokens():
    train = np.arange(100)
    assert train_eval_slice(train, 10).tolist() == list(range(10))
    assert len(train_eval_slice(train, 100)) == 100
    for bad in (1, 101):
        with pytest.raises(ValueError, match="n_tokens"):
            train_eval_slice(train, bad)


def test_an_exploded_loss_has_perplexity_inf_not_an_overflow():
    # Confidently wrong: every target scores 1,000 nats below the argmax (exp(1000) > 1e308).
    def wrong(x: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(*x.shape, 5)
        logits[..., 0] = 1000.0
        return logits

    tokens = np.arange(1, 5).repeat(5)  # never token 0
    assert perplexity(wrong, tokens, n_ctx=4) == math.inf
    assert exp_nll(709.0) == pytest.approx(math.exp(709.0)) and exp_nll(710.0) == math.inf
    assert math.isnan(exp_nll(math.nan))
