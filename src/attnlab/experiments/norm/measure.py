"""The measurement of "Pre-norm or post-norm" besides training: the gradient of each block
at initialisation, on the run's own first batch (Xiong et al. 2020).

Dimension legend: ``b`` batch, ``t`` positions.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig


def grad_norms_at_init(
    cfg: ModelConfig, train_tokens: Any, batch_size: int, seed: int, device: Any = "cpu"
) -> list[float]:
    """L2 norm of each block's parameter gradient after one ``loss.backward()`` at init.

    The model is built as the trainer builds it (``torch.manual_seed(seed)`` then
    ``LanguageModel``), and the batch is the first one the trainer's sampler draws
    with that seed, so these are the gradients of the run's very first update.
    """
    from attnlab.data.dataset import sample_batch
    from attnlab.train.distributed import sampler_seed

    torch.manual_seed(seed)
    model = LanguageModel(cfg).to(device)
    sampler = torch.Generator().manual_seed(sampler_seed(seed, 0))
    x, y = sample_batch(train_tokens, batch_size, cfg.n_ctx, sampler)  # (b, t) each
    model.loss(x.to(device), y.to(device)).backward()
    norms = []
    for block in model.blocks:
        squares = sum(float(p.grad.pow(2).sum()) for p in block.parameters() if p.grad is not None)
        norms.append(math.sqrt(squares))
    return norms
