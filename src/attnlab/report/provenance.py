"""How and where a report was made: the machine, the versions, the phases; and, for a report
re-rendered from earlier records (``attnlab report``), the run that made them."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from attnlab.kit.extra_seeds import EXTRA_SEEDS
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
    only: list[str] | None, started_at: str, wall_s: float,
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
        "corpus_status": str(corpus_status),
        # in parts where it was made so (``attnlab.errors.Said``): said in the report's language
        **({"corpus_status_parts": corpus_status.parts()} if hasattr(corpus_status, "parts")
           else {}),
        "started_at": started_at,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_s": wall_s,
        "phases_s": phases or {},
        "machine": machine(),  # and the executor's "training workers" (``where``)
        "versions": versions(),
        "code_revision": code_revision(),  # attnlab's own (attnlab.revision)
    }


# what a re-render keeps of the run whose records it shows: when and where it trained
ORIGINAL = ("started_at", "finished_at", "wall_s", "phases_s", "machine", "code_revision",
            "extra_seeds")
OLD_REPORT_ONLY = "not used (report only)"  # the corpus status of an older, unmarked re-render


def earlier_run(out_dir: str | Path, profile: str) -> dict[str, Any] | None:
    """The run whose records are in ``out_dir``, as its ``results.json`` recorded it (the
    fields of ``ORIGINAL``); an earlier re-render passes on its own original. None when the
    file is missing, of another profile, or itself a re-render that did not know it."""
    try:
        meta = json.loads((Path(out_dir) / "results.json").read_text(encoding="utf-8"))["meta"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(meta, dict) or meta.get("profile") != profile:
        return None
    if meta.get("report_only") or meta.get("corpus_status") == OLD_REPORT_ONLY:
        original = meta.get("original_run")
        return original if isinstance(original, dict) else None
    if not isinstance(meta.get("wall_s"), int | float):
        return None
    return {k: meta[k] for k in ORIGINAL if k in meta}


def rerendered(meta: dict[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """``meta`` of a report-only call: marked so, without this call's phases (it trained and
    analysed nothing), with the original run's times beside it (None when not recorded), and
    its extra-seed round's size where it recorded one (the rule its verdicts were made by)."""
    original = earlier_run(out_dir, meta["profile"])
    rule = {"extra_seeds": original["extra_seeds"]} if original and "extra_seeds" in original \
        else {}
    return {**meta, **rule, "report_only": True, "phases_s": {}, "original_run": original}
