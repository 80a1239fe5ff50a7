"""The run's three random generators, kept in a checkpoint and restored from it.

A run draws from torch's global generator (initialisation, dropout), from its own batch
sampler, and on CUDA from the device's generator. A checkpoint keeps all three
(``capture``, base64 for JSON) and a resumed run sets them back (``restore``); with the
learning rate a function of the step, a run cut and resumed on the CPU ends with exactly the
weights of one never cut.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from attnlab.errors import DataError, first_line
from attnlab.train.checkpoint import STATE, tensor_to_b64


def capture(sampler: torch.Generator, device: torch.device) -> dict[str, str | None]:
    """The three states now, as base64 (``cuda`` None off CUDA)."""
    return {
        "torch": tensor_to_b64(torch.get_rng_state()),
        "sampler": tensor_to_b64(sampler.get_state()),
        "cuda": (tensor_to_b64(torch.cuda.get_rng_state(device))
                 if device.type == "cuda" else None),
    }


def restore(states: dict[str, Any], sampler: torch.Generator, device: torch.device,
            ckpt: Path) -> None:
    """Set the generators to ``states`` (tensors, as ``checkpoint.trainer_state`` decodes
    them); a state of the wrong size is a ``DataError`` naming ``ckpt``'s state file."""
    try:
        torch.set_rng_state(states["torch"])
        sampler.set_state(states["sampler"])
        if states["cuda"] is not None and device.type == "cuda":
            torch.cuda.set_rng_state(states["cuda"], device)
    except RuntimeError as err:  # a state of the wrong size
        raise DataError(f"{ckpt / STATE} is damaged: a random-generator state cannot be "
                        f"restored ({first_line(err)})") from err
