"""The learner's output beside the reference's, for the smallest failing case (matplotlib)."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnlab.i18n import text


def draw(result: Any, lang: str | None = None) -> Any:
    """A figure with both outputs flattened, or None when no failing case has arrays to draw."""
    if result.plot is None:
        return None
    import matplotlib.pyplot as plt

    got, want, title = result.plot
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.plot(np.ravel(want), "o-", color="0.6", label=text("labs", "plot.reference", lang))
    ax.plot(np.ravel(got), "x--", color="tab:red", label=text("labs", "plot.yours", lang))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(text("labs", "plot.entry", lang))
    ax.legend()
    fig.tight_layout()
    return fig
