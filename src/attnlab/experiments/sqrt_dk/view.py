"""The table and the figure of "Why divide by √d_k" (its record is made by
``attnlab.experiments.sqrt_dk``): the three analytic tables, the training table, and
variance, frozen rows and the gap against the width."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlab.kit.claims import CLEAR, NEGLIGIBLE
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def table(record: dict) -> str:
    """Three analytic tables and one training table."""
    var = markdown_table(["d", "Var(q·k)", "std", "√d"],
                         [[r["d"], r["var"], r["std"], r["sqrt_d"]] for r in record["variance"]])
    row = markdown_table(
        ["d", "score std", "eff. tokens ÷√d", "eff. tokens raw"],
        [[r["d"], r["score_std"], r["eff_scaled"], r["eff_unscaled"]] for r in record["one_row"]])
    frz = markdown_table(
        ["d", "frozen ÷√d", "frozen raw", "Jacobian trace ÷√d", "Jacobian trace raw"],
        [[r["d"], r["frozen_scaled"], r["frozen_unscaled"], r["jac_scaled"], r["jac_unscaled"]]
         for r in record["frozen"]])
    s = record["settings"]
    n_keys = s["n_keys"]
    parts = [
        f"**Var(q·k), q, k ~ N(0, I_d)** ({s['n_pairs']:,} pairs)\n\n{var}",
        f"**One row of {n_keys} scores** (effective tokens = exp(entropy); at most {n_keys})"
        f"\n\n{row}",
        f"**{s['n_rows']:,} random rows of {n_keys} scores** (frozen: max weight > 0.99)"
        f"\n\n{frz}",
    ]
    if record["training"]:
        parts.append("**Training with (÷√d) and without (raw) the division**\n\n"
                     + _training_table(record))
    return "\n".join(parts)


def _training_table(record: dict) -> str:
    """Perplexities and gap per width; then the attention statistics at init and after."""
    ppl_rows, stat_rows = [], []
    for r in record["training"]:
        sc, un = r["scaled"], r["unscaled"]
        ppl_rows.append([r["setting"], r["d_k"], sc["heads"], fmt_ms(sc["held_ppl"]),
                         fmt_ms(un["held_ppl"]), f"{100 * r['gap']:+.1f}%"])
        for when, words in (("init", "initialisation"), ("after", "after training")):
            cells = [r["setting"], r["d_k"], words]
            for key, digits in (("score_std", 2), ("eff_tokens", 1), ("frozen", 3)):
                cells += [fmt_ms(sc[when][key], digits), fmt_ms(un[when][key], digits)]
            stat_rows.append(cells)
    s = record["settings"]
    default = (
        f" default: {s['default_steps']:,} steps of batch {s['default_batch']}, the default "
        f"pre-norm block with {s['d_model']}/d_k heads of width d_k."
        if any(r["setting"] == "default" for r in record["training"]) else ""
    )
    note = (
        f"\nHeld-out perplexity; gap = ppl raw / ppl ÷√d − 1.{default} short: "
        f"{s['short_steps']:,} steps of batch {s['short_batch']}, one head of q/k width d_k, "
        f"no LayerNorm. {record['seeds']} seed(s).\n"
    )
    stats_note = (
        f"\nOn {s['stats_windows']} held-out windows of {s['n_ctx']} tokens: score std over the "
        f"causally allowed scores (as the model scales them); effective tokens = mean "
        f"exp(entropy) and frozen = fraction of rows with max weight > 0.99, over query "
        f"positions 1..{s['n_ctx'] - 1}.\n"
    )
    header = ["setting", "d_k", "when", "score std ÷√d", "score std raw", "eff. tokens ÷√d",
              "eff. tokens raw", "frozen ÷√d", "frozen raw"]
    return (markdown_table(["setting", "d_k", "heads", "ppl ÷√d", "ppl raw", "gap"], ppl_rows)
            + note + "\n" + markdown_table(header, stat_rows) + stats_note)


def figure(record: dict) -> Figure:
    """Var(q·k) vs d; frozen fraction vs d (random rows, and trained heads); gap vs d_k."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.5, 4))
    axes = fig.subplots(1, 3)
    d = [r["d"] for r in record["variance"]]
    ax = axes[0]
    ax.loglog(d, [r["var"] for r in record["variance"]], "o-", label="measured Var(q·k)")
    ax.loglog(d, d, "k--", lw=1, label="Var = d")
    ax.set(xlabel="d", ylabel="variance", title="Var(q·k) grows like d")
    ax.legend()
    ax = axes[1]
    for key, label in (("frozen_scaled", "random rows ÷√d"),
                       ("frozen_unscaled", "random rows raw")):
        ax.semilogx(d, [r[key] for r in record["frozen"]], "o-", label=label)
    short = [r for r in record["training"] if r["setting"] == "short"]
    for name, marker in (("scaled", "s"), ("unscaled", "^")):
        if short:
            ax.semilogx([r["d_k"] for r in short],
                        [mean_std(r[name]["after"]["frozen"])[0] for r in short], marker + ":",
                        label=f"trained head {'÷√d' if name == 'scaled' else 'raw'}")
    ax.set(xlabel="d (= d_k)", ylabel="fraction of rows with max weight > 0.99",
           title="Frozen softmax rows", ylim=(-0.03, 1.03))
    ax.legend(fontsize=8)
    ax = axes[2]
    for setting in ("default", "short"):
        rows = [r for r in record["training"] if r["setting"] == setting]
        if rows:
            ax.semilogx([r["d_k"] for r in rows], [100 * r["gap"] for r in rows], "o-",
                        label=f"{setting} setting")
    ax.axhline(0, color="k", lw=0.8)
    ax.axhspan(-100 * NEGLIGIBLE, 100 * NEGLIGIBLE, color="0.9",
               label=f"|gap| < {NEGLIGIBLE:.0%}")
    ax.axhline(100 * CLEAR, color="0.5", ls="--", lw=0.8, label=f"gap = {CLEAR:.0%}")
    ax.set(xlabel="head width d_k", ylabel="ppl raw / ppl ÷√d − 1 (%)",
           title="Cost of dropping the division")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
