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
    """The data dict embedded in a page's HTML, as the page's script reads it: where the page
    carries its matrices encoded (compact pages of large models), decoded."""
    import importlib.util
    import json

    raw = re.search(r'<script type="application/json" id="attnlab-data">(.*?)</script>', text, re.S)
    data = json.loads(raw.group(1))
    if importlib.util.find_spec("attnlab.explorer.page.encoding") is None:  # pages of plain numbers
        return data
    from attnlab.explorer.page.encoding import decode_data

    return decode_data(data)


def two_sequence_page() -> dict:
    """A hand-built page of a translation model's views (/work/FORMAT.md): cross-attention
    (3 target tokens × 4 source tokens, two layers of two heads, random q and k), the
    encoder's bidirectional and the decoder's causal self-attention, and a fixed alignment
    given by its weights only. The causal switch starts on: no view here may follow it."""
    rng = np.random.default_rng(7)
    source, target = ["the", "black", "cat", "<eos>"], ["el", "gato", "negro"]

    def heads(n: int, m: int) -> list[dict]:
        return [{"name": f"head {h + 1}", "d_k": 4, "q": rng.normal(size=(n, 4)).round(3).tolist(),
                 "k": rng.normal(size=(m, 4)).round(3).tolist()} for h in range(2)]  # fmt: skip

    align = np.array([[0.9, 0.05, 0.03, 0.02], [0.1, 0.1, 0.7, 0.1], [0.05, 0.8, 0.1, 0.05]])
    return {"title": "Translation", "description": "two sequences", "causal": True, "views": [
        {"name": "cross-attention", "tokens": target, "sources": source,
         "layers": [{"heads": heads(3, 4)}, {"heads": heads(3, 4)}]},
        {"name": "encoder self-attention", "tokens": source, "attends": "bidirectional",
         "layers": [{"heads": heads(4, 4)}]},
        {"name": "decoder self-attention", "tokens": target, "attends": "causal",
         "layers": [{"heads": heads(3, 3)}]},
        {"name": "alignment", "tokens": target, "sources": source, "attends": "cross",
         "fixed": "the weights the decoder used at each step",
         "layers": [{"heads": [{"name": "additive", "d_k": 1, "weights": align.tolist()}]}]},
    ]}  # fmt: skip


WORDS = "the a king queen rose sword night crown river speaks and of to my lord who said".split()


def long_page(
    n: int = 128, n_head: int = 12, n_layer: int = 2, d_k: int = 64, *, composed: bool = False
) -> dict:
    """A page of one n-token sentence (BPE-like tokens with leading spaces) and a model of
    n_layer × n_head heads with random q and k (n, d_k), causal. With ``composed``, the view
    carries rollout and value-weighted matrices (L, n, n) made here from the heads' weights:
    the page only draws them, so any row-stochastic matrices serve."""
    from attnlab.explorer.page.data import head_weights

    rng = np.random.default_rng(0)
    tokens = [("" if i == 0 else " ") + WORDS[int(rng.integers(len(WORDS)))] for i in range(n)]
    where = rng.normal(size=(n, d_k))  # (n, d): a random code of each position
    layers = []
    for _ in range(n_layer):
        heads = []
        for h in range(n_head):
            q = rng.normal(size=(n, d_k)) * (0.3 + 0.1 * h)  # (n, d): some heads peaked, some flat
            k = rng.normal(size=(n, d_k))
            if h % 3 == 1:  # a previous-token head: q_i matches the code of position i - 1
                q[1:] += where[:-1]
                k += where
            elif h % 3 == 2:  # a head that rests on the first token
                k[0] += 2 * q.mean(axis=0) / (q.mean(axis=0) ** 2).mean()
            heads.append({"name": f"head {h + 1}", "d_k": d_k, "q": q.round(4).tolist(),
                          "k": k.round(4).tolist()})  # fmt: skip
        layers.append({"heads": heads})
    view = {"name": "long", "tokens": tokens, "layers": layers}
    if composed:
        mean = [np.mean([head_weights(h, causal=True, scale=True) for h in layer["heads"]], axis=0)
                for layer in layers]  # fmt: skip
        rollout, value, r = [], [], np.eye(n)
        for a in mean:
            step = a + np.eye(n)
            r = (step / step.sum(axis=1, keepdims=True)) @ r
            rollout.append(r)
            v = a * rng.uniform(0.2, 2.0, size=n)[None, :]
            value.append(v / v.sum(axis=1, keepdims=True))
        view["composed"] = {
            "rollout": np.round(rollout, 5).tolist(),
            "value_weighted": np.round(value, 5).tolist(),
            "note": "Block 2 reads the referent through block 1: rollout 0.42 on ‘queen’.",
        }
    return {"title": "A long sentence", "description": "128 tokens, random q and k", "causal": True,
            "views": [view]}  # fmt: skip


def train_tiny_run(tmp: Path, model, train) -> Path:  # noqa: ANN001
    """A run of ``attnlab``'s trainer in ``tmp/run``, on a tiny made-up corpus of king-and-lord
    words with its own BPE tokenizer (cached in ``tmp/cache``): what ``attnlab train`` writes."""
    import random

    from attnlab.train.run_config import DataConfig, RunConfig
    from attnlab.train.trainer import train as train_run

    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    corpus = tmp / "tiny.txt"
    corpus.write_text("\n".join(" ".join(rng.choices(words, k=10)) for _ in range(300)))
    cfg = RunConfig(model=model, train=train, data=DataConfig(corpus=str(corpus), vocab_size=300))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTNLAB_CACHE", str(tmp / "cache"))
        train_run(cfg, tmp / "run")
    return tmp / "run"
