"""Where the parameters are: a per-block breakdown and GPT-2 small's count
(docs/experiments.md, "Where the parameters are").

Two models are counted part by part with ``attnlab.nn.params.breakdown``:
attnlab's default model (width 128, one block, four heads, BPE-1024) and GPT-2
small (Radford et al. 2019: d = 768, 12 blocks, V = 50,257, n_ctx = 1,024).
Per GPT-2 block the closed form is attention 4d² + 4d, MLP 8d² + 5d and two
LayerNorms 4d, together 12d² + 13d, so the MLP holds two thirds of a block.
The whole of GPT-2 small is

    n_layer·(12d² + 13d) + V·d + n_ctx·d + 2d = 124,439,808

(tied output layer), which must equal the count of our model built from
``gpt2_config()`` and, when ``transformers`` is importable, the count of
``GPT2LMHeadModel(GPT2Config())``. Both big models are built on PyTorch's
``meta`` device, which gives every tensor a shape and no storage, so counting
124M parameters allocates nothing.

Nothing is trained: every profile counts the same models. ``micro`` only
skips the Hugging Face model (importing ``transformers`` takes seconds; the
GPT-2 parity tests cover it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, value
from attnlab.kit.claims import Claim, Margins, Part, Records, Skip, claim, with_figures
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.kit.tables import markdown_table
from attnlab.running.runner import Results, RunSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure
from attnlab.nn.model_config import ModelConfig, gpt2_config
from attnlab.nn.params import breakdown, gpt2_formula

log = logging.getLogger(__name__)

NAME = "params"
NEEDS_CORPUS = False
GPT2_SMALL_TOTAL = 124_439_808  # docs/model.md
PARTS = ("attention", "mlp", "norms")


@dataclass(frozen=True)
class Settings:
    default_width: int = 128  # d_model of attnlab's default model
    default_layers: int = 1  # blocks of the default model
    compare_hf: bool = True  # also count GPT2LMHeadModel(GPT2Config()) if transformers imports


PROFILES = {
    "full": Settings(),
    "quick": Settings(),
    "micro": Settings(compare_hf=False),
}

def count_model(name: str, cfg: ModelConfig) -> dict[str, Any]:
    """The breakdown of ``cfg`` as a JSON record, built on the meta device (no storage)."""
    with torch.device("meta"):
        bd = breakdown(cfg)
    block_total = sum(sum(b.values()) for b in bd.per_block)
    parts = {p: sum(b[p] for b in bd.per_block) for p in PARTS}
    return {
        "name": name,
        "config": cfg.to_dict(),
        "per_block": bd.per_block,
        "embedding": bd.embedding,
        "blocks": block_total,
        "final_norm": bd.final_norm,
        "head": bd.head,
        "total": bd.total,
        "shares": {p: parts[p] / block_total if block_total else 0.0 for p in PARTS},
    }


def hf_gpt2_count() -> tuple[int | None, str]:
    """Parameters of ``GPT2LMHeadModel(GPT2Config())`` (tied matrix once), or None and why."""
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as err:
        return None, f"transformers not importable ({err})"
    with torch.device("meta"):
        model = GPT2LMHeadModel(GPT2Config())
    return sum(p.numel() for p in model.parameters()), "GPT2LMHeadModel(GPT2Config())"


def gpt2_parts_formula(d: int) -> dict[str, int]:
    """GPT-2's per-block closed forms: attention 4d²+4d, MLP 8d²+5d, norms 4d."""
    return {"attention": 4 * d * d + 4 * d, "mlp": 8 * d * d + 5 * d, "norms": 4 * d}


def plan(settings: Settings) -> list[RunSpec]:
    """Nothing to train: counting is analytic."""
    return []


def analyse(settings: Settings, results: Results | None = None, ctx: Any = None) -> dict[str, Any]:
    """Count both models part by part, and GPT-2 small three ways."""
    default = ModelConfig(d_model=settings.default_width, n_layer=settings.default_layers)
    gpt2 = gpt2_config()
    d, n_layer, vocab, n_ctx = gpt2.d_model, gpt2.n_layer, gpt2.vocab_size, gpt2.n_ctx
    models = [count_model("default", default), count_model("GPT-2 small", gpt2)]
    hf, hf_note = hf_gpt2_count() if settings.compare_hf else (None, "not counted in this profile")
    return {
        "models": models,
        "gpt2": {
            "d": d, "n_layer": n_layer, "vocab": vocab, "n_ctx": n_ctx,
            "block_formula": 12 * d * d + 13 * d,
            "parts_formula": gpt2_parts_formula(d),
            "formula": gpt2_formula(d, n_layer, vocab, n_ctx),
            "ours": models[1]["total"],
            "hf": hf,
            "hf_note": hf_note,
            "expected": GPT2_SMALL_TOTAL,
        },
    }


def table(record: dict[str, Any]) -> str:
    """Markdown: the per-block breakdown of each model, then the GPT-2 small counts."""
    rows = []
    for m in record["models"]:
        blocks = m["per_block"]
        same = all(b == blocks[0] for b in blocks)
        groups = [(f"each of {len(blocks)} blocks" if len(blocks) > 1 else "block", blocks[0])]
        if not same:
            groups = [(f"block {i + 1}", b) for i, b in enumerate(blocks)]
        for label, b in groups:
            total = sum(b.values())
            rows.append([m["name"], label, b["attention"], b["mlp"], b["norms"], total,
                         f"{b['mlp'] / total:.1%}" if total else "–"])
        rows.append([m["name"], "embeddings", "", "", "", m["embedding"], ""])
        rows.append([m["name"], "final norm", "", "", "", m["final_norm"], ""])
        tied = " (tied)" if m["config"]["tie_weights"] else ""
        rows.append([m["name"], f"output layer{tied}", "", "", "", m["head"], ""])
        rows.append([m["name"], "**total**", "", "", "", m["total"], ""])
    out = markdown_table(
        ["model", "part", "attention", "MLP", "norms", "total", "MLP share"], rows
    )
    g = record["gpt2"]
    pf = g["parts_formula"]
    gpt2_block = record["models"][1]["per_block"][0]
    counts = [
        ["block: attention", "4d² + 4d", pf["attention"], gpt2_block["attention"]],
        ["block: MLP", "8d² + 5d", pf["mlp"], gpt2_block["mlp"]],
        ["block: two LayerNorms", "4d", pf["norms"], gpt2_block["norms"]],
        ["block", "12d² + 13d", g["block_formula"], sum(gpt2_block.values())],
        ["model", "n_layer·(12d²+13d) + V·d + n_ctx·d + 2d", g["formula"], g["ours"]],
    ]
    hf = f"{g['hf']:,}" if g["hf"] is not None else f"– ({g['hf_note']})"
    out += (
        f"\nGPT-2 small (d = {g['d']}, {g['n_layer']} blocks, V = {g['vocab']:,}, "
        f"n_ctx = {g['n_ctx']:,}, tied output layer):\n\n"
        + markdown_table(["what", "formula", "formula value", "attnlab count"], counts)
        + f"\nHugging Face GPT2LMHeadModel: {hf}; the chapter's figure: {g['expected']:,}.\n"
    )
    return out


def figure(record: dict[str, Any]) -> Figure:
    """How a block's parameters split (left) and how the whole model's do (right)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.6))
    block_ax, model_ax = fig.subplots(1, 2)
    names = [m["name"] for m in record["models"]]
    ys = range(len(names))

    def stacked(ax: Any, parts: list[tuple[str, list[float]]], title: str) -> None:
        left = [0.0] * len(names)
        for label, values in parts:
            ax.barh(ys, values, left=left, label=label)
            for y, (x0, v) in enumerate(zip(left, values, strict=True)):
                if v >= 0.06:
                    ax.text(x0 + v / 2, y, f"{v:.0%}", ha="center", va="center", fontsize=8)
            left = [a + b for a, b in zip(left, values, strict=True)]
        ax.set_yticks(list(ys), names)
        ax.invert_yaxis()  # first model on top
        ax.set_xlim(0, 1)
        ax.set_title(title)
        ax.legend(fontsize=8, loc="lower right", bbox_to_anchor=(1.0, 1.08), ncol=2)

    labels = {"attention": "attention", "mlp": "MLP", "norms": "norms"}
    stacked(block_ax, [(labels[p], [m["shares"][p] for m in record["models"]]) for p in PARTS],
            "share of a block's parameters")
    whole = [("embeddings", "embedding"), ("blocks", "blocks"), ("final norm", "final_norm"),
             ("output layer", "head")]
    stacked(model_ax, [(label, [m[key] / m["total"] for m in record["models"]])
                       for label, key in whole], "share of the whole model")
    fig.tight_layout()
    return fig


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

# -- the chapter's part (attnlab.kit.chapter): GPT-2 small's parameters
F = ChapterFigure
PUBLISHED = (
    F("params/gpt2 embedding", "GPT-2 small: token and position embeddings", 39_383_808,
      "token embedding 38,597,376 + positions 786,432"),
    F("params/gpt2 block", "GPT-2 small: one block", 7_087_872),
    F("params/gpt2 blocks", "GPT-2 small: twelve blocks", 85_054_464),
    F("params/gpt2 final norm", "GPT-2 small: final LayerNorm", 1_536),
    F("params/gpt2 total", "GPT-2 small: total", 124_439_808),
)


def read_chapter(rec: dict) -> Measured:
    """The measured figures of ``PUBLISHED``' keys that ``rec`` holds."""
    for m in rec.get("models", []):
        if m["name"] == "GPT-2 small":
            return {"params/gpt2 embedding": m["embedding"],
                    "params/gpt2 block": sum(m["per_block"][0].values()),
                    "params/gpt2 blocks": m["blocks"], "params/gpt2 final norm": m["final_norm"],
                    "params/gpt2 total": m["total"]}
    return {}


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "params.gpt2_small_count": {"formula and ours": value("params/gpt2 total",
                                                          ("parameters", "parámetros"),
                                                          "count")},
}

CHAPTER = Chapter(
    budget=("analytic: GPT-2 small's configuration"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)


EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
