"""report.html in a real headless Chromium: every figure shows, nothing is fetched, and at
1280 and 800 px wide nothing scrolls sideways (a figure of 1,200 px is shown at the column's
width, the claim table fits, a wide table scrolls inside its own box).

Needs /usr/bin/chromium and the ``playwright`` Python package (no browser download:
the system Chromium is used). Saves screenshots to ``test-artifacts/report.png`` and
``test-artifacts/report-top-{en,es}-{1280,800}.png`` (the first screen).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attnlab.report import write_report

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


def _png(path: Path, title: str, size: tuple[float, float] = (5, 2.5)) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.plot([1, 2, 4, 8], [1, 4, 16, 64], "o-")
    ax.set_title(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    envelopes = {}
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "table.md").write_text(
            "| n | ms |\n|---:|---:|\n| 128 | 1.5 |\n| 256 | 5.9 |\n")
        _png(tmp_path / name / "figure.png", f"{name} figure")
        envelopes[name] = {"name": name, "title": f"The {name} experiment", "profile": "quick",
                           "seeds": 1, "settings": {"steps": 10}, "quick_changes": "fewer steps",
                           "record": {}, "wall_s": 3.0}
    verdicts = [{"id": "first.x", "text": "time grows as n²", "rule": "exponent > 1.8",
                 "status": "held", "why": "one evaluation (no training)", "trained": False,
                 "seeds": 1, "experiment": "first",
                 "parts": [{"name": "", "rule": "exponent > 1.8", "unit": "exponent",
                            "margins": [0.17], "mean": 0.17, "se": None,
                            "numbers": {"exponent": 1.97}}]}]
    meta = {"profile": "quick", "seeds": 1, "wall_s": 6.0, "machine": {"CPU count": 2}}
    return write_report(envelopes, verdicts, tmp_path, meta)["html"]


def test_report_renders_offline_with_every_figure(report: Path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing")
    sync_api = pytest.importorskip("playwright.sync_api")
    fetched: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: fetched.append(r.url))
            page.goto(report.as_uri())
            page.wait_for_load_state("load")
            images = page.eval_on_selector_all(
                "img",
                "els => els.map(e => ({w: e.naturalWidth, h: e.naturalHeight, done: e.complete,"
                " shown: e.getBoundingClientRect().width > 0"
                " && getComputedStyle(e).visibility !== 'hidden'}))",
            )
            assert len(images) == 2
            for img in images:
                assert img["done"] and img["w"] > 0 and img["h"] > 0 and img["shown"], img
            assert page.locator("table").count() >= 3
            body = page.inner_text("body")
            assert "HELD" in body and "0.17" in body  # the claim table's margin
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        finally:
            browser.close()
    external = [u for u in fetched if not u.startswith(("file:", "data:"))]
    assert not external, external
    assert (ARTIFACTS / "report.png").stat().st_size > 0


LONG = ("On a machine of few cores, the weak case for the parallelism argument, which needs many "
        "cores to spread attention's T×T matrix multiplies over, a training step of attention "
        "costs less time per token than the LSTM's at every T from 32 to 1,024: its expensive "
        "step is a matrix multiply, the LSTM's is T small steps in a row.")


@pytest.fixture(params=["en", "es"])
def wide_report(tmp_path: Path, request) -> Path:
    """Figures at 1,200 px (15 × 4.5 inches at 80 dpi), a claim of 300 characters among
    twelve, a table of fourteen columns."""
    envelopes = {}
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        cols = [f"column {i}" for i in range(14)]
        (tmp_path / name / "table.md").write_text(
            "| " + " | ".join(cols) + " |\n|" + "---|" * 14 + "\n| "
            + " | ".join("123,456.789" for _ in cols) + " |\n")
        _png(tmp_path / name / "figure.png", f"{name} figure", (15, 4.5))
        envelopes[name] = {"name": name, "title": f"The {name} experiment", "profile": "quick",
                           "seeds": 3, "settings": {"steps": 10, "widths": [32, 256, 1024]},
                           "record": {}, "wall_s": 3.0, "train_s": 480.0, "runs": 6}
    part = {"name": "", "rule": "ratio ≤ 0.9", "unit": "", "margins": [0.1, 0.12, 0.11],
            "mean": 0.11, "se": 0.0058, "numbers": {"ratio": 0.81}}
    verdicts = [{"id": f"first.c{i}", "text": LONG if i == 0 else f"Claim {i} holds.",
                 "rule": "ratio ≤ 0.9", "status": ("held", "not held", "inconclusive")[i % 3],
                 "why": "", "trained": True, "seeds": 3,
                 "experiment": ("first", "second")[i % 2], "parts": [part]} for i in range(12)]
    meta = {"profile": "quick", "seeds": 3, "wall_s": 600.0,
            "machine": {"processor": "Test CPU", "CPU count": 2, "device": "cpu"}}
    return write_report(envelopes, verdicts, tmp_path, meta, lang=request.param)["html"]


def test_report_fits_a_laptop_screen_at_1280_and_800(wide_report: Path):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            for width in (1280, 800):
                page = browser.new_page(viewport={"width": width, "height": 800})
                page.goto(wide_report.as_uri())
                page.wait_for_load_state("load")
                got = page.evaluate(FIT)
                assert got["page"] <= width, (width, got)
                assert len(got["images"]) == 2
                for img in got["images"]:  # natural 1,200 px, shown inside the column
                    assert img["natural"] == 1200 and img["right"] <= width, (width, img)
                    assert img["shown"] <= got["column"] + 1 and img["height"] > 100
                assert got["unboxed"] == [], (width, got["unboxed"])
                if width == 1280:  # the claim text in one or two lines, the long one cut
                    assert max(got["claim_lines"]) <= 2, got["claim_lines"]
                    assert got["wide_tables"] >= 2  # the 14-column tables scroll in their box
                lang = page.locator("html").get_attribute("lang")
                assert page.locator("h2").first.text_content() == \
                    {"en": "Contents", "es": "Índice"}[lang]
                assert page.locator("#exp-2").count() == 1  # the contents link to the sections
                ARTIFACTS.mkdir(exist_ok=True)
                shot = ARTIFACTS / f"report-top-{lang}-{width}.png"
                page.screenshot(path=str(shot))  # the first screen, as a reader meets it
                assert shot.stat().st_size > 0
                page.close()
        finally:
            browser.close()


FIT = """() => {
  const px = r => Math.round(r);
  const column = document.body.clientWidth;
  const boxes = [...document.querySelectorAll('table, pre')];
  const claims = document.querySelector('table.claims');
  const lines = claims ? [...claims.querySelectorAll('tbody tr td:nth-child(2)')].map(td => {
    const range = document.createRange();
    range.selectNodeContents(td);
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
  }) : [99];
  return {
    page: document.documentElement.scrollWidth, column,
    images: [...document.images].map(i => ({natural: i.naturalWidth,
      shown: px(i.getBoundingClientRect().width), height: px(i.getBoundingClientRect().height),
      right: px(i.getBoundingClientRect().right)})),
    unboxed: boxes.filter(b => b.getBoundingClientRect().right > innerWidth + 0.5)
      .map(b => b.tagName),
    wide_tables: boxes.filter(b => b.scrollWidth > b.clientWidth + 1).length,
    claim_lines: [...lines],
  };
}"""
