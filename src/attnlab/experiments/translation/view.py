"""The table and the figure of "Where attention was born" (its record is made by
``attnlab.experiments.translation``): accuracy against source length per model (Bahdanau et
al. 2015, Fig. 2), seed by seed, and the additive model's alignment of one sentence
(their Fig. 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from attnlab.experiments.translation.measure import inside
from attnlab.experiments.translation.settings import MODELS
from attnlab.kit.tables import fmt_ms, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LABELS = {"rnn": "GRU encoder–decoder, no attention", "bahdanau": "GRU + additive attention",
          "transformer": "transformer encoder–decoder"}
SHORT = {"rnn": "no attention", "bahdanau": "additive", "transformer": "transformer"}
COLORS = {"rnn": "tab:red", "bahdanau": "tab:blue", "transformer": "tab:green"}


def band_names(record: dict[str, Any]) -> list[str]:
    """Each band as "lo–hi", marked "(beyond)" past the trained lengths.

    >>> band_names({"bands": [[5, 7], [15, 20]], "train_band": [5, 14]})
    ['5–7', '15–20 (beyond)']
    """
    within = inside(record["bands"], record["train_band"])
    return [f"{lo}–{hi}" + ("" if i in within else " (beyond)")
            for i, (lo, hi) in enumerate(record["bands"])]


def _per_band(values: list[list[float | None]], i: int) -> str:
    got = [v[i] for v in values if v[i] is not None]
    return fmt_ms(got, 3) if got else "–"


def _quantity_table(record: dict[str, Any], key: str, models: tuple[str, ...]) -> str:
    rows = [[SHORT[m]] + [_per_band(record["models"][m][key], i)
                          for i in range(len(record["bands"]))] for m in models]
    return markdown_table(["model"] + band_names(record), rows)


def _seed_table(record: dict[str, Any]) -> str:
    rows = []
    for m in MODELS:
        for seed, acc in enumerate(record["models"][m]["token_acc"]):
            rows.append([SHORT[m], seed] + [f"{a:.3f}" for a in acc])
    rows.append(["never reads the source", "–"] + [f"{b:.3f}" for b in record["blind"]])
    return markdown_table(["model", "seed"] + band_names(record), rows)


def _models_table(record: dict[str, Any]) -> str:
    steps = record["steps"]
    rows = [[LABELS[m], record["models"][m]["d_model"], f"{record['models'][m]['params']:,}",
             fmt_ms(record["models"][m]["held_ppl"], 3)]
            + [steps[m][i] for i in range(len(steps["lengths"]))] for m in MODELS]
    return markdown_table(["model", "width", "params", "held-out ppl (trained lengths)"]
                          + [f"dependent steps, n = {n}" for n in steps["lengths"]], rows)


def table(record: dict[str, Any]) -> str:
    """Markdown: the models; token accuracy per band (mean ± std over seeds, then seed by
    seed); sentences exactly right; the predicate adjective's agreement; the alignment."""
    lo, hi = record["train_band"]
    parts = [
        f"Training sentences of {lo} to {hi} source words ({record['n_train']:,}), "
        f"{record['n_per_band']} held-out sentences per band; bands marked (beyond) are "
        "longer than every training sentence. Dependent steps: the longest chain of "
        "operations in the autograd graph of one training forward pass at n source and n "
        "target words, counted.",
        _models_table(record),
        "Token accuracy (each target word given the source and the reference words before "
        "it), mean ± std over seeds:",
        _quantity_table(record, "token_acc", MODELS),
        "Token accuracy, seed by seed, and a decoder that never reads the source (the most "
        "frequent next word after each word):",
        _seed_table(record),
        "Sentences translated exactly right (greedy decoding):",
        _quantity_table(record, "exact", MODELS),
        "The predicate adjective's gender, agreeing with the subject noun past every "
        "relative clause (forced choice between its two forms; chance 0.5):",
        _quantity_table(record, "agreement", MODELS),
        "Target words whose largest attention weight is on their gold source word (the "
        "transformer: its best layer and head):",
        _quantity_table(record, "alignment", ("bahdanau", "transformer")),
    ]
    return "\n\n".join(parts) + "\n"


def figure(record: dict[str, Any]) -> Figure:
    """Left: token accuracy against source length, one line per seed and model (Bahdanau et
    al. 2015, Fig. 2), the trained lengths shaded. Right: the additive model's weights on
    one held-out sentence, gold alignment circled (their Fig. 3)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4.8))
    ax, bx = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.2, 1]})
    mids = [(lo + hi) / 2 for lo, hi in record["bands"]]
    lo, hi = record["train_band"]
    ax.axvspan(lo, hi, color="0.92", label="trained lengths")
    for m in MODELS:
        for seed, acc in enumerate(record["models"][m]["token_acc"]):
            ax.plot(mids, acc, "o-", color=COLORS[m], alpha=0.7, lw=1.2,
                    label=SHORT[m] if seed == 0 else None)
    ax.plot(mids, record["blind"], ":", color="0.4", label="never reads the source")
    ax.set_xlabel("source sentence length (words, band midpoint)")
    ax.set_ylabel("token accuracy (held out)")
    ax.set_title("accuracy against source length, each seed")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower left")
    ex = record["example"]
    weights = np.asarray(ex["weights"])
    bx.imshow(weights, cmap="Greys", vmin=0, vmax=1, aspect="auto")
    gold = [(k, j) for k, j in enumerate(ex["gold"]) if j is not None]
    bx.scatter([j for _, j in gold], [k for k, _ in gold], s=60, facecolors="none",
               edgecolors="tab:orange", label="gold alignment")
    bx.set_xticks(range(len(ex["source"])), ex["source"], rotation=60, fontsize=7)
    bx.set_yticks(range(len(ex["target"])), ex["target"], fontsize=7)
    bx.set_title("additive attention, seed 0 (white 0, black 1)")
    bx.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0, -0.45))
    fig.tight_layout()
    return fig
