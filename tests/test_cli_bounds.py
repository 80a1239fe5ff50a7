"""Every numeric option and config field has a stated range, checked before any work: a
value past it is one line naming the range, exit 2 (issue 27's hostile inputs)."""

from __future__ import annotations

import contextlib
import io

import pytest

from attnlab.cli import main as cli_main

HUGE = "99999999999999999999"  # 10**20: planned seeds for minutes, before


def attnlab(*argv: str) -> tuple[int, str]:
    """``attnlab ARGV`` in this process: exit code and the first line of stderr."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = cli_main.main(list(argv))
        except SystemExit as exit_:  # argparse refuses an option's value while parsing
            code = exit_.code
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1, err.getvalue()
    return code, lines[0]


@pytest.mark.parametrize(("argv", "first_line"), [
    (["train", "--threads", "99999"],
     "attnlab: error: argument --threads: must be a whole number in [1, 256], got 99999"),
    (["train", "--threads", "99999999999"], "--threads: must be a whole number in [1, 256]"),
    (["train", "--threads", "0"], "--threads: must be a whole number in [1, 256], got 0"),
    (["generate", "runs/x", "--prompt", "a", "--seed", "99999999999999999999999"],
     "--seed: must be a whole number in [0, 4,294,967,295], got 99999999999999999999999"),
    (["generate", "runs/x", "--prompt", "a", "--temperature", "1e-300"],
     "--temperature: must be 0 (greedy) or a number in [0.01, 100.0], got 1e-300"),
    (["generate", "runs/x", "--prompt", "a", "--tokens", "10000000"],
     "--tokens: must be a whole number in [0, 100,000]"),
    (["run", "params", "--seeds", HUGE], f"--seeds: must be a whole number in [1, 1,000], "
                                         f"got {HUGE}"),
    (["reproduce", "--seeds", HUGE], "--seeds: must be a whole number in [1, 1,000]"),
    (["reproduce", "--extra-seeds", "5000"], "--extra-seeds: must be a whole number in [0, 1,000]"),
    (["run", "params", "--extra-seeds", "-1"], "--extra-seeds: must be a whole number in [0,"),
    (["reproduce", "--jobs", "1000000"], "--jobs: must be a whole number in [1, 512]"),
    (["reproduce", "--cluster", "ray", "--runs-per-gpu", "0"],
     "--runs-per-gpu: must be a whole number in [1, 64], got 0"),
    (["reproduce", "--estimate", "--jobs", "0"], "--jobs: must be a whole number in [1, 512]"),
    (["run", "params", "--seeds", "three"], "--seeds: must be a whole number in [1, 1,000], got"),
])
def test_an_option_past_its_range_is_refused_as_it_is_parsed(argv, first_line):
    code, line = attnlab(*argv)
    assert code == 2 and first_line in line and line.endswith("(see --help)")


@pytest.mark.parametrize(("override", "first_line"), [
    ("train.steps=" + "1" + "0" * 29, "train.steps must be in [1, 10,000,000], got 1"),
    ("model.norm_eps=-1", "model: norm_eps must be a number in (0, 1], got -1.0"),
    ("model.norm_eps=nan", "model: norm_eps must be a number in (0, 1], got nan"),
    ("model.norm_eps=0", "model: norm_eps must be a number in (0, 1]"),
    ("model.d_model=1000000000", "model: d_model must be in [1, 65,536], got 1,000,000,000"),
    ("model.vocab_size=0", "model: vocab_size must be in [1, 1,048,576], got 0"),
    ("model.n_ctx=10000000", "model: n_ctx must be in [1, 1,048,576]"),
    ("model.n_layer=5000", "model: n_layer must be in [0, 1,024], got 5,000"),
    ("model.n_head=0", "model: n_head must be in [1, 1,024], got 0"),
    ("model.mlp_ratio=1000", "model: mlp_ratio must be in [1, 64]"),
    ("model.head_dim=0", "model: head_dim must be in [1, 65,536], got 0"),
    ("model.n_pos=" + "9" * 12, "model: n_pos must be in [1, 1,048,576]"),
    ("train.batch_size=1000000", "train.batch_size must be in [1, 65,536]"),
    ("train.eval_batch_size=0", "train.eval_batch_size must be in [1, 65,536], got 0"),
    ("train.seed=-1", "train.seed must be in [0, 4,294,967,295], got -1"),
    ("train.seed=" + "9" * 20, "train.seed must be in [0, 4,294,967,295]"),
    ("train.warmup_steps=" + "9" * 12, "train.warmup_steps must be in [0, 10,000,000]"),
    ("train.eval_every=-5", "train.eval_every must be in [0, 10,000,000], got -5"),
    ("train.ckpt_every=" + "9" * 9, "train.ckpt_every must be in [0, 10,000,000]"),
    ("train.log_every=0", "train.log_every must be in [1, 10,000,000], got 0"),
    ("train.lr=1e400", "train.lr must be a finite number > 0, got inf"),
    ("train.eps=-1", "train.eps must be a finite number > 0"),
    ("train.betas=0.9,1.5", "train.betas must be two numbers in [0, 1)"),
    ("train.min_lr_ratio=2", "train.min_lr_ratio must be in [0, 1]"),
    ("train.weight_decay=-1", "train.weight_decay must be a finite number >= 0"),
    ("train.grad_clip=0", "train.grad_clip must be a finite number > 0 or none"),
    ("model.dropout=1", "model: dropout must be in [0, 1)"),
    ("data.vocab_size=0", "data.vocab_size must be in [1, 1,048,576], got 0"),
    ("data.train_tokens=1", "data.train_tokens must be in [2, 1,099,511,627,776], got 1"),
])
def test_a_config_field_past_its_range_is_refused_before_any_work(override, first_line,
                                                                  tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNLAB_DATA", str(tmp_path / "none"))  # no corpus: work would fail
    code, line = attnlab("train", "--set", override)
    assert code == 2 and line.startswith("attnlab: error: ") and first_line in line, line
    assert not (tmp_path / "runs").exists()


def test_params_refuses_a_width_past_its_range():
    code, line = attnlab("params", "--set", "d_model=1000000000")
    assert code == 2 and "d_model must be in [1, 65,536]" in line
