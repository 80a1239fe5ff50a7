"""The claims in Spanish: every claim, part name and rule has Spanish words in its experiment's
``words.json``, their English is the claims' own, and a Spanish rule states the same
thresholds."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

from attnlab.i18n import catalogue, check_complete, owners
from attnlab.kit import registry
from attnlab.kit.verdict_words import claim_text, part_name, part_rule

ROOT = Path(__file__).resolve().parents[1]
english = runpy.run_path(str(ROOT / "scripts" / "claims_catalogue.py"))["english"]


def _numbers(text: str) -> list[str]:
    """The numbers a text states, thousands separators dropped (124,439,808 = 124 439 808)."""
    text = re.sub(r"(?<=\d)[,\u202f ](?=\d{3}\b)", "", text)
    return sorted(re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", text))


def test_the_catalogue_is_the_claims_own_english_with_spanish_beside_it():
    registry.own_all_words()
    entries = catalogue("claims")
    assert {k: v["en"] for k, v in entries.items()} == english(), \
        "claims changed: run scripts/claims_catalogue.py and give the new Spanish"
    assert not [k for k, v in entries.items() if not v["es"] or v["es"] == v["en"] and
                not k.endswith("/name")]
    assert check_complete() == []


def test_each_experiment_owns_the_words_of_its_own_claims():
    registry.own_all_words()
    for name in registry.EXPERIMENTS:
        assert set(owners("claims")[f"experiment {name}"]) == set(english(name)), name


def test_a_spanish_rule_states_the_same_thresholds():
    registry.own_all_words()
    for key, entry in catalogue("claims").items():
        if key.endswith("/rule"):
            assert _numbers(entry["es"]) == _numbers(entry["en"]), key


def test_verdicts_read_in_spanish():
    v = {"id": "recurrence.rnn_falls_to_chance", "text": "The RNN's agreement accuracy falls "
         "toward chance as d grows.", "parts": [{"name": "falls", "rule": "x"}]}
    assert claim_text(v, "es").startswith("El acierto de la RNN")
    assert part_name(v, v["parts"][0], "es") == "cae"
    assert part_rule(v, v["parts"][0], "es") == \
        "acierto(menor d) − acierto(mayor d entrenada) ≥ 0.1"
    assert claim_text(v, "en") == v["text"]


def test_quick_changes_say_what_and_why_in_both_languages_without_a_lab_diary():
    from attnlab.kit import registry
    from attnlab.kit.verdict_words import quick_changes

    for name in registry.EXPERIMENTS:
        en = registry.load(name).quick_changes
        assert quick_changes(name, "en") == en, f"{name}/words.json is not the record's"
        es = quick_changes(name, "es")
        assert es and es != en, name
        for text in (en, es):
            assert len(re.findall(r"[.;:](?:\s|$)", text)) <= 4, (name, text)  # a sentence or two
            assert not re.search(r"spec|measured|medid|gave|×\d|\d+\.\d+ /", text, re.I), text
        assert not re.search(r"\d\.\d{3}\b|\d,\d", es), es  # no dot or comma thousands
