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

from attnlab.kit import registry
from attnlab.kit.claims import Margins, Part, claim
from attnlab.kit.registry import Experiment, select
from attnlab.report import write_report
from attnlab.report.claim_figures import claim_figures
from attnlab.report.write import to_html
from attnlab.running.runner import Runner
from attnlab.suite import evaluate_claims, reproduce

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


def test_table_to_html():
    out = to_html(TABLE)
    assert '<th style="text-align:right">n</th>' in out and "<th>name</th>" in out
    assert '<th style="text-align:center">ppl</th>' in out
    assert "<td>&lt;b&gt;x&lt;/b&gt;</td>" in out  # cell text escaped, not markup
    assert "<td>a | b</td>" in out  # escaped bar stays in its cell
    assert out.count("<tr>") == 3


def test_images_go_through_image_src_and_raw_html_is_text():
    out = to_html("![cap](f.png)\n", lambda p: "data:image/png;base64,AAAA" if p == "f.png"
                  else None)
    assert '<img src="data:image/png;base64,AAAA" alt="cap">' in out
    missing = to_html("![cap](nope.png)\n", lambda p: None)
    assert "figure not available" in missing and "<img" not in missing
    assert "<script>" not in to_html("<script>alert(1)</script>\n")
    assert "&lt;script&gt;" in to_html("<script>alert(1)</script>\n")


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
         "why": "mean margin above zero", "trained": True, "seeds": 3, "experiment": "alpha",
         "parts": [{"name": "", "rule": "a < b", "unit": "× ppl", "margins": [0.1, 0.12, 0.11],
                    "mean": 0.11, "se": 0.0058, "numbers": {"a": 1.0, "b": 2.0}}]},
        {"id": "beta.two", "text": "beta hurts", "rule": "c > 3", "status": "not held",
         "why": "below zero", "trained": False, "seeds": 1, "experiment": "beta",
         "parts": [{"name": "", "rule": "c > 3", "unit": "", "margins": [-0.5], "mean": -0.5,
                    "se": None, "numbers": {"c": 2.5}}]},
        {"id": "gamma.three", "text": "gamma ok", "rule": "r", "status": "skipped",
         "why": "no record of gamma", "parts": [], "experiment": "gamma"},
    ]
    meta = {"profile": "quick", "seeds": 2, "wall_s": 150.0, "machine": {"CPU count": 2},
            "versions": {"torch": "2.x"}, "code_revision": {"commit": "abc", "dirty": True}}
    return envelopes, verdicts, meta


def test_report_markdown(tmp_path):
    envelopes, verdicts, meta = synthetic(tmp_path)
    paths = write_report(envelopes, verdicts, tmp_path, meta)
    md = paths["markdown"].read_text()
    assert "| claims | **1 held**, **1 not held**, **1 skipped** (of 3) |" in md
    assert md.count("**1 not held**") == 1 and "**Claims:" not in md  # the counts, once
    assert "| experiments | 2 finished, 1 skipped, 0 failed |" in md
    row = next(line for line in md.splitlines() if "| alpha helps |" in line)
    measured = {v["id"]: claim_figures(v)["measured"] for v in verdicts}  # the claims' words
    assert row.startswith(f"| [1](#exp-1) | alpha helps | **HELD** | {measured['alpha.one']} | – |")
    assert row.endswith(" | 3 seeds |") and "a < b" not in row  # the rule is in the section
    assert f"| [2](#exp-2) | beta hurts | **NOT HELD** | {measured['beta.two']} | – |" in md
    assert "| [1. The alpha experiment](#exp-1) | 1 | · | · | · |" in md  # the contents
    assert "**[2. The beta experiment](#exp-2).** This run: of its one claim, 0 held, 1 not held " \
        "and 0 inconclusive. Not held: «beta hurts»." in md
    assert "| alpha | finished | – | 1m15s | 1m15s | `steps=300, width=64` |" in md
    verdicts[1] |= {"status": "inconclusive", "premise": {"held": False, "why": "nothing to fall"}}
    again = write_report(envelopes, verdicts, tmp_path, meta)["markdown"].read_text()
    assert "Inconclusive: «beta hurts» (could not be tested: nothing to fall)." in again
    assert "12.5 alpha" in md and "12.5 beta" in md  # both tables
    assert "![The alpha experiment](alpha/figure.png)" in md
    assert "**What quick changes:** beta: fewer steps" in md
    assert "- **NOT HELD** — beta hurts" in md and f"  {measured['beta.two']}; " in md
    assert "rule: c > 3" in md
    assert "`gamma` **skipped**: corpus unavailable: no file" in md
    assert "analysis: 1m15s" in md and "steps=300, width=64" in md
    assert "`abc` (with uncommitted changes)" in md
    assert md.index("## Contents") < md.index("## Claim summary") < \
        md.index("## 1. The alpha experiment")


@pytest.mark.parametrize(("lang", "v2", "none"), [
    ("en", "rule v2; 1 evaluation", "rule version not recorded; 3 seeds"),
    ("es", "regla v2; 1 evaluación", "versión de la regla sin registrar; 3 semillas")])
def test_each_claim_says_its_rule_version_and_an_older_record_none(tmp_path, lang, v2, none):
    envelopes, verdicts, meta = synthetic(tmp_path)
    verdicts[1]["version"] = 2  # alpha.one is a record from before versions: it has none
    md = write_report(envelopes, verdicts, tmp_path, meta, lang=lang)["markdown"].read_text()
    lines = md.splitlines()
    beta, alpha = (next(i for i, line in enumerate(lines)
                        if line.startswith("- **") and text in line)
                   for text in ("beta hurts", "alpha helps"))
    assert lines[beta + 1].strip().startswith(v2)
    assert lines[alpha + 1].strip().startswith(none)


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
    assert data["summary"]["claims"] == {"held": 1, "not held": 1, "inconclusive": 0,
                                         "skipped": 1, "error": 0}


# ---------------------------------------------------------------- reproduce


@pytest.fixture(scope="module")
def params_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    result = reproduce(Runner(root / "work"), root / "out", "micro", seeds=1, only=["params"])
    return root, result


def test_reproduce_micro_params(params_run):
    root, result = params_run
    assert result.ok and not result.failed and not result.skipped
    assert [v["status"] for v in result.verdicts] == ["skipped", "held"]  # micro: no HF
    recorded = json.loads((root / "out" / "results.json").read_text())["claims"]
    assert [v["version"] for v in recorded] == [c.version for c in registry.load("params").claims]
    md = (root / "out" / "report.md").read_text()
    assert md.count("  rule v1; 1 evaluation; ") == 2
    assert "| claims | **1 held**, **1 skipped** (of 2) |" in md
    assert "124,439,808" in md and "![Where the parameters are](params/figure.png)" in md
    assert result.meta["only"] == ["params"]
    assert result.meta["machine"]["CPU count"] >= 1
    again = reproduce(Runner(root / "work"), root / "out", "micro", seeds=1, only=["params"])
    assert again.envelopes["params"]["reused"] is True


@dataclasses.dataclass(frozen=True)
class FakeSettings:
    v: int = 7


def _fake(name: str, *, needs_corpus: bool, fail: bool = False, claims=()) -> Experiment:
    """A stand-in experiment record (the real ones may not be written yet)."""

    def analyse(settings, results, ctx):
        if fail:
            raise RuntimeError("boom\nsecond line")
        return {"value": settings.v}

    def figure(record):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 1.5))
        fig.subplots().plot([0, 1], [1, 2])
        return fig

    return Experiment(
        name=name, title=f"Fake {name}", needs_corpus=needs_corpus, quick_changes="none",
        profiles={p: FakeSettings() for p in registry.PROFILES}, plan=lambda s: [],
        analyse=analyse, table=lambda r: f"| value |\n|---:|\n| {r['value']} |\n",
        figure=figure, claims=list(claims),
    )


def _bad(records):
    raise KeyError("nope")


def _value(records):
    return Margins([records["ok"]["value"] - 6.5], {"value": records["ok"]["value"]})


def test_reproduce_missing_corpus_and_failures(params_run, tmp_path, monkeypatch):
    claims = [
        claim("ok.value", "value is 7", "ok", Part("value > 6.5", _value), trained=False),
        claim("ok.cross", "needs corpus", ("ok", "corpus"), Part("r", _value)),
        claim("ok.bad", "breaks", "ok", Part("r", _bad)),
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
    runner = Runner(tmp_path / "work", corpus=str(tmp_path / "no-such-corpus.txt"),
                    progress=events.append)
    result = reproduce(runner, tmp_path / "out", "micro", seeds=1)
    env = result.envelopes
    assert list(env) == names
    assert env["corpus"]["status"] == "skipped"
    assert env["corpus"]["reason"].startswith("corpus unavailable: corpus file")
    assert env["missing"]["status"] == "failed"
    assert "ModuleNotFoundError" in env["missing"]["reason"]
    assert env["broken"]["reason"] == "RuntimeError: boom"
    assert env["ok"]["record"] == {"value": 7} and env["params"]["reused"]
    assert not result.ok and result.failed == ["missing", "broken"]
    status = {v["id"]: v["status"] for v in result.verdicts}
    assert status["ok.value"] == "held" and status["ok.cross"] == "skipped"
    assert status["ok.bad"] == "error" and result.errors == ["ok.bad"]
    assert [e["event"] for e in events if e["kind"] == "experiment"] == \
        ["skipped", "failed", "start", "done", "done", "start", "failed"]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "`corpus` **skipped**: corpus unavailable" in md
    assert "`broken` **failed**: RuntimeError: boom" in md
    # the reasons are kept in parts, so a Spanish report says them in Spanish
    from attnlab.i18n.logs import reason_in

    missing = tmp_path / "no-such-corpus.txt"
    assert reason_in(env["corpus"], "es") == (
        f"el corpus no está disponible: el archivo del corpus {missing} no existe o no es un "
        "archivo")
    assert reason_in(env["missing"], "es").startswith("no se puede cargar: ModuleNotFoundError")
    assert reason_in(env["corpus"], "en") == env["corpus"]["reason"]
    from attnlab.i18n.logs import stored

    meta = json.loads((tmp_path / "out" / "results.json").read_text())["meta"]
    assert meta["corpus_status"].startswith("unavailable (corpus file ")
    assert stored(meta, "corpus_status", "es") == (
        f"no disponible (el archivo del corpus {missing} no existe o no es un archivo)")


def test_select_and_bad_input():
    assert select(["params", "ladder"]) == ["ladder", "params"]  # registry order
    with pytest.raises(ValueError, match="unknown experiment"):
        select(["nope"])
    with pytest.raises(ValueError, match="unknown profile"):
        reproduce(Runner(Path("y")), "x", "huge", seeds=1)
    with pytest.raises(ValueError, match="seeds"):
        reproduce(Runner(Path("y")), "x", "micro", seeds=0)


def test_evaluate_claims_tags_owner():
    mod = types.SimpleNamespace()
    mod.claims = [claim("m.a", "t", "m", Part("x > 0", lambda r: Margins([-1.0])),
                        trained=False)]
    (v,) = evaluate_claims({"m": mod}, {"m": {}})
    assert v["status"] == "not held" and v["experiment"] == "m" and v["needs"] == ["m"]


def test_a_raising_claim_fails_the_suite(params_run, tmp_path, monkeypatch):
    real = registry.load("params")
    broken = dataclasses.replace(
        real, claims=[claim("params.broken", "breaks", "params", Part("r", _bad))])
    monkeypatch.setattr(registry, "load", lambda name: broken)
    shutil.copytree(params_run[0] / "out" / "params", tmp_path / "out" / "params")
    result = reproduce(Runner(tmp_path / "work"), tmp_path / "out", "micro", only=["params"])
    assert not result.ok and result.errors == ["params.broken"] and not result.failed
