"""The training loop: run files, bitwise resume, divergence, refusals, evaluation."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from attnlab.train import runtime
from attnlab.train import trainer as trainer_mod
from attnlab.train.run_config import load_run_config, run_hash
from attnlab.train.rundir import read_metrics
from attnlab.train.trainer import TrainingDiverged, train

TINY = [
    "model.vocab_size=32", "model.d_model=16", "model.n_ctx=16", "model.n_head=2",
    "model.dropout=0.1",  # so that resuming must restore the dropout generator too
    "train.steps=12", "train.batch_size=4", "train.log_every=2", "train.eval_every=6",
    "train.ckpt_every=6", "train.eval_batch_size=8", "train.device=cpu",
]


@pytest.fixture(scope="module")
def data():
    """A small token stream with structure to learn (a noisy counter mod 29)."""
    rng = np.random.default_rng(0)
    steps = np.where(rng.random(3000) < 0.8, 1, rng.integers(0, 29, 3000))
    tokens = np.cumsum(steps) % 29
    return SimpleNamespace(train=tokens[:2700], held=tokens[2700:], tokenizer=None)



def tiny(*extra: str):
    return load_run_config(None, TINY + list(extra))


def tensors(path):
    return load_file(str(path))


def test_run_directory_holds_everything(tmp_path, data):
    cfg = tiny()
    records = []
    rng = torch.get_rng_state()
    result = train(cfg, tmp_path, data=data, progress=records.append)
    assert torch.equal(torch.get_rng_state(), rng)  # the caller's random state is untouched
    names = {p.name for p in tmp_path.iterdir()}
    assert {"config.json", "meta.json", "metrics.jsonl", "result.json", "checkpoint"} <= names
    stored = json.loads((tmp_path / "config.json").read_text())
    resolved = runtime.resolve_run(cfg)  # the run records what it really used
    assert resolved.train.precision == "fp32" and cfg.train.precision == "auto"
    assert stored["hash"] == run_hash(resolved) and stored["config"] == resolved.to_dict()
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["seed"] == 0 and meta["versions"]["torch"] == torch.__version__
    assert {"commit", "dirty"} <= set(meta["code_revision"])
    assert meta["sessions"][0]["device"] == "cpu"
    assert json.loads((tmp_path / "result.json").read_text()) == result
    assert result["steps"] == 12 and result["eval_tokens"] == 300
    assert result["params"] == sum(t.numel() for t in tensors(
        tmp_path / "checkpoint" / "model.safetensors").values())
    assert 1 < result["held_ppl"] < 1e3 and 1 < result["train_ppl"] < 1e3
    rows = read_metrics(tmp_path)
    train_rows = [r for r in rows if r["kind"] == "train"]
    assert [r["step"] for r in train_rows] == [2, 4, 6, 8, 10, 12]
    assert [r["step"] for r in rows if r["kind"] == "eval"] == [6, 12]
    assert all(np.isfinite(r["loss"]) and r["tokens_per_s"] > 0 for r in train_rows)
    assert records == rows  # the progress callback saw exactly the logged lines
    assert train_rows[-1]["eta_s"] == 0


def test_learning_happens(tmp_path, data):
    cfg = tiny("train.steps=60", "train.lr=1e-2", "train.eval_every=0", "train.ckpt_every=0",
               "train.log_every=60", "model.dropout=0.0")
    result = train(cfg, tmp_path, data=data)
    assert result["held_ppl"] < 8  # uniform is 29; a counter is predictable


def test_resume_is_bitwise_identical(tmp_path, data):
    cfg = tiny()
    straight = train(cfg, tmp_path / "a", data=data)

    def interrupt_at_8(record):
        if record["step"] == 8:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path / "b", data=data, progress=interrupt_at_8)
    assert json.loads((tmp_path / "b/checkpoint/state.json").read_text())["step"] == 6
    assert not (tmp_path / "b/result.json").exists()
    resumed = train(cfg, tmp_path / "b", data=data)  # resumes from step 6
    for name in ("model.safetensors", "optimizer.safetensors"):
        a, b = tensors(tmp_path / "a/checkpoint" / name), tensors(tmp_path / "b/checkpoint" / name)
        assert a.keys() == b.keys()
        for key in a:
            assert torch.equal(a[key], b[key]), (name, key)
    for key in ("final_loss", "train_ppl", "held_ppl", "steps"):
        assert resumed[key] == straight[key], key
    losses = [[(r["step"], r["loss"]) for r in read_metrics(tmp_path / d) if r["kind"] == "train"]
              for d in ("a", "b")]
    assert losses[0] == losses[1]  # lines after the checkpoint were dropped and redone
    meta = json.loads((tmp_path / "b/meta.json").read_text())
    assert [s["start_step"] for s in meta["sessions"]] == [0, 6]


def test_finished_run_is_not_retrained(tmp_path, data):
    cfg = tiny("train.steps=2", "train.eval_every=0")
    first = train(cfg, tmp_path, data=data)
    stamp = (tmp_path / "checkpoint/state.json").stat().st_mtime_ns
    assert train(cfg, tmp_path, data=data) == first
    assert (tmp_path / "checkpoint/state.json").stat().st_mtime_ns == stamp


def test_other_config_in_same_directory_is_refused(tmp_path, data):
    train(tiny("train.steps=2"), tmp_path, data=data)
    with pytest.raises(ValueError, match="holds a different config"):
        train(tiny("train.steps=3"), tmp_path, data=data)


def test_injected_nan_stops_and_keeps_last_checkpoint(tmp_path, data, monkeypatch):
    cfg = tiny("train.ckpt_every=2", "train.log_every=1")
    real = trainer_mod.next_token_loss
    calls = []

    def nan_at_step_5(*args, **kwargs):
        calls.append(1)
        loss = real(*args, **kwargs)
        return loss * float("nan") if len(calls) == 5 else loss

    monkeypatch.setattr(trainer_mod, "next_token_loss", nan_at_step_5)
    # The checkpoint due at step 4 waits for the loss of its weights, the NaN of step 5:
    # it is never written, and the last good one is step 2's.
    with pytest.raises(TrainingDiverged, match=r"non-finite loss \(nan\) at step 5 of 12.*"
                                               r"last good checkpoint \(step 2\)"):
        train(cfg, tmp_path, data=data)
    state = json.loads((tmp_path / "checkpoint/state.json").read_text())
    assert state["step"] == 2 and not (tmp_path / "result.json").exists()
    assert read_metrics(tmp_path)[-1] == {"kind": "diverged", "step": 5, "loss": "nan"}
    assert json.loads((tmp_path / "diverged.json").read_text())["last_checkpoint"] == 2
    # The kept checkpoint is the uninterrupted run's step-2 state.
    monkeypatch.undo()
    train(tiny("train.steps=2", "train.ckpt_every=2", "train.log_every=1"), tmp_path / "ref",
          data=data)
    a, b = tensors(tmp_path / "checkpoint/model.safetensors"), tensors(
        tmp_path / "ref/checkpoint/model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)
    # Training again answers at once from diverged.json, without training.
    with pytest.raises(TrainingDiverged, match="recorded in .*diverged.json"):
        train(cfg, tmp_path, data=data)


def test_huge_learning_rate_diverges_with_a_message(tmp_path, data):
    # The first update wrecks the weights, so the step-1 checkpoint (due every step) is
    # never written: its weights' loss, at step 2, is not finite.
    cfg = tiny("train.lr=1e30", "train.ckpt_every=1", "train.log_every=1", "model.dropout=0.0")
    with pytest.raises(TrainingDiverged, match=r"at step (\d+) of 12; no checkpoint") as info:
        train(cfg, tmp_path, data=data)
    step = int(str(info.value).split(" at step ")[1].split()[0])
    assert not (tmp_path / "checkpoint").exists()
    assert read_metrics(tmp_path)[-1]["kind"] == "diverged"
    assert read_metrics(tmp_path)[-1]["step"] == step


def test_finite_explosion_stops_after_the_window(tmp_path, data):
    # lr 10 without LayerNorm: the loss explodes to thousands but stays finite. The mean of
    # the first 50 losses is far past 3 ln 32 = 10.4, so the run stops at step 50.
    cfg = tiny("train.lr=10", "train.steps=80", "model.norm=none", "model.dropout=0.0",
               "train.ckpt_every=0", "train.log_every=1")
    losses = []
    with pytest.raises(TrainingDiverged, match=r"^mean loss .* over the last 50 steps exceeds "
                                               r"3·ln V = 10\.4 at step 50 of 80"):
        train(cfg, tmp_path, data=data,
              progress=lambda r: r["kind"] == "train" and losses.append(r["loss"]))
    assert len(losses) == 49 and all(np.isfinite(losses)) and max(losses) > 1e3
    record = json.loads((tmp_path / "diverged.json").read_text())
    assert record["step"] == 50 and record["loss"] > 10.4


def test_a_loss_past_the_bound_skips_checkpoints_and_then_stops(tmp_path, data, monkeypatch):
    """From step 7 the loss reads 8 higher (the gradients are unchanged), past the bound
    3 ln 32 = 10.4 on its own (the loss is near 3.7 this early). With a window of 4 the
    mean passes the bound once all four are shifted (3.7 + 8), not before (3.7 + 6): the
    run stops at step 10. The checkpoints due at 6 and 8 are measured by the losses of
    steps 7 and 9, past the bound, so the last good one is step 4's."""
    from functools import partial

    from attnlab.train.divergence import LossGuard

    monkeypatch.setattr(trainer_mod, "LossGuard", partial(LossGuard, window=4))
    real = trainer_mod.next_token_loss
    calls = []

    def shifted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs) + (8.0 if len(calls) >= 7 else 0.0)

    monkeypatch.setattr(trainer_mod, "next_token_loss", shifted)
    cfg = tiny("train.ckpt_every=2", "train.log_every=1")
    with pytest.raises(TrainingDiverged, match=r"over the last 4 steps exceeds 3·ln V = 10\.4 "
                                               r"at step 10 of 12; the last good checkpoint "
                                               r"\(step 4\)"):
        train(cfg, tmp_path, data=data)
    state = json.loads((tmp_path / "checkpoint/state.json").read_text())
    assert state["step"] == 4 and len(state["recent_losses"]) == 4


def test_one_spike_does_not_stop_a_run(tmp_path, data, monkeypatch):
    from functools import partial

    from attnlab.train.divergence import LossGuard

    monkeypatch.setattr(trainer_mod, "LossGuard", partial(LossGuard, window=4))
    real = trainer_mod.next_token_loss
    calls = []

    def spike(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs) + (20.0 if len(calls) == 5 else 0.0)  # alone past 10.4

    monkeypatch.setattr(trainer_mod, "next_token_loss", spike)
    result = train(tiny("train.ckpt_every=2"), tmp_path, data=data)
    assert result["steps"] == 12 and not (tmp_path / "diverged.json").exists()


def test_cpu_steps_never_synchronise_cuda(tmp_path, data, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("torch.cuda.synchronize on a CPU run")

    monkeypatch.setattr(torch.cuda, "synchronize", refuse)
    assert train(tiny("train.steps=3"), tmp_path, data=data)["steps"] == 3


def test_an_exploded_final_perplexity_is_divergence(tmp_path, data, monkeypatch):
    # A held-out perplexity of inf at the end is past the bound: no result, no final checkpoint.
    monkeypatch.setattr(trainer_mod, "evaluate",
                        lambda *a, **k: {"train_ppl": 30.0, "held_ppl": math.inf})
    with pytest.raises(TrainingDiverged, match=r"^held-out perplexity inf exceeds 3\.28e\+04 "
                                               r"\(a loss of 3·ln V = 10\.4\) at step 2 of 2; "
                                               r"no checkpoint"):
        train(tiny("train.steps=2"), tmp_path, data=data)
    assert not (tmp_path / "result.json").exists() and (tmp_path / "diverged.json").exists()
    assert not (tmp_path / "checkpoint").exists()


def test_a_final_loss_past_the_bound_is_divergence_before_the_window(tmp_path, data,
                                                                     monkeypatch):
    """The last step's loss reads 8 higher, past 3 ln 32 = 10.4 on its own, with 3 steps of
    a 50-step window: the run ends as diverged. That loss measures step 2's weights, so the
    checkpoint kept is step 1's; the final one (step 3) is not written either."""
    real = trainer_mod.next_token_loss
    calls = []

    def shifted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs) + (8.0 if len(calls) == 3 else 0.0)

    monkeypatch.setattr(trainer_mod, "next_token_loss", shifted)
    cfg = tiny("train.steps=3", "train.ckpt_every=1", "train.log_every=1", "model.dropout=0.0")
    with pytest.raises(TrainingDiverged, match=r"^final loss 11\.\d+ exceeds 3·ln V = 10\.4 at "
                                               r"step 3 of 3; the last good checkpoint \(step 1\)"):
        train(cfg, tmp_path, data=data)
    assert json.loads((tmp_path / "checkpoint/state.json").read_text())["step"] == 1
    assert not (tmp_path / "result.json").exists()
    with pytest.raises(TrainingDiverged, match="recorded in"):
        train(cfg, tmp_path, data=data)


def test_nan_perplexity_at_the_end_is_divergence(tmp_path, data, monkeypatch):
    monkeypatch.setattr(trainer_mod, "evaluate",
                        lambda *a, **k: {"train_ppl": math.nan, "held_ppl": math.nan})
    with pytest.raises(TrainingDiverged, match="NaN held-out perplexity at step 2"):
        train(tiny("train.steps=2"), tmp_path, data=data)
    assert not (tmp_path / "result.json").exists() and (tmp_path / "diverged.json").exists()


def test_divergence_window_is_resumed_bitwise(tmp_path, data):
    """The losses of the window travel in the checkpoint: a resumed run holds the same."""
    cfg = tiny()

    def interrupt_at_8(record):
        if record["step"] == 8:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path / "b", data=data, progress=interrupt_at_8)
    state = json.loads((tmp_path / "b/checkpoint/state.json").read_text())
    losses = [r["loss"] for r in read_metrics(tmp_path / "b") if r["kind"] == "train"]
    assert state["step"] == 6 and len(state["recent_losses"]) == 6
    assert state["recent_losses"][-1] == state["last_loss"]
    assert sum(state["recent_losses"][4:6]) / 2 == pytest.approx(losses[2])  # steps 5-6


def test_bad_data_is_refused(tmp_path, data):
    with pytest.raises(ValueError, match=r"token ids up to 28 but model.vocab_size=16"):
        train(tiny("model.vocab_size=16"), tmp_path / "a", data=data)
    with pytest.raises(ValueError, match="too few for windows"):
        train(tiny("data.train_tokens=10"), tmp_path / "b", data=data)
    with pytest.raises(ValueError, match="exceeds the 2700 training tokens"):
        train(tiny("data.train_tokens=5000"), tmp_path / "c", data=data)


def test_cpu_bf16_autocast_trains(tmp_path, data, caplog, monkeypatch):
    # Pretend the CPU lacks bf16 instructions: the run still trains, after a warning.
    monkeypatch.setattr(trainer_mod, "cpu_has_bf16", lambda: False)
    cfg = tiny("train.precision=bf16", "train.steps=4", "train.eval_every=0")
    result = train(cfg, tmp_path, data=data)
    assert result["precision"] == "bf16" and np.isfinite(result["held_ppl"])
    assert "no bf16 instructions" in caplog.text
    weights = tensors(tmp_path / "checkpoint/model.safetensors")
    assert all(t.dtype == torch.float32 for t in weights.values())  # master weights stay fp32


def test_cuda_without_gpu_is_a_clear_error(tmp_path, data):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="no CUDA device"):
        train(tiny("train.device=cuda"), tmp_path, data=data)


def test_timed_checkpoints_survive_a_hard_kill(tmp_path, data, monkeypatch):
    """With no step schedule, the wall-time checkpoints still bound what a kill loses."""
    cfg = tiny("train.ckpt_every=0", "train.eval_every=0")
    monkeypatch.setattr(trainer_mod, "CKPT_SECONDS", 0.0)  # due after every step
    real = trainer_mod.next_token_loss
    calls = []

    def killed_at_step_8(*args, **kwargs):
        calls.append(1)
        if len(calls) == 8:
            raise SystemExit("killed")  # the process dies mid-step: no checkpoint of its own
        return real(*args, **kwargs)

    monkeypatch.setattr(trainer_mod, "next_token_loss", killed_at_step_8)
    with pytest.raises(SystemExit):
        train(cfg, tmp_path / "cut", data=data)
    # Due at once, then every 20 write-durations: some step before the kill was saved.
    assert 1 <= json.loads((tmp_path / "cut/checkpoint/state.json").read_text())["step"] < 8
    monkeypatch.undo()
    train(cfg, tmp_path / "cut", data=data)  # resumes from that step
    train(cfg, tmp_path / "whole", data=data)
    a, b = (tensors(tmp_path / d / "checkpoint/model.safetensors") for d in ("cut", "whole"))
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(("line", "expected"), [
    ("flags\t\t: fpu sse2 avx2 fma", False),  # this project's AMD EPYC
    ("flags\t\t: fpu avx2 avx512f avx512_bf16", True),  # Cooper Lake, Zen 4
    ("flags\t\t: fpu avx512f amx_bf16 amx_tile", True),  # Sapphire Rapids
    ("Features\t: fp asimd bf16 i8mm", True),  # Arm (Graviton 3)
])
def test_cpu_has_bf16_reads_the_cpu_flags(tmp_path, line, expected):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\n{line}\n")
    assert runtime.cpu_has_bf16(cpuinfo) is expected
    assert runtime.cpu_has_bf16(tmp_path / "absent") is None
