"""An experiment's chapter part: the figures the textbook chapter published for its own
settings, what it trained with, and how to read the same quantities from a record.

The chapter reports one run of each experiment at its own budget (the ``full`` profile:
width 128, context 128, 3,000 AdamW steps at 1e-3, batch 64, BPE vocabulary 1,024 on Tiny
Shakespeare, 90/10 split, one seed). The report shows these figures beside the measured
ones, so that a reader can tell "the chapter is wrong" from "this budget is too small to see
it". They are facts to show, never targets: no setting of any profile is chosen to move a
measured figure toward one of them.

Every experiment declares its part as ``Chapter(...)`` in its record (``Experiment.chapter``;
an experiment the chapter published nothing for gives only its ``budget``), and the report
reads it from there: ``attnlab.report`` names no experiment.

- ``ChapterFigure``: one published figure. Its ``key``, ``<experiment>/<quantity>``, is how
  the experiment's ``measured`` reader names the measured figure of the same quantity.
  Where the chapter states only a difference ("14 points better than row 4"), the absolute
  figure is the earlier figure plus that difference, and ``derived`` says so in words; where
  it states a figure in words ("attends to one token"), ``derived`` says that too.
- ``ratio``, ``value``, ``growth``: the chapter's figure for what one part of a claim
  compares, computed from the published figures (``Chapter.claims``: claim id -> part name
  -> one of these). They hold keys only, never a figure of their own.

Left out: the chapter's qualitative statements (learned positions "fall off a cliff"), which
the claims decide instead, and the figures of the verification table and the tokenizer,
which no experiment record holds (``attnlab verify`` and the data tests check them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnlab.kit.quantities import number

Measured = dict[str, float]  # chapter key -> measured figure (seed mean)


@dataclass(frozen=True)
class ChapterFigure:
    """One figure the chapter published."""

    key: str  # "<experiment>/<quantity>": where the report looks for the measured figure
    label: str  # what the figure is, in words, as a table row names it
    value: float  # the chapter's figure (or the one derived from its text)
    derived: str = ""  # how the figure follows from the chapter's text; "" when printed as is

    @property
    def experiment(self) -> str:
        return self.key.split("/", 1)[0]


def mean(values: Any) -> float:
    """The mean of a per-seed list (or the number itself): what a reader reports."""
    return float(np.mean(values)) if isinstance(values, list | tuple) else float(values)


Figures = Mapping[str, ChapterFigure]


def _mark(text: str, derived: bool) -> str:
    return text + ("†" if derived else "")


@dataclass(frozen=True)
class Ratio:
    """The chapter's ``num`` figure over its ``den`` figure, as ``4.15``."""

    num: str
    den: str

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.num, self.den)

    def text(self, figures: Figures, lang: str = "en") -> str:
        a, b = figures[self.num], figures[self.den]
        return _mark(f"{a.value / b.value:.2f}", bool(a.derived or b.derived))


@dataclass(frozen=True)
class Value:
    """One chapter figure, with its unit (English, Spanish) where it has one."""

    key: str
    unit: tuple[str, str] = ("", "")
    kind: str = "value"
    sig: int = 3

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key,)

    def text(self, figures: Figures, lang: str = "en") -> str:
        f = figures[self.key]
        words = self.unit[0] if lang == "en" else self.unit[1]
        return _mark(number(f.value, lang, self.kind, sig=self.sig), bool(f.derived)) + \
            (f" {words}" if words else "")


@dataclass(frozen=True)
class Growth:
    """``21 → 5,147``: a figure before and after."""

    before: str
    after: str

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.before, self.after)

    def text(self, figures: Figures, lang: str = "en") -> str:
        a, b = figures[self.before], figures[self.after]
        return _mark(f"{number(a.value, lang)} → {number(b.value, lang, 'count')}",
                     bool(a.derived or b.derived))


ratio, value, growth = Ratio, Value, Growth
ClaimFigure = Ratio | Value | Growth


@dataclass(frozen=True)
class Chapter:
    """What the chapter says of one experiment: its budget, its figures, how to read them."""

    budget: str  # what the chapter trained with, said beside a claim a smaller budget leaves open
    figures: tuple[ChapterFigure, ...] = ()
    measured: Callable[[dict], Measured] | None = None  # record -> figures of the same keys
    claims: Mapping[str, Mapping[str, ClaimFigure]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "figures", tuple(self.figures))
        keys = {f.key for f in self.figures}
        if len(keys) != len(self.figures):
            raise ValueError("a chapter figure's key is given twice")
        if self.figures and self.measured is None:
            raise ValueError("chapter figures without a reader of the measured ones")
        unknown = sorted({k for parts in self.claims.values() for f in parts.values()
                          for k in f.keys} - keys)
        if unknown:
            raise ValueError(f"claim figures name no chapter figure: {', '.join(unknown)}")

    @property
    def by_key(self) -> dict[str, ChapterFigure]:
        return {f.key: f for f in self.figures}

    def read(self, record: dict) -> Measured:
        """Every figure of this chapter's keys that ``record`` holds: a record of another
        shape (a micro profile with fewer sizes, an older record) gives fewer, never an
        error."""
        if self.measured is None or not record:
            return {}
        try:
            return self.measured(record)
        except (KeyError, TypeError, IndexError, ValueError, ZeroDivisionError):
            return {}

    def claim_figure(self, claim_id: str, part: str, lang: str = "en") -> str | None:
        """The chapter's figure for what ``part`` of claim ``claim_id`` compares (None: it
        published none)."""
        figure = self.claims.get(claim_id, {}).get(part)
        return figure.text(self.by_key, lang) if figure is not None else None


__all__ = ["Chapter", "ChapterFigure", "ClaimFigure", "Growth", "Measured", "Ratio", "Value",
           "growth", "mean", "ratio", "value"]
