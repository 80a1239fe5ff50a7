"""Why divide by √d_k: the variance argument, then training with and without
(docs/experiments.md, "Why divide by √d_k").

Dimension legend: ``d`` (= d_k) query/key width, ``b`` windows, ``t`` positions.

Analytic part (``attnlab.experiments.sqrt_dk.measure``, NumPy, seeded):
Var(q·k) for q, k ~ N(0, I_d) at d = 4 … 1,024 (it is d); one row of 64
scores per d and its effective tokens exp(entropy); over 2,000 random rows the
fraction of "frozen" rows (max weight > 0.99) and the mean trace of the softmax
Jacobian Σ w_j(1 − w_j), each with and without the division.

Training part, scaled (÷√d_k) against unscaled, same seed, same data:
- *default* setting (spec defaults: width 128, context 128, 3,000 steps of batch
  64, pre-norm block with MLP): d_k = 32 is the default block (4 heads of width
  32 + W_o); d_k = 128 is the *same block with one head* (``n_head=1``: one head
  of width 128, W_o kept), so only d_k changes;
- *short* setting (1,500 steps of batch 32): one head (``mixer="head"``) whose
  q/k width is d_k ∈ {32, 256, 1,024} (values keep width 128), with no
  LayerNorm anywhere (``norm="none"``), MLP and learned positions as the defaults.
For each run: held-out perplexity and, on a fixed batch of held-out windows, the
score std (over causally allowed entries), the attention entropy / effective
tokens and the frozen fraction — at initialisation (the run's own seed) and
after training. The gap is ppl(unscaled) / ppl(scaled) − 1.

Initialisation matters: the models use PyTorch's default init (token and
position tables N(0, 1), ``nn.Linear`` Kaiming-uniform, weight variance
1/(3·fan_in)). Without a norm the mixer input has variance ≈ 2 per entry, so
q and k entries have variance ≈ 2/3 and unscaled scores start with std ≈
0.67·√d_k (≈ 21 at d_k = 1,024): the unscaled wide head is frozen from step 0.

Left out: learning-rate retuning per width (one rate for all), QK-norm.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import torch

from attnlab.experiments.sqrt_dk import measure as stats
from attnlab.experiments.sqrt_dk.chapter import CHAPTER
from attnlab.experiments.sqrt_dk.claims import CLAIMS
from attnlab.experiments.sqrt_dk.measure import gaps, initial_model, stats_windows
from attnlab.experiments.sqrt_dk.settings import (
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    STATS,
    Settings,
)
from attnlab.experiments.sqrt_dk.view import figure, table
from attnlab.i18n.logs import Phrase
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import train_budget
from attnlab.kit.tables import mean_std, settings_dict
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig, TrainConfig

log = logging.getLogger(__name__)


# -- configs ---------------------------------------------------------------------


def default_config(s: Settings, d_k: int, scale: bool) -> ModelConfig:
    """The default pre-norm block with heads of width d_k (n_head = d_model / d_k)."""
    if d_k < 1 or s.d_model % d_k:
        raise ValueError(f"default-setting head width {d_k} must divide d_model={s.d_model}")
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       mixer="mha", n_head=s.d_model // d_k, scale=scale)


def short_config(s: Settings, d_k: int, scale: bool) -> ModelConfig:
    """One head with q/k width d_k, no LayerNorm before the projections (or anywhere)."""
    return ModelConfig(vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model,
                       mixer="head", head_dim=d_k, norm="none", scale=scale)


def _train_config(steps: int, batch: int, lr: float) -> TrainConfig:
    """Subnormal floats flushed to zero (``train.denormals``), in the scaled runs as in the
    unscaled ones: the unscaled head's saturated softmax fills its backward pass with them,
    and on x86 they made its step about 5x slower than the scaled head's, for numbers below
    1.2e-38 against weights near 1e-2."""
    return train_budget(steps, lr, batch, denormals="flush")


def settings_runs(s: Settings) -> list[tuple[str, int, Any, TrainConfig]]:
    """(setting, d_k, config maker, train config) for every trained width."""
    out: list[tuple[str, int, Any, TrainConfig]] = []
    for w in s.default_widths:
        out.append(("default", w, default_config,
                    _train_config(s.default_steps, s.default_batch, s.lr)))
    for w in s.short_widths:
        out.append(("short", w, short_config, _train_config(s.short_steps, s.short_batch, s.lr)))
    return out


# -- running ---------------------------------------------------------------------


def run_label(setting: str, d_k: int, scale: bool) -> str:
    return f"sqrt_dk {setting} d_k={d_k} scale={scale}"


def plan(settings: Settings) -> list[RunSpec]:
    """Scaled and unscaled runs of every trained width, every seed."""
    s = settings
    data = s.data_config()
    return [spec for setting, d_k, make, tc in settings_runs(s) for scale in (True, False)
            for spec in seeded(run_label(setting, d_k, scale),
                               RunConfig(model=make(s, d_k, scale), train=tc, data=data),
                               s.seeds)]


def _one_width(s: Settings, results: Results, ctx: Context, setting: str, d_k: int, make: Any,
               tc: TrainConfig, idx: torch.Tensor) -> dict:
    row: dict[str, Any] = {"setting": setting, "d_k": d_k}
    for scale in (True, False):
        cfg = make(s, d_k, scale)
        runs = results.seeds(run_label(setting, d_k, scale))
        init = [stats.attention_stats(
            initial_model(cfg, dataclasses.replace(tc, seed=k), ctx.device), idx)
            for k in range(len(runs))]
        after = [stats.attention_stats(ctx.trained(r), idx) for r in runs]
        row["scaled" if scale else "unscaled"] = {
            "held_ppl": [r["held_ppl"] for r in runs],
            "train_ppl": [r["train_ppl"] for r in runs],
            "params": runs[0]["params"],
            "heads": cfg.heads,
            "init": {k: [x[k] for x in init] for k in STATS},
            "after": {k: [x[k] for x in after] for k in STATS},
            "wall_s": [r["wall_s"] for r in runs],
            "run_dirs": [r["run_dir"] for r in runs],
        }
    row["gaps"] = gaps(row)
    row["gap"] = mean_std(row["gaps"])[0]
    log.info("sqrt_dk %s d_k=%d: gap %+.1f%%", Phrase(setting, NAME), d_k, 100 * row["gap"])
    return row


def analyse(settings: Settings, results: Results, ctx: Context) -> dict:
    """The analytic tables, then every trained run (scaled and unscaled) with its statistics."""
    s = settings
    record: dict[str, Any] = {
        "settings": settings_dict(s),
        "seeds": s.seeds,
        "variance": stats.dot_variance(s.dims, s.n_pairs, s.seed),
        "one_row": stats.one_row(s.dims, s.n_keys, s.seed),
        "frozen": stats.frozen_rows(s.dims, s.n_rows, s.n_keys, s.seed),
        "training": [],
    }
    runs = settings_runs(s)
    if runs:
        held = ctx.token_data(s.vocab_size).held
        idx = stats_windows(held, s.stats_windows, s.n_ctx).to(ctx.device)
        for setting, d_k, make, tc in runs:
            record["training"].append(_one_width(s, results, ctx, setting, d_k, make, tc, idx))
    return record


__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PROFILES", "Settings",
    "analyse", "default_config", "figure", "gaps", "plan", "settings_runs", "short_config",
    "stats_windows", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
