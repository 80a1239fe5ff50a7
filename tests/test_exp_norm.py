"""Pre-norm vs post-norm (docs/experiments.md, "Pre-norm or post-norm"): configs,
gradient norms at init, a micro run, the claims (each held, not held and inconclusive on
three seeds with real spread)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from claim_cases import CASES, by_id, check_case, check_real_record, margins

from attnlab.data.dataset import sample_batch
from attnlab.experiments import norm
from attnlab.kit.claims import evaluate
from attnlab.nn.model import LanguageModel
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment
from attnlab.train.distributed import sampler_seed

DATA = Path(
    os.environ.get("ATTNLAB_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
SMALL = norm.Settings(n_layer=4, d_model=16, n_ctx=8, batch_size=2, vocab_size=50)
TOKENS = np.random.default_rng(0).integers(0, 50, size=500)


def test_full_profile_is_the_spec():
    s = norm.PROFILES["full"]
    assert (s.n_layer, s.d_model, s.steps, s.lr, s.warmup_steps, s.batch_size) == (
        12, 128, 1000, 3e-3, 200, 64)
    quick = norm.PROFILES["quick"]
    assert quick.n_layer == 12 and quick.lr == 3e-3  # depth and rate kept
    assert quick.warmup_steps / quick.steps == s.warmup_steps / s.steps


def test_configs_differ_only_in_placement():
    pre, post = norm.model_config(SMALL, "pre"), norm.model_config(SMALL, "post")
    assert pre.replace(norm="post") == post
    assert (pre.mixer, pre.mlp, pre.position, pre.n_layer) == ("mha", True, "learned", 4)
    assert norm.train_config(SMALL, True).warmup_steps == SMALL.warmup_steps
    assert norm.train_config(SMALL, False).warmup_steps == 0


def test_bad_placement_is_a_value_error():
    with pytest.raises(ValueError, match="placement"):
        norm.model_config(SMALL, "none")


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_grad_norms_are_the_first_update_of_the_run(placement):
    cfg = norm.model_config(SMALL, placement)
    got = norm.grad_norms_at_init(cfg, TOKENS, SMALL.batch_size, seed=3)
    assert len(got) == SMALL.n_layer and all(g > 0 for g in got)
    # Independently: the trainer's model and first batch for seed 3, then autograd.grad.
    torch.manual_seed(3)
    model = LanguageModel(cfg)
    x, y = sample_batch(TOKENS, SMALL.batch_size, cfg.n_ctx,
                        torch.Generator().manual_seed(sampler_seed(3, 0)))
    loss = F.cross_entropy(model(x).reshape(-1, cfg.vocab_size), y.reshape(-1))
    params = [list(b.parameters()) for b in model.blocks]
    grads = torch.autograd.grad(loss, [p for ps in params for p in ps])
    expected, i = [], 0
    for ps in params:
        expected.append(math.sqrt(sum(float((g**2).sum()) for g in grads[i:i + len(ps)])))
        i += len(ps)
    assert got == pytest.approx(expected, rel=1e-5)
    assert norm.grad_norms_at_init(cfg, TOKENS, SMALL.batch_size, seed=3) == got  # repeatable


@pytest.mark.skipif(not (DATA / "tinyshakespeare.txt").is_file(), reason="corpus not found")
def test_micro_run_table_and_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_DATA", str(DATA))
    env = run_experiment("norm", "micro", Runner(tmp_path / "work"), out=tmp_path / "out")
    rec = env["record"]
    assert set(rec["cells"]) == {"pre/no_warmup", "pre/warmup", "post/no_warmup", "post/warmup"}
    micro = norm.PROFILES["micro"]
    for placement in ("pre", "post"):
        (per_block,) = rec["grad_norms"][placement]  # one seed
        assert len(per_block) == micro.n_layer
    text = (tmp_path / "out" / "norm" / "table.md").read_text()
    assert "last / first" in text and "post" in text
    png = (tmp_path / "out" / "norm" / "figure.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    check_real_record(evaluate({"norm": rec}, norm.CLAIMS), seeds=1)


# -- claims on synthetic records --------------------------------------------------


def _record(pre0: float | None, pre1: float, post0: float | None, post1: float) -> dict:
    def cell(v: float | None) -> list[dict]:  # three seeds, 0.2% apart
        return [{"held_ppl": None if v is None else v * k, "train_ppl": v, "wall_s": 1.0,
                 "params": 1, "diverged": v is None} for k in (0.998, 1.0, 1.002)]

    return {
        "settings": {"n_layer": 2, "d_model": 8, "n_head": 2, "n_ctx": 8, "steps": 10,
                     "lr": 3e-3, "batch_size": 2, "warmup_steps": 2, "vocab_size": 1024},
        "seeds": 3,
        "cells": {"pre/no_warmup": cell(pre0), "pre/warmup": cell(pre1),
                  "post/no_warmup": cell(post0), "post/warmup": cell(post1)},
        "grad_norms": {"pre": [[1.0, 1.0]], "post": [[0.1, 2.0]]},
    }


def _verdicts(rec: dict) -> dict[str, str]:
    return {v["id"]: v["status"] for v in evaluate({"norm": rec}, norm.CLAIMS)}


def test_claims_hold_on_the_textbook_shape():
    assert set(_verdicts(_record(100.0, 98.0, 160.0, 101.0)).values()) == {"held"}


def test_a_diverged_post_norm_run_counts_as_far_worse():
    rec = _record(100.0, 98.0, None, 101.0)
    assert _verdicts(rec)["norm.post_no_warmup_far_worse"] == "held"
    assert norm.held_per_seed(rec, "post", False) == [1024.0] * 3  # the vocabulary's size
    assert "diverged" in norm.table(rec)
    rec = _record(100.0, 98.0, 160.0, None)  # post-norm diverging with warmup is no match
    assert _verdicts(rec)["norm.post_warmup_matches_pre"] == "not held"


@pytest.mark.parametrize(
    ("values", "claim"),
    [
        ((100.0, 98.0, 115.0, 101.0), "post_no_warmup_far_worse"),  # only 1.15×
        ((100.0, 98.0, 160.0, 120.0), "post_warmup_matches_pre"),  # 22% worse with warmup
        ((100.0, 98.0, 160.0, 80.0), "post_warmup_matches_pre"),  # 18% better is no match either
        ((110.0, 98.0, 160.0, 101.0), "warmup_hardly_matters_for_pre"),  # 12% from warmup
    ],
)
def test_each_claim_fails_when_its_numbers_say_so(values, claim):
    verdicts = _verdicts(_record(*values))
    assert verdicts[f"norm.{claim}"] == "not held"
    assert [k for k, s in verdicts.items() if s == "not held"] == [f"norm.{claim}"]


def test_grad_summary_and_table():
    rec = _record(100.0, 98.0, 160.0, 101.0)
    assert norm.grad_summary(rec, "post") == {"first": 0.1, "last": 2.0, "ratio": 20.0}
    assert [s.may_diverge for s in norm.plan(norm.PROFILES["quick"])] == [True] * 12
    assert norm.grad_summary(rec, "pre")["ratio"] == 1.0
    text = norm.table(rec)
    assert "160.00" in text and "20" in text


# -- claims on seeds with real spread (tests/claim_cases.py) ---------------------------------

# claim id -> the knob that sets its margins, their scale, and the per-seed ratio giving margin
# m, by hand from each rule; "matches" and "hardly matters" alternate the side of 1 by seed
KNOBS = {
    "norm.post_no_warmup_far_worse": ("far", 0.1, lambda m, s: 1.2 + m),
    "norm.post_warmup_matches_pre": ("match", 0.02, lambda m, s: 1 + (-1) ** s * (0.05 - m)),
    "norm.warmup_hardly_matters_for_pre": ("warmup", 0.02,
                                           lambda m, s: 1 + (-1) ** s * (0.05 - m)),
}
PRE_WARMUP = (100.0, 104.0, 97.0)  # pre-norm with warmup, per seed


def _seeds_record(**set_margins: list[float]) -> dict:
    """Three seeds, each claim's margins ``held`` unless ``set_margins`` names its knob:
    pre/no warmup = pre/warmup × r(warmup), post/warmup = pre/warmup × r(match), post/no
    warmup = pre/no warmup × r(far)."""
    r = {knob: [value(m, s) for s, m in enumerate(set_margins.get(knob, margins("held", u)))]
         for knob, u, value in KNOBS.values()}
    pre1 = list(PRE_WARMUP)
    pre0 = [p * x for p, x in zip(pre1, r["warmup"], strict=True)]
    post1 = [p * x for p, x in zip(pre1, r["match"], strict=True)]
    post0 = [p * x for p, x in zip(pre0, r["far"], strict=True)]
    rec = _record(1.0, 1.0, 1.0, 1.0)
    for cell, ppl in (("pre/no_warmup", pre0), ("pre/warmup", pre1), ("post/no_warmup", post0),
                      ("post/warmup", post1)):
        for run, p in zip(rec["cells"][cell], ppl, strict=True):
            run["held_ppl"] = run["train_ppl"] = p
    return rec


def test_every_claim_holds_on_seeds_with_spread():
    verdicts = evaluate({"norm": _seeds_record()}, norm.CLAIMS)
    assert {v["status"] for v in verdicts} == {"held"}
    assert all(len(set(v["parts"][0]["margins"])) == 3 for v in verdicts)  # real spread


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("cid", list(KNOBS))
def test_each_claim_is_held_not_held_and_inconclusive_as_its_spread_says(cid, case):
    knob, unit, _ = KNOBS[cid]
    wanted = margins(case, unit)
    verdicts = by_id(evaluate({"norm": _seeds_record(**{knob: wanted})}, norm.CLAIMS))
    check_case(verdicts[cid], "", case, wanted)
    assert {c for c, v in verdicts.items() if v["status"] != "held"} - {cid} == set()
