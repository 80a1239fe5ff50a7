"""The model core: one trace API, one fused q/k/v map, kernels that agree, no host syncs."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest
import torch
from safetensors.torch import load_model, save_file

from attnlab.nn.attention import kernel
from attnlab.nn.mixers import AttentionHead, MultiHeadAttention
from attnlab.nn.model import LanguageModel, next_token_loss
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.trace import Trace

CONFIGS = {
    "mha-learned": {},
    "mha-rope": {"position": "rope"},
    "mha-alibi": {"position": "alibi"},
    "mha-sinusoidal-post": {"position": "sinusoidal", "norm": "post"},
    "mha-unscaled-bias": {"scale": False, "qkv_bias": True, "norm": "none"},
    "head-wide-qk": {"mixer": "head", "head_dim": 24},
}


def _model(**changes: object) -> LanguageModel:
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=61, n_ctx=12, d_model=16, n_layer=2, n_head=4, **changes)
    return LanguageModel(cfg).double().eval()


@pytest.mark.parametrize("changes", CONFIGS.values(), ids=CONFIGS.keys())
def test_trace_weights_are_the_softmax_of_q_k_computed_by_hand(changes) -> None:
    model = _model(**changes)
    idx = torch.randint(0, 61, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        trace = model.trace(idx)
        assert isinstance(trace, Trace) and len(trace.blocks) == 2
        torch.testing.assert_close(trace.logits, model(idx), atol=1e-12, rtol=0)
        x = model.tok(idx) + (model.pos(0, 12) if model.pos is not None else 0)  # (b, t, c)
        first = trace.blocks[0]
        block = model.blocks[0]
        expected_input = block.norm1(x) if model.cfg.norm == "pre" else x
        torch.testing.assert_close(first.x, expected_input, atol=0, rtol=0)
        for record in trace.blocks:
            d_k = record.q.shape[-1]
            assert record.scale == (1 / math.sqrt(d_k) if model.cfg.scale else 1.0)
            by_hand = record.q @ record.k.transpose(-2, -1) * record.scale  # (b, h, t, s)
            if record.bias is not None:
                by_hand = by_hand + record.bias
            torch.testing.assert_close(record.scores, by_hand, atol=1e-12, rtol=0)
            causal = torch.ones(12, 12, dtype=torch.bool).tril()
            weights = torch.softmax(by_hand.masked_fill(~causal, -math.inf), dim=-1)
            torch.testing.assert_close(record.weights, weights, atol=1e-12, rtol=0)


def test_trace_of_the_mean_and_of_no_mixer() -> None:
    idx = torch.randint(0, 61, (1, 7))
    mean = _model(mixer="mean").trace(idx).blocks[0]
    assert mean.q is None and mean.scores is None
    torch.testing.assert_close(mean.weights[0, 0].sum(-1), torch.ones(7, dtype=torch.float64))
    assert torch.equal(mean.weights[0, 0].triu(1), torch.zeros(7, 7, dtype=torch.float64))
    none = _model(mixer="none").trace(idx)
    assert [b.weights for b in none.blocks] == [None, None]


def test_forward_has_one_return_type_and_loss_is_next_token_loss() -> None:
    model = _model()
    idx = torch.randint(0, 61, (2, 12))
    targets = torch.randint(0, 61, (2, 12))
    logits = model(idx)
    assert isinstance(logits, torch.Tensor) and logits.shape == (2, 12, 61)
    expected = torch.nn.functional.cross_entropy(logits.reshape(-1, 61), targets.reshape(-1))
    torch.testing.assert_close(model.loss(idx, targets), expected)
    torch.testing.assert_close(next_token_loss(logits, targets), expected)
    assert next_token_loss(logits.to(torch.bfloat16), targets).dtype == torch.float32


@pytest.mark.parametrize("mixer", ["mha", "head"])
def test_fused_projection_equals_three_separate_maps(mixer: str) -> None:
    torch.manual_seed(3)
    cfg = ModelConfig(d_model=16, n_head=4, mixer=mixer, head_dim=8, qkv_bias=True,
                      position="none")
    attn = MultiHeadAttention(cfg) if mixer == "mha" else AttentionHead(cfg)
    separate = []
    for w, b in zip(attn.qkv.weight.split(attn.widths), attn.qkv.bias.split(attn.widths),
                    strict=True):
        lin = torch.nn.Linear(16, w.shape[0])
        lin.weight.data.copy_(w)
        lin.bias.data.copy_(b)
        separate.append(lin)
    x = torch.randn(2, 5, 16)
    q, k, v = attn.project(x, torch.arange(5))  # (b, h, t, d) each
    h = attn.n_head
    for got, lin in zip((q, k, v), separate, strict=True):
        expected = lin(x).view(2, 5, h, -1).transpose(1, 2)  # (b, h, t, d)
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)


def test_fused_init_draws_the_same_weights_as_three_maps_in_order() -> None:
    torch.manual_seed(7)
    fused = MultiHeadAttention(ModelConfig(d_model=32, n_head=4, position="none"))
    torch.manual_seed(7)
    maps = [torch.nn.Linear(32, 32, bias=False) for _ in "qkv"]
    out = torch.nn.Linear(32, 32)
    assert torch.equal(fused.qkv.weight, torch.cat([m.weight for m in maps]))
    assert torch.equal(fused.o.weight, out.weight) and torch.equal(fused.o.bias, out.bias)


def test_checkpoints_written_with_separate_q_k_v_maps_still_load(tmp_path) -> None:
    model = _model(qkv_bias=True).float()
    old = {}
    for name, tensor in model.state_dict().items():
        if name.endswith("qkv.weight") or name.endswith("qkv.bias"):
            prefix, kind = name.rsplit("qkv.", 1)
            for part, chunk in zip("qkv", tensor.chunk(3), strict=True):
                old[f"{prefix}{part}.{kind}"] = chunk.clone()
        else:
            old[name] = tensor.clone()
    assert "blocks.0.mixer.q.weight" in old and "blocks.0.mixer.qkv.weight" not in old
    save_file(old, str(tmp_path / "model.safetensors"))
    fresh = LanguageModel(model.cfg)
    missing, unexpected = load_model(fresh, str(tmp_path / "model.safetensors"), strict=False)
    assert not missing and not unexpected
    idx = torch.randint(0, 61, (1, 12))
    assert torch.equal(fresh(idx), model(idx))


@pytest.mark.parametrize("position", ["none", "rope", "alibi"])
@pytest.mark.parametrize("backend", ["auto", "sdpa", "memeff"])
def test_every_kernel_equals_the_readable_one_in_values_and_gradients(position, backend) -> None:
    base = ModelConfig(d_model=16, n_head=4, position=position)
    torch.manual_seed(4)
    naive = MultiHeadAttention(base.replace(backend="naive")).double()
    other = MultiHeadAttention(base.replace(backend=backend)).double()
    other.load_state_dict(naive.state_dict())
    x = torch.randn(2, 9, 16, dtype=torch.float64, requires_grad=True)
    y_naive = naive(x, torch.arange(9))
    y_other = other(x, torch.arange(9))
    torch.testing.assert_close(y_other, y_naive, atol=1e-12, rtol=0)
    g = torch.randn_like(y_naive)
    grads_naive = torch.autograd.grad(y_naive, [x, *naive.parameters()], g)
    grads_other = torch.autograd.grad(y_other, [x, *other.parameters()], g)
    for a, b in zip(grads_other, grads_naive, strict=True):
        torch.testing.assert_close(a, b, atol=1e-11, rtol=0)


def test_default_kernel_is_the_fast_one_and_any_kernel_loads_any_checkpoint() -> None:
    assert ModelConfig().backend == "auto"
    assert LanguageModel(ModelConfig(n_layer=1)).blocks[0].mixer.kernel is kernel("sdpa")
    model = _model()
    idx = torch.randint(0, 61, (2, 12))
    for backend in ("naive", "sdpa", "memeff"):
        other = LanguageModel(model.cfg.replace(backend=backend)).double().eval()
        other.load_state_dict(model.state_dict())
        torch.testing.assert_close(other(idx), model(idx), atol=1e-10, rtol=0)


@pytest.mark.parametrize("position", ["learned", "sinusoidal", "rope", "alibi"])
def test_forward_makes_no_host_sync(position: str, monkeypatch) -> None:
    """A CUDA forward must never wait to read a value back (``int(t)``, ``.item()``...)."""
    model = _model(position=position)
    idx = torch.randint(0, 61, (2, 12))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("forward read a tensor value back to the host")

    for name in ("item", "tolist", "numpy", "__int__", "__float__", "__bool__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, refuse)
    model(idx)
    model(idx[:, :3])


def test_sinusoids_beyond_the_table_are_computed_not_refused() -> None:
    model = _model(position="sinusoidal")
    long = model.pos(10, 8)  # positions 10..17 of a 12-row buffer
    from attnlab.nn.positions import sinusoidal_table

    torch.testing.assert_close(long, sinusoidal_table(torch.arange(10, 18), 16))
    assert torch.equal(model.pos(0, 12), model.pos.sines)


def test_memeff_alibi_stays_linear_in_memory_at_n_16384() -> None:
    """ALiBi reaches the tiled kernel as slopes: a (h, n, n) bias of 2 GiB never exists.

    A fresh interpreter gets 600 MiB of address space above what torch's import
    mapped; the full bias alone (2 heads × 16,384² × 4 bytes) would be 2 GiB.
    """
    code = textwrap.dedent("""
        import resource, torch
        from attnlab.nn.model_config import ModelConfig
        from attnlab.nn.mixers import MultiHeadAttention
        torch.set_num_threads(1)
        layer = MultiHeadAttention(ModelConfig(d_model=8, n_head=2, position="alibi",
                                               backend="memeff"))
        x = torch.randn(1, 16384, 8)
        vsz = int(open("/proc/self/stat").read().split()[22])
        resource.setrlimit(resource.RLIMIT_AS, (vsz + (600 << 20),) * 2)
        with torch.no_grad():
            y = layer(x, torch.arange(16384))
        print("ok", tuple(y.shape))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ok (1, 16384, 8)" in done.stdout
