"""The mistake probes of exercise 12 (induction): each compares the learner's output on a
targeted input with what one common mistake gives."""

from __future__ import annotations

from typing import Any

from attnlab.labs.checker import Fn, Mistake
from attnlab.labs.exercises.induction.measure import GOOD_SCORE, measures, probe, weights_of


def _seen(fn: Fn) -> dict[str, Any]:
    return measures(weights_of(fn(10, 16), 10, 16), probe(10, 16, 0))


MISTAKES = (
    Mistake("induction.mistake.no_shift", lambda fn: _seen(fn)["self1"] >= 0.5),
    Mistake("induction.mistake.duplicate", lambda fn: (
        _seen(fn)["previous1"] >= 0.5 and _seen(fn)["duplicate2"] >= 0.3)),
    Mistake("induction.mistake.soft", lambda fn: (
        min(_seen(fn)["argmax1"], _seen(fn)["argmax2"]) >= 0.9
        and min(_seen(fn)["previous1"], _seen(fn)["induction2"]) < GOOD_SCORE)),
    Mistake("induction.mistake.swapped", lambda fn: (
        _seen(fn)["previous2"] >= 0.5 and _seen(fn)["previous1"] < 0.5)),
    Mistake("induction.mistake.copies_current", lambda fn: (
        min(_seen(fn)["previous1"], _seen(fn)["induction2"]) >= GOOD_SCORE
        and _seen(fn)["echo"] >= 0.5)),
)
