"""The exercises, one folder each, and the one ordered list of them.

An exercise is a package ``attnlab.labs.exercises.<name>`` whose ``__init__`` ends in an
``EXERCISE = Exercise(...)`` record, made of its parts:

- ``solution.py``: the reference solution, self-contained, NumPy only (``attnlab lab solution``
  prints it as it stands);
- ``measure.py`` (when it needs one): what the checker computes of a learner's function that
  both its cases and its probes ask;
- ``cases.py``: ``build()``, the cases in order (hand-worked, random, properties), the
  hand-worked ones a table of inputs and expected outputs;
- ``mistakes.py``: ``MISTAKES``, the probes, each recognising one common mistake;
- ``describers.py`` (when it has its own): shapes of difference tried before the generic ones;
- ``hidden.py`` (when it ships some): ``HIDDEN``, cases ``lab grade`` runs and ``lab check``
  never shows, drawn from a seed at a size (``core.Hidden``; a class policy adds draws);
- ``wrong.py``: ``WRONG``, the mutation table, one wrong function per mistake, written as a
  learner writes it and apart from the probes (the tests run each through the checker);
- ``statement.md`` and ``statement.es.md``: its words a teacher reads as a page, in English
  and Spanish: ``# title``, the statement, then ``## What the checker proves`` and
  ``## Hint 1``… (``attnlab.labs.statement`` reads them);
- ``words.json``: the rest of its words, ``{"labs": {"<name>.case.…": {"en": …, "es": …}}}``:
  case titles, mistakes, its own failures (``<name>.fail.…``) and the solution's Spanish
  comments (``<name>.solution_comments``, one line per comment of ``solution.py``).

A part imports only the parts above it in that list, never the face; ``wrong.py`` only the
solution, and nothing imports it but the tests. Every key of a folder's words starts with
``<name>.``; :func:`load` hands them to ``attnlab.i18n.own``, so they are in the one ``labs``
catalogue as soon as ``attnlab.labs`` is imported (importing any module below it does), and
``text("labs", "<name>.hint1", lang)`` finds them. A check of the whole catalogue
(``i18n.check_complete``, ``i18n.catalogue("labs")``) imports ``attnlab.labs`` first; the
shared words of the labs (``cli.*``, ``grade.*``, ``fail.*``, ...) stay in
``attnlab/i18n/labs.json``. ``scripts/labs_doc.py`` writes docs/labs.md's table of exercises
and list of mistakes from them.

``REGISTRY`` below is the order a learner meets them: exercise N is its Nth line, and each line
names the lab notebook (``NOTEBOOKS``) it appears in. Adding an exercise is its folder and one
line here; ``docs/design.md`` ("Adding an exercise") walks through it.
Its record also says how long it takes (``minutes``, an estimate) and the chapter's and the
curriculum's sections it serves (``chapter``, ``curriculum``: catalogue keys ``course.*``).
"""

from __future__ import annotations

import importlib
import json
from importlib import resources
from importlib.resources.abc import Traversable

from attnlab.i18n import Entries, own
from attnlab.labs import statement
from attnlab.labs.checker import Exercise

NOTEBOOKS = {  # notebooks/labs/[es/]<stem>.ipynb -> the catalogue key of its title
    "01_softmax_to_masks": "nb.group.curriculum",
    "02_heads_and_scale": "nb.group.heads",
    "03_positions_gradients_cache": "nb.group.chapter",
    "04_recurrence_and_induction": "nb.group.course",
}

CHAPTER = ("mean", "scores", "masks", "heads", "scale", "positions", "training", "cost",
           "recurrence", "induction")  # the chapter's sections, by subject: course.chapter.<it>
CURRICULUM = ("softmax", "attention", "masks", "heads", "exit", "")  # course.curriculum.<it>

REGISTRY = (  # (folder below exercises/, its notebook): exercise N is the Nth line
    ("softmax", "01_softmax_to_masks"),
    ("mean", "01_softmax_to_masks"),
    ("attention", "01_softmax_to_masks"),
    ("masks", "01_softmax_to_masks"),
    ("heads", "02_heads_and_scale"),
    ("scale", "02_heads_and_scale"),
    ("sinusoidal", "03_positions_gradients_cache"),
    ("rope", "03_positions_gradients_cache"),
    ("backward", "03_positions_gradients_cache"),
    ("cache", "03_positions_gradients_cache"),
    ("recurrence", "04_recurrence_and_induction"),
    ("induction", "04_recurrence_and_induction"),
    ("additive", "04_recurrence_and_induction"),
)
PAGES = {"en": "statement.md", "es": "statement.es.md"}  # a folder's statement page per language
WORDS = "words.json"  # the rest of its words: {"labs": {"<name>.case.…": {"en": …, "es": …}}}


def load() -> tuple[Exercise, ...]:
    """Every exercise's record, in the registry's order. A record whose name is not its
    folder's, or whose number is not its line's, a notebook not in ``NOTEBOOKS``, or a record
    without its minutes and sections, or whose hints are not those its statement pages give,
    is a ``ValueError`` naming the folder (a bug in attnlab, not in a learner's code). Each
    folder's words (:func:`words`) join the catalogue here, owned by ``exercise <name>``."""
    records = []
    for number, (folder, notebook) in enumerate(REGISTRY, start=1):
        ex = importlib.import_module(f"{__name__}.{folder}").EXERCISE
        if (ex.name, ex.number) != (folder, number) or notebook not in NOTEBOOKS:
            raise ValueError(f"exercises/{folder}: its record says exercise {ex.number} "
                             f"{ex.name!r}, its registry line {number} {folder!r} in {notebook!r}")
        if ex.minutes <= 0 or ex.chapter not in CHAPTER or ex.curriculum not in CURRICULUM:
            raise ValueError(f"exercises/{folder}: its record needs minutes > 0, a chapter of "
                             f"{CHAPTER} and a curriculum of {CURRICULUM}")
        said = words(resources.files(__name__) / folder)
        own(f"exercise {folder}", said)
        hints = {k for k in said["labs"] if k.startswith(f"{folder}.hint")}
        if hints != {f"{folder}.hint{i}" for i in range(1, ex.hints + 1)}:
            raise ValueError(f"exercises/{folder}: its record says {ex.hints} hints, its "
                             f"statement pages give {len(hints)}")
        records.append(ex)
    return tuple(records)


def words(folder: Traversable) -> dict[str, Entries]:
    """The words an exercise's folder owns, as ``attnlab.i18n.own`` takes them: the sections
    of its statement pages (``<name>.title``, ``.statement``, ``.proves``, ``.hint1``…, read by
    ``attnlab.labs.statement``) and the entries of its ``words.json``, ``<name>`` being the
    folder's name. A page that is missing leaves its language out of those entries, which
    ``attnlab.i18n.check_complete`` then names key by key; a key that does not start with
    ``<name>.``, or that both a page and ``words.json`` give, is a ``ValueError`` naming the
    folder."""
    name = folder.name
    table = folder / WORDS
    said: dict[str, Entries] = (json.loads(table.read_text(encoding="utf-8"))
                                if table.is_file() else {})
    labs = said.setdefault("labs", {})
    paged: Entries = {}
    for lang, page in PAGES.items():
        if (folder / page).is_file():
            texts = statement.read((folder / page).read_text(encoding="utf-8"), lang,
                                   f"exercises/{name}/{page}")
            for section, words_there in texts.items():
                paged.setdefault(f"{name}.{section}", {})[lang] = words_there
    twice = sorted(set(paged) & set(labs))
    if twice:
        raise ValueError(f"exercises/{name}: {twice[0]} is on a statement page and in {WORDS}")
    stray = sorted(k for entries in said.values() for k in entries if not k.startswith(f"{name}."))
    if stray:
        raise ValueError(f"exercises/{name}/{WORDS}: {stray[0]} is not a key of {name} "
                         f"(its keys start with '{name}.')")
    labs.update(paged)
    return said


def groups() -> dict[str, tuple[str, tuple[int, ...]]]:
    """The lab notebooks: file stem -> (title key, the numbers of its exercises, in order)."""
    return {stem: (key, tuple(n for n, (_, on) in enumerate(REGISTRY, start=1) if on == stem))
            for stem, key in NOTEBOOKS.items()}
