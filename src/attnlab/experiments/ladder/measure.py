"""The rows of the ladder (each a ``ModelConfig`` that changes one thing from its parent)
and what is read from their runs (the record of ``attnlab.experiments.ladder``)."""

from __future__ import annotations

import logging
from typing import Any

from attnlab.experiments.ladder.settings import Settings
from attnlab.kit.per_seed import lm_summary
from attnlab.kit.tables import fmt_ms
from attnlab.nn.model_config import ModelConfig
from attnlab.running.runner import Results

log = logging.getLogger(__name__)

# Row number -> (the row it changes, what it changes, words for the table).
LADDER: dict[int, tuple[int | None, dict[str, Any], str]] = {
    1: (None, {}, "no context: embedding → linear"),
    2: (1, {"mixer": "mean", "residual": False}, "uniform causal mean replacing the token"),
    3: (2, {"position": "learned"}, "+ learned positions before the mean"),
    4: (3, {"residual": True}, "+ residual (token + mean)"),
    5: (4, {"mixer": "head"}, "one head (width {d}) instead of the mean"),
    6: (5, {"mixer": "mha", "n_head": 4}, "four heads of width {h} + W_o"),
    7: (5, {"residual": False}, "side row: row 5's head replacing (no residual)"),
    8: (6, {"mlp": True}, "+ MLP (×4, GELU) with its residual"),
    9: (8, {"norm": "pre"}, "+ LayerNorm, pre-norm (and at the end)"),
    10: (9, {"n_layer": 2}, "two blocks"),
}
ROWS = tuple(LADDER)


def base_config(s: Settings) -> ModelConfig:
    """Row 1: embedding → linear to the vocabulary (untied, with bias); nothing in between."""
    return ModelConfig(
        vocab_size=s.vocab_size, n_ctx=s.n_ctx, d_model=s.d_model, n_layer=1, mixer="none",
        n_head=4, position="none", mlp=False, norm="none", residual=True, dropout=0.0,
        tie_weights=False, lm_head_bias=True,
    )


def row_config(s: Settings, row: int) -> ModelConfig:
    """The model of ``row`` (1..10): its parent's config with the row's changes."""
    if row not in LADDER:
        raise ValueError(f"the ladder has rows 1..{len(LADDER)}, got {row}")
    parent, changes, _ = LADDER[row]
    cfg = base_config(s) if parent is None else row_config(s, parent)
    return cfg.replace(**changes)


def row_name(s: Settings, row: int) -> str:
    return LADDER[row][2].format(d=s.d_model, h=s.d_model // 4)


def row_label(row: int, small: bool = False) -> str:
    return f"ladder row {row}" + (" (small data)" if small else "")


def _row_record(s: Settings, results: Results, row: int, small: bool = False) -> dict:
    runs = results.seeds(row_label(row, small))
    out = {
        "row": row,
        "above": LADDER[row][0],
        "name": row_name(s, row),
        "config": row_config(s, row).to_dict(),
        **lm_summary(runs),
        "run_dirs": [r["run_dir"] for r in runs],
    }
    log.info("ladder row %d: held-out perplexity %s", row, fmt_ms(out["held_ppl"]))
    return out
