"""A run's label in the learner's language: every label of every experiment's plan, at every
profile, has its words (its experiment's ``label`` entries) and reads in Spanish with no English
word left; the labels themselves, the runs' names, stay as they are. The log lines that name a
run say its label in Spanish (the runner marks it a ``RunLabel``; a path or an error's words
are never taken for one), and so do the progress lines, a cluster's node included."""

from __future__ import annotations

import io
import logging
import re
from functools import cache

import pytest

from attnlab.i18n import catalogue, owners
from attnlab.i18n.labels import DOMAIN, RunLabel, say, seeded, split
from attnlab.i18n.logs import Translating
from attnlab.kit import registry
from attnlab.train.progress import ProgressPrinter

# words a Spanish label keeps from its English: names (of experiments, models, positions,
# norm placements, variants), which both languages write alike
NAMES = {"pre", "post", "sinusoidal", "rope", "alibi", "rnn", "lstm", "bahdanau",
         "transformer", "A", "B"}


@cache
def planned() -> dict[str, set[str]]:
    """Every label of every experiment's plan at every profile -> where it was planned."""
    found: dict[str, set[str]] = {}
    for name in registry.EXPERIMENTS:
        exp = registry.load(name)
        for profile in registry.PROFILES:
            for spec in exp.plan(exp.settings(profile)):
                found.setdefault(spec.label, set()).add(f"{name} at {profile}")
    return found


def words(text: str) -> set[str]:
    """The words of a label, cut at spaces, ``=`` and brackets, without numbers and code
    names (``d_k``, ``2L``)."""
    return {w for w in re.split(r"[\s=()]+", text)
            if w and not re.search(r"[\d_]", w)}


def english_left(label: str) -> set[str]:
    """The words of ``label``'s English that its Spanish still says, names aside."""
    names = NAMES | set(registry.names())
    return words(say(label, "es")) & (words(label) - names)


def test_every_planned_label_is_said_in_spanish():
    registry.own_all_words()
    labels = planned()
    assert len(labels) > 60 and "winograd B two blocks seed 0" in labels
    missing = sorted({split(label)[0] for label in labels} - set(catalogue(DOMAIN)))
    assert missing == [], "give these runs their words (the label domain of words.json)"
    left = {label: sorted(found) for label in labels if (found := english_left(label))}
    assert left == {}
    for label in labels:
        phrase, seed = split(label)
        assert seed is not None and say(label, "es").endswith(f" semilla {seed}"), label
        assert say(label, "en") == label


def test_the_check_can_fail():
    assert english_left("winograd B two blocks seed 0") == set()
    assert english_left("norm mid warmup=True seed 0") == {"mid", "warmup", "True"}
    assert say("norm mid warmup=True seed 3", "es") == "norm mid warmup=True semilla 3"


def test_a_label_entry_names_a_planned_run_by_its_english():
    registry.own_all_words()
    phrases = {split(label)[0] for label in planned()}
    for owner, entries in owners(DOMAIN).items():
        for key, entry in entries.items():
            assert entry["en"] == key, (owner, key)
            assert key in phrases, f"{owner}: no plan makes {key!r}"


def test_the_seeded_form_and_its_inverse():
    assert seeded("ladder row 5", 0) == "ladder row 5 seed 0"
    assert split("ladder row 5 seed 0") == ("ladder row 5", 0)
    assert split("x seed 1 seed 2") == ("x seed 1", 2)
    for odd in ("probe", "x seed", "x seed one", "x seed ²"):
        assert split(odd) == (odd, None)
    assert say("a probe of mine", "es") == "a probe of mine"  # no words: left as it is


def test_log_lines_say_a_run_label_in_spanish():
    registry.own_words("winograd")

    def line(lang: str, msg: str, *args: object) -> str:
        record = logging.LogRecord("attnlab", logging.INFO, __file__, 1, msg, args, None)
        return Translating(lang).format(record)

    label = RunLabel("winograd B two blocks seed 0")
    assert line("es", "training %s (worker %d of %d)", label, 1, 2) == \
        "entrenando winograd B dos bloques semilla 0 (proceso de trabajo 1 de 2)"
    assert line("en", "training %s (worker %d of %d)", label, 1, 2) == \
        "training winograd B two blocks seed 0 (worker 1 of 2)"
    path = "/runs/winograd B two blocks seed 0"  # not marked: never taken for a label
    assert line("es", "training %s (%s)", label, path) == \
        f"entrenando winograd B dos bloques semilla 0 ({path})"
    assert line("es", "a line no entry has: %s", label) == \
        "a line no entry has: winograd B dos bloques semilla 0"


def test_progress_lines_say_a_run_label_in_spanish():
    registry.own_words("ladder")
    out = io.StringIO()
    show = ProgressPrinter(out, tty=False, lang="es")
    record = {"kind": "eval", "step": 5, "steps": 10, "train_ppl": 9.0, "held_ppl": 10.0,
              "run": "ladder row 9 (small data) seed 1"}
    show(record)
    show({**record, "node": "10.0.0.2 (1f0c9a)"})
    assert out.getvalue().splitlines() == [
        "ladder fila 9 (pocos datos) semilla 1: paso 5/10: ppl de entrenamiento 9.00, "
        "ppl de validación 10.00",
        "ladder fila 9 (pocos datos) semilla 1 en 10.0.0.2 (1f0c9a): paso 5/10: "
        "ppl de entrenamiento 9.00, ppl de validación 10.00"]
    english = io.StringIO()
    ProgressPrinter(english, tty=False)({**record, "node": "10.0.0.2 (1f0c9a)"})
    assert english.getvalue().startswith("ladder row 9 (small data) seed 1 on 10.0.0.2 "
                                         "(1f0c9a): step 5/10")


def test_a_runs_results_keep_their_english_labels():
    """Labels are names: ``Results.seeds`` finds a run's seeds by its English label only."""
    from attnlab.running.runner import Results

    registry.own_words("ladder")
    results = Results({"ladder row 1 seed 1": {"s": 1}, "ladder row 1 seed 0": {"s": 0},
                       "ladder row 10 seed 0": {"s": 10}})
    assert [r["s"] for r in results.seeds("ladder row 1")] == [0, 1]
    with pytest.raises(KeyError, match="no planned run is labelled 'ladder fila 1'"):
        results.seeds(say("ladder row 1", "es"))


def test_the_explorers_own_runs_are_said_in_spanish():
    """The runs the explorer trains for its pages (the probes, the induction model, the
    translation models) are named by the shared label words (i18n/label.json)."""
    from pathlib import Path

    import attnlab
    from attnlab.explorer.sources.translation import RUNS

    sources = Path(attnlab.__file__).parent / "explorer" / "sources"
    named = {m for p in sources.glob("*.py") for m in
             re.findall(r'(?:ctx\.train|_train_probe)\(\s*"([^"]+)"', p.read_text("utf-8"))}
    explorer = named | {f"explorer translation {m}" for m in RUNS}
    assert len(named) >= 4
    left = {label: say(label, "es") for label in explorer
            if say(label, "es") == label or "explorer" in say(label, "es")}
    assert left == {}, "give these runs their words in src/attnlab/i18n/label.json"
