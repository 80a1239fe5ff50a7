"""What a run directory holds, so that every number traces back to what made it.

    <run>/config.json     the resolved RunConfig (and its hash)
    <run>/meta.json       seed, versions, platform, device, code revision, sessions
    <run>/metrics.jsonl   one JSON object per log or eval line
    <run>/tokenizer.json  the tokenizer, so eval/generate need no retraining
    <run>/checkpoint/     weights, optimizer and RNG state (attnlab.train.checkpoint)
    <run>/result.json     the final record, written once the run has finished

A run directory is used by one training process at a time (``run_lock``).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attnlab.files import write_json, write_text
from attnlab.train.config import RunConfig, run_hash

CONFIG = "config.json"
META = "meta.json"
METRICS = "metrics.jsonl"
RESULT = "result.json"
TOKENIZER = "tokenizer.json"


def read_json(path: Path) -> Any:
    """Parsed JSON of ``path``; a clear ``ValueError`` if missing or broken."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"missing {path}") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from None


def read_run_config(run_dir: Path) -> RunConfig:
    """The ``RunConfig`` stored in ``run_dir/config.json``."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ValueError(f"run directory not found: {run_dir}")
    record = read_json(run_dir / CONFIG)
    return RunConfig.from_dict(record["config"])


def write_run_config(run_dir: Path, cfg: RunConfig) -> None:
    write_json(Path(run_dir) / CONFIG, {"hash": run_hash(cfg), "config": cfg.to_dict()})


def check_same_config(run_dir: Path, cfg: RunConfig) -> None:
    """Refuse to train ``cfg`` in a directory that holds another config's run."""
    path = Path(run_dir) / CONFIG
    if not path.is_file():
        return
    stored = read_json(path).get("hash")
    if stored != run_hash(cfg):
        raise ValueError(
            f"run directory {run_dir} holds a different config (hash {stored}, this one "
            f"{run_hash(cfg)}); choose another --run-dir or delete it"
        )


def append_metrics(run_dir: Path, record: dict[str, Any]) -> None:
    """Append one JSON line to ``metrics.jsonl`` (flushed, so a crash loses little)."""
    with open(Path(run_dir) / METRICS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
        fh.flush()


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / METRICS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def truncate_metrics(run_dir: Path, after_step: int) -> None:
    """Drop lines logged after ``after_step``: a resumed run logs those steps again."""
    rows = read_metrics(run_dir)
    keep = [r for r in rows if r.get("step", 0) <= after_step]
    if len(keep) != len(rows):
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in keep)
        write_text(Path(run_dir) / METRICS, text)


def code_revision() -> dict[str, Any]:
    """``git rev-parse HEAD`` of the attnlab source and whether it has local changes."""
    src = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True, timeout=10
        )
        if rev.returncode != 0:
            return {"commit": "unknown", "dirty": None}
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=src, capture_output=True, text=True, timeout=10,
        )
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return {"commit": rev.stdout.strip(), "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}


def versions() -> dict[str, str]:
    """Versions of Python and of the libraries whose numbers a run depends on."""
    import numpy
    import safetensors
    import tokenizers
    import torch

    import attnlab

    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "tokenizers": tokenizers.__version__,
        "safetensors": safetensors.__version__,
        "attnlab": attnlab.__version__,
    }


def session_record(device: str, precision: str, world_size: int, start_step: int) -> dict:
    """One entry of ``meta.json``'s ``sessions``: where and how a (resumed) run went on."""
    return {
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "start_step": start_step,
        "device": device,
        "precision": precision,
        "world_size": world_size,
        "code_revision": code_revision(),
    }


def update_meta(run_dir: Path, cfg: RunConfig, session: dict, extra: dict[str, Any]) -> None:
    """Write ``meta.json`` on the first session; append the session on later ones."""
    path = Path(run_dir) / META
    if path.is_file():
        meta = read_json(path)
    else:
        meta = {
            "run_hash": run_hash(cfg),
            "seed": cfg.train.seed,
            "versions": versions(),
            "platform": {
                "system": platform.platform(),
                "machine": platform.machine(),
                "processor": platform.processor(),
                "cpu_count": os.cpu_count(),
            },
            "code_revision": session["code_revision"],
            **extra,
            "sessions": [],
        }
    meta["sessions"].append(session)
    write_json(path, meta)


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``run_dir`` (POSIX ``flock``; a no-op elsewhere)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fh = open(Path(run_dir) / ".lock", "w")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"run directory {run_dir} is in use by another process") from None
        yield
    finally:
        fh.close()
