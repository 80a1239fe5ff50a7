"""The report in Spanish: ``write_report(..., lang="es")`` and ``reproduce --lang es`` give a
page with no English interface string left (every entry of the ``report`` words, shared and
each experiment's, whose English differs from its Spanish), the same measured numbers as the
English page, and figures whose titles, axis labels and legends are drawn again in Spanish."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_report import make_png

from attnlab.i18n import catalogue
from attnlab.kit import registry
from attnlab.kit.extra_seeds import skipped_note
from attnlab.report import write_report
from attnlab.report.figures import translate, translated


def english_only() -> list[str]:
    """Interface strings whose English differs from their Spanish, cut at their first field:
    none may show on a Spanish page (the figures' words are checked on the figures)."""
    registry.own_all_words()
    cut = [re.split(r"\{", e["en"])[0].strip(" *`(") for k, e in catalogue("report").items()
           if e["en"] != e["es"] and not k.startswith("fig.")]
    return sorted({c for c in cut if len(c) >= 8})


def visible(page: str) -> str:
    """The page's text as a reader sees it: no style sheet, no tags, entities read."""
    import html

    body = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def shown(words: list[str], page: str) -> list[str]:
    """The ``words`` that ``page`` shows, each as whole words."""
    text = visible(page)
    return [w for w in words if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text)]


def _report(tmp_path: Path, lang: str) -> str:
    folder = tmp_path / "norm"
    make_png(folder / "figure.png")
    (folder / "table.md").write_text("| block | norm |\n|---:|---:|\n| 1 | 0.0498 |\n")
    envelopes = {
        "norm": {"name": "norm", "title": "Pre-norm or post-norm", "profile": "quick",
                 "seeds": 3, "settings": {"steps": 300}, "quick_changes": "fewer steps",
                 "record": {"grad_norms": {"pre": [[0.05, 0.06]] * 3,
                                           "post": [[0.1, 0.16]] * 3}},
                 "wall_s": 3.5, "train_s": 480.0, "runs": 12, "reused": True,
                 "extra_round": skipped_note(3, 2),
                 "code_revision": {"commit": "abc", "dirty": False}},
        "params": {"name": "params", "title": "Where the parameters are", "status": "skipped",
                   "reason": "report only"},
    }
    verdicts = [
        {"id": "norm.post_warmup_matches_pre", "text": "Post-norm with warmup matches pre-norm.",
         "rule": "ratio ≤ 1.05", "status": "inconclusive", "trained": True, "seeds": 3,
         "experiment": "norm", "why": "mean margin within 2 standard errors of zero",
         "parts": [{"name": "", "rule": "ratio ≤ 1.05", "unit": "", "margins": [0.1, -0.1, 0.0],
                    "mean": 0.0, "se": 0.058, "numbers": {"ratio": 1.0312}}]},
        {"id": "norm.warmup_hardly_matters_for_pre", "text": "Warmup hardly matters for pre-norm.",
         "rule": "r", "status": "held", "trained": False, "seeds": 1, "experiment": "norm",
         "why": "one evaluation (no training)",
         "parts": [{"name": "", "rule": "r", "unit": "", "margins": [0.2], "mean": 0.2,
                    "se": None, "numbers": {"ratio": 0.99}}]},
        {"id": "params.x", "text": "A skipped claim.", "rule": "r", "status": "skipped",
         "why": "no record of params", "parts": [], "experiment": "params"},
    ]
    meta = {"profile": "quick", "seeds": "the profile's", "wall_s": 500.0, "extra_seeds": 2,
            "machine": {"processor": "Test CPU", "CPU count": 2, "device": "cpu",
                        "platform": "elsewhere"},
            "phases_s": {"train": 480.0, "analyse": 4.0}, "versions": {"torch": "2.x"},
            "code_revision": {"commit": "abc", "dirty": True}, "finished_at": "now"}
    out = tmp_path / lang
    return write_report(envelopes, verdicts, out, meta, experiments_dir=tmp_path,
                        lang=lang)["html"].read_text(encoding="utf-8")


def test_the_spanish_page_holds_no_english_interface_string(tmp_path):
    english, spanish = _report(tmp_path, "en"), _report(tmp_path, "es")
    words = english_only()
    assert "Skipped and failed experiments" in words and "INCONCLUSIVE" in words
    shown_en = shown(words, english)
    assert len(shown_en) > 40, shown_en  # the check can fail: the English page shows them
    left = shown(words, spanish)
    assert left == [], left
    assert '<html lang="es">' in spanish and "NO CONCLUYENTE" in spanish
    assert "<strong class=\"held\">MANTENIDA</strong>" in spanish
    assert "Test CPU, 2 núcleos, CPU" in spanish and "Test CPU, 2 cores, CPU" in english
    assert "no training claim was inconclusive on 3 seeds" in english
    assert "ninguna afirmación de entrenamiento quedó no concluyente" in spanish
    assert "gradient norm at initialisation, pre-norm, block 1" in english  # the chapter's
    assert "norma del gradiente al inicializar, pre-norm, bloque 1" in spanish  # figures
    for number in ("0.0498", "8m00s", "1.03"):  # the same figures in both languages
        assert number in english and number in spanish


def test_the_spanish_figure_is_drawn_again_in_spanish(tmp_path):
    _report(tmp_path, "es")
    drawn = tmp_path / "es" / "es" / "norm.png"
    assert drawn.is_file() and drawn.read_bytes() != (tmp_path / "norm" / "figure.png").read_bytes()

    from matplotlib.text import Text

    from attnlab.kit.registry import load

    record = {"grad_norms": {"pre": [[0.05, 0.06]], "post": [[0.1, 0.16]]}}
    texts = [x.get_text() for x in translate(load("norm").figure(record), "es").findobj(Text)]
    assert "Norma del gradiente por bloque antes del primer paso" in texts
    assert "pre-norm" in texts and "bloque" in texts
    assert "block" not in texts


def test_phrases_are_translated_as_whole_words():
    assert translated("seed 2: repeat loss", "es") == "semilla 2: pérdida repetida"
    assert translated("trained", "es") == "entrenada"  # not "train" + "ed"
    assert translated("the", "es") == "the"  # a token of the data stays as it is
    assert translated("anything", "en") == "anything"


@pytest.mark.slow
def test_reproduce_micro_lang_es_from_the_command_line(tmp_path):
    from attnlab.cli import main as cli_main

    args = ["reproduce", "--profile", "micro", "--only", "params", "--out", str(tmp_path / "o"),
            "--work", str(tmp_path / "w"), "--lang", "es"]
    assert cli_main.main(args) == 0
    page = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert '<html lang="es">' in page and "Dónde están los parámetros" in page
    before = page[: page.index('<h2 id="exp-1">')]  # its table: test_report_spanish_tables
    assert shown(english_only(), before) == []
    assert "<h3>Afirmaciones</h3>" in page and "Máquina, versiones y código" in page


def test_the_budgets_in_the_catalogue_are_the_chapters():
    """An experiment translated into Spanish (its title is in the catalogue) has its budget
    there too, word for word its chapter part's in English; one not translated (a new one,
    a plugin) falls back to English and touches no catalogue."""
    registry.own_all_words()
    report = catalogue("report")
    entries = {k.split(".", 1)[1]: e for k, e in report.items() if k.startswith("budget.")}
    translated = {n for n in registry.EXPERIMENTS if f"title.{n}" in report}
    assert len(translated) >= 11 and set(entries) == translated
    for name in translated:
        assert entries[name]["en"] == registry.chapter(name).budget
