"""An exercise owns its words: its statement pages (statement.md, statement.es.md) and its
words.json, in its folder, join the one catalogue when the registry loads it; adding them needs
nothing outside the folder, a language left out is named key by key, and the shared file keeps
no exercise's key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import i18n
from attnlab.labs import EXERCISES
from attnlab.labs.exercises import PAGES, REGISTRY, words
from attnlab.labs.statement import read

FOLDER = Path(__file__).resolve().parents[1] / "src" / "attnlab" / "labs" / "exercises"
EN = "# tiny\n\nWrite `tiny()`.\n\n## What the checker proves\n\nit is tiny\n\n## Hint 1\n\nLook.\n"
ES = "# diminuto\n\nEscribe `tiny()`.\n\n## Lo que prueba el comprobador\n\nque es diminuto\n\n" \
     "## Pista 1\n\nMira.\n"
CASES = {"labs": {"tiny.case.one": {"en": "one case", "es": "un caso"}}}


@pytest.fixture
def tiny(tmp_path: Path):
    """An exercise folder ``tiny/`` outside attnlab, owned for the test and given back after."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    yield folder
    i18n.own("exercise tiny", {"labs": {}})


def _write(folder: Path, pages: dict[str, str], table: dict) -> None:
    for lang, page in pages.items():
        (folder / PAGES[lang]).write_text(page, encoding="utf-8")
    (folder / "words.json").write_text(json.dumps(table), encoding="utf-8")


def test_a_folder_is_all_an_exercises_words_need(tiny: Path):
    _write(tiny, {"en": EN, "es": ES}, CASES)
    i18n.own("exercise tiny", words(tiny))
    assert i18n.text("labs", "tiny.title", "es") == "diminuto"
    assert i18n.text("labs", "tiny.statement", "en") == "Write `tiny()`."
    assert i18n.text("labs", "tiny.proves", "es") == "que es diminuto"
    assert i18n.text("labs", "tiny.hint1", "en") == "Look."
    assert i18n.text("labs", "tiny.case.one", "es") == "un caso"
    assert i18n.owners("labs")["exercise tiny"].keys() == {
        "tiny.title", "tiny.statement", "tiny.proves", "tiny.hint1", "tiny.case.one"}
    assert i18n.check_complete() == []


def test_a_missing_language_is_named_with_the_exercise_and_the_key(tiny: Path):
    lacking = {"labs": {"tiny.case.one": {"en": "one case"}}}
    _write(tiny, {"en": EN}, lacking)  # no statement.es.md, one case title in English only
    i18n.own("exercise tiny", words(tiny))
    problems = i18n.check_complete()
    for key in ("title", "statement", "proves", "hint1", "case.one"):
        assert f"labs.tiny.{key}: no es text" in problems


def test_a_key_of_another_exercise_or_given_twice_is_refused(tiny: Path):
    _write(tiny, {"en": EN}, {"labs": {"softmax.case.one": {"en": "a", "es": "b"}}})
    with pytest.raises(ValueError, match="tiny/words.json: softmax.case.one is not a key of tiny"):
        words(tiny)
    _write(tiny, {"en": EN}, {"labs": {"tiny.hint1": {"en": "a", "es": "b"}}})
    with pytest.raises(ValueError, match="tiny.hint1 is on a statement page and in words.json"):
        words(tiny)


def test_a_heading_that_is_no_section_names_the_page_and_line():
    with pytest.raises(ValueError, match=r"tiny/statement.md:5: '## Hints' is not a section"):
        read("# tiny\n\nWrite it.\n\n## Hints\n", "en", "tiny/statement.md")
    with pytest.raises(ValueError, match=r":3: '## Hint 1' comes twice"):
        read("# tiny\n## Hint 1\n## Hint 1\n", "en", "tiny/statement.md")
    page = "# tiny\n\n```python\n## not a heading\n```\n\n### Shapes\n\n(B, T)\n"
    assert read(page, "en", "x")["statement"] == "```python\n## not a heading\n```\n\n### Shapes" \
                                                 "\n\n(B, T)"


def test_every_exercise_has_both_pages_and_the_shared_file_none_of_its_keys():
    for name, _ in REGISTRY:
        assert all((FOLDER / name / page).is_file() for page in PAGES.values()), name
    shared = json.loads((FOLDER.parents[1] / "i18n" / "labs.json").read_text(encoding="utf-8"))
    assert [k for k in shared if k.split(".")[0] in {ex.name for ex in EXERCISES}] == []
    assert set(i18n.owners("labs")) >= {f"exercise {ex.name}" for ex in EXERCISES}


def test_a_fresh_process_gets_an_exercises_words_from_any_labs_module():
    # importing any module below attnlab.labs runs its __init__, which loads the registry
    code = ("from attnlab.labs import statement; from attnlab.i18n import text; "
            "print(text('labs', 'softmax.hint1', 'es')); print(text('labs', 'masks.case.float16'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.startswith("exp(1000) es inf en float64")
