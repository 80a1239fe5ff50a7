"""The explorer in Spanish (issue 30): ``attnlab explore --lang es`` and ``show(..., lang="es")``
give a page whose buttons, switches, captions and notes come from the catalogue's Spanish
(``attnlab/i18n/explorer.json``), over the chapter's sentence, and that still works in
Chromium: click a word, read the weights, toggle the switches."""

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
