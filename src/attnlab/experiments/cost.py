"""§3.5 The cost of attention, as an experiment: profiles, run, table, figure, claims.

The measurements themselves (one attention layer, timing, peak memory per size
in a fresh subprocess under a hard memory limit) live in
``attnlab.experiments.cost_measure``; this module chooses the sizes and
limits per profile and states the claims about the fitted exponents.

Left out: the backward pass (forward only is timed and measured) and batch > 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlab.experiments import cost_measure as measure
from attnlab.experiments.base import Context
from attnlab.experiments.claims import Claim, Records

NAME = "cost"
TITLE = "The cost of attention (§3.5)"
NEEDS_CORPUS = False


@dataclass(frozen=True)
class Settings:
    sizes: tuple[int, ...]  # sequence lengths n, doubling
    kinds: tuple[str, ...] = measure.KINDS  # naive | sdpa | memeff
    mem_limit_gib: float = 8.0  # hard address-space budget of each measuring subprocess
    repeats: int = 3  # timed forwards per size (median reported)
    d_model: int = 512  # width of the attention layer
    n_head: int = 8  # heads
    threads: int = 1  # torch threads per measuring subprocess (stable timings)


def _doubling(lo: int, hi: int) -> tuple[int, ...]:
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return tuple(out)


PROFILES = {
    "full": Settings(sizes=_doubling(128, 16_384)),
    "quick": Settings(sizes=_doubling(128, 8_192), mem_limit_gib=2.0, repeats=1),
    "micro": Settings(sizes=(16, 32, 64), kinds=("naive", "memeff"), mem_limit_gib=1.0,
                      repeats=1, d_model=64, n_head=4),
}
QUICK_CHANGES = (
    "sizes stop at n = 8,192 instead of 16,384 and each size is timed once instead of three "
    "times (n = 16,384 costs minutes per kind on 2 cores); the memory limit is 2 GiB instead "
    "of 8 GiB, so the naive layer still runs out of memory at the top size (its 8 heads of "
    "8,192² float32 scores alone are 2 GiB), which is the effect the full profile shows at "
    "16,384 under 8 GiB."
)


def run(settings: Settings, ctx: Context | None = None) -> dict[str, Any]:
    records = measure.sweep(
        settings.kinds, settings.sizes, int(settings.mem_limit_gib * measure.GIB),
        settings.repeats, d_model=settings.d_model, n_head=settings.n_head,
        threads=settings.threads,
    )
    fitted = measure.exponents(records)
    for kind in fitted:
        rows = [r for r in records if r["kind"] == kind and r["status"] == "ok"]
        try:
            fitted[kind]["projections"] = measure.fit_exponent(
                [r["n"] for r in rows], [r.get("proj_ms") for r in rows])
        except ValueError:
            fitted[kind]["projections"] = None
    return {"records": records, "exponents": fitted,
            "mem_limit_bytes": int(settings.mem_limit_gib * measure.GIB)}


def table(record: dict[str, Any]) -> str:
    lines = [measure.table(record["records"]), "", "| kind | time exp. | memory exp. | "
             "projections exp. |", "|---|---:|---:|---:|"]
    for kind, e in record["exponents"].items():
        cells = [f"{e[k]:.2f}" if e.get(k) is not None else "—"
                 for k in ("time", "memory", "projections")]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nExponents: least-squares slope of log value vs log n over " \
        "the last four sizes that completed.\n"


def figure(record: dict[str, Any], path: Path) -> None:
    measure.figure(record["records"], path)


# -- claims -------------------------------------------------------------------

def _exp(records: Records, kind: str, what: str) -> float | None:
    return records[NAME]["exponents"].get(kind, {}).get(what)


def _quadratic(records: Records) -> tuple[bool, dict[str, Any]]:
    naive_mem = _exp(records, "naive", "memory")
    naive_time = _exp(records, "naive", "time")
    proj = _exp(records, "naive", "projections")
    held = (naive_mem is not None and naive_mem >= 1.7 and naive_time is not None
            and naive_time >= 1.5 and proj is not None and proj <= 1.3)
    return held, {"naive memory exponent": naive_mem, "naive time exponent": naive_time,
                  "projections exponent": proj}


def _linear_memory(records: Records) -> tuple[bool, dict[str, Any]]:
    mem = _exp(records, "memeff", "memory")
    rows = [r for r in records[NAME]["records"] if r["kind"] in ("naive", "memeff")]
    top = max(r["n"] for r in rows)
    status = {r["kind"]: r["status"] for r in rows if r["n"] == top}
    held = mem is not None and mem <= 1.2 and status.get("memeff") == "ok"
    return held, {"memeff memory exponent": mem, "largest n": top,
                  "memeff at largest n": status.get("memeff"),
                  "naive at largest n": status.get("naive")}


CLAIMS = [
    Claim("cost.quadratic", "attention time and memory grow with exponent → 2, projections "
          "linearly", (NAME,), _quadratic,
          "naive layer: memory exponent ≥ 1.7 and time exponent ≥ 1.5; its projections' time "
          "exponent ≤ 1.3 (last four sizes)"),
    Claim("cost.memeff_linear", "the memory-efficient attention grows linearly in memory",
          (NAME,), _linear_memory,
          "memeff memory exponent ≤ 1.2 and memeff completes at the largest n"),
]
