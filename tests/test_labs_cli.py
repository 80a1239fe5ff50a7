"""`attnlab lab`: list, start, check (exit 0 / 1 / 2, one line for a file that cannot be used),
hint and solution, in English and Spanish."""

from __future__ import annotations

import json

import pytest

from attnlab.cli.main import main
from attnlab.i18n import text

MASK_BODY = ("    i = np.arange(n_query)[:, None] + (n_key - n_query)\n"
             "    j = np.arange(n_key)[None, :]\n"
             "    return np.where(j {op} i, 0.0, -np.inf).astype(dtype)\n")


def lab(capsys, *argv):
    code = main(["lab", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def started(tmp_path, capsys):
    code, out, _ = lab(capsys, "start", "4", str(tmp_path))
    assert code == 0 and "masks.py" in out
    return tmp_path / "masks.py"


def fill(path, body):
    path.write_text(path.read_text().replace("    raise NotImplementedError\n", body))


def test_list_names_every_exercise_in_both_languages(capsys):
    code, out, _ = lab(capsys, "list")
    assert code == 0 and "  4  masks" in out and " 10  cache" in out
    code, out, _ = lab(capsys, "list", "--lang", "es")
    assert text("labs", "heads.title", "es") in out


@pytest.mark.parametrize("lang", ["en", "es"])
def test_check_a_stub_a_wrong_mask_and_the_solution(started, capsys, lang):
    code, out, _ = lab(capsys, "check", "4", str(started), "--lang", lang)
    assert code == 1 and text("labs", "result.not_implemented", lang, number=4, name="masks",
                              function="causal_mask") in out
    fill(started, MASK_BODY.format(op="<"))
    code, out, _ = lab(capsys, "check", "4", str(started), "--lang", lang)
    assert code == 1 and text("labs", "masks.mistake.diagonal_hidden", lang) in out
    assert text("labs", "masks.mistake.next_visible", lang) not in out
    started.write_text(started.read_text().replace("j < i", "j <= i"))
    code, out, _ = lab(capsys, "check", "4", str(started), "--lang", lang)
    assert code == 0 and out.startswith(text("labs", "result.passed", lang, number=4,
                                             name="masks", cases=10))


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", ["syntax", "loop", "missing", "crash", "no_file"])
def test_a_file_that_cannot_be_used_is_one_line_and_exit_2(started, capsys, case, lang):
    if case == "syntax":
        fill(started, "    return np.where(j <= i 0.0, -np.inf)\n")
        line = started.read_text().splitlines().index("    return np.where(j <= i 0.0, -np.inf)")
        want = text("labs", "unusable.syntax", lang, path=started, line=line + 1, message="")[:-2]
    elif case == "loop":
        fill(started, "    while True:\n        pass\n")
        want = text("labs", "unusable.time", lang, seconds="1")
    elif case == "missing":
        started.write_text("import numpy as np\n\ndef causal(n):\n    return n\n")
        want = text("labs", "unusable.no_function", lang, path=started, function="causal_mask")
    elif case == "crash":
        started.write_text("import os\nos._exit(3)\n")
        want = text("labs", "unusable.crash", lang, code=3)
    else:
        started = started.with_name("absent.py")
        want = text("labs", "unusable.no_file", lang, path=started)
    code, out, err = lab(capsys, "check", "4", str(started), "--lang", lang, "--time-limit", "1")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and want in err, err


def test_start_writes_a_notebook_and_refuses_to_overwrite(started, capsys):
    nb = json.loads((started.parent / "04_masks.ipynb").read_text())
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] for c in code_cells)
    assert any("def causal_mask(" in "".join(c["source"]) for c in code_cells)
    code, _, err = lab(capsys, "start", "4", str(started.parent))
    assert code == 2 and "exists already" in err


def test_hint_solution_and_unknown_exercise(capsys, tmp_path):
    code, out, _ = lab(capsys, "hint", "masks", "--lang", "es")
    assert code == 0 and out.startswith("pista 1 de 3: ")
    code, _, err = lab(capsys, "hint", "4", "7")
    assert code == 2 and "hints 1 to 3, not 7" in err
    code, out, _ = lab(capsys, "solution", "4")
    assert code == 0 and out.startswith("import numpy as np") and "def causal_mask(" in out
    (tmp_path / "masks.py").write_text(out)
    assert lab(capsys, "check", "4", str(tmp_path / "masks.py"))[0] == 0
    code, _, err = lab(capsys, "check", "flash", str(tmp_path / "masks.py"))
    assert code == 2 and "choose one of: 1 softmax" in err


def test_the_language_comes_from_the_locale_when_not_given(capsys, monkeypatch):
    for var in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert lab(capsys, "hint", "4")[1].startswith("pista 1 de 3: ")
    assert lab(capsys, "hint", "4", "--lang", "en")[1].startswith("hint 1 of 3: ")
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    assert lab(capsys, "hint", "4")[1].startswith("hint 1 of 3: ")


def test_check_takes_a_file_in_a_notebook_too(tmp_path, capsys):
    from attnlab.labs import check

    path = tmp_path / "softmax.py"
    path.write_text(lab(capsys, "solution", "1")[1])
    assert check("softmax", path, lang="en").passed
    assert check(1, str(tmp_path / "absent.py"), lang="es").status == "unusable"
