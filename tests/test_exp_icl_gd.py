"""In-context regression against one GD step: the layer can be GD exactly, the agreement
measures by hand, a micro run through the registry, and every part of every claim held, not
held and inconclusive on seeds with real spread (the loss parts on both sides of GD's loss).
No claim here has a premise, so there is no premise case to test."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from claim_cases import CASES, by_id, check_case, check_real_record, margins

from attnlab.experiments import icl_gd
from attnlab.kit import registry
from attnlab.kit.claims import evaluate
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment

S = icl_gd.PROFILES["micro"]


def test_the_layer_with_hand_set_weights_is_one_gd_step():
    d, eta = S.d, 0.7
    lsa = icl_gd.LinearSelfAttention(d, 0.0)
    with torch.no_grad():
        for m in (lsa.q, lsa.k):
            m[:d, :d] = torch.eye(d)  # q = x_q, k = x_i
        lsa.v[-1, -1] = 1.0  # v = y_i in the y entry
        lsa.p.copy_(eta * torch.eye(d + 1))
    tokens, x_q, y_q, w = icl_gd.tasks(S, 32, torch.Generator().manual_seed(0))
    g = icl_gd.gd_signal(tokens, x_q)
    assert torch.allclose(lsa(tokens, x_q), eta * g, atol=1e-6)
    # and g by hand for one task: n⁻¹ Σ y_i x_i·x_q
    x, y = tokens[0, :, :-1], tokens[0, :, -1]
    assert float(g[0]) == pytest.approx(float((y * (x @ x_q[0])).mean()), rel=1e-5)
    assert torch.allclose(tokens[..., -1], torch.einsum("bnd,bd->bn", tokens[..., :-1], w))


def test_another_tasks_context_keeps_the_inputs_and_changes_the_targets():
    gen = lambda: torch.Generator().manual_seed(3)  # noqa: E731
    same, x_q, _, w = icl_gd.tasks(S, 8, gen())
    other, x_q2, _, _ = icl_gd.tasks(S, 8, gen(), other=True)
    assert torch.equal(same[..., :-1], other[..., :-1]) and torch.equal(x_q, x_q2)
    assert not torch.allclose(same[..., -1], other[..., -1])


def test_agreement_by_hand():
    a, b = np.array([1.0, 0.0]), np.array([1.0, 1.0])
    out = icl_gd.agreement(a, b)
    assert out["cosine"] == pytest.approx(1 / np.sqrt(2))
    assert out["rel_l2"] == pytest.approx(1 / np.sqrt(2))
    assert icl_gd.agreement(b, b) == {"cosine": pytest.approx(1.0), "rel_l2": 0.0}


def test_micro_run_through_the_registry(tmp_path):
    env = run_experiment("icl_gd", "micro", Runner(tmp_path / "w"), tmp_path / "out")
    rec = env["record"]
    assert len(rec["per_seed"]) == 1 and rec["per_seed"][0]["eta"] > 0
    assert "one GD step" in (tmp_path / "out" / "icl_gd" / "table.md").read_text()
    check_real_record(evaluate({"icl_gd": rec}, icl_gd.CLAIMS), seeds=1)


# -- claims on synthetic records with real spread (claim_cases) -----------------------

U = 0.01  # a margin's scale: relative MSE differences and cosines near their thresholds
# (claim id, part name) -> per-seed margins -> the per-seed numbers that give them, by hand
# from each rule: GD's loss 1, so the relative difference is the layer's loss − 1
KNOBS = {
    ("icl_gd.loss_matches", ""): ("lsa", lambda m: 1 + (0.05 - m)),  # |lsa − 1| < 0.05
    ("icl_gd.predictions_agree", ""): ("cos", lambda m: 0.95 + m),  # cosine > 0.95
    ("icl_gd.control_does_not", "loss differs"): ("ctrl", lambda m: 1 + 0.10 + m),  # > 0.10
    ("icl_gd.control_does_not", "predictions differ"): ("ctrl_cos", lambda m: 0.90 - m),
}
# The two rules on |loss − GD's| read both sides: the same margins from a loss below GD's
BELOW = {
    ("icl_gd.loss_matches", ""): ("lsa", lambda m: 1 - (0.05 - m)),
    ("icl_gd.control_does_not", "loss differs"): ("ctrl", lambda m: 1 - 0.10 - m),
}


def _record(below: bool = False, **set_margins: list[float]) -> dict:
    """Three seeds, each part's margins ``held`` unless ``set_margins`` names it; ``below``:
    the knobs it names that BELOW has give their margins from a loss below GD's."""
    values = {}
    for key, (knob, value) in KNOBS.items():
        wanted = set_margins.get(knob, margins("held", U))
        if below and knob in set_margins and key in BELOW:
            value = BELOW[key][1]
        values[knob] = [value(m) for m in wanted]
    runs = [{"eta": 1.0, "loss": {"lsa": values["lsa"][s], "gd": 1.0,
                                  "control": values["ctrl"][s], "zero": 3.3},
             "lsa_vs_gd": {"cosine": values["cos"][s], "rel_l2": 0.1},
             "control_vs_gd": {"cosine": values["ctrl_cos"][s], "rel_l2": 1.0}}
            for s in range(3)]
    return {"icl_gd": {"per_seed": runs}}


def test_every_claim_holds_when_the_layer_is_gd_and_the_control_is_not():
    assert {v["status"] for v in evaluate(_record(), icl_gd.CLAIMS)} == {"held"}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("cid", "name", "below"),
                         [(*key, False) for key in KNOBS] + [(*key, True) for key in BELOW])
def test_each_part_is_held_not_held_and_inconclusive_as_its_spread_says(cid, name, below,
                                                                        case):
    knob, _ = KNOBS[(cid, name)]
    wanted = margins(case, U)
    rec = _record(below, **{knob: wanted})
    model = {"lsa": "lsa", "ctrl": "control"}.get(knob)
    losses = [r["loss"][model] for r in rec["icl_gd"]["per_seed"]] if model else []
    assert all((x < 1.0) == below for x in losses)  # the side of GD's loss 1 built on
    verdicts = by_id(evaluate(rec, icl_gd.CLAIMS))
    check_case(verdicts[cid], name, case, wanted)
    assert {c for c, v in verdicts.items() if v["status"] != "held"} == \
        (set() if case == "held" else {cid})


def test_quick_is_the_full_settings():
    # twenty thousand steps of a one-layer model cost minutes: the learner's quick run
    # carries the full profile's settings
    assert icl_gd.PROFILES["quick"] == icl_gd.PROFILES["full"]
    assert registry.load("icl_gd").quick_changes.startswith("Nothing")


def test_seeds_side_by_side_give_the_numbers_of_seeds_in_turn():
    s = icl_gd.Settings(steps=20, batch_size=16, n_eta=500, n_held=64, seeds=2)
    drop = lambda runs: [{k: v for k, v in r.items() if k != "wall_s"} for r in runs]  # noqa: E731
    assert drop(icl_gd.side_by_side(s, 2)) == drop(icl_gd.side_by_side(s, 1))
