"""The claims of "Where the parameters are", their rules and thresholds (docs/experiments.md,
"Claims and verdicts"), and how they read the record of ``attnlab.experiments.params``: GPT-2
small counted three ways, and the MLP's share of each model's block."""

from __future__ import annotations

from attnlab.experiments.params.settings import GPT2_SMALL_TOTAL, NAME
from attnlab.kit.claims import Claim, Margins, Part, Records, Skip, claim, with_figures
from attnlab.kit.quantities import Quantity


def _gpt2_ours(records: Records) -> Margins:
    g = records[NAME]["gpt2"]
    off = max(abs(g["formula"] - GPT2_SMALL_TOTAL), abs(g["ours"] - GPT2_SMALL_TOTAL))
    return Margins([0.5 - off], {"formula": g["formula"], "ours": g["ours"],
                                 "expected": GPT2_SMALL_TOTAL})


def _gpt2_hf(records: Records) -> Margins:
    g = records[NAME]["gpt2"]
    if g["hf"] is None:
        raise Skip(f"Hugging Face count not available: {g['hf_note']}")
    return Margins([0.5 - abs(g["hf"] - g["ours"])], {"hf": g["hf"], "ours": g["ours"]})


def _mlp_share(name: str) -> Part:
    def margins(records: Records) -> Margins:
        (share,) = [m["shares"]["mlp"] for m in records[NAME]["models"] if m["name"] == name]
        return Margins([MLP_TOL - abs(share - 2 / 3)], {f"mlp_share[{name}]": share})
    return Part(f"|MLP share of {name}'s block parameters − 2/3| ≤ {MLP_TOL:g}", margins,
                "share", name)


MLP_TOL = 0.01  # "two thirds": 8d²+5d of 12d²+13d is 2/3 − O(1/d); within a point of it
CLAIMS: list[Claim] = [
    claim("params.gpt2_small_count",
          "GPT-2 small has 124,439,808 parameters: the formula 12d²+13d per block "
          "+ V·d + n_ctx·d + 2d, our model and Hugging Face's agree", NAME,
          Part("the formula's count == attnlab's count == 124,439,808",
               _gpt2_ours, "parameters", "formula and ours"),
          Part("Hugging Face's GPT-2 small count == attnlab's count (skipped without the "
               "transformers package)", _gpt2_hf, "parameters", "Hugging Face"),
          trained=False),
    claim("params.mlp_two_thirds",
          "the MLP holds two thirds of a block's parameters", NAME,
          _mlp_share("default"), _mlp_share("GPT-2 small"), trained=False),
]

FIGURES = {
    "formula": Quantity("count by the formula", "recuento por la fórmula", "parameters",
                        "parámetros", "count"),
    "ours": Quantity("attnlab's count", "recuento de attnlab", "parameters", "parámetros",
                     "count"),
    "expected": Quantity("the published count", "recuento publicado", "parameters",
                         "parámetros", "count"),
    "hf": Quantity("Hugging Face's count", "recuento de Hugging Face", "parameters",
                   "parámetros", "count"),
    "mlp_share[{name}]": Quantity("share of {name}'s block parameters in the MLP",
                                  "proporción de los parámetros del bloque de {name} en el MLP",
                                  kind="percent"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
