"""Single faults, each on a copy of one finished run: what the matrix of test_faults.py
does not reach (a pickle under a checkpoint name, exploded or NaN weights, a training run
holding the lock, an interrupted save, stale folders, bad sampling options, a run directory
that is a file, a resume in another precision, a diverged run, a bug) and the one-line
answer each gets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from fault_tools import SETTINGS, cli, finished_run, one_line_error, tree_hash
from safetensors.torch import load_file, save_file


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return finished_run(tmp_path_factory.mktemp("single"))



@pytest.fixture
def copy(finished, tmp_path):
    """A copy of the finished run to damage; the original is checked after the test."""
    run_dir, _, _, original = finished
    shutil.copytree(run_dir, tmp_path / "run")
    yield tmp_path / "run"
    assert tree_hash(run_dir) == original


class Payload:
    """Unpickling this creates ``sentinel``: proof that code from the file ran."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self):  # noqa: ANN204 - pickle protocol
        return (Path.touch, (self.sentinel,))


@pytest.mark.parametrize("name", ["checkpoint/model.safetensors",
                                  "checkpoint/optimizer.safetensors", "checkpoint/state.json"])
def test_a_pickle_under_a_checkpoint_name_is_never_unpickled(finished, copy, tmp_path, name):
    _, corpus, _, _ = finished
    sentinel = tmp_path / "code-ran"
    torch.save({"weights": Payload(sentinel)}, copy / name)  # what torch.load would run
    (copy / "result.json").unlink()
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet",
                              *SETTINGS))
    assert Path(name).name in line
    if name != "checkpoint/optimizer.safetensors":  # eval does not read the optimizer
        assert Path(name).name in one_line_error(cli("eval", copy, "--device", "cpu"))
    assert not sentinel.exists()


def scale_weights(run: Path, factor: float) -> None:
    path = run / "checkpoint/model.safetensors"
    tensors = load_file(str(path))
    tensors = {k: t * factor if k.startswith("head.") else t for k, t in tensors.items()}
    save_file(tensors, str(path))


def test_an_exploded_model_has_perplexity_inf(copy):
    # Finite weights whose logits are so confidently wrong that exp(mean NLL) overflows.
    scale_weights(copy, 1e6)
    code, out, err = cli("eval", copy, "--device", "cpu")
    assert code == 0, err
    assert "held-out ppl inf" in out and "train ppl inf" in out
    record = json.loads(cli("eval", copy, "--device", "cpu", "--json")[1])
    assert record["held_ppl"] == float("inf")


def test_non_finite_weights_are_refused(copy):
    scale_weights(copy, float("nan"))
    line = one_line_error(cli("eval", copy, "--device", "cpu"))
    assert "model.safetensors holds non-finite weights" in line


def test_readers_refuse_while_a_training_run_holds_the_lock(copy):
    from attnlab.train.rundir import run_lock

    with run_lock(copy):
        for argv in (["eval", copy], ["generate", copy, "--prompt", "the", "--tokens", "2"]):
            assert "being trained by another process" in one_line_error(cli(*argv))
    assert cli("eval", copy, "--device", "cpu")[0] == 0  # free again
    # ...and a trainer is refused while a reader holds its shared lock.
    from attnlab.train.rundir import reader_lock

    with reader_lock(copy), pytest.raises(Exception, match="in use by another process"):
        with run_lock(copy):
            pass


def test_readers_read_an_interrupted_save_without_repairing_it(finished, copy):
    _, corpus, result, _ = finished
    # A save cut between its two renames: no checkpoint/, the previous one aside.
    (copy / "checkpoint").rename(copy / ".checkpoint-old-1234abcd")
    before = tree_hash(copy)
    code, out, err = cli("eval", copy, "--device", "cpu", "--json")
    assert code == 0, err
    assert json.loads(out)["held_ppl"] == result["held_ppl"]
    assert cli("generate", copy, "--prompt", "the", "--tokens", "2", "--device", "cpu")[0] == 0
    assert tree_hash(copy) == before  # nothing renamed or deleted by a reader
    # The trainer, holding the lock, repairs it.
    (copy / "result.json").unlink()
    assert cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet", *SETTINGS)[0] == 0
    assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".checkpoint")) == []
    assert (copy / "checkpoint/state.json").is_file()


def test_stale_old_checkpoints_are_removed(finished, copy):
    _, corpus, _, _ = finished
    shutil.copytree(copy / "checkpoint", copy / ".checkpoint-old-0badf00d")  # a killed cleanup
    shutil.copytree(copy / "checkpoint", copy / ".checkpoint-tmp-0badf00d")  # a killed save
    (copy / "result.json").unlink()
    assert cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet", *SETTINGS)[0] == 0
    assert sorted(p.name for p in copy.iterdir() if p.name.startswith(".checkpoint")) == []


def test_a_damaged_checkpoint_does_not_cost_the_aside_beside_it(finished, copy):
    _, corpus, _, _ = finished
    shutil.copytree(copy / "checkpoint", copy / ".checkpoint-old-0badf00d")
    (copy / "checkpoint/state.json").write_text("{")
    (copy / "result.json").unlink()
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, "--quiet",
                              *SETTINGS))
    assert "state.json is damaged" in line
    assert (copy / ".checkpoint-old-0badf00d/state.json").is_file()  # still there to restore


@pytest.mark.parametrize("content, message", [
    (b"[]", "config.json is damaged: expected a JSON object, got list"),
    (b'{"hash": "x", "config": [1]}', "config.json is damaged: a run config must be a table"),
    (b'{"hash": "x", "config": {"model": {"d_model": "wide"}}}',
     "config.json is damaged: model.d_model expects int"),
])
def test_config_json_of_the_wrong_shape(copy, content, message):
    (copy / "config.json").write_bytes(content)
    assert message in one_line_error(cli("eval", copy))


def test_a_binary_toml_config(tmp_path):
    path = tmp_path / "run.toml"
    path.write_bytes(bytes(range(256)) * 8)
    line = one_line_error(cli("train", path))
    assert f"config {path} is not UTF-8 text" in line


@pytest.mark.parametrize("option, message", [
    (["--temperature", "nan"], "--temperature: must be 0 (greedy) or a number in [0.01, 100"),
    (["--temperature", "inf"], "--temperature: must be 0 (greedy) or a number in [0.01, 100"),
    (["--temperature", "-1"], "--temperature: must be 0 (greedy) or a number in [0.01, 100"),
    (["--temperature", "1e-300"], "--temperature: must be 0 (greedy) or a number in [0.01,"),
    (["--seed", "99999999999999999999999"], "--seed: must be a whole number in [0, 4,294,"),
    (["--top-k", "0"], "--top-k: must be a whole number in [1, 1,048,576], got 0"),
    (["--top-k", "100000"], "--top-k 100000 exceeds the model's vocabulary of 300"),
    (["--tokens", "-1"], "--tokens: must be a whole number in [0, 100,000], got -1"),
])
def test_generate_refuses_bad_sampling_options(copy, option, message):
    line = one_line_error(cli("generate", copy, "--prompt", "the", "--tokens", "2", *option))
    assert message in line


def test_a_run_dir_that_is_a_file(finished, tmp_path):
    _, corpus, _, _ = finished
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", path, *SETTINGS))
    assert "is a file" in line
    assert "is a file" in one_line_error(cli("eval", path))
    assert "is a file" in one_line_error(cli("generate", path, "--prompt", "the"))
    assert path.read_text() == "x"


def test_a_resume_in_another_precision_is_refused(finished, copy):
    _, corpus, _, _ = finished
    (copy / "result.json").unlink()
    before = tree_hash(copy)
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, *SETTINGS,
                              "--set", "train.precision=bf16"))
    assert "was trained on cpu in fp32; here it would go on on cpu in bf16" in line
    assert "--set train.device=cpu --set train.precision=fp32" in line
    assert tree_hash(copy) == before


def test_auto_resolving_to_a_gpu_is_refused_or_rekeyed(finished, tmp_path, monkeypatch):
    _, corpus, _, _ = finished
    auto = [s if s != "train.device=cpu" else "train.device=auto" for s in SETTINGS]
    monkeypatch.chdir(tmp_path)
    assert cli("train", "--corpus", corpus, "--quiet", *auto)[0] == 0
    (cpu_run,) = (tmp_path / "runs").iterdir()
    stored = json.loads((cpu_run / "config.json").read_text())["config"]["train"]
    assert (stored["device"], stored["precision"]) == ("cpu", "fp32")  # resolved, recorded
    # The same command where CUDA is present: a new run directory (the hash names the
    # device), and the old one, named explicitly, is refused rather than resumed in bf16.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    from attnlab.train.run_config import load_run_config, run_hash
    from attnlab.train.runtime import resolve_run

    overrides = [a for a in auto if a != "--set"] + [f"data.corpus={corpus}"]
    gpu = resolve_run(load_run_config(None, overrides))
    assert (gpu.train.device, gpu.train.precision) == ("cuda", "bf16")
    assert run_hash(gpu) != cpu_run.name
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", cpu_run, *auto))
    assert "was trained on cpu in fp32; here it would go on on cuda in bf16" in line


def test_a_run_from_before_resolution_is_refused(finished, copy):
    _, corpus, _, _ = finished
    record = json.loads((copy / "config.json").read_text())
    record["config"]["train"].update(device="auto", precision="auto")
    record["hash"] = "0123456789ab"
    (copy / "config.json").write_text(json.dumps(record))
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, *SETTINGS))
    assert "started before attnlab recorded the resolved device" in line


def test_a_diverged_run_is_reported_by_every_command(finished, tmp_path):
    _, corpus, _, _ = finished
    run = tmp_path / "run"
    settings = [*SETTINGS, "--set", "train.steps=80", "--set", "train.lr=10",
                "--set", "train.ckpt_every=1", "--set", "model.norm=none"]
    code, _, err = cli("train", "--corpus", corpus, "--run-dir", run, "--quiet", *settings)
    lines = err.strip().splitlines()  # the run's header line, then the one stop line
    assert code == 1 and len(lines) == 2 and lines[0].startswith("run: "), err
    assert lines[1].startswith("attnlab: training stopped: mean loss")
    # lr 10 wrecks the weights in the first update: no checkpoint is good enough to keep.
    assert "exceeds 3·ln V = 17.1 at step 50 of 80; no checkpoint had been written" in err
    record = json.loads((run / "diverged.json").read_text())
    assert record["step"] == 50 and record["loss"] > 3 * 5.7  # finite, far past 3 ln 300
    assert not (run / "result.json").exists()
    for argv in (["eval", run], ["generate", run, "--prompt", "the", "--tokens", "2"]):
        line = one_line_error(cli(*argv), code=1)
        assert line.startswith(f"attnlab: error: run {run} diverged: mean loss")
    code, _, err = cli("train", "--corpus", corpus, "--run-dir", run, "--quiet", *settings)
    assert code == 1 and "recorded in" in err and "diverged.json" in err  # at once, again


def test_a_bug_is_reported_as_one_and_not_as_bad_input(monkeypatch):
    import attnlab.cli.params as params

    def broken(args):
        raise KeyError("d_model")

    monkeypatch.setattr(params, "run", broken)
    line = one_line_error(cli("params"), code=1, bug=True)
    assert line == ("attnlab: internal error: KeyError: 'd_model' (run with -v for the "
                    "traceback)")
    code, _, err = cli("-v", "params")
    assert code == 1 and "Traceback" in err and err.strip().endswith("KeyError: 'd_model'")

    def raises_value_error(args):
        raise ValueError("not input at all")  # a library bug, not a UsageError

    monkeypatch.setattr(params, "run", raises_value_error)
    assert "internal error: ValueError" in one_line_error(cli("params"), code=1, bug=True)


def test_bad_input_traceback_only_with_verbose():
    assert one_line_error(cli("params", "--set", "n_head=3")).startswith("attnlab: error:")
    code, _, err = cli("-v", "params", "--set", "n_head=3")
    assert code == 2 and "Traceback" in err and "UsageError" in err


VERBOSE_PROBE = """
import logging, sys
import attnlab.cli.params as params
from attnlab.cli.main import main

def logs(args):
    logging.getLogger("attnlab.cli.process").debug("malloc keeps freed memory for reuse: %s", 1)
    logging.getLogger("matplotlib.font_manager").debug("findfont: a library's line")
    logging.getLogger("attnlab.cli.process").info("%s - %s", "a", "b")
    return 0

params.run = logs
main(sys.argv[1:])
"""


@pytest.mark.parametrize("verbose", [True, False])
def test_verbose_shows_attnlabs_debug_lines_and_no_librarys(verbose):
    """-v opens attnlab's own debug lines, said in the command's language, and not every
    library's (matplotlib's font search would bury them); without it, neither."""
    import subprocess
    import sys

    argv = ["--lang", "es", *(["-v"] if verbose else []), "params"]
    err = subprocess.run([sys.executable, "-c", VERBOSE_PROBE, *argv], capture_output=True,
                         text=True, check=True, timeout=120).stderr
    assert ("malloc guarda la memoria liberada para reutilizarla: 1" in err) is verbose
    assert "findfont" not in err and "a - b" in err
