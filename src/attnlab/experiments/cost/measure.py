"""What "Cost of attention" measures: the sweep of one attention layer over the profile's
sizes (``attnlab.timing.cost``, shared with the benchmarks) and the exponents fitted to it."""

from __future__ import annotations

from typing import Any

from attnlab.experiments.cost.settings import Settings
from attnlab.timing import cost as measure


def sweep_record(settings: Settings, device: str) -> dict[str, Any]:
    """The sweep on ``device``, its fitted exponents (time, memory, the projections')."""
    records = measure.sweep(
        settings.kinds, settings.sizes, int(settings.mem_limit_gib * measure.GIB),
        settings.repeats, d_model=settings.d_model, n_head=settings.n_head,
        threads=settings.threads, device=device,
    )
    fitted = measure.exponents(records)
    for kind in fitted:
        rows = [r for r in records if r["kind"] == kind and r["status"] == "ok"]
        try:
            fitted[kind]["projections"] = measure.fit_exponent(
                [r["n"] for r in rows], [r.get("proj_ms") for r in rows])
        except ValueError:
            fitted[kind]["projections"] = None
        fitted[kind]["projections_range"] = measure.time_range(rows, "proj")
    return {"records": records, "exponents": fitted, "device": device,
            "mem_limit_bytes": int(settings.mem_limit_gib * measure.GIB)}
