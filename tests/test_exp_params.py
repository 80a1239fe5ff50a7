"""The parameter experiment (docs/experiments.md, "Where the parameters are"):
hand-computed counts, the GPT-2 small table, claims."""

from __future__ import annotations

import copy

import pytest

from attnlab.experiments import params
from attnlab.kit import registry
from attnlab.kit.claims import decide, evaluate
from attnlab.nn.model_config import ModelConfig
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment


@pytest.fixture(scope="module")
def record():
    return params.analyse(params.PROFILES["micro"])


def test_default_block_by_hand(record):
    d = 128
    default = record["models"][0]
    # attention: q, k, v without bias (3d²) + W_o with bias (d² + d); MLP: d→4d→d with biases
    assert default["per_block"] == [
        {"attention": 4 * d * d + d, "mlp": 8 * d * d + 5 * d, "norms": 4 * d}
    ]
    assert default["embedding"] == 1024 * d + 128 * d  # tokens + learned positions
    assert default["head"] == d * 1024 + 1024  # untied, with bias
    assert default["final_norm"] == 2 * d
    assert default["total"] == 197_888 + 147_456 + 256 + 132_096 == 477_696
    assert default["shares"]["mlp"] == pytest.approx(131_712 / 197_888)


def test_gpt2_small_three_ways(record):
    g = record["gpt2"]
    assert g["formula"] == g["ours"] == 124_439_808
    assert g["block_formula"] == 12 * 768**2 + 13 * 768
    gpt2 = record["models"][1]
    assert len(gpt2["per_block"]) == 12
    assert gpt2["per_block"][0] == g["parts_formula"]
    assert gpt2["head"] == 0  # tied, no bias
    assert g["hf"] is None  # micro leaves Hugging Face out


def test_count_model_matches_a_real_model():
    from attnlab.nn.model import LanguageModel

    cfg = ModelConfig(d_model=32, n_layer=3, n_head=2, qkv_bias=True, tie_weights=True,
                      lm_head_bias=False, position="rope")
    counted = params.count_model("x", cfg)
    assert counted["total"] == LanguageModel(cfg).num_parameters()
    assert counted["blocks"] + counted["embedding"] + counted["final_norm"] \
        + counted["head"] == counted["total"]


@pytest.mark.slow  # importing transformers takes seconds; the GPT-2 parity tests cover it too
def test_hf_count():
    pytest.importorskip("transformers")
    hf, note = params.hf_gpt2_count()
    assert hf == 124_439_808, note


def test_table_and_figure(record, tmp_path):
    text = params.table(record)
    assert "124,439,808" in text and "12d² + 13d" in text and "each of 12 blocks" in text
    assert "not counted in this profile" in text
    params.figure(record).savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_registry_micro_run_and_claims_hold(tmp_path):
    env = run_experiment("params", "micro", Runner(tmp_path / "w"), tmp_path / "out")
    assert (tmp_path / "out" / "params" / "figure.png").is_file()
    verdicts = evaluate({"params": env["record"]}, params.CLAIMS)
    # micro leaves out the Hugging Face count: the count claim says skipped, not held
    assert [v["status"] for v in verdicts] == ["skipped", "held"]
    assert "not counted in this profile" in verdicts[0]["why"]
    assert verdicts[0]["parts"][0]["numbers"]["ours"] == 124_439_808
    assert verdicts[0]["parts"][0]["status"] == "held"
    assert params.plan(params.PROFILES["quick"]) == []


def _decide(claim_id, record):
    (claim,) = [c for c in params.CLAIMS if c.id == claim_id]
    verdict = decide(claim, {"params": record})
    numbers = {k: v for p in verdict["parts"] for k, v in p.get("numbers", {}).items()}
    return verdict["status"], numbers


def test_count_claim_both_ways(record):
    assert _decide("params.gpt2_small_count", record)[0] == "skipped"  # no HF count
    with_hf = copy.deepcopy(record)
    with_hf["gpt2"]["hf"] = 124_439_808
    assert _decide("params.gpt2_small_count", with_hf)[0] == "held"
    for key, value in (("hf", 124_439_809), ("ours", 124_439_807), ("formula", 1)):
        bad = copy.deepcopy(with_hf)
        bad["gpt2"][key] = value
        status, numbers = _decide("params.gpt2_small_count", bad)
        assert status == "not held"
        assert numbers[key] == value


def test_mlp_share_claim_both_ways(record):
    status, numbers = _decide("params.mlp_two_thirds", record)
    assert status == "held" and numbers["mlp_share[GPT-2 small]"] == pytest.approx(0.6663, abs=1e-4)
    bad = copy.deepcopy(record)
    bad["models"][0]["shares"]["mlp"] = 2 / 3 - 0.011
    assert _decide("params.mlp_two_thirds", bad)[0] == "not held"
    edge = copy.deepcopy(record)
    edge["models"][0]["shares"]["mlp"] = 2 / 3 - 0.009
    assert _decide("params.mlp_two_thirds", edge)[0] == "held"


# Both claims are one evaluation (trained=False: a count, no seeds): each part is held or not
# held by its margin's sign and cannot be inconclusive. Each MLP share, either side of 2/3.
@pytest.mark.parametrize("model", ["default", "GPT-2 small"])
@pytest.mark.parametrize(("delta", "case"), [(0.009, "held"), (-0.009, "held"),
                                             (0.011, "not held"), (-0.011, "not held")])
def test_each_mlp_share_is_held_or_not_within_a_point_of_two_thirds(record, model, delta, case):
    changed = copy.deepcopy(record)
    (m,) = [m for m in changed["models"] if m["name"] == model]
    m["shares"]["mlp"] = 2 / 3 + delta
    (claim,) = [c for c in params.CLAIMS if c.id == "params.mlp_two_thirds"]
    verdict = decide(claim, {"params": changed})
    assert verdict["status"] == case
    for p in verdict["parts"]:
        assert p["status"] == (case if p["name"] == model else "held"), p
        assert len(p["margins"]) == 1 and p["why"] == "one evaluation (no training)"


def test_profiles_and_module_contract():
    assert params.NEEDS_CORPUS is False
    assert set(params.PROFILES) == {"full", "quick", "micro"}
    assert params.PROFILES["full"] == params.PROFILES["quick"]
    assert "same as full" in registry.load("params").quick_changes
