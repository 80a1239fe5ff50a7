"""Checkpoints without pickle, written atomically.

A checkpoint is a directory ``<run>/checkpoint/`` of three files:

- ``model.safetensors``      the weights (``safetensors.torch.save_model``: a tied
                              matrix is stored once and restored as shared);
- ``optimizer.safetensors``  every tensor of the optimizer state, flattened to
                              ``"<param index>.<name>"`` (AdamW: ``step``, ``exp_avg``,
                              ``exp_avg_sq``);
- ``state.json``             the step, the config, the optimizer's hyperparameters
                              and non-tensor state, and random-generator states as
                              base64 bytes. Written last: no ``state.json``, no checkpoint.

Nothing is ever unpickled (``torch.load`` is not used): a checkpoint from an
untrusted source can at worst hold wrong numbers, not run code.

Atomicity: the files are written into a fresh temporary directory inside the
run directory and fsynced; then the old ``checkpoint/`` is renamed aside, the
new one renamed in, and the old one deleted. A crash before the renames leaves
the previous checkpoint untouched; a crash between them leaves it under its
aside name, where ``find_checkpoint`` renames it back. One writer per run
directory is assumed (the trainer holds a lock).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, load_model, save_file, save_model
from torch import Tensor, nn

from attnlab.files import current_umask, fsync_dir, write_json

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint"
_TMP_PREFIX = ".checkpoint-tmp-"
_OLD_PREFIX = ".checkpoint-old-"
FORMAT = 1


def save_checkpoint(
    run_dir: Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None,
    state: dict[str, Any],
) -> Path:
    """Write ``model``, ``optimizer`` and the JSON-ready ``state`` to ``run_dir/checkpoint``.

    Returns the checkpoint directory. If anything fails while writing, the
    previous checkpoint is left as it was and the error propagates.
    """
    run_dir = Path(run_dir)
    tmp = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=run_dir))
    try:
        os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes it private; a checkpoint is not
        save_model(model, str(tmp / "model.safetensors"))
        _fsync_file(tmp / "model.safetensors")
        groups: list[dict[str, Any]] = []
        scalars: dict[str, dict[str, Any]] = {}
        if optimizer is not None:
            tensors, scalars, groups = _flatten_optimizer(optimizer)
            save_file(tensors, str(tmp / "optimizer.safetensors"))
            _fsync_file(tmp / "optimizer.safetensors")
        record = {
            "format": FORMAT,
            **state,
            "optimizer": None if optimizer is None else {"param_groups": groups, "state": scalars},
        }
        write_json(tmp / "state.json", record)
        fsync_dir(tmp)
        final = run_dir / CHECKPOINT
        old = None
        if final.exists():
            old = run_dir / f"{_OLD_PREFIX}{uuid.uuid4().hex[:8]}"
            os.replace(final, old)
        os.replace(tmp, final)
        fsync_dir(run_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return final


def find_checkpoint(run_dir: Path) -> Path | None:
    """The complete checkpoint of ``run_dir``, repairing an interrupted save; or None."""
    run_dir = Path(run_dir)
    final = run_dir / CHECKPOINT
    if not run_dir.is_dir():
        return None
    if not (final / "state.json").is_file():
        asides = sorted(
            (p for p in run_dir.glob(f"{_OLD_PREFIX}*") if (p / "state.json").is_file()),
            key=lambda p: p.stat().st_mtime,
        )
        if not asides:
            return None
        if final.exists():  # an incomplete directory in the way: not ours to keep
            shutil.rmtree(final)
        log.warning("recovering checkpoint %s left by an interrupted save", asides[-1].name)
        os.replace(asides[-1], final)
    for stale in run_dir.glob(f"{_TMP_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    return final


def load_checkpoint(
    ckpt: Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
) -> dict[str, Any]:
    """Load weights (and optimizer state) in place; return the JSON state record."""
    ckpt = Path(ckpt)
    state_path = ckpt / "state.json"
    if not state_path.is_file():
        raise ValueError(f"no checkpoint at {ckpt} (state.json missing)")
    record = json.loads(state_path.read_text(encoding="utf-8"))
    if record.get("format") != FORMAT:
        raise ValueError(f"checkpoint {ckpt} has format {record.get('format')}, expected {FORMAT}")
    missing, unexpected = load_model(model, str(ckpt / "model.safetensors"), strict=False)
    if missing or unexpected:
        raise ValueError(
            f"checkpoint {ckpt} does not fit the model: missing {sorted(missing)[:3]}, "
            f"unexpected {sorted(unexpected)[:3]}"
        )
    if optimizer is not None:
        if record.get("optimizer") is None:
            raise ValueError(f"checkpoint {ckpt} holds no optimizer state")
        tensors = load_file(str(ckpt / "optimizer.safetensors"))
        optimizer.load_state_dict(_unflatten_optimizer(tensors, record["optimizer"]))
    return record


def tensor_to_b64(t: Tensor) -> str:
    """Bytes of a uint8 tensor (a generator state) as base64 text for JSON."""
    return base64.b64encode(t.cpu().numpy().tobytes()).decode("ascii")


def b64_to_tensor(text: str) -> Tensor:
    """Inverse of ``tensor_to_b64``: a uint8 CPU tensor."""
    return torch.frombuffer(bytearray(base64.b64decode(text)), dtype=torch.uint8).clone()


def _flatten_optimizer(
    optimizer: torch.optim.Optimizer,
) -> tuple[dict[str, Tensor], dict[str, dict[str, Any]], list[dict[str, Any]]]:
    sd = optimizer.state_dict()
    tensors: dict[str, Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, per_param in sd["state"].items():
        for name, value in per_param.items():
            if isinstance(value, Tensor):
                tensors[f"{idx}.{name}"] = value.detach().cpu().contiguous()
            else:
                scalars.setdefault(str(idx), {})[name] = value
    groups = json.loads(json.dumps(sd["param_groups"]))  # tuples become lists
    return tensors, scalars, groups


def _unflatten_optimizer(tensors: dict[str, Tensor], record: dict[str, Any]) -> dict[str, Any]:
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        idx, _, name = key.partition(".")
        state.setdefault(int(idx), {})[name] = value
    for idx, values in record["state"].items():
        state.setdefault(int(idx), {}).update(values)
    groups = []
    for group in record["param_groups"]:
        group = dict(group)
        if isinstance(group.get("betas"), list):
            group["betas"] = tuple(group["betas"])
        groups.append(group)
    return {"state": state, "param_groups": groups}


def _fsync_file(path: Path) -> None:
    os.chmod(path, 0o666 & ~current_umask())
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())
