"""attnlab.train.speed: the fused AdamW has the run's hyperparameters, is deterministic and
resumes bit for bit through a checkpoint; torch.compile stays off on the CPU."""

from __future__ import annotations

from pathlib import Path

import torch

from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.train.checkpoint import load_checkpoint, save_checkpoint
from attnlab.train.run_config import TrainConfig
from attnlab.train.speed import make_optimizer, maybe_compile

CFG = ModelConfig(vocab_size=29, n_ctx=8, d_model=16, n_head=2, n_layer=2)


def _batches(n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(3)
    return [(torch.randint(0, 29, (4, 8), generator=gen), torch.randint(0, 29, (4, 8),
             generator=gen)) for _ in range(n)]


def _train(model: LanguageModel, optimizer: torch.optim.Optimizer, batches: list) -> None:
    for x, y in batches:
        loss = model.loss(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def _fresh(tc: TrainConfig) -> tuple[LanguageModel, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = LanguageModel(CFG)
    return model, make_optimizer(model, tc)


def test_optimizer_is_fused_adamw_with_the_run_hyperparameters() -> None:
    tc = TrainConfig(lr=3e-3, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)
    model, opt = _fresh(tc)
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.AdamW) and group["fused"] is True
    assert (group["lr"], group["betas"], group["eps"], group["weight_decay"]) == (
        3e-3, (0.8, 0.95), 1e-6, 0.1)
    assert len(group["params"]) == len(list(model.parameters()))


def test_fused_is_the_same_update_as_the_for_loop_to_rounding() -> None:
    tc = TrainConfig()
    fused, opt = _fresh(tc)
    _train(fused, opt, _batches(5))
    torch.manual_seed(0)
    plain = LanguageModel(CFG)
    _train(plain, torch.optim.AdamW(plain.parameters(), lr=tc.lr, weight_decay=tc.weight_decay),
           _batches(5))
    for a, b in zip(fused.parameters(), plain.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_fused_training_resumes_bit_for_bit(tmp_path: Path) -> None:
    tc, batches = TrainConfig(), _batches(6)
    straight, opt = _fresh(tc)
    _train(straight, opt, batches)
    first, opt = _fresh(tc)
    _train(first, opt, batches[:3])
    save_checkpoint(tmp_path, first, opt, {"step": 3})
    resumed, opt2 = _fresh(tc)
    load_checkpoint(tmp_path / "checkpoint", resumed, opt2)
    assert opt2.param_groups[0]["fused"] is True
    _train(resumed, opt2, batches[3:])
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)


def test_compile_stays_off_on_the_cpu() -> None:
    model = LanguageModel(CFG)
    assert maybe_compile(model, torch.device("cpu"), enabled=False) is model
    assert maybe_compile(model, torch.device("cpu"), enabled=True) is model


def test_compile_on_cuda_wraps_the_model_and_shares_its_parameters() -> None:
    model = LanguageModel(CFG)
    compiled = maybe_compile(model, torch.device("cuda"), enabled=True)  # compiles lazily
    assert compiled is not model and compiled._orig_mod is model
    assert list(compiled.parameters())[0] is list(model.parameters())[0]
