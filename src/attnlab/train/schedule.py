"""Learning-rate schedule: optional linear warmup, then constant or cosine decay.

    warmup (s < W):   lr · (s + 1) / W
    cosine (s >= W):  lr · (r + (1 - r) · ½ (1 + cos(π · (s - W) / (S - W))))

with ``s`` the 0-based index of the update, ``W`` warmup steps, ``S`` total
steps and ``r`` = ``min_lr_ratio``. Warmup for post-norm transformers follows
Vaswani et al. (2017) and Xiong et al. (2020); cosine decay follows Loshchilov &
Hutter (2017, SGDR) without restarts. The rate is a pure function of the step,
so a resumed run needs no scheduler state. Left out: restarts, inverse-sqrt decay.
"""

from __future__ import annotations

import math

from attnlab.train.run_config import TrainConfig


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate of update ``step`` (0-based).

    >>> cfg = TrainConfig(steps=10, lr=1.0, warmup_steps=4, decay="cosine", min_lr_ratio=0.0)
    >>> [round(lr_at(s, cfg), 3) for s in (0, 3, 4, 7)]
    [0.25, 1.0, 1.0, 0.5]
    """
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.decay == "none":
        return cfg.lr
    span = max(cfg.steps - cfg.warmup_steps, 1)
    progress = min((step - cfg.warmup_steps) / span, 1.0)
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
    return cfg.lr * (cfg.min_lr_ratio + (1.0 - cfg.min_lr_ratio) * cosine)
