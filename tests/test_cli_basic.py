"""Smoke runs of the foundation commands and their bad-input paths."""

from __future__ import annotations

import subprocess
import sys

import pytest

from attnlab.cli.main import main


def test_params_gpt2_small_prints_the_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["params", "--preset", "gpt2-small"]) == 0
    out = capsys.readouterr().out
    assert "124,439,808" in out and "MLP share" in out


def test_params_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["params", "--set", "n_layer=3", "--set", "mlp=false"]) == 0
    assert "block 3" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,match",
    [
        (["params", "--set", "n_head=3"], "does not divide"),
        (["params", "--set", "position=absolute"], "unknown position"),
        (["params", "--set", "d_modle=3"], "unknown key model.d_modle"),
        (["params", "--set", "n_layer=two"], "expects int"),
        (["params", "--set", "nokey"], "section.key=value"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1 and err.startswith("attnlab: error:")


def test_unknown_subcommand_exits_2() -> None:
    proc = subprocess.run([sys.executable, "-m", "attnlab.cli.main", "frobnicate"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_verify_command_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) == 0
    out = capsys.readouterr().out
    assert "all checks passed" in out and "FAIL" not in out and "SKIP" not in out


def test_verify_runs_each_check_on_the_chosen_device(monkeypatch, capsys) -> None:
    import torch

    import attnlab.verify as verify
    from attnlab.verify import Check

    seen = []

    def where() -> Check:
        seen.append(torch.empty(1).device.type)  # what a check's new tensors get
        return Check("a check that passes", 0.0, 1e-6)

    monkeypatch.setattr(verify, "CHECKS", [where])
    assert main(["verify", "--device", "cpu"]) == 0 and seen == ["cpu"]
    if not torch.cuda.is_available():
        assert main(["verify", "--device", "cuda"]) == 2  # refused before any check
        assert seen == ["cpu"]
        assert capsys.readouterr().err.strip() == \
            "attnlab: error: --device cuda: no CUDA device is available (use auto or cpu)"
    else:
        assert main(["verify", "--device", "cuda"]) == 0 and seen[-1] == "cuda"


def test_verify_says_how_many_checks_were_skipped_and_why(monkeypatch, capsys) -> None:
    import attnlab.verify as verify
    from attnlab.verify import Check

    def passes() -> Check:
        return Check("a check that passes", 0.0, 1e-6)

    def needs_transformers() -> Check:
        raise ImportError("No module named 'transformers'")

    monkeypatch.setattr(verify, "CHECKS", [passes, needs_transformers])
    assert main(["verify"]) == 0  # nothing failed
    out = capsys.readouterr().out
    assert "all checks passed" not in out
    assert out.strip().splitlines()[-1] == (
        "1 checks passed, 1 skipped (needs_transformers: No module named 'transformers')")

    def fails() -> Check:
        return Check("a check that fails", 1.0, 1e-6)

    monkeypatch.setattr(verify, "CHECKS", [passes, fails, needs_transformers])
    assert main(["verify"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(
        "1 check(s) FAILED, 1 passed, 1 skipped")
