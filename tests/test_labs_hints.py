"""Hints come in order: a nudge, then the method, then the near-solution, in both languages.

No hint before the last holds the code or the formula the exercise asks for: not a line of code
(nothing in backticks), and none of the exercise's key expressions listed below, which are its
solution's distinctive calls and the formulas of the quantities asked for. The last hint holds
every one of them, so the list is the near-solution's and not a guess.
"""

from __future__ import annotations

import pytest

from attnlab.i18n import LANGS, text
from attnlab.labs import EXERCISES

KEYS = {  # exercise -> what only its last hint may say
    "softmax": ("np.max(", "keepdims=True", "np.isfinite(", "np.where(total > 0"),
    "mean": ("np.tril(", ".sum(axis=1, keepdims=True)"),
    "attention": ("np.swapaxes(", "np.where(mask", "weights @ v"),
    "masks": ("np.arange(", "j <= i", "np.where(", ".astype(dtype)"),
    "heads": (".reshape(b, n, H, d_k)", ".transpose(0, 2, 1, 3)", "@ w_o.T"),
    "scale": ("(q * k).sum(", ".var()", "> 0.99).mean()"),
    "sinusoidal": ("10000.0 **", "[:, None]", "0::2", "1::2"),
    "rope": ("0::2", "1::2", "10000.0 **", "np.cos(angle)"),
    "backward": ("dP = dO", "dV = Pᵀ", "diag(p)", "(dp * p)", "dQ = dS", "dK = dSᵀ"),
    "cache": ("np.concatenate(",),
    "recurrence": ("1 − h_t²", "g W_h", "1 - h[t] ** 2", "@ w_h", "np.polyfit(", "np.exp(slope)"),
    "induction": ("3·n_vocab", "np.eye(", "20·√e"),
    "additive": ("np.tanh(", "[:, None, :]", "np.where(src_mask", "axis=-1", "@ h)"),
}


def hints(ex, lang: str) -> list[str]:
    return [text("labs", f"{ex.name}.hint{i}", lang) for i in range(1, ex.hints + 1)]


def test_every_exercise_lists_its_key_expressions_and_has_three_hints():
    assert set(KEYS) == {ex.name for ex in EXERCISES}
    assert {ex.name: ex.hints for ex in EXERCISES} == {ex.name: 3 for ex in EXERCISES}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.name)
def test_no_hint_before_the_last_holds_the_code_or_formula_asked_for(ex, lang):
    *early, last = hints(ex, lang)
    given = {f"hint {i}: {key}" for i, hint in enumerate(early, start=1) for key in KEYS[ex.name]
             if key in hint}
    code = {f"hint {i}: code" for i, hint in enumerate(early, start=1) if "`" in hint}
    assert not given | code
    assert [key for key in KEYS[ex.name] if key not in last] == []
