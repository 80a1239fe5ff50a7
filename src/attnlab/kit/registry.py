"""The experiments by name, and the record each one declares.

An experiment is one module under ``attnlab.experiments`` ending in an
``EXPERIMENT = Experiment(...)`` record, plus its name in ``EXPERIMENTS``
below (whose order is the report's). ``load(name)`` imports the module and
checks the record: a missing or wrong field is one ``RecordError`` line naming
the module and the field. The smallest example is ``attnlab.experiments.params``
(no training: ``plan`` returns no runs); ``docs/design.md`` walks through a
training one.

An experiment's words, in English and Spanish, live in its folder: ``words.json``
beside its module (``experiments/ladder/words.json``), whose domains are those of
``attnlab.i18n`` (``claims``, ``quick_changes``, ``report``, ``tables``; entries
``{"en": ..., "es": ...}``). ``own_words(name)`` adds them to the one catalogue without
importing the module; ``load`` does so too, and takes the record's English ``title``
(``report`` key ``title.<name>``) and ``quick_changes`` (key ``<name>``) from them when the
record leaves them out. ``own_all_words()`` adds every experiment's, for whatever reads
the whole catalogue.

Another installed package adds experiments through the entry-point group
``attnlab.experiments`` (``ENTRY_POINTS``): each entry names an experiment and
points at a module ending in the same record (``name = "pkg.module"``) or at the
record itself (``"pkg.module:EXPERIMENT"``). Its words are found the same way: the
``words.json`` in the folder of that module (``pkg/module/words.json`` for a package,
``pkg/words.json`` beside a one-file ``pkg/module.py``: one experiment to a folder).
``names()`` lists attnlab's own in their order, then those, sorted; a plugin cannot
replace an experiment of attnlab's own name. ``run``, ``reproduce``, ``--estimate`` and
the report all go through ``names``/``select``/``load``, so they pick a plugin up with
no change.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from attnlab import i18n
from attnlab.errors import Said, Templated, UsageError
from attnlab.kit.chapter import Chapter

# Order = report order.
EXPERIMENTS = ["ladder", "sqrt_dk", "norm", "position", "cost", "params", "winograd",
               "agreement", "recurrence", "translation", "induction", "icl_gd"]
PROFILES = ("full", "quick", "micro")
ENTRY_POINTS = "attnlab.experiments"  # the group through which other packages add experiments

_MISSING: Any = object()  # a field the module did not give (see Experiment.__post_init__)


class RecordError(Templated, TypeError):
    """An experiment module whose record is missing or incomplete (a bug, not bad input).
    Raised as a ``%``-template and its values (``attnlab.errors.Templated``), so that a
    command that names it says it in its language (``attnlab.i18n.logs.said``).

    >>> err = RecordError("experiment record lacks %s", "plan")
    >>> str(err), err.template, err.values
    ('experiment record lacks plan', 'experiment record lacks %s', ('plan',))
    """


@dataclass(frozen=True)
class Experiment:
    """What an experiment module declares; the lab needs nothing else from it."""

    name: str = _MISSING  # the name ``attnlab run NAME`` takes
    profiles: Mapping[str, Any] = _MISSING  # full (the documented settings), quick, micro
    plan: Callable[[Any], list] = _MISSING  # settings -> [RunSpec], every seed included
    analyse: Callable[..., dict] = _MISSING  # (settings, Results, Context) -> record (JSON)
    table: Callable[[dict], str] = _MISSING  # record -> Markdown
    figure: Callable[[dict], Any] = _MISSING  # record -> matplotlib Figure (no pyplot)
    claims: tuple = _MISSING  # the Claims its record decides (attnlab.kit.claims)
    needs_corpus: bool = _MISSING  # skipped with a reason when the corpus is missing
    # what the textbook chapter published of it and its budget (``attnlab.kit.chapter``);
    # attnlab's own experiments each give one, a plugin may leave it out (None: no column)
    chapter: Chapter | None = None
    # a heading for the report, and what "quick" changes from "full" in words; None: the
    # English of its words.json (``title.<name>``, ``quick_changes`` ``<name>``), which
    # ``load`` fills in
    title: str | None = None
    quick_changes: str | None = None

    def __post_init__(self) -> None:
        missing = [f.name for f in dataclasses.fields(self) if getattr(self, f.name) is _MISSING]
        if missing:
            raise RecordError("experiment record lacks %s", ", ".join(missing))
        object.__setattr__(self, "claims", tuple(self.claims))
        wrong = [p for p in PROFILES if p not in self.profiles]
        if wrong:
            raise RecordError("experiment record's profiles lack %s", ", ".join(wrong))
        for name in ("plan", "analyse", "table", "figure"):
            if not callable(getattr(self, name)):
                raise RecordError("experiment record's %s is not callable", name)
        if self.chapter is not None:
            if not isinstance(self.chapter, Chapter):
                raise RecordError("experiment record's chapter is not a Chapter")
            other = sorted({f.key for f in self.chapter.figures
                            if f.experiment != self.name})
            if other:
                raise RecordError("experiment record's chapter figures %s are not keyed by "
                                  "its name %r", ", ".join(other), self.name)

    def settings(self, profile: str, seeds: int | None = None) -> Any:
        """The profile's settings, with ``seeds`` training seeds where it trains (None: the
        profile's own number)."""
        check_profile(profile)
        settings = self.profiles[profile]
        if seeds is not None:
            if seeds < 1:
                raise UsageError("seeds must be at least 1, got %s", seeds)
            if seeds_of(settings) is not None:
                settings = dataclasses.replace(settings, seeds=seeds)
        return settings


def seeds_of(settings: Any) -> int | None:
    """The training seeds of an experiment's settings (None: it does not train)."""
    fields = {f.name for f in dataclasses.fields(settings)} \
        if dataclasses.is_dataclass(settings) else set()
    return settings.seeds if "seeds" in fields else None


def check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise UsageError("unknown profile %r; choose one of: %s", profile, ", ".join(PROFILES))


def plugins() -> dict[str, EntryPoint]:
    """The experiments other installed packages add (entry-point group ``ENTRY_POINTS``), by
    name; one named like an experiment of attnlab's own is left out."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINTS):
        if point.name not in EXPERIMENTS:
            found.setdefault(point.name, point)  # the first on sys.path, as imports do
    return found


def names() -> list[str]:
    """Every experiment: attnlab's own in report order, then the plugins' sorted by name."""
    return [*EXPERIMENTS, *sorted(plugins())]


def load(name: str) -> Experiment:
    """The record of experiment ``name``, its words owned (``own_words``) and its title and
    quick changes filled in from them (a UsageError for an unknown name, a RecordError
    naming the module or entry point for a broken record)."""
    if name in EXPERIMENTS:
        module = f"attnlab.experiments.{name}"
        return _checked(name, module, lambda: importlib.import_module(module))
    point = plugins().get(name)
    if point is None:
        raise UsageError("unknown experiment %r; choose one of: %s", name, ", ".join(names()))
    return _checked(name, Said("entry point %s = %s", name, point.value), point.load,
                    ImportError)


def _checked(name: str, where: str, load_it: Callable[[], Any],
             broken: type[Exception] = RecordError) -> Experiment:
    """The record ``load_it`` gives, checked; ``broken`` errors become one RecordError line
    (a plugin that does not import is its package's fault, not a bug of attnlab's)."""
    try:
        loaded = load_it()
    except (RecordError, broken) as err:
        raise RecordError("%s: %s", where, _inner(err)) from None
    record = loaded if isinstance(loaded, Experiment) else getattr(loaded, "EXPERIMENT", None)
    if not isinstance(record, Experiment):
        raise RecordError("%s: defines no EXPERIMENT = Experiment(...) record", where)
    if record.name != name:
        raise RecordError("%s: its record is named %r, not %r", where, record.name, name)
    words = own_words(name)
    said = {"title": words.get("report", {}).get(f"title.{name}", {}).get("en"),
            "quick_changes": words.get("quick_changes", {}).get(name, {}).get("en")}
    for field, text in said.items():
        given = getattr(record, field)
        if given is None and text is None:
            raise RecordError("%s: experiment record lacks %s, and its words.json gives none",
                              where, field)
        if given is not None and text is not None and given != text:
            raise RecordError("%s: the record's %s is not its words.json's", where, field)
    return dataclasses.replace(record, **{f: t for f, t in said.items() if t is not None})


def _inner(err: BaseException) -> object:
    """``err``'s message as a value of another error's: in parts (a ``Said``) where it was
    raised as a template, else as it is."""
    template = getattr(err, "template", None)
    return str(err) if template is None else Said(template, *err.values)


def words_file(name: str) -> Path | None:
    """Where experiment ``name``'s words are: ``words.json`` in the folder of its module
    (None: an unknown name, or a module not found; the file need not exist)."""
    if name in EXPERIMENTS:
        module = f"attnlab.experiments.{name}"
    elif (point := plugins().get(name)) is not None:
        module = point.module
    else:
        return None
    try:  # imports the packages above the module, not the module itself
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin).parent / "words.json"


@cache
def _read_words(path: Path, mtime_ns: int) -> dict[str, i18n.Entries]:
    """The words of one ``words.json`` (read again only when the file changes)."""
    try:
        words = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise RecordError("%s: not a words file: %s", path, err) from None
    if not isinstance(words, dict) or not all(
            isinstance(entries, dict) and all(isinstance(e, dict) for e in entries.values())
            for entries in words.values()):
        raise RecordError("%s: not {domain: {key: {language: text}}}", path)
    return words


def own_words(name: str) -> dict[str, i18n.Entries]:
    """Add experiment ``name``'s words (``words_file``) to the catalogue, under the owner
    ``experiment NAME``, and return them (none: an unknown name, or a folder without
    ``words.json``). Cheap to call again: words already owned are left as they are. A key
    another owner has is a RecordError naming both."""
    path = words_file(name)
    if path is None or not path.is_file():
        return {}
    words = _read_words(path, path.stat().st_mtime_ns)
    owner = f"experiment {name}"
    if any(i18n.owners(domain).get(owner) != entries for domain, entries in words.items()):
        try:
            i18n.own(owner, words)
        except ValueError as err:
            raise RecordError("%s: %s", path, err) from None
    return words


def own_all_words() -> None:
    """Add every experiment's words (``names()``) to the catalogue: what a check of the whole
    catalogue, or a page that may show any experiment, calls first."""
    for name in names():
        own_words(name)


def chapter(name: str) -> Chapter | None:
    """The chapter part of experiment ``name`` (None: a plugin that gives none, or a name
    that is no longer an experiment, as in an older results.json)."""
    try:
        return load(name).chapter
    except (UsageError, RecordError, ImportError):
        return None


def select(only: list[str] | None) -> list[str]:
    """Experiment names to run, in ``names()`` order; unknown names are a UsageError."""
    every = names()
    if only is None:
        return every
    wanted = [n.strip() for n in only if n.strip()]
    unknown = [n for n in wanted if n not in every]
    if unknown or not wanted:
        if not wanted:
            raise UsageError("no experiment given; choose from: %s", ", ".join(every))
        raise UsageError("unknown experiment(s) %s; choose from: %s",
                         ", ".join(map(repr, unknown)), ", ".join(every))
    return [n for n in every if n in wanted]
