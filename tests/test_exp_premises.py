"""Premises: a claim that cannot be tested at all is inconclusive with its reason in words, and
more seeds are never spent on it; nor on a claim whose every seed gives the same margin."""

from __future__ import annotations

import dataclasses

import pytest
from claim_cases import margins

from attnlab.experiments import recurrence
from attnlab.kit.claims import Margins, Part, Premise, claim, decide, evaluate
from attnlab.kit.extra_seeds import cannot_move, held_back, skipped_note, triggers

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
    return {v["id"]: v for v in evaluate(record, [c for c in recurrence.CLAIMS
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


# -- a premise is per seed: four seeds with real spread, one or two of them not learning ----

U = 0.05  # an accuracy or a weight near its threshold


def _attention(first: list[float], top: list[float]) -> dict:
    """Attention's accuracy per seed at d = 8 (``first``) and 24, the largest trained d
    (``top``); chance at 48. Its premise: first ≥ 0.6; its part: 0.1 − (first − top)."""
    acc = [[a, b, 0.5] for a, b in zip(first, top, strict=True)]
    return {"recurrence": {"agreement": {"distances": [8, 24, 48], "trained_d": [8, 24],
                                         "attention": {"acc": acc}}}}


FREE = "recurrence.attention_distance_free"


def _free(record: dict, premised: bool = True) -> dict:
    c = next(c for c in recurrence.CLAIMS if c.id == FREE)
    return decide(c if premised else dataclasses.replace(c, premises=()), record)


def test_a_seed_that_never_learned_is_no_evidence_that_the_distance_does_not_matter():
    # seeds 0-2 learned and lose 0.17, 0.15, 0.13 by d = 24 (margins −0.07, −0.05, −0.03:
    # not held); seed 3 stayed at chance (0.52 at d = 8, premise margin −0.08), so it "loses"
    # nothing (margin +0.09), the case at full
    lost = [0.1 - m for m in margins("not held", U)]
    record = _attention([0.98, 0.98, 0.98, 0.52], [0.98 - x for x in lost] + [0.51])
    v = _free(record)
    assert v["status"] == "not held" and v["seeds"] == 3
    assert v["premise"]["held"] is True and v["premise"]["seeds_not_learning"] == [3]
    assert v["premise"]["learning_seeds"] == 3 and v["premise"]["seeds"] == 4
    assert v["parts"][0]["margins"] == pytest.approx(margins("not held", U))
    assert v["premise"]["checks"][0]["margins"] == pytest.approx([0.38] * 3 + [-0.08])
    # counted, seed 3 would have turned "not held" into "inconclusive"
    counted = _free(record, premised=False)
    assert counted["status"] == "inconclusive" and counted["seeds"] == 4
    assert counted["parts"][0]["margins"][3] == pytest.approx(0.09)


def test_a_seed_that_did_not_learn_cannot_pull_a_held_claim_down_either():
    # agreement's subject head: seeds 0-2 learned (top-1 0.2 + m above the baseline) and
    # have a subject head (0.5 + m); seed 3 did not learn (top-1 0.05 above it) and has
    # none (0.2 on the subject: margin −0.3)
    from attnlab.experiments import agreement

    base, held = 4 / 7, margins("held", U)
    top1 = [base + 0.2 + m for m in held] + [base + 0.05]
    subject = [0.5 + m for m in held] + [0.2]
    heads = [[{"block": 1, "head": 1, "subject": s, "stems": 0.1,
               "separators": (0.9 - s) / 2, "other pronouns": (0.9 - s) / 2}] for s in subject]
    record = {"agreement": {"baseline": base, "top1": top1, "heads": heads}}
    c = next(c for c in agreement.CLAIMS if c.id == "agreement.subject_head")
    v = decide(c, record)
    assert v["status"] == "held" and v["premise"]["seeds_not_learning"] == [3]
    assert v["parts"][0]["margins"] == pytest.approx(held)
    assert v["premise"]["not_counted"] == (
        "not counted (did not learn: held-out top-1 ≥ majority-form baseline + 0.2): seed 3; "
        "decided on the other 3 of 4 seeds")
    # counted, seed 3 would have left it inconclusive
    assert decide(dataclasses.replace(c, premises=()), record)["status"] == "inconclusive"


def test_two_seeds_of_four_not_learning_leave_the_claim_inconclusive_naming_them():
    lost = [0.1 - m for m in margins("held", U)]  # held on the seeds that learned
    record = _attention([0.98, 0.55, 0.98, 0.5], [0.98 - lost[0], 0.55, 0.98 - lost[2], 0.5])
    v = _free(record)
    assert v["status"] == "inconclusive" and v["premise"]["held"] is False
    assert v["premise"]["seeds_not_learning"] == [1, 3]
    assert v["why"] == ("2 of 4 seeds learned (seeds 1 and 3 did not: attention's accuracy "
                        "at the smallest d ≥ chance + 0.1 = 0.6); a seed that did not learn "
                        "is no evidence, and a verdict needs at least 3 learning seeds")
    assert v["premise"]["why_es"].startswith("2 de 4 semillas aprendieron (semillas 1 y 3 "
                                             "no: acierto de la atención a la d más corta")
    assert "cannot be tested" in cannot_move(v)  # no extra round is spent on it
    assert _free(record, premised=False)["status"] == "held"  # counted, they would hold it


def test_the_report_names_the_seeds_that_did_not_learn_beside_the_claim():
    from attnlab.kit.claims import render
    from attnlab.report.overview import _premise, claim_table, claims_list

    lost = [0.1 - m for m in margins("held", U)]
    held = _free(_attention([0.98, 0.98, 0.98, 0.52], [0.98 - x for x in lost] + [0.51]))
    assert held["status"] == "held"
    en, es = "seed 3; decided on the other 3 of 4", "semilla 3; decidida con las otras 3 de 4"
    assert en in claims_list([held], "en") and es in claims_list([held], "es")
    assert en in render([held]) and es in render([held], "es")
    assert en in _premise(held, "en") and es in _premise(held, "es")
    assert "3 of 4 seeds" in claim_table([held], {}, "en")
    assert "3 de 4 semillas" in claim_table([held], {}, "es")
    two = _free(_attention([0.98, 0.55, 0.98, 0.5], [0.98 - lost[0], 0.55, 0.98 - lost[2],
                                                     0.5]))
    assert "(seeds 1 and 3 did not:" in claims_list([two], "en")
    assert "(semillas 1 y 3 no:" in claims_list([two], "es")
    assert "could not be tested: 2 of 4 seeds learned (seeds 1 and 3" in _premise(two, "en")


def test_a_seed_that_never_held_at_its_edge_is_no_evidence_that_attention_stops_there():
    # attention with RoPE past its training: seeds 0-2 held the agreement at d = 32 (0.95)
    # and are near chance beyond it (greatest 0.7 − m: held, "it holds at no distance
    # beyond"); seed 3 never learned (0.5 everywhere), so it "holds nowhere beyond" for free
    # (margin +0.2) and is left out by the premise, which names it; holding is 0.7
    stops = margins("held", U)
    acc = [[1.0, 0.95, 0.7 - m, 0.5] for m in stops] + [[0.5, 0.5, 0.5, 0.5]]
    record = {"recurrence": {"agreement": {"distances": [8, 32, 40, 48], "trained_d": [8, 32],
                                           "attention": {"acc": acc}}}}
    c = next(c for c in recurrence.CLAIMS if c.id == "recurrence.attention_stops_at_training")
    v = decide(c, record)
    assert v["status"] == "held" and v["seeds"] == 3
    assert v["premise"]["seeds_not_learning"] == [3]
    assert v["parts"][0]["margins"] == pytest.approx(stops)
    assert v["premise"]["checks"][0]["margins"] == pytest.approx([0.25] * 3 + [-0.2])
    assert "seed 3" in v["premise"]["not_counted"]
    # with two seeds of four at chance, it cannot be tested, and says which
    acc[1] = [0.5] * 4
    v = decide(c, record)
    assert v["status"] == "inconclusive" and v["premise"]["seeds_not_learning"] == [1, 3]
    assert v["why"].startswith("2 of 4 seeds learned (seeds 1 and 3 did not: attention's "
                               "accuracy at the largest trained d ≥ 0.7)")


def test_a_seed_exactly_at_the_threshold_of_a_premise_said_with_ge_learned():
    """A premise whose words say "≥" holds at a margin of exactly 0 (an accuracy that is a
    count over held-out items can land on 0.70); one that says ">" does not."""
    edge = _claim([1.0, 0.0, 0.5])  # seed 1 exactly at the threshold
    assert decide(edge, {"t": {}})["premise"]["seeds_not_learning"] == []
    strict = dataclasses.replace(
        edge, premises=(dataclasses.replace(edge.premises[0], strict=True),))
    assert decide(strict, {"t": {}})["premise"]["seeds_not_learning"] == [1]


def test_every_premise_is_strict_exactly_when_its_words_say_greater_than():
    from attnlab.kit.registry import load, names

    seen = 0
    for name in names():
        for c in load(name).claims:
            for premise in c.premises:
                says_ge = "≥" in premise.rule and "≥" in (premise.rule_es or "≥")
                says_gt = ">" in premise.rule and ">" in (premise.rule_es or ">")
                assert says_ge != says_gt, (c.id, premise.rule)
                assert premise.strict == says_gt, (c.id, premise.rule)
                seen += 1
    assert seen >= 10
