"""The table and the figure of "Where the parameters are" (its record is made by
``attnlab.experiments.params``): the per-block breakdown of each model with GPT-2 small's
counts, and how a block's and the whole model's parameters split."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnlab.experiments.params.settings import PARTS
from attnlab.kit.tables import markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
