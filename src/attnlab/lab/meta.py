"""How and where a report was made: the machine, the versions, the phases."""

from __future__ import annotations

import os
import platform
import time
from typing import Any

from attnlab.lab.seeds import EXTRA_SEEDS
from attnlab.revision import code_revision


def machine() -> dict[str, Any]:
    """Platform, CPU count, torch version and the device a training run would use."""
    import torch

    device = "cpu"
    if torch.cuda.is_available():
        device = f"cuda ({torch.cuda.get_device_name(0)}, {torch.cuda.device_count()} GPU)"
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or "–",
        "CPU count": os.cpu_count(),
        "torch threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "device": device,
    }


def collect_meta(
    profile: str, seeds: int | None, *, corpus: str | None, corpus_status: str,
    only: list[str] | None, started_at: str, wall_s: float, workers: int = 1,
    phases: dict[str, float] | None = None, extra_seeds: int = EXTRA_SEEDS,
    extra_round: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Everything the report says about how and where it was made."""
    from attnlab.train.rundir import versions

    return {
        "profile": profile,
        "seeds": seeds if seeds is not None else "the profile's",
        "extra_seeds": extra_seeds,
        "extra_round": extra_round or {},  # experiment -> the claims that called for it
        "only": only,
        "corpus": corpus,
        "corpus_status": corpus_status,
        "started_at": started_at,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_s": wall_s,
        "phases_s": phases or {},
        "machine": {**machine(), "training workers": (
            f"{workers} worker processes" if workers > 1 else "this process")},
        "versions": versions(),
        "code_revision": code_revision(),  # attnlab's own (attnlab.revision)
    }
