"""The claims of "Pre-norm or post-norm", their rules and thresholds (docs/experiments.md,
"Claims and verdicts"), and how they read the record of ``attnlab.experiments.norm``: per
cell (placement × warmup) and seed, held-out perplexity, or a divergence."""

from __future__ import annotations

import math
from typing import Any

from attnlab.experiments.norm.settings import NAME
from attnlab.kit.claims import FAR, NEGLIGIBLE, Claim, Part, Records, claim, with_figures
from attnlab.kit.per_seed import Ratio, ratio_part
from attnlab.kit.quantities import Quantity
from attnlab.kit.tables import mean_std

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
