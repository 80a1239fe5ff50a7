"""Winograd referents (docs/experiments.md, "Winograd referents"): configs, scoring,
attention rows, a micro run, the claims (each part held, not held and inconclusive on three
seeds with real spread)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from claim_cases import CASES, check_part, check_real_record, margins

from attnlab.data.synthetic import winograd_dataset
from attnlab.experiments import winograd
from attnlab.kit import registry
from attnlab.kit.claims import evaluate
from attnlab.nn.model import LanguageModel
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment

DATA_B = winograd_dataset("B", 0)
SMALL = winograd.Settings(d_model=16)


def test_quick_is_the_chapters_settings():
    # the full settings cost minutes, so the learner's quick run carries the chapter's own
    assert winograd.PROFILES["quick"] == winograd.PROFILES["full"] == winograd.Settings()
    assert registry.load("winograd").quick_changes.startswith("Nothing")
    assert winograd.NEEDS_CORPUS is False


def test_model_configs():
    v = DATA_B.vocab.size
    mean, one, two = (winograd.model_config(SMALL, k, v) for k in winograd.MODELS)
    assert (mean.mixer, mean.position, mean.residual, mean.mlp) == ("mean", "none", True, True)
    assert (one.mixer, one.n_head, one.n_layer, one.position) == ("mha", 4, 1, "learned")
    assert two == one.replace(n_layer=2)
    assert one.replace(mixer="mean", position="none") == mean  # only the mixer (and positions)
    assert mean.n_ctx == DATA_B.train.shape[1] - 1 and mean.vocab_size == v
    with pytest.raises(ValueError, match="unknown model"):
        winograd.model_config(SMALL, "three blocks", v)


def test_sentence_stream_is_the_sentences_end_to_end():
    stream = winograd.SentenceStream.of(DATA_B)
    assert stream.train.shape == (DATA_B.train.size,)
    np.testing.assert_array_equal(stream.train[18:36], DATA_B.train[1])
    np.testing.assert_array_equal(stream.held[:18], DATA_B.held[0])


class _Stub(torch.nn.Module):
    """Logits one-hot on the word at sentence position ``source`` (1: x, 6: y), or on the
    right referent by the role rule when ``source`` is None; only the scored position counts."""

    def __init__(self, vocab_size: int, source: int | None, crossers: set[int]) -> None:
        super().__init__()
        self.v, self.source, self.crossers = vocab_size, source, crossers

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        b, t = idx.shape
        if self.source is not None:
            pick = idx[:, self.source]
        else:
            is_crosser = torch.tensor([int(a) in self.crossers for a in idx[:, 11]])
            pick = torch.where(is_crosser, idx[:, 1], idx[:, 6])
        logits = torch.zeros(b, t, self.v)
        logits[torch.arange(b), -1, pick] = 1.0
        return logits


@pytest.mark.parametrize(("source", "forced"), [(None, 1.0), (1, 0.5), (6, 0.5)])
def test_accuracies_by_hand(source, forced):
    # Half the held-out sentences have a crosser adjective (answer x), half a crossed one.
    crossers = {DATA_B.vocab.id(a) for a in ("tired", "scared", "slow", "weak")}
    scores = winograd.accuracies(_Stub(DATA_B.vocab.size, source, crossers), DATA_B)
    assert scores["forced"] == forced and scores["top1"] == forced
    assert scores["train_forced"] == forced


def test_scored_logits_reads_only_the_prefix():
    rows = DATA_B.held[:3]
    seen = []

    def spy(x: torch.Tensor) -> torch.Tensor:
        seen.append(x.clone())
        return torch.zeros(*x.shape, 5)

    assert winograd.scored_logits(spy, rows, 14).shape == (3, 5)
    assert torch.equal(seen[0], torch.from_numpy(rows[:, :15]))  # never the referent itself
    with pytest.raises(ValueError, match="score_index"):
        winograd.scored_logits(spy, rows, 17)


def _model(kind: str) -> LanguageModel:
    torch.manual_seed(0)
    return LanguageModel(winograd.model_config(SMALL, kind, DATA_B.vocab.size)).eval()


def test_attention_rows_shapes_and_rows():
    sentence = winograd.PROBE.format(adj="tired")
    got = winograd.attention_rows(_model("two blocks"), DATA_B.vocab, sentence)
    assert got["tokens"] == sentence.split()
    w = np.asarray(got["blocks"])  # (blocks, h, t, t)
    assert w.shape == (2, 4, 15, 15)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)
    assert np.all(np.triu(w, k=1) == 0)  # causal
    mean = winograd.attention_rows(_model("mean"), DATA_B.vocab, sentence)
    np.testing.assert_allclose(np.asarray(mean["blocks"][0])[0, 14], np.full(15, 1 / 15), 1e-6)
    rows = winograd.scored_attention(_model("two blocks"), DATA_B.vocab, sentence)
    np.testing.assert_allclose(rows, w[:, :, -1, :].mean(axis=1), atol=1e-6)


def test_block1_rows_differ_only_by_the_adjectives_key():
    # Block 1's query at the last `the` and every key but the adjective's are the same in
    # both sentences, so per head the two rows are proportional off the adjective.
    model = _model("two blocks")
    a, b = (np.asarray(winograd.attention_rows(model, DATA_B.vocab, winograd.PROBE.format(
        adj=adj))["blocks"][0])[:, -1, :] for adj in ("tired", "wet"))  # (h, t) each
    ratio = np.delete(a / b, 11, axis=1)  # (h, t - 1)
    np.testing.assert_allclose(ratio, ratio[:, :1].repeat(ratio.shape[1], 1), rtol=1e-5)


@pytest.mark.parametrize(("sentence", "match"), [
    ("the unicorn waited", "not in the vocabulary"),
    ("", "empty"),
    (" ".join(["the"] * 18), "at most 17"),
])
def test_attention_rows_bad_input(sentence, match):
    with pytest.raises(ValueError, match=match):
        winograd.attention_rows(_model("one block"), DATA_B.vocab, sentence)


def test_micro_run_table_figure_and_cache(tmp_path):
    ctx = Runner(tmp_path / "work")
    env = run_experiment("winograd", "micro", ctx, out=tmp_path / "out")
    record = env["record"]
    assert set(record["variants"]) == {"A", "B"}
    for v in record["variants"].values():
        for m in v["models"].values():
            assert all(0.0 <= x <= 1.0 for x in m["forced"] + m["top1"] + m["train_forced"])
    probe = record["attention"]
    assert len(probe["blocks"]) == 2 and len(probe["blocks"][0]["tired"]) == 15
    json.dumps(record)  # JSON-able
    folder = tmp_path / "out" / "winograd"
    text = (folder / "table.md").read_text()
    assert "| B | two blocks |" in text and "block 2 · wet" in text
    assert (folder / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # every predicate ran on the real record, a finite margin per seed (its verdicts are
    # inconclusive on one seed whatever they say: that is the rule, not a check of them)
    check_real_record(evaluate({"winograd": record}, winograd.CLAIMS), seeds=1)
    assert len(winograd.plan(winograd.PROFILES["quick"])) == 2 * 3 * 3  # variants, models, seeds


NOISE = (-0.004, 0.0, 0.004)  # three seeds


def _record(a=(1.0, 1.0, 1.0), b=(0.2, 0.8, 1.0), diffs=(0.01, 0.3)) -> dict:
    def models(values):
        return {k: {"forced": [min(1.0, x + e) for e in NOISE]}
                for k, x in zip(winograd.MODELS, values, strict=True)}

    return {"winograd": {
        "variants": {"A": {"models": models(a)}, "B": {"models": models(b)}},
        "attention": {"blocks": [{"max_abs_diff": [d + e for e in NOISE]} for d in diffs]},
    }}


def _status(records: dict) -> dict[str, str]:
    return {v["id"]: v["status"] for v in evaluate(records, winograd.CLAIMS)}


def test_claims_hold_on_the_textbook_numbers():
    assert set(_status(_record()).values()) == {"held"}
    # The mean may beat a transformer: "as well as" is a lower bound on the mean only.
    assert _status(_record(a=(1.0, 0.89, 0.97)))["winograd.variant_a_mean_suffices"] == "held"


@pytest.mark.parametrize(("record", "claim"), [
    (_record(a=(0.93, 0.90, 1.0)), "winograd.variant_a_mean_suffices"),  # 7 behind two blocks
    (_record(a=(0.85, 0.86, 0.86)), "winograd.variant_a_mean_suffices"),  # all too low
    (_record(b=(0.45, 0.8, 1.0)), "winograd.variant_b_needs_order"),  # mean near chance
    (_record(b=(0.2, 0.6, 1.0)), "winograd.variant_b_needs_order"),  # one block too weak
    (_record(b=(0.2, 0.8, 0.9)), "winograd.variant_b_needs_order"),  # two blocks not perfect
    (_record(diffs=(0.08, 0.3)), "winograd.block1_attention_same"),
    (_record(diffs=(0.01, 0.05)), "winograd.block2_attention_differs"),
])
def test_each_claim_can_fail(record, claim):
    status = _status(record)
    assert status[claim] == "not held"
    assert sum(s == "not held" for s in status.values()) == 1


def test_block_claims_show_the_noun_difference_without_deciding_on_it():
    records = _record(diffs=(0.3, 0.3))
    records["winograd"]["attention"]["blocks"][0]["noun_abs_diff"] = [0.002, 0.002, 0.002]
    verdict = next(v for v in evaluate(records, winograd.CLAIMS)
                   if v["id"] == "winograd.block1_attention_same")
    assert verdict["status"] == "not held"  # decided on the whole row, not on the nouns
    assert verdict["parts"][0]["numbers"] == {"block1_max_abs_diff": pytest.approx(0.3),
                                              "block1_noun_diff": 0.002}


# -- claims on seeds with real spread (tests/claim_cases.py) ---------------------------------


@pytest.mark.parametrize(("two_blocks_b", "case"), [
    ((0.97, 0.99, 1.0), "held"),  # two blocks solve B on every seed
    ((0.55, 0.6, 0.7), "not held"),  # on none
    ((0.9, 1.0, 1.0), "inconclusive"),  # on two seeds: a mean above 0.95 within 2 SE
])
def test_the_order_claim_is_decided_on_the_seeds_spread(two_blocks_b, case):
    records = _record()
    models = records["winograd"]["variants"]["B"]["models"]
    models[winograd.MODELS[-1]]["forced"] = list(two_blocks_b)
    verdict = next(v for v in evaluate(records, winograd.CLAIMS)
                   if v["id"] == "winograd.variant_b_needs_order")
    assert verdict["status"] == case, verdict["why"]


A_MEAN, B_ORDER = "winograd.variant_a_mean_suffices", "winograd.variant_b_needs_order"
BLOCK1, BLOCK2 = "winograd.block1_attention_same", "winograd.block2_attention_differs"
# (claim id, part name) -> the knob that sets its margins, their scale, and the per-seed
# value giving margin m, by hand from each rule
KNOBS = {
    # the better transformer's variant-A forced choice: the mean's + 0.05 − m
    (A_MEAN, "as well"): ("a_best", 0.02, lambda m: 0.05 - m),
    (A_MEAN, "answers"): ("a_mean", 0.02, lambda m: 0.9 + m),  # the mean's
    (B_ORDER, "mean"): ("b_mean", 0.1, lambda m: 0.4 - m),
    (B_ORDER, "one block"): ("b_one", 0.1, lambda m: 0.7 + m),
    (B_ORDER, "two blocks"): ("b_two", 0.02, lambda m: 0.95 + m),
    (BLOCK1, ""): ("block1", 0.02, lambda m: 0.05 - m),  # max |row(tired) − row(wet)|
    (BLOCK2, ""): ("block2", 0.05, lambda m: 0.1 + m),
}


def _seeds_record(**set_margins: list[float]) -> dict:
    """Three seeds, each part's margins ``held`` unless ``set_margins`` names its knob. In
    variant A the better transformer is two blocks on seeds 0 and 2 and one block on seed 1
    (the other 0.03 behind), so the rule's same-seed maximum is exercised."""
    v = {knob: [value(m) for m in set_margins.get(knob, margins("held", u))]
         for knob, u, value in KNOBS.values()}
    best = [a + d for a, d in zip(v["a_mean"], v["a_best"], strict=True)]
    two_a = [b if s != 1 else b - 0.03 for s, b in enumerate(best)]
    one_a = [b if s == 1 else b - 0.03 for s, b in enumerate(best)]
    variants = {"A": (v["a_mean"], one_a, two_a), "B": (v["b_mean"], v["b_one"], v["b_two"])}
    return {"winograd": {
        "variants": {name: {"models": {k: {"forced": list(acc)} for k, acc in
                                       zip(winograd.MODELS, accs, strict=True)}}
                     for name, accs in variants.items()},
        "attention": {"blocks": [{"max_abs_diff": v["block1"]}, {"max_abs_diff": v["block2"]}]},
    }}


def test_every_claim_holds_on_seeds_with_spread():
    verdicts = evaluate(_seeds_record(), winograd.CLAIMS)
    assert {v["status"] for v in verdicts} == {"held"}
    assert all(len(set(p["margins"])) == 3 for v in verdicts for p in v["parts"])  # spread


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("cid", "name"), list(KNOBS))
def test_each_part_is_held_not_held_and_inconclusive_as_its_spread_says(cid, name, case):
    # "as well" is set relative to the mean's accuracy, so moving "answers" leaves it held
    check_part(lambda **knob: evaluate(_seeds_record(**knob), winograd.CLAIMS), KNOBS, cid,
               name, case)
