"""The explorer page in real headless Chromium: one head (click, switches, keyboard, both
directions on hover, inside the head), phone width, escaping, and the faults once found:
long tokens, the text box's own limit, an over-long URL, the hand heads' note."""

from __future__ import annotations

import numpy as np
import pytest
from explorer_support import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    browser_fixture,
    browser_marks,
    matrix,
    numbers,
    page_fixture,
)

from attnlab.explorer import (
    hand_compute,
    hand_designed_page,
    render_page,
    start_server,
    write_page,
)
from attnlab.explorer.page.data import effective_tokens, head_weights, page_weights

pytestmark = browser_marks


@pytest.fixture(scope="module")
def hand_url(tmp_path_factory) -> str:
    return write_page(hand_designed_page(), tmp_path_factory.mktemp("page") / "e.html").as_uri()


@pytest.fixture(scope="module")
def server():
    with start_server(hand_compute, max_chars=200) as srv:
        yield srv


def _head(name: str) -> dict:
    heads = hand_designed_page()["views"][0]["layers"][0]["heads"]
    return next(h for h in heads if h["name"] == name)


def test_click_cansada_row_peaks_on_gata(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_role("button", name="cansada", exact=True).click()
    row = numbers(page, "row-bar")
    tokens = page.locator('[data-testid="row-bar"] .tok').all_text_contents()
    assert tokens[int(np.argmax(row))] == "gata" and round(max(row), 3) == 0.804
    assert "cansada" in page.get_by_test_id("row-title").text_content()
    expected = head_weights(_head("agreement"), causal=False, scale=True)  # the page's own math
    np.testing.assert_allclose(row, expected[8], atol=1e-12)
    np.testing.assert_allclose(matrix(page), expected, atol=1e-12)
    assert page.locator("tr.selected th").text_content() == "cansada"
    assert all(u.startswith("file://") for u in page.requests)  # nothing from the network
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer.png"), full_page=True)


def test_causal_switch_gives_exact_zeros_above_the_diagonal(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_test_id("head-select").select_option(label="2: previous word")
    upper = np.triu_indices(9, 1)
    assert (matrix(page)[upper] > 0).all()
    page.get_by_test_id("causal").check()
    w = matrix(page)
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
    head = _head("previous word")
    before = numbers(page, "eff", "data-value")
    page.get_by_test_id("scale").uncheck()
    after = numbers(page, "eff", "data-value")
    for scale, eff in ((True, before), (False, after)):
        expected = effective_tokens(head_weights(head, causal=True, scale=scale))
        np.testing.assert_allclose(eff, expected, rtol=1e-9)
    assert after[6] < before[6] - 0.5  # without ÷√d the row collapses onto one word
    assert "√16" not in page.get_by_test_id("formula").text_content()
    assert float(page.get_by_test_id("row-eff").get_attribute("data-value")) == after[6]


def test_hover_shows_what_a_token_attends_to_and_what_attends_to_it(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_role("button", name="La", exact=True).click()
    w = head_weights(_head("agreement"), causal=False, scale=True)  # (n, n)
    page.get_by_role("button", name="gata", exact=True).hover()
    assert "gata" in page.get_by_test_id("row-title").text_content()
    np.testing.assert_allclose(numbers(page, "row-bar"), w[1], atol=1e-12)  # gata → keys
    np.testing.assert_allclose(numbers(page, "col-bar"), w[:, 1], atol=1e-12)  # queries → gata
    assert "What attends to “gata”" in page.get_by_test_id("col-title").text_content()
    assert page.locator("td.hl-col").count() == 9 and page.locator("td.hl-row").count() == 9
    page.locator('[data-testid="key-head"]').nth(8).hover()  # the matrix's column head
    np.testing.assert_allclose(numbers(page, "col-bar"), w[:, 8], atol=1e-12)
    page.get_by_test_id("title").hover()  # away: back to the chosen token, La
    assert "“La”" in page.get_by_test_id("row-title").text_content()
    np.testing.assert_allclose(numbers(page, "row-bar"), w[0], atol=1e-12)


def test_inside_a_head_shows_q_keys_dot_products_division_and_softmax(page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_role("button", name="cansada", exact=True).click()
    head = _head("agreement")
    assert "feminine 3" in page.get_by_test_id("inside-q").text_content()
    q, k = np.array(head["q"]), np.array(head["k"])
    np.testing.assert_allclose(numbers(page, "inside-qk", "data-value"), k @ q[8])  # 9 on gata
    np.testing.assert_allclose(numbers(page, "inside-scaled", "data-value"), k @ q[8] / 2)
    weights = numbers(page, "inside-weight", "data-value")
    np.testing.assert_allclose(weights, head_weights(head, causal=False, scale=True)[8], atol=1e-12)
    page.get_by_test_id("scale").uncheck()
    assert "÷ 1 (switch off)" in page.get_by_test_id("inside-table").text_content()
    np.testing.assert_allclose(numbers(page, "inside-weight", "data-value"),
                               page_weights(q @ k.T, 4, causal=False, scale=False)[8])  # fmt: skip


def test_keyboard_tab_to_a_word_and_press_enter(page, hand_url) -> None:
    page.goto(hand_url)
    for _ in range(30):
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
    np.testing.assert_allclose(matrix(page), expected, atol=1e-12)


@pytest.mark.parametrize("mode", ["head", "grid", "overlay", "text"])
def test_phone_width_has_no_horizontal_overflow(browser, server, mode: str) -> None:
    pg = browser.new_page(viewport={"width": 390, "height": 844})
    pg.goto(f"{server.url}#view={mode}")
    pg.get_by_test_id("text").fill("x" * 150 + " la gata")  # a very long word
    pg.get_by_test_id("submit").click()
    if mode == "text":  # the sentence is the text to click
        pg.locator('[data-testid="text-token"]', has_text="x" * 150).wait_for()  # the new text
        pg.locator('[data-testid="text-token"]').last.click()
    else:
        pg.locator('[data-testid="word"][title]').wait_for()  # the new sentence's shortened word
        pg.get_by_role("button", name="gata", exact=True).click()
    if mode == "head":
        pg.click('[data-testid="head-weights"] summary')  # open the W_Q / W_K tables too
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    pg.close()


def test_a_5000_character_word_is_shortened_and_whole_on_hover(page, server) -> None:
    page.goto(server.url)
    word = "w" * 120 + "z" * 30  # the server's cap here is 200 characters
    page.get_by_test_id("text").fill(f"{word} la gata")
    page.get_by_test_id("submit").click()
    button = page.locator('[data-testid="word"][title]')  # the new sentence's shortened word
    button.wait_for()
    assert button.text_content() == "w" * 20 + "…" + "z" * 8
    assert button.get_attribute("title") == word
    head = {"name": "h", "d_k": 1, "scores": [[0, 0], [0, 0]]}
    data = {"title": "t", "description": "d",
            "views": [{"name": "v", "tokens": ["x" * 5000, "y"], "layers": [{"heads": [head]}]}]}
    page.set_content(render_page(data))
    page.get_by_role("button", name="y", exact=True).click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1100
    assert page.locator('[data-testid="key-head"]').first.get_attribute("title") == "x" * 5000


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
    page.get_by_test_id("mode-overlay").click()  # token labels in SVG and canvas too
    label = page.locator('[data-testid="left-token"]').first
    assert label.evaluate("e => e.firstChild.nodeValue") == evil
    assert page.locator("img").count() == 0 and dialogs == []
    assert all(u.startswith(server.url) for u in page.requests)


def test_text_box_has_its_own_limit_and_the_server_its_own(page, server) -> None:
    page.goto(server.url)
    box = page.get_by_test_id("text")
    assert box.get_attribute("maxlength") == "200"
    box.focus()
    page.keyboard.insert_text("la gata " * 30)  # 240 characters typed: the box keeps 200
    assert len(box.input_value()) == 200
    box.evaluate("(el, v) => { el.value = v; }", "la gata " * 30)  # past the box, as a script could
    sent = len(page.requests)
    page.get_by_test_id("submit").click()
    error = page.get_by_test_id("error")
    error.wait_for(state="visible")
    assert error.text_content() == "the input is 240 characters; the limit is 200"
    assert len(page.requests) == sent  # refused in the page, nothing sent
    box.fill("la gata duerme")
    page.get_by_test_id("submit").click()
    page.get_by_role("button", name="duerme", exact=True).wait_for()
    assert error.is_hidden()
    # the hand heads' note speaks of this sentence, not of the default one
    assert "cansada" not in page.get_by_test_id("note").text_content()


def test_over_long_url_gets_a_message_the_page_shows(page) -> None:
    with start_server(hand_compute, max_chars=20_000) as srv:  # so the page lets it through
        page.goto(srv.url)
        page.get_by_test_id("text").fill("é" * 3000)  # 18,000 bytes percent-encoded
        page.get_by_test_id("submit").click()
        error = page.get_by_test_id("error")
        error.wait_for(state="visible")
        assert error.text_content().startswith("the request URL is 18")
        assert "the limit is 16384: send a shorter sentence" in error.text_content()
    page.errors.clear()  # Chromium logs the 414 answer as a failed resource


def test_zero_rows_are_said_hidden_only_where_they_are(page, hand_url) -> None:
    page.goto(hand_url)
    page.click('[data-testid="head-weights"] summary')
    captions = page.locator('[data-testid="matrices"] caption')
    assert captions.all_text_contents() == [
        "X: features of each word",
        "W_Q (rows not shown are zero: 2 of 5)",  # agreement: noun and subject ask for nothing
        "W_K (rows not shown are zero: 1 of 5)",
    ]
    shown = page.locator('[data-testid="matrices"] table').nth(1).locator("th[scope=row]")
    assert shown.all_text_contents() == ["adjective", "feminine", "masculine"]
    page.get_by_test_id("head-select").select_option(label="2: previous word")
    assert captions.nth(1).text_content() == "W_Q"  # its 16 rows are all used: nothing hidden


def test_page_states_how_its_weights_are_stored(page, tmp_path) -> None:
    head = {"name": "h", "d_k": 1, "scores": [[0, 0], [0, 0]]}
    view = {"name": "v", "tokens": ["a", "b"], "layers": [{"heads": [head]}]}
    data = {"title": "t", "description": "d", "views": [view]}
    page.goto(write_page(data, tmp_path / "plain.html").as_uri())
    assert page.get_by_test_id("encoding").is_hidden()
    data["encoding"] = {"precision": "float16 (about 3 significant digits)"}
    page.goto(write_page(data, tmp_path / "fp16.html").as_uri())
    said = page.get_by_test_id("encoding").text_content()
    assert said == "Weights stored as float16 (about 3 significant digits)."


def test_text_view_reads_as_the_sentence_and_shades_the_chosen_row(page, hand_url) -> None:
    page.goto(hand_url + "#view=text&token=9")
    text = page.get_by_test_id("text-view").text_content()
    assert text == "La gata que perseguía al ratón estaba muy cansada"  # words set apart
    expected = head_weights(_head("agreement"), causal=False, scale=True)[8]
    np.testing.assert_allclose(numbers(page, "text-token"), expected, atol=1e-12)
    gata = page.locator('[data-testid="text-token"]').nth(1)
    assert gata.get_attribute("title") == "weight 0.8041" and "dark" in gata.get_attribute("class")
    assert page.get_by_test_id("words").is_hidden()  # the text is where a token is chosen
