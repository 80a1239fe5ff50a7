"""The chapter beside the measurement: figures as data, readers of records, the fidelity count,
and the report's chapter column, budget note and first screen, on hand-made records."""

from __future__ import annotations

import pytest

from attnlab.kit import registry
from attnlab.kit.chapter import Chapter, ChapterFigure, ratio
from attnlab.kit.registry import Experiment, RecordError
from attnlab.report import fidelity, glance
from attnlab.report.write import compose

CHAPTERS = {name: registry.chapter(name) for name in registry.EXPERIMENTS}
FIGURES = tuple(f for part in CHAPTERS.values() for f in part.figures)
BY_KEY = {f.key: f for f in FIGURES}
BUDGETS = {name: part.budget for name, part in CHAPTERS.items()}


def _norm_record(scale: dict[str, float]) -> dict:
    """A norm record whose held-out ppl is the chapter's times ``scale`` per cell."""
    return {"cells": {cell: [{"held_ppl": BY_KEY[f"norm/{cell}"].value * k}] * 3
                      for cell, k in scale.items()}}


def test_fidelity_counts_the_bands():
    # 1% and −2% are within 2%; 4% within 5% only; 50% in neither
    rec = _norm_record({"pre/no_warmup": 1.01, "pre/warmup": 0.98, "post/no_warmup": 1.5,
                        "post/warmup": 1.04})
    comparisons = fidelity.compare("norm", rec)
    assert [c.figure.key for c in comparisons] == ["norm/pre/no_warmup", "norm/pre/warmup",
                                                   "norm/post/no_warmup", "norm/post/warmup"]
    assert comparisons[2].relative == pytest.approx(0.5)
    assert comparisons[0].difference == pytest.approx(0.3782)
    assert fidelity.fidelity(comparisons) == {"compared": 4, "within 2%": 2, "within 5%": 3}
    assert fidelity.fidelity([]) == {"compared": 0, "within 2%": 0, "within 5%": 0}


def test_seed_means_and_summed_words_are_read():
    rec = {"grad_norms": {"pre": [[0.04, 0.5, 0.06], [0.06, 0.5, 0.08]]}}
    got = fidelity.measured("norm", rec)
    assert got["norm/grad pre first"] == pytest.approx(0.05)
    assert got["norm/grad pre last"] == pytest.approx(0.07)
    assert got["norm/grad pre ratio"] == pytest.approx((1.5 + 4 / 3) / 2)
    tokens = ["the", "animal", "the", "{adj}"]
    att = {"tokens": tokens, "blocks": [{"tired": [0.1, 0.6, 0.2, 0.1]}, None]}
    got = fidelity.measured("winograd", {"variants": {}, "attention": att})
    assert got["winograd/block 1 tired/the"] == pytest.approx(0.3)  # both `the`s
    assert got["winograd/block 1 tired/tired"] == pytest.approx(0.1)


def test_another_shape_is_not_compared_and_never_raises():
    assert fidelity.compare("norm", {"cells": {"pre/no_warmup": "?"}}) == []
    assert fidelity.compare("agreement", {"top1": [1.0]}) == []  # no chapter figure
    assert fidelity.compare("ladder", {}) == []


def test_every_experiment_has_its_chapter_part_and_every_figure_a_reader():
    assert all(isinstance(part, Chapter) and part.budget for part in CHAPTERS.values())
    assert len(BY_KEY) == len(FIGURES)  # keys are unique
    for f in FIGURES:
        assert CHAPTERS[f.experiment].measured is not None
    derived = [f.key for f in FIGURES if f.derived]
    assert "ladder/row 5/held" in derived and "ladder/row 1/held" not in derived
    # the derived rows follow from the printed ones as the text says
    assert BY_KEY["ladder/row 5/held"].value == pytest.approx(60.45 - 14)
    assert BY_KEY["ladder/row 8/held"].value == pytest.approx(38.07 + 1.8)


def _ladder_envelope(profile: str) -> dict:
    rows = [{"row": 1, "held_ppl": [150.0, 154.0], "train_ppl": [140.0, 141.0], "params": 10},
            {"row": 5, "held_ppl": [140.0, 142.0], "train_ppl": [130.0, 131.0], "params": 20}]
    return {"name": "ladder", "title": "The ladder", "profile": profile, "seeds": 3,
            "record": {"rows": rows}}


def _verdict(status: str) -> dict:
    return {"id": "ladder.head_beats_mean", "experiment": "ladder", "status": status,
            "text": "One learned head clearly beats the mean.", "rule": "ratio ≤ 0.9",
            "trained": True, "seeds": 3, "why": "", "parts": []}


def _meta(profile: str) -> dict:
    return {"profile": profile, "wall_s": 75.0, "machine": {"processor": "Test CPU 9000",
                                                            "CPU count": 2, "device": "cpu"}}


def test_a_quick_report_shows_the_chapter_column_and_the_budget_note(tmp_path):
    text = compose({"ladder": _ladder_envelope("quick")}, [_verdict("not held")],
                   _meta("quick"), tmp_path, tmp_path)
    assert "| figure | measured | chapter | difference |" in text
    assert "| row 1 no context: held-out ppl | 152 | 59.71 | +92.29 (+154.6%) |" in text
    assert "(†1)" in text and "†1 derived from the chapter's text: row 4 − 14" in text
    assert fidelity.budget_note("quick") in text
    assert f"the chapter's budget was {BUDGETS['ladder']}" in text  # beside the claims
    first = text[: text.index("## Claim summary")]
    assert "| machine | Test CPU 9000, 2 cores, CPU |" in first
    assert "`quick`" in first and "1m15s" in first
    assert "shown for orientation" in first and "within 2%" not in first


def test_a_full_report_sums_up_fidelity_and_names_no_budget(tmp_path):
    env = _ladder_envelope("full")
    env["record"]["rows"][0]["held_ppl"] = [59.71 * 1.01, 59.71 * 1.01]  # within 2%
    text = compose({"ladder": env}, [_verdict("held")], _meta("full"), tmp_path, tmp_path)
    first = text[: text.index("## Claim summary")]
    assert "1 of 2 measured figures within 2% of the chapter's, 1 within 5%" in first
    assert "Within 2% of the chapter: 1 of 2; within 5%: 1." in text
    assert fidelity.budget_note("full") not in text and "the chapter's budget" not in text


def test_the_processor_is_named_from_cpuinfo_when_platform_is_silent(tmp_path, monkeypatch):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Example Xeon 1234\nflags\t: fpu\n")
    monkeypatch.setattr(glance.platform, "processor", lambda: "")
    assert glance.processor_name(info) == "Example Xeon 1234"
    assert glance.processor_name(tmp_path / "missing") == "–"
    monkeypatch.setattr(glance, "processor_name", lambda: "Example Xeon 1234")
    meta = {"machine": {"processor": "–", "platform": glance.platform.platform()}}
    assert glance.with_processor(meta)["machine"]["processor"] == "Example Xeon 1234"
    other = {"machine": {"processor": "–", "platform": "another machine"}}
    assert glance.with_processor(other) == other


def test_the_chapters_laptop_milliseconds_are_compared_only_as_ratios_and_exponents():
    """SPEC §3.12: a machine 10× slower than the laptop GPU with the same growth matches the
    chapter on every time figure; no figure of the comparison is a millisecond."""
    assert not [f for f in FIGURES if f.experiment == "cost" and "ms" in f.key]
    chapter = [(n, BY_KEY[f"cost/naive n={n} nn MB"].value) for n in (128, 256, 512, 1024)]
    ms = {128: 2.246, 256: 2.855, 512: 5.761, 1024: 16.414}  # the chapter's, to scale by 10
    rows = [{"kind": "naive", "n": n, "status": "ok", "total_ms": 10 * ms[n],
             "proj_ms": 3.0 * n, "nn_bytes": mb * 2**20, "peak_bytes": n * n}
            for n, mb in chapter]
    rec = {"records": rows, "exponents": {"naive": {"time": 1.91, "memory": 1.87}}}
    by_key = {c.figure.key: c for c in fidelity.compare("cost", rec)}
    for n in (256, 512, 1024):
        assert by_key[f"cost/naive n={n} time ratio"].relative == pytest.approx(0, abs=1e-9)
        assert by_key[f"cost/naive n={n} proj ratio"].measured == pytest.approx(2.0)
        assert by_key[f"cost/naive n={n} peak ratio"].measured == pytest.approx(4.0)
    assert by_key["cost/naive n=256 time ratio"].figure.value == pytest.approx(2.855 / 2.246)
    assert by_key["cost/naive time exponent"].difference == pytest.approx(0)
    assert "cost/naive n=128 time ratio" not in by_key  # no row above it
    text = fidelity.table(list(by_key.values()), "quick")
    rows = [line for line in text.splitlines() if line.startswith("| naive")]
    assert len(rows) == len(by_key) and not [r for r in rows if " ms" in r]


def test_a_chapter_part_is_checked_where_it_is_declared():
    f = ChapterFigure("toy/a", "a", 1.0)
    with pytest.raises(ValueError, match="without a reader"):
        Chapter("one seed", (f,))
    with pytest.raises(ValueError, match="name no chapter figure: toy/b"):
        Chapter("one seed", (f,), dict, {"toy.c": {"": ratio("toy/a", "toy/b")}})
    params = registry.load("params")
    with pytest.raises(RecordError, match=r"chapter figures toy/a are not keyed by its name"):
        Experiment(**{**params.__dict__, "chapter": Chapter("x", (f,), dict)})
    plugin = Experiment(**{**params.__dict__, "chapter": None})  # a plugin may give none
    assert plugin.chapter is None


def test_the_report_names_no_experiment():
    """Only the experiments' own chapter parts name them: report/ reads them through the
    record (docstrings and doctests aside)."""
    import ast
    from pathlib import Path

    import attnlab.report

    names = set(registry.EXPERIMENTS)
    found = []
    for path in sorted(Path(attnlab.report.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef) and n.body
                and isinstance(n.body[0], ast.Expr)
                and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docs:
                words = set(node.value.replace("/", " ").replace(".", " ").split())
                found += [f"{path.name}: {w}" for w in words & names]
    assert found == []
