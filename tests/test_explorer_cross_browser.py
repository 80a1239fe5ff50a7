"""A two-sequence page in real headless Chromium (/work/FORMAT.md): a translation model's
cross-attention drawn as an n×m grid of the weights ``head_weights`` computes, the encoder's
and the decoder's self-attention under their own masks whatever the causal switch says (the
switch disabled, with its reason), a fixed alignment, and the grid, overlay, text and
export of a view whose keys are another sequence."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from explorer_support import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    browser_fixture,
    browser_marks,
    numbers,
    page_fixture,
    two_sequence_page,
)

from attnlab.explorer import write_page
from attnlab.explorer.page.data import head_weights, view_attends

pytestmark = browser_marks

DATA = two_sequence_page()
TARGET, SOURCE = DATA["views"][0]["tokens"], DATA["views"][0]["sources"]


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> str:
    return write_page(DATA, tmp_path_factory.mktemp("cross") / "cross.html").as_uri()


def _grid(pg, n: int, m: int) -> np.ndarray:
    """The head view's table of weights, which must be n rows of m cells."""
    w = numbers(pg, "cell")
    assert len(w) == n * m
    return np.array(w).reshape(n, m)


def _expected(v: int, layer: int = 0, head: int = 0, scale: bool = True) -> np.ndarray:
    view = DATA["views"][v]
    h = view["layers"][layer]["heads"][head]
    own = scale == DATA.get("scale", True)
    return head_weights(h, causal=True, scale=scale, own=own, attends=view_attends(view))


def _open(pg, url: str, view: int, extra: str = "") -> None:
    pg.goto(f"{url}#view=head&sentence={view + 1}{extra}")


def test_cross_attention_is_an_n_by_m_grid_of_head_weights(page, url) -> None:
    _open(page, url, 0, "&layer=2&head=2")
    assert page.locator('[data-testid="key-head"]').all_text_contents() == SOURCE
    assert page.locator('[data-testid="query-head"]').all_text_contents() == TARGET
    np.testing.assert_allclose(_grid(page, 3, 4), _expected(0, 1, 1), atol=1e-12)
    causal = page.get_by_test_id("causal")
    assert causal.is_disabled() and not causal.is_checked()  # the page's switch starts on
    reason = page.get_by_test_id("causal-reason")
    assert reason.text_content() == ("Causal switch off for this view: the target's queries meet "
                                     "the source's keys: every source token is visible.")
    assert causal.get_attribute("title") == reason.text_content()
    assert page.get_by_test_id("view-kind").text_content() == "attention: cross"
    option = page.get_by_test_id("view-select").locator("option").first.text_content()
    assert option == "cross-attention (cross)"
    page.get_by_test_id("scale").uncheck()  # the √d_k switch still recomputes
    np.testing.assert_allclose(_grid(page, 3, 4), _expected(0, 1, 1, scale=False), atol=1e-12)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer-cross.png"), full_page=True)


def test_rows_columns_and_the_inside_run_over_the_source(page, url) -> None:
    _open(page, url, 0, "&token=2")  # “gato”
    w = _expected(0)
    np.testing.assert_allclose(numbers(page, "row-bar"), w[1], atol=1e-12)
    assert page.locator('[data-testid="row-bar"] .tok').all_text_contents() == SOURCE
    assert page.get_by_test_id("col").locator("li").count() == 0  # no source token hovered
    assert "hover a source token" in page.get_by_test_id("col-title").text_content()
    page.locator('[data-testid="source-token"]').nth(2).hover()  # “cat”: what attends to it
    np.testing.assert_allclose(numbers(page, "col-bar"), w[:, 2], atol=1e-12)
    np.testing.assert_allclose(numbers(page, "row-bar"), w[1], atol=1e-12)  # the row stays
    assert page.locator("td.hl-col").count() == 3 and page.locator("td.hl-row").count() == 4
    assert page.locator('[data-testid="inside-row"]').count() == 4
    np.testing.assert_allclose(numbers(page, "inside-weight", "data-value"), w[1], atol=1e-12)


@pytest.mark.parametrize(("v", "n", "reason"), [
    (1, 4, "an encoder sees the whole input at once"),
    (2, 3, "the model's own causal mask applies, whatever the switch"),
])  # fmt: skip
def test_self_attention_keeps_its_own_mask_whatever_the_switch(page, url, v, n, reason) -> None:
    for switch in ("1", "0"):  # the page's switch on, then off: the view does not move
        _open(page, url, v, f"&causal={switch}")
        w = _grid(page, n, n)
        np.testing.assert_allclose(w, _expected(v), atol=1e-12)
        assert page.get_by_test_id("causal").is_disabled()
        assert reason in page.get_by_test_id("causal-reason").text_content()
    causal = view_attends(DATA["views"][v]) == "causal"
    assert page.get_by_test_id("causal").is_checked() == causal
    assert (w[np.triu_indices(n, 1)] == 0).all() == causal


def test_a_fixed_alignment_says_why_and_shows_its_weights(page, url) -> None:
    _open(page, url, 3)
    np.testing.assert_allclose(_grid(page, 3, 4), _expected(3), atol=0)
    assert page.get_by_test_id("fixed").text_content().endswith("the decoder used at each step")
    assert page.get_by_test_id("causal-reason").is_hidden()  # one reason: the view's own
    assert all(page.get_by_test_id(s).is_disabled() for s in ("causal", "scale"))


def test_a_one_sequence_view_still_follows_the_switch(page, url, tmp_path) -> None:
    data = {"title": "t", "description": "d", "causal": True,
            "views": [DATA["views"][0], {"name": "plain", "tokens": TARGET,
                                          "layers": DATA["views"][2]["layers"]}]}
    page.goto(write_page(data, tmp_path / "mixed.html").as_uri() + "#sentence=2")
    causal = page.get_by_test_id("causal")
    assert causal.is_enabled() and causal.is_checked()
    assert page.get_by_test_id("view-kind").is_hidden()
    causal.uncheck()
    h = data["views"][1]["layers"][0]["heads"][0]
    np.testing.assert_allclose(_grid(page, 3, 3), head_weights(h, causal=False, scale=True),
                               atol=1e-12)  # fmt: skip
    page.get_by_test_id("view-select").select_option(index=0)  # back to the cross view
    np.testing.assert_allclose(_grid(page, 3, 4), _expected(0), atol=1e-12)


def test_grid_overlay_text_and_composed_of_a_cross_view(page, url) -> None:
    _open(page, url, 0)
    page.get_by_test_id("mode-grid").click()
    maps = page.locator('[data-testid="thumb-map"]')
    assert maps.count() == 4
    assert maps.first.evaluate("c => [c.width, c.height]") == [4, 3]  # m wide, n tall
    red = maps.nth(3).evaluate("c => Array.from(c.getContext('2d').getImageData(0, 0, 4, 3)"
                               ".data).filter((_, k) => k % 4 === 0)")  # fmt: skip
    np.testing.assert_allclose(red, np.round(255 + _expected(0, 1, 1).ravel() * (37 - 255)), atol=1)
    page.get_by_test_id("mode-overlay").click()
    label = "els => els.map(e => e.firstChild.nodeValue)"  # the text, not its <title>
    assert page.eval_on_selector_all('[data-testid="left-token"]', label) == TARGET
    assert page.eval_on_selector_all('[data-testid="right-token"]', label) == SOURCE
    page.locator('[data-testid="left-token"]').nth(2).hover()  # “negro”
    got = page.eval_on_selector_all('[data-testid="line"][data-head="0"]',
                                    "els => els.map(e => [+e.dataset.j, +e.dataset.weight])")
    assert dict(got) == pytest.approx(dict(enumerate(_expected(0)[2])), abs=1e-12)
    page.locator('[data-testid="right-token"]').nth(1).hover()  # “black”: what attends to it
    assert set(numbers(page, "line", "data-j")) == {1}
    page.get_by_test_id("mode-text").click()
    page.get_by_role("button", name="negro", exact=True).click()  # the target stays choosable
    spans = page.locator('[data-testid="text-token"]')
    assert spans.all_text_contents() == SOURCE  # the source is what is shaded
    np.testing.assert_allclose(numbers(page, "text-token"), _expected(0)[2], atol=1e-12)
    composed = page.get_by_test_id("mode-composed")
    assert composed.is_disabled() and "two-sequence view" in composed.get_attribute("title")


def _download(page, testid: str) -> bytes:
    with page.expect_download() as info:
        page.get_by_test_id(testid).click()
    return Path(info.value.path()).read_bytes()


def test_exports_name_the_source_tokens_as_keys(page, url) -> None:
    _open(page, url, 0, "&layer=2&head=1")
    rows = list(csv.DictReader(io.StringIO(_download(page, "export-csv").decode("utf-8"))))
    assert len(rows) == 12 and [r["key"] for r in rows[:4]] == SOURCE
    assert [r["query"] for r in rows[::4]] == TARGET
    np.testing.assert_allclose([float(r["weight"]) for r in rows], _expected(0, 1, 0).ravel(),
                               atol=1e-12)  # fmt: skip
    body = json.loads(_download(page, "export-json"))
    assert body["sources"] == SOURCE and body["attends"] == "cross" and body["causal"] is False
    png = _download(page, "export-png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
