"""What a learner opens: the stub file and the lab notebook, built from the exercise records.

The notebooks in ``notebooks/labs/`` are these builders' output (a test keeps them equal), so a
statement is written once, in the catalogue, and reaches the stub, the notebook and the command
line in either language. A notebook is plain nbformat-4 JSON, stored without outputs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from attnlab.i18n import text
from attnlab.labs.core import Exercise

GROUPS = {  # the lab notebooks of notebooks/labs/: file stem -> (title key, exercise numbers)
    "01_softmax_to_masks": ("nb.group.curriculum", (1, 2, 3, 4)),
    "02_heads_and_scale": ("nb.group.heads", (5, 6)),
    "03_positions_gradients_cache": ("nb.group.chapter", (7, 8, 9, 10)),
}


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
    return f'"""{doc}\n"""\n\nimport numpy as np\n\n\n{stub_body(ex)}'


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


def solution_file(ex: Exercise) -> str:
    """The reference solution as a learner's file would hold it."""
    import inspect

    return f"import numpy as np\n\n\n{inspect.getsource(ex.solution)}"


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
        cells.append(_md(f"{level} {heading}\n\n{intro}"))
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


def lab_notebook(stem: str, bodies: dict[int, str] | None = None) -> dict[str, Any]:
    """The group notebook ``notebooks/labs/<stem>.ipynb``: English text, checks in the
    reader's language."""
    from attnlab.labs import get

    key, numbers = GROUPS[stem]
    return notebook([get(n) for n in numbers], "en", text("labs", key, "en"), bodies)
