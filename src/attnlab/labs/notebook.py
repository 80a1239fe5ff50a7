"""What a learner opens: the stub file and the lab notebook, built from the exercise records.

The notebooks in ``notebooks/labs/`` (English) and ``notebooks/labs/es/`` (Spanish) are these
builders' output (a test keeps them equal; ``rebuild`` writes them), so a statement is written
once, on its exercise's statement page (``statement.md``, ``statement.es.md``), and reaches the
stub, the notebook and the command line in either language. A notebook is plain nbformat-4
JSON, stored without outputs.

The language travels with what a learner opens: a stub's first line is ``# attnlab-lang: es``
(``file_lang`` reads it, and ``attnlab lab check`` answers in it), and a notebook's checks pass
its language to ``check``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnlab.i18n import LANGS, text
from attnlab.labs.checker import Exercise
from attnlab.labs.exercises import groups

GROUPS = groups()  # the lab notebooks of notebooks/labs/: stem -> (title key, numbers)
FOLDERS = {"en": "", "es": "es"}  # the group notebooks of a language: notebooks/labs/<folder>/
MARKER = "# attnlab-lang: {lang}"  # a stub's first line: the language its checks answer in
_MARKED = re.compile(r"#\s*attnlab-lang:\s*([A-Za-z_]+)\s*$")


def stub_body(ex: Exercise) -> str:
    """The function to fill in: its signature and ``raise NotImplementedError``."""
    return f"def {ex.function}{ex.signature}:\n    raise NotImplementedError\n"


def stub_file(ex: Exercise, lang: str = "en") -> str:
    """The learner's ``<name>.py``: the statement as its docstring, numpy, the stub."""
    doc = "\n\n".join([
        text("labs", "nb.heading", lang, number=ex.number, title=ex.title(lang)),
        text("labs", f"{ex.name}.statement", lang),
        text("labs", "stub.footer", lang, number=ex.number, file=f"{ex.name}.py"),
    ])
    doc = _wrap(doc).replace('"""', "'''").replace("\\", "\\\\")
    marker = MARKER.format(lang=lang)
    return f'{marker}\n"""{doc}\n"""\n\nimport numpy as np\n\n\n{stub_body(ex)}'


def file_lang(path: str | Path) -> str | None:
    """The language a learner's file was started in (its ``# attnlab-lang: xx`` line among the
    leading comments), or None: no such line, a language attnlab lacks, or no file to read."""
    try:
        if not Path(path).is_file():  # a folder, a pipe: nothing to read the language from
            return None
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    for line in head.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            break
        found = _MARKED.match(line)
        if found:
            code = found.group(1).lower()
            return code if code in LANGS else None
    return None


def _wrap(text_: str, width: int = 92) -> str:
    """Paragraphs and bullets wrapped for a source file; indented lines (formulas) kept."""
    import textwrap

    out = []
    for line in text_.split("\n"):
        if line.startswith("    ") or len(line) <= width:
            out.append(line)
        else:
            hang = "  " if line.startswith("- ") else ""
            out.append(textwrap.fill(line, width, subsequent_indent=hang,
                                     break_on_hyphens=False, break_long_words=False))
    return "\n".join(out)


def solution_file(ex: Exercise, lang: str = "en") -> str:
    """The reference solution as a learner's file would hold it, its comments in ``lang``
    (the catalogue's ``<name>.solution_comments``: one line per comment, in source order)."""
    return f"import numpy as np\n\n\n{_with_comments(solution_source(ex), ex, lang)}"


def solution_source(ex: Exercise) -> str:
    """The source of ``ex``'s reference solution, as its folder's ``solution.py`` holds it."""
    import inspect

    return inspect.getsource(ex.solution)


def comments(source: str) -> list[tuple[int, int, str]]:
    """Every comment of ``source``: (line from 1, column, text after ``# ``)."""
    import io
    import tokenize

    return [(tok.start[0], tok.start[1], tok.string[1:].strip())
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT]


def _with_comments(source: str, ex: Exercise, lang: str) -> str:
    found = comments(source)
    if lang == "en" or not found:
        return source
    said = text("labs", f"{ex.name}.solution_comments", lang).split("\n")
    lines = source.split("\n")
    for (row, col, _), comment in zip(found, said, strict=True):
        lines[row - 1] = f"{lines[row - 1][:col]}# {comment}"
    return "\n".join(lines)


def notebook(exercises: Sequence[Exercise], lang: str = "en", title: str | None = None,
             bodies: dict[int, str] | None = None, check_lang: str | None = None) -> dict[str, Any]:
    """A lab notebook for one exercise, or a group of them under ``title``, written in ``lang``.

    ``check_lang`` is the language its checks speak (None: the reader's locale, then English);
    ``bodies`` replaces an exercise's stub by other code (the tests fill in the solutions).
    """
    bodies = bodies or {}
    cells = []
    if title is not None:
        cells.append(_md(f"# {text('labs', 'nb.group_heading', lang, title=title)}\n\n"
                         + text("labs", "nb.group_intro", lang)))
    cells.append(_code("import numpy as np  # noqa: F401\n\nfrom attnlab.labs import check"))
    for ex in exercises:
        level = "##" if title is not None else "#"
        heading = text("labs", "nb.heading", lang, number=ex.number, title=ex.title(lang))
        intro = text("labs", "nb.intro", lang, number=ex.number)
        cells.append(_md(f"{level} {heading}\n\n*{course_line(ex, lang)}*\n\n{intro}"))
        cells.append(_md(text("labs", f"{ex.name}.statement", lang)))
        cells.append(_code(bodies.get(ex.number, stub_body(ex)).rstrip("\n")))
        cells.append(_md(text("labs", "nb.plot", lang)))
        lang_arg = f', lang="{check_lang}"' if check_lang else ""
        cells.append(_code(f'result = check("{ex.name}", {ex.function}{lang_arg})\n'
                           "result.show()\nresult"))
    for index, cell in enumerate(cells):
        cell["id"] = f"cell-{index:02d}"
    return {"cells": cells, "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def course_line(ex: Exercise, lang: str | None) -> str:
    """How long ``ex`` takes and the chapter's and curriculum's sections it serves, one line
    (``lab list``, the notebooks, the teacher's guide)."""
    return text("labs", "cli.list_course", lang, minutes=ex.minutes,
                chapter=text("labs", f"course.chapter.{ex.chapter}", lang),
                curriculum=text("labs", f"course.curriculum.{ex.curriculum or 'none'}", lang))


def dumps(nb: dict[str, Any]) -> str:
    """The notebook as stored: indented JSON, non-ASCII kept, one final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def _source(text_: str) -> list[str]:
    lines = text_.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def _md(text_: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": _source(text_)}


def _code(text_: str) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": _source(text_)}


def lab_notebook(stem: str, bodies: dict[int, str] | None = None,
                 lang: str = "en") -> dict[str, Any]:
    """The group notebook ``notebooks/labs/[es/]<stem>.ipynb``: its text and its checks in
    ``lang``."""
    from attnlab.labs import get

    key, numbers = GROUPS[stem]
    return notebook([get(n) for n in numbers], lang, text("labs", key, lang), bodies,
                    check_lang=lang)


def stored_name(stem: str, lang: str) -> str:
    """Where the group notebook lies below ``notebooks/labs/``: ``es/01_softmax_to_masks.ipynb``."""
    return "/".join(part for part in (FOLDERS[lang], f"{stem}.ipynb") if part)


def rebuild(folder: str | Path) -> list[Path]:
    """Write every group notebook of every language below ``folder`` (``notebooks/labs``)."""
    from attnlab.files import write_text

    return [write_text(Path(folder) / stored_name(stem, lang),
                       dumps(lab_notebook(stem, None, lang)))
            for lang in LANGS for stem in GROUPS]
