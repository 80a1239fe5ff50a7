"""The experiments by name, and running one with caching of its whole record.

``run_experiment`` writes ``<out>/<name>/result.json``, ``table.md`` and
``figure.png``. A finished record with the same profile settings and seeds is
reused as is; individual training runs are cached further down by
``Context.train``, so an interrupted experiment resumes where it stopped.
"""

from __future__ import annotations

import importlib
import json
import logging
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from attnlab.experiments.base import Context, settings_dict
from attnlab.files import atomic_path, write_json, write_text

log = logging.getLogger(__name__)

# Order = report order.
EXPERIMENTS = ["ladder", "sqrt_dk", "norm", "position", "cost", "params", "winograd"]
PROFILES = ("full", "quick", "micro")


def load(name: str) -> ModuleType:
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"attnlab.experiments.{name}")


def run_experiment(name: str, profile: str, ctx: Context, out: Path) -> dict[str, Any]:
    """Run one experiment (or reuse its finished record); returns the envelope."""
    from attnlab.train.rundir import code_revision

    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of: {', '.join(PROFILES)}")
    mod = load(name)
    settings = mod.PROFILES[profile]
    folder = out / name
    result_path = folder / "result.json"
    ident = {"profile": profile, "seeds": ctx.seeds, "settings": settings_dict(settings)}
    if result_path.is_file():
        cached = json.loads(result_path.read_text())
        if all(cached.get(k) == v for k, v in ident.items()):
            log.info("%s: finished earlier, reusing %s", name, result_path)
            return cached
    start = time.perf_counter()
    record = mod.run(settings, ctx)
    envelope = {
        "name": name,
        "title": mod.TITLE,
        **ident,
        "quick_changes": mod.QUICK_CHANGES,
        "record": record,
        "wall_s": time.perf_counter() - start,
        "code_revision": code_revision(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "table.md", mod.table(record))
    with atomic_path(folder / "figure.png") as tmp:
        mod.figure(record, tmp)
    write_json(result_path, envelope, sort_keys=False)
    return envelope
