"""Cases as data: a row of a table is one call of the learner's function and what it must give.

A hand-worked case is data, not code: the arguments, the expected output (worked out in the
statement, or the float64 reference's), the call as a learner would type it, and the number
of input entries (the smallest failing input is named by it). :class:`Row` holds one, and
``row.case()`` is the checker's :class:`~attnlab.labs.checker.Case`, whose verdict is
``close(part(fn(*args, **kwargs)), want, rtol, atol)``, after ``form`` (when given) has found
the output of the right form (a pair, say). An exercise's ``cases.py`` keeps its
worked numbers as a table of rows; what is not a comparison of one call with known numbers
(two calls compared with each other, a sampled statistic, a leak) stays a short function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnlab.labs.checker import Case, Fail, Fn
from attnlab.labs.compare import ATOL, RTOL, close


def whole(out: Any) -> Any:
    """The part of the output a row compares when it compares all of it."""
    return out


@dataclass(frozen=True)
class Row:
    """One case: call ``fn(*args, **kwargs)``, check the output's ``form``, take ``part`` of
    it and compare that with ``want``."""

    title: str  # catalogue key <exercise>.case.<title> of its sentence
    args: tuple[Any, ...]
    want: Any
    shown: str  # the call as a learner would type it (shown when the case fails)
    size: int  # the number of input entries, to name the smallest failing input
    kind: str = "hand"  # "hand", "random" or "property"
    kwargs: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)  # for the title's sentence
    part: Callable[[Any], Any] = whole  # the part of the output compared
    form: Callable[[Any], Fail | None] | None = None  # None, or why the output is no answer
    rtol: float = RTOL
    atol: float = ATOL

    def run(self, fn: Fn) -> Fail | None:
        out = fn(*self.args, **self.kwargs)
        if self.form is not None and (bad := self.form(out)) is not None:
            return bad
        return close(self.part(out), self.want, self.rtol, self.atol)

    def case(self) -> Case:
        return Case(self.title, self.kind, self.run, self.shown, self.size, self.fields)


def as_cases(entries: list[Row | Case]) -> list[Case]:
    """The cases of an exercise in order, from its rows and the checks written as code."""
    return [entry.case() if isinstance(entry, Row) else entry for entry in entries]


Draw = Callable[[Any, int], tuple[tuple[Any, ...], str]]  # (rng, size) -> (args, the call shown)


def drawn(solution: Fn, draw: Draw, parts: tuple[tuple[str, Callable[[Any], Any]], ...] = (),
          form: Callable[[Any], Fail | None] | None = None) -> Callable[[int, int], list[Case]]:
    """``build(seed, size)`` of an exercise's grade-only cases (``core.Hidden``): the inputs
    ``draw(rng, size)`` makes from ``seed``, and one case per named part of the output (the
    whole of it when ``parts`` is empty) against the reference ``solution``'s. Each case's
    title is ``grade_only``: catalogue key ``<exercise>.case.grade_only``, fields seed, size and
    part."""
    import numpy as np

    def build(seed: int, size: int) -> list[Case]:
        args, shown = draw(np.random.default_rng(seed), size)
        want = solution(*args)
        entries = sum(int(np.size(a)) for a in args)
        named = parts or ((getattr(solution, "__name__", ""), whole),)
        return [Row("grade_only", args, part(want), shown, entries, "random", part=part,
                    form=form,
                    fields={"seed": seed, "size": size, "part": name}).case()
                for name, part in named]

    return build
