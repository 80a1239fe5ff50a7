"""The language model built from ModelConfig: every combination runs, cache == no cache,
config errors, generation, and the equivalence rows of docs/model.md as tests."""

from __future__ import annotations

import itertools

import pytest
import torch

from attnlab.nn.model import KVCache, LanguageModel
from attnlab.nn.model_config import ModelConfig, gpt2_config
from attnlab.nn.params import breakdown, breakdown_table, gpt2_formula
from attnlab.verify import (
    check_fused,
    check_gpt2_params,
    check_hf_gpt2,
    check_kv_cache,
    check_means,
    check_memeff,
    check_numpy_reference,
    check_sdpa,
    check_torch_mha,
)

COMBOS = list(
    itertools.product(["none", "mean", "head", "mha"], ["none", "learned", "sinusoidal", "rope",
                                                        "alibi"], ["none", "pre", "post"])
)


@pytest.mark.parametrize("mixer,position,norm", COMBOS)
def test_kv_cache_equals_full_forward(mixer: str, position: str, norm: str) -> None:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=31, n_ctx=12, d_model=16, n_layer=2, mixer=mixer, n_head=4,
                      position=position, norm=norm)
    model = LanguageModel(cfg).eval()
    idx = torch.randint(0, 31, (2, 11))
    cache = KVCache(2)
    with torch.no_grad():
        full = model(idx)
        pieces = [model(idx[:, :5], cache=cache), model(idx[:, 5:6], cache=cache),
                  model(idx[:, 6:], cache=cache)]
    assert torch.allclose(full, torch.cat(pieces, 1), atol=1e-5)


@pytest.mark.parametrize("position", ["none", "learned", "rope", "alibi"])
def test_changing_future_tokens_leaves_past_logits(position: str) -> None:
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=31, n_ctx=16, d_model=16, n_layer=2,
                                      position=position)).eval()
    idx = torch.randint(0, 31, (1, 16))
    idx2 = idx.clone()
    idx2[0, 10:] = (idx2[0, 10:] + 1) % 31
    with torch.no_grad():
        assert torch.allclose(model(idx)[:, :10], model(idx2)[:, :10], atol=1e-6)


def test_generate_cache_matches_no_cache_and_seed_is_fixed() -> None:
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=40, n_ctx=32, d_model=16, n_layer=2))
    prompt = torch.randint(0, 40, (1, 4))
    greedy = model.generate(prompt, 20, temperature=0)
    assert torch.equal(greedy, model.generate(prompt, 20, temperature=0, use_cache=False))
    a = model.generate(prompt, 20, temperature=1.0, top_k=5, seed=7)
    b = model.generate(prompt, 20, temperature=1.0, top_k=5, seed=7)
    assert torch.equal(a, b) and a.shape == (1, 24)
    with pytest.raises(ValueError, match="learned"):
        model.generate(prompt, 40)
    with pytest.raises(ValueError, match="top_k"):
        model.generate(prompt, 2, top_k=0)


def test_top_k_one_is_greedy() -> None:
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=40, n_ctx=32, d_model=16))
    prompt = torch.randint(0, 40, (1, 3))
    assert torch.equal(model.generate(prompt, 10, top_k=1, seed=3),
                       model.generate(prompt, 10, temperature=0))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_head": 3}, "does not divide"),
        ({"position": "absolute"}, "unknown position"),
        ({"mixer": "gru"}, "unknown mixer"),
        ({"norm": "middle"}, "unknown norm"),
        ({"n_pos": 8}, "n_pos"),
        ({"dropout": 1.5}, "dropout"),
    ],
)
def test_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ModelConfig(**kwargs)


def test_config_round_trip_and_unknown_keys() -> None:
    cfg = ModelConfig(position="rope", n_layer=3)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown ModelConfig field"):
        ModelConfig.from_dict({"d_modle": 3})


def test_positions_beyond_learned_table_raise() -> None:
    model = LanguageModel(ModelConfig(vocab_size=10, n_ctx=8, d_model=8))
    with pytest.raises(ValueError, match="position table"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="batch, positions"):
        model(torch.zeros(9, dtype=torch.long))


def test_parameter_breakdown_default_and_ladder_rows() -> None:
    # No context: embedding V·d + output layer d·V + V.
    row1 = ModelConfig(mixer="none", position="none", mlp=False, norm="none")
    assert breakdown(row1).total == 1024 * 128 * 2 + 1024
    # Four heads + W_o add 16,512 = 128² + 128 over one head of width 128.
    head = ModelConfig(mixer="head", mlp=False, norm="none")
    mha = head.replace(mixer="mha")
    assert breakdown(mha).total - breakdown(head).total == 16_512
    # Pre-norm: LN before each sublayer and at the end = 3 · 2 · 128 = 768.
    with_mlp = mha.replace(mlp=True)
    assert breakdown(with_mlp.replace(norm="pre")).total - breakdown(with_mlp).total == 768


def test_breakdown_table_names_the_mixer_in_attentions_place() -> None:
    lstm = ModelConfig(mixer="lstm", position="none", d_model=16)
    header = breakdown_table(lstm).splitlines()[0]
    assert header.startswith("| part | LSTM (recurrence) | MLP |") and "attention" not in header
    assert breakdown(lstm).per_block[0]["attention"] == 2 * (16 * 64 + 64)  # W_ih, W_hh, biases
    assert "| part | attention |" in breakdown_table(ModelConfig(d_model=16))


def test_gpt2_small_parameter_count() -> None:
    assert gpt2_formula(768, 12, 50257, 1024) == 124_439_808
    bd = breakdown(gpt2_config())
    assert bd.total == 124_439_808
    assert abs(bd.mlp_share - 2 / 3) < 0.01


def test_dropout_places_are_active_only_in_training() -> None:
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=20, n_ctx=8, d_model=16, dropout=0.5))
    idx = torch.randint(0, 20, (2, 8))
    model.eval()
    assert torch.equal(model(idx), model(idx))
    model.train()
    assert not torch.equal(model(idx), model(idx))


@pytest.mark.parametrize(
    "check",
    [check_torch_mha, check_sdpa, check_fused, check_numpy_reference, check_kv_cache,
     check_memeff, check_hf_gpt2],
)
def test_equivalence_rows(check) -> None:  # noqa: ANN001
    row = check()
    assert row.ok, f"{row.name}: {row.diff:.2e} > {row.tol:.0e}"


def test_mean_rows() -> None:
    for row in check_means():
        assert row.ok, row


def test_gpt2_params_against_hugging_face() -> None:
    for row in check_gpt2_params():
        assert row.ok, row.name
