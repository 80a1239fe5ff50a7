"""The cost of attention as an experiment: profiles, analyse, table, figure, claims
(docs/experiments.md, "Cost of attention").

The measurements themselves (one attention layer, timing, peak memory per size
in a fresh subprocess under a hard memory limit on the CPU, by the allocator on
CUDA) live in ``attnlab.timing.cost``, so this package has no ``measure`` part of its
own; it chooses the sizes and limits per profile (``cost.settings``), measures on the
device the run resolves to (``Context.device``), renders the sweep (``cost.view``) and
states the claims about the fitted exponents (``cost.claims``). Nothing is trained, so the
claims have one evaluation each.

Left out: the backward pass (forward only is timed and measured) and batch > 1.
"""

from __future__ import annotations

from typing import Any

from attnlab.experiments.cost.chapter import CHAPTER
from attnlab.experiments.cost.claims import CLAIMS
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
from attnlab.timing import cost as measure


def plan(settings: Settings) -> list[RunSpec]:
    """Nothing to train: the sweep is measured in ``analyse``."""
    return []


def analyse(settings: Settings, results: Results | None = None,
            ctx: Context | None = None) -> dict[str, Any]:
    """The sweep on the context's device, and its fitted exponents."""
    device = str(ctx.device) if ctx is not None else "cpu"
    records = measure.sweep(
        settings.kinds, settings.sizes, int(settings.mem_limit_gib * measure.GIB),
        settings.repeats, d_model=settings.d_model, n_head=settings.n_head,
        threads=settings.threads, device=device,
    )
    fitted = measure.exponents(records)
    for kind in fitted:
        rows = [r for r in records if r["kind"] == kind and r["status"] == "ok"]
        try:
            fitted[kind]["projections"] = measure.fit_exponent(
                [r["n"] for r in rows], [r.get("proj_ms") for r in rows])
        except ValueError:
            fitted[kind]["projections"] = None
        fitted[kind]["projections_range"] = measure.time_range(rows, "proj")
    return {"records": records, "exponents": fitted, "device": device,
            "mem_limit_bytes": int(settings.mem_limit_gib * measure.GIB)}


__all__ = [
    "CLAIMS", "NAME", "NEEDS_CORPUS", "PROFILES", "Settings",
    "analyse", "figure", "plan", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
