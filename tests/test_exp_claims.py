"""The verdict rule (docs/experiments.md, "Claims and verdicts") on synthetic per-seed
margins: held, not held,
inconclusive, skipped and error, and how parts combine."""

from __future__ import annotations

import math

import pytest

from attnlab.kit.claims import (
    MIN_SEEDS,
    Margins,
    Part,
    Skip,
    claim,
    combine,
    decide,
    fmt_margin,
    mean_se,
    part_verdict,
    render,
)


def _claim(values, trained=True, *more):
    parts = [Part("x > 0", lambda r, v=v: Margins(list(v), {"x": sum(v) / len(v)}), "unit")
             for v in (values, *more)]
    return claim("t.c", "a claim", "t", *parts, trained=trained)


def test_mean_and_standard_error_by_hand():
    mean, se = mean_se([1.0, 2.0, 3.0])  # std 1, n 3
    assert mean == 2.0 and se == pytest.approx(1 / math.sqrt(3))
    assert math.isnan(mean_se([4.0])[1])


@pytest.mark.parametrize(("values", "status"), [
    ([0.10, 0.12, 0.11], "held"),  # mean 0.11, SE 0.006: far above zero
    ([-0.10, -0.12, -0.11], "not held"),
    ([0.10, -0.05, 0.02], "inconclusive"),  # mean 0.023, SE 0.044
    ([0.3, 0.0, 0.1], "inconclusive"),  # mean 0.133 < 2 × SE 0.088
    ([0.3, 0.2, 0.1, 0.25], "held"),  # mean 0.2125 > 2 × SE 0.0427
    ([0.5, 0.6], "inconclusive"),  # fewer than three seeds decides nothing
    ([0.0, 0.0, 0.0], "inconclusive"),  # exactly at the threshold
])
def test_verdict_rule(values, status):
    assert part_verdict(values, trained=True)[0] == status
    verdict = decide(_claim(values), {"t": {}})
    assert verdict["status"] == status and verdict["seeds"] == len(values)


def test_two_standard_errors_is_the_boundary():
    # mean m, SE s = 0.1 / √3 · 1 for values m ± 0.1·(−1, 0, 1)
    se = 0.1 / math.sqrt(3)
    just_in = [2.05 * se + d for d in (-0.1, 0.0, 0.1)]
    just_out = [1.95 * se + d for d in (-0.1, 0.0, 0.1)]
    assert part_verdict(just_in, True)[0] == "held"
    assert part_verdict(just_out, True)[0] == "inconclusive"
    assert part_verdict([-v for v in just_in], True)[0] == "not held"


def test_few_seeds_say_why():
    status, why = part_verdict([1.0, 1.0], True)
    assert status == "inconclusive" and f"at least {MIN_SEEDS}" in why


def test_untrained_claims_are_one_evaluation():
    assert decide(_claim([0.2], False), {"t": {}})["status"] == "held"
    assert decide(_claim([-0.2], False), {"t": {}})["status"] == "not held"
    assert "one evaluation" in decide(_claim([0.2], False), {"t": {}})["why"]


def test_a_raising_predicate_is_an_error():
    def broken(records):
        raise KeyError("rows")

    c = claim("t.broken", "broken", "t", Part("r", broken))
    verdict = decide(c, {"t": {}})
    assert verdict["status"] == "error" and "KeyError" in verdict["why"]


def test_non_finite_margins_are_an_error():
    assert decide(_claim([0.1, float("nan"), 0.2]), {"t": {}})["status"] == "error"


def test_skip_and_missing_records():
    def skip(records):
        raise Skip("transformers is not installed")

    c = claim("t.s", "skippable", "t", Part("a", lambda r: Margins([1.0])), Part("b", skip),
              trained=False)
    verdict = decide(c, {"t": {}})
    assert verdict["status"] == "skipped" and "transformers" in verdict["why"]
    assert decide(_claim([1.0, 1.0, 1.0]), {})["status"] == "skipped"  # no record of t


def test_parts_combine():
    held, no, unsure = [0.1, 0.11, 0.12], [-0.1, -0.11, -0.12], [0.1, -0.1, 0.05]
    assert decide(_claim(held, True, held), {"t": {}})["status"] == "held"
    assert decide(_claim(held, True, unsure), {"t": {}})["status"] == "inconclusive"
    assert decide(_claim(unsure, True, no), {"t": {}})["status"] == "not held"
    assert combine(["held", "error", "not held"]) == "error"


def test_rendering_shows_margin_noise_and_rule():
    verdict = decide(_claim([0.10, 0.12, 0.11]), {"t": {}})
    assert fmt_margin(verdict["parts"][0]) == "past its threshold by 0.1100 ± 0.0058"
    assert fmt_margin(verdict["parts"][0], "es") == "supera su umbral por 0.1100 ± 0.0058"
    text = render([verdict])
    assert "**HELD**" in text and "3 seeds" in text and "— x > 0" in text
    assert "x 0.11;" in text  # an undeclared number is shown under its key
