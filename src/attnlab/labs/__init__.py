"""Labs a learner does: exercises whose checker says what is wrong, in English and Spanish.

The exercises come in the curriculum's order (softmax, the mean as attention, attention,
masks, multi-head attention), then the chapter's (√d_k, sinusoids, RoPE, the backward, a KV
cache), then the curriculum's two exit questions (backpropagation through time in an RNN
against attention's one step; an induction head set by hand). In a notebook::

    from attnlab.labs import check
    check("masks", causal_mask)             # or check(4, causal_mask, lang="es")

prints each case (passed or failed, why, the smallest failing input) and any mistake it
recognises; ``.passed`` is True when every case passed. On the command line: ``attnlab lab``.

Left out on purpose, to keep each exercise one idea a learner can finish: training, flash /
paged / sparse attention (ways to compute the same weights faster), and cross-attention (the
same equation with Q from one sequence and K, V from another).
"""

from __future__ import annotations

from pathlib import Path

from attnlab.i18n import resolve_lang, text
from attnlab.labs.checker import Exercise, Fn, Result
from attnlab.labs.exercises import load
from attnlab.labs.sandbox import TIME_LIMIT, isolated

EXERCISES: tuple[Exercise, ...] = load()  # in order; each from its folder in labs/exercises/


def get(name_or_number: str | int, lang: str | None = None) -> Exercise:
    """The exercise of that number (1, "4") or name ("masks"); a ``KeyError`` names the choices."""
    key = str(name_or_number).strip().lower()
    for ex in EXERCISES:
        if key in (str(ex.number), ex.name, ex.function):
            return ex
    choices = ", ".join(f"{ex.number} {ex.name}" for ex in EXERCISES)
    raise KeyError(text("labs", "cli.unknown", lang, name=name_or_number, choices=choices))


def check(name_or_number: str | int, fn: Fn | str | Path, lang: str | None = None,
          time_limit: float = TIME_LIMIT) -> Result:
    """Check ``fn`` (the learner's function, or a file that defines it) against an exercise.

    Runs in a child process with ``time_limit`` seconds, so an endless loop or a crash ends
    as one line. ``lang`` is "en" or "es" (default: the locale's, then English).
    """
    lang = resolve_lang(lang)
    return isolated(get(name_or_number, lang), fn, lang, time_limit)


__all__ = ["EXERCISES", "Exercise", "Result", "check", "get"]
