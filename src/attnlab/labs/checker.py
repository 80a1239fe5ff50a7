"""The exercise record and the checker that runs a learner's function through its cases.

An :class:`Exercise` is a function the learner writes: its statement and hints (keys of the
``labs`` message catalogue), the stub's signature, a reference solution, a list of cases and a
list of mistake probes. The checker runs, in order,

1. the hand-derived cases (numbers worked out in the statement),
2. random cases against the float64 reference, smallest first, with stated tolerances,
3. properties (rows sum to one, causality, overflow, float16, ...),

each passing or failing with one sentence; then every **mistake probe**: a targeted input on
which one common mistake shows a symptom of its own (an overflow, a leaked weight, an output
equal to what ``/ d_k`` would give). A probe that recognises its mistake adds that mistake's
message. A stub that raises ``NotImplementedError`` ends the check at once with "not
implemented yet". When no probe recognises anything, each failed case's reason gets the
shape of its difference, where one is true of it (``attnlab.labs.describe``: transposed, a sign
flipped, a constant factor, a mask's wrong region, ...). Every sentence comes from the
catalogue, in the learner's language.

Left out: grading, scores and partial credit; the checker says what is wrong, not how much.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnlab.i18n import text
from attnlab.labs.describe import GENERIC, Describer, describe

Fn = Callable[..., Any]


@dataclass(frozen=True)
class Fail:
    """Why a case failed: a catalogue key, its fields, and what to draw (optional)."""

    key: str  # catalogue key of the one-sentence reason
    fields: dict[str, Any] = field(default_factory=dict)
    got: Any = None  # the learner's output, for the plot
    want: Any = None  # the reference's output


class NotImplementedYet(Exception):
    """The learner's function still raises NotImplementedError."""


class TimedOut(Exception):
    """One call of the learner's function ran past its own time limit (a class policy's
    ``time_limit``): the case that made it fails, and the check goes on in a fresh child."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"{seconds:g} s")
        self.seconds = seconds


class Raised(Exception):
    """The learner's function raised, in the child: the type's name and the message's first
    line, as the child reported them (the exception itself never crosses)."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error


@dataclass(frozen=True)
class Case:
    """One check: ``run(fn)`` returns None when it passes, else a :class:`Fail`."""

    title: str  # catalogue key of its one-sentence description
    kind: str  # "hand", "random" or "property"
    run: Callable[[Fn], Fail | None]
    shown: str = ""  # the input, as the learner would type it (shown when the case fails)
    size: int = 0  # the number of input entries, to name the smallest failing input
    fields: dict[str, Any] = field(default_factory=dict)  # for the title


@dataclass(frozen=True)
class Mistake:
    """A common mistake and the probe that recognises it: ``detect(fn)`` is True on a match."""

    key: str  # catalogue key of its message (its title too)
    detect: Callable[[Fn], bool]


@dataclass(frozen=True)
class Hidden:
    """Cases ``lab grade`` runs and ``lab check`` never shows: ``build(seed, size)`` draws
    some from ``seed`` at ``size`` (positions, keys or rows: the exercise says which). Grading
    runs every (seed, size) of ``seeds`` × ``sizes``, and a class policy may add seeds and
    sizes up to ``max_size`` (``attnlab.labs.policy``)."""

    build: Callable[[int, int], list[Case]]
    seeds: tuple[int, ...]  # the shipped draws
    sizes: tuple[int, ...]
    max_size: int  # the largest size a policy may ask: bounds the time of one case


@dataclass(frozen=True)
class Exercise:
    """One exercise; its texts live in the catalogue under ``<name>.title`` and friends."""

    number: int
    name: str  # "masks": the learner's file is <name>.py, the folder labs/exercises/<name>/
    function: str  # the function the learner writes
    signature: str  # "(n_query, n_key, dtype=np.float64)"
    hints: int  # how many hints: <name>.hint1 ... <name>.hintN
    solution: Fn
    cases: Callable[[], list[Case]]  # built on demand (random inputs from a fixed seed)
    mistakes: tuple[Mistake, ...]
    describers: tuple[Describer, ...] = ()  # its own shapes of difference, tried before GENERIC
    hidden: Hidden | None = None  # grade-only cases, where the exercise ships some
    minutes: int = 0  # the time a learner is expected to take (a teacher's estimate)
    chapter: str = ""  # the chapter's section it serves: catalogue key course.chapter.<it>
    curriculum: str = ""  # the curriculum's, course.curriculum.<it>; "" where it has none

    def title(self, lang: str | None = None) -> str:
        return text("labs", f"{self.name}.title", lang)


@dataclass(frozen=True)
class Line:
    """One printed line of a result: a case, or a recognised mistake."""

    passed: bool
    sentence: str
    reason: str = ""
    shown: str = ""


@dataclass(frozen=True)
class Result:
    """What ``check`` returns: prints as a short list; ``.passed`` is True when all passed."""

    number: int
    name: str
    status: str  # "passed", "failed", "not implemented", "unusable"
    lines: tuple[Line, ...] = ()
    mistakes: tuple[str, ...] = ()  # catalogue keys of the recognised mistakes
    smallest: str = ""  # the smallest failing input
    headline: str = ""  # the one line a command prints
    plot: tuple[Any, Any, str] | None = None  # (got, want, title) of the smallest failure
    lang: str | None = None  # the language it speaks
    described: tuple[str, ...] = ()  # catalogue keys of the differences described
    # every mistake named, a probe's or a described difference's: (catalogue key, its words)
    named: tuple[tuple[str, str], ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __str__(self) -> str:
        out = [self.headline]
        ok, fail = (text("labs", key, self.lang) for key in ("result.ok", "result.fail"))
        width = max(len(ok), len(fail))
        for line in self.lines:
            mark = (ok if line.passed else fail).ljust(width)
            out.append(f"  {mark} {line.sentence}" + (f": {line.reason}" if line.reason else ""))
        if self.smallest:
            out.append(self.smallest)
        return "\n".join(out)

    __repr__ = __str__

    def show(self) -> Any:
        """Draw the learner's output beside the reference's for the smallest failing case;
        a matplotlib figure, or None when every case passed."""
        from attnlab.labs.plot import draw

        return draw(self, self.lang)


def run_exercise(ex: Exercise, fn: Fn, lang: str | None = None) -> Result:
    """Run every case and probe of ``ex`` on ``fn``, in this process (``fn`` is the learner's
    function or the sandbox's proxy for it: the verdict is always computed here)."""
    say = _Say(lang)
    fn = _on_copies(fn)
    checked: list[tuple[Case, str, Fail | None]] = []
    for index, case in enumerate(ex.cases()):
        try:
            fail = _guarded(case.run, fn)
        except NotImplementedYet:
            if index == 0:
                return Result(ex.number, ex.name, "not implemented",
                              headline=say("result.not_implemented", number=ex.number,
                                           name=ex.name, function=ex.function), lang=lang)
            fail = Fail("fail.not_implemented")
        checked.append((case, say(f"{ex.name}.case.{case.title}", **case.fields), fail))
    failures = [(case, fail) for case, _, fail in checked if fail is not None]
    found = tuple(m.key for m in ex.mistakes if failures and _detects(m, fn))
    lines = [Line(False, say("result.mistake"), say(key)) for key in found]  # first: the news
    named = [(key, say(key)) for key in found]
    described: list[str] = []
    for case, sentence, fail in checked:
        if fail is None:
            lines.append(Line(True, sentence))
            continue
        reason = say(fail.key, **fail.fields)
        shape = None if found or fail.got is None or fail.want is None else describe(
            ex.describers + GENERIC, fail.got, fail.want)
        if shape is not None:
            words = say(shape[0], **shape[1])
            reason += "; " + words
            if shape[0] not in described:  # named on a FAIL line: counted like a probe's
                described.append(shape[0])
                named.append((shape[0], words))
        lines.append(Line(False, sentence, reason, case.shown))
    if not failures:
        return Result(ex.number, ex.name, "passed", tuple(lines),
                      headline=say("result.passed", number=ex.number, name=ex.name,
                                   cases=len(lines)), lang=lang)
    case, fail = min(failures, key=lambda cf: cf[0].size)
    smallest = say("result.smallest", shown=case.shown) if case.shown else ""
    drawn = None
    if fail.got is not None and fail.want is not None:
        drawn = (_plain(fail.got), _plain(fail.want), say(f"{ex.name}.case.{case.title}",
                                                          **case.fields))
    return Result(ex.number, ex.name, "failed", tuple(lines), found, smallest,
                  say("result.failed", number=ex.number, name=ex.name, failed=len(failures),
                      cases=len(lines) - len(found), mistakes=len(named)), drawn, lang,
                  tuple(described), tuple(named))


class _Say:
    def __init__(self, lang: str | None) -> None:
        self.lang = lang

    def __call__(self, key: str, **fields: Any) -> str:
        return text("labs", key, self.lang, **fields)


def _guarded(run: Callable[[Fn], Fail | None], fn: Fn) -> Fail | None:
    """A case's outcome; an exception raised by the learner's code is a failure of one line."""
    with np.errstate(all="ignore"):
        try:
            return run(fn)
        except NotImplementedError:
            raise NotImplementedYet from None
        except TimedOut as err:
            return Fail("fail.time", {"seconds": f"{err.seconds:g}"})
        except Raised as err:
            return Fail("fail.raised", {"error": err.error, "message": str(err)})
        except Exception as err:  # noqa: BLE001 - the learner's code may raise anything
            first = (str(err).strip().splitlines() or [""])[0][:160]
            return Fail("fail.raised", {"error": type(err).__name__, "message": first})


def _detects(mistake: Mistake, fn: Fn) -> bool:
    with np.errstate(all="ignore"):
        try:
            return bool(mistake.detect(fn))
        except Exception:  # noqa: BLE001 - a probe that cannot run recognises nothing
            return False


def _on_copies(fn: Fn) -> Fn:
    """``fn`` called on copies of its array arguments: a learner's function that changes its
    input in place (``x -= x.max()``) cannot change the cases that follow."""

    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args)
        kwargs = {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return call


def _plain(x: Any, limit: int = 10_000) -> Any:
    """``x`` as a float64 array to draw, or None when it is not one or too big to draw."""
    try:
        x = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return x if x.size <= limit else None
