"""Exercises 11-12 and the texts of every exercise: the statements state the task and what is
checked, not a derivation the exercise asks for; the first hint is a nudge, never code; the
RNN's fitted rate is the gain of a linear recurrence; the hand-set induction model is drawn by
the explorer; and a learner's weights are run here, never in the learner's process."""

from __future__ import annotations

import numpy as np
import pytest
from lab_cli import lab
from labs_wrong import WRONG

from attnlab.i18n import LANGS, text
from attnlab.labs import EXERCISES, check, get
from attnlab.labs.checker import _detects, run_exercise
from attnlab.labs.exercises.induction import pattern
from attnlab.labs.exercises.induction.solution import induction_weights
from attnlab.labs.exercises.recurrence.measure import rate_of
from attnlab.labs.exercises.recurrence.solution import rnn_backward
from attnlab.labs.notebook import solution_file

WRONG_COURSE = {(name, key): fn for (name, key), fn in WRONG.items()
                if name in ("recurrence", "induction")}  # exercises 11-12

# what would hand over the derivation an exercise asks for, were it in its statement
DERIVATIONS = {
    "softmax": ["exp(-max)"],
    "mean": ["1/(i+1)"],
    "attention": ["4/16", "3·0.25"],
    "masks": ["n_key - n_query + i"],
    "heads": ["reshape", "transpose"],
    "sinusoidal": ["rotated in every pair", "girada en cada par"],
    "rope": ["leave the angle", "deja el ángulo"],
    "backward": ["rowsum", "Pᵀ dO", "diag(p)", "dSᵀ"],
    "recurrence": ["1 − h", "1 - h", "@ w_h", "g W_h"],
    "induction": ["np.eye", "k=1", "slot", "hueco", "gain", "ganancia"],
    "additive": ["[:, None", "np.where", "axis=0"],
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_no_statement_writes_out_the_derivation_its_exercise_asks_for(ex, lang):
    statement = text("labs", f"{ex.name}.statement", lang)
    assert [s for s in DERIVATIONS.get(ex.name, []) if s in statement] == []


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_the_first_hint_nudges_without_code_and_the_hints_grow_to_code(ex, lang):
    hints = [text("labs", f"{ex.name}.hint{i}", lang) for i in range(1, ex.hints + 1)]
    assert "`" not in hints[0] and "np." not in hints[0]
    assert any("`" in hint for hint in hints[1:])  # the last ones come near the solution


def test_every_course_wrong_answer_is_named_by_its_own_probe_of_all_exercises():
    for (name, key), fn in WRONG_COURSE.items():
        named = {m.key for ex in EXERCISES for m in ex.mistakes if _detects(m, fn)}
        assert named == {f"{name}.mistake.{key}"}, (name, key, named)


@pytest.mark.parametrize("lang", LANGS)
def test_a_course_mistake_is_printed_in_both_languages(lang):
    for (name, key), fn in WRONG_COURSE.items():
        result = run_exercise(get(name), fn, lang)
        assert text("labs", f"{name}.mistake.{key}", lang) in str(result)


def test_the_rate_of_a_linear_recurrence_is_its_gain_and_the_steps_are_t_against_one():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    for gain in (0.3, 0.9, 1.2):
        dh, rate, steps = rnn_backward(gain * q, rng.normal(size=(5, 2)),
                                                 np.zeros((12, 2)), rng.normal(size=5))
        assert rate == pytest.approx(gain, rel=1e-9) and rate_of(dh) == pytest.approx(rate)
        assert steps == (12, 1)
        norms = np.linalg.norm(dh[::-1], axis=1)
        assert np.allclose(norms[1:] / norms[:-1], gain)  # geometric: one factor per step back


def test_the_saturated_rnn_vanishes_faster_than_its_weights_alone_say():
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    x = rng.normal(size=(10, 3)) * 3.0  # large inputs: tanh saturates, 1 - h² is small
    _, rate, _ = rnn_backward(0.9 * q, rng.normal(size=(4, 3)), x, rng.normal(size=4))
    assert rate < 0.9


def test_the_hand_set_induction_model_is_drawn_by_the_explorer():
    import attnlab.explorer as ax

    ids = [0, 1, 2, 3, 0, 1, 2, 3]
    weights = pattern(induction_weights(4, 8), ids)
    assert weights.shape == (2, 1, 8, 8)
    assert weights[0, 0, 5].argmax() == 4 and weights[1, 0, 5].argmax() == 2
    assert np.allclose(weights.sum(-1), 1.0) and np.allclose(np.triu(weights, 1), 0.0)
    view = ax.show(weights=weights, tokens=[str(i) for i in ids])
    assert "<iframe" in view._repr_html_()


def test_the_learners_weights_are_checked_from_a_child_in_both_languages():
    assert check(12, induction_weights, lang="es").headline.startswith(
        "ejercicio 12 (induction): los 10 casos pasan")
    assert check(11, rnn_backward, lang="en").passed


def test_weights_that_cannot_make_a_model_fail_in_one_line():
    def missing(n_vocab, n_ctx):
        w = induction_weights(n_vocab, n_ctx)
        del w["U"]
        return w

    def misshapen(n_vocab, n_ctx):
        w = induction_weights(n_vocab, n_ctx)
        w["O2"] = w["O2"][:, :-1]
        return w

    reasons = {fn.__name__: {line.reason for line in run_exercise(get(12), fn, "en").lines
                             if not line.passed}
               for fn in (missing, misshapen)}
    assert reasons["missing"] == {"missing weights: U"}
    assert reasons["misshapen"] == {"O2 has shape (10, 45), expected (10, 46)",
                                    "O2 has shape (4, 19), expected (4, 20)",
                                    "O2 has shape (16, 71), expected (16, 72)"}


def test_check_9_fails_a_dv_wrong_only_beyond_8_keys(tmp_path):
    """Exercise 9's cases reach the 32 keys lab train calls the backward with, so a dv wrong
    only on long rows (here: scaled past 8 keys) fails ``lab check 9``, on that case alone."""
    source = solution_file(get("backward")).replace(
        "    return dq, dk, dv",
        "    if k.shape[0] > 8:\n        dv = 1.5 * dv\n    return dq, dk, dv")
    assert "1.5 * dv" in source
    path = tmp_path / "backward.py"
    path.write_text(source)
    code, out, _ = lab("check", "9", path, "--lang", "en")
    failed = [line for line in out.splitlines() if line.lstrip().startswith("FAIL")]
    assert code == 1 and len(failed) == 1, out
    assert "dv for (i, j, d_k, d_v) = (32, 32, 16, 16)" in failed[0]
