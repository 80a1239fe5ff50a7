"""The attention-cost sweep as text and picture: shared by the ``cost`` experiment and
``benchmarks/attention_cost.py`` (the measurements are ``attnlab.timing.cost``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attnlab.timing import cost as measure
from attnlab.timing.cost import size_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _num(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def _spread(spread: float | None) -> str:
    """`` (+7%)``: the spread (max / min − 1) of a minimum's rounds beside it."""
    return "" if spread is None else f" (+{spread:.0%})"


def sweep_table(records: Sequence[dict]) -> str:
    """Markdown: one table per kind, then its fitted time and memory exponents. A time is
    the minimum over its rounds, with their spread in brackets."""
    fitted = measure.exponents(records)
    parts = []
    for kind, exps in fitted.items():
        lines = [f"### {kind}", "",
                 "| n | total ms | ratio | proj ms | n×n bytes | peak memory | ratio |",
                 "|---:|---:|---:|---:|---:|---:|---:|"]
        for r in (r for r in records if r["kind"] == kind):
            if r["status"] == "ok":
                cells = [_num(r["total_ms"], ".1f") + _spread(r.get("total_spread")),
                         _num(r["time_ratio"], ".2f"),
                         _num(r["proj_ms"], ".1f") + _spread(r.get("proj_spread")),
                         size_text(r["nn_bytes"]),
                         size_text(r["peak_bytes"]), _num(r["mem_ratio"], ".2f")]
            else:
                word = "OUT OF MEMORY" if r["status"] == "oom" else r["status"].upper()
                cells = [word, "", "", size_text(r["nn_bytes"]), word, ""]
            lines.append(f"| {r['n']} | " + " | ".join(cells) + " |")
        lines += ["", f"Fitted exponent over the last four completed rows ({kind}): "
                      f"time {_num(exps['time'], '.2f')}, memory {_num(exps['memory'], '.2f')}.",
                  ""]
        parts.append("\n".join(lines))
    return "\n".join(parts)


def sweep_figure(records: Sequence[dict]) -> Figure:
    """Forward time and peak memory against n, log-log, one line per kind."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    time_ax, mem_ax = fig.subplots(1, 2)
    for kind in dict.fromkeys(r["kind"] for r in records):
        rows = [r for r in records if r["kind"] == kind and r["status"] == "ok"]
        timed = [r for r in rows if r["total_ms"]]
        sized = [r for r in rows if r["peak_bytes"] and r["peak_bytes"] > 0]
        time_ax.plot([r["n"] for r in timed], [r["total_ms"] for r in timed], "o-", label=kind)
        mem_ax.plot([r["n"] for r in sized], [r["peak_bytes"] / 2**20 for r in sized], "o-",
                    label=kind)
    for ax, ylabel in ((time_ax, "forward ms"), (mem_ax, "peak memory (MiB)")):
        ax.set_xlabel("n (positions)")
        ax.set_ylabel(ylabel)
        if not any(len(line.get_xdata()) for line in ax.get_lines()):
            ax.text(0.5, 0.5, "no size completed", ha="center", transform=ax.transAxes)
            continue  # a log axis needs positive data
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("Cost of one attention layer (width 512, 8 heads, batch 1, float32)")
    fig.tight_layout()
    return fig
