"""The cost of attention as an experiment: profiles, analyse, table, figure, claims
(docs/experiments.md, "Cost of attention").

The measuring tools themselves (one attention layer, timing, peak memory per size
in a fresh subprocess under a hard memory limit on the CPU, by the allocator on
CUDA) live in ``attnlab.timing.cost``, shared with the benchmarks; this package
chooses the sizes and limits per profile (``cost.settings``), runs the sweep and fits
its exponents on the device the run resolves to (``cost.measure``, on
``Context.device``), renders it (``cost.view``) and states the claims about the fitted
exponents (``cost.claims``). Nothing is trained, so the
claims have one evaluation each.

Left out: the backward pass (forward only is timed and measured) and batch > 1.
"""

from __future__ import annotations

from typing import Any

from attnlab.experiments.cost.chapter import CHAPTER
from attnlab.experiments.cost.claims import CLAIMS
from attnlab.experiments.cost.measure import sweep_record
from attnlab.experiments.cost.settings import (
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    Settings,
)
from attnlab.experiments.cost.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec


def plan(settings: Settings) -> list[RunSpec]:
    """Nothing to train: the sweep is measured in ``analyse``."""
    return []


def analyse(settings: Settings, results: Results | None = None,
            ctx: Context | None = None) -> dict[str, Any]:
    """The sweep on the context's device, and its fitted exponents."""
    device = str(ctx.device) if ctx is not None else "cpu"
    return sweep_record(settings, device)


__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PROFILES", "Settings",
    "analyse", "figure", "plan", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
