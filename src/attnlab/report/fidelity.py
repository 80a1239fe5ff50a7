"""The chapter beside every measurement: measured figures read from the records, compared.

For each experiment its chapter part (``Experiment.chapter``, ``attnlab.kit.chapter``) reads
the measured figure of each published quantity from the experiment's record (the mean over
seeds), and ``compare`` pairs it with the chapter's: the difference and the relative
difference. ``fidelity`` counts how many measured figures lie within 2% and
5% of the chapter's; the report states that count for the full profile,
whose settings are the chapter's. At the quick profile the column is shown
for orientation only: its budgets are far smaller, so a difference there
does not say the chapter is wrong.

Nothing here decides a claim or changes a record: it reads finished records.
A record of another shape (a micro profile with fewer sizes, an older
record) gives fewer keys, never an error: a figure with no measured
counterpart is simply not compared.

Left out: the verification and tokenizer figures, which no experiment record
holds, and the chapter's qualitative statements (the claims decide those).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.kit.chapter import ChapterFigure, Measured
from attnlab.kit.registry import chapter
from attnlab.report.words import budget as words_budget
from attnlab.report.words import of, translated
from attnlab.report.words import t as say

WITHIN = (0.02, 0.05)  # the fidelity summary's two bands


@dataclass(frozen=True)
class Comparison:
    """A chapter figure beside the measured figure of the same quantity."""

    figure: ChapterFigure
    measured: float

    @property
    def difference(self) -> float:
        return self.measured - self.figure.value

    @property
    def relative(self) -> float:
        """(measured − chapter) / |chapter|."""
        return self.difference / abs(self.figure.value)


def measured(name: str, record: dict) -> Measured:
    """Every figure of the chapter's keys that ``record`` (of experiment ``name``) holds."""
    part = chapter(name)
    return part.read(record) if part is not None else {}


def compare(name: str, record: dict) -> list[Comparison]:
    """The chapter's figures of experiment ``name`` that ``record`` measured, in chapter order."""
    part = chapter(name)
    got = part.read(record) if part is not None else {}
    return [Comparison(f, float(got[f.key])) for f in (part.figures if part else ())
            if f.key in got and np.isfinite(got[f.key])]


def fidelity(comparisons: list[Comparison]) -> dict[str, int]:
    """How many measured figures lie within 2% and within 5% of the chapter's, of how many."""
    out = {"compared": len(comparisons)}
    for band in WITHIN:
        out[f"within {band:.0%}"] = sum(abs(c.relative) <= band + 1e-12 for c in comparisons)
    return out


def _num(x: float) -> str:
    if abs(x) >= 1000 or (abs(x) >= 10 and x == int(x)):
        return f"{x:,.0f}"
    return f"{x:.4g}" if abs(x) < 10 else f"{x:.2f}"


def _signed(x: float) -> str:
    """A difference with its sign, as ``_num`` writes the number: ``+92.29``, ``-16,240``."""
    return ("+" if x >= 0 else "-") + _num(abs(x))


def table(comparisons: list[Comparison], profile: str | None, lang: str = "en") -> str:
    """Markdown: figure, measured, chapter (derived ones starred), difference; the notes.
    The figures' labels are the chapter's words in English; the rest is in ``lang``."""
    if not comparisons:
        return ""
    for name in {c.figure.experiment for c in comparisons}:
        of(name)  # its chapter words (``cw.*``) in the catalogue
    head = [say(f"beside.col.{k}", lang) for k in ("figure", "measured", "chapter", "difference")]
    rows = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|"]
    derived = []
    for c in comparisons:
        star = ""
        if c.figure.derived:
            derived.append(c.figure)
            star = f" (†{len(derived)})"  # a footnote mark, numbered in order
        label = translated(c.figure.label, lang, "cw.", 3)
        rows.append(f"| {label.replace('|', '/')} | {_num(c.measured)} | "
                    f"{_num(c.figure.value)}{star} | {_signed(c.difference)} "
                    f"({c.relative:+.1%}) |")
    budget = words_budget(comparisons[0].figure.experiment, lang) or \
        say("beside.its_settings", lang)
    lines = [say("beside.heading", lang, budget=budget), "", *rows, ""]
    lines += [say("beside.derived", lang, i=i, how=translated(f.derived, lang, "cw.", 3)) + "  "
              for i, f in enumerate(derived, 1)]
    if derived:
        lines += [""]
    if profile != "full":
        lines.append(budget_note(profile, lang))
    else:
        f = fidelity(comparisons)
        lines.append(say("beside.fidelity", lang, within2=f["within 2%"], compared=f["compared"],
                       within5=f["within 5%"]))
    return "\n".join(lines).rstrip() + "\n"


def budget_note(profile: str | None, lang: str = "en") -> str:
    """The plain note beside the chapter's column at a profile other than full."""
    return say("beside.budget_note", lang, profile=profile)


__all__ = ["Comparison", "WITHIN", "budget_note", "compare", "fidelity", "measured",
           "table"]
