"""`attnlab lab grade FOLDER`: a class of ten learners over three exercises (seven right, three
wrong in different ways: a named mistake, a file that does not import, an endless loop) gives a
sheet whose rows, counts, common mistakes and CSV say so, in English and Spanish; a learner's
folder name is data (escaped in Markdown, no formula in CSV); bad input is one line, exit 2."""

from __future__ import annotations

import csv

import pytest
from lab_cli import lab

from attnlab.cli.main import main
from attnlab.i18n import text
from attnlab.labs import boundary, get
from attnlab.labs.grade import Mark, Sheet, csv_text, markdown
from attnlab.labs.notebook import solution_file

EXERCISES = ("softmax", "mean", "masks")
RIGHT = ("ana", "bea", "carl", "dora", "eli", "fede", "=HYPERLINK(1)|*x*")
WRONG = {  # learner -> (exercise, file text)
    "hana": ("masks", solution_file(get("masks")).replace("j <= i", "j < i")),  # a named mistake
    "ivan": ("softmax", "import numpy_not_here\n"),  # does not import
    "jon": ("mean", "def averaging_matrix(n):\n    while True:\n        pass\n"),  # never ends
}
TRUST = () if boundary.available() else ("--trust",)  # where bubblewrap does not work
TIME_LIMIT = "3"  # seconds: the endless loop ends there; a right file takes a fraction of it


pytestmark = pytest.mark.usefixtures("no_chosen_language")


def make_class(root, learners, wrong):
    for who in (*learners, *wrong):
        folder = root / who
        folder.mkdir(parents=True)
        for name in EXERCISES:
            folder.joinpath(f"{name}.py").write_text(solution_file(get(name)))
        if who in wrong:
            name, source = wrong[who]
            folder.joinpath(f"{name}.py").write_text(source)
    (root / ".git").mkdir()  # not a learner
    (root / "README.txt").write_text("not a learner either\n")
    return root


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = make_class(tmp_path_factory.mktemp("class"), RIGHT, WRONG)
    out = root.parent / "sheet"
    code, stdout, stderr = lab("grade", str(root), "--out", str(out), "--time-limit", TIME_LIMIT,
                               "--lang", "en", *TRUST)
    return code, stdout, stderr, out


def test_grading_a_class_exits_0_with_one_summary_line_and_progress_per_learner(graded):
    code, stdout, stderr, out = graded
    assert code == 0
    assert stdout.splitlines() == [text(
        "labs", "grade.done", "en", learners=10, exercises=3, passed=27, checked=30,
        files="sheet.md, sheet.csv, sheet.html, gradebook.csv", folder=out)]
    lines = stderr.splitlines()
    assert len(lines) == 10 and lines[0].startswith("[1/10] =HYPERLINK(1)|*x*: 3 of 3")
    assert "[8/10] hana: 2 of 3 files passed" in lines


def test_the_sheet_has_a_row_per_learner_and_says_who_is_wrong_how(graded):
    sheet = (graded[3] / "sheet.md").read_text()
    marks = sheet.split("## Learners and exercises")[1].split("##")[0]
    rows = {line.split(" | ")[0][2:]: line for line in marks.splitlines()
            if line.startswith("| ")}
    # each exercise ships two grade-only cases: 11 + 2, 9 + 2, 10 + 2
    assert rows["ana"] == "| ana | passed 13/13 | passed 11/11 | passed 12/12 |"
    assert "failed 2/12: `diagonal_hidden`" in rows["hana"]
    assert rows["ivan"].split(" | ")[1] == "unusable"
    assert rows["jon"].split(" | ")[2] == "time limit"
    assert r"=HYPERLINK(1)\|\*x\*" in rows  # the folder name is text, not a column or emphasis
    assert len(rows) == 1 + 10 and "README" not in sheet  # the header and ten learners
    assert "| 1 softmax | 9 | 0 | 0 | 0 | 1 | 0 |" in sheet
    assert "| 2 mean | 9 | 0 | 0 | 1 | 0 | 0 |" in sheet
    assert "| 4 masks | 9 | 1 | 0 | 0 | 0 | 0 |" in sheet
    common = sheet.split("## The most common named mistakes")[1].split("##")[0]
    assert [line for line in common.splitlines() if "`" in line] == [
        "| 4 masks: `diagonal_hidden` | 1 | the mask is off by one: the diagonal is hidden, so a "
        r"token cannot see itself (use j \<= i, not j \< i) | hana |"]
    notes = sheet.split("## Files that could not be checked")[1]
    assert "ivan, 1 softmax: ivan/softmax.py cannot be imported: ModuleNotFoundError" in notes
    assert "jon, 2 mean: your code ran past the time limit of 3 s" in notes


def test_the_csv_has_a_row_per_learner_and_exercise_and_no_formula(graded):
    rows = list(csv.reader((graded[3] / "sheet.csv").open(newline="")))
    assert rows[0] == ["learner", "number", "exercise", "status", "cases passed", "cases",
                       "mistakes", "what they mean", "note", "grade-only cases passed",
                       "grade-only cases", "failed cases and why"]
    assert len(rows) == 1 + 30
    by = {(r[0], r[2]): r for r in rows[1:]}
    assert by["hana", "masks"][3:7] == ["failed", "2", "12", "diagonal_hidden"]
    assert by["hana", "masks"][9:11] == ["0", "2"]  # the grade-only cases fail too
    assert by["hana", "masks"][7] == text("labs", "masks.mistake.diagonal_hidden", "en")
    assert by["jon", "mean"][3] == "time limit" and by["ivan", "softmax"][3] == "unusable"
    assert ("'=HYPERLINK(1)|*x*", "softmax") in by  # a spreadsheet shows it, never runs it
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r)


def test_a_sheet_in_spanish_from_the_same_catalogue(tmp_path):
    root = make_class(tmp_path / "clase", ("ana",), {"hana": WRONG["hana"]})
    code, stdout, _ = lab("grade", str(root), "--lang", "es", *TRUST)
    assert code == 0 and stdout.startswith("corregidas 2 personas en 3 ejercicios: aprueban 5")
    sheet = (root / "sheet.md").read_text()
    assert sheet.startswith(f"# {text('labs', 'grade.title', 'es')}")
    assert "| ana | pasa 13/13 | pasa 11/11 | pasa 12/12 |" in sheet
    assert text("labs", "masks.mistake.diagonal_hidden", "es").split(":")[0] in sheet
    assert (root / "sheet.csv").read_text().startswith("persona,número,ejercicio,estado")


def test_the_most_common_mistakes_come_first_with_who_made_them():
    masks, softmax = get("masks"), get("softmax")
    marks = {who: {"softmax": Mark("failed", 3, 11, keys_s), "masks": Mark("failed", 1, 10, keys_m)}
             for who, keys_s, keys_m in [
                 ("a", ("softmax.mistake.no_max",), ("masks.mistake.inverted",)),
                 ("b", (), ("masks.mistake.inverted",)),
                 ("c", ("softmax.mistake.no_max",), ("masks.mistake.inverted",))]}
    sheet = Sheet("k", ("a", "b", "c"), (softmax, masks), marks, "en", 20.0)
    assert [(ex.name, key, who) for ex, key, _, who in sheet.common()] == [
        ("masks", "masks.mistake.inverted", ["a", "b", "c"]),
        ("softmax", "softmax.mistake.no_max", ["a", "c"])]
    table = markdown(sheet).split("## The most common named mistakes")[1]
    assert table.index("`inverted` | 3 |") < table.index("`no_max` | 2 |")
    assert csv_text(sheet).count("\n") == 1 + 6


@pytest.mark.parametrize("case", ["missing", "a_file", "no_learners", "out_not_writable"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    folder, extra = tmp_path / "class", []
    if case == "a_file":
        folder.write_text("x")
    elif case == "no_learners":
        folder.mkdir()
        (folder / "masks.py").write_text("x = 1\n")  # a file, not a learner's folder
    elif case == "out_not_writable":
        make_class(folder, ("ana",), {})
        (tmp_path / "blocked").write_text("a file where a folder should be")
        extra = ["--out", str(tmp_path / "blocked" / "sheet")]
    code, stdout, stderr = lab("grade", str(folder), *extra, *TRUST)
    assert code == 2 and stdout == "" and len(stderr.strip().splitlines()) == 1
    assert str(folder if case != "out_not_writable" else tmp_path / "blocked") in stderr
    assert not list(tmp_path.rglob("sheet.*"))


@pytest.mark.parametrize("option", [["--jobs", "0"], ["--jobs", "x"], ["--time-limit", "nan"]])
def test_bad_options_are_refused_before_any_check(tmp_path, option, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["lab", "grade", str(tmp_path), *option])
    assert stop.value.code == 2 and option[0] in capsys.readouterr().err
