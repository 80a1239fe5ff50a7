"""The ladder: from a mean to a transformer block, one measured step at a time
(docs/experiments.md, "The ladder").

Ten models, each a ``ModelConfig`` that changes one thing from the row above,
all trained with the same budget on Tiny Shakespeare (BPE-1024); every row ends
in an untied linear layer with bias to the vocabulary:

 1. no context: embedding → linear (the fifteen-line bigram model);
 2. the uniform causal mean of the embeddings *replaces* each token;
 3. + learned absolute positions, added before the mean (kept in every later row);
 4. + residual: token + mean of its context;
 5. one learned attention head (q, k, v of width d) instead of the mean;
 6. four heads of width d/4 + ``W_o`` with bias (d² + d more parameters);
 7. side row: row 5's head *replacing* its input (no residual) — compared with row 5;
 8. row 6 + the ×4 GELU MLP with its residual;
 9. + LayerNorm, pre-norm, before each sublayer and at the end (3 · 2d parameters);
10. two blocks.

Per row: parameters, train and held-out perplexity (docs/data.md; mean ± std over
seeds), and the change from the row above (row 7's "above" is row 5, row 8's is
row 6). The claims (docs/experiments.md, "Claims and verdicts") these numbers
decide are in ``CLAIMS`` (``ladder.claims``); the rows' configs in ``ladder.measure``, the
table and figure in ``ladder.view``.

Left out: dropout and weight tying (both off in every row), learning-rate
schedules (constant AdamW rate), and any tuning per row — one budget for all.
"""

from __future__ import annotations

from typing import Any

from attnlab.experiments.ladder.chapter import CHAPTER
from attnlab.experiments.ladder.claims import CLAIMS
from attnlab.experiments.ladder.measure import (
    LADDER,
    ROWS,
    _row_record,
    base_config,
    row_config,
    row_label,
    row_name,
)
from attnlab.experiments.ladder.settings import (
    NAME,
    NEEDS_CORPUS,
    PROFILES,
    Settings,
    overfit_settings,
)
from attnlab.experiments.ladder.view import figure, table
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import settings_dict
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec, seeded
from attnlab.train.run_config import RunConfig


def plan(settings: Settings) -> list[RunSpec]:
    """Every row for every seed, and the small-data pair of rows 9 and 10 if the profile has it."""
    s, small = settings, overfit_settings(settings)
    specs = []
    for profile, rows, is_small in ((s, ROWS, False), (small, (9, 10), True)):
        if profile is None:
            continue
        data = profile.data_config()
        for row in rows:
            cfg = RunConfig(model=row_config(profile, row), train=profile.train_config(), data=data)
            specs += seeded(row_label(row, is_small), cfg, s.seeds)
    return specs


def analyse(settings: Settings, results: Results, ctx: Context | None = None) -> dict:
    """Per-seed numbers of every row, so tables can show mean ± std and claims pair seeds."""
    small = overfit_settings(settings)
    record: dict[str, Any] = {
        "settings": settings_dict(settings), "seeds": settings.seeds,
        "rows": [_row_record(settings, results, row) for row in ROWS], "overfit": None,
    }
    if small is not None:
        record["overfit"] = {
            "train_tokens": small.train_tokens, "steps": small.steps,
            "rows": [_row_record(small, results, row, small=True) for row in (9, 10)],
        }
    return record


__all__ = [
    "CLAIMS", "LADDER", "NAME", "NEEDS_CORPUS", "PROFILES", "ROWS", "Settings",
    "analyse", "base_config", "figure", "plan", "row_config", "row_name", "table",
]

EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
