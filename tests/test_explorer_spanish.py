"""The explorer in Spanish: ``attnlab explore --lang es`` and ``show(..., lang="es")`` give a
page whose buttons, switches, captions and notes come from the catalogue's Spanish
(``attnlab/i18n/explorer.json``), over the chapter's sentence, and that still works in
Chromium: click a word, read the weights, toggle the switches. The composed presets
(``--induction`` with its head roles, ``--agreement-distance``) speak Spanish too: no word of
the catalogue's English is left in their data or on their page, and Spanish numbers are
written as in code (0.75), as their English are."""

from __future__ import annotations

import functools
import json
import re
import urllib.request

import numpy as np
import pytest
from explorer_support import (  # noqa: F401 (fixtures)
    browser_fixture,
    browser_marks,
    matrix,
    numbers,
    page_fixture,
)

from attnlab.cli import main as cli_main
from attnlab.errors import UsageError
from attnlab.explorer import hand_compute, hand_designed_page, show, start_server, write_page
from attnlab.explorer.page.data import effective_tokens, head_weights
from attnlab.i18n import catalogue

CHAPTER = "La gata que perseguía al ratón estaba muy cansada"
MODES = ["head", "grid", "overlay", "text"]


def _english_only() -> list[str]:
    """Interface strings whose English differs from their Spanish, cut at their first field:
    none of them may show on a Spanish page."""
    cut = [re.split(r"\{", entry["en"])[0].strip() for entry in catalogue("explorer").values()
           if entry["en"] != entry["es"]]  # fmt: skip
    return sorted({c for c in cut if len(c) >= 8})


@pytest.fixture(scope="module")
def es_url(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("es") / "es.html"
    return write_page(hand_designed_page("es"), path, lang="es").as_uri()


def _head(name: str) -> dict:
    heads = hand_designed_page("es")["views"][0]["layers"][0]["heads"]
    return next(h for h in heads if h["name"] == name)


@browser_marks[0]
@browser_marks[1]
def test_spanish_page_speaks_spanish_and_still_works(page, es_url) -> None:
    page.goto(es_url)
    assert page.locator("html").get_attribute("lang") == "es"
    modes = [page.get_by_test_id(f"mode-{m}").text_content() for m in MODES + ["composed"]]
    assert modes == ["Una cabeza", "Todas las cabezas", "Cabezas superpuestas",
                     "Texto sombreado", "Compuesta entre capas"]  # fmt: skip
    assert page.get_by_text("máscara causal").is_visible()
    assert page.get_by_text("dividir entre √d_k").is_visible()
    assert page.get_by_test_id("row-title").text_content().startswith("Elige un token")
    words = page.locator('[data-testid="word"]').all_text_contents()
    assert " ".join(words) == CHAPTER  # the chapter's sentence is the default

    page.get_by_role("button", name="cansada", exact=True).click()  # click a word
    assert page.get_by_test_id("row-title").text_content() == "«cansada» atiende a:"
    row = numbers(page, "row-bar")
    agreement = _head("concordancia")
    np.testing.assert_allclose(row, head_weights(agreement, causal=False, scale=True)[8],
                               atol=1e-12)  # fmt: skip
    tokens = page.locator('[data-testid="row-bar"] .tok').all_text_contents()
    assert tokens[int(np.argmax(row))] == "gata"
    assert page.get_by_test_id("note").text_content().startswith("Concordancia:")
    assert page.get_by_test_id("formula").text_content().startswith("pesos = softmax(q·k / √")

    page.get_by_test_id("head-select").select_option(label="2: palabra anterior")  # switches
    previous = _head("palabra anterior")
    page.get_by_test_id("causal").check()
    w = matrix(page)
    assert (w[np.triu_indices(9, 1)] == 0.0).all()
    np.testing.assert_allclose(w, head_weights(previous, causal=True, scale=True), atol=1e-12)
    page.get_by_test_id("scale").uncheck()
    np.testing.assert_allclose(numbers(page, "eff", "data-value"), effective_tokens(
        head_weights(previous, causal=True, scale=False)), rtol=1e-9)  # fmt: skip
    assert "enmascaradas" in page.get_by_test_id("formula").text_content()

    english = _english_only()
    assert "Choose or hover a token to see what it attends to" in english  # the check can fail
    for mode in MODES + ["head"]:
        page.get_by_test_id(f"mode-{mode}").click()
        shown = page.locator("body").inner_text()
        left = [e for e in english if e in shown]
        assert left == [], (mode, left)


def test_every_key_the_code_asks_for_is_in_the_catalogue_and_every_entry_is_used() -> None:
    """A key the page's script asks for but the catalogue lacks would be a TypeError in the
    browser; an entry nothing asks for is text kept twice or left behind."""
    from pathlib import Path

    import attnlab.explorer

    root = Path(attnlab.explorer.__file__).parent
    js = "".join(p.read_text(encoding="utf-8") for p in sorted((root / "web").glob("*.js")))
    py = "".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py")))
    keys = set(catalogue("explorer"))
    files = (".js", ".json", ".model", ".txt", ".safetensors", ".tiktoken")
    asked = {k for k in re.findall(r'"([a-z_]+(?:\.[a-z_]+)+)"', js) if not k.endswith(files)}
    assert asked and asked <= keys, sorted(asked - keys)
    literals = set(re.findall(r'"([a-z_]+(?:\.[a-z_ ]+)*)"', js + py))
    dynamic = ("hand.name.", "hand.note.", "hand.asks.", "count.")  # built as f"hand.name.{…}"
    unused = sorted(k for k in keys if k not in literals and not k.startswith(dynamic))
    assert unused == []


def test_cli_explore_lang_es_writes_the_spanish_page(tmp_path, capsys) -> None:
    out = tmp_path / "es.html"
    assert cli_main.main(["explore", "--lang", "es", "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert '<html lang="es">' in html and ">Una cabeza</button>" in html
    assert "Cabezas de atención diseñadas a mano" in html
    data = json.loads(re.search(r'id="attnlab-data">(.*?)</script>', html, re.S).group(1))
    assert " ".join(data["views"][0]["tokens"]) == CHAPTER
    text = json.loads(re.search(r'id="attnlab-ui">(.*?)</script>', html, re.S).group(1))
    assert text["mode.head"] == "Una cabeza" and set(text) == set(catalogue("explorer"))
    english = tmp_path / "en.html"
    assert cli_main.main(["explore", "--lang", "en", "--out", str(english)]) == 0
    assert ">One head</button>" in english.read_text(encoding="utf-8")


def test_show_takes_lang_and_refuses_others() -> None:
    view = show(lang="es")
    assert view.lang == "es" and "Una cabeza" in view.html()
    assert repr(view).startswith("<explorador de atención")
    assert view.data["views"][0]["layers"][0]["heads"][0]["name"] == "concordancia"
    assert show(lang="en").data["title"] == "Hand-designed attention heads"
    with pytest.raises(UsageError, match="unknown language 'fr'"):
        show(lang="fr")


def test_served_page_and_answers_in_spanish() -> None:
    with start_server(functools.partial(hand_compute, lang="es"), lang="es") as srv:
        page = urllib.request.urlopen(srv.url, timeout=10).read().decode("utf-8")
        answer = json.loads(urllib.request.urlopen(
            srv.url + "api/attention?text=el%20perro%20estaba%20cansado", timeout=10).read())
    assert ">Mostrar la atención</button>" in page and '<html lang="es">' in page
    assert answer["title"] == "Cabezas de atención diseñadas a mano"
    assert answer["views"][0]["layers"][0]["heads"][2]["name"] == "sujeto"


@browser_marks[0]
@browser_marks[1]
def test_served_spanish_page_computes_a_typed_sentence(page) -> None:
    with start_server(functools.partial(hand_compute, lang="es"), lang="es") as srv:
        page.goto(srv.url)
        assert page.get_by_test_id("submit").text_content() == "Mostrar la atención"
        page.get_by_test_id("text").fill("el perro que mordió al gato estaba muy cansado")
        page.get_by_test_id("submit").click()
        page.get_by_role("button", name="mordió", exact=True).click()
        assert page.get_by_test_id("row-title").text_content() == "«mordió» atiende a:"
        np.testing.assert_allclose(sum(numbers(page, "row-bar")), 1.0, atol=1e-9)


def test_given_weights_speak_spanish_too() -> None:
    w = np.full((2, 3, 4, 4), 0.25)
    data = show(weights=w, tokens=list("abcd"), lang="es").data
    assert data["description"].startswith("Pesos de atención de 2 capas × 3 cabezas sobre 4 tokens")
    view = data["views"][0]
    assert view["layers"][0]["heads"][0]["name"] == "cabeza 1"
    assert view["fixed"].startswith("estos pesos se dieron") and "Rollout (Abnar y" in view[
        "composed"]["note"]  # fmt: skip
    english = show(weights=w, tokens=list("abcd"), lang="en").data
    assert english["views"][0]["composed"]["note"].startswith("Rollout (Abnar & Zuidema 2020)")


# --- the composed presets: every word of them Spanish ----------------------------------------

COMMAND = re.compile(r"attnlab(?: [a-z_-]+)+|\{\w+\}")  # a command is the same in both
WORD = re.compile(r"[^\W\d_]{2,}")


def _words(said: str) -> set[str]:
    return {w.lower() for w in WORD.findall(COMMAND.sub(" ", said))}


@functools.cache
def _english_words() -> frozenset[str]:
    """Words the catalogue's English uses and its Spanish never does ("layer", "head",
    "score", "previous", "the"...): none may show on a Spanish page."""
    entries = catalogue("explorer").values()
    en = set().union(*(_words(e["en"]) for e in entries))
    return frozenset(en - set().union(*(_words(e["es"]) for e in entries)))


def _strings(data: object) -> list[str]:
    """Every text of a page's data, the tokens left out (they are the model's, not ours)."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [t for k, v in data.items() if k != "tokens" for t in _strings(v)]
    if isinstance(data, list):
        return [t for v in data for t in _strings(v)]
    return []


def _english_left(texts: list[str]) -> list[str]:
    english = _english_words()
    return sorted({w for t in texts for w in _words(t) if w in english})


@pytest.fixture(scope="module")
def presets(tmp_path_factory) -> dict[str, dict]:
    """``--induction`` and ``--agreement-distance`` through the command, each language, at the
    micro profile's budget (seconds); the data read back from the written pages."""
    from attnlab.experiments import induction, recurrence

    out = tmp_path_factory.mktemp("presets")
    pages = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(induction.PROFILES, "quick", induction.PROFILES["micro"])
        mp.setitem(recurrence.PROFILES, "quick", recurrence.PROFILES["micro"])
        for flag in ("--induction", "--agreement-distance"):
            for lang in ("es", "en"):
                path = out / f"{flag[2:]}-{lang}.html"
                argv = ["explore", flag, "--lang", lang, "--work", str(out / "w"),
                        "--out", str(path)]  # fmt: skip
                assert cli_main.main(argv) == 0
                html = path.read_text(encoding="utf-8")
                found = re.search(r'id="attnlab-data">(.*?)</script>', html, re.S)
                pages[f"{flag[2:]}-{lang}"] = {"path": path, "data": json.loads(found.group(1))}
    return pages


@pytest.mark.parametrize("name", ["induction", "agreement-distance"])
def test_the_composed_presets_data_is_spanish(presets, name) -> None:
    es, en = presets[f"{name}-es"]["data"], presets[f"{name}-en"]["data"]
    assert _english_left(_strings(en)) != []  # the check can fail: the English page has them
    assert _english_left(_strings(es)) == []
    head = es["views"][0]["layers"][0]["heads"][0]
    assert head["name"] == "cabeza 1" and es["views"][0]["composed"]["note"].startswith(
        "Rollout (Abnar y")  # fmt: skip
    if name == "induction":
        assert es["title"].startswith("Cabezas de inducción")
        assert es["roles"]["names"]["previous"] == "token anterior"
        assert list(es["roles"]["scores"]) == list(en["roles"]["scores"])  # same keys, same grids
        assert es["roles"]["scores"] == en["roles"]["scores"]
    else:
        assert "P(cansada) = " in es["description"] and "del bloque" in es["description"]
    number = re.compile(r"\d+(?:[.,]\d+)*")
    assert sorted(number.findall(es["description"])) == sorted(number.findall(en["description"]))


def test_spanish_numbers_are_written_as_the_english_ones() -> None:
    """One convention: the decimal point as in code, no thousands separator; an entry's numbers
    are the same text in both languages (so "0,02" beside "0.23" in a cell cannot come back)."""
    number = re.compile(r"\d+(?:[.,]\d+)*")
    differ = {k: (e["en"], e["es"]) for k, e in catalogue("explorer").items()
              if sorted(number.findall(e["en"])) != sorted(number.findall(e["es"]))}  # fmt: skip
    assert differ == {}
    assert "0.02" in catalogue("explorer")["overlay.lines"]["es"]


@browser_marks[0]
@browser_marks[1]
def test_the_spanish_induction_page_shows_no_english(page, presets) -> None:
    page.goto(presets["induction-es"]["path"].as_uri())
    roles = page.get_by_test_id("roles")
    assert roles.locator("h2").text_content().startswith("Funciones de las cabezas")
    table = page.get_by_test_id("roles-induction")
    assert table.locator("caption").text_content() == "inducción"
    assert table.locator("th").first.text_content() == "capa \\ cabeza"
    assert "capa 1" in table.inner_text()
    cell = page.get_by_test_id("role-induction-0-0").get_attribute("title")
    assert cell.startswith("capa 1, cabeza 1: puntuación de inducción 0.")
    options = page.get_by_test_id("head-select").locator("option").all_text_contents()
    assert options[0] == "1: cabeza 1"
    for mode in MODES + ["composed"]:
        page.get_by_test_id(f"mode-{mode}").click()
        titles = page.eval_on_selector_all("[title]", "els => els.map(e => e.title)")
        shown = [page.locator("body").inner_text(), *titles, *options]
        assert _english_left(shown) == [], mode


def test_a_run_page_is_titled_in_the_language(tmp_path):
    """The explorer's page of an attnlab run (``explore --checkpoint``, ``show(run)``) says
    its title and its model in the page's language."""
    from attnlab.explorer.sources.models import describe
    from attnlab.nn.model_config import ModelConfig

    cfg = ModelConfig(vocab_size=10, n_ctx=8, d_model=16, n_layer=2, mixer="mha", n_head=4,
                      position="rope", scale=False)
    assert describe(cfg) == "2 blocks of 4 heads, rope positions, no √d_k division"
    assert describe(cfg, "es") == "2 bloques de 4 cabezas, posiciones rope, sin dividir entre √d_k"
