"""``lab hint`` follows the exercise's language from where the Spanish front page's commands are
run: the folder above the one ``lab start 1 ejercicios --lang es`` wrote into."""

from __future__ import annotations

from lab_cli import lab

from attnlab.i18n import text


def test_hint_from_the_folder_above_a_spanish_start(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNLAB_LANG", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.chdir(tmp_path)
    assert lab("start", 1, "ejercicios", "--lang", "es")[0] == 0
    code, out, _ = lab("hint", 1, 1)
    assert code == 0 and text("labs", "softmax.hint1", "es") in out
    assert text("labs", "softmax.hint1", "en") not in out


def test_stubs_below_in_two_languages_leave_the_default(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNLAB_LANG", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.chdir(tmp_path)
    assert lab("start", 1, "ejercicios", "--lang", "es")[0] == 0
    assert lab("start", 1, "exercises", "--lang", "en")[0] == 0
    code, out, _ = lab("hint", 1, 1)
    assert code == 0 and text("labs", "softmax.hint1", "en") in out
    assert lab("hint", 1, 1, "--lang", "es")[1].count(text("labs", "softmax.hint1", "es")) == 1
