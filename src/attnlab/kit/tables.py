"""Numbers into text: the seed means and the Markdown tables every experiment prints."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = sum(values) / n
    if n == 1:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def fmt_ms(values: list[float], digits: int = 2) -> str:
    """'12.34 ± 0.56' for several seeds, '12.34' for one; a spread that rounds to zero is
    written 0 ('1.00 ± 0'), as every zero is, not '± 0.00'."""
    mean, std = mean_std(values)
    if len(values) <= 1:
        return f"{mean:.{digits}f}"
    spread = f"{std:.{digits}f}"
    return f"{mean:.{digits}f} ± {spread if float(spread) != 0 else '0'}"


def settings_dict(settings: Any) -> dict:
    """A profile's settings as plain JSON."""
    return json.loads(json.dumps(dataclasses.asdict(settings)))


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; numbers right-aligned."""
    def align(i: int) -> str:
        cells = [r[i] for r in rows if i < len(r)]
        numeric = cells and all(isinstance(c, int | float) for c in cells)
        return "---:" if numeric else "---"

    rule = "|" + "|".join(align(i) for i in range(len(header))) + "|"
    out = ["| " + " | ".join(header) + " |", rule]
    for r in rows:
        out.append("| " + " | ".join(_cell(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def _cell(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:,.2f}" if abs(c) >= 0.01 or c == 0 else f"{c:.2e}"
    if isinstance(c, int):
        return f"{c:,}"
    return str(c)
