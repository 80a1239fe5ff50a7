"""``scripts/words.py``: every string with its languages and owner, and ``--check`` failing,
naming the key, when a language is missing one, whether the words are shared or an
experiment's own."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from attnlab import i18n

ROOT = Path(__file__).resolve().parents[1]
words = runpy.run_path(str(ROOT / "scripts" / "words.py"))


@pytest.fixture
def owned():
    """Own words for the test under owner ``test``; owned as none again afterwards."""
    domains: set[str] = set()

    def own(entries: dict[str, i18n.Entries]) -> None:
        domains.update(entries)
        i18n.own("test", entries)

    yield own
    i18n.own("test", dict.fromkeys(domains, {}))


def test_it_lists_shared_and_experiment_words_with_their_languages(capsys):
    assert words["main"]([]) == 0
    lines = set(capsys.readouterr().out.splitlines())
    assert "report.title\ten es\tshared" in lines
    assert "quick_changes.ladder\ten es\texperiment ladder" in lines
    assert "report.title.norm\ten es\texperiment norm" in lines
    assert any(line.startswith("tables.*: ") and line.endswith("\tshared") for line in lines)
    assert words["main"](["claims"]) == 0
    claims = capsys.readouterr().out.splitlines()
    assert claims and all(line.startswith("claims.") for line in claims)


def test_check_passes_on_the_catalogue_and_names_what_lacks_a_language(owned, capsys):
    assert words["main"](["--check"]) == 0
    owned({"claims": {"test.only_english": {"en": "An English claim.", "es": ""}}})
    assert words["main"](["--check"]) == 1
    assert capsys.readouterr().err == "claims.test.only_english: no es text\n"
    assert words["main"](["--check", "labs"]) == 0  # another domain's problem is not its
    assert ("claims.test.only_english", "en", "test") in words["rows"](["claims"])


def test_an_unknown_domain_is_refused():
    with pytest.raises(SystemExit):
        words["main"](["no_such_domain"])
