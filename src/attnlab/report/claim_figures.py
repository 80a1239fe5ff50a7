"""Beside each verdict, the figure its rule compares and the chapter's figure for the same
quantity, each named and in its unit: the claim summary reads "HELD, measured perplexity,
row 2 ÷ row 1: 2.03, the chapter 4.15".

The measured figure comes from the verdict itself (the ``numbers`` a claim's part returns
with its margins, labelled by ``attnlab.kit.quantities``, written by
``attnlab.kit.verdict_words.measured_text``). The chapter's figure is computed from the
chapter's published figures for the quantity the rule compares: the experiment's chapter part
(``Experiment.chapter.claims``, ``attnlab.kit.chapter``) says which figures, per claim and
part. A figure derived from the chapter's text (it states a difference) is marked ``†``.
Where the chapter states the quantity in another unit than the one measured (the √d_k gap:
a difference of perplexities, where attnlab measures their ratio), its unit is written
beside it. A claim with no published counterpart shows ``–``.

Left out: the chapter's qualitative statements ("degrades gently"), which have no number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attnlab.kit.quantities import describe
from attnlab.kit.registry import chapter
from attnlab.kit.verdict_words import measured_text, part_name


def labelled(verdict: dict[str, Any]) -> dict[str, Any]:
    """``verdict`` with every part's numbers labelled: a verdict decided before its claim
    declared labels (an older ``results.json``) gets them from its claim, found by id."""
    parts = verdict.get("parts") or []
    if all("figures" in p or "numbers" not in p for p in parts):
        return verdict
    from attnlab.kit import registry

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
    """``{"measured": ..., "chapter": ...}`` for one verdict of ``attnlab.kit.claims``, in
    ``lang``."""
    verdict = labelled(verdict)
    cid = verdict.get("id", "")
    part_of = chapter(verdict.get("experiment") or cid.split(".")[0])

    def chapter_part(part: dict[str, Any]) -> str:
        figure = part_of.claim_figure(cid, part.get("name", ""), lang) if part_of else None
        return figure if figure is not None else "–"

    return {"measured": _joined(verdict, lambda p: measured_text(p, lang), lang),
            "chapter": _joined(verdict, chapter_part, lang)}
