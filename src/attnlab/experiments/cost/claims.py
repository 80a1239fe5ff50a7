"""The claims of "The cost of attention", their rules and thresholds (docs/experiments.md,
"Claims and verdicts"), and how they read the record of ``attnlab.experiments.cost``: the
sweep's rows and, per kind, the fitted exponents of time, memory and the projections' time
(with, for times, the range of slopes the timing spread allows)."""

from __future__ import annotations

from typing import Any

from attnlab.experiments.cost.settings import NAME
from attnlab.kit.claims import Claim, Margins, Part, Records, Skip, claim, with_figures
from attnlab.kit.quantities import Quantity
from attnlab.timing import cost as measure

# -- claims -------------------------------------------------------------------
# "→ 2" is read as a fitted exponent of at least 1.7 for memory (an allocation of exactly
# n² per head) and 1.5 for time (CPU timings of the largest sizes are noisy); "linearly" as
# at most 1.3 for the projections and 1.2 for memeff's memory.
QUAD_MEMORY, QUAD_TIME, LINEAR_TIME, LINEAR_MEMORY = 1.7, 1.5, 1.3, 1.2
# A time exponent is a benchmark's: fitted to each size's minimum over its
# interleaved rounds, and decided only beyond the range of slopes that the rounds' spread
# allows (``measure.time_range``): held when the whole range passes the threshold, not held
# when none of it does, inconclusive when it straddles the threshold or when the sizes were
# timed fewer than ``measure.MIN_REPEATS`` times (no spread to decide beyond).


def _exp(records: Records, kind: str, what: str) -> float:
    value = records[NAME]["exponents"].get(kind, {}).get(what)
    if value is None:
        raise Skip(f"no fitted {what} exponent for {kind}: too few sizes completed or measured")
    return value


def _exp_part(kind: str, what: str, margin: Any, rule: str, name: str) -> Part:
    def margins(records: Records) -> Margins:
        e = _exp(records, kind, what)
        return Margins([margin(e)], {f"{kind} {what} exponent": e})
    return Part(rule, margins, "exponent", name)


def _timed_part(kind: str, what: str, threshold: float, at_least: bool, rule: str,
                name: str) -> Part:
    range_key = "time_range" if what == "time" else f"{what}_range"

    def margins(records: Records) -> Margins:
        e = _exp(records, kind, what)
        span = records[NAME]["exponents"].get(kind, {}).get(range_key)
        numbers = {f"{kind} {what} exponent": e, f"{kind} {what} exponent range": span}
        undecided = ""
        if span is None:
            undecided = (f"{kind} {what} exponent {e:.2f} has no timing spread to be decided "
                         f"beyond (timed fewer than {measure.MIN_REPEATS} times per size)")
        elif span[0] <= threshold <= span[1]:
            undecided = (f"{kind} {what} exponent {e:.2f}: the range {span[0]:.2f} to "
                         f"{span[1]:.2f} its timing spread allows straddles {threshold:g}")
        return Margins([e - threshold if at_least else threshold - e], numbers, undecided)
    return Part(rule, margins, "exponent", name)


def _memeff_completes(records: Records) -> Margins:
    rows = [r for r in records[NAME]["records"] if r["kind"] in ("naive", "memeff")]
    top = max(r["n"] for r in rows)
    status = {r["kind"]: r["status"] for r in rows if r["n"] == top}
    return Margins([1.0 if status.get("memeff") == "ok" else -1.0],
                   {"largest n": top, "memeff at largest n": status.get("memeff"),
                    "naive at largest n": status.get("naive")})


CLAIMS: list[Claim] = [
    claim("cost.quadratic", "attention time and memory grow with exponent → 2, projections "
          "linearly", NAME,
          _exp_part("naive", "memory", lambda e: e - QUAD_MEMORY,
                    f"naive layer's memory exponent ≥ {QUAD_MEMORY:g}", "memory"),
          _timed_part("naive", "time", QUAD_TIME, True,
                      f"naive layer's time exponent ≥ {QUAD_TIME:g} beyond its timing spread",
                      "time"),
          _timed_part("naive", "projections", LINEAR_TIME, False,
                      f"its projections' time exponent ≤ {LINEAR_TIME:g} beyond its timing "
                      "spread", "projections"),
          trained=False, version=2),  # v2: time decided beyond the benchmark's spread (bd11d95)
    claim("cost.memeff_linear", "the memory-efficient attention grows linearly in memory", NAME,
          _exp_part("memeff", "memory", lambda e: LINEAR_MEMORY - e,
                    f"memory-efficient attention's memory exponent ≤ {LINEAR_MEMORY:g}",
                    "memory"),
          Part("the memory-efficient attention completes at the largest n", _memeff_completes,
               "yes/no", "completes"),
          trained=False),
]

FIGURES = {
    "{kind} {what} exponent range": Quantity(
        "range of the exponent of {what} its timing spread allows, {kind}",
        "intervalo del exponente de {what} que permite la dispersión de los tiempos, {kind}",
        kind="range"),
    "{kind} {what} exponent": Quantity("fitted exponent of {what} against n, {kind}",
                                       "exponente ajustado de {what} frente a n, {kind}"),
    "largest n": Quantity("largest n", "mayor n", kind="count"),
    "{kind} at largest n": Quantity("{kind} at the largest n", "{kind} a la mayor n"),
}
CLAIMS = with_figures(CLAIMS, FIGURES)
