"""How and where a report was made: the machine, the versions, the phases."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from attnlab.lab.seeds import EXTRA_SEEDS


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


def code_revision(package: Path | None = None) -> dict[str, Any]:
    """The code a result came from: attnlab's version and, where the package is imported from
    a git checkout of attnlab (an editable install, a clone on ``sys.path``), that checkout's
    commit and whether its tracked files have local changes.

    The repository is the package's own: its ``__init__.py`` must be a file that repository
    tracks. A wheel installed into a venv that sits inside some other repository (the user's
    project) records no commit, never that project's: ``commit`` and ``dirty`` are None.
    """
    import attnlab

    package = Path(attnlab.__file__).resolve().parent if package is None else package
    out: dict[str, Any] = {"version": attnlab.__version__, "commit": None, "dirty": None,
                           "source": "installed package"}
    init = package / "__init__.py"

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=package, capture_output=True, text=True,
                              timeout=10)

    try:
        if git("ls-files", "--error-unmatch", init.name).returncode != 0:
            return out  # not tracked there: no repository, or one it merely sits inside
        rev = git("rev-parse", "HEAD")
        if rev.returncode != 0:
            return out
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return out
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return {**out, "commit": rev.stdout.strip(), "dirty": dirty, "source": "git checkout"}


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
        "code_revision": code_revision(),
    }
