"""The chapter notebooks in Spanish (notebooks/es/) beside the English ones (notebooks/): both
written from notebooks/source/ by scripts/notebooks_doc.py and up to date; the Spanish one runs
the English one's code (a call that can answer in Spanish passes ``lang="es"``); its Markdown is
Spanish (no English sentence of the English notebook left, no English function word outside
code) and writes numbers as docs/es/README.md says. The glossary's words are checked by
tests/test_glossary_es.py, which reads these notebooks too; tests/test_notebooks.py runs them."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from test_glossary_es import prose

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "notebooks"
STEMS = sorted(p.stem for p in FOLDER.glob("*.ipynb"))
# words of English prose that Spanish prose never uses ("he", "has", "no", "a" are Spanish too)
ENGLISH = {"the", "and", "of", "with", "is", "are", "was", "this", "that", "which", "from", "to",
           "in", "on", "at", "it", "its", "for", "by", "not", "be", "each", "every", "what",
           "when", "only", "than", "then", "there", "here", "they", "their", "how", "why",
           "into", "over", "whose", "where", "so", "but", "or", "as", "we", "our"}
WORD = re.compile(r"[^\W\d_]+")


def generator():
    spec = importlib.util.spec_from_file_location("notebooks_doc",
                                                  ROOT / "scripts" / "notebooks_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def markdown(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown"]


def english_words(text: str) -> list[str]:
    return [w for w in WORD.findall(prose(text)) if w.lower() in ENGLISH]


def sentences(text: str, words: int = 4) -> list[str]:
    """The stretches of ``text``'s prose between punctuation that have ``words`` words or more;
    a quotation in «» is the quoted language's, not the page's."""
    unquoted = re.sub(r"«[^»]*»", " ", prose(text))
    parts = (" ".join(p.split()) for p in re.split(r"[.,:;!?()\"*\n]+", unquoted))
    return [p for p in parts if len(re.findall(r"[^\W\d_]{2,}", p)) >= words]  # not a formula


def test_every_notebook_is_its_sources():
    gen = generator()
    assert sorted(p.stem for p in gen.SOURCES.glob("*.md")) == STEMS
    assert sorted(p.stem for p in (FOLDER / "es").glob("*.ipynb")) == STEMS
    stale = [str(p.relative_to(ROOT)) for p in gen.stale()]
    assert stale == [], "run .venv/bin/python scripts/notebooks_doc.py"


def test_the_check_can_fail(tmp_path, monkeypatch, capsys):
    gen = generator()
    monkeypatch.setattr(gen, "FOLDERS", {"en": tmp_path, "es": tmp_path / "es"})
    assert gen.main(["--check"]) == 1  # nothing written yet
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
    shutil.copy(FOLDER / f"{STEMS[0]}.ipynb", tmp_path / "es" / f"{STEMS[0]}.ipynb")
    assert gen.main(["--check"]) == 1  # an English notebook where the Spanish one belongs
    assert f"es/{STEMS[0]}.ipynb is not its source's" in capsys.readouterr().err


@pytest.mark.parametrize("source, says", [
    ("<!-- cell code a -->\n```python\nx = 1\n```\n", "metadata"),
    ('<!-- metadata {} -->\n<!-- cell markdown a -->\n<!-- en -->\nHello\n', "<!-- es -->"),
    ('<!-- metadata {} -->\n<!-- cell code a -->\nx = 1\n', "```python"),
    ('<!-- metadata {} -->\nstray\n', "outside a cell"),
])
def test_a_malformed_source_is_named(source, says):
    with pytest.raises(SystemExit, match=re.escape(says)):
        generator().parse(source, "x.md")


@pytest.mark.parametrize("stem", STEMS)
def test_the_spanish_notebook_runs_the_english_code(stem):
    en, es = cells(FOLDER / f"{stem}.ipynb"), cells(FOLDER / "es" / f"{stem}.ipynb")
    assert [(c["cell_type"], c["id"]) for c in es] == [(c["cell_type"], c["id"]) for c in en]
    for ours, theirs in zip(es, en, strict=True):
        if ours["cell_type"] == "code":
            code = "".join(ours["source"])
            assert code.replace(', lang="es"', "") == "".join(theirs["source"]), ours["id"]


def test_the_spanish_explorer_is_asked_for_in_spanish():
    calls = [line for stem in STEMS for c in cells(FOLDER / "es" / f"{stem}.ipynb")
             if c["cell_type"] == "code" for line in "".join(c["source"]).split(")\n")
             if "ax.show(" in line]
    assert len(calls) == 2 and all('lang="es"' in call for call in calls), calls


@pytest.mark.parametrize("stem", STEMS)
def test_no_english_is_left_in_the_spanish_markdown(stem):
    en, es = markdown(FOLDER / f"{stem}.ipynb"), markdown(FOLDER / "es" / f"{stem}.ipynb")
    assert len(english_words("\n".join(en))) > 10  # the check can fail: English has them
    left = {i: english_words(text) for i, text in enumerate(es) if english_words(text)}
    assert left == {}, left
    for english, spanish in zip(en, es, strict=True):
        said = " ".join(prose(spanish).split())
        assert [s for s in sentences(english) if s in said] == [], spanish[:80]


def test_the_checks_find_english_left():
    english = "Runs offline in seconds; nothing is trained."
    assert english_words(english) == ["in", "is"]
    assert sentences(english) == ["Runs offline in seconds"]
    assert english_words("Se ejecuta sin conexión en segundos; `is_file` no cuenta.") == []


def badly_written_numbers(text: str) -> list[str]:
    """The numbers of ``text``'s prose not written as docs/es/README.md says: a decimal point; a
    narrow no-break space (U+202F) groups an integer part of five digits or more, and only such
    a part; a space before a per cent sign."""
    text = prose(text)
    return (re.findall(r"\d,\d", text)  # no decimal comma, no thousands comma
            + re.findall(r"(?<![\d\u202f.])\d{5,}", text)  # 20 000, not 20000
            + re.findall(r"\d[ \u00a0]\d{3}(?!\d)", text)  # the narrow space, no other
            + re.findall(r"(?<![\d\u202f])\d\u202f\d{3}(?![\d\u202f])", text)  # 1024 whole
            + re.findall(r"\d%", text))  # 66.6 %


def test_the_number_check_can_fail():
    assert len(badly_written_numbers("20000 pares, 20 000, 1\u202f024, 3,5 y 66%")) == 5
    assert badly_written_numbers(
        "20\u202f000 pares, 124\u202f439\u202f808, 1024, 1015.562, 3.5, 66.6 % y `1,024`") == []


@pytest.mark.parametrize("stem", STEMS)
def test_spanish_numbers_follow_the_spanish_convention(stem):
    found = {i: bad for i, text in enumerate(markdown(FOLDER / "es" / f"{stem}.ipynb"))
             if (bad := badly_written_numbers(text))}
    assert found == {}, found
