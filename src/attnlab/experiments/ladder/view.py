"""The table and the figure of the ladder (its record is made by
``attnlab.experiments.ladder``): perplexity per row, the change from the row each is
measured against, and the small-data pair."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlab.experiments.ladder.claims import _rows
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def table(record: dict) -> str:
    """Params, perplexities and the change from the row above (named in its own column)."""
    rows = _rows(record)
    header = ["row", "model", "params", "Δ params", "train ppl", "held-out ppl", "vs row",
              "Δ held-out", "× held-out"]
    out = []
    for n, r in rows.items():
        above = rows.get(r["above"]) if r["above"] is not None else None
        if above is None:
            vs, dparams, dheld, ratio = "—", "—", "—", "—"
        else:
            h, h_above = mean_std(r["held_ppl"])[0], mean_std(above["held_ppl"])[0]
            vs = str(r["above"])
            dparams = f"{r['params'] - above['params']:+,}"
            dheld, ratio = f"{h - h_above:+.2f}", f"{h / h_above:.3f}"
        out.append([n, r["name"], r["params"], dparams, fmt_ms(r["train_ppl"]),
                    fmt_ms(r["held_ppl"]), vs, dheld, ratio])
    s = record["settings"]
    data = "all" if s["train_tokens"] is None else f"the first {s['train_tokens']:,}"
    note = (
        f"\nWidth {s['d_model']}, context {s['n_ctx']}, {s['steps']:,} AdamW steps at lr "
        f"{s['lr']:g}, batch {s['batch_size']}, on {data} training tokens; "
        f"{record['seeds']} seed(s), mean ± std. \"vs row\" is the row each change is measured "
        "against: the row above, except row 7 (a side row, against row 5) and row 8 "
        "(against row 6).\n"
    )
    text = markdown_table(header, out) + note
    pair = record.get("overfit")
    if pair:
        text += (
            f"\nOverfitting check: rows 9 and 10 trained again on only the first "
            f"{pair['train_tokens']:,} training tokens for {pair['steps']:,} steps (same batch "
            "and rate); this pair decides the claim that two blocks overfit.\n\n"
        )
        text += markdown_table(
            ["row", "model", "params", "train ppl", "held-out ppl"],
            [[r["row"], r["name"], r["params"], fmt_ms(r["train_ppl"]), fmt_ms(r["held_ppl"])]
             for r in pair["rows"]],
        )
    return text


def figure(record: dict) -> Figure:
    """Train and held-out perplexity per row (bars, log y, std as error bars)."""
    from matplotlib.figure import Figure

    rows = list(record["rows"])
    labels = [str(r["row"]) for r in rows]
    pair = record.get("overfit")
    if pair:  # the small-data check, drawn after the ladder and starred
        rows += pair["rows"]
        labels += [f"{r['row']}*" for r in pair["rows"]]
    x = list(range(len(rows)))
    fig = Figure(figsize=(9, 4.5))
    ax = fig.subplots()
    for offset, key, label in ((-0.2, "train_ppl", "train"), (0.2, "held_ppl", "held-out")):
        stats = [mean_std(r[key]) for r in rows]
        ax.bar([i + offset for i in x], [m for m, _ in stats], width=0.4, label=label,
               yerr=[sd for _, sd in stats], capsize=3)
    ax.set_yscale("log")
    ax.set_xticks(x, labels)
    xlabel = "ladder row (7 is a side row: row 5's head without residual)"
    if pair:
        xlabel += f"\n9*, 10*: on {pair['train_tokens']:,} training tokens"
    ax.set_xlabel(xlabel)
    ax.set_ylabel("perplexity (log scale)")
    ax.set_title("The ladder: perplexity per row")
    ax.legend()
    fig.tight_layout()
    return fig
