"""Beside each verdict, the figure its rule compares and the chapter's figure for the same
quantity, each named and in its unit: the claim summary reads "HELD, measured perplexity,
row 2 ÷ row 1: 2.03, the chapter 4.15".

The measured figure comes from the verdict itself (the ``numbers`` a claim's part returns
with its margins, labelled by ``attnlab.lab.quantities``, written by
``attnlab.lab.claim_words.measured_text``). The chapter's figure is computed from the
chapter's published figures (``attnlab.report.chapter.BY_KEY``) for the quantity the rule
compares; ``CHAPTER`` below says which figures, per claim and part, and holds no figure of
its own. A figure derived from the chapter's text (it states a difference) is marked ``†``.
Where the chapter states the quantity in another unit than the one measured (the √d_k gap:
a difference of perplexities, where attnlab measures their ratio), its unit is written
beside it. A claim with no published counterpart shows ``–``.

Left out: the chapter's qualitative statements ("degrades gently"), which have no number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attnlab.lab.claim_words import measured_text, part_name
from attnlab.lab.quantities import describe, number
from attnlab.report.chapter import BY_KEY

Figure = Callable[[str], str]  # language -> the chapter's figure for one part, formatted


def _value(key: str) -> tuple[float, bool]:
    figure = BY_KEY[key]
    return figure.value, bool(figure.derived)


def _mark(text: str, derived: bool) -> str:
    return text + ("†" if derived else "")


def ratio(num: str, den: str) -> Figure:
    """The chapter's ``num`` figure over its ``den`` figure, as ``4.15``."""
    def figure(lang: str = "en") -> str:
        (a, da), (b, db) = _value(num), _value(den)
        return _mark(f"{a / b:.2f}", da or db)
    return figure


def value(key: str, unit: tuple[str, str] = ("", ""), kind: str = "value",
          sig: int = 3) -> Figure:
    """One chapter figure, with its unit (English, Spanish) where it has one."""
    def figure(lang: str = "en") -> str:
        v, derived = _value(key)
        text = number(v, lang, kind, sig=sig)
        words = unit[0] if lang == "en" else unit[1]
        return _mark(text, derived) + (f" {words}" if words else "")
    return figure


def growth(before: str, after: str) -> Figure:
    """``21 → 5,147``: a figure before and after."""
    def figure(lang: str = "en") -> str:
        (a, da), (b, db) = _value(before), _value(after)
        return _mark(f"{number(a, lang)} → {number(b, lang, 'count')}", da or db)
    return figure


POINTS = ("perplexity points (unscaled − scaled: a difference, where attnlab measures the ratio)",
          "puntos de perplejidad (sin escalar − escalada: una diferencia; attnlab mide el "
          "cociente)")

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
        "d_k 256": value("sqrt_dk/gap d_k=256", POINTS),
        "d_k 1024": value("sqrt_dk/gap d_k=1024", POINTS)},
    "sqrt_dk.unscaled_collapses": {
        "spread grows at 1024": growth("sqrt_dk/score std init d_k=1024 raw",
                                       "sqrt_dk/score std after d_k=1024 raw"),
        "collapse": value("sqrt_dk/frozen after d_k=1024 raw")},
    "norm.post_no_warmup_far_worse": {"": ratio("norm/post/no_warmup", "norm/pre/no_warmup")},
    "norm.post_warmup_matches_pre": {"": ratio("norm/post/warmup", "norm/pre/warmup")},
    "norm.warmup_hardly_matters_for_pre": {"": ratio("norm/pre/no_warmup", "norm/pre/warmup")},
    "cost.quadratic": {"time": value("cost/naive time exponent"),
                       "memory": value("cost/naive memory exponent")},
    "params.gpt2_small_count": {"formula and ours": value("params/gpt2 total",
                                                          ("parameters", "parámetros"),
                                                          "count")},
    "winograd.variant_a_mean_suffices": {"answers": value("winograd/A/mean")},
    "winograd.variant_b_needs_order": {"mean": value("winograd/B/mean"),
                                       "one block": value("winograd/B/one block"),
                                       "two blocks": value("winograd/B/two blocks")},
}


def labelled(verdict: dict[str, Any]) -> dict[str, Any]:
    """``verdict`` with every part's numbers labelled: a verdict decided before its claim
    declared labels (an older ``results.json``) gets them from its claim, found by id."""
    parts = verdict.get("parts") or []
    if all("figures" in p or "numbers" not in p for p in parts):
        return verdict
    from attnlab.lab import registry

    cid = verdict.get("id", "")
    try:
        claims = registry.load(verdict.get("experiment") or cid.split(".")[0]).claims
        figures = next(c.figures for c in claims if c.id == cid)
    except Exception:  # noqa: BLE001 - an unknown claim keeps its numbers as they are
        return verdict
    return {**verdict, "parts": [p if "figures" in p else
                                 {**p, "figures": describe(figures, p.get("numbers") or {})}
                                 for p in parts]}


def _joined(verdict: dict[str, Any], text: Callable[[dict[str, Any]], str], lang: str) -> str:
    parts = verdict.get("parts") or []
    if len(parts) == 1:
        return text(parts[0])
    cells = [(part_name(verdict, p, lang), text(p)) for p in parts]
    shown = [f"{name} — {cell}" if name else cell for name, cell in cells if cell != "–"]
    return "; ".join(shown) or "–"


def claim_figures(verdict: dict[str, Any], lang: str = "en") -> dict[str, str]:
    """``{"measured": ..., "chapter": ...}`` for one verdict of ``attnlab.lab.claims``, in
    ``lang``."""
    verdict = labelled(verdict)
    chapter = CHAPTER.get(verdict.get("id", ""), {})

    def chapter_part(part: dict[str, Any]) -> str:
        figure = chapter.get(part.get("name", ""))
        return figure(lang) if figure is not None else "–"

    return {"measured": _joined(verdict, lambda p: measured_text(p, lang), lang),
            "chapter": _joined(verdict, chapter_part, lang)}
