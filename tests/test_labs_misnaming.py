"""No probe names a mistake that a function does not make.

Every mistake probe of every exercise runs, by itself (not only after a failed case, as the
checker runs it), against every wrong function of the mutation table and of a second set of
wrong answers written apart from the probes (``labs_wrong_independent.py``). A table entry may
be named by its own mistake only; an independent answer by the mistakes listed beside it,
each with the reason its message is true of that answer. ``test_labs.py`` checks the other
half: that each table entry is recognised, through the checker, by its own key.
"""

from __future__ import annotations

import pytest
from labs_wrong import WRONG
from labs_wrong_independent import INDEPENDENT

from attnlab.labs import EXERCISES, get
from attnlab.labs.checker import _detects, run_exercise


def named(fn) -> set[str]:
    """Every probe of every exercise that recognises its mistake in ``fn``, as "exercise.key"."""
    return {m.key.replace(".mistake.", ".") for ex in EXERCISES for m in ex.mistakes
            if _detects(m, fn)}


def test_no_probe_names_another_mistake_of_the_mutation_table():
    misnamed = {}
    for (name, key), fn in WRONG.items():
        extra = named(fn) - {f"{name}.{key}"}
        if extra:
            misnamed[name, key] = sorted(extra)
    assert not misnamed, misnamed


@pytest.mark.parametrize("entry", sorted(INDEPENDENT), ids=lambda e: f"{e[0]}-{e[1]}")
def test_no_probe_names_a_mistake_an_independent_wrong_answer_does_not_make(entry):
    name, _ = entry
    fn, allowed = INDEPENDENT[entry]
    assert named(fn) <= {f"{name}.{key}" for key in allowed}


@pytest.mark.parametrize("entry", sorted(INDEPENDENT), ids=lambda e: f"{e[0]}-{e[1]}")
def test_an_independent_wrong_answer_fails_and_names_only_its_own_mistakes(entry):
    name, _ = entry
    fn, allowed = INDEPENDENT[entry]
    result = run_exercise(get(name), fn, "en")
    assert result.status == "failed", str(result)
    assert set(result.mistakes) == {f"{name}.mistake.{key}" for key in allowed}, str(result)


def test_the_independent_set_is_apart_from_the_table_and_covers_every_exercise():
    assert len(INDEPENDENT) >= 15
    assert {name for name, _ in INDEPENDENT} >= {ex.name for ex in EXERCISES if ex.number <= 10}
    table = {fn.__name__ for fn in WRONG.values()}
    assert not table & {fn.__name__ for fn, _ in INDEPENDENT.values()}
    declared = {(ex.name, m.key.rsplit(".", 1)[1]) for ex in EXERCISES for m in ex.mistakes}
    assert all((name, key) in declared for (name, _), (_, keys) in INDEPENDENT.items()
               for key in keys)


def test_the_two_masks_once_misnamed_are_named_for_what_they_are():
    """A 0/1 matrix times -inf was told "-1e9 overflows in float16"; np.finfo(dtype).min was
    told "hidden entries hold -1e9"."""
    times_inf = run_exercise(get("masks"), WRONG["masks", "times_inf"], "en")
    finite_min = run_exercise(get("masks"), WRONG["masks", "finite_min"], "en")
    assert times_inf.mistakes == ("masks.mistake.times_inf",)
    assert finite_min.mistakes == ("masks.mistake.finite_min",)
    assert "1e9" not in str(times_inf) and "1e9" not in str(finite_min)
