"""The learner's output beside the reference's, for the smallest failing case (matplotlib).

A matrix (a mask, a weight matrix) is drawn as two heat maps side by side with every entry
written in its cell, ``-inf`` and ``NaN`` included; anything else is flattened and drawn as two
lines, a non-finite entry marked at the edge of the plot with its name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnlab.i18n import text

CELLS = 64  # a matrix with more entries than this is drawn as lines


def draw(result: Any, lang: str | None = None) -> Any:
    """A figure, or None when no failing case has arrays to draw."""
    if result.plot is None:
        return None
    import matplotlib.pyplot as plt

    got, want, title = result.plot
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    names = text("labs", "plot.yours", lang), text("labs", "plot.reference", lang)
    if got.shape == want.shape and got.ndim == 2 and got.size <= CELLS:
        fig, panels = plt.subplots(1, 2, figsize=(8, 3.2))
        finite = np.concatenate([got[np.isfinite(got)], want[np.isfinite(want)], [0.0]])
        for panel, values, name in zip(panels, (got, want), names, strict=True):
            panel.imshow(np.where(np.isfinite(values), values, np.nan), cmap="viridis",
                         vmin=finite.min(), vmax=max(finite.max(), finite.min() + 1e-12))
            for (i, j), v in np.ndenumerate(values):
                panel.text(j, i, _label(v), ha="center", va="center", fontsize=8, color="w"
                           if np.isfinite(v) else "k")
            panel.set_title(name)
            panel.set_xticks(range(values.shape[1]))
            panel.set_yticks(range(values.shape[0]))
        fig.suptitle(title, fontsize=10)
    else:
        fig, panel = plt.subplots(figsize=(7, 3))
        for values, name, style in ((want, names[1], "o-"), (got, names[0], "x--")):
            _line(panel, np.ravel(values), name, style)
        panel.set_title(title, fontsize=10)
        panel.set_xlabel(text("labs", "plot.entry", lang))
        panel.legend()
    fig.tight_layout()
    return fig


def _label(v: float) -> str:
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    return f"{v:.2g}"


def _line(panel: Any, values: np.ndarray, name: str, style: str) -> None:
    """The finite entries as a line; each non-finite one as a marker at the edge, named."""
    color = "0.6" if style == "o-" else "tab:red"
    x = np.arange(values.size)
    panel.plot(x, np.where(np.isfinite(values), values, np.nan), style, color=color, label=name)
    bad = ~np.isfinite(values)
    if bad.any():
        edge = panel.get_ylim()
        for i in np.flatnonzero(bad):
            y = edge[0] if values[i] < 0 else edge[1]
            panel.plot([i], [y], "v" if values[i] < 0 else "^", color=color)
            panel.annotate(_label(values[i]), (i, y), textcoords="offset points", xytext=(4, 0),
                           fontsize=8, color=color)
