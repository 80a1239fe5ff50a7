"""The message catalogue: every entry in every language, the language resolved as documented:
the argument, then ATTNLAB_LANG, then the locale, then English."""

import pytest

import attnlab.labs  # noqa: F401  the exercises' words join the catalogue as their folders load
from attnlab import i18n
from attnlab.kit import registry


def test_every_entry_exists_in_every_language():
    registry.own_all_words()  # every experiment's words.json, as the report would see them
    assert i18n.domains(), "no catalogue shipped"
    assert {"claims", "quick_changes", "report", "tables"} <= set(i18n.domains())
    assert i18n.check_complete() == []


def test_language_from_argument_then_locale_then_english(monkeypatch):
    for var in ("ATTNLAB_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert i18n.resolve_lang() == "es"
    assert i18n.resolve_lang("en") == "en"
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    assert i18n.resolve_lang() == "en"
    with pytest.raises(ValueError, match="choose one of: en, es"):
        i18n.resolve_lang("fr")
    assert i18n.text("common", "language", "es") == "Español"


@pytest.mark.parametrize("value, want", [("es", "es"), ("ES", "es"), ("es_MX.UTF-8", "es"),
                                         ("en", "en"), ("fr", "en"), ("", "en")])
def test_attnlab_lang_comes_before_the_locale(monkeypatch, value, want):
    for var in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")  # the locale says nothing: English
    monkeypatch.setenv("ATTNLAB_LANG", value)
    assert i18n.resolve_lang() == want  # a language attnlab lacks is passed over
    assert i18n.resolve_lang("en") == "en"  # the argument still wins


def test_attnlab_lang_wins_over_a_spanish_locale(monkeypatch):
    monkeypatch.setenv("LC_ALL", "es_ES.UTF-8")
    monkeypatch.setenv("ATTNLAB_LANG", "en")
    assert i18n.resolve_lang() == "en"
    monkeypatch.setenv("ATTNLAB_LANG", "de")
    assert i18n.resolve_lang() == "es"


def spanish_number_problems(text: str) -> list[str]:
    """Numbers written against the labs' Spanish convention (docs/labs.md): the decimal point,
    as in code, and no thousands separator, so a list such as [0.75, 0.125] reads one way only."""
    import re

    comma = re.findall(r"\d,\d+", text)  # 0,75 or 1,000 (a list's comma has a space after it)
    grouped = re.findall(r"(?<![\d.])[1-9]\d{0,2}(?:\.\d{3})+(?![\d.])", text)  # 1.000, 65.504
    return comma + grouped


def test_the_number_rule_catches_what_it_should():
    assert spanish_number_problems("= [0,75, 0,125]; 65.504; cerca de 1.000") == [
        "0,75", "0,125", "65.504", "1.000"]
    assert spanish_number_problems("[0.75, 0.125], 65504, cerca de 1000, 0.0625, 1e-5, "
                                   "[[1, 0, 0], [1/2, 1/2, 0]], 10000^(2i/d)") == []


def test_spanish_labs_write_numbers_as_code_does():
    problems = {key: found for key, entry in i18n.catalogue("labs").items()
                if (found := spanish_number_problems(entry["es"]))}
    assert problems == {}, "use 0.75 and 1000 in Spanish labs texts (docs/labs.md)"
