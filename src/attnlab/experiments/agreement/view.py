"""The verb-agreement experiment's report section: its table and its figure, from the record
``attnlab.experiments.agreement.analyse`` writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from attnlab.experiments.agreement.measure import (
    probe_subject_and_stems,
    routing_shares,
    subject_and_stems,
)
from attnlab.experiments.agreement.settings import GROUPS, PROBE
from attnlab.kit.claims import MOST
from attnlab.kit.tables import fmt_ms, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def table(record: dict[str, Any]) -> str:
    s = record["settings"]
    acc = markdown_table(
        ["what", "held-out top-1 (clauses 2+)"],
        [["model", fmt_ms(record["top1"], 3)], ["majority-form baseline",
                                                  f"{record['baseline']:.3f}"]])
    ranked = [sorted(heads, key=lambda h: -h["subject"]) for heads in record["heads"]]
    rows = []
    for k in range(len(ranked[0])):
        first = ranked[0][k]
        rows.append([k + 1, f"block {first['block']} head {first['head']}"]
                    + [fmt_ms([heads[k][g] for heads in ranked], 3) for g in GROUPS])
    heads = markdown_table(["rank by subject weight", "in seed 0"] + list(GROUPS), rows)
    shares = [max(routing_shares(h)) for h in record["heads"]]
    both = [max(subject_and_stems(h)) for h in record["heads"]]
    head, mass = probe_subject_and_stems(record)
    return (
        f"{s['n_layer']} blocks of {s['n_head']} heads, width {s['d_model']}, {s['steps']} "
        f"steps; {record['n_held']} held-out sentences; {record['seeds']} seed(s), mean ± std."
        f"\n\n{acc}\nAttention of the predicting position (the subject pronoun of clauses 2 "
        "and 3) by group of keys, mean over held-out sentences; heads ranked within each seed "
        f"by their weight on the subject:\n\n{heads}\nLargest share of all heads' routing "
        f"mass (subject + stems) held by one head: {fmt_ms(shares, 3)}.\n\n"
        f"Largest weight of one head on the subject and the stems together (the curriculum's "
        f"picture): {fmt_ms(both, 3)}; on “{PROBE} ___” itself (seed 0), {head} puts "
        f"{mass:.3f} of the row at `he` on `he` and both `work`s.\n"
    )


def figure(record: dict[str, Any]) -> Figure:
    """Seed 0: every head's row at `he` in the probe sentence, and its group masses."""
    from matplotlib.figure import Figure

    probe = record["probe"]
    heads = record["heads"][0]
    names = [f"b{h['block']}h{h['head']}" for h in heads]
    fig = Figure(figsize=(11, 0.45 * len(names) + 2))
    left, right = fig.subplots(1, 2, width_ratios=(1.3, 1))
    image = left.imshow(np.asarray(probe["rows"]), vmin=0, vmax=1, cmap="viridis",
                        aspect="auto")
    left.set_xticks(range(len(probe["tokens"])), probe["tokens"])
    left.set_yticks(range(len(names)), names)
    left.set_title(f"attention of `he` in “{PROBE} ___” (seed 0)")
    fig.colorbar(image, ax=left, fraction=0.04)
    start = np.zeros(len(names))
    for g in GROUPS:
        values = np.array([h[g] for h in heads])
        right.barh(range(len(names)), values, left=start, label=g)
        start += values
    right.set_yticks(range(len(names)), names)
    right.invert_yaxis()  # the first head on top, as in the rows on the left
    right.axvline(MOST, color="k", lw=0.8, ls=":")
    right.set_xlim(0, 1)
    right.set_title("weight at the predicting position, held-out mean (seed 0)")
    right.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4)
    fig.tight_layout()
    return fig
