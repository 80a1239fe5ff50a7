"""A report folder holds one profile, and its results whole (issue 47's hostile inputs).

`run`, `reproduce` and `report` over a folder holding another profile's report or results are
one line, exit 2, the folder byte for byte as it was, until `--replace` deletes the other
profile's files; a truncated experiment `result.json` under `report` is named as damaged, with
the command that makes it again, and no report is written over the one that had it. The
folders are one real micro result (`params`, seconds, no training) and hand-written records.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fault_tools import cli, one_line_error, tree_hash

from attnlab.cli.outputs import held, profiles_in


@pytest.fixture(scope="module")
def micro(tmp_path_factory) -> Path:
    """A folder holding profile micro's report and its `params` result."""
    root = tmp_path_factory.mktemp("micro")
    code, _, err = cli("run", "params", "--profile", "micro", "--out", root / "out",
                       "--work", root / "runs", "--jobs", "1")
    assert code == 0, err
    code, _, err = cli("report", "--profile", "micro", "--out", root / "out")
    assert code == 0, err
    return root / "out"


@pytest.fixture
def folder(micro, tmp_path) -> Path:
    shutil.copytree(micro, tmp_path / "out")
    return tmp_path / "out"


def hand_written(out: Path, profile: str, report: bool = True) -> None:
    """A `ladder` result of ``profile`` in ``out`` and, with ``report``, its report."""
    (out / "ladder").mkdir(parents=True)
    envelope = {"name": "ladder", "title": "The ladder", "profile": profile, "seeds": 3,
                "settings": {}, "record": {}}
    (out / "ladder" / "result.json").write_text(json.dumps(envelope))
    if report:
        (out / "results.json").write_text(json.dumps({"meta": {"profile": profile},
                                                      "experiments": {"ladder": envelope}}))
        (out / "report.md").write_text(f"# the {profile} report\n")


def refusal(out: Path, there: str, profile: str, other: str) -> str:
    return (f"attnlab: error: {out} holds {there}; writing profile {profile} there would mix two "
            f"profiles in one folder: pass --profile {other} to keep to it, choose another "
            "--out, or pass --replace to delete them first")


def training(out: Path, tmp_path: Path) -> list[object]:
    return ["--out", out, "--work", tmp_path / "runs", "--jobs", "1"]


@pytest.mark.parametrize("command", [
    ["run", "params"], ["reproduce", "--only", "params"], ["reproduce", "--report-only"],
    ["report"],
])
def test_quick_over_a_micro_folder_is_refused_and_the_folder_kept(folder, tmp_path, command):
    before = tree_hash(folder)
    extra = training(folder, tmp_path) if command[0] != "report" else ["--out", folder]
    line = one_line_error(cli(*command, *extra))
    assert line == refusal(folder, "profile micro's report and result (params)", "quick",
                           "micro")
    assert tree_hash(folder) == before
    assert not (tmp_path / "runs").exists()  # refused before any work


def test_micro_over_a_quick_report_is_refused(tmp_path):
    out = tmp_path / "out"
    hand_written(out, "quick")
    before = tree_hash(out)
    line = one_line_error(cli("reproduce", "--profile", "micro", "--only", "params",
                                  *training(out, tmp_path)))
    assert line == refusal(out, "profile quick's report and result (ladder)", "micro", "quick")
    assert tree_hash(out) == before


def test_results_of_another_profile_without_a_report_are_refused_too(folder, tmp_path):
    for name in ("report.md", "report.html", "results.json"):
        (folder / name).unlink()
    before = tree_hash(folder)
    line = one_line_error(cli("run", "params", *training(folder, tmp_path)))
    assert line == refusal(folder, "profile micro's result (params)", "quick", "micro")
    assert tree_hash(folder) == before


def test_the_same_profile_and_files_not_ours_are_not_refused(folder, tmp_path):
    (folder / "notes").mkdir()
    (folder / "notes" / "result.json").write_text("{\"steps\": 4}")  # a training run's record
    code, _, err = cli("report", "--profile", "micro", "--out", folder)
    assert code == 0, err
    assert profiles_in(folder) == {"micro": ["report", "params"]}


def test_replace_deletes_the_other_profile_and_keeps_this_one(folder, tmp_path):
    hand_written(folder, "quick")  # over micro's report: the report is quick's now
    params = (folder / "params" / "result.json").read_bytes()
    code, out, err = cli("run", "params", "--profile", "micro", "--replace",
                         *training(folder, tmp_path))
    assert code == 0, err
    assert (f"--replace: deleted profile quick's report and result (ladder) from {folder}"
            in err.splitlines())
    assert profiles_in(folder) == {"micro": ["params"]}  # the report goes: it was quick's
    assert not (folder / "ladder").exists() and not (folder / "report.md").exists()
    assert (folder / "params" / "result.json").read_bytes() == params  # reused, not redone
    assert "results in" in out


def test_report_replace_writes_one_profile(folder):
    hand_written(folder, "quick", report=False)
    before = tree_hash(folder)
    line = one_line_error(cli("report", "--profile", "micro", "--out", folder))
    assert line == refusal(folder, "profile quick's result (ladder)", "micro", "quick")
    assert tree_hash(folder) == before
    code, _, err = cli("report", "--profile", "micro", "--replace", "--out", folder)
    assert code == 0, err
    assert profiles_in(folder) == {"micro": ["report", "params"]}


def test_held_says_what_a_folder_holds():
    assert held("micro", ["report"]) == "profile micro's report"
    assert held("full", ["cost"]) == "profile full's result (cost)"
    assert held("quick", ["report", "ladder", "params"]) == \
        "profile quick's report and 2 results (ladder, params)"


# -- a truncated experiment result -------------------------------------------------------

@pytest.mark.parametrize("command", [["report"], ["reproduce", "--report-only"]])
def test_a_truncated_result_is_named_damaged_and_the_report_kept(folder, command):
    path = folder / "params" / "result.json"
    path.write_bytes(path.read_bytes()[:200])
    before = tree_hash(folder)
    line = one_line_error(cli(*command, "--profile", "micro", "--out", folder))
    assert line.startswith(f"attnlab: error: {path} is damaged: not valid JSON (")
    assert line.endswith(f"; make it again with `attnlab run params --profile micro --out "
                         f"{folder}`, then run this command again")
    assert tree_hash(folder) == before  # the report that had params is not written over
