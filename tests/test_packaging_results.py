"""The figures the README and the docs quote come from the generated results files in
docs/results/ (scripts/results_doc.py writes them from finished reports and renders the pages'
generated blocks from them alone): every block is that rendering, every figure of the claim
table is found in the files, and no run time is written by hand outside a block."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
DURATION = re.compile(r"\b\d+h\d\dm\b|\b\d+m\d\ds\b")  # format_duration's figures


def _script(name: str = "results_doc"):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _results() -> dict:
    return _script().read_all()[0]


def test_the_results_file_says_when_where_and_what():
    results = _results()
    assert results["profile"] in ("full", "quick", "micro")
    assert re.match(r"\d{4}-\d{2}-\d{2}T", results["started_at"])
    assert results["processor"] and results["processor"] != "–"
    assert results["claims"] and all({"id", "status", "measured", "chapter"} <= set(c)
                                     for c in results["claims"])
    assert all(e["table"] and e["runs"] is not None for e in results["experiments"])
    assert (ROOT / "docs" / "results" / "report.html").is_file()  # the sample report


def test_every_generated_block_is_its_rendering():
    assert _script().stale() == [], "run python scripts/results_doc.py REPORT_DIR"


def test_every_figure_in_the_claim_table_is_in_the_results_files():
    script = _script()
    results, full, _ = script.read_all()
    block = script.block((ROOT / "docs" / "results.md").read_text(encoding="utf-8"), "claims")
    by_text = {c["text"]: c for c in results["claims"]}
    at_full = {c["id"]: c for c in (full or {"claims": []})["claims"]}
    rows = [r for r in block.splitlines() if r.startswith("| ") and "**" in r]
    assert len(rows) == len(by_text)
    for row in rows:
        text, verdict, rule, measured, chapter, full_cell = [
            c.strip() for c in row.strip("|").split(" | ")]
        claim = by_text[text.replace("\\|", "|")]
        assert verdict == f"**{claim['status'].upper()}**"
        assert rule == _version(claim)  # the recorded version, or "not recorded", never made up
        cells = [(measured, claim["measured"]), (chapter, claim["chapter"])]
        if claim["id"] in at_full:
            found = at_full[claim["id"]]
            head = f"**{found['status'].upper()}** (rule {_version(found)}) "
            assert full_cell.startswith(head)
            cells.append((full_cell.removeprefix(head), found["measured"]))
        else:
            assert full_cell == "not run at full"
        for cell, source in cells:
            for figure in NUMBER.findall(cell):
                assert figure in source, f"{text}: {figure} is not in the results file"


def _version(claim: dict) -> str:
    return "not recorded" if claim.get("version") is None else f"v{claim['version']}"


def test_a_verdict_without_a_recorded_version_is_shown_as_such():
    script = _script()
    old = {"id": "x.a", "text": "a claim", "status": "held", "measured": "1", "chapter": "–"}
    full = {"claims": [{**old, "version": 2}]}
    text = script.render_claims({"profile": "quick", "processor": "cpu", "cpu_count": 2,
                                 "device": "cpu", "started_at": "2026-12-01T00:00",
                                 "claims": [old], "summary": {"held": 1}}, full)
    row = next(r for r in text.splitlines() if r.startswith("| a claim"))
    assert row == "| a claim | **HELD** | not recorded | 1 | – | **HELD** (rule v2) 1 |"


def test_no_run_time_is_written_by_hand_outside_a_generated_block():
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"<!-- results:(\w+):begin -->.*?<!-- results:\1:end -->", "", text,
                      flags=re.S)
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # commands and their printed output
        found = DURATION.findall(text)
        assert not found, f"{page.name} quotes {found} by hand: generate it (results_doc.py)"


def test_the_full_results_say_what_ran_and_what_did_not():
    from attnlab.kit import registry

    _, full, _ = _script().read_all()
    assert full is not None, "docs/results/claims-full.json is missing"
    assert full["profile"] == "full" and full["processor"]
    ran = [e["name"] for e in full["experiments"]]
    assert sorted(ran + full["not_run"]["experiments"]) == sorted(registry.EXPERIMENTS)
    ids = {c.id for name in ran for c in registry.load(name).claims}
    assert {c["id"] for c in full["claims"]} == ids


def test_the_recorded_claims_are_claims_of_the_registry():
    from attnlab.kit import registry

    ids = {c.id for name in registry.EXPERIMENTS for c in registry.load(name).claims}
    stale = [c["id"] for c in _results()["claims"] if c["id"] not in ids]
    assert not stale, f"renamed or removed claims in docs/results/claims.json: {stale}"


def _run(started: str, names: list[str]) -> dict:
    header = {"profile": "full", "started_at": started, "finished_at": started, "wall_s": 60.0,
              "phases_s": {"train": 60.0}, "processor": "cpu x", "cpu_count": 2,
              "device": "cpu", "torch": "2", "code_revision": {"commit": "abc1234"}}
    return {**header, "summary": {}, "experiments": [
        {"name": n, "title": n, "seeds": 3, "runs": 1, "train_s": 1.0, "analysis_s": 1.0,
         "counts": {"held": 1, "not held": 0, "inconclusive": 0}, "extra_round": None,
         "table": f"table of {n}"} for n in names],
        "claims": [{"id": f"{n}.c", "experiment": n, "status": "held", "measured": "1",
                    "chapter": "–"} for n in names]}


def test_a_full_run_of_some_experiments_adds_to_the_full_runs_before_it(monkeypatch):
    script = _script("results_collect")
    runs = iter([_run("2026-12-01T00:00", ["winograd", "induction"]),
                 _run("2026-12-02T00:00", ["position", "induction"])])
    monkeypatch.setattr(script, "collect", lambda report: next(runs))
    first = script.collect_full(Path("a"))
    both = script.collect_full(Path("b"), first)
    assert [e["name"] for e in both["experiments"]] == ["position", "winograd", "induction"]
    by_name = {e["name"]: e["run"]["started_at"][:10] for e in both["experiments"]}
    assert by_name == {"position": "2026-12-02", "winograd": "2026-12-01",
                       "induction": "2026-12-02"}  # the later run replaces the earlier
    assert sorted(c["id"] for c in both["claims"]) == ["induction.c", "position.c", "winograd.c"]
    assert "position" not in both["not_run"]["experiments"]
    text = _script().render_full(both, None)
    assert text.count("`attnlab reproduce --profile full`") == 2  # each run, its experiments
    first_run, second_run = text.split("`attnlab reproduce --profile full`")[1:]
    assert "`position`" in first_run and "`winograd`" in second_run
    assert "`winograd`" not in first_run


# a key of the code (``mean_A``, ``block1_max_abs_diff``); ``d_k`` and ``g_k`` (the gradient
# k steps back) are the chapter's symbols
CODE_KEY = re.compile(r"\b(?!(?:d_k|g_k)\b)[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")
DECIMAL = re.compile(r"\d[\d,]*\.\d+")


def _unrounded(cell: str) -> list[str]:
    """The decimals in ``cell`` with seven or more significant digits (a float written raw,
    as ``1.8830050070179605``): a published figure is rounded for its reader."""
    return [x for x in DECIMAL.findall(cell)
            if len(x.replace(",", "").replace(".", "").lstrip("0")) >= 7]


def test_a_published_cell_speaks_to_a_reader_and_carries_todays_rule():
    """Every verdict published in docs/results/ (quick and full) names its figures in words,
    rounded, and was decided by the rule each claim has today: a run made under an older rule
    version (or before versions were recorded) is run again or listed as not run."""
    from attnlab.kit import registry

    current = {c.id: c.version for name in registry.EXPERIMENTS
               for c in registry.load(name).claims}
    results, full, _ = _script().read_all()
    problems = []
    for where, record in (("claims.json", results), ("claims-full.json", full)):
        for c in (record or {"claims": []})["claims"]:
            for field in ("measured", "chapter"):
                keys = CODE_KEY.findall(re.sub(r"`[^`]*`", "", c[field]))
                if keys:
                    problems.append(f"{where} {c['id']} {field}: code keys {keys}")
                if _unrounded(c[field]):
                    problems.append(f"{where} {c['id']} {field}: unrounded {_unrounded(c[field])}")
            if c.get("version") != current.get(c["id"]):
                problems.append(f"{where} {c['id']}: rule version {c.get('version')}, today "
                                f"{current.get(c['id'])}")
    assert not problems, "\n".join(problems)


def test_the_published_cell_check_can_fail():
    assert CODE_KEY.findall("as well: mean_A 1, block1_max_abs_diff 0.52") == [
        "mean_A", "block1_max_abs_diff"]
    assert CODE_KEY.findall("d_k 32 — unscaled ÷ scaled − 1, d_k = 32; ln‖g_k‖") == []
    assert _unrounded("range [1.8830050070179605, 2.44]") == ["1.8830050070179605"]
    assert _unrounded("124,439,808 parameters; 0.00363; 66.6 %; 1,217.90") == []


def test_a_full_run_under_an_older_rule_is_not_kept_beside_todays(monkeypatch):
    """A full run kept from before is dropped to the not-run list when a claim of its
    experiment has a newer rule version today (or its verdicts recorded none)."""
    from attnlab.kit import registry

    script = _script("results_collect")
    claims = {n: registry.load(n).claims for n in ("winograd", "induction")}
    old = _run("2026-12-01T00:00", ["winograd", "induction"])
    old["claims"] = [{"id": c.id, "experiment": n, "status": "held", "measured": "1",
                      "chapter": "–", "version": c.version}
                     for n, cs in claims.items() for c in cs]
    old["claims"][0]["version"] = claims["winograd"][0].version - 1 or None  # an older rule
    new = _run("2026-12-02T00:00", ["agreement"])
    runs = iter([old, new])
    monkeypatch.setattr(script, "collect", lambda report: next(runs))
    both = script.collect_full(Path("b"), script.collect_full(Path("a")))
    assert [e["name"] for e in both["experiments"]] == ["agreement", "induction"]
    assert "winograd" in both["not_run"]["experiments"]
    assert not [c for c in both["claims"] if c["experiment"] == "winograd"]
