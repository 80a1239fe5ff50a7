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
    remove_stale,
    save_checkpoint,
    tensor_to_b64,
)


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


def test_a_failed_write_is_a_write_error_naming_the_file(tmp_path, monkeypatch):
    import errno

    from attnlab.errors import WriteError

    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ckpt_mod, "save_model", full)
    with pytest.raises(WriteError, match=r"could not write checkpoint file model\.safetensors "
                                         r"for .*checkpoint: No space left on device; the "
                                         r"previous checkpoint is kept"):
        save_checkpoint(tmp_path, model, opt, {"step": 6})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    assert load_checkpoint(find_checkpoint(tmp_path), model)["step"] == 3


def test_stale_asides_are_removed_once_a_complete_checkpoint_exists(tmp_path):
    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    (tmp_path / ".checkpoint-old-aaaa1111").mkdir()  # a cleanup killed after the renames
    save_checkpoint(tmp_path, model, opt, {"step": 6})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]
    (tmp_path / ".checkpoint-old-bbbb2222").mkdir()
    assert find_checkpoint(tmp_path, repair=False) == tmp_path / "checkpoint"
    assert find_checkpoint(tmp_path) == tmp_path / "checkpoint"
    assert (tmp_path / ".checkpoint-old-bbbb2222").is_dir()  # kept until checkpoint/ loads
    load_checkpoint(tmp_path / "checkpoint", model, opt)
    remove_stale(tmp_path)  # what the trainer does next
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]


def test_readers_find_an_aside_checkpoint_without_moving_it(tmp_path):
    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    os.replace(tmp_path / "checkpoint", tmp_path / ".checkpoint-old-deadbeef")
    assert find_checkpoint(tmp_path, repair=False) == tmp_path / ".checkpoint-old-deadbeef"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".checkpoint-old-deadbeef"]


def test_a_checkpoint_folder_without_state_is_damage(tmp_path):
    from attnlab.errors import DataError

    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    (tmp_path / "checkpoint" / "state.json").unlink()
    for repair in (True, False):
        with pytest.raises(DataError, match="has no state.json"):
            find_checkpoint(tmp_path, repair=repair)
    assert (tmp_path / "checkpoint" / "model.safetensors").is_file()  # nothing deleted


@pytest.mark.parametrize("change, match", [
    (lambda r: r.update(format=7), "has format 7"),
    (lambda r: r.pop("step"), "'step' should be int"),
    (lambda r: r.update(step=-1), "step -1 is negative"),
    (lambda r: r["optimizer"].update(param_groups="x"), "'param_groups' should be list"),
    (lambda r: r["optimizer"].update(tensors=["0.exp_avg"]), "does not hold the optimizer"),
    (lambda r: r["optimizer"]["param_groups"][0].update(lr=float("nan")), "optimizer lr is nan"),
])
def test_damaged_state_records_are_data_errors(tmp_path, change, match):
    from attnlab.errors import DataError

    model, opt = trained(0)
    save_checkpoint(tmp_path, model, opt, {"step": 3})
    path = tmp_path / "checkpoint" / "state.json"
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))
    fresh, fresh_opt = trained(1)
    with pytest.raises(DataError, match=match):
        load_checkpoint(tmp_path / "checkpoint", fresh, fresh_opt)


def test_trainer_state_checks_and_decodes(tmp_path):
    from attnlab.errors import DataError
    from attnlab.train.checkpoint import trainer_state

    rng = tensor_to_b64(torch.get_rng_state())
    good = {"run_hash": "h", "rng": [{"torch": rng, "sampler": rng, "cuda": None}],
            "last_loss": 1.5, "wall_s": 2, "tokens_per_s": 3.0, "recent_losses": [1.0, 2.0]}
    out = trainer_state(tmp_path, good, "h", 1, 0)
    assert torch.equal(out["torch"], torch.get_rng_state()) and out["cuda"] is None
    assert out["wall_s"] == 2.0 and out["recent_losses"] == [1.0, 2.0]
    for bad, match in [({"run_hash": "other"}, "belongs to another config"),
                       ({"rng": "x"}, "'rng' should be a list"),
                       ({"rng": [{}, {}]}, "written by 2 processes"),
                       ({"recent_losses": 3}, "should be numbers"),
                       ({"last_loss": "low"}, "should be numbers"),
                       ({"rng": [{"torch": "%%%", "sampler": rng}]}, "bad random-generator")]:
        with pytest.raises(DataError, match=match):
            trainer_state(tmp_path, {**good, **bad}, "h", 1, 0)
