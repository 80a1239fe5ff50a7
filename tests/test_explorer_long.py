"""The explorer on a long sentence in headless Chromium: 128 tokens, 2 layers × 12 heads,
d_k = 64, in a 1280-px window. Labels never overlap (measured from the DOM boxes), the grid
has one row per layer, inside a head the answer columns stay on screen, exports are at 2×
with a colour bar, and the text and composed views show what the data says."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from explorer_support import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    browser_fixture,
    browser_marks,
    long_page,
    numbers,
    page_data,
)
from PIL import Image

from attnlab.explorer import write_page
from attnlab.explorer.page.data import head_weights

pytestmark = browser_marks
N, HEADS, LAYERS = 128, 12, 2
WIDE = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def long_file(tmp_path_factory) -> Path:
    data = long_page(N, HEADS, LAYERS, composed=True)
    return write_page(data, tmp_path_factory.mktemp("long") / "long.html")


@pytest.fixture(scope="module")
def data(long_file) -> dict:
    """The numbers the page holds (a page this large may store them at a lower precision)."""
    return page_data(long_file.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def url(long_file) -> str:
    return long_file.as_uri()


@pytest.fixture
def page(browser):
    """A 1280-px tab that records script errors (downloads allowed)."""
    context = browser.new_context(viewport=WIDE, accept_downloads=True)
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    yield pg
    assert pg.errors == []
    context.close()


def _weights(data: dict, layer: int, head: int) -> np.ndarray:
    return head_weights(data["views"][0]["layers"][layer]["heads"][head], causal=True, scale=True)


def _boxes(page, selector: str) -> list[dict]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.getBoundingClientRect())")


def _no_overlap(boxes: list[dict], axis: str) -> bool:
    """True when no two boxes overlap along ``axis`` ("x" or "y"): sorted along it, each ends
    before the next begins (half a pixel of rounding allowed)."""
    lo, size = ("left", "width") if axis == "x" else ("top", "height")
    spans = sorted((b[lo], b[lo] + b[size]) for b in boxes)
    return all(a_end <= b_lo + 0.5 for (_, a_end), (b_lo, _) in zip(spans, spans[1:], strict=False))


@pytest.mark.parametrize("frag, testid", [
    ("#token=100", "head-map"), ("#view=overlay&token=100", "overlay-map"),
    ("#view=composed&layer=2&token=7", "composed-rollout"), ("#token=100&zoom=full", "head-map"),
])  # fmt: skip
def test_map_labels_do_not_overlap(page, url, frag: str, testid: str) -> None:
    page.goto(url + frag)
    top = _boxes(page, f'[data-testid="{testid}"] .map-top .map-label')
    left = _boxes(page, f'[data-testid="{testid}"] .map-left .map-label')
    cell = float(page.get_by_test_id(testid).get_attribute("data-cell"))
    assert len(top) == len(left) >= N / np.ceil(14 / cell) - 2  # thinned, not dropped
    assert _no_overlap(top, "x") and _no_overlap(left, "y")
    assert all(b["width"] > 0 and b["height"] > 0 for b in top + left)
    chosen = page.locator(f'[data-testid="{testid}"] .map-left .focus')
    assert chosen.count() == 1  # the chosen token is always labelled
    word = page.locator('[data-testid="word"]').nth(int(chosen.get_attribute("data-index")))
    assert chosen.text_content() == word.text_content()


def test_grid_has_one_row_per_layer_and_marks_the_chosen_token(page, url) -> None:
    page.goto(url + "#view=grid")
    rows = page.locator('[data-testid="grid-row"]')
    assert rows.count() == LAYERS
    for li in range(LAYERS):
        thumbs = _boxes(page, f'[data-layer="{li}"] > [data-testid="thumb"]')
        assert len(thumbs) == HEADS and len({round(b["top"]) for b in thumbs}) == 1  # side by side
    assert page.locator('[data-testid="thumb-row"]').count() == 0
    page.locator('[data-testid="word"]').nth(64).click()
    marks = page.locator('[data-testid="thumb-row"]')
    assert marks.count() == LAYERS * HEADS
    mark = _boxes(page, '[data-testid="thumb-row"]')[5]
    frame = _boxes(page, '[data-testid="thumb-map"]')[5]
    assert mark["top"] - frame["top"] == pytest.approx(64 / N * frame["height"], abs=1.5)
    assert "token 65" in page.get_by_test_id("grid-chosen").text_content()
    page.locator('[data-testid="thumb-map"]').nth(13).hover(position={"x": 30, "y": 40})  # L2 H2
    assert page.get_by_test_id("tooltip").text_content().startswith("L2 H2 head 2: “")
    page.screenshot(path=str(_artifact("explorer-long-grid.png")))


def test_inside_head_columns_fit_a_1280_px_window(page, url, data) -> None:
    page.goto(url + "#token=100&layer=2&head=5")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDE["width"]
    for testid in ("inside-qk", "inside-scaled", "inside-weight"):
        boxes = _boxes(page, f'[data-testid="{testid}"]')
        assert len(boxes) == N and max(b["right"] for b in boxes) <= WIDE["width"]
    h = data["views"][0]["layers"][1]["heads"][4]
    q, k = np.array(h["q"]), np.array(h["k"])  # (n, 64)
    np.testing.assert_allclose(numbers(page, "inside-qk", "data-value"), k @ q[99], rtol=1e-12)
    assert page.locator('[data-testid="k-strip"]').count() == N
    assert page.locator('[data-testid="qk-strip"]').count() == N
    strip = page.locator('[data-testid="q-strip"]')
    assert strip.bounding_box()["width"] <= 256
    cell = strip.bounding_box()["width"] / 64
    strip.hover(position={"x": cell * 5.5, "y": 7})  # dimension 6 of q
    said = page.get_by_test_id("tooltip").text_content()
    assert said == f"q(“{_shown(data, 99)}”), dimension 6: {q[99, 5]:.4g}"


def _shown(data: dict, i: int) -> str:
    return data["views"][0]["tokens"][i].replace(" ", "·")


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


def _download_png(page) -> Image.Image:
    with page.expect_download() as info:
        page.get_by_test_id("export-png").click()
    return Image.open(io.BytesIO(Path(info.value.path()).read_bytes())).convert("RGB")


def _has_colour_bar(image: Image.Image, least: int) -> bool:
    """A row with a run of at least ``least`` px going from white to the page's blue, the
    red channel never rising: the colour bar."""
    red = np.asarray(image)[:, :, 0].astype(int)  # (height, width)
    green = np.asarray(image)[:, :, 1].astype(int)
    for row, g in zip(red, green, strict=True):
        falling = np.diff(row) <= 0
        start = 0
        for x in range(1, len(row)):
            if not falling[x - 1] or x == len(row) - 1:
                run = slice(start, x)
                ends = row[run][0] > 245 and row[run][-1] < 50 and g[run][-1] < 110
                if x - start >= least and ends:
                    return True
                start = x
    return False


@pytest.mark.parametrize("frag, shown", [
    ("#token=100", "head-map"), ("#view=grid", "grid"), ("#view=text&token=100", "text-view"),
    ("#view=composed&layer=2&token=100", "composed-raw,composed-rollout,composed-value"),
])  # fmt: skip
def test_png_export_is_twice_the_screen_with_a_colour_bar(page, url, frag: str, shown: str) -> None:
    page.goto(url + frag)
    on_screen = sum(page.get_by_test_id(t).bounding_box()["width"] for t in shown.split(","))
    image = _download_png(page)
    assert image.width >= 2 * on_screen
    assert _has_colour_bar(image, least=2 * 180)
    assert not _has_colour_bar(Image.new("RGB", (600, 50), "white"), least=100)  # it can fail
    image.save(_artifact(f"explorer-long-export-{shown.split(',')[0]}.png"))


def _pixel_red(page, testid: str, i: int, j: int) -> int:
    """The red channel at the centre of cell (i, j) of a labelled map's canvas."""
    cell = float(page.get_by_test_id(testid).get_attribute("data-cell"))
    return (
        page.get_by_test_id(testid)
        .locator("canvas")
        .evaluate(
            "(c, [x, y]) => c.getContext('2d').getImageData(x, y, 1, 1).data[0]",
            [(j + 0.5) * cell, (i + 0.5) * cell],
        )
    )


def _shade(w: float) -> float:
    return 255 + w * (37 - 255)  # the red channel of the page's blue at level w


def test_composed_mode_draws_raw_rollout_and_value_weighted(page, url, data) -> None:
    page.goto(url + "#layer=2")
    page.get_by_test_id("mode-composed").click()
    composed = data["views"][0]["composed"]
    assert page.get_by_test_id("composed-note").text_content() == composed["note"]
    raw = np.mean([_weights(data, 1, h) for h in range(HEADS)], axis=0)  # (n, n)
    expected = {"composed-raw": raw, "composed-rollout": np.array(composed["rollout"][1]),
                "composed-value": np.array(composed["value_weighted"][1])}  # fmt: skip
    for testid, w in expected.items():
        for i, j in ((0, 0), (50, 49), (127, 3), (127, 127)):
            assert _pixel_red(page, testid, i, j) == pytest.approx(_shade(w[i, j]), abs=1), testid
    assert not np.allclose(expected["composed-rollout"], raw, atol=0.05)  # three different pictures
    page.get_by_test_id("colour-scale").select_option("log")
    w = expected["composed-value"][127, 3]
    log_level = 1 + np.log10(w) / 3
    assert _pixel_red(page, "composed-value", 127, 3) == pytest.approx(_shade(log_level), abs=1)
    assert "view=composed" in page.url and "colours=log" in page.url
    page.screenshot(path=str(_artifact("explorer-long-composed.png")))


def test_composed_mode_is_off_without_composed_data_and_value_weighted_is_optional(
    page, tmp_path
) -> None:
    page.goto(write_page(long_page(12, 2, 2), tmp_path / "plain.html").as_uri() + "#view=composed")
    button = page.get_by_test_id("mode-composed")
    assert button.is_disabled() and "without composed attention" in button.get_attribute("title")
    assert page.get_by_test_id("mode-head").get_attribute("aria-pressed") == "true"
    data = long_page(12, 2, 2, composed=True)  # value-weighted is optional: the note says why
    del data["views"][0]["composed"]["value_weighted"]
    data["views"][0]["composed"]["note"] = "Value-weighted attention is not shown: no values."
    page.goto(write_page(data, tmp_path / "rollout.html").as_uri() + "#view=composed&layer=2")
    assert page.get_by_test_id("composed-rollout").is_visible()
    assert page.get_by_test_id("composed-value").count() == 0
    assert page.get_by_test_id("composed-note").text_content().endswith("not shown: no values.")
    with page.expect_download() as info:
        page.get_by_test_id("export-png").click()
    assert Path(info.value.path()).stat().st_size > 1000


def test_text_view_shades_each_token_by_the_chosen_row(page, url, data) -> None:
    page.goto(url + "#view=text&layer=1&head=3")
    spans = page.locator('[data-testid="text-token"]')
    assert spans.count() == N
    assert "".join(spans.all_text_contents()) == "".join(data["views"][0]["tokens"])  # as written
    spans.nth(90).click()
    w = _weights(data, 0, 2)
    np.testing.assert_allclose(numbers(page, "text-token"), w[90], atol=1e-12)
    spans.nth(40).hover()  # a preview of another row
    np.testing.assert_allclose(numbers(page, "text-token"), w[40], atol=1e-12)
    page.mouse.move(5, 5)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDE["width"]
    page.screenshot(path=str(_artifact("explorer-long-text.png")))


def test_crowded_lines_show_one_query_and_stripes_separate_at_full_size(page, url, data) -> None:
    page.goto(url + "#view=overlay")
    assert set(numbers(page, "line", "data-i")) == {N - 1}  # none chosen: the last token's lines
    page.locator('[data-testid="word"]').nth(50).click()
    assert set(numbers(page, "line", "data-i")) == {50}
    assert set(numbers(page, "line", "data-head")) == set(range(HEADS))
    assert "strongest head" in page.get_by_test_id("stripes-note").text_content()
    image = _download_png(page)  # the picture of the overlay: 2× the map at least
    assert image.width >= 2 * page.get_by_test_id("overlay-map").bounding_box()["width"]
    page.get_by_test_id("zoom").select_option("full")
    cell = float(page.get_by_test_id("overlay-map").get_attribute("data-cell"))
    assert cell >= 3 * HEADS + 1  # 2-px stripes and 1-px gaps
    assert "one stripe per shown head" in page.get_by_test_id("stripes-note").text_content()
    # inside the cell (50, 50): one 2-px stripe per head, each followed by a 1-px gap
    rgba = page.get_by_test_id("overlay-matrix").evaluate(
        "(c, s) => Array.from(c.getContext('2d').getImageData(50 * s, 50 * s + 2, s, 1).data)",
        cell,
    )
    rgb = np.array(rgba).reshape(-1, 4)[:, :3]  # (cell, 3)
    background = (248, 250, 252)
    assert all(tuple(rgb[3 * k + 2]) == background for k in range(HEADS))  # the gaps
    assert sum(tuple(rgb[3 * k]) != background for k in range(HEADS)) >= HEADS // 2  # the stripes
    page.screenshot(path=str(_artifact("explorer-long-overlay.png")))


def test_hovering_a_map_label_previews_its_token(page, url, data) -> None:
    page.goto(url + "#token=100")
    label = page.locator('[data-testid="head-map"] .map-left .map-label').nth(3)
    i = int(label.get_attribute("data-index"))
    label.hover()
    assert _shown(data, i) in page.get_by_test_id("row-title").text_content()
    top = sorted(_weights(data, 0, 0)[i], reverse=True)[:16]  # the 16 heaviest, in order
    np.testing.assert_allclose(numbers(page, "row-bar"), top, atol=1e-12)
    box = page.locator('[data-testid="head-map"] .map-row').bounding_box()
    cell = float(page.get_by_test_id("head-map").get_attribute("data-cell"))
    canvas = page.locator('[data-testid="head-map"] canvas').bounding_box()
    assert box["y"] == pytest.approx(canvas["y"] + i * cell, abs=0.5)  # its row outlined


@pytest.mark.parametrize("d_k", [128, 256])
def test_inside_head_fits_at_wide_heads(page, tmp_path, d_k: int) -> None:
    url = write_page(long_page(24, 2, 1, d_k=d_k), tmp_path / "wide.html").as_uri()
    page.goto(url + "#token=24")
    for testid in ("inside-qk", "inside-scaled", "inside-weight"):
        assert max(b["right"] for b in _boxes(page, f'[data-testid="{testid}"]')) <= WIDE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDE["width"]
