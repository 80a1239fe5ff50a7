"""Why attention replaced recurrence: the counted steps, the reach on a hand-made recurrence,
matched parameter counts, a micro run through the registry, and every part of every claim held,
not held and inconclusive on seeds with real spread, the premises failing and the distances
each claim reads."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable

import pytest
import torch
from claim_cases import CASES, by_id, check_case, check_real_record, margins, part

from attnlab.experiments import recurrence
from attnlab.experiments.recurrence import measure
from attnlab.experiments.recurrence.claims import CLAIMS, geometric_fit
from attnlab.kit.claims import evaluate
from attnlab.nn.model import LanguageModel
from attnlab.nn.model_config import ModelConfig
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment

SMALL = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_layer=1, n_head=2, mlp=False)


@pytest.mark.parametrize("mixer", ["rnn", "lstm"])
def test_a_recurrence_adds_a_fixed_number_of_steps_per_token(mixer: str) -> None:
    cfg = SMALL.replace(mixer=mixer, position="none")
    a, b, c = (measure.dependent_steps(cfg, t) for t in (8, 16, 32))
    assert b - a == (c - b) / 2 > 0  # linear in T: the same steps for every token added


def test_attentions_steps_do_not_depend_on_t() -> None:
    steps = {measure.dependent_steps(SMALL, t) for t in (8, 16, 64)}
    assert len(steps) == 1


def test_reach_of_a_linear_recurrence_is_its_weight_to_the_power_k() -> None:
    # An RNN whose state is h_t = tanh(0.5·h_{t-1} + x_t), read out by a linear layer: at
    # init-free weights chosen by hand, ‖∂ℓ/∂x_{T−k}‖ / ‖∂ℓ/∂x_{T−1}‖ = Π tanh' · 0.5^(k−1).
    cfg = ModelConfig(vocab_size=4, n_ctx=6, d_model=1, mixer="rnn", position="none",
                      mlp=False, norm="none", residual=False)
    model = LanguageModel(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.tok.weight.fill_(1e-3)  # tiny inputs: tanh' ≈ 1
        mixer = model.blocks[0].mixer
        mixer.ih.weight.fill_(1.0)
        mixer.hh.weight.fill_(0.5)
        model.head.weight.copy_(torch.arange(4.0)[:, None])
    reach = measure.gradient_reach(model, torch.randint(0, 4, (3, 7)))
    ratios = [r / reach[0] for r in reach]
    assert ratios == pytest.approx([0.5**k for k in range(len(reach))], rel=1e-4)
    assert geometric_fit(reach)["rate"] == pytest.approx(0.5, rel=1e-4)


def test_agreement_models_have_matched_parameter_counts() -> None:
    s = recurrence.PROFILES["quick"]
    size = recurrence.agreement_data(recurrence.PROFILES["micro"]).vocab.size
    counts = {m: LanguageModel(recurrence.agreement_config(s, m, size)).num_parameters()
              for m in recurrence.AGREEMENT_MODELS}
    assert max(counts.values()) / min(counts.values()) < 1.05
    # the ALiBi attention is RoPE's model with only its position scheme changed
    rope, alibi = (recurrence.agreement_config(s, m, size) for m in ("attention", "alibi"))
    assert (rope.position, alibi.position) == ("rope", "alibi")
    assert alibi.replace(position="rope") == rope and counts["alibi"] == counts["attention"]


def test_micro_run_through_the_registry(tmp_path, shakespeare_head, caplog) -> None:
    runner = Runner(tmp_path / "w", corpus=str(shakespeare_head))
    with caplog.at_level(logging.INFO, logger="attnlab"):
        env = run_experiment("recurrence", "micro", runner, tmp_path / "out", seeds=3)
    # what the analysis says on the terminal: each model named, each seed's factor rounded
    said = [r.getMessage() for r in caplog.records if "gradient reach" in r.getMessage()]
    assert [m.split(",")[0] for m in said] == ["recurrence: Elman RNN (tanh)",
                                              "recurrence: LSTM",
                                              "recurrence: attention (ladder row 9)"]
    assert all(len(m.split(": ")[-1].split(", ")) == 3 and not re.search(r"\d{4}", m)
               for m in said), said
    # ... and of each agreement model, its accuracy per seed, the untrained distances apart
    said = [r.getMessage() for r in caplog.records if "agreement accuracy" in r.getMessage()]
    assert [m.split(",")[0] for m in said] == ["recurrence: RNN", "recurrence: LSTM",
                                              "recurrence: attention (RoPE)",
                                              "recurrence: attention (ALiBi)"]
    assert all("per seed at d = 8, 12 | beyond the training, 16: " in m and
               m.count(";") == 2 and not re.search(r"\d{4}", m) for m in said), said
    rec = env["record"]
    assert len(rec["reach"]["rnn"]["trained"]) == 3
    assert len(rec["reach"]["lstm"]["init"][0]) == rec["reach"]["window"] - 1
    assert len(rec["agreement"]["attention"]["acc"][0]) == len(rec["agreement"]["distances"])
    assert len(rec["agreement"]["alibi"]["acc"]) == 3  # planned and measured beside RoPE's
    assert rec["timing"]["gpu"] is None or rec["timing"]["gpu"]["T"] == rec["timing"]["T"]
    folder = tmp_path / "out" / "recurrence"
    assert "not measured" in (folder / "table.md").read_text() or rec["timing"]["gpu"]
    assert (folder / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # micro trains on d up to 12 and tests 16 too: the table marks it and says per seed
    # where each recurrence first falls below the bar
    assert rec["agreement"]["trained_d"] == [8, 12]
    table = (folder / "table.md").read_text()
    assert "| d = 16 (beyond) |" in table and "first d below 0.7" in table
    assert table.count("| RNN | ") >= 3 + 1  # three seeds in the drop table, one above
    verdicts = by_id(evaluate({"recurrence": rec}, CLAIMS))
    check_real_record(list(verdicts.values()), seeds=3)
    # counted, not trained: attention's steps do not grow with T at any T (the recurrences'
    # exponent nears 1 only over quick's longer T: at micro's T = 8, 16 a fixed overhead
    # keeps it below 0.9, and that part is not held)
    assert part(verdicts["recurrence.sequential_steps"], "attention")["status"] == "held"


# -- claims on synthetic records with real spread (claim_cases) -----------------------

U_RATE, U_ACC, U_EXP, U_TIME = 0.05, 0.02, 0.05, 0.1  # each margin's scale
W = 64  # the reach window: norms for k = 1 … 63
DISTANCES, TRAINED = [8, 16, 24, 32, 40, 48], [8, 32]  # 40 and 48 lie beyond the trained range
TOP = 3  # the index of the largest trained distance, 32
HOLDS_WORDS = {  # held distance in the trained range per seed (RNN, LSTM) -> LSTM's − RNN's
    "held": ((8, 8, 8), (16, 16, 32)),  # 8, 8, 24: mean 13, SE 5
    "not held": ((24, 24, 16), (8, 8, 8)),  # −16, −16, −8
    "inconclusive": ((24, 8, 16), (8, 16, 32)),  # −16, 8, 16: mean 3 > 0, SE 10
}


def _decay(rate: float, power: float = 0.0) -> list[float]:
    """‖g_k‖ = rate^k · k^−power for k = 1 … W − 1."""
    return [rate**k * k**-power for k in range(1, W)]


def _shape(rate: float, margin: float) -> list[float]:
    """A reach whose R²(geometric) − R²(power law) is ``margin``: a geometric decay with a
    power law mixed in, its power found by bisection (0: purely geometric)."""
    def gap(power: float) -> float:
        fit = geometric_fit(_decay(rate, power))
        return fit["r2_geometric"] - fit["r2_power"]

    lo, hi = 0.0, 60.0  # the gap falls as the power law takes over
    assert gap(lo) > margin > gap(hi)
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) > margin else (lo, mid)
    return _decay(rate, lo)


def _held(d: int, high: float = 0.9, low: float = 0.6) -> list[float]:
    """Accuracies at the trained distances (8 … 32) that hold the agreement (≥ 0.7) up to
    ``d`` and dip below it at the next distance only (so that a model may hold up to 8 and
    still hold at 32, the edge its claims beyond the training need)."""
    trained = DISTANCES[: TOP + 1]
    dip = next((x for x in trained if x > d), None)
    return [low if x == dip else high for x in trained]


def _record(**set_: list[float] | str) -> dict:
    """Three seeds (and three benchmark rounds) whose margins are each part's ``held``
    unless ``set_`` gives them, turned into numbers by hand from each rule."""
    def m(knob: str, unit: float, held: list[float] | None = None) -> list[float]:
        return set_.get(knob, held or margins("held", unit))  # type: ignore[return-value]

    rnn_rate = [0.9 - x for x in m("rate", U_RATE)]  # r ≤ 0.9
    lstm_rate = [r + x for r, x in zip(rnn_rate, m("slower", U_RATE), strict=True)]
    shape = set_.get("shape") or [None] * 3  # None: purely geometric
    att_rate = [math.exp((x - 1) * math.log(10) / (W - 2)) for x in m("flat", U_RATE)]
    reach = {"window": W,
             "rnn": {"trained": [_decay(r) if x is None else _shape(r, x)
                                 for r, x in zip(rnn_rate, shape, strict=True)]},
             "lstm": {"trained": [_decay(r) for r in lstm_rate]},
             "attention": {"trained": [_decay(r) for r in att_rate]}}
    # the RNN: at the smallest d a0, at the largest a_last; "falls": a0 − a_last − 0.1,
    # "to chance": 0.6 − a_last, its premise a0 ≥ 0.6. Each knob keeps the other part held
    # and the premise clear of its bar.
    if "falls" in set_:
        last = [0.55 + 0.01 * i for i in range(3)]
        first = [a + 0.1 + x for a, x in zip(last, m("falls", U_ACC), strict=True)]
    else:
        last = [0.6 - x for x in m("chance", U_ACC, [0.15, 0.14, 0.16])]
        first = [0.9 + 0.01 * i for i in range(3)]
    # every model at 40 and 48, beyond the training: the RNN at chance (no claim reads it);
    # the LSTM and the ALiBi attention hold (their least accuracy there 0.7 + x), attention
    # with RoPE does not (its greatest 0.7 − x)
    rnn_to, lstm_to = HOLDS_WORDS[set_.get("holds", "held")]  # type: ignore[index]
    rnn = [[f, *_held(d)[1:TOP], a, 0.5, 0.5]
           for f, a, d in zip(first, last, rnn_to, strict=True)]
    lstm = [[0.95, *_held(d)[1:], 0.7 + x, 0.95]
            for d, x in zip(lstm_to, m("lstm beyond", U_ACC), strict=True)]
    # attention: 0.1 − (a0 − a at the largest trained d, 32)
    attention = [[0.98, 0.95, 0.95, 0.88 + x, 0.7 - y, 0.5]
                 for x, y in zip(m("free", U_ACC), m("stops", U_ACC), strict=True)]
    alibi = [[0.98, 0.95, 0.95, 0.95, 0.95, 0.7 + x] for x in m("alibi", U_ACC)]
    agreement = {"distances": DISTANCES, "trained_d": TRAINED, "rnn": {"acc": rnn},
                 "lstm": {"acc": lstm}, "attention": {"acc": attention},
                 "alibi": {"acc": alibi}}
    T = [32, 64, 128, 256, 512, 1024]
    (grows,), (flat,) = m("grows", U_EXP, [0.1]), m("constant", U_EXP, [0.02])
    steps = {"T": T, "rnn": [3 * t ** (0.9 + grows) for t in T],
             "lstm": [6 * t ** (0.9 + grows + 0.05) for t in T],
             "attention": [33 * t ** (0.05 - flat) for t in T]}
    attention_s = [1e-3 * (1 + 0.1 * i) for i in range(len(T))]  # per T, one round
    lstm_s = [[a * math.exp(x + 0.2 * i) for i, a in enumerate(attention_s)]  # least at T0
              for x in m("cheaper", U_TIME)]
    timing = {"T": T, "lstm": {"rounds": lstm_s},
              "attention": {"rounds": [attention_s] * len(lstm_s)}}
    return {"recurrence": {"reach": reach, "agreement": agreement, "steps": steps,
                           "timing": timing}}


# (claim id, part name) -> the knob that sets its margins, and the margins' unit. The
# benchmark's claim (attention_step_cheaper_here) is decided over rounds exactly as over
# seeds, so its rounds carry the spread here; it has no premise.
KNOBS = {
    ("recurrence.rnn_reach_geometric", "rate"): ("rate", U_RATE),
    ("recurrence.rnn_reach_geometric", "shape"): ("shape", U_RATE),
    ("recurrence.lstm_reach_slower", ""): ("slower", U_RATE),
    ("recurrence.attention_reach_flat", ""): ("flat", U_RATE),
    ("recurrence.attention_distance_free", ""): ("free", U_ACC),
    ("recurrence.rnn_falls_to_chance", "falls"): ("falls", U_ACC),
    ("recurrence.rnn_falls_to_chance", "to chance"): ("chance", U_ACC),
    ("recurrence.attention_stops_at_training", ""): ("stops", U_ACC),
    ("recurrence.lstm_holds_past_training", ""): ("lstm beyond", U_ACC),
    ("recurrence.alibi_holds_past_training", ""): ("alibi", U_ACC),
    ("recurrence.attention_step_cheaper_here", ""): ("cheaper", U_TIME),
}
UNTRAINED = {("recurrence.sequential_steps", "recurrences"): "grows",
             ("recurrence.sequential_steps", "attention"): "constant"}


def _verdicts(record: dict) -> dict[str, dict]:
    return by_id(evaluate(record, CLAIMS))


def test_every_claim_holds_on_the_chapters_picture() -> None:
    assert {v["status"] for v in _verdicts(_record()).values()} == {"held"}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("cid", "name"), list(KNOBS))
def test_each_part_is_held_not_held_and_inconclusive_as_its_spread_says(cid, name, case):
    knob, unit = KNOBS[(cid, name)]
    wanted = margins(case, unit)
    verdicts = _verdicts(_record(**{knob: wanted}))
    check_case(verdicts[cid], name, case, wanted)
    assert {c for c, v in verdicts.items() if v["status"] != "held"} <= {cid}


@pytest.mark.parametrize("case", list(CASES))
def test_the_lstm_holds_longer_by_whole_distances(case) -> None:
    rnn, lstm = HOLDS_WORDS[case]
    verdicts = _verdicts(_record(holds=case))
    check_case(verdicts["recurrence.lstm_holds_longer"], "", case,
               [float(b - a) for a, b in zip(rnn, lstm, strict=True)])
    assert {c for c, v in verdicts.items() if v["status"] != "held"} <= {
        "recurrence.lstm_holds_longer"}


# The counted steps are one evaluation (trained=False): one margin, no seeds, so no spread to
# test, and its rule (kit.claims.part_verdict) is held when the margin is positive, not held
# otherwise. Inconclusive cannot be reached: these parts never set Margins.undecided (a
# count has no measurement noise), and the claim has no premise to fail.
@pytest.mark.parametrize("case", ["held", "not held"])
@pytest.mark.parametrize(("cid", "name"), list(UNTRAINED))
def test_the_counted_steps_are_one_evaluation_held_or_not(cid, name, case) -> None:
    wanted = [margins(case, U_EXP)[1]]  # one evaluation: no seeds, no spread
    verdicts = _verdicts(_record(**{UNTRAINED[(cid, name)]: wanted}))
    verdict = verdicts[cid]
    assert part(verdict, name)["margins"] == pytest.approx(wanted, abs=1e-9)
    assert verdict["status"] == part(verdict, name)["status"] == case
    assert verdict["why"].endswith("one evaluation (no training)")
    assert all(p["status"] == "held" for p in verdict["parts"] if p["name"] != name)
    assert {c for c, v in verdicts.items() if v["status"] != "held"} <= {cid}


DISTANCE_CLAIMS = ("recurrence.attention_distance_free", "recurrence.rnn_falls_to_chance",
                   "recurrence.lstm_holds_longer")
BEYOND_CLAIMS = {"recurrence.attention_stops_at_training": "attention",
                 "recurrence.lstm_holds_past_training": "lstm",
                 "recurrence.alibi_holds_past_training": "alibi"}


def test_every_model_is_judged_on_the_distances_it_trained_on() -> None:
    """One distance rule for every model (issue "even-handed verdicts"): attention's "does not
    matter", the RNN's fall and the LSTM's hold read 8 … 32 and nothing beyond; turning every
    model's accuracy at 40 and 48 upside down (the RNN perfect, the LSTM and attention at
    chance) moves none of their margins."""
    record = _record()
    before = {c: [p["margins"] for p in v["parts"]] for c, v in _verdicts(record).items()}
    ag = record["recurrence"]["agreement"]
    for model, beyond in (("rnn", 1.0), ("lstm", 0.5), ("attention", 0.5), ("alibi", 0.5)):
        for acc in ag[model]["acc"]:
            acc[TOP + 1:] = [beyond, beyond]
    after = _verdicts(record)
    for cid in DISTANCE_CLAIMS:
        assert [p["margins"] for p in after[cid]["parts"]] == before[cid], cid
        assert after[cid]["status"] == "held", cid
    falls = after["recurrence.rnn_falls_to_chance"]
    assert part(falls, "to chance")["numbers"] == {"acc_largest_trained_d": pytest.approx(0.45)}
    assert after["recurrence.lstm_holds_longer"]["parts"][0]["numbers"] == {
        "rnn_holds_to_d": 8, "lstm_holds_to_d": pytest.approx(64 / 3)}
    # ... and the claims past the training read exactly those distances
    assert after["recurrence.attention_stops_at_training"]["status"] == "held"
    for cid in ("recurrence.lstm_holds_past_training", "recurrence.alibi_holds_past_training"):
        assert after[cid]["status"] == "not held", cid
        assert after[cid]["parts"][0]["margins"] == pytest.approx([-0.2] * 3)


def test_a_fall_or_a_hold_inside_the_trained_range_decides_the_distance_claims() -> None:
    """The RNN holding 0.9 over the whole trained range and at chance only beyond it has not
    fallen (it would have under rule version 3, which read d = 48), and the LSTM's holding
    distance stops at 32, the largest trained one."""
    record = _record()
    ag = record["recurrence"]["agreement"]
    for i, (rnn, lstm) in enumerate(zip(ag["rnn"]["acc"], ag["lstm"]["acc"], strict=True)):
        rnn[:] = [0.9, 0.88, 0.87, 0.86 + 0.01 * i, 0.5, 0.5]  # no fall inside [8, 32]
        lstm[:] = [0.95, 0.9, 0.85, 0.8, 0.8, 0.8]  # holds at every distance
    verdicts = _verdicts(record)
    falls = verdicts["recurrence.rnn_falls_to_chance"]
    assert falls["status"] == "not held"
    assert part(falls, "falls")["margins"] == pytest.approx([-0.06, -0.07, -0.08])
    holds = verdicts["recurrence.lstm_holds_longer"]  # both hold to 32: no longer
    assert holds["parts"][0]["margins"] == [0.0, 0.0, 0.0]
    assert holds["parts"][0]["numbers"] == {"rnn_holds_to_d": 32, "lstm_holds_to_d": 32}


@pytest.mark.parametrize("cid", list(BEYOND_CLAIMS))
def test_a_model_that_does_not_hold_at_its_largest_trained_distance_has_nothing_to_carry(cid):
    record = _record()
    for i, acc in enumerate(record["recurrence"]["agreement"][BEYOND_CLAIMS[cid]]["acc"]):
        acc[TOP] = 0.6 + 0.01 * i  # below 0.7 at d = 32 on every seed
    verdict = _verdicts(record)[cid]
    assert verdict["status"] == "inconclusive" and verdict["premise"]["held"] is False
    assert verdict["premise"]["seeds_not_learning"] == [0, 1, 2]
    assert "does not hold the agreement even at the largest distance it trained on, d = 32 " \
           "(accuracy 0.61; holding needs 0.7): it has nothing to carry past it" in verdict["why"]
    assert "no mantiene la concordancia ni a la mayor distancia con la que se entrenó, d = 32" \
           in verdict["premise"]["why_es"]


def test_the_claims_past_the_training_skip_a_record_without_their_distances_or_model():
    record = _record()
    del record["recurrence"]["agreement"]["alibi"]  # a record from before ALiBi was planned
    verdicts = _verdicts(record)
    assert verdicts["recurrence.alibi_holds_past_training"]["status"] == "skipped"
    assert "no alibi agreement model" in verdicts["recurrence.alibi_holds_past_training"]["why"]
    record["recurrence"]["agreement"]["trained_d"] = [8, 48]  # every distance trained
    verdicts = _verdicts(record)
    for cid in ("recurrence.attention_stops_at_training", "recurrence.lstm_holds_past_training"):
        assert verdicts[cid]["status"] == "skipped", cid
        assert verdicts[cid]["why"] == "no held-out distance lies beyond the trained range"


@pytest.mark.parametrize(("model", "cid"), [("rnn", "recurrence.rnn_falls_to_chance"),
                                            ("attention", "recurrence.attention_distance_free")])
def test_a_model_that_never_learned_the_agreement_cannot_test_its_claim(model, cid) -> None:
    record = _record()
    for i, acc in enumerate(record["recurrence"]["agreement"][model]["acc"]):
        acc[:] = [0.5 + 0.01 * i] * len(DISTANCES)  # at chance everywhere
    verdict = _verdicts(record)[cid]
    assert verdict["status"] == "inconclusive" and verdict["premise"]["held"] is False
    assert "has not learned the agreement even at the smallest distance, d = 8" in verdict["why"]


def _unlearn(model: str, index: int, value: float) -> Callable[[dict, int], None]:
    """Sets ``model``'s accuracy at distance number ``index`` to ``value`` on one seed."""
    def unlearn(record: dict, seed: int) -> None:
        record["recurrence"]["agreement"][model]["acc"][seed][index] = value
    return unlearn


def _neither_holds(record: dict, seed: int) -> None:
    for model in ("rnn", "lstm"):  # both learned (≥ 0.6), neither holds (≥ 0.7) at d = 8
        record["recurrence"]["agreement"][model]["acc"][seed][0] = 0.65


# claim with premises -> what fails its premise on one seed, and the other claims that this
# moves off held (attention's accuracy at d = 32 is also the end of its "distance does not
# matter": 0.61 there is a fall of 0.37 on that seed, against 0.01 … 0.03 of room on the others)
ONE_SEED_UNLEARNED = {
    "recurrence.attention_distance_free": (_unlearn("attention", 0, 0.55), {}),
    "recurrence.rnn_falls_to_chance": (_unlearn("rnn", 0, 0.55), {}),
    "recurrence.lstm_holds_longer": (_neither_holds, {}),
    "recurrence.attention_stops_at_training": (
        _unlearn("attention", TOP, 0.61), {"recurrence.attention_distance_free": "inconclusive"}),
    "recurrence.lstm_holds_past_training": (_unlearn("lstm", TOP, 0.61), {}),
    "recurrence.alibi_holds_past_training": (_unlearn("alibi", TOP, 0.61), {}),
}


@pytest.mark.parametrize("cid", list(ONE_SEED_UNLEARNED))
def test_a_premise_failing_on_one_seed_of_three_leaves_too_few_to_decide(cid) -> None:
    """Per seed: seed 1 failing the premise leaves two learning seeds, fewer than a verdict
    needs; the claim is inconclusive, says so naming seed 1 and the premise's rule, and its
    parts read the two learning seeds only (which, on their own, hold)."""
    unlearn, moved = ONE_SEED_UNLEARNED[cid]
    record = _record()
    unlearn(record, 1)
    verdicts = _verdicts(record)
    verdict = verdicts[cid]
    assert verdict["status"] == "inconclusive" and verdict["premise"]["held"] is False
    assert verdict["premise"]["seeds_not_learning"] == [1]
    assert verdict["premise"]["learning_seeds"] == 2
    rule = "; ".join(c["rule"] for c in verdict["premise"]["checks"] if c["seeds_failing"])
    assert verdict["why"].startswith(f"2 of 3 seeds learned (seed 1 did not: {rule})")
    assert all(len(p["margins"]) == 2 for p in verdict["parts"])
    assert {c: v["status"] for c, v in verdicts.items() if v["status"] != "held"} == {
        cid: "inconclusive", **moved}


def test_neither_recurrence_holding_anywhere_leaves_nothing_to_compare() -> None:
    record = _record()
    for model in ("rnn", "lstm"):
        for i, acc in enumerate(record["recurrence"]["agreement"][model]["acc"]):
            acc[:] = [0.6 + 0.01 * i, 0.55, 0.5, 0.5, 0.5, 0.5]
    verdict = _verdicts(record)["recurrence.lstm_holds_longer"]
    assert verdict["status"] == "inconclusive" and verdict["premise"]["held"] is False
    assert verdict["why"].startswith("neither model holds the agreement")


def test_a_power_law_reach_is_not_geometric() -> None:
    fit = geometric_fit(_decay(1.0, power=2.0))
    assert fit["r2_power"] > fit["r2_geometric"]
    assert math.isclose(geometric_fit(_decay(0.7))["rate"], 0.7)


def test_the_explorer_preset_shows_muy_on_the_gata_sentence(tmp_path, monkeypatch) -> None:
    from attnlab.explorer.sources import agreement_distance

    monkeypatch.setitem(recurrence.PROFILES, "quick", recurrence.PROFILES["micro"])
    page = agreement_distance.agreement_distance_page(tmp_path / "w")
    assert "P(cansada)" in page["description"] and "«gata»" in page["description"]
    assert agreement_distance.sentence_text(7) == ". la gata que perseguía al ratón estaba muy"
