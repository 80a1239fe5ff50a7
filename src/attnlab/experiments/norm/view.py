"""The table and the figure of "Pre-norm or post-norm" (its record is made by
``attnlab.experiments.norm``): the 2×2 held-out table, and the gradient norm per block at
initialisation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlab.experiments.norm.settings import PLACEMENTS
from attnlab.kit.tables import fmt_ms, markdown_table, mean_std

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _cell_text(runs: list[dict]) -> str:
    n_div = sum(r["diverged"] for r in runs)
    if n_div:
        return f"diverged ({n_div}/{len(runs)} seeds)"
    return fmt_ms([r["held_ppl"] for r in runs])


def grad_summary(record: dict, norm: str) -> dict[str, float]:
    """First and last block gradient norm (mean over seeds) and their ratio."""
    per_seed = record["grad_norms"][norm]
    first = mean_std([g[0] for g in per_seed])[0]
    last = mean_std([g[-1] for g in per_seed])[0]
    return {"first": first, "last": last, "ratio": last / first}


def table(record: dict) -> str:
    """Held-out perplexity (placement × warmup) and gradient norms at initialisation."""
    s = record["settings"]
    cells = record["cells"]
    rows = [[norm, _cell_text(cells[f"{norm}/no_warmup"]), _cell_text(cells[f"{norm}/warmup"])]
            for norm in PLACEMENTS]
    out = markdown_table(
        ["placement", "held-out ppl, no warmup", f"held-out ppl, {s['warmup_steps']} warmup steps"],
        rows,
    )
    grad_rows = []
    for norm in PLACEMENTS:
        g = grad_summary(record, norm)
        grad_rows.append([norm, f"{g['first']:.4g}", f"{g['last']:.4g}", f"{g['ratio']:.3g}"])
    out += "\n" + markdown_table(
        ["placement", "grad norm, block 1", f"grad norm, block {s['n_layer']}", "last / first"],
        grad_rows,
    )
    out += (
        f"\n{s['n_layer']} blocks of width {s['d_model']} ({s['n_head']} heads), context "
        f"{s['n_ctx']}, {s['steps']:,} AdamW steps at lr {s['lr']:g} (constant after warmup), "
        f"batch {s['batch_size']}; {record['seeds']} seed(s), mean ± std. Gradient norms: one "
        "batch, one backward pass on the freshly initialised model, before any step.\n"
    )
    return out


def figure(record: dict) -> Figure:
    """Gradient norm per block at initialisation, pre vs post (log y)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    for norm, marker in zip(PLACEMENTS, ("o", "s"), strict=True):
        per_seed = record["grad_norms"][norm]
        means = [mean_std(list(col))[0] for col in zip(*per_seed, strict=True)]
        blocks = list(range(1, len(means) + 1))
        ax.plot(blocks, means, marker=marker, label=f"{norm}-norm")
    ax.set_yscale("log")
    ax.set_xlabel("block")
    ax.set_ylabel("gradient norm at initialisation (log)")
    ax.set_title("Per-block gradient norm before the first step")
    ax.legend()
    fig.tight_layout()
    return fig
