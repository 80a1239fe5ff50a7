"""The cost experiment: a micro run through the registry, and both claims both ways."""

from __future__ import annotations

from pathlib import Path

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


def test_micro_run_writes_table_and_figure(tmp_path: Path) -> None:
    env = run_experiment("cost", "micro", Runner(tmp_path / "runs"), tmp_path / "out")
    record = env["record"]
    assert {r["kind"] for r in record["records"]} == {"naive", "memeff"}
    assert all(r["status"] == "ok" for r in record["records"])
    assert "memory exp." in (tmp_path / "out" / "cost" / "table.md").read_text()
    assert (tmp_path / "out" / "cost" / "figure.png").stat().st_size > 1000
