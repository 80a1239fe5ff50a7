"""The labs' checkers: every solution passes, every stub is "not implemented yet", and each
wrong implementation of the mutation table fails with its own mistake's message and no other's."""

from __future__ import annotations

import numpy as np
import pytest
from labs_wrong import WRONG

from attnlab.i18n import catalogue, text
from attnlab.labs import EXERCISES, check, get
from attnlab.labs.checker import run_exercise
from attnlab.labs.notebook import solution_file, stub_file


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_the_reference_solution_passes_every_case(ex):
    result = run_exercise(ex, written(solution_file(ex), ex.function), "en")
    assert result.passed, str(result)
    assert result.mistakes == () and all(line.passed for line in result.lines)
    assert len(result.lines) >= 5


def written(source: str, name: str):
    """The function ``name`` of a learner's file holding ``source``."""
    namespace: dict = {}
    exec(compile(source, "<learner>", "exec"), namespace)  # noqa: S102 - our own stub text
    return namespace[name]


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_a_stub_is_not_implemented_yet(ex, lang):
    result = run_exercise(ex, written(stub_file(ex, lang), ex.function), lang)
    assert result.status == "not implemented" and not result.passed
    assert text("labs", "fail.not_implemented", lang) in str(result)


def test_the_mutation_table_each_wrong_function_gets_its_own_message():
    assert len(WRONG) >= 25
    declared = {(ex.name, m.key.rsplit(".", 1)[1]) for ex in EXERCISES for m in ex.mistakes}
    assert set(WRONG) == declared  # one wrong implementation per recognised mistake
    caught = {}
    for (name, key), fn in WRONG.items():
        result = run_exercise(get(name), fn, "en")
        caught[name, key] = (result.passed, result.mistakes)
    wrong = {k: v for k, v in caught.items() if v != (False, (f"{k[0]}.mistake.{k[1]}",))}
    assert not wrong, f"{len(caught) - len(wrong)} of {len(caught)} caught alone; not: {wrong}"


def test_a_recognised_mistake_is_printed_with_its_message_in_both_languages():
    ex = get("masks")
    for lang in ("en", "es"):
        result = run_exercise(ex, WRONG["masks", "diagonal_hidden"], lang)
        printed = str(result)
        assert text("labs", "masks.mistake.diagonal_hidden", lang) in printed
        assert text("labs", "result.smallest", lang, shown="").strip() in printed
        for mark in ("result.fail", "result.ok"):
            assert f"  {text('labs', mark, lang)}" in printed


def test_the_smallest_failing_input_is_named():
    result = run_exercise(get("softmax"), WRONG["softmax", "no_max"], "en")
    assert result.smallest == "smallest failing input: softmax(np.array([1000.0, 1000.0]))"
    got, want, _ = result.plot
    assert np.isnan(got).any() and np.allclose(want, 0.5)


def test_a_function_that_raises_fails_its_cases_in_one_line():
    def broken(x, axis=-1):
        return np.exp(x) / undefined_name  # noqa: F821 - the learner's typo

    result = run_exercise(get("softmax"), broken, "en")
    reasons = {line.reason for line in result.lines if not line.passed}
    assert reasons == {"your function raised NameError: name 'undefined_name' is not defined"}


def test_check_runs_a_notebook_function_in_a_child_process():
    def spins(n_query, n_key, dtype=np.float64):
        while True:
            pass

    result = check("masks", spins, lang="en", time_limit=1.0)
    assert result.status == "unusable" and "time limit of 1 s" in result.headline
    good = check(4, get(4).solution, lang="es")
    assert good.passed and good.headline.startswith("ejercicio 4 (masks): los 10 casos pasan")


def test_every_text_an_exercise_uses_is_in_the_catalogue():
    entries = catalogue("labs")
    for ex in EXERCISES:
        keys = [f"{ex.name}.title", f"{ex.name}.statement"]
        keys += [f"{ex.name}.hint{i}" for i in range(1, ex.hints + 1)]
        keys += [f"{ex.name}.case.{c.title}" for c in ex.cases()]
        keys += [m.key for m in ex.mistakes]
        assert not [k for k in keys if k not in entries], ex.name
        assert f"{ex.name}.hint{ex.hints + 1}" not in entries


def test_the_exercises_come_in_order_with_unique_names():
    assert [ex.number for ex in EXERCISES] == list(range(1, len(EXERCISES) + 1))
    assert len({ex.name for ex in EXERCISES}) == len(EXERCISES)
    assert [ex.name for ex in EXERCISES[:5]] == ["softmax", "mean", "attention", "masks", "heads"]
    assert get("4") is get("masks") is get("causal_mask")
    with pytest.raises(KeyError, match="choose one of: 1 softmax"):
        get("flash")


def test_docs_list_every_mistake_recognised():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "labs.md").read_text(encoding="utf-8")
    for ex in EXERCISES:
        for m in ex.mistakes:
            assert f"- `{m.key.rsplit('.', 1)[1]}`: {text('labs', m.key, 'en')}" in page, m.key


def test_a_function_that_changes_its_input_in_place_cannot_change_the_cases():
    def in_place(x, axis=-1):
        x -= np.max(x, axis=axis, keepdims=True)  # the learner's own array, changed
        x[np.isnan(x)] = -np.inf
        np.exp(x, out=x)
        total = x.sum(axis=axis, keepdims=True)
        x /= np.where(total > 0, total, 1.0)
        return x

    assert run_exercise(get("softmax"), in_place, "en").passed


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_no_probe_recognises_a_mistake_in_the_solution(ex):
    assert [m.key for m in ex.mistakes if m.detect(ex.solution)] == []


@pytest.mark.parametrize("lang", ["en", "es"])
def test_an_array_of_no_numbers_and_a_list_are_said_as_what_they_are(lang):
    """Once "expected an array, got a ndarray", and a list named as a dtype mistake."""

    def ragged(x, axis=-1):
        return np.array([np.zeros(2), np.zeros(3)], dtype=object)

    result = check("softmax", ragged, lang=lang)
    assert text("labs", "fail.not_numbers", lang) in str(result)
    assert "got a ndarray" not in str(result)
    sol = get("masks").solution
    listed = run_exercise(get("masks"), lambda *a: sol(*a).tolist(), lang)
    assert listed.mistakes == ("masks.mistake.list",)
    assert text("labs", "fail.not_ndarray", lang, kind="list") in str(listed)
