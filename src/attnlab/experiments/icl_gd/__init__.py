"""In-context learning as one step of gradient descent (docs/experiments.md, "ICL as
gradient descent"; von Oswald et al. 2023, "Transformers learn in-context by
gradient descent").

Dimension legend: ``b`` tasks, ``n`` context pairs, ``d`` input width, ``D = d + 1``
token width.

A task is a weight vector ``w ~ N(0, I_d)``; its context is ``n`` pairs
``(x_i, y_i = w·x_i)`` with ``x_i ~ U(-1, 1)^d``, and a query ``x_q`` whose
``y_q`` is to be predicted (the paper's setting: d = n = 10). Tokens are
``e_i = (x_i, y_i)`` and the query token is ``(x_q, 0)``.

- *LSA*: one linear self-attention layer (no softmax, one head), the query token
  updated by ``P · Σ_i (V e_i)(K e_i · Q e_q) / n``; its prediction is the y entry of
  the updated query token. Trained with Adam on fresh tasks every step.
- *one step of GD* on the context's loss ``½n⁻¹ Σ (W x_i − y_i)²`` from ``W = 0``
  with step ``η``: ``ŷ = η · n⁻¹ Σ y_i x_i·x_q``; ``η`` is the best step size,
  the least-squares ``η* = E[g y_q] / E[g²]`` (``g = n⁻¹ Σ y_i x_i·x_q``) over
  training tasks.
- *control*: the same LSA trained and evaluated with each context's ``y`` values
  taken from another task (same ``x``, an independent ``w'``), so the context says
  nothing about the query's ``w``.

Measured on held-out tasks: each model's mean squared error, and the agreement of
its predictions with GD's (cosine similarity of the prediction vectors over the
tasks, and relative L2 distance). Trained in this process on the CPU (seconds per
seed), not by the language-model trainer: nothing here predicts tokens.

Left out: several layers (several GD steps), softmax attention, the query token
attending to itself, and non-linear regression.

Parts: ``settings``, ``measure`` (tasks, the layer and its training, GD, one seed's
measures, seeds side by side), ``claims``, ``view`` (table, figure), ``chapter``; this face
plans and analyses and re-exports what tests use (``__all__``). Nothing outside the
experiment imports a part.
"""

from __future__ import annotations

import logging
from typing import Any

from attnlab.experiments.icl_gd.chapter import CHAPTER
from attnlab.experiments.icl_gd.claims import CLAIMS
from attnlab.experiments.icl_gd.measure import (
    LinearSelfAttention,
    agreement,
    gd_signal,
    one_seed,
    side_by_side,
    tasks,
    train_lsa,
)
from attnlab.experiments.icl_gd.settings import (
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    Settings,
)
from attnlab.experiments.icl_gd.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import settings_dict
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec

log = logging.getLogger(__name__)


def plan(settings: Settings) -> list[RunSpec]:
    """Nothing for the runner: each seed trains in ``analyse`` in seconds."""
    return []


def analyse(settings: Settings, results: Results, ctx: Context) -> dict[str, Any]:
    """The seeds side by side on this machine's cores (at most the run's worker count)."""
    from attnlab.running.executors import cpu_cores

    processes = min(settings.seeds, ctx.runner.slots(settings.seeds), cpu_cores())
    per_seed = side_by_side(settings, processes)
    for i, r in enumerate(per_seed):
        log.info("icl_gd seed %d: loss lsa %.4f gd %.4f, cosine %.4f", i, r["loss"]["lsa"],
                 r["loss"]["gd"], r["lsa_vs_gd"]["cosine"])
    return {"settings": settings_dict(settings), "seeds": settings.seeds, "per_seed": per_seed}


__all__ = ["CLAIMS", "LinearSelfAttention", "NAME", "NEEDS_CORPUS", "PROFILES",
           "Settings", "agreement", "analyse", "figure", "gd_signal",
           "one_seed", "plan", "side_by_side", "table", "tasks", "train_lsa"]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
