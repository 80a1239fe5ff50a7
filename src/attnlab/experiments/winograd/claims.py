"""The claims of the Winograd experiment, their rules and thresholds (docs/experiments.md,
"Winograd referents"). They read the record of ``attnlab.experiments.winograd``: per
variant and model the held-out forced choice per seed, and the two-block model's attention
rows at the scored position (``attention.blocks``)."""

from __future__ import annotations

from typing import Any

from attnlab.experiments.winograd.settings import MODELS, NAME
from attnlab.kit.claims import (
    CLEAR,
    NEGLIGIBLE,
    WELL_ABOVE,
    Claim,
    Margins,
    Part,
    Records,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity
from attnlab.kit.tables import mean_std

# Thresholds: "as well as" is within NEGLIGIBLE (5 points) of accuracy, "well above chance"
# WELL_ABOVE (20 points) above 0.5; "same" and "differs" are NEGLIGIBLE and CLEAR in attention
# weight. "Below chance" keeps a 10-point allowance: the held-out set is fixed (120 (pair,
# role) units, sampling noise ~0.05), a noise that seeds do not average away.
BELOW_CHANCE = 0.40  # "below chance": held-out forced choice under this
NEAR_PERFECT = 0.95  # "near perfect": above this
LEARNT = 0.90  # variant A's mean must also answer (not be equal to failing transformers)


def _forced(records: Records, variant: str, kind: str) -> list[float]:
    return records[NAME]["variants"][variant]["models"][kind]["forced"]


def _acc_part(variant: str, kind: str, margin: Any, rule: str, name: str) -> Part:
    def margins(records: Records) -> Margins:
        acc = _forced(records, variant, kind)
        return Margins([margin(a) for a in acc], {f"{kind}_{variant}": mean_std(acc)[0]})
    return Part(rule, margins, "accuracy", name)


def _mean_as_well(records: Records) -> Margins:
    mean, one, two = (_forced(records, "A", k) for k in MODELS)
    per = [m - max(o, t) + NEGLIGIBLE for m, o, t in zip(mean, one, two, strict=True)]
    return Margins(per, {"mean_A": mean_std(mean)[0], "one_block_A": mean_std(one)[0],
                         "two_blocks_A": mean_std(two)[0]})


def _attention_part(block: int, margin: Any, rule: str) -> Part:
    def margins(records: Records) -> Margins:
        blk = records[NAME]["attention"]["blocks"][block]
        noun = blk.get("noun_abs_diff")
        return Margins([margin(d) for d in blk["max_abs_diff"]],
                       {f"block{block + 1}_max_abs_diff": mean_std(blk["max_abs_diff"])[0],
                        f"block{block + 1}_noun_diff": None if noun is None else
                        mean_std(noun)[0]})
    return Part(rule, margins, "weight")


CLAIMS: list[Claim] = [
    claim("winograd.variant_a_mean_suffices",
          "Variant A: the uniform mean answers as well as a transformer", NAME,
          Part(f"held-out forced choice of the mean ≥ the better transformer (one or two "
               f"blocks, same seed) − {NEGLIGIBLE:g}", _mean_as_well, "accuracy", "as well"),
          _acc_part("A", "mean", lambda a: a - LEARNT, f"mean's forced choice ≥ {LEARNT:g}",
                    "answers")),
    claim("winograd.variant_b_needs_order",
          "Variant B: the mean is below chance, one block is well above it, two blocks "
          "near perfect", NAME,
          _acc_part("B", "mean", lambda a: BELOW_CHANCE - a,
                    f"mean's held-out forced choice < {BELOW_CHANCE:g}", "mean"),
          _acc_part("B", "one block", lambda a: a - (0.5 + WELL_ABOVE),
                    f"one block's > {0.5 + WELL_ABOVE:g}", "one block"),
          _acc_part("B", "two blocks", lambda a: a - NEAR_PERFECT,
                    f"two blocks' > {NEAR_PERFECT:g}", "two blocks")),
    claim("winograd.block1_attention_same",
          "Block 1's attention at the scored position is the same for `tired` and `wet`", NAME,
          _attention_part(0, lambda d: NEGLIGIBLE - d,
                          "two-block model, variant B: max over all 15 tokens of |row(tired) − "
                          f"row(wet)| of the head-averaged block-1 row < {NEGLIGIBLE:g} (the "
                          "largest difference on the two nouns alone is shown beside it)")),
    claim("winograd.block2_attention_differs",
          "Block 2's attention at the scored position differs between `tired` and `wet`", NAME,
          _attention_part(1, lambda d: d - CLEAR,
                          f"the same difference for block 2 > {CLEAR:g}")),
]

FIGURES = {
    "block{b}_max_abs_diff": Quantity(
        "largest difference of the block-{b} attention row between `tired` and `wet`",
        "mayor diferencia de la fila de atención del bloque {b} entre `tired` y `wet`"),
    "block{b}_noun_diff": Quantity("largest difference on the two nouns",
                                   "mayor diferencia en los dos sustantivos"),
    "{model}_{variant}": Quantity("held-out forced-choice accuracy of {model}, variant {variant}",
                                  "acierto de elección forzada de {model}, variante {variant}"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
