"""`attnlab lab`: list, start, check (exit 0 / 1 / 2, one line for a file that cannot be used),
hint and solution, in English and Spanish; the language a stub was started in travels with it;
the command's bounds (--time-limit, a folder that cannot be written, a closed pipe) are one
line each."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from lab_cli import without_note

from attnlab.cli.main import main
from attnlab.i18n import text

MASK_BODY = ("    i = np.arange(n_query)[:, None] + (n_key - n_query)\n"
             "    j = np.arange(n_key)[None, :]\n"
             "    return np.where(j {op} i, 0.0, -np.inf).astype(dtype)\n")


# Each test starts from a machine that states no language: the locale is C.UTF-8.
pytestmark = pytest.mark.usefixtures("no_chosen_language")


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
    err = without_note(err)
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


def test_a_stub_started_in_spanish_answers_in_spanish_with_no_flag(tmp_path, capsys, monkeypatch):
    code, _, _ = lab(capsys, "start", "1", str(tmp_path), "--lang", "es")
    stub = tmp_path / "softmax.py"
    assert code == 0 and stub.read_text().startswith("# attnlab-lang: es\n")
    spanish = text("labs", "result.not_implemented", "es", number=1, name="softmax",
                   function="softmax")
    code, out, _ = lab(capsys, "check", "1", str(stub))  # LANG=C.UTF-8, no flag
    assert code == 1 and out.startswith(spanish), out
    monkeypatch.setenv("ATTNLAB_LANG", "en")  # the file's language comes before the default
    assert lab(capsys, "check", "1", str(stub))[1].startswith(spanish)
    assert lab(capsys, "check", "1", str(stub), "--lang", "en")[1].startswith(
        text("labs", "result.not_implemented", "en", number=1, name="softmax",
             function="softmax"))  # --lang before everything
    monkeypatch.delenv("ATTNLAB_LANG")
    monkeypatch.chdir(tmp_path)  # where the stub tells the learner to work
    assert lab(capsys, "hint", "1")[1].startswith("pista 1 de 3: ")
    assert lab(capsys, "hint", "1", "--lang", "en")[1].startswith("hint 1 of 3: ")
    out = lab(capsys, "solution", "softmax")[1]
    assert "# todo exponente <= 0: nada desborda" in out and "overflows" not in out
    monkeypatch.chdir(tmp_path.parent)  # the stub one folder down: its language
    assert lab(capsys, "hint", "1")[1].startswith("pista 1 de 3: ")
    away = tmp_path.parent / "elsewhere"
    away.mkdir()
    monkeypatch.chdir(away)  # no stub here or below: ATTNLAB_LANG, then the locale
    assert lab(capsys, "hint", "1")[1].startswith("hint 1 of 3: ")
    monkeypatch.setenv("ATTNLAB_LANG", "es")
    assert lab(capsys, "hint", "1")[1].startswith("pista 1 de 3: ")


def test_the_marker_is_read_from_the_leading_comments_only(tmp_path):
    from attnlab.labs.notebook import file_lang

    cases = {"# attnlab-lang: es\nx = 1\n": "es",
             "#!/usr/bin/env python\n# attnlab-lang: en\n": "en",
             "x = 1\n# attnlab-lang: es\n": None, "# attnlab-lang: fr\n": None, "": None}
    for index, (source, want) in enumerate(cases.items()):
        path = tmp_path / f"f{index}.py"
        path.write_text(source)
        assert file_lang(path) == want, source
    assert file_lang(tmp_path / "absent.py") is None and file_lang(tmp_path) is None


def test_the_spanish_solution_translates_every_comment_and_changes_nothing_else():
    from attnlab.labs import EXERCISES
    from attnlab.labs.notebook import comments, solution_file, solution_source

    for ex in EXERCISES:
        english = [c for _, _, c in comments(solution_source(ex))]
        assert text("labs", f"{ex.name}.solution_comments", "en").split("\n") == english, \
            f"{ex.name}: the catalogue's comments differ from its solution.py; update both"
        spanish = solution_file(ex, "es")
        strip = [line.split("#")[0] for line in solution_file(ex, "en").splitlines()]
        assert [line.split("#")[0] for line in spanish.splitlines()] == strip
        compile(spanish, ex.name, "exec")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "-5", "0", "0.5", "601", "abc"])
def test_a_time_limit_outside_1_to_600_seconds_is_one_line_exit_2(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as done:
        main(["lab", "check", "1", str(tmp_path / "softmax.py"), f"--time-limit={value}"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1, err
    assert "--time-limit" in err and "from 1 to 600, got" in err, err


def test_the_time_limit_and_the_checkers_limits_are_stated_in_the_help(capsys):
    from attnlab.cli.lab import DEFAULT_TIME_LIMIT, LIMITS
    from attnlab.labs import sandbox

    assert DEFAULT_TIME_LIMIT == sandbox.TIME_LIMIT
    assert LIMITS == {"memory": sandbox.MEMORY_LIMIT, "processes": sandbox.PROCESS_LIMIT,
                      "file": sandbox.FILE_LIMIT}, "the help states other limits than are set"
    with pytest.raises(SystemExit):
        main(["lab", "check", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"1 to 600 (default {sandbox.TIME_LIMIT:g})" in out
    assert "2 GiB of memory, files up to 64 MiB (16 processes without bubblewrap" in out


def test_start_onto_a_file_or_a_folder_that_cannot_be_written_is_one_line(tmp_path, capsys,
                                                                          monkeypatch):
    a_file = tmp_path / "A_FILE"
    a_file.write_text("")
    for folder in (a_file, a_file / "sub"):
        code, out, err = lab(capsys, "start", "1", str(folder))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "is a file, not a folder" in err
    import tempfile

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)  # as a read-only folder answers
    code, out, err = lab(capsys, "start", "1", str(tmp_path / "ro"), "--lang", "es")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert text("labs", "cli.cannot_write", "es", folder=tmp_path / "ro",
                reason="permiso denegado") in err  # the system's reason said in Spanish too
    assert list((tmp_path / "ro").iterdir()) == []  # neither file half-written


def test_output_into_a_closed_pipe_ends_quietly():
    """`attnlab lab list | head -2`: the reader stops reading; no error, exit 0 (or 141)."""
    env = {**os.environ, "LANG": "C.UTF-8"}
    env.pop("ATTNLAB_LANG", None)
    read, write = os.pipe()
    os.close(read)  # the reader has gone before attnlab writes a byte
    try:
        done = subprocess.run([sys.executable, "-m", "attnlab.cli.main", "lab", "list"],
                              stdout=write, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=60)
    finally:
        os.close(write)
    assert done.returncode in (0, 141) and done.stderr == "", done.stderr


def test_the_help_of_lab_speaks_spanish_when_the_language_is_spanish(capsys, monkeypatch):
    monkeypatch.setenv("ATTNLAB_LANG", "es")
    for argv, key in ((["lab", "--help"], "description"), (["lab", "check", "--help"], "file"),
                      (["lab", "start", "--help"], "lang_start")):
        with pytest.raises(SystemExit) as done:
            main(argv)
        out = " ".join(capsys.readouterr().out.split())
        assert done.value.code == 0 and out.startswith("uso: attnlab lab")
        assert " ".join(text("labs", f"cli.help.{key}", "es").split()) in out
        for english in ("usage:", "positional arguments", "options:", "show this help"):
            assert english not in out, (argv, english)
    with pytest.raises(SystemExit):
        main(["lab", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for action in ("list", "start", "check", "hint", "solution"):
        assert f"{action} {text('labs', f'cli.help.{action}', 'es')}" in out
