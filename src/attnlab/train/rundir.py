"""What a run directory holds, so that every number traces back to what made it.

    <run>/config.json     the resolved RunConfig (and its hash)
    <run>/meta.json       seed, versions, platform, device, code revision, sessions
    <run>/metrics.jsonl   one JSON object per log or eval line
    <run>/tokenizer.json  the tokenizer, so eval/generate need no retraining
    <run>/checkpoint/     weights, optimizer and RNG state (attnlab.train.checkpoint)
    <run>/result.json     the final record, written once the run has finished
    <run>/diverged.json   written instead when training stopped for divergence

A run directory is used by one training process at a time (``run_lock``);
readers take a shared lock (``reader_lock``). Every reader here checks what it
reads: a missing or damaged file is a one-line ``DataError`` naming it, except
``metrics.jsonl``, a log whose unreadable lines are skipped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attnlab.errors import AttnlabError, DataError, Said, UsageError, WriteError, os_reason
from attnlab.files import write_json, write_text
from attnlab.train.newer_version import NewerRun, refuse_newer_config
from attnlab.train.run_config import RunConfig, run_hash

log = logging.getLogger(__name__)

CONFIG = "config.json"
META = "meta.json"
METRICS = "metrics.jsonl"
RESULT = "result.json"
TOKENIZER = "tokenizer.json"
DIVERGED = "diverged.json"
LOCK = ".lock"


class TrainingDiverged(AttnlabError, RuntimeError):
    """The run diverged (a non-finite loss, or a loss far past ln V for many steps).

    Training stopped and kept its last good checkpoint; ``diverged.json`` says so,
    and commands that read the run (``eval``, ``generate``) report it instead of
    a number. Exit code 1: the command ran, and its outcome is a failure.
    """

    exit_code = 1


def read_json(path: Path) -> Any:
    """Parsed JSON of ``path``; a one-line ``DataError`` naming it if missing or damaged."""
    path = Path(path)
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise DataError("missing %s", path) from None
    except IsADirectoryError:
        raise DataError("%s is a directory, not a JSON file", path) from None
    except UnicodeDecodeError as err:
        raise DataError("%s is damaged: not UTF-8 text (byte %s)", path, err.start) from None
    except json.JSONDecodeError as err:
        raise DataError("%s is damaged: not valid JSON (%s)", path, err) from None
    except OSError as err:
        raise DataError("cannot read %s: %s", path, os_reason(err)) from None


def read_json_object(path: Path, *keys: str) -> dict[str, Any]:
    """``read_json`` of a file that must hold an object with ``keys``."""
    record = read_json(path)
    if not isinstance(record, dict):
        raise DataError("%s is damaged: expected a JSON object, got %s", path,
                        type(record).__name__)
    missing = [k for k in keys if k not in record]
    if missing:
        raise DataError("%s is damaged: no %r field", path, missing[0])
    return record


def read_run_config(run_dir: Path) -> RunConfig:
    """The ``RunConfig`` stored in ``run_dir/config.json`` (``DataError`` if damaged)."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError("%s is a file, not a run directory", run_dir)
    if not run_dir.is_dir():
        raise UsageError("run directory not found: %s", run_dir)
    path = run_dir / CONFIG
    if not path.exists():
        raise DataError("%s is not a run directory: missing %s (name a folder made by "
                        "`attnlab train`; resuming a run with its config writes the file "
                        "again)", run_dir, CONFIG)
    try:
        record = read_json_object(path, "config")
        refuse_newer_config(run_dir, path, record["config"])
        return RunConfig.from_dict(record["config"])
    except NewerRun:
        raise
    except UsageError as err:
        raise DataError("%s is damaged: %s; restore it from a copy, or delete it and resume the "
                        "run with `attnlab train` and its config (the file is written again, "
                        "checked against the checkpoint)", path, err) from err
    except DataError as err:
        raise DataError("%s; restore it from a copy, or delete it and resume the run with "
                        "`attnlab train` and its config (the file is written again, checked "
                        "against the checkpoint)", err) from err


def write_run_config(run_dir: Path, cfg: RunConfig) -> None:
    """Write ``config.json`` unless it already holds exactly this (a resume rewrites nothing)."""
    path = Path(run_dir) / CONFIG
    text = json.dumps({"hash": run_hash(cfg), "config": cfg.to_dict()}, indent=2,
                      sort_keys=True) + "\n"
    if path.is_file() and path.read_bytes() == text.encode("utf-8"):
        return
    write_text(path, text)


def _without_where(config: dict[str, Any]) -> dict[str, Any]:
    """A config's dict without what the machine resolves: device, precision and kernel."""
    model = config.get("model") if isinstance(config.get("model"), dict) else {}
    return {**config, "train": {**config["train"], "device": None, "precision": None},
            "model": {**model, "backend": None}}


def check_same_config(run_dir: Path, cfg: RunConfig) -> None:
    """Refuse to train ``cfg`` in a directory that holds another config's run.

    ``cfg`` is resolved (``attnlab.train.runtime.resolve_run``): a run whose
    stored device or precision differ from what this machine would use is
    refused with a line saying so, not resumed in another precision.
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError("run directory %s is a file; choose another --run-dir", run_dir)
    path = run_dir / CONFIG
    if not path.exists():
        return
    try:
        record = read_json_object(path, "hash", "config")
    except DataError as err:
        raise DataError("%s; restore it from a copy, or delete it and resume the run with "
                        "`attnlab train` and its config (the file is written again, checked "
                        "against the checkpoint)", err) from err
    if record["hash"] == run_hash(cfg):
        return
    stored = record["config"]
    refuse_newer_config(run_dir, path, stored)
    mine = cfg.to_dict()
    if isinstance(stored, dict) and isinstance(stored.get("train"), dict):
        theirs = stored["train"]
        where = (theirs.get("device"), theirs.get("precision"))
        if "auto" in where:
            raise UsageError(
                "run directory %s was started before attnlab recorded the resolved device and "
                "precision (train.device=%s, train.precision=%s), so it cannot tell whether "
                "resuming here would change them; delete it or choose another --run-dir",
                run_dir, where[0], where[1])
        # the attention kernel follows from the device and precision (KERNEL_TABLE): left
        # out here, so that a change of precision is said as such
        same_rest = _without_where(stored) == _without_where(mine)
        if same_rest and where != (cfg.train.device, cfg.train.precision):
            raise UsageError(
                "run directory %s was trained on %s in %s; here it would go on on %s in %s, "
                "mixing precisions. Resume it with --set train.device=%s --set "
                "train.precision=%s, or choose another --run-dir", run_dir, where[0], where[1],
                cfg.train.device, cfg.train.precision, where[0], where[1])
    raise UsageError("run directory %s holds a different config (hash %s, this one %s); "
                     "choose another --run-dir or delete it", run_dir, record["hash"],
                     run_hash(cfg))


def read_result(run_dir: Path) -> dict[str, Any]:
    """A finished run's ``result.json`` (``DataError`` naming it if damaged)."""
    path = Path(run_dir) / RESULT
    try:
        return read_json_object(path, "steps", "held_ppl", "train_ppl")
    except DataError as err:
        raise DataError("%s; delete it and run again to evaluate the final checkpoint anew",
                        err) from err


def read_diverged(run_dir: Path) -> dict[str, Any] | None:
    """The record a run that diverged left (``diverged.json``), or None. Its ``message`` is
    a ``Said`` where the record keeps its parts (``message_parts``), to be said in a language.

    A damaged record still says the run diverged: its presence is the fact.
    """
    path = Path(run_dir) / DIVERGED
    if not path.exists():
        return None
    try:
        record = read_json_object(path, "message")
    except DataError:
        return {"message": Said("%s says so (the record itself is damaged)", path)}
    try:
        message = Said.from_parts(record["message_parts"])
    except (KeyError, TypeError, ValueError):  # written before, or by hand: the line as it is
        return record
    return {**record, "message": message} if message == record["message"] else record


def append_metrics(run_dir: Path, record: dict[str, Any]) -> None:
    """Append one JSON line to ``metrics.jsonl`` (flushed, so a crash loses little)."""
    path = Path(run_dir) / METRICS
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
            fh.flush()
    except OSError as err:
        raise WriteError("could not write %s: %s", path, os_reason(err)) from err


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    """The readable lines of ``metrics.jsonl``, in order.

    The metrics are a log, not state: a line a crash cut short, or any line
    that is not a JSON object, is skipped with a warning instead of stopping
    the run (the checkpoint, not the log, is what a resume needs).
    """
    path = Path(run_dir) / METRICS
    if not path.is_file():
        return []
    rows, bad = [], 0
    for line in path.read_bytes().decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("step", 0), int):
            rows.append(row)
        else:
            bad += 1
    if bad:
        log.warning("%s: skipped %d unreadable line" if bad == 1 else
                    "%s: skipped %d unreadable lines", path, bad)
    return rows


def truncate_metrics(run_dir: Path, after_step: int) -> None:
    """Keep the readable lines logged up to ``after_step``: a resumed run logs later steps
    again (and a damaged line is dropped rather than kept in the way)."""
    path = Path(run_dir) / METRICS
    if not path.is_file():
        return
    rows = read_metrics(run_dir)
    keep = [r for r in rows if r.get("step", 0) <= after_step]
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in keep)
    if path.read_bytes() != text.encode("utf-8"):
        write_text(path, text)


def code_revision() -> dict[str, Any]:
    """attnlab's version and, from a git checkout of attnlab, its commit and dirty flag
    (``attnlab.revision.code_revision``: never the commit of a repository it sits inside)."""
    from attnlab.revision import code_revision as revision

    return revision()


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
        **trained_on(device),
    }


def trained_on(device: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, str]:
    """The host a session trains on and its processor: the GPU's name on CUDA, else the
    CPU's model name (``/proc/cpuinfo``; elsewhere ``platform.processor()``), so the runs
    of a suite spread over a cluster say where each trained."""
    import socket

    if device.startswith("cuda"):
        import torch

        processor = torch.cuda.get_device_name(torch.device(device))
    else:
        try:
            names = [line.partition(":")[2].strip() for line in cpuinfo.read_text().splitlines()
                     if line.startswith("model name")]
        except OSError:
            names = []
        processor = names[0] if names else platform.processor() or platform.machine()
    return {"host": socket.gethostname(), "processor": processor}


def read_meta(run_dir: Path) -> dict[str, Any] | None:
    """``meta.json`` of ``run_dir`` (None before the first session).

    A damaged one is a ``DataError``: it holds the versions and platform of the
    first session, which a rewrite would lose, so the user decides.
    """
    path = Path(run_dir) / META
    if not path.exists():
        return None
    try:
        meta = read_json_object(path, "sessions")
        if not isinstance(meta["sessions"], list):
            raise DataError("%s is damaged: 'sessions' is not a list", path)
    except DataError as err:
        raise DataError("%s; move it away to go on (a new one is written)", err) from err
    return meta


def update_meta(run_dir: Path, cfg: RunConfig, session: dict, extra: dict[str, Any]) -> None:
    """Write ``meta.json`` on the first session; append the session on later ones."""
    path = Path(run_dir) / META
    meta = read_meta(run_dir)
    if meta is None:
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
    """Hold the exclusive lock of ``run_dir`` for a training process (POSIX ``flock``).

    A second trainer, and any reader (``reader_lock``), is refused while it is held.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path = Path(run_dir) / LOCK
    try:
        fh = open(path, "a")  # noqa: SIM115 - held for the whole block
    except OSError as err:
        raise WriteError("could not write %s: %s", path, os_reason(err)) from err
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError("run directory %s is in use by another process (a training run "
                             "or an eval holds its lock); wait for it", run_dir) from None
        yield
    finally:
        fh.close()


@contextlib.contextmanager
def reader_lock(run_dir: Path) -> Iterator[None]:
    """Hold a shared lock on ``run_dir`` while reading it (``eval``, ``generate``).

    Readers share; a training run (which holds the exclusive lock while it
    saves checkpoints) makes this a one-line ``UsageError`` instead of a read
    that might race a save. A run directory without a lock file that cannot be
    written either (read-only media) has no trainer either: it is read unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path = Path(run_dir) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield
            return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError("run directory %s is being trained by another process; wait for it "
                             "to stop, or read a copy of the run", run_dir) from None
        yield
    finally:
        os.close(fd)
