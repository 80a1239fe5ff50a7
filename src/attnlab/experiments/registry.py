"""The experiments by name, their settings, and running one: plan → train → analyse.

``run_experiment`` writes ``<out>/<name>/result.json`` (the *envelope*: the
record, the settings, the wall time, the code revision), ``table.md`` and
``figure.png``. A finished envelope with the same profile and settings (the
seed count included) is reused as is; training runs are cached further down by
the runner, so an interrupted experiment resumes where it stopped. An envelope
made by the extra-seed round (``attnlab.experiments.extra_seeds``) names the
settings it grew from under ``planned``: it is reused for those, with the same
number of extra seeds.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from attnlab.errors import UsageError
from attnlab.experiments.base import Context, settings_dict
from attnlab.experiments.runner import Results, RunSpec
from attnlab.files import atomic_path, write_json, write_text

log = logging.getLogger(__name__)

# Order = report order.
EXPERIMENTS = ["ladder", "sqrt_dk", "norm", "position", "cost", "params", "winograd",
               "agreement"]
PROFILES = ("full", "quick", "micro")
FIGURE_DPI = 110


def load(name: str) -> ModuleType:
    if name not in EXPERIMENTS:
        raise UsageError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}")
    return importlib.import_module(f"attnlab.experiments.{name}")


def check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}; choose one of: {', '.join(PROFILES)}")


def settings_of(mod: ModuleType, profile: str, seeds: int | None = None) -> Any:
    """The profile's settings of ``mod``, with ``seeds`` training seeds where it trains
    (None: the profile's own number)."""
    check_profile(profile)
    settings = mod.PROFILES[profile]
    if seeds is not None:
        if seeds < 1:
            raise UsageError(f"seeds must be at least 1, got {seeds}")
        if any(f.name == "seeds" for f in dataclasses.fields(settings)):
            settings = dataclasses.replace(settings, seeds=seeds)
    return settings


def identity(profile: str, settings: Any) -> dict[str, Any]:
    """What makes a finished envelope reusable: the profile and every setting."""
    return {"profile": profile, "seeds": getattr(settings, "seeds", None),
            "settings": settings_dict(settings)}


def finished_envelope(out: Path, name: str, ident: dict[str, Any],
                      extra_seeds: int | None = None) -> dict | None:
    """The envelope in ``out/name`` if it was made with ``ident``, else None.

    An envelope that had the extra-seed round is made with ``ident`` when its ``planned``
    identity is ``ident`` and its round added ``extra_seeds`` seeds (None: any number);
    it then holds more seeds than ``ident`` says, and is never grown again.
    """
    path = Path(out) / name / "result.json"
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing or damaged: the experiment is analysed again
        return None
    if not isinstance(cached, dict):
        return None
    grown = cached.get("extra_round") or {}
    if grown.get("ran"):
        same = cached.get("planned") == ident and \
            extra_seeds in (None, grown.get("extra_seeds"))
    else:
        same = all(cached.get(k) == v for k, v in ident.items())
    return cached if same else None


def analyse_and_write(name: str, mod: ModuleType, profile: str, settings: Any,
                      results: Results, ctx: Context, out: Path,
                      extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Analyse finished runs, write the envelope, table and figure; returns the envelope.
    ``extra`` adds fields to the envelope (the extra-seed round's ``planned`` identity and
    ``extra_round`` note)."""
    from attnlab.train.rundir import code_revision

    start = time.perf_counter()
    record = mod.analyse(settings, results, ctx)
    envelope = {
        "name": name,
        "title": mod.TITLE,
        **identity(profile, settings),
        "quick_changes": mod.QUICK_CHANGES,
        "record": record,
        "wall_s": time.perf_counter() - start,  # analysis; training is in the runs' records
        "train_s": sum(r.get("wall_s") or 0.0 for r in results.values()),
        "runs": len(results),
        "code_revision": code_revision(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **(extra or {}),
    }
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "table.md", mod.table(record))
    with atomic_path(folder / "figure.png") as tmp:
        mod.figure(record).savefig(tmp, dpi=FIGURE_DPI, format="png")
    write_json(folder / "result.json", envelope, sort_keys=False)
    return envelope


def run_experiment(name: str, profile: str, ctx: Context, out: Path,
                   seeds: int | None = None, extra_seeds: int | None = None) -> dict[str, Any]:
    """Run one experiment's planned runs and analysis (or reuse its finished envelope, one
    grown by ``extra_seeds`` included; see ``finished_envelope``); returns the envelope. The
    extra-seed round itself is ``attnlab.experiments.extra_seeds.settle``, after the claims."""
    mod = load(name)
    settings = settings_of(mod, profile, seeds)
    cached = finished_envelope(out, name, identity(profile, settings), extra_seeds)
    if cached is not None:
        log.info("%s: finished earlier, reusing %s", name, out / name / "result.json")
        return cached
    specs: list[RunSpec] = mod.plan(settings)
    results = ctx.runner().train(specs)
    return analyse_and_write(name, mod, profile, settings, results, ctx, Path(out))
