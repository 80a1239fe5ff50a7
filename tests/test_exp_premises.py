"""Premises: a claim that cannot be tested at all is inconclusive with its reason in words, and
more seeds are never spent on it; nor on a claim whose every seed gives the same margin."""

from __future__ import annotations

from attnlab.experiments.recurrence import claims as recurrence_claims
from attnlab.lab.claims import Margins, Part, Premise, claim, decide, evaluate
from attnlab.lab.seeds import cannot_move, held_back, skipped_note, triggers

SURE = [1.0, 1.1, 0.9]  # margins that clear two standard errors
COIN = [1.0, -1.0, 0.5]  # ... that do not


def _fixed(values):
    return lambda records: Margins(list(values), {"acc": 0.498, "d": 8})


def _claim(premise_values, part_values=SURE):
    premise = Premise("learned at the smallest d", _fixed(premise_values),
                      "at chance already at d = {d} ({acc:.2f}): nothing to fall from",
                      "ya en el azar a d = {d} ({acc:.2f}): nada desde donde caer")
    return claim("t.c", "falls", "t", Part("falls by 0.1", _fixed(part_values), "accuracy"),
                 premises=[premise])


def test_a_failed_premise_makes_the_claim_inconclusive_with_its_reason():
    v = decide(_claim([-x for x in SURE]), {"t": {}})
    assert v["status"] == "inconclusive"
    assert v["premise"]["held"] is False
    assert v["why"] == "at chance already at d = 8 (0.50): nothing to fall from"
    assert v["premise"]["why_es"] == "ya en el azar a d = 8 (0.50): nada desde donde caer"
    assert v["parts"][0]["status"] == "held"  # the parts are still measured and shown


def test_a_held_premise_leaves_the_verdict_alone_and_one_seed_short_of_it_is_named():
    held = decide(_claim(SURE, [-x for x in SURE]), {"t": {}})
    assert held["status"] == "not held" and held["premise"]["held"] is True
    assert held["premise"]["seeds_not_learning"] == []
    short = decide(_claim(COIN), {"t": {}})  # seed 1 did not learn: two seeds are left
    assert short["status"] == "inconclusive" and short["premise"]["held"] is False
    assert short["premise"]["seeds_not_learning"] == [1]
    assert short["why"].startswith("2 of 3 seeds learned (seed 1 did not: learned at the "
                                   "smallest d)")
    assert short["parts"][0]["margins"] == [1.0, 0.9]  # seed 1's 1.1 is no evidence
    assert "cannot be tested" in cannot_move(short)


def test_with_fewer_seeds_than_a_verdict_needs_the_premise_is_open():
    v = decide(_claim([1.0, 1.1], [1.0, 1.1]), {"t": {}})
    assert v["premise"]["held"] is None and v["premise"]["seeds_not_learning"] == []
    assert v["status"] == "inconclusive" and v["why"].startswith("2 seed(s)")
    assert cannot_move(v) == ""


def test_no_extra_round_for_a_failed_premise_or_a_zero_spread():
    failed = {**decide(_claim([-x for x in SURE]), {"t": {}}), "experiment": "t"}
    flat = {**decide(claim("t.flat", "same", "t", Part("r", _fixed([0.0] * 3))), {"t": {}}),
            "experiment": "t"}
    coin = {**decide(claim("t.coin", "coin", "t", Part("r", _fixed(COIN))), {"t": {}}),
            "experiment": "t"}
    assert flat["status"] == "inconclusive" and "cannot change" in cannot_move(flat)
    assert triggers([failed, flat], ["t"]) == {}
    assert triggers([failed, flat, coin], ["t"]) == {"t": ["t.coin"]}
    unmoved = held_back([failed, flat, coin], "t")
    assert [u.split(":")[0] for u in unmoved] == ["t.c", "t.flat"]
    note = skipped_note(3, 2, unmoved)
    assert note["ran"] is False and "cannot change" in note["text"]


def _agreement(rnn, lstm, attention):
    jitter = (0.0, 0.01, -0.01)
    agreement = {"distances": [8, 24, 48], "trained_d": [8, 48]}
    for m, a in (("rnn", rnn), ("lstm", lstm), ("attention", attention)):
        agreement[m] = {"acc": [[x + j for x in a] for j in jitter]}
    return {"recurrence": {"agreement": agreement}}


def _verdicts(record):
    wanted = {"recurrence.rnn_falls_to_chance", "recurrence.lstm_holds_longer",
              "recurrence.attention_distance_free"}
    return {v["id"]: v for v in evaluate(record, [c for c in recurrence_claims.CLAIMS
                                                  if c.id in wanted])}


def test_an_rnn_at_chance_everywhere_has_nothing_to_fall_from():
    v = _verdicts(_agreement([0.5, 0.5, 0.5], [0.52, 0.5, 0.5], [1, 1, 1]))
    falls = v["recurrence.rnn_falls_to_chance"]
    assert falls["status"] == "inconclusive"  # without the premise: not held
    assert falls["why"].startswith("the RNN has not learned the agreement even at the "
                                   "smallest distance, d = 8")
    assert "nothing to fall from" in falls["why"]
    holds = v["recurrence.lstm_holds_longer"]
    assert holds["status"] == "inconclusive" and holds["premise"]["held"] is False
    assert v["recurrence.attention_distance_free"]["status"] == "held"


def test_an_attention_at_chance_cannot_show_that_distance_does_not_matter():
    v = _verdicts(_agreement([0.9, 0.7, 0.52], [0.95, 0.9, 0.8], [0.5, 0.5, 0.5]))
    free = v["recurrence.attention_distance_free"]
    assert free["status"] == "inconclusive" and "never learned" in free["why"]
    assert v["recurrence.rnn_falls_to_chance"]["status"] == "held"
