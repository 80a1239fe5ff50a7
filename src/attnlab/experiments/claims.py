"""The textbook's claims (SPEC §3.8), each a predicate over result records.

A claim is written once, next to the experiment whose numbers decide it, as a
``Claim`` in that module's ``CLAIMS`` list. ``evaluate`` gathers them all and
marks each *held*, *not held* or *skipped* (a record it needs is missing),
always with the numbers that decided it. Nothing here is hard-coded: change
the results and the verdicts change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Records = dict[str, dict]  # experiment name -> its result record


@dataclass(frozen=True)
class Claim:
    id: str  # short stable name, e.g. "ladder.mean_worse_than_nothing"
    text: str  # the claim in the textbook's words
    needs: tuple[str, ...]  # experiment names whose records decide it
    decide: Callable[[Records], tuple[bool, dict[str, Any]]]  # -> (held, deciding numbers)
    rule: str = ""  # the predicate in words, with its thresholds


def all_claims() -> list[Claim]:
    """Every claim of every registered experiment, in registry order."""
    from attnlab.experiments.registry import EXPERIMENTS, load

    claims: list[Claim] = []
    for name in EXPERIMENTS:
        claims.extend(getattr(load(name), "CLAIMS", []))
    return claims


def evaluate(records: Records, claims: list[Claim] | None = None) -> list[dict[str, Any]]:
    """Verdicts: one dict per claim with id, text, rule, status and evidence."""
    out = []
    for claim in claims if claims is not None else all_claims():
        missing = [n for n in claim.needs if n not in records]
        if missing:
            out.append({"id": claim.id, "text": claim.text, "rule": claim.rule,
                        "status": "skipped", "evidence": {"missing": missing}})
            continue
        held, evidence = claim.decide(records)
        out.append({"id": claim.id, "text": claim.text, "rule": claim.rule,
                    "status": "held" if held else "not held", "evidence": evidence})
    return out


def render(verdicts: list[dict[str, Any]]) -> str:
    """Markdown list of verdicts with their deciding numbers."""
    lines = []
    for v in verdicts:
        mark = {"held": "HELD", "not held": "NOT HELD", "skipped": "SKIPPED"}[v["status"]]
        ev = ", ".join(f"{k}={_fmt(x)}" for k, x in v["evidence"].items())
        lines.append(f"- **{mark}** — {v['text']}  \n  rule: {v['rule']}; numbers: {ev}")
    return "\n".join(lines) + "\n"


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)
