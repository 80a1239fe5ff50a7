"""A report re-rendered from earlier records (``attnlab report``) states the time of the run
that made them, and says it was re-rendered: never its own few seconds as the run's wall time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnlab.cli.main import main as cli_main
from attnlab.report.provenance import earlier_run, rerendered
from attnlab.report.write import wall_text, write_report

ORIGINAL = {"profile": "quick", "started_at": "2026-12-02T13:37:49+0000",
            "finished_at": "2026-12-02T14:02:54+0000", "wall_s": 1504.2,
            "phases_s": {"train": 658.0}, "machine": {"device": "cpu", "CPU count": 2},
            "code_revision": {"commit": "92e0988"}, "corpus_status": "`tiny.txt`"}
ENVELOPES = {"params": {"status": "ok", "wall_s": 2.3, "train_s": 0, "runs": 0, "seeds": 3},
             "ladder": {"status": "ok", "wall_s": 0.5, "train_s": 375.1, "runs": 60}}


def write_results(folder: Path, meta: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps({"meta": meta}), encoding="utf-8")


def test_earlier_run_is_the_run_that_made_the_records(tmp_path):
    write_results(tmp_path, ORIGINAL)
    got = earlier_run(tmp_path, "quick")
    assert got["wall_s"] == 1504.2 and got["finished_at"] == ORIGINAL["finished_at"]
    assert "corpus_status" not in got
    assert earlier_run(tmp_path, "full") is None  # another profile's results
    assert earlier_run(tmp_path / "nowhere", "quick") is None
    again = rerendered({"profile": "quick", "wall_s": 0.01, "phases_s": {"train": 0.0}},
                       tmp_path)
    assert again["report_only"] and again["phases_s"] == {}
    write_results(tmp_path, again)  # a re-render of a re-render keeps the first run's time
    assert earlier_run(tmp_path, "quick")["wall_s"] == 1504.2
    old = {"profile": "quick", "wall_s": 0.01, "corpus_status": "not used (report only)"}
    write_results(tmp_path, old)  # a re-render written before re-renders were marked
    assert earlier_run(tmp_path, "quick") is None


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_rerendered_report_gives_the_original_wall_time(tmp_path, lang):
    meta = {"profile": "quick", "wall_s": 0.01, "finished_at": "2026-12-02T14:31:14+0000",
            "report_only": True, "phases_s": {},
            "original_run": {k: v for k, v in ORIGINAL.items() if k != "corpus_status"}}
    text = write_report(ENVELOPES, [], tmp_path, meta, lang=lang)["markdown"].read_text(
        encoding="utf-8")
    assert "0.0 s |" not in text and "25m04s" in text
    assert ("re-rendered" if lang == "en" else "recompuso") in text
    assert "2026-12-02T14:02:54+0000" in text  # the original run's finish, in the glance


@pytest.mark.parametrize("lang", ["en", "es"])
def test_without_the_original_it_says_so_and_sums_the_records(lang):
    meta = {"profile": "quick", "wall_s": 0.01, "report_only": True, "original_run": None,
            "finished_at": "2026-12-02T14:31:14+0000"}
    text = wall_text(meta, ENVELOPES, lang)
    assert "0.0 s" not in text and "6m18s" in text  # 2.3 + 0.5 + 375.1 s, the records' own
    assert ("not recorded" if lang == "en" else "no registrado") in text
    assert wall_text({"wall_s": 1504.2}, ENVELOPES, lang) == "25m04s"  # a run's own


def test_attnlab_report_keeps_the_run_s_time(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    assert cli_main(["reproduce", "--profile", "micro", "--only", "params", "--out", str(out),
                     "--work", str(work)]) == 0
    made = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
    assert cli_main(["report", "--profile", "micro", "--out", str(out), "--lang", "es"]) == 0
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
    assert meta["report_only"] and meta["original_run"]["wall_s"] == made["wall_s"]
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "recompuso a partir de sus registros" in text
    assert "| fase de análisis | 0.0 s |" not in text


def test_a_short_time_is_not_said_as_none():
    from attnlab.report.words import duration

    assert [duration(x) for x in (0.0014, 0, 0.06, 59.9, 1504.2, None)] == \
        ["< 0.1 s", "0 s", "0.1 s", "59.9 s", "25m04s", "–"]
