"""The experiments' own tables speak the page's language: on the Spanish page no English
word of their headers, rows and notes is left, and every number and every piece of data
(a token in backticks, a «quoted» sentence) is the one the experiment wrote.

``quick_table.md`` in each experiment's folder (``attnlab/experiments/<name>/``, beside its
``words.json``) is its ``table.md`` as its ``table(record)`` wrote it for the quick profile
(CPU, fp32, code revision 92e0988); refresh them from a finished quick report when a table
changes its words. ``ATTNLAB_QUICK_REPORT`` may name a finished quick report folder: it is then
copied and re-rendered in Spanish as well.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import attnlab.experiments
from attnlab.cli.main import main as cli_main
from attnlab.kit import registry
from attnlab.report.table_words import DATA, speak

EXPERIMENTS = Path(attnlab.experiments.__file__).parent
# English words of the tables' headers, rows and notes that a Spanish page must not show
ENGLISH = re.compile(
    r"\b(?:held-out|train ppl|params|seeds?(?:\(s\))?|mean ± std|steps?|blocks?|heads?|model|"
    r"attention|scheme|placement|variant|forced choice|OUT OF MEMORY|total ms|peak memory|"
    r"fitted|exponents?|initiali[sz]ation|after training|setting|width|formula|output layer|"
    r"rank|subject|window|score|loss|rate|learned|none|what|row|context|batch|weight|"
    r"the|of|and|with|over|on|for|per|is|are|from|not|measured|tokens per|part|total ms)\b",
    re.I)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def english_words(text: str) -> list[str]:
    return sorted({m.group(0) for m in ENGLISH.finditer(DATA.sub(" ", text))})


def quick_table(name: str) -> str:
    """Experiment ``name``'s table as the quick profile wrote it, from its folder."""
    return (EXPERIMENTS / name / "quick_table.md").read_text(encoding="utf-8")


def test_every_experiment_has_its_table_in_its_folder():
    assert sorted(p.parent.name for p in EXPERIMENTS.glob("*/quick_table.md")) == \
        sorted(registry.EXPERIMENTS)


@pytest.mark.parametrize("name", registry.EXPERIMENTS)
def test_a_table_in_spanish_has_no_english_word(name):
    english = quick_table(name)
    assert english_words(english)  # the list finds the English the experiment wrote
    spanish = speak(name, english, "es")
    assert english_words(spanish) == []
    # the same numbers, in the same order; the same data, untouched; the same table rows
    assert NUMBER.findall(spanish) == NUMBER.findall(speak(name, english, "en"))
    assert DATA.findall(spanish) == DATA.findall(english)
    assert [line.count("|") for line in spanish.splitlines()] == \
        [line.count("|") for line in english.splitlines()]


def test_english_stays_as_written_but_a_zero_spread_is_0():
    english = quick_table("icl_gd")
    assert "1.0000 ± 0.0000" in english
    assert speak("icl_gd", english, "en") == english.replace("1.0000 ± 0.0000", "1.0000 ± 0")
    assert speak("position", "`the none` «none»", "es") == "`the none` «none»"  # data stays


def test_the_report_shows_the_table_in_spanish(tmp_path):
    out = tmp_path / "out"
    argv = ["reproduce", "--profile", "micro", "--only", "params", "--out", str(out),
            "--work", str(tmp_path / "work"), "--lang", "es"]
    assert cli_main(argv) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "| modelo | parte | atención | MLP | normas | total | proporción del MLP |" in text
    assert "output layer" not in text and "formula value" not in text


QUICK = os.environ.get("ATTNLAB_QUICK_REPORT")


@pytest.mark.skipif(not QUICK, reason="ATTNLAB_QUICK_REPORT names no finished quick report")
def test_a_quick_report_re_rendered_in_spanish(tmp_path):
    out = tmp_path / "report"
    shutil.copytree(QUICK, out)
    assert cli_main(["report", "--out", str(out), "--lang", "es"]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "0.0 s |" not in text.split("## ")[1]  # the glance: the original run's wall time
    assert "recompuso a partir de sus registros" in text
    assert not re.search(r"± 0\.0+(?!\d)", text)  # a zero spread is written 0
    for name in registry.EXPERIMENTS:  # each experiment's table, as the page shows it
        shown = speak(name, (out / name / "table.md").read_text(encoding="utf-8"), "es")
        assert english_words(shown) == [], name
        assert shown.splitlines()[2] in text or shown.splitlines()[0] in text, name
