"""A teacher's sheet: every exercise file of a class checked in the sandbox, in one table.

A class folder holds one sub-folder per learner; in each, ``<name>.py`` for a known exercise
(``masks.py`` for exercise 4) is that learner's answer. :func:`grade` checks every such file
with :func:`attnlab.labs.sandbox.isolated` (a file that hangs ends at the time limit, one that
crashes or does not import is recorded as unusable, and grading goes on) and returns a
:class:`Sheet`; :func:`write` writes it as ``sheet.md``, ``sheet.csv``, ``sheet.html`` and
``gradebook.csv`` together::

    sheet = grade("class-3b", lang="es", time_limit=10)
    write(sheet, "class-3b")

The sheet holds learner × exercise (status, passed cases of the total, the mistakes the
checker named, each failed case with its reason), each exercise's counts, and the class's most
common named mistakes with who made them. Beside each exercise's cases it runs its grade-only
cases (``Exercise.hidden``) and those the class policy adds, with the policy's per-call time
limits (``attnlab.labs.policy``: ``FOLDER/attnlab-class.toml``). ``gradebook.csv`` is one row
per learner: each exercise's score (the share of its cases passed, 0 to 1) and their total.
Learner folder names are data: escaped in the Markdown and the HTML, and a CSV cell that starts
with ``=``, ``+``, ``-`` or ``@`` (a spreadsheet formula) is prefixed with ``'``.

Each file runs under the operating-system boundary (:mod:`attnlab.labs.boundary`) with the
class folder out of its sight, so no learner's file can read, change or run a classmate's.
Where there is no boundary (no bubblewrap), :func:`grade` refuses unless told ``trust=True``.

Left out: weights per exercise or per case (every case counts the same).
"""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import os
import re
import tempfile
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from attnlab.errors import DataError, UsageError, WriteError
from attnlab.i18n import resolve_lang, text
from attnlab.i18n.logs import reason_said
from attnlab.labs import EXERCISES, boundary
from attnlab.labs.checker import Case, Exercise
from attnlab.labs.policy import Policy, of_class
from attnlab.labs.sandbox import TIME_LIMIT, isolated

FILES = ("sheet.md", "sheet.csv", "sheet.html", "gradebook.csv")  # what write() puts in its folder
STATUSES = ("passed", "failed", "not_implemented", "time", "unusable", "missing")
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#!|~&])")  # what Markdown may read as syntax in a cell
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula


@dataclass(frozen=True)
class Failure:
    """A failed case: its sentence and reason, in the sheet's language."""

    case: str
    reason: str
    hidden: bool = False  # a grade-only case (lab check never shows it)


@dataclass(frozen=True)
class Mark:
    """One learner's result on one exercise (grade-only cases counted in ``passed``/``total``)."""

    status: str  # one of STATUSES
    passed: int = 0  # cases passed
    total: int = 0  # cases of the exercise
    mistakes: tuple[str, ...] = ()  # catalogue keys of the named mistakes, probed or described
    note: str = ""  # why a file could not be checked (one line)
    hidden_passed: int = 0  # grade-only cases passed
    hidden: int = 0  # grade-only cases among the total
    failures: tuple[Failure, ...] = ()  # each failed case, in the checker's order
    words: tuple[str, ...] = ()  # what the checker said of each named mistake, in order

    def named(self, lang: str | None) -> tuple[tuple[str, str], ...]:
        """(key, words) of each named mistake: the checker's words, else the catalogue's."""
        words = self.words or tuple(text("labs", key, lang) for key in self.mistakes)
        return tuple(zip(self.mistakes, words, strict=True))

    @property
    def score(self) -> float:
        """The share of cases passed, 0 to 1 (0 for a file that could not be checked)."""
        return self.passed / self.total if self.total and self.status in ("passed", "failed") \
            else 0.0


@dataclass(frozen=True)
class Sheet:
    """A class's marks: ``marks[learner][exercise name]``; learners and exercises in order."""

    folder: str  # the class folder's own name (not its path)
    learners: tuple[str, ...]
    exercises: tuple[Exercise, ...]  # those some learner has a file for, in the labs' order
    marks: dict[str, dict[str, Mark]]
    lang: str
    time_limit: float
    policy: str = ""  # the class policy's file name, when there was one

    def count(self, ex: Exercise, status: str) -> int:
        return sum(self.marks[who][ex.name].status == status for who in self.learners)

    def common(self) -> list[tuple[Exercise, str, str, list[str]]]:
        """Every named mistake (its key, the checker's words for the first learner who made it)
        with the learners who made it, the most common first."""
        who: dict[tuple[int, str], list[str]] = {}
        said: dict[tuple[int, str], str] = {}
        for learner in self.learners:
            for i, ex in enumerate(self.exercises):
                for key, words in self.marks[learner][ex.name].named(self.lang):
                    who.setdefault((i, key), []).append(learner)
                    said.setdefault((i, key), words)
        ranked = sorted(who.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [(self.exercises[i], key, said[i, key], names) for (i, key), names in ranked]


def learners(folder: str | Path, skip: Path | None = None, lang: str | None = None) -> list[Path]:
    """The learner folders of ``folder`` by name (hidden ones and ``skip`` left out); a
    :class:`DataError` when ``folder`` is not a folder or holds none."""
    folder = Path(folder)
    if not folder.is_dir():
        key = "grade.not_a_folder" if folder.exists() else "grade.no_folder"
        raise DataError(text("labs", key, lang, folder=folder))
    try:
        found = sorted((Path(e.path) for e in os.scandir(folder)
                        if e.is_dir() and not e.name.startswith(".")), key=lambda p: p.name)
    except OSError as err:
        raise DataError(text("labs", "grade.unreadable", lang, folder=folder,
                             reason=reason_said(err, lang))) from None
    if skip is not None:
        found = [p for p in found if p.resolve() != skip.resolve()]
    if not found:
        raise DataError(text("labs", "grade.no_learners", lang, folder=folder))
    return found


def grade(folder: str | Path, lang: str | None = None, time_limit: float = TIME_LIMIT,
          jobs: int = 1, skip: Path | None = None,
          progress: Callable[[int, int, str, dict[str, Mark]], None] | None = None,
          trust: bool = False, policy: Policy | None = None) -> Sheet:
    """Check every exercise file of every learner folder of ``folder`` in the sandbox, on its
    cases and its grade-only cases, under ``policy`` (default: the class folder's own).

    ``jobs`` learners are checked at a time; ``progress(done, total, learner, marks)`` is
    called after each learner, in order. Nothing a learner's file does stops the grading.
    Without an operating-system boundary here, a :class:`UsageError` unless ``trust``; a
    policy file that cannot be used is a :class:`DataError`, before any check.
    """
    lang = resolve_lang(lang)
    bounded(folder, trust, lang)
    folders = learners(folder, skip, lang)
    policy = of_class(folder, lang) if policy is None else policy
    hide = (Path(folder).resolve(),)  # every learner's folder: out of each file's sight
    found = {p.name: _files(p) for p in folders}
    present = {name for files in found.values() for name in files}
    exercises = tuple(ex for ex in EXERCISES if ex.name in present)
    graded = {ex.name: _with_hidden(ex, policy.hidden(ex)) for ex in exercises}
    totals = {name: len(cases) for name, (_, cases, _) in graded.items()}

    def one(path: Path) -> dict[str, Mark]:
        files = found[path.name]
        return {ex.name: _mark(graded[ex.name], files[ex.name], f"{path.name}/{ex.name}.py",
                               lang, time_limit, hide, policy.rule(ex).time_limit)
                if ex.name in files else Mark("missing", total=totals[ex.name],
                                              hidden=graded[ex.name][2])
                for ex in exercises}

    marks: dict[str, dict[str, Mark]] = {}
    with ThreadPoolExecutor(max(1, jobs)) as pool:  # each check is a child process of its own
        for done, (path, row) in enumerate(zip(folders, pool.map(one, folders), strict=True), 1):
            marks[path.name] = row
            if progress is not None:
                progress(done, len(folders), path.name, row)
    return Sheet(Path(folder).resolve().name, tuple(p.name for p in folders), exercises, marks,
                 lang, time_limit, policy.path.name if policy.path else "")


def _with_hidden(ex: Exercise, hidden: list[Case]) -> tuple[Exercise, list[Case], int]:
    """``ex`` whose cases end with ``hidden``; every case; how many are hidden."""
    cases = [*ex.cases(), *hidden]
    return dataclasses.replace(ex, cases=lambda: cases), cases, len(hidden)


def bounded(folder: str | Path, trust: bool, lang: str | None = None) -> None:
    """Return when the files can run under the boundary, or ``trust`` says to grade without;
    else a :class:`UsageError` of one line."""
    if not trust and boundary.available() is None:
        raise UsageError(text("labs", "grade.no_boundary", lang, folder=folder))


def _files(learner: Path) -> dict[str, Path]:
    """The learner's exercise files: exercise name -> path (an unreadable folder has none)."""
    names = {ex.name for ex in EXERCISES}
    try:
        return {e.name[:-3]: Path(e.path) for e in os.scandir(learner)
                if e.name.endswith(".py") and e.name[:-3] in names and e.is_file()}
    except OSError:
        return {}


def _mark(graded: tuple[Exercise, list[Case], int], path: Path, shown: str, lang: str,
          time_limit: float, hide: tuple[Path, ...] = (), call_limit: float | None = None
          ) -> Mark:
    ex, cases, hidden = graded
    total = len(cases)
    result = isolated(ex, path, lang, time_limit, hide, call_limit)
    if result.status == "unusable":
        timed_out = text("labs", "unusable.time", lang, seconds=f"{time_limit:g}")
        status = "time" if result.headline == timed_out else "unusable"
        return Mark(status, 0, total, note=result.headline.replace(str(path), shown),
                    hidden=hidden)
    lines = result.lines[len(result.mistakes):]  # the named mistakes first, then each case
    first_hidden = total - hidden
    passed = sum(line.passed for line in lines)
    hidden_passed = sum(line.passed for line in lines[first_hidden:])
    failures = tuple(Failure(line.sentence, line.reason.replace(str(path), shown),
                             i >= first_hidden)
                     for i, line in enumerate(lines) if not line.passed)
    status = result.status.replace(" ", "_")  # "not implemented" -> not_implemented
    return Mark(status, passed, total, tuple(key for key, _ in result.named),
                hidden_passed=hidden_passed, hidden=hidden, failures=failures,
                words=tuple(words for _, words in result.named))


def writable(out: str | Path, lang: str | None = None) -> Path:
    """``out``, made if missing, once a file could be written there; else :class:`WriteError`
    (checked before grading, so a class is not checked for nothing)."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise WriteError(text("labs", "cli.cannot_write", lang, folder=out,
                              reason=reason_said(err, lang))) from None
    return out


def write(sheet: Sheet, out: str | Path) -> list[Path]:
    """Write the sheet's ``FILES`` into ``out``, all or none; their paths."""
    from attnlab.files import staged

    out = writable(out, sheet.lang)
    makers = (markdown, csv_text, html_text, gradebook)
    try:
        with staged(out) as stage:
            paths = [stage.write_text(name, make(sheet))
                     for name, make in zip(FILES, makers, strict=True)]
    except OSError as err:  # WriteError too: the folder went away, a full disk
        reason = reason_said(err.__cause__ or err, sheet.lang)
        raise WriteError(text("labs", "cli.cannot_write", sheet.lang, folder=out,
                              reason=reason)) from None
    return paths


def markdown(sheet: Sheet) -> str:
    """The sheet as Markdown: marks, counts per exercise, common mistakes, unusable files."""
    lang = sheet.lang

    def say(key: str, **fields: object) -> str:
        return text("labs", f"grade.{key}", lang, **fields)

    heads = [f"{ex.number} {ex.name}" for ex in sheet.exercises]
    out = [f"# {say('title')}", "",
           _intro(sheet, _md), "",
           f"## {say('marks')}", "", _row([say("learner"), *heads]), _rule(1 + len(heads))]
    for who in sheet.learners:
        out.append(_row([_md(who), *(_cell(sheet.marks[who][ex.name], say)
                                     for ex in sheet.exercises)]))
    columns = [say("exercise"), *(say(f"status.{s}") for s in STATUSES)]
    out += ["", f"## {say('per_exercise')}", "", _row(columns), _rule(len(columns))]
    for ex, head in zip(sheet.exercises, heads, strict=True):
        out.append(_row([head, *(str(sheet.count(ex, s)) for s in STATUSES)]))
    out += ["", f"## {say('common')}", ""]
    common = sheet.common()
    if common:
        columns = [say("mistake"), say("count"), say("message"), say("learners")]
        out += [_row(columns), _rule(len(columns))]
        for ex, key, words, names in common:
            out.append(_row([f"{ex.number} {ex.name}: `{_short(key)}`", str(len(names)),
                             _md(words), ", ".join(map(_md, names))]))
    else:
        out.append(say("no_mistakes"))
    notes = [(who, ex, sheet.marks[who][ex.name]) for who in sheet.learners
             for ex in sheet.exercises if sheet.marks[who][ex.name].note]
    if notes:
        out += ["", f"## {say('notes')}", ""]
        out += [f"- {_md(who)}, {ex.number} {ex.name}: {_md(m.note)}" for who, ex, m in notes]
    return "\n".join(out) + "\n"


def csv_text(sheet: Sheet) -> str:
    """The sheet as CSV, one row per learner and exercise (a learner with no file: ``missing``)."""
    lang = sheet.lang

    def say(key: str) -> str:
        return text("labs", f"grade.{key}", lang)

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([say(k) for k in ("learner", "number", "exercise", "status", "passed",
                                      "total", "mistakes", "messages", "note", "hidden_passed",
                                      "hidden_total", "failures")])
    for who in sheet.learners:
        for ex in sheet.exercises:
            m = sheet.marks[who][ex.name]
            passed = "" if m.status == "missing" else m.passed
            writer.writerow([_cell_csv(who), ex.number, ex.name, say(f"status.{m.status}"),
                             passed, m.total, " ".join(_short(k) for k in m.mistakes),
                             _cell_csv(" | ".join(words for _, words in m.named(lang))),
                             _cell_csv(m.note), "" if m.status == "missing" else m.hidden_passed,
                             m.hidden, _cell_csv(" | ".join(_failure(f) for f in m.failures))])
    return buffer.getvalue()


def gradebook(sheet: Sheet) -> str:
    """The sheet as a gradebook imports it: one row per learner, one column per exercise's
    score (the share of its cases passed, 0 to 1; 0 without a usable file) and the total."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([text("labs", "grade.learner", sheet.lang),
                     *(f"{ex.number} {ex.name}" for ex in sheet.exercises),
                     text("labs", "grade.score_total", sheet.lang)])
    for who in sheet.learners:
        scores = [sheet.marks[who][ex.name].score for ex in sheet.exercises]
        writer.writerow([_cell_csv(who), *(f"{s:.2f}" for s in scores), f"{sum(scores):.2f}"])
    return buffer.getvalue()


def html_text(sheet: Sheet) -> str:
    """The sheet as one HTML page: a summary table (status, cases, score), then each learner's
    exercises with their named mistakes and every failed case with its reason."""
    lang = sheet.lang

    def say(key: str, **fields: object) -> str:
        return text("labs", f"grade.{key}", lang, **fields)

    esc = html.escape
    heads = "".join(f"<th>{ex.number} {esc(ex.name)}</th>" for ex in sheet.exercises)
    rows = []
    for who in sheet.learners:
        marks = [sheet.marks[who][ex.name] for ex in sheet.exercises]
        cells = "".join(f'<td class="{m.status}">{esc(_cell(m, say).replace("`", ""))}</td>'
                        for m in marks)
        total = sum(m.score for m in marks)
        rows.append(f"<tr><th>{esc(printable(who))}</th>{cells}<td>{total:.2f}</td></tr>")
    out = ["<!DOCTYPE html>", f'<html lang="{lang}">', '<head><meta charset="utf-8">',
           f"<title>{esc(say('title'))}: {esc(printable(sheet.folder))}</title>",
           "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
           "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
           "table{border-collapse:collapse}.passed{background:#e6f4e6}"
           ".failed,.time,.unusable{background:#fbe9e7}</style></head><body>",
           f"<h1>{esc(say('title'))}</h1>", f"<p>{esc(_intro(sheet, str))}</p>",
           f"<h2>{esc(say('summary'))}</h2>",
           f"<table><tr><th>{esc(say('learner'))}</th>{heads}"
           f"<th>{esc(say('score_total'))}</th></tr>", *rows, "</table>",
           f"<h2>{esc(say('each'))}</h2>"]
    for who in sheet.learners:
        out.append(f"<h3>{esc(printable(who))}</h3><ul>")
        for ex in sheet.exercises:
            m = sheet.marks[who][ex.name]
            line = f"{ex.number} {ex.name}: {_cell(m, say).replace('`', '')}"
            if m.hidden and m.status in ("passed", "failed"):
                line += f" ({say('hidden_passed')}: {m.hidden_passed}/{m.hidden})"
            out.append(f"<li>{esc(line)}")
            items = [f"{esc(say('named'))}: {esc(words)}" for _, words in m.named(lang)]
            items += [esc(_failure(f)) for f in m.failures]
            items += [esc(printable(m.note))] if m.note else []
            if items:
                out.append("<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>")
            out.append("</li>")
        out.append("</ul>")
    return "\n".join([*out, "</body></html>"]) + "\n"


def _intro(sheet: Sheet, escape: Callable[[str], str]) -> str:
    """The sheet's first paragraph: the class, its size, the time limit and the policy."""
    lang = sheet.lang
    intro = text("labs", "grade.intro", lang, folder=escape(sheet.folder),
                 learners=len(sheet.learners), exercises=len(sheet.exercises),
                 seconds=f"{sheet.time_limit:g}")
    hidden = sum(next(iter(sheet.marks.values()))[ex.name].hidden for ex in sheet.exercises) \
        if sheet.marks else 0
    if sheet.policy:
        intro += " " + text("labs", "grade.policy", lang, path=escape(sheet.policy),
                            hidden=hidden)
    return intro


def _failure(f: Failure) -> str:
    """One failed case in a line: its sentence (a grade-only case's says so) and its reason."""
    return f"{f.case}: {f.reason}" if f.reason else f.case


def summary(sheet: Sheet) -> tuple[int, int]:
    """(files that passed, files checked): a learner's missing file is not counted."""
    marks = [m for row in sheet.marks.values() for m in row.values()]
    return sum(m.status == "passed" for m in marks), sum(m.status != "missing" for m in marks)


def _cell(m: Mark, say: Callable[..., str]) -> str:
    if m.status == "missing":
        return "—"
    shown = say(f"status.{m.status}")
    if m.status in ("passed", "failed"):
        shown += f" {m.passed}/{m.total}"
    if m.mistakes:
        shown += ": " + ", ".join(f"`{_short(k)}`" for k in m.mistakes)
    return shown


def _short(key: str) -> str:
    """``masks.mistake.diagonal_hidden`` -> ``diagonal_hidden``."""
    return key.rsplit(".", 1)[-1]


def printable(name: str) -> str:
    """One printable line: undecodable bytes and control characters as ``?``."""
    name = name.encode("utf-8", "replace").decode("utf-8")
    return "".join("?" if unicodedata.category(c)[0] == "C" else c for c in name)


def _md(s: str) -> str:
    """``s`` as literal text in a Markdown table cell."""
    return _MARKDOWN.sub(r"\\\1", printable(s))


def _cell_csv(s: str) -> str:
    s = printable(s)
    return "'" + s if s.startswith(_FORMULA) else s


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _rule(n: int) -> str:
    return "|" + "---|" * n
