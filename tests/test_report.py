"""The report: Markdown → HTML by hand-checked cases, a self-contained page, reproduce."""

from __future__ import annotations

import base64
import dataclasses
import json
import shutil
import types
from html.parser import HTMLParser
from pathlib import Path

import pytest

from attnlab.experiments import registry
from attnlab.experiments.claims import Claim
from attnlab.report import reproduce, write_report
from attnlab.report.markdown import inline, split_row, to_html
from attnlab.report.suite import evaluate_claims, select

TABLE = "| n | name | ppl |\n|---:|---|:---:|\n| 1 | <b>x</b> | 12.5 |\n| 2 | a \\| b | 3 |\n"


def make_png(path: Path, colour: str = "tab:blue") -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5))
    FigureCanvasAgg(fig)
    fig.subplots().plot([0, 1, 2], [1, 3, 2], color=colour)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=50)
    return path


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(page: str) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


# ---------------------------------------------------------------- Markdown → HTML


def test_table_to_html_by_hand():
    out = to_html(TABLE)
    assert '<th style="text-align:right">n</th><th>name</th>' in out
    assert '<th style="text-align:center">ppl</th>' in out
    assert '<td style="text-align:right">1</td><td>&lt;b&gt;x&lt;/b&gt;</td>' in out
    assert "<td>a | b</td>" in out  # escaped bar stays in its cell
    assert out.count("<tr>") == 3


def test_headings_lists_images_and_escaping():
    md = ("# Title <x>\n\ntext with **bold**  \nnext line\n\n- **HELD** — a < b  \n"
          "  rule: x; numbers: y=1\n- second\n\n![cap](f.png)\n\n```\n<raw> **no**\n```\n")
    out = to_html(md, lambda p: "data:image/png;base64,AAAA" if p == "f.png" else None)
    assert '<h1 id="title-x">Title &lt;x&gt;</h1>' in out
    assert "<p>text with <strong>bold</strong><br>\nnext line</p>" in out
    assert "<li><strong>HELD</strong> — a &lt; b<br>\nrule: x; numbers: y=1</li>" in out
    assert "<li>second</li>" in out
    assert '<img src="data:image/png;base64,AAAA" alt="cap">' in out
    assert "<pre><code>&lt;raw&gt; **no**</code></pre>" in out
    missing = to_html("![cap](nope.png)\n", lambda p: None)
    assert "figure not available" in missing and "<img" not in missing


def test_inline_and_rows():
    assert inline("`<a>` *b* 2*3*4") == "<code>&lt;a&gt;</code> <em>b</em> 2*3*4"
    assert split_row("a | b") == ["a", "b"]
    assert to_html("<script>alert(1)</script>\n") == \
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"


# ---------------------------------------------------------------- write_report


def synthetic(tmp_path: Path) -> tuple[dict, list, dict]:
    envelopes = {}
    for name, colour in (("alpha", "tab:red"), ("beta", "tab:green")):
        folder = tmp_path / name
        folder.mkdir(parents=True)
        (folder / "table.md").write_text(TABLE.replace("12.5", f"12.5 {name}"))
        make_png(folder / "figure.png", colour)
        envelopes[name] = {
            "name": name, "title": f"The {name} experiment", "profile": "quick", "seeds": 2,
            "settings": {"steps": 300, "width": 64}, "quick_changes": f"{name}: fewer steps",
            "record": {"ppl": [12.5, float("nan")], "rows": [{"a": 1}]}, "wall_s": 75.0,
            "code_revision": {"commit": "abc", "dirty": False}, "finished_at": "now",
        }
    envelopes["gamma"] = {"name": "gamma", "title": "Gamma", "status": "skipped",
                          "reason": "corpus unavailable: no file"}
    verdicts = [
        {"id": "alpha.one", "text": "alpha helps", "rule": "a < b", "status": "held",
         "evidence": {"a": 1.0, "b": 2.0}, "experiment": "alpha"},
        {"id": "beta.two", "text": "beta hurts", "rule": "c > 3", "status": "not held",
         "evidence": {"c": 2.5}, "experiment": "beta"},
        {"id": "gamma.three", "text": "gamma ok", "rule": "r", "status": "skipped",
         "evidence": {"missing": ["gamma"]}, "experiment": "gamma"},
    ]
    meta = {"profile": "quick", "seeds": 2, "wall_s": 150.0, "machine": {"CPU count": 2},
            "versions": {"torch": "2.x"}, "code_revision": {"commit": "abc", "dirty": True}}
    return envelopes, verdicts, meta


def test_report_markdown(tmp_path):
    envelopes, verdicts, meta = synthetic(tmp_path)
    paths = write_report(envelopes, verdicts, tmp_path, meta)
    md = paths["markdown"].read_text()
    assert "**Claims: 1 held, 1 not held, 1 skipped** (of 3)" in md
    assert "12.5 alpha" in md and "12.5 beta" in md  # both tables
    assert "![The alpha experiment](alpha/figure.png)" in md
    assert "**What quick changes:** beta: fewer steps" in md
    assert "- **NOT HELD** — beta hurts" in md and "numbers: c=2.5" in md
    assert "`gamma` **skipped**: corpus unavailable: no file" in md
    assert "Wall time: 1m15s" in md and "steps=300, width=64" in md
    assert "`abc` (with uncommitted changes)" in md
    assert md.index("## Claim summary") < md.index("## 1. The alpha experiment")


def test_report_html_is_self_contained(tmp_path):
    envelopes, verdicts, meta = synthetic(tmp_path)
    page = write_report(envelopes, verdicts, tmp_path, meta)["html"].read_text()
    tags = tags_of(page)
    refs = [v for _, attrs in tags for k, v in attrs.items() if k in ("src", "href")]
    assert not [r for r in refs if r.startswith(("http://", "https://", "//"))]
    assert not [t for t, _ in tags if t in ("script", "link", "iframe")]
    images = [attrs["src"] for tag, attrs in tags if tag == "img"]
    assert len(images) == 2
    for src, name in zip(images, ("alpha", "beta"), strict=True):
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]) == \
            (tmp_path / name / "figure.png").read_bytes()
    assert page.count("<table>") >= 4  # summary, settings, two experiment tables, machine
    assert "&lt;b&gt;x&lt;/b&gt;" in page  # cell text escaped, not markup
    assert '<strong class="not-held">NOT HELD</strong>' in page


def test_results_json_round_trips(tmp_path):
    envelopes, verdicts, meta = synthetic(tmp_path)
    path = write_report(envelopes, verdicts, tmp_path, meta)["json"]
    data = json.loads(path.read_text())
    assert data["claims"] == verdicts
    assert data["meta"] == meta
    assert data["experiments"]["alpha"]["record"]["rows"] == [{"a": 1}]
    assert data["experiments"]["gamma"]["status"] == "skipped"
    assert data["summary"]["claims"] == {"held": 1, "not held": 1, "skipped": 1}


# ---------------------------------------------------------------- reproduce


@pytest.fixture(scope="module")
def params_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    result = reproduce("micro", 1, root / "out", root / "work", only=["params"])
    return root, result


def test_reproduce_micro_params(params_run):
    root, result = params_run
    assert result["ok"] and not result["failed"] and not result["skipped"]
    assert [v["status"] for v in result["verdicts"]] == ["held", "held"]
    md = (root / "out" / "report.md").read_text()
    assert "**Claims: 2 held, 0 not held, 0 skipped** (of 2)" in md
    assert "124,439,808" in md and "![Where the parameters are](params/figure.png)" in md
    assert result["meta"]["only"] == ["params"]
    assert result["meta"]["machine"]["CPU count"] >= 1
    again = reproduce("micro", 1, root / "out", root / "work", only=["params"])
    assert again["envelopes"]["params"]["reused"] is True


@dataclasses.dataclass(frozen=True)
class FakeSettings:
    v: int = 7


def _fake(name: str, *, needs_corpus: bool, fail: bool = False, claims=()) -> types.ModuleType:
    """A stand-in experiment module (the real ones may not be written yet)."""
    mod = types.ModuleType(f"fake_{name}")

    def run(settings, ctx):
        if fail:
            raise RuntimeError("boom\nsecond line")
        return {"value": settings.v}

    mod.__dict__.update(
        NAME=name, TITLE=f"Fake {name}", NEEDS_CORPUS=needs_corpus, QUICK_CHANGES="none",
        PROFILES={p: FakeSettings() for p in registry.PROFILES}, run=run,
        table=lambda r: f"| value |\n|---:|\n| {r['value']} |\n",
        figure=lambda r, path: make_png(path), CLAIMS=list(claims),
    )
    return mod


def _bad(records):
    raise KeyError("nope")


def test_reproduce_missing_corpus_and_failures(params_run, tmp_path, monkeypatch):
    claims = [
        Claim("ok.value", "value is 7", ("ok",),
              lambda r: (r["ok"]["value"] == 7, {"value": r["ok"]["value"]}), "value == 7"),
        Claim("ok.cross", "needs corpus", ("ok", "corpus"), lambda r: (True, {})),
        Claim("ok.bad", "breaks", ("ok",), _bad),
    ]
    fakes = {
        "corpus": _fake("corpus", needs_corpus=True),
        "ok": _fake("ok", needs_corpus=False, claims=claims),
        "broken": _fake("broken", needs_corpus=False, fail=True),
    }
    real_load = registry.load

    def load(name):
        if name in fakes:
            return fakes[name]
        if name == "missing":
            raise ModuleNotFoundError("No module named 'attnlab.experiments.missing'")
        return real_load(name)

    names = ["corpus", "missing", "ok", "params", "broken"]
    monkeypatch.setattr(registry, "EXPERIMENTS", names)
    monkeypatch.setattr(registry, "load", load)
    shutil.copytree(params_run[0] / "out" / "params", tmp_path / "out" / "params")  # reuse
    events = []
    result = reproduce("micro", 1, tmp_path / "out", tmp_path / "work",
                       corpus=str(tmp_path / "no-such-corpus.txt"), progress=events.append)
    env = result["envelopes"]
    assert list(env) == names
    assert env["corpus"]["status"] == "skipped"
    assert env["corpus"]["reason"].startswith("corpus unavailable: corpus file")
    assert env["missing"]["status"] == "failed"
    assert "ModuleNotFoundError" in env["missing"]["reason"]
    assert env["broken"]["reason"] == "RuntimeError: boom"
    assert env["ok"]["record"] == {"value": 7} and env["params"]["reused"]
    assert not result["ok"] and result["failed"] == ["missing", "broken"]
    status = {v["id"]: v["status"] for v in result["verdicts"]}
    assert status["ok.value"] == "held" and status["ok.cross"] == "skipped"
    assert status["ok.bad"] == "skipped"
    assert [e["event"] for e in events if e["kind"] == "experiment"] == \
        ["skipped", "failed", "start", "done", "start", "done", "start", "failed"]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "`corpus` **skipped**: corpus unavailable" in md
    assert "`broken` **failed**: RuntimeError: boom" in md


def test_select_and_bad_input():
    assert select(["params", "ladder"]) == ["ladder", "params"]  # registry order
    with pytest.raises(ValueError, match="unknown experiment"):
        select(["nope"])
    with pytest.raises(ValueError, match="unknown profile"):
        reproduce("huge", 1, "x", "y")
    with pytest.raises(ValueError, match="seeds"):
        reproduce("micro", 0, "x", "y")


def test_evaluate_claims_tags_owner():
    mod = types.ModuleType("m")
    mod.CLAIMS = [Claim("m.a", "t", ("m",), lambda r: (False, {"x": 1}))]
    (v,) = evaluate_claims({"m": mod}, {"m": {}})
    assert v["status"] == "not held" and v["experiment"] == "m" and v["needs"] == ["m"]
