"""The claims of the induction experiment, their rules and thresholds (docs/experiments.md,
"Induction heads"). They read the record of ``attnlab.experiments.induction``: per two-block
seed its ``snapshots`` (head scores, first / repeat loss), ``phase`` and ``ablation``; per
one-block seed its final scores and losses (``one``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnlab.experiments.induction.settings import NAME, SHORT
from attnlab.kit.claims import (
    CLEAR,
    MOST,
    Claim,
    Margins,
    Part,
    Premise,
    Records,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity

# A head "does" a role when most of its weight (MOST, more than half) goes to the role's
# key: chance for a uniform causal row over these 32 positions is about 1/16 on average.


def _two(records: Records) -> list[dict]:
    return records[NAME]["two"]


def _margins(values: list[float], threshold: float, above: bool) -> Margins:
    margins = [v - threshold if above else threshold - v for v in values]
    return Margins(margins, {"mean value": float(np.mean(values)), "threshold": threshold})


def _induction_head(records: Records) -> Margins:
    """Per seed: the highest final induction score of a block-2 head, against MOST."""
    return _margins([max(t["snapshots"][-1]["induction"][1]) for t in _two(records)], MOST,
                    True)


def _previous_head(records: Records) -> Margins:
    """Per seed: the highest final previous-token score of a block-1 head, against MOST."""
    return _margins([max(t["snapshots"][-1]["previous"][0]) for t in _two(records)], MOST,
                    True)


def _one_no_head(records: Records) -> Margins:
    """Per seed: the one-block model's highest induction score, against MOST / 2 ("near the
    threshold": within a factor of two of it)."""
    return _margins([max(o["induction"][0]) for o in records[NAME]["one"]], MOST / 2, False)


def _one_loss_near(records: Records) -> Margins:
    """Per seed: the one-block model's |first − repeat| / first loss, against CLEAR ("near":
    less than a clear relative difference on the claims' one scale, lower or higher)."""
    gaps = [abs(o["first"] - o["repeat"]) / o["first"] for o in records[NAME]["one"]]
    return _margins(gaps, CLEAR, False)


def _abrupt(records: Records) -> Margins:
    """Per seed: the largest share of the whole rise of the in-context benefit (first −
    repeat loss, from step 1 to the end) within any ``SHORT`` of training, against MOST."""
    return _margins([t["phase"]["loss_share"] for t in _two(records)], MOST, True)


def _coincides(records: Records) -> Margins:
    """Per seed: the share of the final induction head's whole score rise within that same
    window, against MOST."""
    return _margins([t["phase"]["score_share"] for t in _two(records)], MOST, True)


def _head_formed(records: Records) -> Margins:
    """Per seed: the best block-2 head's final induction score, against MOST (the premise of
    the claims about how the head forms and what removing its feed does)."""
    scores = [max(t["snapshots"][-1]["induction"][1]) for t in _two(records)]
    return Margins([s - MOST for s in scores], {"score": float(np.mean(scores)), "bar": MOST})


def head_formed(consequence: str, consequence_es: str) -> Premise:
    """The premise that the two-block model formed an induction head (added as their
    rule version 2, before any verdict under it): a claim about that head's forming or its
    ablation cannot be tested on a model that has none."""
    return Premise(
        f"the best block-2 head's induction score > {MOST:g}", _head_formed,
        "no induction head formed (the best block-2 head's score is {score:.2f}, not above "
        "{bar:g}): " + consequence,
        "no se formó ninguna cabeza de inducción (la mejor cabeza del bloque 2 puntúa "
        "{score:.2f}, no más de {bar:g}): " + consequence_es,
        f"puntuación de inducción de la mejor cabeza del bloque 2 > {MOST:g}", strict=True)


def _kept(key: str, prev: bool) -> Any:
    """Per seed: with the previous-token head ablated, the fraction of the induction head's
    score (or benefit) left, against MOST ("removes": more than half gone); with another
    block-1 head ablated, the smallest fraction left over those heads, against MOST ("does
    not": more than half kept, whichever other head)."""

    def margins(records: Records) -> Margins:
        left = []
        for t in _two(records):
            a = t["ablation"]
            # no benefit or score to begin with: nothing was there to remove or keep, so
            # the part fails either way (1: "not removed", 0: "not kept")
            fractions = [h[key] / a[key] if a[key] > 0 else float(prev) for h in a["per_head"]
                         if (h["head"] == a["prev_head"]) == prev]
            left.append(min(fractions) if fractions else float("nan"))
        return _margins(left, MOST, not prev)

    return margins


CLAIMS: list[Claim] = [
    claim("induction.two_blocks_form",
          "Two attention-only blocks form an induction head (a block-2 head attends from a "
          "token to the token that followed its earlier occurrence) fed by a block-1 "
          "previous-token head.", NAME,
          Part(f"the best block-2 head's induction score on held-out rows > {MOST:g}",
               _induction_head, "score", "induction head"),
          Part(f"the best block-1 head's previous-token score > {MOST:g}", _previous_head,
               "score", "previous-token head")),
    claim("induction.one_block_does_not",
          "One attention-only block does not form an induction head, and its loss on the "
          "repeated segment stays near the first occurrence's.", NAME,
          Part(f"the one-block model's best induction score < {MOST / 2:g} (half the "
               f"threshold {MOST:g})", _one_no_head, "score", "no induction head"),
          Part(f"|first − repeat loss| / first-occurrence loss < {CLEAR:g}", _one_loss_near,
               "relative loss", "repeat loss near the first"),
          version=2),  # v2: "near" on both sides (v1 read a repeat loss far above as near)
    claim("induction.phase_change",
          "The fall of the two-block model's repeated-segment loss is abrupt, a phase change: "
          "most of it happens within a short stretch of training, and that stretch is where "
          "the induction score rises.", NAME,
          Part(f"largest share of the in-context benefit's rise within {SHORT:g} of training "
               f"> {MOST:g}", _abrupt, "share", "abrupt"),
          Part(f"share of the induction head's score rise within that window > {MOST:g}",
               _coincides, "share", "where the induction score rises"),
          premises=[head_formed("there is no rise of a head to time",
                                "no hay subida de una cabeza que cronometrar")],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
    claim("induction.ablation_k_composition",
          "Ablating the previous-token head removes the induction head's score and its "
          "benefit, while ablating another head of block 1 does not (K-composition).", NAME,
          Part(f"score left with the previous-token head mean-ablated < {MOST:g}",
               _kept("score", True), "fraction", "prev-token head: score"),
          Part(f"benefit (first − repeat loss) left with it ablated < {MOST:g}",
               _kept("benefit", True), "fraction", "prev-token head: benefit"),
          Part(f"score left with any other block-1 head ablated > {MOST:g}",
               _kept("score", False), "fraction", "other heads: score"),
          Part(f"benefit left with any other block-1 head ablated > {MOST:g}",
               _kept("benefit", False), "fraction", "other heads: benefit"),
          premises=[head_formed("there is no head whose feed an ablation could remove",
                                "no hay cabeza cuya entrada pueda quitar una ablación")],
          version=3),  # v2: the premise (abfd38c); v3: the premise per seed
]

FIGURES = {
    "mean value": Quantity("mean over the seeds", "media de las semillas"),
    "threshold": Quantity("threshold", "umbral", kind="threshold"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
