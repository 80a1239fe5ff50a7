"""The cost experiment: a micro run through the registry, and both claims both ways: each
part held and not held, the timed exponents inconclusive within their benchmark spread."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnlab.experiments import cost
from attnlab.kit.claims import evaluate
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment


def _records(naive_mem: float, naive_time: float, proj: float, memeff_mem: float,
             memeff_top: str = "ok", spread: float = 0.05) -> dict:
    """Exponents as the sweep fits them; each time exponent's range ± ``spread`` (None:
    timed once, no range)."""
    rows = [{"kind": "naive", "n": 64, "status": "oom"},
            {"kind": "memeff", "n": 64, "status": memeff_top}]

    def span(e: float) -> list[float] | None:
        return None if spread is None else [e - spread, e + spread]

    return {"cost": {"records": rows, "exponents": {
        "naive": {"time": naive_time, "memory": naive_mem, "projections": proj,
                  "time_range": span(naive_time), "projections_range": span(proj)},
        "memeff": {"time": 1.9, "memory": memeff_mem, "projections": 1.0,
                   "time_range": span(1.9), "projections_range": span(1.0)}}}}


def _status(records: dict) -> list[str]:
    return [v["status"] for v in evaluate(records, cost.CLAIMS)]


def test_claims_both_ways() -> None:
    assert _status(_records(1.97, 1.8, 1.0, 0.98)) == ["held", "held"]
    assert _status(_records(1.1, 1.8, 1.0, 0.98))[0] == "not held"  # memory not quadratic
    assert _status(_records(1.97, 1.8, 1.9, 0.98))[0] == "not held"  # projections not linear
    assert _status(_records(1.97, 1.8, 1.0, 1.9))[1] == "not held"
    assert _status(_records(1.97, 1.8, 1.0, 0.98, memeff_top="oom"))[1] == "not held"
    assert all(not c.trained for c in cost.CLAIMS)  # one evaluation, no seeds
    unfitted = _records(1.97, 1.8, 1.0, 0.98)
    unfitted["cost"]["exponents"]["naive"]["memory"] = None
    assert _status(unfitted)[0] == "skipped"


def test_a_time_exponent_is_decided_only_beyond_its_timing_spread() -> None:
    """The time part is held or not held only when the whole range of slopes the rounds'
    spread allows lies on one side of 1.5; else inconclusive, saying why."""
    assert _status(_records(1.97, 1.8, 1.0, 0.98, spread=0.25))[0] == "held"  # 1.55 .. 2.05
    assert _status(_records(1.97, 1.1, 1.0, 0.98, spread=0.3))[0] == "not held"  # .8 .. 1.4
    (wide, _) = evaluate(_records(1.97, 1.8, 1.0, 0.98, spread=0.4), cost.CLAIMS)
    assert wide["status"] == "inconclusive"
    assert "the range 1.40 to 2.20 its timing spread allows straddles 1.5" in wide["why"]
    (once, _) = evaluate(_records(1.97, 1.8, 1.0, 0.98, spread=None), cost.CLAIMS)
    assert once["status"] == "inconclusive" and "no timing spread" in once["why"]
    # projections beyond theirs: 1.25 ± 0.1 straddles 1.3
    assert _status(_records(1.97, 1.8, 1.25, 0.98, spread=0.1))[0] == "inconclusive"


# Every part, each way its rule allows. Both claims are one evaluation (trained=False): no
# seeds, so no spread over seeds. The memory exponents and "completes" are held or not held by
# their margin's sign and cannot be inconclusive; the two time exponents are a benchmark's,
# inconclusive when the range of slopes their rounds' spread allows straddles the threshold,
# or when they have no range (timed fewer than MIN_REPEATS times).
QUAD, MEMEFF = "cost.quadratic", "cost.memeff_linear"


def _set(kind: str, what: str, value: float | str, span: list[float] | None | str = "keep"):
    def change(records: dict) -> None:
        if what == "completes":
            records["cost"]["records"][1]["status"] = value
            return
        fitted = records["cost"]["exponents"][kind]
        fitted[what] = value
        if span != "keep":
            fitted["time_range" if what == "time" else f"{what}_range"] = span
    return change


@pytest.mark.parametrize(("cid", "name", "change", "case", "why"), [
    (QUAD, "memory", _set("naive", "memory", 1.75), "held", "one evaluation"),
    (QUAD, "memory", _set("naive", "memory", 1.65), "not held", "one evaluation"),
    (QUAD, "time", _set("naive", "time", 1.6, [1.52, 1.7]), "held", "one evaluation"),
    (QUAD, "time", _set("naive", "time", 1.4, [1.3, 1.48]), "not held", "one evaluation"),
    (QUAD, "time", _set("naive", "time", 1.6, [1.45, 1.7]), "inconclusive",
     "the range 1.45 to 1.70 its timing spread allows straddles 1.5"),
    (QUAD, "time", _set("naive", "time", 1.6, [1.5, 1.7]), "inconclusive",
     "straddles 1.5"),  # a range that reaches the threshold is not beyond it
    (QUAD, "time", _set("naive", "time", 1.9, None), "inconclusive", "no timing spread"),
    (QUAD, "projections", _set("naive", "projections", 1.2, [1.1, 1.28]), "held",
     "one evaluation"),
    (QUAD, "projections", _set("naive", "projections", 1.4, [1.32, 1.5]), "not held",
     "one evaluation"),
    (QUAD, "projections", _set("naive", "projections", 1.2, [1.1, 1.35]), "inconclusive",
     "straddles 1.3"),
    (QUAD, "projections", _set("naive", "projections", 1.0, None), "inconclusive",
     "no timing spread"),
    (MEMEFF, "memory", _set("memeff", "memory", 1.15), "held", "one evaluation"),
    (MEMEFF, "memory", _set("memeff", "memory", 1.25), "not held", "one evaluation"),
    (MEMEFF, "completes", _set("memeff", "completes", "ok"), "held", "one evaluation"),
    (MEMEFF, "completes", _set("memeff", "completes", "oom"), "not held", "one evaluation"),
])
def test_each_part_is_decided_as_its_rule_says(cid, name, change, case, why) -> None:
    records = _records(1.97, 1.8, 1.0, 0.98)
    change(records)
    verdicts = {v["id"]: v for v in evaluate(records, cost.CLAIMS)}
    v = verdicts[cid]
    part = next(p for p in v["parts"] if p["name"] == name)
    assert part["status"] == case and v["status"] == case, (part, v["why"])
    assert why in part["why"] and len(part["margins"]) == 1
    assert all(p["status"] == "held" for p in v["parts"] if p["name"] != name)
    other = verdicts[MEMEFF if cid == QUAD else QUAD]
    assert other["status"] == "held", other["why"]


def test_micro_run_writes_table_and_figure(tmp_path: Path) -> None:
    env = run_experiment("cost", "micro", Runner(tmp_path / "runs"), tmp_path / "out")
    record = env["record"]
    assert {r["kind"] for r in record["records"]} == {"naive", "memeff"}
    assert all(r["status"] == "ok" for r in record["records"])
    assert "memory exp." in (tmp_path / "out" / "cost" / "table.md").read_text()
    assert (tmp_path / "out" / "cost" / "figure.png").stat().st_size > 1000
