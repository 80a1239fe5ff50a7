"""Weights kept at chosen steps of a run (``train.keep_steps``), beside its checkpoint.

A run with ``keep_steps = (120, 240)`` writes ``<run>/kept/step-120.safetensors`` and
``<run>/kept/step-240.safetensors`` right after those updates: the model's weights only
(no optimizer state: a kept step is for measuring, not for resuming). One run then gives
the snapshots of its own trajectory, where training each prefix as a run of its own
would repeat the early steps once per snapshot (the induction experiment's phase change).

Each file is written atomically (``attnlab.files.atomic_path``) and read without pickle.
A run killed after a kept step and resumed from an earlier checkpoint writes that step
again, with the same trajectory's weights.
"""

from __future__ import annotations

from pathlib import Path

from safetensors import SafetensorError
from safetensors.torch import load_model, save_model
from torch import nn

from attnlab.errors import DataError, first_line
from attnlab.files import atomic_path

KEPT = "kept"


def kept_path(run_dir: Path, step: int) -> Path:
    return Path(run_dir) / KEPT / f"step-{step}.safetensors"


def kept_steps(run_dir: Path) -> list[int]:
    """The steps whose weights ``run_dir`` keeps, in order."""
    folder = Path(run_dir) / KEPT
    steps = []
    for path in folder.glob("step-*.safetensors") if folder.is_dir() else ():
        number = path.name[len("step-"):-len(".safetensors")]
        if number.isdigit():
            steps.append(int(number))
    return sorted(steps)


def save_kept(run_dir: Path, model: nn.Module, step: int) -> Path:
    """Write ``model``'s weights as the kept weights of ``step`` (atomically)."""
    path = kept_path(run_dir, step)
    with atomic_path(path) as tmp:
        save_model(model, str(tmp), metadata={"step": str(step)})
    return path


def load_kept(run_dir: Path, step: int, model: nn.Module) -> nn.Module:
    """Load the kept weights of ``step`` into ``model`` (on its device) and return it.

    A step the run did not keep, or a damaged file, is a ``DataError`` naming it.
    """
    path = kept_path(run_dir, step)
    if not path.is_file():
        have = kept_steps(run_dir)
        if not have:
            raise DataError("run %s kept no weights at step %s (it keeps none; set "
                            "train.keep_steps and train it again)", run_dir, step)
        raise DataError("run %s kept no weights at step %s (it keeps %s; set train.keep_steps "
                        "and train it again)", run_dir, step, have)
    device = next((p.device for p in model.parameters()), None)
    try:
        missing, unexpected = load_model(model, str(path), strict=False,
                                         device=str(device or "cpu"))
    except SafetensorError as err:
        raise DataError("%s is not a safetensors file (%s)", path, first_line(err)) from err
    except RuntimeError as err:  # a tensor of the wrong shape
        raise DataError("%s does not fit the run's model (%s)", path, first_line(err)) from err
    if missing or unexpected:
        raise DataError("%s does not fit the run's model (missing %s, unexpected %s)", path,
                        sorted(missing), sorted(unexpected))
    return model.eval()
