"""``attnlab train``, ``eval`` and ``generate`` end to end on a tiny corpus, and their errors."""

from __future__ import annotations

import json
import random

import pytest
import torch

from attnlab.cli import main as cli_main

SETTINGS = [
    "--set", "model.vocab_size=300", "--set", "data.vocab_size=300", "--set", "model.d_model=16",
    "--set", "model.n_ctx=16", "--set", "model.n_head=2", "--set", "train.steps=4",
    "--set", "train.batch_size=4", "--set", "train.eval_every=0", "--set", "train.device=cpu",
]


@pytest.fixture(autouse=True)
def setup(monkeypatch, tmp_path):
    """Our subcommands registered, a private cache, one thread, cwd in tmp_path."""
    names = list(cli_main.SUBCOMMANDS)
    for name in ("train", "evaluate", "generate"):
        if name not in names:
            names.append(name)
    monkeypatch.setattr(cli_main, "SUBCOMMANDS", names)
    monkeypatch.setenv("ATTNLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def corpus(tmp_path):
    words = "the king queen rose sword night crown river speaks and of to my lord".split()
    rng = random.Random(0)
    lines = [" ".join(rng.choice(words) for _ in range(10)) + "." for _ in range(400)]
    path = tmp_path / "tiny.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli_main.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def trained(capsys, corpus, tmp_path):
    code, out, err = run(capsys, "train", "--corpus", str(corpus), "--quiet", "--json", *SETTINGS)
    assert code == 0, err
    run_dirs = list((tmp_path / "runs").iterdir())
    assert len(run_dirs) == 1 and f"run: runs/{run_dirs[0].name}" in err
    return run_dirs[0], json.loads(out)


def test_train_eval_generate(capsys, trained, corpus):
    run_dir, result = trained
    assert result["steps"] == 4 and (run_dir / "tokenizer.json").is_file()
    # Same command again: finished, not retrained.
    code, out, err = run(capsys, "train", "--corpus", str(corpus), "--quiet", *SETTINGS)
    assert code == 0 and "already finished" in err and "held-out ppl" in out
    # eval reproduces the run's own final numbers.
    code, out, err = run(capsys, "eval", str(run_dir), "--json")
    assert code == 0, err
    record = json.loads(out)
    assert record["step"] == 4
    assert record["held_ppl"] == pytest.approx(result["held_ppl"], rel=1e-9)
    assert record["train_ppl"] == pytest.approx(result["train_ppl"], rel=1e-9)
    code, out, _ = run(capsys, "eval", str(run_dir))
    assert code == 0 and "held-out ppl" in out
    # generate: the prompt comes back continued; the same seed gives the same text.
    args = ("generate", str(run_dir), "--prompt", "the king", "--tokens", "8", "--seed", "3")
    code, first, err = run(capsys, *args)
    assert code == 0, err
    assert first.startswith("the king") and len(first) > len("the king\n")
    assert run(capsys, *args)[1] == first
    greedy = ("--temperature", "0")
    cached = run(capsys, *args, *greedy)[1]
    assert run(capsys, *args, *greedy, "--no-cache")[1] == cached


def test_train_with_config_file_and_run_dir(capsys, corpus, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text(f'[data]\ncorpus = "{corpus}"\n')
    code, out, err = run(capsys, "train", str(cfg), "--run-dir", "mine", "--quiet", *SETTINGS)
    assert code == 0, err
    assert (tmp_path / "mine" / "result.json").is_file() and "run: mine" in err
    # Another config in the same run directory is refused with one line.
    code, _, err = run(capsys, "train", str(cfg), "--run-dir", "mine", *SETTINGS,
                       "--set", "train.seed=1")
    assert code == 2 and "holds a different config" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["train", "--set", "train.stepz=1"], "unknown key train.stepz; allowed: steps"),
    (["train", "--set", "model.d_model=wide"], "model.d_model expects int"),
    (["train", "--set", "steps=1"], "must look like section.key=value"),
    (["train", "missing.toml"], "config file not found"),
    (["eval", "no/such/run"], "run directory not found"),
    (["generate", "no/such/run", "--prompt", "x"], "run directory not found"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and err.startswith("attnlab: error:")


def test_generate_and_eval_errors(capsys, trained, tmp_path):
    run_dir, _ = trained
    code, _, err = run(capsys, "generate", str(run_dir), "--prompt", "")
    assert code == 2 and "--prompt must not be empty" in err
    code, _, err = run(capsys, "generate", str(run_dir), "--prompt", "the", "--tokens", "40")
    assert code == 2 and "pass --no-cache" in err
    assert run(capsys, "generate", str(run_dir), "--prompt", "the", "--tokens", "40",
               "--no-cache")[0] == 0
    with pytest.raises(SystemExit) as info:  # argparse: --top-k past its range
        cli_main.main(["generate", str(run_dir), "--prompt", "the", "--top-k", "0"])
    assert info.value.code == 2 and "--top-k: must be a whole number in [1," in \
        capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # argparse: a required option is missing
        cli_main.main(["generate", str(run_dir)])
    assert info.value.code == 2
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "eval", str(tmp_path / "empty"))
    assert code == 2 and "config.json" in err


def test_the_run_directory_is_named_by_the_resolved_config(capsys, corpus, tmp_path):
    from attnlab.train.run_config import load_run_config, run_hash
    from attnlab.train.runtime import resolve_run

    auto = [s.replace("train.device=cpu", "train.device=auto") for s in SETTINGS]
    code, _, err = run(capsys, "train", "--corpus", str(corpus), "--quiet", *auto)
    assert code == 0, err
    cfg = load_run_config(None, [a for a in auto if a != "--set"] + [f"data.corpus={corpus}"])
    resolved = resolve_run(cfg)
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name == run_hash(resolved) != run_hash(cfg)
    stored = json.loads((run_dir / "config.json").read_text())
    assert stored["hash"] == run_dir.name
    assert stored["config"]["train"]["device"] == resolved.train.device != "auto"
    assert stored["config"]["train"]["precision"] == resolved.train.precision != "auto"
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    assert state["run_hash"] == run_dir.name
    assert f"({run_dir.name}, {resolved.train.device}, {resolved.train.precision})" in err.replace(
        "config ", "")


def test_a_finished_runs_unreadable_checkpoint_says_its_cause_in_the_language(monkeypatch,
                                                                             tmp_path):
    """The inner error of ``train.unreadable``, raised as a template, is said in the command's
    language with the sentence around it; in English it is its English line, as before."""
    from attnlab.cli.train import check_finished
    from attnlab.cli.words import Words
    from attnlab.errors import DataError
    from attnlab.train import runtime

    def damaged(*_args: object) -> None:
        raise DataError("corpus file %s is empty", "x.txt")

    monkeypatch.setattr(runtime, "load_trained", damaged)
    for lang, cause in (("es", "(el archivo del corpus x.txt está vacío)"),
                        ("en", "(corpus file x.txt is empty)")):
        with pytest.raises(DataError) as info:
            check_finished(tmp_path, Words(lang))
        assert cause in str(info.value), str(info.value)
