"""The explorer at real sizes, in headless Chromium (issue 27): each test measures the layout a
user tripped on and prints the widths it measured (``pytest -s`` shows them).

1. inside a head, the column heads ("÷ √128 (= 11.31)") fit their columns at d_k = 128;
2. the numbers table fits its panel at 16 and 20 tokens, at 1280 px, 900 px and in a notebook
   cell ("fit the page" applies to tables);
3. the one-head map of 500 tokens fits its panel, or says it is wider and scrolls;
4. changing the sentence keeps the layer and head;
5. no text of an exported PNG runs past its edges (the log colour bar's first tick read ".001");
6. the overlay's head colours are distinct for 12 and 16 heads (CIELAB ΔE);
7. pages of given weights: the √d_k box unticked, "weights as given", counts said right;
8. ``show()``'s result has a one-line text form.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from explorer_support import (  # noqa: F401 (fixtures)
    browser_fixture,
    browser_marks,
    long_page,
)

from attnlab.explorer import ExplorerView, show, weights_page, write_page

pytestmark = browser_marks


def _open(browser, html_path, width: int, hash_: str = "", height: int = 900):
    context = browser.new_context(viewport={"width": width, "height": height},
                                  accept_downloads=True)  # fmt: skip
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(html_path + hash_)
    page.wait_for_selector("body[data-ready=true]")
    return context, page


def _boxes(page, selector: str) -> list[dict]:
    return page.eval_on_selector_all(selector, """els => els.map(e => {
        const r = e.getBoundingClientRect();
        const range = document.createRange();
        range.selectNodeContents(e);
        const t = range.getBoundingClientRect();
        return {left: r.left, right: r.right, width: r.width, text: e.textContent,
                textLeft: t.left, textRight: t.right, textWidth: t.width};
    })""")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Pages written once for the module: name -> file URL."""
    folder = tmp_path_factory.mktemp("sizes")
    made = {
        "dk128": long_page(n=24, n_head=1, n_layer=1, d_k=128),
        "t16": long_page(n=16, n_head=2, n_layer=1, d_k=8),
        "t20": long_page(n=20, n_head=2, n_layer=1, d_k=8),
        "t40": long_page(n=40, n_head=1, n_layer=1, d_k=4),
        "t500": long_page(n=500, n_head=1, n_layer=1, d_k=4),
        "overlay16": long_page(n=12, n_head=16, n_layer=1, d_k=4),
    }
    two = long_page(n=10, n_head=3, n_layer=2, d_k=4)
    other = long_page(n=12, n_head=3, n_layer=2, d_k=4)["views"][0]
    two["views"].append({**other, "name": "second"})
    made["two"] = two
    return {name: write_page(d, folder / f"{name}.html").as_uri() for name, d in made.items()}


def test_inside_head_column_heads_fit_their_columns_at_d_k_128(browser, pages) -> None:
    context, page = _open(browser, pages["dk128"], 1280, "#token=10")
    heads = _boxes(page, '[data-testid="inside-table"] thead tr:first-child th')
    assert any("√128" in h["text"] for h in heads)
    for h, nxt in itertools.pairwise(heads):
        assert h["textWidth"] <= h["width"] + 0.5, h  # the text within its own column
        assert h["right"] <= nxt["left"] + 0.5, (h, nxt)  # and not under the next one
    div = next(h for h in heads if "√128" in h["text"])
    print(f"\n÷√d_k head at d_k=128: text {div['textWidth']:.0f} px in a {div['width']:.0f}-px "
          "column")  # fmt: skip
    assert page.errors == []
    context.close()


@pytest.mark.parametrize("name", ["t16", "t20"])
@pytest.mark.parametrize("width", [1280, 900])
def test_numbers_table_fits_its_panel(browser, pages, name: str, width: int) -> None:
    context, page = _open(browser, pages[name], width, "#token=3")
    n = int(name[1:])
    box = page.locator('[data-testid="matrix"]').locator("xpath=..").bounding_box()
    table = page.get_by_test_id("matrix")
    if table.is_visible():
        effs = _boxes(page, '[data-testid="eff"]')
        assert len(effs) == n
        right = max(e["right"] for e in effs)
        assert right <= box["x"] + box["width"] + 0.5, (right, box)  # the eff. column in view
        shown = f"table {table.bounding_box()['width']:.0f} px"
    else:  # too narrow for numbers: the map stands for the table, and fits
        canvas = page.locator('[data-testid="head-map"] canvas').bounding_box()
        assert canvas["x"] + canvas["width"] <= box["x"] + box["width"] + 0.5
        shown = f"map {canvas['width']:.0f} px"
    print(f"\n{n} tokens at {width} px: {shown} in a {box['width']:.0f}-px panel")
    assert page.errors == []
    context.close()


def test_numbers_table_fits_a_notebook_cell(browser, pages, tmp_path) -> None:
    """The page as a notebook shows it (``ExplorerView._repr_html_``), in a cell 820 px wide."""
    data = long_page(n=20, n_head=2, n_layer=1, d_k=8)
    outer = tmp_path / "notebook.html"
    outer.write_text('<!doctype html><div style="width:820px">'
                     f"{ExplorerView(data)._repr_html_()}</div>")  # fmt: skip
    context = context_ = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.goto(outer.as_uri())
    frame = page.frame_locator("iframe")
    frame.locator("body[data-ready=true]").wait_for()
    frame.get_by_test_id("word").nth(3).click()
    inner = page.frames[1]
    box = inner.locator('[data-testid="matrix"]').locator("xpath=..").bounding_box()
    if inner.get_by_test_id("matrix").is_visible():
        right = max(e["right"] for e in _boxes(inner, '[data-testid="eff"]'))
        shown = f"table {inner.get_by_test_id('matrix').bounding_box()['width']:.0f} px"
    else:
        canvas = inner.locator('[data-testid="head-map"] canvas').bounding_box()
        right = canvas["x"] + canvas["width"]
        shown = f"map {canvas['width']:.0f} px"
    assert right <= box["x"] + box["width"] + 0.5, (right, box)
    print(f"\n20 tokens in an 820-px notebook cell: {shown} in a {box['width']:.0f}-px panel")
    context_.close()


def test_one_head_map_of_500_tokens_fits_or_says_it_scrolls(browser, pages) -> None:
    """At 1280 px the map fits (1-px cells); narrowed to 640 px (the page refits on resize) it
    scrolls in its box, and a line says so. It was 2-px cells, 1,000 px in an 886-px box."""
    context, page = _open(browser, pages["t500"], 1280, "#token=450")
    for width in (1280, 640):
        if width != 1280:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_function("() => document.querySelector('[data-testid=matrix-map]')"
                                   ".clientWidth < 600")  # fmt: skip
        box = page.get_by_test_id("matrix-map").bounding_box()
        canvas = page.locator('[data-testid="head-map"] canvas').bounding_box()
        fits = canvas["x"] + canvas["width"] <= box["x"] + box["width"] + 0.5
        warned = page.get_by_test_id("map-wider").is_visible()
        print(f"\n500 tokens at {width} px: map {canvas['width']:.0f} px in a "
              f"{box['width']:.0f}-px panel, {'fits' if fits else 'scrolls, and says so'}")
        assert fits != warned  # every key in view, or a line that says to scroll
        if width == 1280:
            assert fits
        else:
            box_scrolls = "b => b.scrollWidth > b.clientWidth"
            assert page.get_by_test_id("matrix-map").evaluate(box_scrolls)
            assert "scroll sideways" in page.get_by_test_id("map-wider").text_content()
    assert page.errors == []
    context.close()


def test_changing_the_sentence_keeps_the_layer_and_head(browser, pages) -> None:
    context, page = _open(browser, pages["two"], 1280)
    page.get_by_test_id("layer-select").select_option(label="layer 2")
    page.get_by_test_id("head-select").select_option(index=2)
    page.get_by_test_id("view-select").select_option(index=1)
    assert page.get_by_test_id("layer-select").input_value() == "1"  # layer 2
    assert page.get_by_test_id("head-select").input_value() == "2"  # head 3
    assert "layer=2&head=3" in page.get_by_test_id("link").get_attribute("href")
    assert page.errors == []
    context.close()


# Text drawn on any canvas, with where it lands: the PNG's own canvas included
RECORD_TEXT = """
const drawn = [];
window.attnlabDrawn = drawn;
const fill = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
  const m = this.getTransform();
  const w = this.measureText(text).width;
  const left = this.textAlign === "center" ? x - w / 2 : this.textAlign === "right" ? x - w : x;
  drawn.push({text: String(text), left: m.a * left + m.e, right: m.a * (left + w) + m.e,
              canvas: this.canvas.width});
  return fill.call(this, text, x, y, ...rest);
};
"""


@pytest.mark.parametrize("colours", ["log", "power", "linear"])
def test_png_text_stays_within_the_picture(browser, pages, colours: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.add_init_script(RECORD_TEXT)
    page = context.new_page()
    page.goto(pages["t40"] + f"#token=3&colours={colours}")
    page.wait_for_selector("body[data-ready=true]")
    page.evaluate("() => { window.attnlabDrawn.length = 0; }")
    with page.expect_download():
        page.get_by_test_id("export-png").click()
    drawn = page.evaluate("() => window.attnlabDrawn")
    ticks = [d for d in drawn if re.fullmatch(r"[0-9.]+", d["text"])]
    assert ticks and {"0.001" if colours == "log" else "0"} <= {d["text"] for d in ticks}
    for d in drawn:
        assert d["left"] >= 0 and d["right"] <= d["canvas"], d
    first = next(d for d in ticks)
    print(f"\n{colours} bar's first tick {first['text']!r} drawn from x = {first['left']:.0f} px")
    context.close()


def _lab(rgb: tuple[int, int, int]) -> np.ndarray:
    """sRGB (0-255) to CIELAB (D65)."""
    c = np.array(rgb) / 255
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ c / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_overlay_head_colours_are_distinct(browser, pages) -> None:
    """Heads 9–12 were within ΔE 12 of heads 1–5 (Tableau after Okabe–Ito); 20 is a colour
    one tells apart at a glance on a thin line."""
    context, page = _open(browser, pages["overlay16"], 1280, "#view=overlay")
    colours = page.eval_on_selector_all(
        '[data-testid="overlay-heads"] .dot',
        "els => els.map(e => getComputedStyle(e).backgroundColor)")
    rgb = [tuple(int(x) for x in re.findall(r"\d+", c)[:3]) for c in colours]
    assert len(rgb) == 16
    for k in (12, 16):
        near = min(float(np.linalg.norm(_lab(a) - _lab(b)))
                   for a, b in itertools.combinations(rgb[:k], 2))  # fmt: skip
        print(f"\nnearest two of the first {k} head colours: ΔE {near:.1f}")
        assert near >= 20
    assert all(_lab(c)[0] <= 80 for c in rgb)  # none too light for a line on white
    context.close()


def test_a_page_of_given_weights_says_what_it_is(browser, tmp_path) -> None:
    rng = np.random.default_rng(0)
    w = rng.random((1, 1, 5, 5))
    w /= w.sum(-1, keepdims=True)
    data = weights_page(w, list("abcde"))
    assert "1 layer × 1 head over 5 tokens" in data["description"]
    url = write_page(data, tmp_path / "w.html").as_uri()
    context, page = _open(browser, url, 1280)
    scale = page.get_by_test_id("scale")
    assert not scale.is_checked() and scale.is_disabled()
    assert page.get_by_test_id("formula").text_content().startswith("weights as given")
    assert "(s)" not in page.locator("body").inner_text()
    context.close()
    assert "(s)" not in weights_page(np.ones((2, 3, 1, 1)), ["x"])["description"]


def test_describe_counts_blocks_and_heads_right() -> None:
    from attnlab.explorer.sources.models import describe
    from attnlab.nn.model_config import ModelConfig

    one = describe(ModelConfig(vocab_size=10, d_model=8, n_head=2, n_layer=1, n_ctx=8))
    assert one.startswith("1 block of 2 heads"), one


def test_show_has_a_one_line_text_form() -> None:
    text = repr(show())
    assert "\n" not in text and " at 0x" not in text
    assert "Hand-designed attention heads" in text and "1 layer × 3 heads, 9 tokens" in text
    assert ".save(" in text  # how to see it where HTML is not shown
