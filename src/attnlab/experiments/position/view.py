"""The table and the figure of "Position" (its record is made by
``attnlab.experiments.position``): perplexity per scheme and length with the ratios to the
trained length, the permutation checks, and perplexity against the window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlab.kit.tables import fmt_ms, markdown_table, mean_std

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _ppl(record: dict, scheme: str, n: int) -> float:
    row = next(r for r in record["rows"] if r["scheme"] == scheme)
    return mean_std(row["ppl"][str(n)])[0]


def table(record: dict) -> str:
    """Held-out perplexity per scheme and length, ratios to the trained length; permutations."""
    s = record["settings"]
    lengths, trained = s["eval_lengths"], s["n_ctx"]
    header = ["scheme", "params"] + [f"ppl @ {n}" for n in lengths] \
        + [f"× @ {n} / @ {trained}" for n in lengths if n != trained]
    rows = []
    for r in record["rows"]:
        base = mean_std(r["ppl"][str(trained)])[0] if str(trained) in r["ppl"] else None
        ratios = [f"{mean_std(r['ppl'][str(n)])[0] / base:.3f}" if base else "—"
                  for n in lengths if n != trained]
        rows.append([r["scheme"], r["params"]] + [fmt_ms(r["ppl"][str(n)]) for n in lengths]
                    + ratios)
    data = "all" if s["train_tokens"] is None else f"the first {s['train_tokens']:,}"
    note = (f"\nTrained on {trained}-token windows ({s['steps']:,} steps of batch "
            f"{s['batch_size']}, {data} training tokens); held-out perplexity over the whole "
            f"held-out split in non-overlapping windows of each length; {record['seeds']} "
            "seed(s). The learned table has rows for every evaluated position; those past "
            f"{trained} are untrained.\n")
    perm = markdown_table(
        ["position", "causal mask", "max |f(Px) − P f(x)|"],
        [[p["position"], "yes" if p["causal"] else "no", f"{p['max_diff']:.2e}"]
         for p in record["permutation"]])
    return (markdown_table(header, rows) + note
            + "\n**Permutation equivariance of one self-attention layer**\n\n" + perm)


def figure(record: dict) -> Figure:
    """Held-out perplexity against evaluation length, one line per scheme."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import ScalarFormatter

    s = record["settings"]
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    rows = record["rows"]
    for i, r in enumerate(rows):
        stats = [mean_std(r["ppl"][str(n)]) for n in s["eval_lengths"]]
        dodge = 2 ** (0.025 * (i - (len(rows) - 1) / 2))  # side by side: overlaps stay visible
        ax.errorbar([n * dodge for n in s["eval_lengths"]], [m for m, _ in stats],
                    yerr=[sd for _, sd in stats], marker="o", capsize=3, label=r["scheme"],
                    alpha=0.85)
    ax.axvline(s["n_ctx"], color="k", ls=":", lw=1, label="trained length")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(s["eval_lengths"], [str(n) for n in s["eval_lengths"]])
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set(xlabel="evaluation window (tokens)", ylabel="held-out perplexity (log scale)",
           title=f"Trained on {s['n_ctx']} tokens: who extrapolates?")
    ax.legend()
    fig.tight_layout()
    return fig
