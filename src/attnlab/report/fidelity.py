"""The chapter beside every measurement: measured figures read from the records, compared.

For each experiment a reader of ``chapter.py``'s keys reads the measured figure
of the same quantity from the experiment's record (the mean over seeds), and
``compare`` pairs it with the chapter's: the difference and the relative
difference. ``fidelity`` counts how many measured figures lie within 2% and
5% of the chapter's; the report states that count for the full profile,
whose settings are the chapter's. At the quick profile the column is shown
for orientation only: its budgets are far smaller, so a difference there
does not say the chapter is wrong.

Nothing here decides a claim or changes a record: it reads finished records.
A record of another shape (a micro profile with fewer sizes, an older
record) gives fewer keys, never an error: a figure with no measured
counterpart is simply not compared.

Left out: the verification and tokenizer figures, which no experiment record
holds, and the chapter's qualitative statements (the claims decide those).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnlab.report.chapter import BY_KEY, ChapterFigure
from attnlab.report.words import budget as words_budget
from attnlab.report.words import t as say
from attnlab.report.words import translated

Measured = dict[str, float]  # chapter key -> measured figure (seed mean)
WITHIN = (0.02, 0.05)  # the fidelity summary's two bands


def _mean(values: Any) -> float:
    """The mean of a per-seed list (or the number itself)."""
    return float(np.mean(values)) if isinstance(values, list | tuple) else float(values)


def _ladder(rec: dict) -> Measured:
    out: Measured = {}
    rows = {r["row"]: r for r in rec.get("rows", [])}
    for n, r in rows.items():
        out[f"ladder/row {n}/held"] = _mean(r["held_ppl"])
        out[f"ladder/row {n}/train"] = _mean(r["train_ppl"])
    for n, above in ((6, 5), (9, 8)):
        if n in rows and above in rows:
            out[f"ladder/row {n}/params added"] = rows[n]["params"] - rows[above]["params"]
    return out


def _sqrt_dk(rec: dict) -> Measured:
    out: Measured = {f"sqrt_dk/var d={v['d']}": v["var"] for v in rec.get("variance", [])}
    out |= {f"sqrt_dk/eff unscaled d={r['d']}": r["eff_unscaled"] for r in rec.get("one_row", [])}
    for r in rec.get("frozen", []):
        out[f"sqrt_dk/frozen unscaled d={r['d']}"] = r["frozen_unscaled"]
        out[f"sqrt_dk/jacobian scaled d={r['d']}"] = r["jac_scaled"]
    for t in rec.get("training", []):
        if t["setting"] != "short":  # the chapter's widths 32, 256, 1,024 are the short setting's
            continue
        d, raw, scaled = t["d_k"], t["unscaled"], t["scaled"]
        out[f"sqrt_dk/gap d_k={d}"] = _mean(raw["held_ppl"]) - _mean(scaled["held_ppl"])
        out[f"sqrt_dk/score std init d_k={d} raw"] = _mean(raw["init"]["score_std"])
        out[f"sqrt_dk/score std after d_k={d} raw"] = _mean(raw["after"]["score_std"])
        out[f"sqrt_dk/frozen after d_k={d} raw"] = _mean(raw["after"]["frozen"])
        out[f"sqrt_dk/score std after d_k={d} scaled"] = _mean(scaled["after"]["score_std"])
    return out


def _norm(rec: dict) -> Measured:
    out: Measured = {}
    for kind, seeds in rec.get("grad_norms", {}).items():  # kind -> seed -> per-block norms
        first, last = _mean([s[0] for s in seeds]), _mean([s[-1] for s in seeds])
        out |= {f"norm/grad {kind} first": first, f"norm/grad {kind} last": last,
                f"norm/grad {kind} ratio": _mean([s[-1] / s[0] for s in seeds])}
    for cell, runs in rec.get("cells", {}).items():
        out[f"norm/{cell}"] = _mean([r["held_ppl"] for r in runs])
    return out


def _position(rec: dict) -> Measured:
    return {f"position/{r['scheme']}@{n}": _mean(v) for r in rec.get("rows", [])
            for n, v in r.get("ppl", {}).items()}


def _cost(rec: dict) -> Measured:
    """Ratios to the row above and exponents, never milliseconds (``chapter.COST``)."""
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


def _params(rec: dict) -> Measured:
    for m in rec.get("models", []):
        if m["name"] == "GPT-2 small":
            return {"params/gpt2 embedding": m["embedding"],
                    "params/gpt2 block": sum(m["per_block"][0].values()),
                    "params/gpt2 blocks": m["blocks"], "params/gpt2 final norm": m["final_norm"],
                    "params/gpt2 total": m["total"]}
    return {}


def _winograd(rec: dict) -> Measured:
    out: Measured = {f"winograd/{v}/{name}": _mean(m["forced"])
                     for v, variant in rec.get("variants", {}).items()
                     for name, m in variant["models"].items()}
    att = rec.get("attention", {})
    for b, block in enumerate(att.get("blocks", []), 1):
        for adj in ("tired", "wet"):
            if block and adj in block:
                words = [adj if t == "{adj}" else t for t in att["tokens"]]
                for w in set(words):  # a word's weight summed over its positions ("the": 3)
                    out[f"winograd/block {b} {adj}/{w}"] = float(
                        sum(x for t, x in zip(words, block[adj], strict=True) if t == w))
    return out


READERS: dict[str, Callable[[dict], Measured]] = {
    "ladder": _ladder, "sqrt_dk": _sqrt_dk, "norm": _norm, "position": _position,
    "cost": _cost, "params": _params, "winograd": _winograd,
}


@dataclass(frozen=True)
class Comparison:
    """A chapter figure beside the measured figure of the same quantity."""

    figure: ChapterFigure
    measured: float

    @property
    def difference(self) -> float:
        return self.measured - self.figure.value

    @property
    def relative(self) -> float:
        """(measured − chapter) / |chapter|."""
        return self.difference / abs(self.figure.value)


def measured(name: str, record: dict) -> Measured:
    """Every figure of ``chapter.py``'s keys that ``record`` (of experiment ``name``) holds."""
    reader = READERS.get(name)
    if reader is None or not record:
        return {}
    try:
        return reader(record)
    except (KeyError, TypeError, IndexError, ValueError, ZeroDivisionError):  # another shape
        return {}


def compare(name: str, record: dict) -> list[Comparison]:
    """The chapter's figures of experiment ``name`` that ``record`` measured, in chapter order."""
    got = measured(name, record)
    return [Comparison(f, float(got[f.key])) for f in BY_KEY.values()
            if f.experiment == name and f.key in got and np.isfinite(got[f.key])]


def fidelity(comparisons: list[Comparison]) -> dict[str, int]:
    """How many measured figures lie within 2% and within 5% of the chapter's, of how many."""
    out = {"compared": len(comparisons)}
    for band in WITHIN:
        out[f"within {band:.0%}"] = sum(abs(c.relative) <= band + 1e-12 for c in comparisons)
    return out


def _num(x: float) -> str:
    if abs(x) >= 1000 or (abs(x) >= 10 and x == int(x)):
        return f"{x:,.0f}"
    return f"{x:.4g}" if abs(x) < 10 else f"{x:.2f}"


def _signed(x: float) -> str:
    """A difference with its sign, as ``_num`` writes the number: ``+92.29``, ``-16,240``."""
    return ("+" if x >= 0 else "-") + _num(abs(x))


def table(comparisons: list[Comparison], profile: str | None, lang: str = "en") -> str:
    """Markdown: figure, measured, chapter (derived ones starred), difference; the notes.
    The figures' labels are the chapter's words in English; the rest is in ``lang``."""
    if not comparisons:
        return ""
    head = [say(f"beside.col.{k}", lang) for k in ("figure", "measured", "chapter", "difference")]
    rows = ["| " + " | ".join(head) + " |", "|---|---:|---:|---:|"]
    derived = []
    for c in comparisons:
        star = ""
        if c.figure.derived:
            derived.append(c.figure)
            star = f" (†{len(derived)})"  # a footnote mark, numbered in order
        label = translated(c.figure.label, lang, "cw.", 3)
        rows.append(f"| {label.replace('|', '/')} | {_num(c.measured)} | "
                    f"{_num(c.figure.value)}{star} | {_signed(c.difference)} "
                    f"({c.relative:+.1%}) |")
    budget = words_budget(comparisons[0].figure.experiment, lang) or \
        say("beside.its_settings", lang)
    lines = [say("beside.heading", lang, budget=budget), "", *rows, ""]
    lines += [say("beside.derived", lang, i=i, how=translated(f.derived, lang, "cw.", 3)) + "  "
              for i, f in enumerate(derived, 1)]
    if derived:
        lines += [""]
    if profile != "full":
        lines.append(budget_note(profile, lang))
    else:
        f = fidelity(comparisons)
        lines.append(say("beside.fidelity", lang, within2=f["within 2%"], compared=f["compared"],
                       within5=f["within 5%"]))
    return "\n".join(lines).rstrip() + "\n"


def budget_note(profile: str | None, lang: str = "en") -> str:
    """The plain note beside the chapter's column at a profile other than full."""
    return say("beside.budget_note", lang, profile=profile)


__all__ = ["Comparison", "READERS", "WITHIN", "budget_note", "compare", "fidelity", "measured",
           "table"]
