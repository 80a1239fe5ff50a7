"""The claims of the in-context regression experiment, their rules and thresholds
(docs/experiments.md, "ICL as gradient descent"). They read the record of
``attnlab.experiments.icl_gd``: per seed (``per_seed``) each model's held-out ``loss`` and
the agreement of the layer's and the control's predictions with GD's."""

from __future__ import annotations

import numpy as np

from attnlab.experiments.icl_gd.settings import NAME
from attnlab.kit.claims import CLEAR, NEGLIGIBLE, Claim, Margins, Part, Records, claim, with_figures
from attnlab.kit.quantities import Quantity


def _runs(records: Records) -> list[dict]:
    return records[NAME]["per_seed"]


def _loss_matches(records: Records) -> Margins:
    """Per seed: NEGLIGIBLE − |loss(LSA) − loss(GD)| / loss(GD) ("matches": a negligible
    relative difference on the claims' one scale)."""
    gaps = [abs(r["loss"]["lsa"] - r["loss"]["gd"]) / r["loss"]["gd"] for r in _runs(records)]
    return Margins([NEGLIGIBLE - g for g in gaps], {"relative gap": float(np.mean(gaps))})


def _agree(records: Records) -> Margins:
    """Per seed: cosine(ŷ_LSA, ŷ_GD) over held-out tasks − (1 − NEGLIGIBLE) ("agree": the
    same predictions up to a negligible part)."""
    cos = [r["lsa_vs_gd"]["cosine"] for r in _runs(records)]
    rel = [r["lsa_vs_gd"]["rel_l2"] for r in _runs(records)]
    return Margins([c - (1 - NEGLIGIBLE) for c in cos],
                   {"cosine": float(np.mean(cos)), "relative L2": float(np.mean(rel))})


def _control_loss(records: Records) -> Margins:
    """Per seed: |loss(control) − loss(GD)| / loss(GD) − CLEAR ("does not match": a clear
    relative difference)."""
    gaps = [abs(r["loss"]["control"] - r["loss"]["gd"]) / r["loss"]["gd"]
            for r in _runs(records)]
    return Margins([g - CLEAR for g in gaps], {"relative gap": float(np.mean(gaps))})


def _control_cosine(records: Records) -> Margins:
    """Per seed: (1 − CLEAR) − cosine(ŷ_control, ŷ_GD) ("does not agree": short of
    agreement by a clear margin)."""
    cos = [r["control_vs_gd"]["cosine"] for r in _runs(records)]
    return Margins([(1 - CLEAR) - c for c in cos], {"cosine": float(np.mean(cos))})


CLAIMS: list[Claim] = [
    claim("icl_gd.loss_matches",
          "A linear self-attention layer trained on in-context linear regression matches the "
          "loss of one step of gradient descent on the context with the best step size.", NAME,
          Part(f"|held-out MSE of the layer − of one GD step| / GD's < {NEGLIGIBLE:g}",
               _loss_matches, "relative")),
    claim("icl_gd.predictions_agree",
          "On held-out tasks the trained layer's predictions agree with one GD step's.", NAME,
          Part(f"cosine similarity of the two prediction vectors > {1 - NEGLIGIBLE:g}", _agree,
               "cosine")),
    claim("icl_gd.control_does_not",
          "A layer whose context comes from another task (the pairs say nothing about the "
          "query's weights) neither matches GD's loss nor agrees with its predictions.", NAME,
          Part(f"|MSE of the control − of one GD step| / GD's > {CLEAR:g}", _control_loss,
               "relative", "loss differs"),
          Part(f"cosine of its predictions with GD's < {1 - CLEAR:g}", _control_cosine,
               "cosine", "predictions differ")),
]

FIGURES = {
    "relative gap": Quantity("relative gap of the held-out MSE to one GD step's",
                             "diferencia relativa del ECM de validación frente al de un paso "
                             "de descenso de gradiente"),
    "cosine": Quantity("cosine of the prediction vectors with one GD step's",
                       "coseno de los vectores de predicción con los de un paso de "
                       "descenso de gradiente"),
    "relative L2": Quantity("relative L2 distance of the predictions",
                            "distancia L2 relativa de las predicciones"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
