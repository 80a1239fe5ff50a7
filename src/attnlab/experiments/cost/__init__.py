"""The cost of attention as an experiment: profiles, analyse, table, figure, claims
(docs/experiments.md, "Cost of attention").

The measurements themselves (one attention layer, timing, peak memory per size
in a fresh subprocess under a hard memory limit on the CPU, by the allocator on
CUDA) live in ``attnlab.timing.cost``; this module chooses the
sizes and limits per profile, measures on the device the run resolves to
(``Context.device``), renders the sweep and states the claims about the fitted
exponents. Nothing is trained, so the claims have one evaluation each.

Left out: the backward pass (forward only is timed and measured) and batch > 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attnlab.kit.chapter import Chapter, ChapterFigure, Measured, value
from attnlab.kit.claims import Claim, Margins, Part, Records, Skip, claim, with_figures
from attnlab.kit.quantities import Quantity
from attnlab.kit.registry import Experiment
from attnlab.running.context import Context
from attnlab.running.runner import Results, RunSpec
from attnlab.timing import cost as measure
from attnlab.timing.cost import size_text
from attnlab.timing.cost_view import sweep_figure, sweep_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NAME = "cost"
NEEDS_CORPUS = False


@dataclass(frozen=True)
class Settings:
    sizes: tuple[int, ...]  # sequence lengths n, doubling
    kinds: tuple[str, ...] = measure.KINDS  # naive | sdpa | memeff
    mem_limit_gib: float = 8.0  # memory budget of each measurement (address space / allocator)
    repeats: int = 5  # timed rounds over every size, interleaved (the minimum is the figure)
    d_model: int = 512  # width of the attention layer
    n_head: int = 8  # heads
    threads: int = 1  # torch threads per measuring subprocess (stable timings; CPU only)


def _doubling(lo: int, hi: int) -> tuple[int, ...]:
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return tuple(out)


PROFILES = {
    "full": Settings(sizes=_doubling(128, 16_384)),
    "quick": Settings(sizes=_doubling(128, 8_192), mem_limit_gib=2.0),
    "micro": Settings(sizes=(16, 32, 64), kinds=("naive", "memeff"), mem_limit_gib=1.0,
                      repeats=measure.MIN_REPEATS, d_model=64, n_head=4),
}

def plan(settings: Settings) -> list[RunSpec]:
    """Nothing to train: the sweep is measured in ``analyse``."""
    return []


def analyse(settings: Settings, results: Results | None = None,
            ctx: Context | None = None) -> dict[str, Any]:
    """The sweep on the context's device, and its fitted exponents."""
    device = str(ctx.device) if ctx is not None else "cpu"
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


def table(record: dict[str, Any]) -> str:
    lines = [sweep_table(record["records"]), "", "| kind | time exp. | memory exp. | "
             "projections exp. |", "|---|---:|---:|---:|"]
    for kind, e in record["exponents"].items():
        cells = [_exponent_cell(e, k) for k in ("time", "memory", "projections")]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    how = "the allocator's peak" if record.get("device", "cpu").startswith("cuda") else \
        "the peak resident set of a fresh subprocess"
    return "\n".join(lines) + "\n\nExponents: least-squares slope of log value vs log n over " \
        "the last four sizes that completed; for time, of each size's minimum over its " \
        "interleaved rounds, with in brackets the range of slopes its spread (max / min over " \
        "the rounds) allows: a time claim is decided only beyond that range. Device: " \
        f"{record.get('device', 'cpu')}; peak memory is {how}, under a budget of " \
        f"{size_text(record['mem_limit_bytes'])}.\n"


def _exponent_cell(e: dict[str, Any], what: str) -> str:
    if e.get(what) is None:
        return "—"
    span = e.get(f"{what}_range") if what != "time" else e.get("time_range")
    return f"{e[what]:.2f}" + (f" [{span[0]:.2f}, {span[1]:.2f}]" if span else "")


def figure(record: dict[str, Any]) -> Figure:
    return sweep_figure(record["records"])


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

F = ChapterFigure

# -- the chapter's part (attnlab.kit.chapter): one naive attention layer (width 512, 8 heads,
# batch 1, fp32, a laptop GPU).
# The chapter took its milliseconds on a laptop GPU and says to read them only by their
# ratios: its times are compared here as the ratio to the row above (the ×4
# of a quadratic layer, ×2 of a linear one) and as exponents, never as milliseconds; its
# peak memory (a GPU allocator's) likewise as a ratio. The n×n bytes are arithmetic.
_COST = ((128, 2.246, 1.324, 0.5, 14.6), (256, 2.855, 2.113, 2.0, 19.2),
         (512, 5.761, 3.105, 8.0, 34.4), (1024, 16.414, 4.008, 32, 89.1),
         (2048, 51.573, 9.989, 128, 296.1), (4096, 225.432, 20.176, 512, 1_100.1),
         (8192, 832.838, 40.106, 2_048, 4_300.1))
_RATIO = "its {what} at n = {n:,} over its {what} at n = {half:,}"
PUBLISHED = (
    *(F(f"cost/naive n={n} nn MB", f"naive, n = {n:,}: MB of the n×n scores", nn_mb)
      for n, _, _, nn_mb, _ in _COST),
    *(f for (half, t0, p0, _, m0), (n, t1, p1, _, m1) in zip(_COST, _COST[1:], strict=False)
      for f in (
          F(f"cost/naive n={n} time ratio", f"naive, n = {n:,}: time ÷ time at {half:,}",
            t1 / t0, _RATIO.format(what="ms in total", n=n, half=half)),
          F(f"cost/naive n={n} proj ratio", f"naive, n = {n:,}: projections' time ÷ theirs "
            f"at {half:,}", p1 / p0, _RATIO.format(what="ms in the projections", n=n,
                                                   half=half)),
          F(f"cost/naive n={n} peak ratio", f"naive, n = {n:,}: peak memory ÷ at {half:,}",
            m1 / m0, _RATIO.format(what="peak MB", n=n, half=half)))),
    F("cost/naive time exponent", "naive: fitted time exponent, last four sizes", 1.91),
    F("cost/naive memory exponent", "naive: fitted memory exponent, last four sizes", 1.87),
)


def read_chapter(rec: dict) -> Measured:
    """Ratios to the row above and exponents, never milliseconds (``PUBLISHED``)."""
    out: Measured = {}
    above: dict[str, dict] = {}
    for r in rec.get("records", []):
        prev = above.get(r["kind"])
        above[r["kind"]] = r
        if r.get("status") != "ok":
            continue
        base = f"cost/{r['kind']} n={r['n']}"
        out[f"{base} nn MB"] = r["nn_bytes"] / 2**20
        if prev is None or prev.get("status") != "ok" or prev["n"] * 2 != r["n"]:
            continue
        for what, key in (("time", "total_ms"), ("proj", "proj_ms"), ("peak", "peak_bytes")):
            if r.get(key) and prev.get(key):
                out[f"{base} {what} ratio"] = r[key] / prev[key]
    for kind, fits in rec.get("exponents", {}).items():
        for what in ("time", "memory"):
            if fits.get(what) is not None:
                out[f"cost/{kind} {what} exponent"] = fits[what]
    return out


# claim id -> part name ("" for a claim of one part) -> the chapter's figure for what that
# part's rule compares (keys of PUBLISHED only).
CLAIM_FIGURES = {
    "cost.quadratic": {"time": value("cost/naive time exponent"),
                       "memory": value("cost/naive memory exponent")},
}

CHAPTER = Chapter(
    budget=("one layer of width 512 with 8 heads, batch 1, fp32, on a laptop GPU with 8 GB, "
            "n up to 16,384"),
    figures=PUBLISHED, measured=read_chapter, claims=CLAIM_FIGURES)


EXPERIMENT = Experiment(
    name=NAME, profiles=PROFILES, plan=plan,
    analyse=analyse, table=table, figure=figure, claims=CLAIMS, needs_corpus=NEEDS_CORPUS,
    chapter=CHAPTER,
)
