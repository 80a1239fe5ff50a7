"""Training-side speed choices: which AdamW kernel, and optional ``torch.compile``.

Both are measured choices (``benchmarks/train_throughput.py`` times the step
they make; the figures are in the README), kept here so that the trainer and
the benchmark build the very same step.

- ``make_optimizer``: PyTorch's *fused* AdamW (one kernel over every
  parameter) instead of the default for-loop, which launches a dozen small
  ops per parameter tensor. Same update rule and hyperparameters; the result
  differs from the for-loop's only in the last bits (a different order of the
  same floating-point operations), and is deterministic: a run resumed from
  its checkpoint ends bitwise where an uninterrupted one does. A checkpoint
  keeps the optimizer's settings, so a run resumed from a checkpoint written
  by the for-loop kernel goes on with that kernel (same arithmetic as before).
- ``maybe_compile``: ``torch.compile`` on CUDA when asked. Not on the CPU: on
  this project's 2-core AVX2 machine the compiled step was slower than eager
  once the allocator fix was in (14,978 against 16,820 tokens/s, 1 thread).

Left out: foreach gradient clipping and fused optimizers other than AdamW.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch import nn

from attnlab.train.run_config import TrainConfig

log = logging.getLogger(__name__)


def make_optimizer(model: nn.Module, train_cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW (Loshchilov & Hutter 2019) over ``model``'s parameters, with ``train_cfg``'s
    rate, betas, eps and weight decay, as one fused kernel.

    Measured on the default model (1 block, 2 threads): one step 0.45 ms fused,
    5.2 ms foreach, 7.2 ms for-loop (PyTorch's default on the CPU).

    >>> from attnlab.nn.model_config import ModelConfig
    >>> from attnlab.nn.model import LanguageModel
    >>> make_optimizer(LanguageModel(ModelConfig(d_model=8, n_head=2)), TrainConfig()
    ...                ).defaults["fused"]
    True
    """
    return torch.optim.AdamW(
        model.parameters(), lr=train_cfg.lr, betas=train_cfg.betas, eps=train_cfg.eps,
        weight_decay=train_cfg.weight_decay, fused=True,
    )


def maybe_compile(model: nn.Module, device: torch.device, enabled: bool) -> Any:
    """``torch.compile(model)`` when ``enabled`` on a CUDA ``device``; ``model`` otherwise.

    The compiled module shares ``model``'s parameters but prefixes its state-dict
    keys (``_orig_mod.``): keep ``model`` itself for checkpoints and evaluation and
    use the result only for the training forward. Asked for on the CPU, it logs
    why it stays eager and returns ``model``.
    """
    if not enabled:
        return model
    if device.type != "cuda":
        log.warning("torch.compile is used on CUDA only (on the CPU it was measured slower "
                    "than eager); training %s eagerly", device.type)
        return model
    return torch.compile(model)
