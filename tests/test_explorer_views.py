"""The explorer's views in headless Chromium: every head in a grid, the heads of a layer
overlaid (lines both ways on hover), export (files that parse), the view restored from its URL,
the switches on a trained model, a view whose switches cannot work, and the notebook frame."""

from __future__ import annotations

import csv
import io
import json
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from explorer_support import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    browser_fixture,
    browser_marks,
    matrix,
    numbers,
    page_data,
    page_fixture,
    train_tiny_run,
)

from attnlab.data.synthetic import Vocab
from attnlab.explorer import hand_compute, hand_designed_page, show, start_server, write_page
from attnlab.explorer.page.data import effective_tokens, head_weights
from attnlab.explorer.sources.models import checkpoint_view, model_page
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig

pytestmark = browser_marks
WORDS = Vocab(tuple("the cat sat on a mat and dog ran".split()))
TEXT = "the cat sat on a mat and the dog ran"


@pytest.fixture(scope="module")
def model_data() -> dict:
    """A random attnlab model of 2 blocks × 3 heads (RoPE) on TEXT."""
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=WORDS.size, n_ctx=16, d_model=24, n_layer=2, n_head=3,
                      position="rope")  # fmt: skip
    model = LanguageModel(cfg).eval()
    return model_page(model, [checkpoint_view(model, WORDS, TEXT)], "m", "d")


@pytest.fixture(scope="module")
def model_url(model_data, tmp_path_factory) -> str:
    return write_page(model_data, tmp_path_factory.mktemp("m") / "m.html").as_uri()


@pytest.fixture(scope="module")
def hand_url(tmp_path_factory) -> str:
    return write_page(hand_designed_page(), tmp_path_factory.mktemp("h") / "h.html").as_uri()


def _heads(data: dict) -> list[list[dict]]:
    return [layer["heads"] for layer in data["views"][0]["layers"]]


def test_grid_shows_every_head_and_opens_one_large(page, model_url, model_data) -> None:
    page.goto(model_url + "#view=grid")
    thumbs = page.locator('[data-testid="thumb"]')
    assert thumbs.count() == 6
    heads = _heads(model_data)
    for index, (li, hi) in enumerate([(0, 0), (1, 2)]):  # the map is the head's weights
        red = page.locator('[data-testid="thumb-map"]').nth(3 * li + hi).evaluate(
            "c => Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data)"
            ".filter((_, k) => k % 4 === 0)")  # fmt: skip
        w = head_weights(heads[li][hi], causal=True, scale=True, own=True).ravel()
        np.testing.assert_allclose(red, np.round(255 + w * (37 - 255)), atol=1, err_msg=index)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer-grid.png"), full_page=True)
    thumbs.nth(5).click()  # layer 2, head 3
    assert page.get_by_test_id("mode-head").get_attribute("aria-pressed") == "true"
    assert page.get_by_test_id("layer-select").input_value() == "1"
    assert page.get_by_test_id("head-select").input_value() == "2"
    expected = head_weights(heads[1][2], causal=True, scale=True, own=True)
    np.testing.assert_allclose(matrix(page), expected, atol=1e-12)
    assert "view=head&layer=2&head=3" in page.url


def test_overlay_draws_each_head_in_its_colour_and_hovers_both_ways(page, hand_url) -> None:
    page.goto(hand_url + "#view=overlay&causal=1")
    heads = _heads(hand_designed_page())[0]
    w = [head_weights(h, causal=True, scale=True) for h in heads]  # 3 × (n, n)
    lines = page.locator('[data-testid="line"]')
    drawn = {(int(h), int(i), int(j)) for h, i, j in zip(
        *(numbers(page, "line", a) for a in ("data-head", "data-i", "data-j")), strict=True)}
    assert drawn == {(h, i, j) for h in range(3) for i in range(9) for j in range(9)
                     if w[h][i, j] >= 0.02}  # fmt: skip
    colours = {lines.nth(k).get_attribute("stroke") for k in range(lines.count())}
    assert len(colours) == 3
    before = page.get_by_test_id("overlay-matrix").evaluate("c => c.toDataURL()")
    page.locator('[data-testid="overlay-head"]').nth(1).uncheck()  # previous word off
    assert 1 not in numbers(page, "line", "data-head")
    assert page.get_by_test_id("overlay-matrix").evaluate("c => c.toDataURL()") != before
    page.locator('[data-testid="left-token"]').nth(8).hover()  # cansada: what it attends to
    assert set(numbers(page, "line", "data-i")) == {8}
    for h in (0, 2):
        got = page.eval_on_selector_all(f'[data-testid="line"][data-head="{h}"]',
                                        "els => els.map(e => [+e.dataset.j, +e.dataset.weight])")
        assert dict(got) == pytest.approx({j: x for j, x in enumerate(w[h][8]) if x > 0}, abs=1e-12)
    page.locator('[data-testid="right-token"]').nth(1).hover()  # gata: what attends to it
    assert set(numbers(page, "line", "data-j")) == {1}
    got = page.eval_on_selector_all('[data-testid="line"][data-head="0"]',
                                    "els => els.map(e => [+e.dataset.i, +e.dataset.weight])")
    assert dict(got) == pytest.approx({i: x for i, x in enumerate(w[0][:, 1]) if x > 0}, abs=1e-12)
    assert "off=2" in page.url


def _download(page, testid: str):
    with page.expect_download() as info:
        page.get_by_test_id(testid).click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


def _png_size(blob: bytes) -> tuple[int, int]:
    assert blob[:8] == b"\x89PNG\r\n\x1a\n" and blob[12:16] == b"IHDR"
    return struct.unpack(">II", blob[16:24])


def test_export_png_csv_json_files_that_parse(page, model_url, model_data) -> None:
    heads = _heads(model_data)
    tokens = model_data["views"][0]["tokens"]
    page.goto(model_url + "#view=head&layer=2&head=2&scale=0")
    name, blob = _download(page, "export-csv")
    rows = list(csv.DictReader(io.StringIO(blob.decode("utf-8"))))
    assert name == "attention-layer2-head2.csv" and len(rows) == 100
    expected = head_weights(heads[1][1], causal=True, scale=False)
    got = np.array([float(r["weight"]) for r in rows]).reshape(10, 10)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert [r["key"] for r in rows[:10]] == tokens and rows[-1]["query"] == "ran"
    name, blob = _download(page, "export-png")
    assert name == "attention-layer2-head2.png" and min(_png_size(blob)) > 100
    page.get_by_test_id("mode-overlay").click()
    name, blob = _download(page, "export-json")
    body = json.loads(blob)
    assert name == "attention-layer2-overlaid.json" and body["scale"] is False
    assert [(h["layer"], h["head"]) for h in body["heads"]] == [(2, 1), (2, 2), (2, 3)]
    np.testing.assert_allclose(body["heads"][1]["weights"], expected, atol=1e-12)
    page.get_by_test_id("mode-grid").click()
    name, blob = _download(page, "export-png")
    width, height = _png_size(blob)
    assert name == "attention-all-heads.png" and width > 3 * 96 and height > 2 * 96
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / name).write_bytes(blob)


def test_a_link_reopens_the_same_view(browser, page, hand_url) -> None:
    page.goto(hand_url)
    page.get_by_test_id("head-select").select_option(label="3: subject")
    page.get_by_role("button", name="estaba", exact=True).click()
    page.get_by_test_id("causal").check()
    page.get_by_test_id("scale").uncheck()
    link = page.url
    assert link.endswith("#view=head&layer=1&head=3&token=7&causal=1&scale=0")
    assert page.get_by_test_id("link").get_attribute("href") == link[len(hand_url):]
    shown = matrix(page)
    other = browser.new_page()
    other.goto(link)
    assert other.get_by_test_id("head-select").input_value() == "2"
    assert "estaba" in other.get_by_test_id("row-title").text_content()
    assert other.get_by_test_id("causal").is_checked()
    assert not other.get_by_test_id("scale").is_checked()
    np.testing.assert_array_equal(matrix(other), shown)
    other.goto(hand_url + "#view=overlay&off=1,3")
    boxes = other.locator('[data-testid="overlay-head"]')
    assert [boxes.nth(k).is_checked() for k in range(3)] == [False, True, False]
    other.goto(hand_url + "#view=grid&layer=9&head=-2&token=99")  # out of range: defaults
    assert other.locator('[data-testid="thumb"].current').get_attribute("data-head") == "0"
    other.close()


def test_a_link_to_the_served_page_reopens_the_typed_sentence(page) -> None:
    with start_server(hand_compute) as srv:
        page.goto(srv.url)
        page.get_by_test_id("text").fill("El perro que mordió al gato estaba muy cansado")
        page.get_by_test_id("submit").click()
        page.get_by_role("button", name="cansado", exact=True).click()
        link = page.url
        fresh = page.context.new_page()
        fresh.goto(link)
        fresh.get_by_role("button", name="perro", exact=True).wait_for()
        assert "cansado" in fresh.get_by_test_id("row-title").text_content()
        assert fresh.get_by_test_id("text").input_value().startswith("El perro")
        fresh.close()


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """A model of `attnlab train` (BPE tokens with leading spaces), 30 steps on a tiny text."""
    from attnlab.train.run_config import TrainConfig

    return train_tiny_run(
        tmp_path_factory.mktemp("run"),
        ModelConfig(vocab_size=300, n_ctx=16, d_model=32, n_layer=2, n_head=2),
        TrainConfig(steps=30, batch_size=8, lr=3e-3, eval_every=0, device="cpu"))


def test_switches_on_a_trained_model(page, trained_run, tmp_path) -> None:
    from attnlab.cli import main as cli_main

    out = tmp_path / "run.html"
    assert cli_main.main(["explore", "--checkpoint", str(trained_run), "--text",
                          "the king speaks to my lord", "--out", str(out)]) == 0  # fmt: skip
    data = page_data(out.read_text(encoding="utf-8"))
    head = _heads(data)[1][0]
    n = len(data["views"][0]["tokens"])
    page.goto(out.as_uri() + f"#layer=2&head=1&token={n}")
    assert "·speaks" in page.locator('[data-testid="word"]').all_text_contents()  # space shown
    start = matrix(page)
    np.testing.assert_allclose(start, head_weights(head, causal=True, scale=True, own=True))
    assert "the model's own weights" in page.get_by_test_id("formula").text_content()
    eff_on = float(page.get_by_test_id("row-eff").get_attribute("data-value"))
    page.get_by_test_id("scale").uncheck()
    off = head_weights(head, causal=True, scale=False)
    np.testing.assert_allclose(matrix(page), off, atol=1e-12)
    assert float(page.get_by_test_id("row-eff").get_attribute("data-value")) == pytest.approx(
        effective_tokens(off)[n - 1]) != pytest.approx(eff_on)  # fmt: skip
    page.get_by_test_id("causal").uncheck()
    assert (matrix(page)[np.triu_indices(n, 1)] > 0).all()  # the future, unmasked


def test_a_view_whose_switches_cannot_work_says_why(page, tmp_path) -> None:
    head = {"name": "h", "d_k": 4, "weights": [[1.0, 0.0], [0.25, 0.75]]}
    data = {"title": "t", "description": "d", "causal": True, "views": [{
        "name": "v", "tokens": ["a", "b"], "fixed": "no reader for this family",
        "layers": [{"heads": [head]}]}]}  # fmt: skip
    page.goto(write_page(data, tmp_path / "f.html").as_uri())
    assert page.get_by_test_id("causal").is_disabled()
    assert page.get_by_test_id("scale").is_disabled()
    assert page.get_by_test_id("fixed").text_content() == "Switches off: no reader for this family"
    np.testing.assert_array_equal(matrix(page), head["weights"])
    page.get_by_role("button", name="b", exact=True).click()
    assert "not available: no reader" in page.get_by_test_id("inside-body").text_content()


def test_notebook_frame_runs_offline(page, tmp_path) -> None:
    frame_html = show(None, "La gata duerme")._repr_html_()
    host = tmp_path / "notebook.html"
    host.write_text(f"<!doctype html><meta charset='utf-8'><body>{frame_html}</body>",
                    encoding="utf-8")  # fmt: skip
    page.goto(host.as_uri())
    inner = page.frame_locator("iframe")
    inner.get_by_role("button", name="gata", exact=True).click()
    assert "gata" in inner.get_by_test_id("row-title").text_content()
    assert all(u.startswith("file://") or u == "about:srcdoc" for u in page.requests)
