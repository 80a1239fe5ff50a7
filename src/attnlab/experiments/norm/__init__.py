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
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, mean, ratio
from attnlab.kit.claims import FAR, NEGLIGIBLE, Claim, Part, Records, claim, with_figures
from attnlab.kit.per_seed import Ratio, ratio_part, run_numbers
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.settings import OneBudget
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std, settings_dict
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig, TrainConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

NAME = "norm"
NEEDS_CORPUS = True
PLACEMENTS = ("pre", "post")


@dataclass(frozen=True)
class Settings(OneBudget):
    """The deep stack and its high-rate training budget (``OneBudget``; seeds per cell)."""

    lr: float = 3e-3  # a high constant rate (after warmup)
    steps: int = 1000  # AdamW updates per run
    n_layer: int = 12  # blocks: depth is what makes post-norm fragile
    n_head: int = 4  # heads of width d_model / n_head
    warmup_steps: int = 200  # linear warmup of the "with warmup" runs


PROFILES = {
    "full": Settings(),
    "quick": Settings(d_model=32, steps=600, batch_size=2, warmup_steps=120),
    "micro": Settings(n_layer=3, d_model=16, n_ctx=32, steps=3, batch_size=4, warmup_steps=2,
                      train_tokens=2_000, eval_batch_size=1024, seeds=1),
}


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


# -- reading a record -----------------------------------------------------------


def held(record: dict, norm: str, warmup: bool) -> float:
    """Mean held-out perplexity of a cell; ``inf`` if any seed diverged."""
    runs = record["cells"][f"{norm}/{'warmup' if warmup else 'no_warmup'}"]
    if any(r["diverged"] for r in runs):
        return math.inf
    return mean_std([r["held_ppl"] for r in runs])[0]


def held_per_seed(record: dict, norm: str, warmup: bool) -> list[float]:
    """Held-out perplexity of a cell per seed; a diverged seed counts as the vocabulary size
    (what a model that learnt nothing scores: a lower bound on how bad a diverged run is)."""
    runs = record["cells"][f"{norm}/{'warmup' if warmup else 'no_warmup'}"]
    vocab = record["settings"]["vocab_size"]
    return [float(vocab) if r["diverged"] else r["held_ppl"] for r in runs]


def _cell_text(runs: list[dict]) -> str:
    n_div = sum(r["diverged"] for r in runs)
    if n_div:
        return f"diverged ({n_div}/{len(runs)} seeds)"
    return fmt_ms([r["held_ppl"] for r in runs])


def grad_summary(record: dict, norm: str) -> dict[str, float]:
    """First and last block gradient norm (mean over seeds) and their ratio."""
    per_seed = record["grad_norms"][norm]
    first = mean_std([g[0] for g in per_seed])[0]
    last = mean_std([g[-1] for g in per_seed])[0]
    return {"first": first, "last": last, "ratio": last / first}


def table(record: dict) -> str:
    """Held-out perplexity (placement × warmup) and gradient norms at initialisation."""
    s = record["settings"]
    cells = record["cells"]
    rows = [[norm, _cell_text(cells[f"{norm}/no_warmup"]), _cell_text(cells[f"{norm}/warmup"])]
            for norm in PLACEMENTS]
    out = markdown_table(
        ["placement", "held-out ppl, no warmup", f"held-out ppl, {s['warmup_steps']} warmup steps"],
        rows,
    )
    grad_rows = []
    for norm in PLACEMENTS:
        g = grad_summary(record, norm)
        grad_rows.append([norm, f"{g['first']:.4g}", f"{g['last']:.4g}", f"{g['ratio']:.3g}"])
    out += "\n" + markdown_table(
        ["placement", "grad norm, block 1", f"grad norm, block {s['n_layer']}", "last / first"],
        grad_rows,
    )
    out += (
        f"\n{s['n_layer']} blocks of width {s['d_model']} ({s['n_head']} heads), context "
        f"{s['n_ctx']}, {s['steps']:,} AdamW steps at lr {s['lr']:g} (constant after warmup), "
        f"batch {s['batch_size']}; {record['seeds']} seed(s), mean ± std. Gradient norms: one "
        "batch, one backward pass on the freshly initialised model, before any step.\n"
    )
    return out


def figure(record: dict) -> Figure:
    """Gradient norm per block at initialisation, pre vs post (log y)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    for norm, marker in zip(PLACEMENTS, ("o", "s"), strict=True):
        per_seed = record["grad_norms"][norm]
        means = [mean_std(list(col))[0] for col in zip(*per_seed, strict=True)]
        blocks = list(range(1, len(means) + 1))
        ax.plot(blocks, means, marker=marker, label=f"{norm}-norm")
    ax.set_yscale("log")
    ax.set_xlabel("block")
    ax.set_ylabel("gradient norm at initialisation (log)")
    ax.set_title("Per-block gradient norm before the first step")
    ax.legend()
    fig.tight_layout()
    return fig


# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# "Far worse", "matches" and "hardly matters" are the claims module's FAR (1.2×) and
# NEGLIGIBLE (5%); each seed compares the cells trained with that seed.


def _ratio(num: tuple[str, bool], den: tuple[str, bool], margin: Any, rule: str) -> Part:
    """held-out ppl of cell ``num`` / of cell ``den`` (placement, warmup), per seed."""
    def read(records: Records) -> Ratio:
        rec = records[NAME]
        name = {True: "warmup", False: "no_warmup"}
        return Ratio(held_per_seed(rec, *num), held_per_seed(rec, *den),
                     {f"{num[0]}_{name[num[1]]}": held(rec, *num),
                      f"{den[0]}_{name[den[1]]}": held(rec, *den)})
    return ratio_part(rule + " (a diverged run counts as perplexity = vocabulary size)", read,
                      margin)


CLAIMS: list[Claim] = [
    claim("norm.post_no_warmup_far_worse",
          "Post-norm without warmup is far worse than pre-norm.", NAME,
          _ratio(("post", False), ("pre", False), lambda r: r - (1 + FAR),
                 f"held-out ppl post/no warmup ÷ pre/no warmup ≥ {1 + FAR:g}")),
    claim("norm.post_warmup_matches_pre",
          "Post-norm with warmup matches pre-norm.", NAME,
          _ratio(("post", True), ("pre", True), lambda r: NEGLIGIBLE - abs(r - 1),
                 f"|held-out ppl post/warmup ÷ pre/warmup − 1| ≤ {NEGLIGIBLE:g}")),
    claim("norm.warmup_hardly_matters_for_pre",
          "Warmup hardly matters for pre-norm.", NAME,
          _ratio(("pre", False), ("pre", True), lambda r: NEGLIGIBLE - abs(r - 1),
                 f"|held-out ppl pre/no warmup ÷ pre/warmup − 1| ≤ {NEGLIGIBLE:g}")),
]

FIGURES = {
    "ratio": Quantity("held-out perplexity ratio", "cociente de perplejidades de validación",
                      kind="ratio"),
    "{p}_no_warmup": Quantity("held-out perplexity, {p} without warmup",
                              "perplejidad de validación, {p} sin calentamiento"),
    "{p}_warmup": Quantity("held-out perplexity, {p} with warmup",
                           "perplejidad de validación, {p} con calentamiento"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)

# -- the chapter's part (attnlab.kit.chapter): pre-norm or post-norm, 12 blocks,
# 1,000 steps at 3e-3
F = ChapterFigure
PUBLISHED = (
    F("norm/grad pre first", "gradient norm at initialisation, pre-norm, block 1", 0.0498),
    F("norm/grad pre last", "gradient norm at initialisation, pre-norm, block 12", 0.0657),
    F("norm/grad pre ratio", "pre-norm: last / first block", 1.32),
    F("norm/grad post first", "gradient norm at initialisation, post-norm, block 1", 0.0977),
    F("norm/grad post last", "gradient norm at initialisation, post-norm, block 12", 0.1613),
    F("norm/grad post ratio", "post-norm: last / first block", 1.65),
    F("norm/pre/no_warmup", "pre-norm, no warmup: held-out ppl", 37.82),
    F("norm/pre/warmup", "pre-norm, 200 warmup steps: held-out ppl", 37.62),
    F("norm/post/no_warmup", "post-norm, no warmup: held-out ppl", 308.05),
    F("norm/post/warmup", "post-norm, 200 warmup steps: held-out ppl", 37.88),
)


def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    out: Measured = {}
    for kind, seeds in rec.get("grad_norms", {}).items():  # kind -> seed -> per-block norms
        first, last = mean([s[0] for s in seeds]), mean([s[-1] for s in seeds])
        out |= {f"norm/grad {kind} first": first, f"norm/grad {kind} last": last,
                f"norm/grad {kind} ratio": mean([s[-1] / s[0] for s in seeds])}
    for cell, runs in rec.get("cells", {}).items():
        out[f"norm/{cell}"] = mean([r["held_ppl"] for r in runs])
    return out


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "norm.post_no_warmup_far_worse": {"": ratio("norm/post/no_warmup", "norm/pre/no_warmup")},
    "norm.post_warmup_matches_pre": {"": ratio("norm/post/warmup", "norm/pre/warmup")},
    "norm.warmup_hardly_matters_for_pre": {"": ratio("norm/pre/no_warmup", "norm/pre/warmup")},
}

CHAPTER = Chapter(
    budget=("12 blocks of width 128, 1,000 steps at 3e-3 of batch 64, one seed"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)


EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
