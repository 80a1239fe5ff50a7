"""The claim table of docs/results.md (linked from the README) quotes its figures from one
generated file, docs/results/claims.json (scripts/results_doc.py writes both from a finished
report): the table is that file's rendering, and every figure in it is found in the file."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def _script():
    spec = importlib.util.spec_from_file_location("results_doc",
                                                  ROOT / "scripts" / "results_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _results() -> dict:
    return json.loads((ROOT / "docs" / "results" / "claims.json").read_text(encoding="utf-8"))


def test_the_results_file_says_when_where_and_what():
    results = _results()
    assert results["profile"] in ("full", "quick", "micro")
    assert re.match(r"\d{4}-\d{2}-\d{2}T", results["started_at"])
    assert results["processor"] and results["processor"] != "–"
    assert results["claims"] and all({"id", "status", "measured", "chapter"} <= set(c)
                                     for c in results["claims"])
    assert (ROOT / "docs" / "results" / "report.html").is_file()  # the sample report


def test_the_readme_table_is_the_results_files_rendering():
    script = _script()
    readme = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert script.readme_block(readme) == script.render(_results(), script.read_full()), \
        "docs/results.md's claim table is stale: run python scripts/results_doc.py REPORT_DIR"


def test_every_figure_in_the_readme_table_is_in_the_results_file():
    readme = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    script = _script()
    block = script.readme_block(readme)
    by_text = {c["text"]: c for c in _results()["claims"]}
    full = {c["id"]: c for c in (script.read_full() or {"claims": []})["claims"]}
    rows = [r for r in block.splitlines() if r.startswith("| ") and "**" in r]
    assert len(rows) == len(by_text)
    for row in rows:
        text, verdict, measured, chapter, at_full = [c.strip()
                                                     for c in row.strip("|").split(" | ")]
        claim = by_text[text.replace("\\|", "|")]
        assert verdict == f"**{claim['status'].upper()}**"
        cells = [(measured, claim["measured"]), (chapter, claim["chapter"])]
        if claim["id"] in full:
            assert at_full.startswith(f"**{full[claim['id']]['status'].upper()}**")
            cells.append((at_full, full[claim["id"]]["measured"]))
        else:
            assert at_full == "not run here"
        for cell, source in cells:
            for figure in NUMBER.findall(cell):
                assert figure in source, f"{text}: {figure} is not in the results file"


def test_the_full_results_say_what_ran_and_what_did_not():
    from attnlab.lab import registry

    full = _script().read_full()
    if full is None:
        return  # before any full run the column says "not run here" (checked above)
    assert full["profile"] == "full" and full["processor"]
    assert sorted(full["experiments"] + full["not_run"]["experiments"]) == \
        sorted(registry.EXPERIMENTS)
    ids = {c.id for name in full["experiments"] for c in registry.load(name).claims}
    assert {c["id"] for c in full["claims"]} == ids


def test_the_recorded_claims_are_claims_of_the_registry():
    from attnlab.lab import registry

    ids = {c.id for name in registry.EXPERIMENTS for c in registry.load(name).claims}
    stale = [c["id"] for c in _results()["claims"] if c["id"] not in ids]
    assert not stale, f"renamed or removed claims in docs/results/claims.json: {stale}"


def test_the_readme_summary_counts_are_the_results_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    counts = _results()["summary"]
    total = sum(counts.values())
    want = (f"{total} claims over 3–5 seeds: {counts['held']}\nheld, {counts['not held']} not "
            f"held, {counts['inconclusive']} inconclusive")
    assert want in readme, "README's summary of the last quick run disagrees with claims.json"
