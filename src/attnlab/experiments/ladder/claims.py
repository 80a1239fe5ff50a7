"""The claims of the ladder, their rules and thresholds (docs/experiments.md, "Claims and
verdicts"), and how they read the record of ``attnlab.experiments.ladder``: per row and seed,
train and held-out perplexity, and the small-data pair where the profile trains one."""

from __future__ import annotations

from typing import Any

from attnlab.experiments.ladder.settings import NAME
from attnlab.kit.claims import CLEAR, NEGLIGIBLE, Claim, Part, Records, with_figures
from attnlab.kit.per_seed import Ratio, claim_for, ratio_part
from attnlab.kit.quantities import Quantity
from attnlab.kit.tables import mean_std

# -- reading a record -----------------------------------------------------------


def _rows(record: dict) -> dict[int, dict]:
    return {r["row"]: r for r in record["rows"]}


def _mean(record: dict, row: int, key: str) -> float:
    return mean_std(_rows(record)[row][key])[0]


# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# Each margin compares rows trained with the same seed. "Several times worse" is at least
# twice; "barely", "no better" and "clearly" are the claims module's NEGLIGIBLE and CLEAR.

SEVERAL = 2.0  # "several times worse": at least this ratio


def _ppl(records: Records, row: int, key: str = "held_ppl", small: bool = False) -> list[float]:
    rec = records[NAME]
    source = rec["overfit"] if small and rec.get("overfit") else rec
    return _rows(source)[row][key]


def _ratio_part(top: int, bottom: int, margin: Any, rule: str, name: str = "",
                key: str = "held_ppl", small: bool = False) -> Part:
    """A part on ratio = ppl(row ``top``) / ppl(row ``bottom``) per seed."""
    def read(records: Records) -> Ratio:
        a, b = _ppl(records, top, key, small), _ppl(records, bottom, key, small)
        what = key.split("_")[0]
        return Ratio(a, b, {f"{what}_row{top}": mean_std(a)[0],
                            f"{what}_row{bottom}": mean_std(b)[0]},
                     f"ratio_{top}_over_{bottom}")
    return ratio_part(rule, read, margin, name)


_claim = claim_for(NAME)


def _small_rule(rule: str) -> str:
    return rule + " (on the small-data pair where the profile trains one)"


CLAIMS: list[Claim] = [
    _claim("mean_worse_than_nothing",
           "The uniform mean replacing the token is several times worse than no context.",
           _ratio_part(2, 1, lambda r: r - SEVERAL, f"held-out ppl row 2 / row 1 ≥ {SEVERAL:g}")),
    _claim("positions_barely_help",
           "Learned positions before the mean barely help.",
           _ratio_part(3, 2, lambda r: NEGLIGIBLE - abs(r - 1),
                       f"|held-out ppl row 3 / row 2 − 1| ≤ {NEGLIGIBLE:g}")),
    _claim("residual_mean_no_better",
           "The mean with a residual is no better than no context.",
           _ratio_part(4, 1, lambda r: r - (1 - NEGLIGIBLE),
                       f"held-out ppl row 4 / row 1 ≥ {1 - NEGLIGIBLE:g}")),
    _claim("head_beats_mean",
           "One learned head clearly beats the mean.",
           _ratio_part(5, 4, lambda r: (1 - CLEAR) - r,
                       f"held-out ppl row 5 / row 4 ≤ {1 - CLEAR:g}")),
    _claim("four_heads_beat_one",
           "Four heads beat one head.",
           _ratio_part(6, 5, lambda r: 1 - r, "held-out ppl row 6 / row 5 < 1")),
    _claim("replacing_worse",
           "The head replacing the token is worse than the head added to it.",
           _ratio_part(7, 5, lambda r: r - 1, "held-out ppl row 7 / row 5 > 1")),
    _claim("mlp_and_norm_help",
           "The MLP and LayerNorm each help.",
           _ratio_part(8, 6, lambda r: 1 - r, "held-out ppl row 8 / row 6 < 1", "MLP"),
           _ratio_part(9, 8, lambda r: 1 - r, "held-out ppl row 9 / row 8 < 1", "LayerNorm")),
    _claim("two_blocks_overfit",
           "Two blocks fit the training text better and the held-out text worse than one.",
           _ratio_part(10, 9, lambda r: 1 - r, _small_rule("train ppl row 10 / row 9 < 1"),
                       "train", key="train_ppl", small=True),
           _ratio_part(10, 9, lambda r: r - 1, _small_rule("held-out ppl row 10 / row 9 > 1"),
                       "held-out", small=True)),
]

FIGURES = {
    "ratio_{a}_over_{b}": Quantity("perplexity, row {a} ÷ row {b}",
                                   "perplejidad, fila {a} ÷ fila {b}", kind="ratio"),
    "{what}_row{n}": Quantity("{what} perplexity, row {n}", "perplejidad {what}, fila {n}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
