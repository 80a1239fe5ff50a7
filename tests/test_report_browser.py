"""report.html in a real headless Chromium: every figure shows, nothing is fetched.

Needs /usr/bin/chromium and the ``playwright`` Python package (no browser download:
the system Chromium is used). Saves a screenshot to ``test-artifacts/report.png``.
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


def _png(path: Path, title: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 2.5))
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
            assert "HELD" in body and "+0.17 exponent" in body  # the claim table's margin
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        finally:
            browser.close()
    external = [u for u in fetched if not u.startswith(("file:", "data:"))]
    assert not external, external
    assert (ARTIFACTS / "report.png").stat().st_size > 0
