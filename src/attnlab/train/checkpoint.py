"""Checkpoints without pickle, written atomically, read with every field checked.

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
untrusted source can at worst hold wrong numbers, not run code. A damaged
checkpoint (a truncated or foreign file, a pickle under a checkpoint's name,
a tensor of the wrong shape, a ``state.json`` missing a field) is a
``DataError`` naming the file and what is wrong, raised before anything is
written.

Atomicity: the files are written into a fresh temporary directory inside the
run directory and fsynced; then the old ``checkpoint/`` is renamed aside, the
new one renamed in, and the old one deleted. A crash before the renames leaves
the previous checkpoint untouched; a crash between them leaves it under its
aside name, where ``find_checkpoint`` renames it back. A failed write (a full
disk) is a ``WriteError`` and leaves the previous checkpoint as it was. Only
the process holding the run's lock (the trainer) repairs; readers
(``eval``, ``generate``) find the complete checkpoint and change nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, load_model, save_file, save_model
from torch import Tensor, nn

from attnlab.errors import DataError, Said, WriteError, first_line, os_reason
from attnlab.files import current_umask, fsync_dir, write_json
from attnlab.train.newer_version import NewerRun, newer_run

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint"
MODEL = "model.safetensors"
OPTIMIZER = "optimizer.safetensors"
STATE = "state.json"
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
    previous checkpoint is left as it was; a failed write (full disk, no
    permission) is a ``WriteError`` naming the file.
    """
    run_dir = Path(run_dir)
    final = run_dir / CHECKPOINT
    had = (final / STATE).is_file()  # the error says whether the previous one is kept
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=run_dir))
    except OSError as err:
        if had:
            raise WriteError("could not write checkpoint %s: %s; the previous checkpoint is "
                             "kept", final, os_reason(err)) from err
        raise WriteError("could not write checkpoint %s: %s; the run has no checkpoint yet",
                         final, os_reason(err)) from err
    current = tmp
    try:
        os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes it private; a checkpoint is not
        current = tmp / MODEL
        save_model(model, str(current))
        _fsync_file(current)
        groups: list[dict[str, Any]] = []
        scalars: dict[str, dict[str, Any]] = {}
        if optimizer is not None:
            tensors, scalars, groups = _flatten_optimizer(optimizer)
            current = tmp / OPTIMIZER
            save_file(tensors, str(current))
            _fsync_file(current)
        record = {
            "format": FORMAT,
            **state,
            "optimizer": None if optimizer is None else {
                "param_groups": groups, "state": scalars, "tensors": sorted(tensors),
            },
        }
        current = tmp / STATE
        write_json(current, record)
        fsync_dir(tmp)
        old = None
        current = final
        if final.exists():
            old = run_dir / f"{_OLD_PREFIX}{uuid.uuid4().hex[:8]}"
            os.replace(final, old)
        os.replace(tmp, final)
        fsync_dir(run_dir)
    except (OSError, SafetensorError) as err:  # safetensors reports I/O errors as its own
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, WriteError):
            raise
        reason = os_reason(err) if isinstance(err, OSError) else str(err)
        if had:
            raise WriteError("could not write checkpoint file %s for %s: %s; the previous "
                             "checkpoint is kept", current.name, final, reason) from err
        raise WriteError("could not write checkpoint file %s for %s: %s; the run has no "
                         "checkpoint yet", current.name, final, reason) from err
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _remove_asides(run_dir)  # this save's old checkpoint, and any a killed save left behind
    return final


def find_checkpoint(run_dir: Path, *, repair: bool = True) -> Path | None:
    """The complete checkpoint of ``run_dir``, or None when it has none yet.

    With ``repair`` (the trainer, holding the run's lock) a save interrupted
    between its two renames is completed (the old checkpoint renamed back),
    and temporary folders are removed; stale asides go once the checkpoint has
    loaded (``remove_stale``). Without it (readers) nothing is changed: an
    aside is returned where it lies. A ``checkpoint/``
    folder without ``state.json`` and no aside to fall back on is damage, not
    a save in progress (a save never leaves one), so it is a ``DataError``.
    """
    run_dir = Path(run_dir)
    final = run_dir / CHECKPOINT
    if not run_dir.is_dir():
        return None
    if (final / STATE).is_file():
        if repair:
            _remove_temporaries(run_dir)
        return final
    asides = sorted(
        (p for p in run_dir.glob(f"{_OLD_PREFIX}*") if (p / STATE).is_file()),
        key=lambda p: p.stat().st_mtime,
    )
    if not asides:
        if final.exists():
            raise DataError("checkpoint %s has no %s (damaged or deleted): restore it, or "
                            "delete %s to train from the start", final, STATE, final)
        if repair:
            _remove_temporaries(run_dir)
        return None
    if not repair:
        return asides[-1]
    if final.exists():  # an incomplete directory in the way: not ours to keep
        shutil.rmtree(final)
    log.warning("recovering checkpoint %s left by an interrupted save", asides[-1].name)
    os.replace(asides[-1], final)
    _remove_asides(run_dir)
    _remove_temporaries(run_dir)
    return final


def remove_stale(run_dir: Path) -> None:
    """Delete ``.checkpoint-old-*`` folders a killed save left behind, once ``checkpoint/``
    has loaded (a complete, readable checkpoint supersedes them: they only leak disk)."""
    _remove_asides(Path(run_dir))


def _remove_asides(run_dir: Path) -> None:
    for stale in run_dir.glob(f"{_OLD_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)


def _remove_temporaries(run_dir: Path) -> None:
    for stale in run_dir.glob(f"{_TMP_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)


def read_state(ckpt: Path) -> dict[str, Any]:
    """The checked JSON record of ``ckpt/state.json`` (``DataError`` if damaged)."""
    path = Path(ckpt) / STATE
    if not path.is_file():
        raise DataError("no checkpoint at %s (%s missing)", ckpt, STATE)
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise DataError("%s is damaged: not valid JSON (%s)", path, first_line(err)) from err
    if not isinstance(record, dict):
        raise DataError("%s is damaged: expected an object, got %s", path,
                        type(record).__name__)
    found = record.get("format")
    if type(found) is int and found > FORMAT:  # a newer attnlab's, or edited: never damage
        raise newer_run(Path(ckpt).parent, Said("%s has format %s (this attnlab reads format "
                                                "%s)", path, found, FORMAT))
    if found != FORMAT:
        raise DataError("%s has format %r, expected %s", path, found, FORMAT)
    _expect(path, record, "step", int)
    if record["step"] < 0:
        raise DataError("%s is damaged: step %s is negative", path, record["step"])
    if record.get("optimizer") is not None:
        opt = _expect(path, record, "optimizer", dict)
        _expect(path, opt, "param_groups", list)
        _expect(path, opt, "state", dict)
    return record


def advised(err: DataError, ckpt: Path) -> DataError:
    """``err`` with what to do about a damaged checkpoint, unless it says so already."""
    text = str(err)
    if isinstance(err, NewerRun) or any(word in text for word in ("delete", "restore",
                                                                  "resume with")):
        return err
    inner = Said(err.template, *err.values) if err.template is not None else text
    return DataError("%s; restore it from a copy, or delete %s (and result.json, if the run "
                     "had finished) to train the run again from the start", inner, ckpt)


def load_checkpoint(
    ckpt: Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
) -> dict[str, Any]:
    """Load weights (and optimizer state) in place; return the JSON state record.

    Every file is checked before it is used; a damaged one is a ``DataError``
    naming it and saying what to do. The weights are loaded straight onto the
    model's device.
    """
    try:
        return _load_checkpoint(Path(ckpt), model, optimizer)
    except DataError as err:
        raise advised(err, Path(ckpt)) from err


def _load_checkpoint(
    ckpt: Path, model: nn.Module, optimizer: torch.optim.Optimizer | None
) -> dict[str, Any]:
    record = read_state(ckpt)
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    path = ckpt / MODEL
    try:
        missing, unexpected = load_model(model, str(path), strict=False, device=str(device))
    except FileNotFoundError:
        raise DataError("checkpoint file %s is missing", path) from None
    except SafetensorError as err:
        raise DataError("%s is not a safetensors file (%s)", path, first_line(err)) from err
    except RuntimeError as err:  # load_state_dict: a tensor of the wrong shape
        raise DataError("%s does not fit the model: %s", path, _mismatch(err)) from err
    if missing or unexpected:
        raise DataError("%s does not fit the model: missing %s, unexpected %s", path,
                        sorted(missing)[:3], sorted(unexpected)[:3])
    if optimizer is not None:
        if record.get("optimizer") is None:
            raise DataError("checkpoint %s holds no optimizer state", ckpt)
        state = _optimizer_state(ckpt, optimizer, record["optimizer"])
        try:
            optimizer.load_state_dict(state)
        except (ValueError, KeyError, TypeError, RuntimeError) as err:
            raise DataError("%s does not fit the optimizer: %s", ckpt / OPTIMIZER,
                            first_line(err)) from err
    return record


def trainer_state(
    ckpt: Path, record: dict[str, Any], run_hash: str, world_size: int, rank: int
) -> dict[str, Any]:
    """The trainer's own fields of ``record`` for process ``rank``, checked and decoded:
    generator states as tensors (``torch``, ``sampler``, ``cuda`` or None) and the numbers
    ``last_loss``, ``wall_s``, ``tokens_per_s``, ``recent_losses``."""
    try:
        return _trainer_state(Path(ckpt), record, run_hash, world_size, rank)
    except DataError as err:
        raise advised(err, Path(ckpt)) from err


def _trainer_state(
    ckpt: Path, record: dict[str, Any], run_hash: str, world_size: int, rank: int
) -> dict[str, Any]:
    path = ckpt / STATE
    if record.get("run_hash") != run_hash:
        raise DataError("%s belongs to another config (run hash %r, this run %s)", path,
                        record.get("run_hash"), run_hash)
    rng = record.get("rng")
    if not isinstance(rng, list) or not all(isinstance(r, dict) for r in rng):
        raise DataError("%s is damaged: 'rng' should be a list of generator states", path)
    if len(rng) != world_size:
        raise DataError("checkpoint %s was written by %s processes, this run has %s; resume "
                        "with the same number", ckpt, len(rng), world_size)
    out: dict[str, Any] = {k: record.get(k) for k in ("last_loss", "wall_s", "tokens_per_s")}
    recent = record.get("recent_losses", [])  # absent before the divergence window existed
    out["recent_losses"] = recent
    numbers = [*(out[k] for k in ("last_loss", "wall_s", "tokens_per_s")),
               *(recent if isinstance(recent, list) else [None])]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
        raise DataError("%s is damaged: last_loss, wall_s, tokens_per_s and recent_losses "
                        "should be numbers", path)
    for key in ("last_loss", "wall_s", "tokens_per_s"):
        out[key] = float(out[key])
    try:
        out.update({k: b64_to_tensor(rng[rank][k]) for k in ("torch", "sampler")})
        cuda = rng[rank].get("cuda")
        out["cuda"] = None if cuda is None else b64_to_tensor(cuda)
    except (KeyError, ValueError) as err:
        raise DataError("%s is damaged: bad random-generator state (%s)", path,
                        first_line(err)) from err
    return out


def check_finite(model: nn.Module, where: Path) -> None:
    """``DataError`` if a weight of ``model`` (as loaded from ``where``) is NaN or infinite."""
    for name, p in model.named_parameters():
        if not bool(torch.isfinite(p).all()):
            raise DataError("%s holds non-finite weights (%s): the run that wrote it "
                            "diverged", where / MODEL, name)


def tensor_to_b64(t: Tensor) -> str:
    """Bytes of a uint8 tensor (a generator state) as base64 text for JSON."""
    return base64.b64encode(t.cpu().numpy().tobytes()).decode("ascii")


def b64_to_tensor(text: str) -> Tensor:
    """Inverse of ``tensor_to_b64``: a uint8 CPU tensor (``ValueError`` if not base64 text)."""
    if not isinstance(text, str):
        raise ValueError(f"expected base64 text, got {type(text).__name__}")
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error as err:
        raise ValueError(f"not base64 text ({err})") from err
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8).clone()


def _optimizer_state(
    ckpt: Path, optimizer: torch.optim.Optimizer, record: dict[str, Any]
) -> dict[str, Any]:
    """The optimizer's state dict from ``optimizer.safetensors`` and ``record``, checked
    against the optimizer's parameters (``load_state_dict`` checks only the groups)."""
    path = ckpt / OPTIMIZER
    try:
        tensors = load_file(str(path))
    except FileNotFoundError:
        raise DataError("checkpoint file %s is missing", path) from None
    except SafetensorError as err:
        raise DataError("%s is not a safetensors file (%s)", path, first_line(err)) from err
    params = [p for group in optimizer.param_groups for p in group["params"]]
    listed = record.get("tensors")  # written since this check exists
    if listed is not None and sorted(tensors) != sorted(map(str, listed)):
        raise DataError("%s does not hold the optimizer tensors %s lists (%s tensors, %s "
                        "listed)", path, ckpt / STATE, len(tensors), len(listed))
    for key, value in tensors.items():
        idx, _, name = key.partition(".")
        if not idx.isdigit() or int(idx) >= len(params) or not name:
            raise DataError("%s is damaged: unexpected tensor %r for an optimizer of %s "
                            "parameters", path, key, len(params))
        shape = params[int(idx)].shape
        if value.dim() and value.shape != shape:  # moments have the parameter's shape
            raise DataError("%s does not fit the model: %s has shape %s, the parameter %s",
                            path, key, tuple(value.shape), tuple(shape))
    try:
        state = _unflatten_optimizer(tensors, record)
    except (ValueError, TypeError, AttributeError, KeyError) as err:
        raise DataError("%s is damaged: bad optimizer record (%s)", ckpt / STATE,
                        first_line(err)) from err
    groups = state["param_groups"]
    if len(groups) != len(optimizer.param_groups) or any(
        not isinstance(g, dict) or len(g.get("params", ())) != len(mine["params"])
        for g, mine in zip(groups, optimizer.param_groups, strict=False)
    ):
        raise DataError("%s does not fit the model: its optimizer groups differ", ckpt / STATE)
    for g in groups:
        bad = [k for k, v in g.items() if isinstance(v, float) and not math.isfinite(v)]
        if bad:
            raise DataError("%s is damaged: optimizer %s is %s", ckpt / STATE, bad[0], g[bad[0]])
    return state


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
        state.setdefault(int(idx), {}).update(dict(values))
    groups = []
    for group in record["param_groups"]:
        group = dict(group)
        if isinstance(group.get("betas"), list):
            group["betas"] = tuple(group["betas"])
        groups.append(group)
    return {"state": state, "param_groups": groups}


def _expect(path: Path, record: dict[str, Any], key: str, kind: type) -> Any:
    value = record.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise DataError("%s is damaged: %r should be %s, got %s", path, key, kind.__name__,
                        type(value).__name__)
    return value




def _mismatch(err: RuntimeError) -> str:
    """The first 'size mismatch for ...' line of a ``load_state_dict`` error."""
    for line in str(err).splitlines():
        if "size mismatch" in line or "Missing" in line or "Unexpected" in line:
            return line.strip()
    return first_line(err)


def _fsync_file(path: Path) -> None:
    os.chmod(path, 0o666 & ~current_umask())
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())
