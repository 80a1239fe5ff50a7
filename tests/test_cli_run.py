"""``attnlab run`` and ``attnlab reproduce``: output, exit codes, bad input."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from attnlab.cli import common
from attnlab.cli import main as cli_main
from attnlab.cli import reproduce as reproduce_cmd
from attnlab.cli import run as run_cmd
from attnlab.errors import UsageError
from attnlab.kit import registry


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="attnlab")
    sub = parser.add_subparsers(dest="command", required=True)
    run_cmd.register(sub)
    reproduce_cmd.register(sub)
    return parser.parse_args(argv)


def call(argv: list[str]) -> tuple[int, str, str]:
    args = parse(argv)
    out, err = io.StringIO(), io.StringIO()
    return args.func(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    return ["--out", str(root / "out"), "--work", str(root / "work")]


@pytest.fixture(scope="module")
def ran(dirs):
    return call(["run", "params", "--profile", "micro", *dirs])


def test_run_params_prints_table_and_claims(ran):
    code, out, err = ran
    assert code == 0
    assert "124,439,808" in out and "MLP share" in out
    assert out.count("**HELD**") == 1 and out.count("**SKIPPED**") == 1  # micro: no HF count
    assert out.rstrip().splitlines()[-1].startswith("results in ")
    assert "[1/1] params: Where the parameters are ..." in err
    assert "[1/1] params: done in" in err


def test_reproduce_only_params_writes_the_report(ran, dirs):
    code, out, err = call(["reproduce", "--profile", "micro", "--only", "params", *dirs])
    assert code == 0
    assert "claims: 1 held, 0 not held, 0 inconclusive, 1 skipped, 0 error" in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("report: ") and "report.html" in last
    assert "[1/1] params: reused the finished record" in err  # `run` above finished it
    results = json.loads((Path(dirs[1]) / "results.json").read_text())
    assert results["meta"]["profile"] == "micro"


def test_reproduce_exit_code_on_failure(dirs, monkeypatch):
    def load(name):
        raise ModuleNotFoundError(f"No module named 'attnlab.experiments.{name}'")

    monkeypatch.setattr(registry, "load", load)
    code, out, err = call(["reproduce", "--profile", "micro", "--only", "ladder", *dirs])
    assert code == 1
    assert "FAILED ladder: cannot load: ModuleNotFoundError" in out
    assert "[1/1] ladder: FAILED" in err


@pytest.mark.parametrize("argv, message", [
    (["run", "nosuch"], "unknown experiment"),
    (["reproduce", "--only", "params,nosuch"], "unknown experiment"),
    (["reproduce", "--only", ","], "--only needs"),
])
def test_bad_input_is_a_value_error(argv, message):
    with pytest.raises(ValueError, match=message):
        call(argv)


def test_run_without_corpus_is_one_clear_error(monkeypatch, tmp_path):
    import types

    mod = types.SimpleNamespace(needs_corpus=True, title="Needs the corpus")
    monkeypatch.setattr(registry, "load", lambda name: mod)
    with pytest.raises(ValueError, match="does not exist"):
        call(["run", "ladder", "--corpus", str(tmp_path / "absent.txt")])


def test_agreement_runs_by_name_and_its_claims_print(dirs):
    # --extra-seeds 0: at micro the curriculum's claim is inconclusive on 3 seeds and would
    # grow the experiment to 5
    code, out, err = call(["run", "agreement", "--profile", "micro", "--seeds", "3",
                           "--extra-seeds", "0", "--jobs", "1", *dirs])
    assert code == 0
    assert "majority-form baseline" in out and "rank by subject weight" in out
    assert "Some head puts most of its weight" in out and "3 seeds" in out
    assert "training 3 of 3" not in err  # one experiment: no suite line
    code, out, _ = call(["reproduce", "--profile", "micro", "--seeds", "3", "--only",
                         "agreement", *dirs])
    assert code == 0 and "[1/1] agreement" not in out
    report = (Path(dirs[1]) / "report.md").read_text()
    assert "agreement.predicts_form" not in report  # the text is shown, with its margin
    assert "predicts the agreeing form" in report and "majority-form baseline" in report


def test_estimate_prints_and_runs_nothing(dirs, tmp_path):
    work = ["--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]
    code, out, _ = call(["reproduce", "--profile", "micro", "--only", "agreement", "--estimate",
                         *work])
    assert code == 0 and "estimate (micro" in out and "agreement: 1 run, " in out
    assert not (tmp_path / "work").exists() and not (tmp_path / "out").exists()


def test_extra_seeds_progress_line():
    info = {"event": "extra", "because": {"norm": ["norm.a", "norm.b"]}, "runs": 20,
            "pending": 0, "workers": 2}
    assert common.suite_line(info) == \
        "extra seeds: all 20 runs finished earlier; inconclusive on the planned seeds: " \
        "norm: norm.a, norm.b"
    assert common.suite_line({**info, "pending": 8}).startswith(
        "extra seeds: training 8 of 20 runs on 2 worker processes; ")


def test_progress_lines():
    stream = io.StringIO()
    sink = run_cmd.SuiteProgress(stream)
    sink({"kind": "experiment", "index": 2, "total": 7, "name": "sqrt_dk", "event": "done",
          "wall_s": 245.0})
    sink({"kind": "train", "step": 3000, "steps": 3000, "loss": 4.5, "tokens_per_s": 12345.0,
          "eta_s": 0.0})
    sink({"kind": "something else"})
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[2/7] sqrt_dk: done in 4m05s"
    assert "3000/3000" in lines[1] and "12,345 tok/s" in lines[1]
    assert len(lines) == 2


def test_main_wires_run_and_reproduce(capsys, monkeypatch):
    # The lead adds "run" and "reproduce" to SUBCOMMANDS; until then, add them here.
    names = list(dict.fromkeys([*cli_main.SUBCOMMANDS, "run", "reproduce"]))
    monkeypatch.setattr(cli_main, "SUBCOMMANDS", names)
    assert cli_main.main(["run", "nosuch"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert cli_main.main(["reproduce", "--only", "nosuch"]) == 2
    with pytest.raises(SystemExit) as exc:
        cli_main.main(["reproduce", "--help"])
    assert exc.value.code == 0
    assert "--only" in capsys.readouterr().out


def test_report_only_runs_nothing(ran, dirs, tmp_path):
    code, out, _ = call(["reproduce", "--profile", "micro", "--only", "params", "--report-only",
                         *dirs])
    assert code == 0 and "claims: 1 held" in out
    empty = ["--out", str(tmp_path / "empty"), "--work", str(tmp_path / "w")]
    with pytest.raises(UsageError) as err:  # a report of nothing is refused, as `report` does
        call(["reproduce", "--profile", "micro", "--only", "params", "--report-only", *empty])
    assert str(err.value) == (f"{tmp_path / 'empty'} does not exist; nothing to report: check "
                              "--out and --profile, or make results first with `attnlab run "
                              "NAME` or `attnlab reproduce`")
    assert cli_main.main(["reproduce", "--profile", "micro", "--report-only", *empty]) == 2
    assert not (tmp_path / "empty").exists()  # nothing ran, nothing written


def test_extra_seeds_through_run_and_reproduce(monkeypatch, tmp_path, trained_hashes):
    from test_exp_extra_seeds import use_fakes

    use_fakes(monkeypatch)
    calls = trained_hashes
    where = ["--profile", "quick", "--jobs", "1", "--device", "cpu",
             "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work")]
    code, out, err = call(["run", "wobbly", *where])  # quick: no round unless asked
    assert code == 0 and len(calls) == 3 and "no extra round: none at the quick profile" in out
    code, out, err = call(["run", "wobbly", "--extra-seeds", "2", *where])
    assert code == 0 and len(calls) == 5
    assert "Seeds: 5; extra round: seeds 3-4 added because wobbly.coin was inconclusive on " \
        "3 seeds" in out
    assert out.count("5 seeds") == 2  # both claims decided again on all five
    assert "extra seeds: training 2 of 5 runs on this process; inconclusive on the planned " \
        "seeds: wobbly: wobbly.coin" in err
    code, out, err = call(["run", "steady", "--extra-seeds", "0", *where])
    assert code == 0 and len(calls) == 8
    assert "Seeds: 3; no extra round: none at the quick profile unless asked" in out
    code, out, err = call(["reproduce", "--extra-seeds", "2", *where])  # both reused; steady's
    # note is the rule's now
    assert code == 0 and len(calls) == 8
    assert "wobbly: extra round: seeds 3-4 added because wobbly.coin was inconclusive on 3 " \
        "seeds (now 5 seeds)" in out
    assert "[1/2] wobbly: reused the finished record" in err and "extra seeds:" not in err
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["meta"]["extra_seeds"] == 2
    assert results["meta"]["extra_round"] == {"wobbly": ["wobbly.coin"]}
    assert results["experiments"]["steady"]["extra_round"]["text"] == \
        "no extra round: no training claim was inconclusive on 3 seeds"
