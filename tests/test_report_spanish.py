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


# English that a Spanish page or terminal must not show: the verdict rule's and the parts'
# reasons, the parts' names in those reasons, the experiments' Skip reasons, the cost sweep's
# headings (found in a Spanish micro run)
LEFT_ENGLISH = ("this profile trains no", "no fitted", "too few sizes", "not counted in this",
                "count not available", "one evaluation (no training)", "train:", "held-out:",
                "spread grows", "collapse:", "### naive", "### memeff", "seed(s): a verdict")
# a count of one said as many, in either language
DISAGREE = {"es": re.compile(r"(?<![\d.])1 (?:se mantienen|no se mantienen|no son concluyentes|"
                             r"mantenidas|no mantenidas|no concluyentes|omitidas|terminados|"
                             r"omitidos|fallidos)(?!\w)|de sus 1 afirmaciones|"
                             r"(?<![\d.])1 de estas \d+ afirmaciones no se mantienen|"
                             r"1 de estas 1 afirmaciones"),
            "en": re.compile(r"its 1 claims|(?<![\d.])1 of these \d+ claims are|"
                             r"1 of these 1 claims")}


def disagreements(page: str, lang: str) -> list[str]:
    """The count sentences of ``page`` that say one thing as many."""
    return DISAGREE[lang].findall(visible(page))


def _skipped_verdicts() -> list[dict]:
    """Verdicts as a micro run makes them: parts skipped (no width 32 trained, no fitted
    exponent, no Hugging Face count), two named parts inconclusive on one seed, one claim
    held of one evaluation."""
    few = "1 seed(s): a verdict needs at least 3"
    return [
        {"id": "sqrt_dk.no_difference_small_large", "text": "x", "rule": "r", "trained": True,
         "status": "skipped", "seeds": 0, "experiment": "sqrt_dk",
         "why": "d_k 32: this profile trains no width 32 in any setting; d_k 256: this profile "
                "trains no width 256 in the short setting",
         "parts": [{"name": "d_k 32", "rule": "r", "status": "skipped",
                    "why": "this profile trains no width 32 in any setting"},
                   {"name": "d_k 256", "rule": "r", "status": "skipped",
                    "why": "this profile trains no width 256 in the short setting"}]},
        {"id": "cost.memeff_linear", "text": "x", "rule": "r", "trained": False,
         "status": "skipped", "seeds": 1, "experiment": "cost",
         "why": "memory: no fitted memory exponent for memeff: too few sizes completed or "
                "measured",
         "parts": [{"name": "memory", "rule": "r", "status": "skipped",
                    "why": "no fitted memory exponent for memeff: too few sizes completed or "
                           "measured"},
                   {"name": "completes", "rule": "r", "unit": "yes/no", "status": "held",
                    "why": "one evaluation (no training)", "margins": [1.0], "mean": 1.0,
                    "numbers": {}}]},
        {"id": "ladder.two_blocks_overfit", "text": "x", "rule": "r", "trained": True,
         "status": "inconclusive", "seeds": 1, "experiment": "ladder",
         "why": f"train: {few}; held-out: {few}",
         "parts": [{"name": n, "rule": "r", "unit": "× ppl", "status": "inconclusive",
                    "why": few, "margins": [0.1], "mean": 0.1, "numbers": {}}
                   for n in ("train", "held-out")]},
        {"id": "position.permutation", "text": "x", "rule": "r", "trained": False,
         "status": "held", "seeds": 1, "experiment": "position",
         "why": "one evaluation (no training)",
         "parts": [{"name": "", "rule": "r", "unit": "max difference", "status": "held",
                    "why": "one evaluation (no training)", "margins": [1e-5], "mean": 1e-5,
                    "numbers": {}}]},
    ]


def test_a_skipped_part_and_its_name_are_said_in_spanish():
    from attnlab.kit import verdict_words as w
    from attnlab.kit.claims import render

    v = _skipped_verdicts()
    assert w.why(v[0], "es") == ("d_k 32: este perfil no entrena ninguna anchura 32 en ningún "
                                 "ajuste; d_k 256: este perfil no entrena ninguna anchura 256 "
                                 "en el ajuste corto")
    assert w.why(v[1], "es").startswith("memoria: no hay exponente de memoria ajustado para "
                                        "la atención eficiente en memoria")
    assert w.why(v[2], "es") == ("entrenamiento: 1 semilla(s): un veredicto necesita al menos "
                                 "3; validación: 1 semilla(s): un veredicto necesita al menos 3")
    assert w.why(v[2], "en") == v[2]["why"]  # the English as it was
    terminal = render(v, "es")
    assert "**OMITIDA**" in terminal and "**MANTENIDA**" in terminal
    assert "una sola evaluación (sin entrenamiento)" in terminal
    assert [s for s in LEFT_ENGLISH + ("SKIPPED", "HELD") if s in terminal] == []
    english = render(v, "en")
    assert "**SKIPPED**" in english and "train: 1 seed(s)" in english


def test_reasons_counts_and_title_of_a_spanish_page(tmp_path):
    envelopes = {n: {"name": n, "title": n, "profile": "micro", "seeds": 1, "record": {},
                     "settings": {}, "wall_s": 1.0}
                 for n in ("ladder", "sqrt_dk", "position", "cost")}
    meta = {"profile": "micro", "seeds": "the profile's", "wall_s": 5.0, "machine": {},
            "phases_s": {}, "versions": {}, "code_revision": {"commit": "abc", "dirty": False},
            "finished_at": "now"}
    pages = {}
    for lang in ("en", "es"):
        paths = write_report(envelopes, _skipped_verdicts(), tmp_path / lang, meta,
                             experiments_dir=tmp_path / "none", lang=lang)
        pages[lang] = paths["html"].read_text(encoding="utf-8")
        assert disagreements(pages[lang], lang) == []
        assert disagreements(paths["markdown"].read_text(encoding="utf-8"), lang) == []
        title = re.search(r"<title>(.*)</title>", pages[lang]).group(1)
        assert "`" not in title and "micro" in title
    spanish = visible(pages["es"])
    assert [s for s in LEFT_ENGLISH if s in spanish] == []
    assert "1 mantenida" in spanish and "1 se mantiene" in spanish
    assert "su única afirmación" in spanish
    assert "of its one claim, 1 held" in visible(pages["en"])
    assert disagreements("de sus 1 afirmaciones, 1 se mantienen", "es") != []  # it can fail


@pytest.mark.slow
def test_a_spanish_micro_run_says_its_progress_in_spanish(tmp_path):
    """The terminal of ``run params`` and of ``reproduce --only norm`` (which trains, in
    worker processes) at micro in Spanish: no English progress or log words, the runs'
    labels included."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ATTNLAB_LANG": "", "LC_ALL": "", "LANG": "C.UTF-8"}
    english = ("training ", "step ", "loss", "held-out", "report written", "ETA", "worker ",
               "HELD", "SKIPPED", "one evaluation", "not counted in this profile", " seed ",
               "warmup")  # the last two: the runs' labels (norm pre warmup=False seed 0)
    for argv in (["--lang", "es", "run", "params", "--profile", "micro"],
                 ["reproduce", "--only", "norm", "--profile", "micro", "--lang", "es",
                  "--jobs", "2"]):
        name = argv[argv.index("--profile") - 1] if argv[0] == "--lang" else "norm"
        done = subprocess.run([sys.executable, "-m", "attnlab.cli.main", *argv,
                               "--out", str(tmp_path / name / "o"),
                               "--work", str(tmp_path / name / "w")],
                              capture_output=True, text=True, env=env, timeout=600)
        said = done.stdout + done.stderr
        assert done.returncode == 0, said
        assert [w for w in english if w in said] == [], said
    assert "entrenando norm" in said and "pérdida" in said and "ppl de validación" in said
    assert "norm pre sin calentamiento semilla 0" in said
    assert "informe escrito en" in said
