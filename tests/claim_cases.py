"""Shared by the claim tests: margins with real spread over three seeds for each verdict, and
the checks on a verdict and on a real (micro) record. Not a test module (no ``test_`` prefix).

Three seeds whose margins are ``u ×`` one of these, so each verdict is what the verdict rule
(attnlab.kit.claims) makes of a spread, never of three equal values (zero spread, where any
positive mean is held):

- ``held``: mean u, standard error 0.23 u (std 0.4 u / √3): above zero by 4.3 errors;
- ``not held``: the same below zero;
- ``inconclusive``: mean 0.2 u, *above* zero, standard error 0.61 u: within two errors, so a
  rule that took a positive mean for held would say held here.
"""

from __future__ import annotations

import math
from typing import Any

CASES: dict[str, tuple[float, float, float]] = {
    "held": (0.6, 1.0, 1.4),
    "not held": (-1.4, -1.0, -0.6),
    "inconclusive": (-0.9, 0.3, 1.2),
}


def margins(case: str, unit: float) -> list[float]:
    """The three seeds' margins of ``case`` in the part's own unit."""
    return [unit * x for x in CASES[case]]


def by_id(verdicts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["id"]: v for v in verdicts}


def part(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    """The verdict's part ``name`` ("" for a claim of one part)."""
    return next(p for p in verdict["parts"] if p["name"] == name)


def check_case(verdict: dict[str, Any], name: str, case: str, expected: list[float]) -> None:
    """The part measured exactly the margins built for it, and the claim is ``case``; an
    inconclusive case had a positive mean (the spread, not the sign, left it open)."""
    got = part(verdict, name)
    assert got["margins"] == _approx(expected), (verdict["id"], name, got["margins"])
    assert got["status"] == case and verdict["status"] == case, (verdict["id"], name,
                                                                 verdict["why"])
    if case == "inconclusive":
        assert got["mean"] > 0 and "within 2 standard errors" in got["why"]


def check_part(decide: Any, knobs: dict[tuple[str, str], tuple], cid: str, name: str,
               case: str) -> dict[str, dict[str, Any]]:
    """Part ``name`` of claim ``cid`` set to ``case`` through its knob (``knobs[(cid, name)]``:
    the record builder's keyword and the part's unit first) on the record ``decide(**{knob:
    margins})`` decides: it measured exactly those margins and is ``case``, and every other
    part and claim stays held. The verdicts, by claim id."""
    knob, unit = knobs[(cid, name)][:2]
    wanted = margins(case, unit)
    verdicts = by_id(decide(**{knob: wanted}))
    check_case(verdicts[cid], name, case, wanted)
    assert all(p["status"] == "held" for p in verdicts[cid]["parts"] if p["name"] != name)
    assert {c for c, v in verdicts.items() if v["status"] != "held"} - {cid} == set()
    return verdicts


def check_real_record(verdicts: list[dict[str, Any]], seeds: int) -> None:
    """Every predicate ran on a real record: no claim is an error or skipped, and every part
    and premise measured one finite margin per seed (one in all where the claim is decided
    on one evaluation or over a benchmark's rounds); a part of a claim with premises, one
    per seed that learned (every seed where none did)."""
    for v in verdicts:
        assert v["status"] not in ("error", "skipped"), (v["id"], v["why"])
        premise = v.get("premise") or {}
        learning = premise.get("learning_seeds") or seeds
        for p in [*v["parts"], *premise.get("checks", [])]:
            values = p["margins"]
            assert all(math.isfinite(x) for x in values), (v["id"], p)
            if v["trained"] and v.get("over", "seeds") == "seeds":
                n = learning if p in v["parts"] else seeds
                assert len(values) == n, (v["id"], p.get("name"), values)


def _approx(values: list[float]) -> Any:
    import pytest

    return pytest.approx(values, abs=1e-9)
