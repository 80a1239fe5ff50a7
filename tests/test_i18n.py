"""The message catalogue: every entry in every language, the language resolved as documented."""

import pytest

from attnlab import i18n


def test_every_entry_exists_in_every_language():
    assert i18n.domains(), "no catalogue shipped"
    assert i18n.check_complete() == []


def test_language_from_argument_then_locale_then_english(monkeypatch):
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert i18n.resolve_lang() == "es"
    assert i18n.resolve_lang("en") == "en"
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    assert i18n.resolve_lang() == "en"
    with pytest.raises(ValueError, match="choose one of: en, es"):
        i18n.resolve_lang("fr")
    assert i18n.text("common", "language", "es") == "Español"
