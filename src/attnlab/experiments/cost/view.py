"""The table and the figure of "The cost of attention" (its record is made by
``attnlab.experiments.cost``): the sweep (``attnlab.timing.cost_view``) and the fitted
exponents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnlab.timing.cost import size_text
from attnlab.timing.cost_view import sweep_figure, sweep_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def table(record: dict[str, Any]) -> str:
    lines = [sweep_table(record["records"]), "", "| kind | time exp. | memory exp. | "
             "projections exp. |", "|---|---:|---:|---:|"]
    for kind, e in record["exponents"].items():
        cells = [_exponent_cell(e, k) for k in ("time", "memory", "projections")]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    how = "the allocator's peak" if record.get("device", "cpu").startswith("cuda") else \
        "the peak resident set of a fresh subprocess"
    return "\n".join(lines) + "\n\nExponents: least-squares slope of log value vs log n over " \
        "the last four sizes that completed; for time, of each size's minimum over its " \
        "interleaved rounds, with in brackets the range of slopes its spread (max / min over " \
        "the rounds) allows: a time claim is decided only beyond that range. Device: " \
        f"{record.get('device', 'cpu')}; peak memory is {how}, under a budget of " \
        f"{size_text(record['mem_limit_bytes'])}.\n"


def _exponent_cell(e: dict[str, Any], what: str) -> str:
    if e.get(what) is None:
        return "—"
    span = e.get(f"{what}_range") if what != "time" else e.get("time_range")
    return f"{e[what]:.2f}" + (f" [{span[0]:.2f}, {span[1]:.2f}]" if span else "")


def figure(record: dict[str, Any]) -> Figure:
    return sweep_figure(record["records"])
