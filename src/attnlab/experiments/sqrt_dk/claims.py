"""The claims of "Why divide by √d_k", their rules and thresholds (docs/experiments.md,
"Claims and verdicts"). They read the record of ``attnlab.experiments.sqrt_dk``: its
``training`` rows, per setting and width d_k, with the per-seed ``gaps`` and the scaled and
unscaled runs' attention statistics at initialisation and after training."""

from __future__ import annotations

from attnlab.experiments.sqrt_dk.settings import NAME
from attnlab.kit.claims import (
    CLEAR,
    NEGLIGIBLE,
    Claim,
    Margins,
    Part,
    Records,
    Skip,
    claim,
    with_figures,
)
from attnlab.kit.quantities import Quantity
from attnlab.kit.tables import mean_std

# -- claims (docs/experiments.md, "Claims and verdicts") -------------------------
# "No difference" and "a large one" are the claims module's NEGLIGIBLE (5%) and CLEAR (10%)
# on the gap; each seed's gap compares the scaled and unscaled runs of that seed.

COLLAPSED = 0.5  # "collapses to single tokens": most rows (more than half) frozen
SMALL_WIDTH, LARGE_WIDTHS, COLLAPSE_WIDTH = 32, (256, 1024), 1024


def _rows_at(record: dict, width: int, setting: str | None = None) -> list[dict]:
    rows = [r for r in record["training"]
            if r["d_k"] == width and (setting is None or r["setting"] == setting)]
    if not rows:
        where = f"the {setting} setting" if setting else "any setting"
        raise Skip(f"this profile trains no width {width} in {where}")
    return rows


def _no_difference(records: Records) -> Margins:
    rows = _rows_at(records[NAME], SMALL_WIDTH)
    per_row = [[NEGLIGIBLE - abs(g) for g in r["gaps"]] for r in rows]
    return Margins([min(m) for m in zip(*per_row, strict=True)],
                   {f"gap_{r['setting']}_{r['d_k']}": r["gap"] for r in rows})


def _large(width: int) -> Part:
    def margins(records: Records) -> Margins:
        (row,) = _rows_at(records[NAME], width, "short")
        return Margins([g - CLEAR for g in row["gaps"]], {f"gap_short_{width}": row["gap"]})
    return Part(f"gap > {CLEAR:.0%} at d_k = {width} (short setting)", margins, "gap",
                f"d_k {width}")


def _spread_grows(width: int) -> Part:
    def margins(records: Records) -> Margins:
        (row,) = _rows_at(records[NAME], width, "short")
        un = row["unscaled"]
        ratios = [a / b for a, b in zip(un["after"]["score_std"], un["init"]["score_std"],
                                        strict=True)]
        return Margins([r - 1 for r in ratios],
                       {f"raw_score_std_{width}_init": mean_std(un["init"]["score_std"])[0],
                        f"raw_score_std_{width}_after": mean_std(un["after"]["score_std"])[0]})
    return Part(f"unscaled score std after training / at initialisation > 1 at d_k = {width}",
                margins, "× std", f"spread grows at {width}")


def _collapses(records: Records) -> Margins:
    (row,) = _rows_at(records[NAME], COLLAPSE_WIDTH, "short")
    frozen = row["unscaled"]["after"]["frozen"]
    return Margins([f - COLLAPSED for f in frozen],
                   {f"raw_frozen_{COLLAPSE_WIDTH}_after": mean_std(frozen)[0],
                    f"scaled_frozen_{COLLAPSE_WIDTH}_after":
                        mean_std(row["scaled"]["after"]["frozen"])[0]})


CLAIMS: list[Claim] = [
    claim("sqrt_dk.matters_only_when_wide",
          "The √d_k division makes no difference at width 32 and a large one at 256 and 1,024.",
          NAME,
          Part(f"|gap| < {NEGLIGIBLE:.0%} for every width-32 run (gap = held-out ppl raw / "
               "ppl ÷√d − 1)", _no_difference, "gap", "d_k 32"),
          *(_large(w) for w in LARGE_WIDTHS)),
    claim("sqrt_dk.unscaled_collapses",
          "Without the division the score spread grows during training and attention "
          "collapses to single tokens.",
          NAME,
          *(_spread_grows(w) for w in LARGE_WIDTHS),
          Part(f"unscaled, d_k = {COLLAPSE_WIDTH}: fraction of rows with max weight > 0.99 "
               f"after training > {COLLAPSED:g}", _collapses, "fraction", "collapse")),
]

FIGURES = {
    "gap_{setting}_{d_k}": Quantity(
        "held-out perplexity unscaled ÷ scaled − 1, d_k = {d_k} ({setting} setting)",
        "perplejidad de validación sin escalar ÷ escalada − 1, d_k = {d_k} (ajuste {setting})",
        kind="percent"),
    "raw_score_std_{w}_init": Quantity("unscaled score spread (std) at initialisation, d_k = {w}",
                                       "dispersión (desviación típica) de las puntuaciones sin "
                                       "escalar al inicio, d_k = {w}"),
    "raw_score_std_{w}_after": Quantity("unscaled score spread (std) after training, d_k = {w}",
                                        "dispersión (desviación típica) de las puntuaciones sin "
                                        "escalar tras el entrenamiento, d_k = {w}"),
    "raw_frozen_{w}_after": Quantity("rows frozen on one token (max weight > 0.99), unscaled, "
                                     "d_k = {w}", "filas congeladas en un token (peso máximo > "
                                     "0.99), sin escalar, d_k = {w}", kind="percent"),
    "scaled_frozen_{w}_after": Quantity("rows frozen on one token, scaled, d_k = {w}",
                                        "filas congeladas en un token, escalada, d_k = {w}",
                                        kind="percent"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
