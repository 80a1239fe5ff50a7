"""Each experiment's figure as the report shows it: the file, its caption, its language.

The English figure is the one the experiment drew when it finished (``<name>/figure.png``).
A report in another language draws the figure again from the finished record (the same
numbers, the same function) and writes its words in that language: every title, axis
label, legend entry and annotation whose English the catalogue (``fig.*`` entries of the
``report`` domain: the experiment's ``words.json`` and ``attnlab/i18n/report.json``) holds,
whole or as a phrase inside a longer label. Words of
the data (the tokens of a sentence) are left as they are.

Every figure has a caption saying what to look at (``caption.<experiment>``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from attnlab.report import words
from attnlab.report.words import has, numbers, of, t

log = logging.getLogger(__name__)


def translated(text: str, lang: str) -> str:
    """``text``, a figure's words, in ``lang`` (``words.translated`` over the ``fig.``
    entries)."""
    return words.translated(text, lang, "fig.")


def translate(fig: Any, lang: str) -> Any:
    """``fig`` with every text it shows in ``lang`` (``translated``); returns ``fig``."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedLocator

    if lang == "en":
        return fig
    for artist in fig.findobj(Text):
        words = artist.get_text()
        if words:
            artist.set_text(numbers(translated(words, lang), lang))
    for ax in fig.axes:  # named ticks are drawn again from their formatter: name them again
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_locator(), FixedLocator):
                labels = [t.get_text() for t in axis.get_ticklabels()]
                if any(labels):
                    axis.set_ticks(axis.get_ticklocs(), [translated(x, lang) for x in labels])
    return fig


def caption(name: str, lang: str) -> str:
    """What to look at in experiment ``name``'s figure ("" when none is written)."""
    return t(f"caption.{name}", lang) if has(f"caption.{of(name)}") else ""


def figure_path(name: str, envelope: dict[str, Any], folder: Path, out_dir: Path,
                lang: str) -> Path | None:
    """The PNG to show for experiment ``name`` in ``lang``, or None when there is none.

    English: the experiment's own ``figure.png``. Another language: the figure drawn again
    from the record into ``<out_dir>/<lang>/<name>.png``; the English one when the
    experiment cannot draw it (its module is gone, the record is of another shape)."""
    english = folder / "figure.png"
    if lang == "en" or not envelope.get("record"):
        return english if english.is_file() else None
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        from attnlab.files import atomic_path
        from attnlab.kit.envelope import FIGURE_DPI
        from attnlab.kit.registry import load

        fig = translate(load(name).figure(envelope["record"]), lang)
        FigureCanvasAgg(fig)
        path = out_dir / lang / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=FIGURE_DPI, format="png")
        return path
    except Exception as err:  # noqa: BLE001 - the report is still written, in English figures
        log.warning("%s: figure not drawn in %s (%s); the English one is shown", name, lang, err)
        return english if english.is_file() else None


def relative(path: Path, out_dir: Path) -> str:
    return Path(os.path.relpath(path, out_dir)).as_posix()


__all__ = ["caption", "figure_path", "relative", "translate", "translated"]
