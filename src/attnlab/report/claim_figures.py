"""Beside each verdict, the figure its rule compares and the chapter's figure for the same
quantity: the claim summary reads "HELD, measured ×2.03, the chapter ×4.15".

The measured figure comes from the verdict itself (the ``numbers`` a claim's part returns
with its margins, the same records the verdict was decided on): a part's ratio when it has
one (``ratio``, ``ratio_2_over_1`` ...), else its numbers by name. The chapter's figure is
computed from the chapter's published figures (``attnlab.report.chapter.BY_KEY``) for the
quantity the rule compares; ``CHAPTER`` below says which figures, per claim and part, and
holds no figure of its own. A figure derived from the chapter's text (it states a
difference) is marked ``†``. A claim with no published counterpart shows ``–``.

Left out: the chapter's qualitative statements ("degrades gently"), which have no number.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from attnlab.report.chapter import BY_KEY

Figure = Callable[[], str]  # the chapter's figure for one part, formatted


def _value(key: str) -> tuple[float, bool]:
    figure = BY_KEY[key]
    return figure.value, bool(figure.derived)


def _mark(text: str, derived: bool) -> str:
    return text + ("†" if derived else "")


def ratio(num: str, den: str) -> Figure:
    """The chapter's ``num`` figure over its ``den`` figure, as ``×4.15``."""
    def figure() -> str:
        (a, da), (b, db) = _value(num), _value(den)
        return _mark(f"×{a / b:.2f}", da or db)
    return figure


def value(key: str, fmt: str = "{:.3g}") -> Figure:
    """One chapter figure as printed."""
    def figure() -> str:
        v, derived = _value(key)
        return _mark(fmt.format(v), derived)
    return figure


def growth(before: str, after: str) -> Figure:
    """``21 → 5,147``: a figure before and after."""
    def figure() -> str:
        (a, da), (b, db) = _value(before), _value(after)
        return _mark(f"{a:,.3g} → {b:,.0f}", da or db)
    return figure


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares. Keys only: the figures are chapter.py's.
CHAPTER: dict[str, dict[str, Figure]] = {
    "ladder.mean_worse_than_nothing": {"": ratio("ladder/row 2/held", "ladder/row 1/held")},
    "ladder.positions_barely_help": {"": ratio("ladder/row 3/held", "ladder/row 2/held")},
    "ladder.residual_mean_no_better": {"": ratio("ladder/row 4/held", "ladder/row 1/held")},
    "ladder.head_beats_mean": {"": ratio("ladder/row 5/held", "ladder/row 4/held")},
    "ladder.four_heads_beat_one": {"": ratio("ladder/row 6/held", "ladder/row 5/held")},
    "ladder.replacing_worse": {"": ratio("ladder/row 7/held", "ladder/row 5/held")},
    "ladder.mlp_and_norm_help": {"MLP": ratio("ladder/row 8/held", "ladder/row 6/held"),
                                 "LayerNorm": ratio("ladder/row 9/held", "ladder/row 8/held")},
    "ladder.two_blocks_overfit": {"train": ratio("ladder/row 10/train", "ladder/row 9/train"),
                                  "held-out": ratio("ladder/row 10/held", "ladder/row 9/held")},
    "sqrt_dk.matters_only_when_wide": {
        "d_k 256": value("sqrt_dk/gap d_k=256", "+{:.0f} points"),
        "d_k 1024": value("sqrt_dk/gap d_k=1024", "+{:.0f} points")},
    "sqrt_dk.unscaled_collapses": {
        "spread grows at 1024": growth("sqrt_dk/score std init d_k=1024 raw",
                                       "sqrt_dk/score std after d_k=1024 raw"),
        "collapse": value("sqrt_dk/frozen after d_k=1024 raw")},
    "norm.post_no_warmup_far_worse": {"": ratio("norm/post/no_warmup", "norm/pre/no_warmup")},
    "norm.post_warmup_matches_pre": {"": ratio("norm/post/warmup", "norm/pre/warmup")},
    "norm.warmup_hardly_matters_for_pre": {"": ratio("norm/pre/no_warmup", "norm/pre/warmup")},
    "cost.quadratic": {"time": value("cost/naive time exponent", "n^{:.2f}"),
                       "memory": value("cost/naive memory exponent", "n^{:.2f}")},
    "params.gpt2_small_count": {"formula and ours": value("params/gpt2 total", "{:,.0f}")},
    "winograd.variant_a_mean_suffices": {"answers": value("winograd/A/mean", "{:.2f}")},
    "winograd.variant_b_needs_order": {"mean": value("winograd/B/mean"),
                                       "one block": value("winograd/B/one block"),
                                       "two blocks": value("winograd/B/two blocks", "{:.2f}")},
}


def _number(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int) or (math.isfinite(x) and x == int(x) and abs(x) >= 1000):
        return f"{int(x):,}"
    if math.isfinite(x) and abs(x) >= 100:
        return f"{x:,.1f}"
    return f"{x:.3g}"


def measured_part(part: dict[str, Any]) -> str:
    """What one part measured: its ratio (``×0.98``), else its numbers by name."""
    numbers = part.get("numbers") or {}
    ratios = [v for k, v in numbers.items() if k.startswith("ratio")
              and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if ratios:
        return f"×{ratios[-1]:.2f}"
    return ", ".join(f"{k} {_number(v)}" for k, v in numbers.items()) or "–"


def _joined(verdict: dict[str, Any], text: Callable[[dict[str, Any]], str]) -> str:
    parts = verdict.get("parts") or []
    if len(parts) == 1:
        return text(parts[0])
    cells = [(p.get("name", ""), text(p)) for p in parts]
    shown = [f"{name}: {cell}" for name, cell in cells if cell != "–"]
    return "; ".join(shown) or "–"


def claim_figures(verdict: dict[str, Any]) -> dict[str, str]:
    """``{"measured": ..., "chapter": ...}`` for one verdict of ``attnlab.lab.claims``."""
    chapter = CHAPTER.get(verdict.get("id", ""), {})

    def chapter_part(part: dict[str, Any]) -> str:
        figure = chapter.get(part.get("name", ""))
        return figure() if figure is not None else "–"

    return {"measured": _joined(verdict, measured_part), "chapter": _joined(verdict, chapter_part)}
