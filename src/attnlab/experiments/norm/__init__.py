"""Pre-norm or post-norm: twelve blocks at a high rate, with and without warmup
(docs/experiments.md, "Pre-norm or post-norm").

Dimension legend: ``b`` batch, ``t`` positions, ``L`` blocks.

Two measurements on the default block (multi-head attention, ×4 GELU MLP,
learned positions) stacked twelve deep:

1. *Training*: pre-norm (``x + f(LN(x))``, GPT-2, Xiong et al. 2020) and
   post-norm (``LN(x + f(x))``, Vaswani et al. 2017), each at a constant AdamW
   rate of 3e-3 with no warmup and with a linear warmup over the first 200 of
   1,000 steps; held-out perplexity of each (a 2×2 table).
2. *Gradients at initialisation*: on a fresh model built with the run's seed
   (the same weights the training run starts from), one batch (the first batch
   that run draws), one ``loss.backward()``; the L2 norm of the gradient of each
   block's parameters. Xiong et al. (2020) show that post-norm's gradients grow
   toward the output layer, which is why it needs warmup; pre-norm's do not.
   Reported: first block, last block, and last / first, per placement.

Left out: gradient clipping (off, as in the other experiments), learning-rate
decay, GPT-2's scaled initialisation, and the gradient of the embeddings and
the output layer (they are not in any block).
"""

from __future__ import annotations

import logging

from attnlab.experiments.norm.chapter import CHAPTER
from attnlab.experiments.norm.claims import CLAIMS, held, held_per_seed
from attnlab.experiments.norm.measure import grad_norms_at_init
from attnlab.experiments.norm.settings import (
    NAME,
    NEEDS_CORPUS,
    PLACEMENTS,
    PROFILES,
    Settings,
)
from attnlab.experiments.norm.view import figure, grad_summary, table
from attnlab.kit.per_seed import run_numbers
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig, TrainConfig

log = logging.getLogger(__name__)


def model_config(s: Settings, norm: str) -> ModelConfig:
    """The default block, ``s.n_layer`` deep, with LayerNorm placed by ``norm``."""
    if norm not in PLACEMENTS:
        raise ValueError(f"unknown norm placement {norm!r}; choose one of: pre, post")
    return ModelConfig(
        vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model, n_layer=s.n_layer,
        mixer="mha", n_head=s.n_head, position="learned", mlp=True, norm=norm, residual=True,
        dropout=0.0, tie_weights=False, lm_head_bias=True,
    )


def train_config(s: Settings, warmup: bool, seed: int = 0) -> TrainConfig:
    """The one budget (``OneBudget.train_config``): a constant rate after an optional warmup."""
    return s.train_config(warmup_steps=s.warmup_steps if warmup else 0, seed=seed)


def cell_label(norm: str, warmup: bool) -> str:
    return f"norm {norm} warmup={warmup}"


def plan(settings: Settings) -> list[RunSpec]:
    """The 2×2 cells for every seed; a diverged run is a result here, not an error."""
    s = settings
    data = s.data_config()
    return [spec for norm in PLACEMENTS for warmup in (False, True)
            for spec in seeded(cell_label(norm, warmup),
                               RunConfig(model=model_config(s, norm),
                                         train=train_config(s, warmup), data=data),
                               s.seeds, may_diverge=True)]


def _cell(results: Results, norm: str, warmup: bool) -> list[dict]:
    """Per seed: the run's numbers, or None each where it diverged."""
    return [run_numbers(r, ("held_ppl", "train_ppl", "wall_s", "params"))
            for r in results.seeds(cell_label(norm, warmup))]


def analyse(settings: Settings, results: Results, ctx: Context) -> dict:
    """The 2×2 training table and the per-block gradient norms at initialisation."""
    s = settings
    data = ctx.token_data(s.vocab_size, s.train_tokens)
    grads = {
        norm: [grad_norms_at_init(model_config(s, norm), data.train, s.batch_size, seed,
                                  ctx.device) for seed in range(s.seeds)]
        for norm in PLACEMENTS
    }
    cells = {f"{norm}/{'warmup' if warmup else 'no_warmup'}": _cell(results, norm, warmup)
             for norm in PLACEMENTS for warmup in (False, True)}
    return {"settings": settings_dict(s), "seeds": s.seeds, "cells": cells, "grad_norms": grads}


__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PLACEMENTS", "PROFILES", "Settings",
    "analyse", "cell_label", "figure", "grad_norms_at_init", "grad_summary", "held",
    "held_per_seed", "model_config", "plan", "table", "train_config",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
