"""A teacher's class policy (``attnlab-class.toml``): it locks ``lab solution`` and the later
hints (one line, exit 2, saying until when), found from a learner's folder or through
``ATTNLAB_CLASS``; ``lab grade`` runs grade-only cases a learner's ``lab check`` never shows
and fails one slow call's case alone; the HTML sheet and the gradebook CSV say so in English
and Spanish; ``lab list`` says each lab's minutes and sections."""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
from pathlib import Path

import pytest
from lab_cli import lab

from attnlab.i18n import text
from attnlab.labs import EXERCISES, boundary, get
from attnlab.labs.notebook import solution_file
from attnlab.labs.policy import FILE, read

TRUST = () if boundary.available() else ("--trust",)
MASK = solution_file(get("masks"), "en")
# Right on every visible case (at most 7 keys), wrong beyond 8 keys: only grade-only cases see it.
SHORT_SIGHTED = MASK.replace("    return np.where", "    if n_key > 8:\n        return np.where("
                             "j < i, 0.0, -np.inf).astype(dtype)\n    return np.where")
MEAN = solution_file(get("mean"), "en")
# Never ends on n = 5 (one visible case and a probe), right elsewhere.
STUCK_ON_FIVE = MEAN.replace("def averaging_matrix(n):\n",
                             "def averaging_matrix(n):\n    while n == 5:\n        pass\n")
POLICY = """\
[all]
locked_until = "always"
open_hints = 1

[masks]
locked_until = 2001-01-01   # long past: open
hidden_seeds = [5]

[mean]
time_limit = 1
"""

pytestmark = pytest.mark.usefixtures("no_chosen_language")


@pytest.fixture
def klass(tmp_path, monkeypatch):
    """A class folder with a policy; the test runs from a learner's folder inside it."""
    monkeypatch.delenv("ATTNLAB_CLASS", raising=False)
    (tmp_path / FILE).write_text(POLICY)
    learner = tmp_path / "ana"
    learner.mkdir()
    monkeypatch.chdir(learner)
    return tmp_path


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_locked_solution_is_one_line_and_exit_2(klass, lang):
    code, out, err = lab("solution", "1", "--lang", lang)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert text("labs", "cli.locked_solution_always", lang, number=1,
                path=klass / FILE) in err


def test_the_first_hint_is_open_the_later_ones_locked_and_a_past_date_opens(klass):
    assert lab("hint", "1", "1")[0] == 0
    code, out, err = lab("hint", "1", "2")
    assert code == 2 and out == "" and "hint 2 of exercise 1 is locked" in err
    assert "1 of 3 hints are open" in err
    code, out, _ = lab("solution", "4")  # [masks] was locked until 2001
    assert code == 0 and "def causal_mask" in out


def test_a_lock_until_a_date_says_the_date_and_attnlab_class_names_the_folder(
        tmp_path, monkeypatch):
    folder = tmp_path / "class"
    folder.mkdir()
    soon = dt.date.today() + dt.timedelta(days=30)
    (folder / FILE).write_text(f"[softmax]\nlocked_until = {soon.isoformat()}\n")
    monkeypatch.chdir(tmp_path)  # not inside the class folder
    monkeypatch.setenv("ATTNLAB_CLASS", str(folder))
    code, _, err = lab("solution", "1")
    assert code == 2 and err.strip().endswith(f"until {soon.isoformat()}")
    assert lab("solution", "2")[0] == 0  # only exercise 1 is locked
    monkeypatch.setenv("ATTNLAB_CLASS", str(tmp_path))  # no policy there: said, not ignored
    code, _, err = lab("solution", "2")
    assert code == 2 and "ATTNLAB_CLASS" in err


@pytest.mark.parametrize(("policy", "word"), [
    ("[all]\nlocked_until = 5\n", "locked_until"),
    ("[masks]\nopen_hint = 1\n", "open_hint"),
    ("[nonsense]\n", "nonsense"),
    ("[scale]\nhidden_seeds = [1]\n", "scale"),  # ships no grade-only cases
    ("[masks]\nhidden_sizes = [100000]\n", "hidden_sizes"),
    ("[masks\n", FILE),
])
def test_a_policy_that_cannot_be_used_is_one_line_naming_what(tmp_path, policy, word):
    (tmp_path / FILE).write_text(policy)
    with pytest.raises(ValueError, match=word) as err:
        read(tmp_path / FILE)
    assert len(str(err.value).splitlines()) == 1


def test_lab_list_says_minutes_and_sections_in_both_languages():
    for lang in ("en", "es"):
        out = lab("list", "--lang", lang)[1]
        for ex in EXERCISES:
            assert text("labs", f"course.chapter.{ex.chapter}", lang) in out
            assert f" {ex.minutes} min" in out
        assert text("labs", "course.curriculum.masks", lang) in out
    assert all(ex.minutes > 0 and ex.chapter for ex in EXERCISES)


@pytest.fixture(scope="module", params=["en", "es"])
def graded(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / FILE).write_text(POLICY)
    for who, files in {"ana": {"masks": MASK, "mean": MEAN},
                       "bea": {"masks": SHORT_SIGHTED, "mean": MEAN},
                       "carl": {"masks": MASK, "mean": STUCK_ON_FIVE}}.items():
        (root / who).mkdir()
        for name, source in files.items():
            (root / who / f"{name}.py").write_text(source)
    code, _, _ = lab("grade", root, "--lang", request.param, *TRUST)
    assert code == 0
    return request.param, root


def test_a_learner_who_passes_the_visible_cases_fails_the_hidden_ones(graded):
    lang, root = graded
    code, out, _ = lab("check", "4", root / "bea" / "masks.py", "--lang", "en")
    assert code == 0 and "grade-only" not in out  # lab check: every case it shows passes
    rows = {r[0]: r for r in csv.reader(io.StringIO((root / "gradebook.csv").read_text()))}
    head = rows[text("labs", "grade.learner", lang)]
    assert head == [text("labs", "grade.learner", lang), "2 mean", "4 masks",
                    text("labs", "grade.score_total", lang)]
    assert rows["ana"] == ["ana", "1.00", "1.00", "2.00"]
    hidden = 4  # two shipped draws and the policy's seed 5 at both sizes
    total = len(get("masks").cases()) + hidden
    assert rows["bea"][2] == f"{(total - hidden) / total:.2f}"
    sheet = {(r[0], r[2]): r for r in csv.reader(io.StringIO((root / "sheet.csv").read_text()))}
    assert sheet["bea", "masks"][9:11] == ["0", str(hidden)]
    assert sheet["bea", "masks"][3] == text("labs", "grade.status.failed", lang)


def test_a_slow_call_fails_its_case_alone_and_the_rest_is_graded(graded):
    lang, root = graded
    mark = {(r[0], r[2]): r for r in csv.reader(io.StringIO((root / "sheet.csv").read_text()))}
    carl = mark["carl", "mean"]
    total = len(get("mean").cases()) + 2
    assert carl[3:6] == [text("labs", "grade.status.failed", lang), str(total - 1), str(total)]
    assert text("labs", "fail.time", lang, seconds="1") in carl[11]
    assert mark["carl", "masks"][3] == text("labs", "grade.status.passed", lang)


def test_the_html_sheet_names_each_learner_and_each_reason_in_its_language(graded):
    lang, root = graded
    page = (root / "sheet.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and f'<html lang="{lang}">' in page
    for who in ("ana", "bea", "carl"):
        assert f"<h3>{who}</h3>" in page and f"<tr><th>{who}</th>" in page
    assert html.escape(text("labs", "fail.time", lang, seconds="1")) in page
    assert html.escape(text("labs", "masks.case.grade_only", lang, part="causal_mask", size=31,
                            seed=5)) in page
    assert html.escape(text("labs", "grade.policy", lang, path=FILE, hidden=6)) in page
    other = {"en": "es", "es": "en"}[lang]
    assert html.escape(text("labs", "grade.summary", other)) not in page


def test_the_teachers_guide_lists_each_labs_minutes_sections_and_grade_only_cases():
    page = (Path(__file__).resolve().parents[1] / "docs" / "labs.md").read_text(encoding="utf-8")
    for ex in EXERCISES:
        h = ex.hidden
        hidden = (f"{len(h.seeds) * len(h.sizes)} draws at sizes {', '.join(map(str, h.sizes))}"
                  f" (a policy: up to {h.max_size})" if h else "–")
        chapter = text("labs", f"course.chapter.{ex.chapter}", "en")
        curriculum = text("labs", "course.curriculum." + (ex.curriculum or "none"), "en")
        assert (f"| {ex.number} | `{ex.name}` | {ex.minutes} | {chapter} | {curriculum} | "
                f"{hidden} |") in page, f"docs/labs.md: the teacher's table, exercise {ex.number}"
