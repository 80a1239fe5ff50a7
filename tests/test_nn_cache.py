"""The KV cache's growing buffers: the same tensors as concatenation, whether sized once or
grown; generation with them equals generation without a cache; what generate returns is an
ordinary tensor."""

from __future__ import annotations

import pytest
import torch

from attnlab.nn.cache import KVCache, LayerCache
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig


@pytest.mark.parametrize("capacity", [None, 1, 7, 64])
def test_append_equals_concatenation(capacity: int | None) -> None:
    torch.manual_seed(0)
    cache, kept = LayerCache(capacity), None
    for n in [3, 1, 1, 4, 1, 1, 1, 5]:  # a prompt, then single tokens and a longer chunk
        new = torch.randn(2, 4, n, 8)  # (b, h, t, d)
        kept = new if kept is None else torch.cat([kept, new], dim=2)
        got = cache.append("k", new, dim=2)
        assert torch.equal(got, kept)
    assert "k" in cache and "v" not in cache


def test_a_view_handed_out_keeps_its_values_when_the_buffer_grows() -> None:
    cache = LayerCache()
    first = cache.append("x", torch.ones(1, 2, 3), dim=1)  # (b, s, c)
    for _ in range(5):
        cache.append("x", torch.zeros(1, 1, 3), dim=1)
    assert torch.equal(first, torch.ones(1, 2, 3))


def test_kvcache_sized_once_allocates_once() -> None:
    cache = KVCache(2, capacity=10)
    layer = cache.layers[0]
    first = layer.append("k", torch.zeros(1, 1, 4, 2), dim=2)
    for _ in range(6):
        last = layer.append("k", torch.zeros(1, 1, 1, 2), dim=2)
    assert last.untyped_storage().data_ptr() == first.untyped_storage().data_ptr()
    assert last.shape == (1, 1, 10, 2)


@pytest.mark.parametrize("mixer,position", [("mha", "learned"), ("mha", "rope"),
                                            ("mha", "alibi"), ("head", "none"),
                                            ("mean", "sinusoidal")])
def test_generation_with_cache_equals_without(mixer: str, position: str) -> None:
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(vocab_size=41, n_ctx=40, d_model=16, n_head=4, n_layer=2,
                                      mixer=mixer, position=position))
    prompt = torch.randint(0, 41, (2, 5))
    cached = model.generate(prompt, 30, temperature=0)
    assert torch.equal(cached, model.generate(prompt, 30, temperature=0, use_cache=False))
    # Decoding by hand through a cache that grows (no capacity) gives the same logits.
    cache = KVCache(2)
    with torch.no_grad():
        full = model(cached[:, :-1])
        steps = [model(cached[:, :5], cache=cache)]
        steps += [model(cached[:, i : i + 1], cache=cache) for i in range(5, 34)]
    assert torch.allclose(full, torch.cat(steps, 1), atol=1e-5)


def test_generate_returns_an_ordinary_tensor() -> None:
    model = LanguageModel(ModelConfig(vocab_size=17, n_ctx=16, d_model=8, n_head=2))
    out = model.generate(torch.zeros(1, 2, dtype=torch.long), 5, temperature=0)
    assert not torch.is_inference(out) and out.shape == (1, 7)
    assert model.training  # generate restores the mode it found
    model(out)  # usable in an autograd-recording forward
