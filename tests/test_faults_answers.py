"""The last one-line answers: inputs that used to end in an internal error, a misleading
line or silence, each now one line (exit 2) that says what to do, or, for Ctrl-C during
``generate``, the text generated so far. One tiny finished run for the module."""

from __future__ import annotations

import errno
import json
import shutil

import pytest
import torch
from fault_tools import SETTINGS, cli, finished_run, one_line_error, tree_hash

from attnlab.errors import UsageError, WriteError


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    return finished_run(tmp_path_factory.mktemp("answers"))


def test_a_refused_train_leaves_no_folder_behind(finished, tmp_path) -> None:
    """A context longer than the corpus is refused after the run's lock is taken; the folder
    the command made (holding only .lock) is removed again."""
    _, corpus, _, _ = finished
    run_dir = tmp_path / "new"
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", run_dir, *SETTINGS,
                              "--set", "model.n_ctx=100000"))  # fmt: skip
    assert "too few for windows of model.n_ctx=100000" in line
    assert not run_dir.exists()


def test_a_step_that_cannot_fit_in_memory_is_refused_with_its_size(finished, tmp_path) -> None:
    _, corpus, _, _ = finished
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", tmp_path / "huge",
                              *SETTINGS, "--set", "model.d_model=65536",  # each within its range
                              "--set", "model.n_layer=1024", "--set", "model.n_ctx=1048576"))
    assert line.startswith("attnlab: error: a training step needs at least ")
    assert "PiB" in line and "lower model.d_model, model.n_ctx or train.batch_size" in line
    assert not (tmp_path / "huge").exists()


def test_the_memory_estimate_is_a_lower_bound_and_refuses_only_past_the_machine() -> None:
    from attnlab.train.memory import check_step_memory, step_bytes
    from attnlab.train.run_config import load_run_config

    cfg = load_run_config(None, ["model.n_ctx=100000", "train.precision=fp32"])
    params, acts = step_bytes(cfg)
    assert acts >= 4 * 64 * 100_000 * 2 * 1024  # the logits and their gradient alone
    check_step_memory(cfg, available=params + acts)  # fits exactly: not refused
    with pytest.raises(UsageError, match=r"needs at least 5\d\.\d GiB .* this machine has 1 GiB"):
        check_step_memory(cfg, available=2**30)


def test_an_allocation_failure_is_one_line_with_its_size() -> None:
    from attnlab.cli.train import out_of_memory

    # 1319413953331200 / 2**50 = 1.1719
    err = RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: "
                       "can't allocate memory: you tried to allocate 1319413953331200 bytes.")
    assert str(out_of_memory(err)) == ("out of memory while training (1.17 PiB in one piece): "
                                       "lower model.d_model, model.n_ctx or train.batch_size")
    assert out_of_memory(RuntimeError("shape mismatch")) is None  # a bug stays a bug


def test_a_full_disk_before_the_first_checkpoint_does_not_claim_one_is_kept(tmp_path,
                                                                           monkeypatch) -> None:
    import attnlab.train.checkpoint as ckpt

    model = torch.nn.Linear(2, 2)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ckpt, "save_model", full)
    with pytest.raises(WriteError) as first:
        ckpt.save_checkpoint(tmp_path, model, None, {"step": 1})
    assert str(first.value).endswith("No space left on device; the run has no checkpoint yet")
    monkeypatch.undo()
    ckpt.save_checkpoint(tmp_path, model, None, {"step": 1})
    monkeypatch.setattr(ckpt, "save_model", full)
    with pytest.raises(WriteError) as second:
        ckpt.save_checkpoint(tmp_path, model, None, {"step": 2})
    assert str(second.value).endswith("; the previous checkpoint is kept")


@pytest.mark.parametrize("damage", ["state", "weights"])
def test_train_on_a_finished_run_with_a_damaged_checkpoint_says_so(finished, tmp_path,
                                                                  damage) -> None:
    run_dir, corpus, _, _ = finished
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    if damage == "state":
        (copy / "checkpoint/state.json").write_text("{")
    else:
        path = copy / "checkpoint/model.safetensors"
        path.write_bytes(path.read_bytes()[:100])
    before = tree_hash(copy)
    line = one_line_error(cli("train", "--corpus", corpus, "--run-dir", copy, *SETTINGS))
    assert f"run {copy} has finished, but its checkpoint cannot be read" in line
    assert line.endswith(f"delete {copy} to train the run again")
    assert tree_hash(copy) == before


def test_generate_refuses_a_prompt_that_is_not_utf8(finished) -> None:
    run_dir, _, _, _ = finished
    line = one_line_error(cli("generate", run_dir, "--prompt", "the \udcff king"))
    assert line == ("attnlab: error: --prompt is not valid UTF-8 (byte 0xff) at character 5: "
                    "pass the prompt as UTF-8 text")


def test_ctrl_c_during_generate_prints_the_text_so_far(finished, monkeypatch) -> None:
    """Ctrl-C at the fifth step of the model: the prompt and the four tokens sampled before
    it are printed (the same as the start of an uninterrupted run with that seed), exit 130."""
    from attnlab.nn.model import LanguageModel
    from attnlab.train.runtime import load_trained

    run_dir, _, _, _ = finished
    _, model, tokenizer, _ = load_trained(run_dir, "cpu")
    prompt = tokenizer.encode("the king")
    full = model.generate(torch.tensor([prompt]), 10, seed=0)[0].tolist()  # the CLI's defaults
    real, calls = LanguageModel.forward, []

    def forward(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(LanguageModel, "forward", forward)
    code, out, err = cli("generate", run_dir, "--prompt", "the king", "--tokens", "10")
    assert code == 130 and err.strip() == ("attnlab: interrupted after 4 of 10 new tokens (the "
                                           "text so far is above)")  # fmt: skip
    assert out == tokenizer.decode(full[: len(prompt) + 4]) + "\n"


def test_report_does_not_replace_another_profiles_report_unasked(tmp_path) -> None:
    out = tmp_path / "reports"
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"meta": {"profile": "micro"}}))
    before = tree_hash(out)
    for argv in (["report", "--out", out], ["report", "--profile", "quick", "--out", out]):
        line = one_line_error(cli(*argv))  # --profile quick replaces it no more: --replace
        assert line == (f"attnlab: error: {out} holds profile micro's report; writing profile "
                        "quick there would mix two profiles in one folder: pass --profile micro "
                        "to keep to it, choose another --out, or pass --replace to delete them "
                        "first")
        assert tree_hash(out) == before
