"""Checkpoints: round trip, no pickle, and atomicity under a crash mid-save."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

import attnlab
from attnlab.train import checkpoint as ckpt_mod
from attnlab.train.checkpoint import (
    b64_to_tensor,
    find_checkpoint,
    load_checkpoint,
    save_checkpoint,
    tensor_to_b64,
)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run fastest on one thread; on a busy 2-core machine, threads spin."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class Tied(torch.nn.Module):
    """Embedding and output layer sharing one matrix, as with tie_weights."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(11, 4)
        self.out = torch.nn.Linear(4, 11)
        self.out.weight = self.emb.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(idx))


def trained(seed: int = 0) -> tuple[Tied, torch.optim.AdamW]:
    torch.manual_seed(seed)
    model = Tied()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1, betas=(0.8, 0.95))
    for _ in range(3):
        loss = model(torch.arange(11)).logsumexp(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


def test_round_trip_restores_weights_optimizer_and_state(tmp_path):
    model, opt = trained(0)
    rng = torch.get_rng_state()
    save_checkpoint(tmp_path, model, opt, {"step": 3, "rng": tensor_to_b64(rng)})
    fresh, fresh_opt = trained(1)  # different numbers everywhere
    record = load_checkpoint(find_checkpoint(tmp_path), fresh, fresh_opt)
    assert record["step"] == 3
    assert torch.equal(b64_to_tensor(record["rng"]), rng)
    for (name, a), b in zip(model.state_dict().items(), fresh.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert fresh.out.weight is fresh.emb.weight  # still tied after loading
    sa, sb = opt.state_dict(), fresh_opt.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sb["param_groups"][0]["betas"] == (0.8, 0.95)
    for i in sa["state"]:
        for key, value in sa["state"][i].items():
            assert torch.equal(value, sb["state"][i][key]), (i, key)
    # One more identical step on both gives identical weights.
    for m, o in ((model, opt), (fresh, fresh_opt)):
        o.zero_grad()
        m(torch.arange(11)).logsumexp(-1).mean().backward()
        o.step()
    assert torch.equal(model.emb.weight, fresh.emb.weight)


def test_no_pickle_anywhere(tmp_path, monkeypatch):
    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    ckpt = tmp_path / "checkpoint"
    assert sorted(p.name for p in ckpt.iterdir()) == [
        "model.safetensors", "optimizer.safetensors", "state.json"]
    for name in ("model.safetensors", "optimizer.safetensors"):
        with safe_open(str(ckpt / name), framework="pt") as fh:  # a valid safetensors file
            assert list(fh.keys())
    json.loads((ckpt / "state.json").read_text())

    def refuse(*args, **kwargs):
        raise AssertionError("torch.load must not be used")

    monkeypatch.setattr(torch, "load", refuse)
    load_checkpoint(ckpt, trained(1)[0], trained(1)[1])
    src = Path(attnlab.__file__).parent
    users = [p for p in src.rglob("*.py")
             if p.parts[-2] in ("train", "cli") and "torch.load(" in p.read_text()]
    assert users == []


def test_crash_while_writing_keeps_previous_checkpoint(tmp_path, monkeypatch):
    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    before = (tmp_path / "checkpoint" / "model.safetensors").read_bytes()
    other, other_opt = trained(1)

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(ckpt_mod, "save_file", crash)  # fails after the weights are written
    with pytest.raises(OSError, match="simulated"):
        save_checkpoint(tmp_path, other, other_opt, {"step": 6})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]  # no temp left behind
    assert (tmp_path / "checkpoint" / "model.safetensors").read_bytes() == before
    monkeypatch.undo()
    fresh, fresh_opt = trained(2)
    assert load_checkpoint(find_checkpoint(tmp_path), fresh, fresh_opt)["step"] == 3
    assert torch.equal(fresh.emb.weight, model.emb.weight)


def test_crash_between_renames_is_repaired(tmp_path):
    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    # State after "rename old aside" and before "rename new in": no checkpoint/,
    # the old one aside, and a complete temporary directory.
    os.replace(tmp_path / "checkpoint", tmp_path / ".checkpoint-old-deadbeef")
    (tmp_path / ".checkpoint-tmp-x").mkdir()
    found = find_checkpoint(tmp_path)
    assert found == tmp_path / "checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    assert load_checkpoint(found, trained(1)[0])["step"] == 3


def test_overwrite_replaces_and_cleans_up(tmp_path):
    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    save_checkpoint(tmp_path, model, opt, {"step": 6})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    assert load_checkpoint(find_checkpoint(tmp_path), model)["step"] == 6


def test_load_errors(tmp_path):
    model, opt = trained(0)
    assert find_checkpoint(tmp_path) is None
    assert find_checkpoint(tmp_path / "missing") is None
    with pytest.raises(ValueError, match="state.json missing"):
        load_checkpoint(tmp_path, model)
    save_checkpoint(tmp_path, model, None, {"step": 1})
    with pytest.raises(ValueError, match="no optimizer state"):
        load_checkpoint(tmp_path / "checkpoint", model, opt)
    with pytest.raises(ValueError, match="does not fit the model"):
        load_checkpoint(tmp_path / "checkpoint", torch.nn.Linear(2, 2))
