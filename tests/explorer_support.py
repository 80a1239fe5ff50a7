"""Shared pieces of the explorer's browser tests: headless Chromium (Debian's, offline),
a tab that records script errors and requests, and readers of the page's numbers."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"

browser_marks = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"headless Chromium not at {CHROMIUM}"),
]


@pytest.fixture(scope="module", name="browser")
def browser_fixture():
    """Headless Chromium for a module's tests (import this fixture into a test module)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(name="page")
def page_fixture(browser):
    """A fresh tab (downloads allowed) that records script errors (a CSP violation is one)
    and every request."""
    context = browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    pg = context.new_page()
    pg.errors, pg.requests = [], []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    assert pg.errors == []
    context.close()


def numbers(pg, testid: str, attr: str = "data-weight") -> list[float]:
    """The numbers in ``attr`` of every element with ``data-testid=testid``, in page order."""
    return [float(x) for x in pg.eval_on_selector_all(
        f'[data-testid="{testid}"]', f'els => els.map(e => e.getAttribute("{attr}"))'
    )]  # fmt: skip


def matrix(pg) -> np.ndarray:
    """The weights of the head view's matrix, (n, n)."""
    w = numbers(pg, "cell")
    n = int(round(len(w) ** 0.5))
    return np.array(w).reshape(n, n)


def page_data(text: str) -> dict:
    """The data dict embedded in a page's HTML."""
    import json

    raw = re.search(r'<script type="application/json" id="attnlab-data">(.*?)</script>', text, re.S)
    return json.loads(raw.group(1))
