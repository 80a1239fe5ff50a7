"""A teacher's class policy: one small TOML file, ``attnlab-class.toml``, in the class folder.

It says, per exercise or for all of them, until when ``lab solution`` and the later hints are
locked, how long one call of a learner's function may take in ``lab grade``, and which
grade-only cases ``lab grade`` adds to the exercise's own::

    # attnlab-class.toml
    [all]                        # every exercise, unless its own table says otherwise
    locked_until = 2027-03-15    # a date (open from that day on), "always" or "never"
    open_hints = 1               # hints readable while locked: the first (a nudge)
    time_limit = 5               # seconds per call in lab grade: a slower call fails its case

    [masks]                      # one exercise, by its name (lab list)
    locked_until = "always"
    hidden_seeds = [7, 8]        # grade-only cases drawn from these seeds ...
    hidden_sizes = [12, 33]      # ... at these sizes (default: the exercise's own)

``lab grade FOLDER`` reads ``FOLDER/attnlab-class.toml``. ``lab solution`` and ``lab hint``,
run by a learner from their own folder, read the file ``ATTNLAB_CLASS`` names the folder of,
else the first ``attnlab-class.toml`` in the current folder or a folder above it.

The lock is a convenience, not a boundary: a learner can delete the file, unset the variable or
read attnlab's source. What a learner cannot see or change are the grade-only cases, drawn and
judged by ``lab grade`` outside the sandbox. Left out: per-learner exceptions and weights.
"""

from __future__ import annotations

import datetime as dt
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlab.errors import DataError, UsageError
from attnlab.i18n import text
from attnlab.i18n.logs import reason_said
from attnlab.labs.checker import Case, Exercise

FILE = "attnlab-class.toml"  # the policy's name in a class folder
ENV = "ATTNLAB_CLASS"  # a class folder, named for lab solution and lab hint
ALWAYS = dt.date.max  # locked_until = "always"
TIME_LIMIT = (0.1, 600.0)  # seconds per call, both included
MAX_SEEDS = 8  # hidden seeds (and sizes) per exercise: bounds a grade's time
KEYS = ("locked_until", "open_hints", "time_limit", "hidden_seeds", "hidden_sizes")
ALL = "all"  # the table that holds every exercise's rule


@dataclass(frozen=True)
class Rule:
    """One exercise's policy; the defaults lock nothing and add nothing."""

    locked_until: dt.date | None = None  # None: open; ALWAYS: for good
    open_hints: int = 1  # hints readable while locked
    time_limit: float | None = None  # seconds per call in lab grade; None: only the file's
    hidden_seeds: tuple[int, ...] = ()  # grade-only draws added to the exercise's own
    hidden_sizes: tuple[int, ...] = ()  # their sizes; () : the exercise's own


@dataclass(frozen=True)
class Policy:
    """A class's rules by exercise name (``path`` None: no policy file, nothing locked)."""

    path: Path | None = None
    rules: dict[str, Rule] = field(default_factory=dict)

    def rule(self, ex: Exercise) -> Rule:
        return self.rules.get(ex.name, Rule())

    def locked(self, ex: Exercise, today: dt.date | None = None) -> dt.date | None:
        """The day the exercise's solution opens (ALWAYS: never), or None when it is open."""
        until = self.rule(ex).locked_until
        today = today or dt.date.today()
        return until if until is not None and today < until else None

    def hint_locked(self, ex: Exercise, index: int, today: dt.date | None = None) -> dt.date | None:
        """As :meth:`locked`, for hint ``index`` (1-based): the first ``open_hints`` are open."""
        return None if index <= self.rule(ex).open_hints else self.locked(ex, today)

    def hidden(self, ex: Exercise) -> list[Case]:
        """The grade-only cases of ``ex``: its own draws, then this policy's."""
        if ex.hidden is None:
            return []
        own, rule = ex.hidden, self.rule(ex)
        draws = [(seed, size) for seed in own.seeds for size in own.sizes]
        draws += [(seed, size) for seed in rule.hidden_seeds
                  for size in rule.hidden_sizes or own.sizes if (seed, size) not in draws]
        return [case for seed, size in draws for case in own.build(seed, size)]


def read(path: str | Path, lang: str | None = None) -> Policy:
    """The policy in the file at ``path``; a :class:`DataError` of one line naming the file and
    what is wrong (not TOML, an unknown exercise or key, a value of the wrong kind)."""
    from attnlab.labs import EXERCISES

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise DataError(text("labs", "policy.unreadable", lang, path=path,
                             reason=reason_said(err, lang))) from None
    by_name = {ex.name: ex for ex in EXERCISES}
    tables = [ALL, *by_name]

    def bad(problem: str, **fields: Any) -> DataError:
        return DataError(text("labs", f"policy.{problem}", lang, path=path, **fields))

    for name, table in data.items():
        if name not in tables or not isinstance(table, dict):
            raise bad("unknown_table", table=name, choices=", ".join(tables))
        for key in table:
            if key not in KEYS or (name == ALL and key == "hidden_sizes"):
                raise bad("unknown_key", table=name, name=key, choices=", ".join(
                    k for k in KEYS if name != ALL or k != "hidden_sizes"))
    common = data.get(ALL, {})
    rules = {}
    for name, ex in by_name.items():
        merged = {**common, **data.get(name, {})}
        if merged:
            rules[name] = _rule(merged, data.get(name, {}), ex, name if name in data else ALL,
                                bad, lang)
    return Policy(path, rules)


def find(lang: str | None = None, here: Path | None = None) -> Policy:
    """The policy a learner's command obeys: ``$ATTNLAB_CLASS/attnlab-class.toml`` when the
    variable is set (a :class:`UsageError` when that folder has none), else the first
    ``attnlab-class.toml`` in ``here`` (the current folder) or a folder above it; else none."""
    named = os.environ.get(ENV, "")
    if named:
        path = Path(named) / FILE
        if not path.is_file():
            raise UsageError(text("labs", "policy.no_file", lang, env=ENV, folder=named,
                                  file=FILE))
        return read(path, lang)
    here = (here or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / FILE).is_file():
            return read(folder / FILE, lang)
    return Policy()


def of_class(folder: str | Path, lang: str | None = None) -> Policy:
    """The policy of a class folder (``lab grade``): its ``attnlab-class.toml``, or none."""
    path = Path(folder) / FILE
    return read(path, lang) if path.is_file() else Policy()


def _rule(table: dict[str, Any], own: dict[str, Any], ex: Exercise, where: str, bad: Any,
          lang: str | None) -> Rule:
    """One exercise's rule from ``table``, its ``own`` table merged over ``[all]`` (``where``:
    the table an error names)."""

    def want(key: str, **fields: Any) -> str:
        return text("labs", f"policy.want.{key}", lang, **fields)

    def whole_list(key: str, low: int, high: int) -> tuple[int, ...]:
        value = table.get(key, [])
        if not (isinstance(value, list) and len(value) <= MAX_SEEDS and all(
                type(v) is int and low <= v <= high for v in value)):
            raise bad("bad_value", table=where, name=key,
                      want=want("whole_list", low=low, high=high, most=MAX_SEEDS))
        return tuple(value)

    until = table.get("locked_until", "never")
    if until == "always":
        until = ALWAYS
    elif until == "never":
        until = None
    elif isinstance(until, str):
        try:
            until = dt.date.fromisoformat(until)
        except ValueError:
            until = "bad"
    if until is not None and type(until) is not dt.date:  # a datetime, a number, a bad string
        raise bad("bad_value", table=where, name="locked_until", want=want("locked_until"))
    hints = table.get("open_hints", 1)
    if type(hints) is not int or not 0 <= hints <= ex.hints:
        raise bad("bad_value", table=where, name="open_hints",
                  want=want("open_hints", most=ex.hints))
    limit = table.get("time_limit")
    low, high = TIME_LIMIT
    if limit is not None and (type(limit) not in (int, float) or not low <= limit <= high):
        raise bad("bad_value", table=where, name="time_limit",
                  want=want("time_limit", low=f"{low:g}", high=f"{high:g}"))
    seeds = whole_list("hidden_seeds", 0, 2**32 - 1)
    if ex.hidden is None:  # [all]'s seeds pass it over; its own table may not ask for any
        if "hidden_seeds" in own or "hidden_sizes" in own:
            raise bad("no_hidden", table=where)
        seeds = ()
    sizes = (whole_list("hidden_sizes", 1, ex.hidden.max_size)
             if ex.hidden is not None and "hidden_sizes" in table else ())
    return Rule(until, hints, None if limit is None else float(limit), seeds, sizes)
