"""The explorer page in real headless Chromium: click, switches, keyboard, phone width, escaping."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from attnlab.explorer import hand_compute, hand_designed_page, start_server, write_page
from attnlab.explorer.page import effective_tokens, page_weights

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"headless Chromium not at {CHROMIUM}"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (python) not installed")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def hand_url(tmp_path_factory) -> str:
    return write_page(hand_designed_page(), tmp_path_factory.mktemp("page") / "e.html").as_uri()


@pytest.fixture(scope="module")
def server():
    with start_server(hand_compute, max_chars=200) as srv:
        yield srv


@pytest.fixture
def page(browser):
    """A fresh tab that records script errors (a CSP violation is one) and every request."""
    pg = browser.new_page(viewport={"width": 1100, "height": 900})
    pg.errors, pg.requests = [], []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    assert pg.errors == []
    pg.close()


def _weights(pg, testid: str, attr: str = "data-weight") -> list[float]:
    return [float(x) for x in pg.eval_on_selector_all(
        f'[data-testid="{testid}"]', f'els => els.map(e => e.getAttribute("{attr}"))'
    )]  # fmt: skip


def _matrix(pg) -> np.ndarray:
    w = _weights(pg, "cell")
    n = int(round(len(w) ** 0.5))
    return np.array(w).reshape(n, n)  # (n, n)


def _head(name: str) -> dict:
    heads = hand_designed_page()["views"][0]["layers"][0]["heads"]
    return next(h for h in heads if h["name"] == name)


def test_click_cansada_row_peaks_on_gata(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_role("button", name="cansada", exact=True).click()
    row = _weights(page, "row-bar")
    tokens = page.locator('[data-testid="row-bar"] .tok').all_text_contents()
    assert tokens[int(np.argmax(row))] == "gata"
    assert "cansada" in page.get_by_test_id("row-title").text_content()
    # the page's weights are the NumPy ones
    expected = page_weights(_head("agreement")["scores"], 4, causal=False)
    np.testing.assert_allclose(row, expected[8], atol=1e-12)
    np.testing.assert_allclose(_matrix(page), expected, atol=1e-12)
    assert page.locator("tr.selected th").text_content() == "cansada"
    assert all(u.startswith("file://") for u in page.requests)  # nothing from the network
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer.png"), full_page=True)


def test_causal_switch_gives_exact_zeros_above_the_diagonal(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_test_id("head-select").select_option(label="2: previous word")
    upper = np.triu_indices(9, 1)
    assert (_matrix(page)[upper] > 0).all()
    page.get_by_test_id("causal").check()
    w = _matrix(page)
    assert (w[upper] == 0.0).all()
    texts = page.locator('[data-testid="cell"]').all_text_contents()
    assert all(texts[i * 9 + j] == "0" for i, j in zip(*upper, strict=True))
    assert [int(np.argmax(w[i])) for i in range(1, 9)] == list(range(8))
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-9)


def test_sqrt_switch_changes_weights_and_effective_tokens(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_role("button", name="estaba", exact=True).click()
    page.get_by_test_id("head-select").select_option(label="2: previous word")
    page.get_by_test_id("causal").check()
    scores = _head("previous word")["scores"]
    before = _weights(page, "eff", "data-value")
    page.get_by_test_id("scale").uncheck()
    after = _weights(page, "eff", "data-value")
    for scale, eff in ((True, before), (False, after)):
        expected = effective_tokens(page_weights(scores, 16, causal=True, scale=scale))
        np.testing.assert_allclose(eff, expected, rtol=1e-9)
    assert after[6] < before[6] - 0.5  # without ÷√d the row collapses onto one word
    assert "√16" not in page.get_by_test_id("formula").text_content()
    assert float(page.get_by_test_id("row-eff").get_attribute("data-value")) == after[6]


def test_keyboard_tab_to_a_word_and_press_enter(page, hand_url) -> None:
    page.goto(hand_url)
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.testid") == "word":
            break
    assert page.evaluate("document.activeElement.textContent") == "La"
    page.keyboard.press("Enter")
    assert "La" in page.get_by_test_id("row-title").text_content()
    assert page.locator('[data-testid="row-bar"]').count() == 9
    page.keyboard.press("Tab")  # focus stays on the words: "gata" is next
    page.keyboard.press(" ")
    assert "gata" in page.get_by_test_id("row-title").text_content()


def test_layer_head_and_view_selectors(page, tmp_path) -> None:
    rng = np.random.default_rng(0)

    def view(name: str, n: int) -> dict:
        tokens = [f"{name}{i}" for i in range(n)]
        layers = [{"heads": [{"name": f"h{h}", "d_k": 4, "scores": rng.normal(size=(n, n)).tolist()}
                             for h in range(2)]} for _ in range(2)]  # fmt: skip
        return {"name": name, "tokens": tokens, "layers": layers}

    data = {"title": "t", "description": "d", "causal": True, "views": [view("a", 3), view("b", 5)]}
    page.goto(write_page(data, tmp_path / "s.html").as_uri())
    assert page.get_by_test_id("causal").is_checked()
    page.get_by_test_id("view-select").select_option(label="b")
    page.get_by_test_id("layer-select").select_option(label="layer 2")
    page.get_by_test_id("head-select").select_option(label="2: h1")
    expected = page_weights(data["views"][1]["layers"][1]["heads"][1]["scores"], 4, causal=True)
    np.testing.assert_allclose(_matrix(page), expected, atol=1e-12)


@pytest.mark.parametrize("served", [False, True])
def test_phone_width_has_no_horizontal_overflow(browser, hand_url, server, served: bool) -> None:
    pg = browser.new_page(viewport={"width": 390, "height": 844})
    pg.goto(server.url if served else hand_url)
    if served:  # a very long word must wrap, not widen the page
        pg.get_by_test_id("text").fill("x" * 120 + " la gata")
        pg.get_by_test_id("submit").click()
        pg.get_by_role("button", name="gata", exact=True).click()
    else:
        pg.get_by_role("button", name="cansada", exact=True).click()
    pg.click("summary")  # open the W_Q / W_K tables too
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    pg.close()


def test_served_page_shows_typed_script_as_text(page, server) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(server.url)
    n_scripts = page.locator("script").count()
    evil = "<script>alert(1)</script>"
    page.get_by_test_id("text").fill(f"{evil} <img src=x onerror=alert(2)>")
    page.get_by_test_id("submit").click()
    word = page.get_by_role("button", name=evil, exact=True)
    word.click()
    assert word.text_content() == evil
    assert page.locator("img").count() == 0 and page.locator("script").count() == n_scripts
    assert dialogs == []
    assert all(u.startswith(server.url) for u in page.requests)


def test_served_page_refuses_long_input_with_a_message(page, server) -> None:
    page.goto(server.url)
    page.get_by_test_id("text").fill("la gata " * 30)  # 240 characters, limit 200
    page.get_by_test_id("submit").click()
    error = page.get_by_test_id("error")
    error.wait_for(state="visible")
    assert error.text_content() == "the input is 239 characters; the limit is 200"
    page.get_by_test_id("text").fill("la gata duerme")
    page.get_by_test_id("submit").click()
    page.get_by_role("button", name="duerme", exact=True).wait_for()
    assert error.is_hidden()
    page.errors.clear()  # the 400 answer is logged by Chromium as a failed resource


def test_model_page_row_is_the_models_own_attention(page, tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from attnlab.data.synthetic import Vocab
    from attnlab.explorer.build import page_data
    from attnlab.explorer.models import checkpoint_view
    from attnlab.nn.config import ModelConfig
    from attnlab.nn.model import LanguageModel

    words = Vocab(("the", "cat", "sat", "on", "a", "mat"))
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=6, n_ctx=8, d_model=16, n_layer=2, n_head=2, position="alibi")
    model = LanguageModel(cfg).eval()
    text = "the cat sat on a mat"
    data = page_data("m", "d", [checkpoint_view(model, words, text)], causal=True)
    page.goto(write_page(data, tmp_path / "m.html").as_uri())
    page.get_by_test_id("layer-select").select_option(label="layer 2")
    page.get_by_test_id("head-select").select_option(label="2: head 2")
    page.get_by_role("button", name="mat", exact=True).click()
    with torch.no_grad():
        attn = model.trace(torch.tensor([words.encode(text)])).weights
    np.testing.assert_allclose(_weights(page, "row-bar"), attn[1][0, 1, -1].numpy(), atol=1e-5)
