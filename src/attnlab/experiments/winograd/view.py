"""The Winograd experiment's report section: its table and its figure, from the record
``attnlab.experiments.winograd.analyse`` writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from attnlab.experiments.winograd.settings import MODELS, PROBE_ADJECTIVES
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def table(record: dict[str, Any]) -> str:
    """Accuracy per variant and model, then the attention at the scored position."""
    rows = []
    for variant, v in record["variants"].items():
        for kind, m in v["models"].items():
            rows.append([variant, kind, m["steps"], m["params"], fmt_ms(m["forced"]),
                         fmt_ms(m["top1"]), fmt_ms(m["train_forced"])])
    out = [
        "Held-out sentences, scored at the word after `so the` (forced choice: chance 50%; "
        "a bag of words can reach at most 67% on variant B's training sentences).\n",
        markdown_table(["variant", "model", "steps", "params", "forced choice (held)",
                        "top-1 (held)", "forced choice (train)"], rows),
    ]
    probe = record.get("attention")
    if probe:
        tokens = list(probe["tokens"])
        adj_at = tokens.index("{adj}")
        tokens[adj_at] = " / ".join(PROBE_ADJECTIVES)
        header = ["pos", "token"] + [f"block {b + 1} · {adj}"
                                     for b in range(len(probe["blocks"])) for adj in
                                     PROBE_ADJECTIVES]
        att_rows = [[i, f"`{tok}`"] + [f"{blk[adj][i]:.3f}" for blk in probe["blocks"]
                                       for adj in PROBE_ADJECTIVES]
                    for i, tok in enumerate(tokens)]
        diffs = ", ".join(f"block {b + 1}: {fmt_ms(blk['max_abs_diff'], 3)}"
                          for b, blk in enumerate(probe["blocks"]))
        probs = "; ".join(f"*{adj}*: P(animal) {p['animal']:.2f}, P(street) {p['street']:.2f}"
                          for adj, p in probe["answer_prob"].items())
        on_adj = ", ".join(f"block {b + 1}: " + " vs ".join(
            f"{blk[adj][adj_at]:.2f}" for adj in PROBE_ADJECTIVES)
            for b, blk in enumerate(probe["blocks"]))
        held = "held out" if probe["pair_held_out"] else "a training pair"
        out += [
            f"\nAttention of the model with {probe['model']} (variant {probe['variant']}) at the "
            "scored position, averaged over heads and seeds, for `" + probe["sentences"]["tired"]
            + "` and the same with `wet` (animal, street is " + held + "):\n",
            markdown_table(header, att_rows),
            f"\nmax |tired − wet| over the row: {diffs}. Weight on the adjective itself "
            f"(tired vs wet): {on_adj}; block 1's query is the same in both sentences, so "
            f"any block-1 difference comes from the adjective's key. Next word: {probs}.\n",
        ]
    return "\n".join(out)


def figure(record: dict[str, Any]) -> Figure:
    """Forced-choice accuracy per model and variant; attention rows per block."""
    from matplotlib.figure import Figure

    probe = record.get("attention") or {}
    n_block = len(probe.get("blocks", []))
    # accuracy on top, one panel per block below it: 11 inches wide, legible at a page's width
    fig = Figure(figsize=(11, 7.2 if n_block else 3.8))
    grid = fig.add_gridspec(2 if n_block else 1, max(n_block, 1))
    ax = fig.add_subplot(grid[0, :])
    width = 0.8 / len(record["variants"])
    for i, (variant, v) in enumerate(record["variants"].items()):
        stats = [mean_std(v["models"][k]["forced"]) for k in MODELS]
        ax.bar(np.arange(len(MODELS)) + i * width, [m for m, _ in stats], width,
               yerr=[sd for _, sd in stats], label=f"variant {variant}")
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1, label="chance")
    ax.set_xticks(np.arange(len(MODELS)) + width * (len(record["variants"]) - 1) / 2, MODELS)
    ax.set_ylim(0, 1.2)
    ax.set_ylabel("held-out forced-choice accuracy")
    ax.legend(fontsize=8, loc="upper center", ncol=3)
    tokens = list(probe.get("tokens", []))
    if "{adj}" in tokens:
        tokens[tokens.index("{adj}")] = "tired/wet"
    for b, blk in enumerate(probe.get("blocks", [])):
        ax = fig.add_subplot(grid[1, b])
        x = np.arange(len(tokens))
        for j, adj in enumerate(PROBE_ADJECTIVES):
            ax.bar(x + (j - 0.5) * 0.4, blk[adj], 0.4, label=f"… too {adj} …")
        ax.set_xticks(x, tokens, rotation=60, fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(f"block {b + 1}: attention of the last `the`\n(mean of heads)", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
