"""The recurrent mixers: equal to torch.nn.RNN / torch.nn.LSTM on copied weights (outputs and
gradients), causal, one dependent step per position, the same with and without the decoding
cache, trainable by the project's trainer, and traced without attention."""

from __future__ import annotations

import pytest
import torch

from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.nn.recurrent import FORGET_BIAS, LSTM, ElmanRNN, copy_from_torch
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

REFERENCES = {"rnn": lambda c: torch.nn.RNN(c, c, nonlinearity="tanh", batch_first=True),
              "lstm": lambda c: torch.nn.LSTM(c, c, batch_first=True)}


def _mixer(kind: str, c: int = 12):
    cfg = ModelConfig(d_model=c, mixer=kind, position="none")
    return (ElmanRNN if kind == "rnn" else LSTM)(cfg)


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_equals_torch_on_copied_weights(kind: str) -> None:
    torch.manual_seed(0)
    reference = REFERENCES[kind](12)
    mixer = _mixer(kind)
    copy_from_torch(mixer, reference)
    x = torch.randn(3, 17, 12, requires_grad=True)  # (b, t, c)
    x_ref = x.detach().clone().requires_grad_(True)
    ours = mixer(x, torch.arange(17))
    theirs = reference(x_ref)[0]
    assert (ours - theirs).abs().max().item() <= 1e-6
    ours.square().sum().backward()
    theirs.square().sum().backward()
    assert (x.grad - x_ref.grad).abs().max().item() <= 1e-5
    assert (mixer.hh.weight.grad - reference.weight_hh_l0.grad).abs().max().item() <= 1e-5


def test_lstm_starts_with_its_forget_gate_open() -> None:
    torch.manual_seed(0)
    bias = _mixer("lstm", 16).hh.bias.detach()
    bound = 1 / 16**0.5
    assert bias[16:32].min() >= FORGET_BIAS - bound and bias[:16].max() <= bound


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_changing_a_future_token_leaves_the_past_unchanged(kind: str) -> None:
    torch.manual_seed(1)
    model = LanguageModel(ModelConfig(vocab_size=20, n_ctx=16, d_model=8, n_layer=2, mixer=kind,
                                      position="none")).eval()
    idx = torch.randint(0, 20, (2, 16))
    changed = idx.clone()
    changed[:, 9] = (changed[:, 9] + 1) % 20
    a, b = model(idx), model(changed)
    assert torch.equal(a[:, :9], b[:, :9])
    assert not torch.allclose(a[:, 9:], b[:, 9:])


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_one_dependent_step_per_position(kind: str) -> None:
    mixer = _mixer(kind)
    assert [mixer.sequential_steps(t) for t in (1, 32, 1024)] == [1, 32, 1024]


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_generation_with_the_kept_state_equals_recomputing(kind: str) -> None:
    torch.manual_seed(2)
    model = LanguageModel(ModelConfig(vocab_size=30, n_ctx=32, d_model=16, n_layer=2,
                                      mixer=kind, position="none"))
    prompt = torch.randint(0, 30, (2, 5))
    cached = model.generate(prompt, 12, temperature=0, use_cache=True)
    recomputed = model.generate(prompt, 12, temperature=0, use_cache=False)
    assert torch.equal(cached, recomputed)
    full = model.eval()(cached)
    from attnlab.nn.cache import KVCache
    cache = KVCache(2)
    with torch.no_grad():
        steps = [model(cached[:, :5], cache=cache)] + [
            model(cached[:, t : t + 1], cache=cache) for t in range(5, cached.shape[1])]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_trace_has_no_attention_and_the_same_logits(kind: str) -> None:
    model = LanguageModel(ModelConfig(vocab_size=10, n_ctx=8, d_model=8, mixer=kind,
                                      position="none")).eval()
    idx = torch.randint(0, 10, (1, 8))
    trace = model.trace(idx)
    assert trace.weights == [None]
    assert torch.allclose(trace.logits, model(idx))


def test_unknown_mixer_is_refused() -> None:
    with pytest.raises(ValueError, match="rnn, lstm"):
        ModelConfig(mixer="gru")


def test_the_trainer_trains_an_lstm(tmp_path) -> None:
    from attnlab.train.trainer import train

    stream = torch.arange(40).remainder(5).repeat(20).numpy()  # 0 1 2 3 4 0 1 ...: learnable
    data = type("Data", (), {"train": stream, "held": stream[:200]})()
    cfg = RunConfig(model=ModelConfig(vocab_size=5, n_ctx=8, d_model=16, mixer="lstm",
                                      position="none"),
                    train=TrainConfig(steps=60, lr=1e-2, batch_size=8, eval_every=0,
                                      ckpt_every=0, log_every=30, device="cpu"),
                    data=DataConfig(vocab_size=5))
    record = train(cfg, tmp_path / "run", data=data)
    assert record["held_ppl"] < 2.0  # chance is 5: the recurrence carries the position
