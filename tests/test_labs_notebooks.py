"""The lab notebooks in notebooks/labs/ (English) and notebooks/labs/es/ (Spanish): stored
without outputs, equal to what the builder writes from the one catalogue, and they run: with the
blanks as stored (every check says "not implemented yet", in the notebook's language whatever
the kernel's locale), with the solutions filled in (every check passes), and with a wrong
function (its mistake named and a plot of it beside the reference). Executed as
tests/test_notebooks.py does (nbclient, a kernel spec of this interpreter in a temporary
JUPYTER_PATH)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from notebook_support import kernel_spec_root

from attnlab.i18n import LANGS, text
from attnlab.labs import get
from attnlab.labs.notebook import FOLDERS, GROUPS, dumps, lab_notebook, stored_name

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

FOLDER = Path(__file__).resolve().parents[1] / "notebooks" / "labs"
KERNEL = "attnlab-labs-test"


@pytest.fixture(scope="module")
def kernel_path(tmp_path_factory) -> Path:
    """A JUPYTER_PATH holding one kernel spec that starts this interpreter's ipykernel."""
    return kernel_spec_root(tmp_path_factory.mktemp("jupyter"), KERNEL, "attnlab labs test")


def execute(nb: dict, kernel_path: Path, tmp_path: Path, monkeypatch) -> list[dict]:
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_path))
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the inline backend: figures are outputs
    node = nbformat.reads(dumps(nb), as_version=4)
    client = nbclient.NotebookClient(node, kernel_name=KERNEL, timeout=120,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    return [o for c in node.cells if c.cell_type == "code" for o in c.outputs]


def shown(outputs: list[dict]) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)


@pytest.mark.parametrize("lang", LANGS)
def test_the_stored_notebooks_are_the_builders_without_outputs(lang):
    folder = FOLDER / FOLDERS[lang]
    assert sorted(p.stem for p in folder.glob("*.ipynb")) == sorted(GROUPS)
    for stem in GROUPS:
        stored = (FOLDER / stored_name(stem, lang)).read_text(encoding="utf-8")
        assert stored == dumps(lab_notebook(stem, None, lang)), \
            f"{stored_name(stem, lang)}: rebuild it (docs/labs.md)"
        nbformat.validate(nbformat.reads(stored, as_version=4))
        assert f'lang=\\"{lang}\\")' in stored  # its checks speak its language


def all_labs(bodies: dict[int, str] | None = None, langs: tuple[str, ...] = ("en",)) -> dict:
    """The lab notebooks' cells, one after the other: one kernel runs them all."""
    books = [lab_notebook(stem, bodies, lang) for lang in langs for stem in sorted(GROUPS)]
    cells = [{**c, "id": f"{i}-{c['id']}"} for i, nb in enumerate(books) for c in nb["cells"]]
    return {**books[0], "cells": cells}


def test_with_the_blanks_each_check_says_what_is_missing(kernel_path, tmp_path, monkeypatch):
    out = shown(execute(all_labs(langs=LANGS), kernel_path, tmp_path, monkeypatch))
    assert "Traceback" not in out
    for number in (n for _, numbers in GROUPS.values() for n in numbers):
        ex = get(number)
        for lang in LANGS:  # the kernel's locale is English: the Spanish lines are the notebook's
            assert text("labs", "result.not_implemented", lang, number=number, name=ex.name,
                        function=ex.function) in out


def test_with_the_solutions_every_check_passes_and_a_wrong_one_is_drawn(kernel_path, tmp_path,
                                                                       monkeypatch):
    numbers = [n for _, group in GROUPS.values() for n in group]
    bodies = {n: inspect.getsource(get(n).solution) for n in numbers}
    bodies[1] = ("def softmax(x, axis=-1):\n    e = np.exp(x)\n"
                 "    return e / e.sum(axis=axis, keepdims=True)\n")  # no maximum subtracted
    outputs = execute(all_labs(bodies), kernel_path, tmp_path, monkeypatch)
    out = shown(outputs)
    assert "Traceback" not in out
    for number in numbers[1:]:
        assert f"exercise {number} ({get(number).name}): all " in out, out
    assert text("labs", "softmax.mistake.no_max", "en") in out
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1  # the failing one only


@pytest.mark.parametrize("lang", LANGS)
def test_each_exercise_of_a_notebook_says_its_time_and_sections(lang):
    from attnlab.labs.notebook import course_line

    for stem, (_, numbers) in GROUPS.items():
        cells = "".join("".join(c["source"]) for c in lab_notebook(stem, None, lang)["cells"])
        for number in numbers:
            ex = get(number)
            line = course_line(ex, lang)
            assert f"*{line}*" in cells, (stem, ex.name)
            assert str(ex.minutes) in line and text(
                "labs", f"course.chapter.{ex.chapter}", lang) in line
