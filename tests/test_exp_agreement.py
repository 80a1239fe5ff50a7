"""The verb-agreement experiment: groups of keys and the baseline by hand, a micro run
through the registry, and every claim both ways on synthetic records."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.experiments import agreement
from attnlab.lab.claims import evaluate
from attnlab.lab.runner import Runner
from attnlab.nn.model import LanguageModel
from attnlab.suite import run_experiment

DATA = agreement.dataset(agreement.PROFILES["quick"])


def test_groups_partition_each_row():
    masks = agreement.group_masks(3)
    assert sorted(masks) == [3, 6]  # the pronouns of clauses 2 and 3
    for q, groups in masks.items():
        stacked = np.stack([groups[g] for g in agreement.GROUPS]).astype(int)  # (4, q + 1)
        assert (stacked.sum(0) == 1).all()  # every key in exactly one group
        assert groups["subject"].nonzero()[0].tolist() == [q]
    words = "I work , you work , he works .".split()
    assert [words[k] for k in masks[6]["stems"].nonzero()[0]] == ["work", "work"]
    assert [words[k] for k in masks[6]["separators"].nonzero()[0]] == [",", ","]
    assert [words[k] for k in masks[6]["other pronouns"].nonzero()[0]] == ["I", "you"]


def test_majority_form_baseline_by_hand():
    # three of seven pronouns take -s; the base form is the majority, about 4/7 of answers
    s_words = {w for w in DATA.vocab.words if w.endswith("s") and w[:-1] in DATA.vocab.words}
    answers = DATA.held[:, [4, 7]].ravel()
    base = np.mean([DATA.vocab.words[i] not in s_words for i in answers])
    assert agreement.baseline(DATA) == pytest.approx(base)
    assert 0.5 < agreement.baseline(DATA) < 0.65


def test_a_uniform_mean_spreads_the_row_by_hand():
    torch.manual_seed(0)
    cfg = agreement.model_config(agreement.PROFILES["micro"], DATA.vocab.size)
    model = LanguageModel(cfg.replace(mixer="mean", n_layer=1, position="none")).eval()
    m = agreement.measure(model, DATA)
    (head,) = m["heads"]  # one "head": the averaging matrix
    # query 3 sees 4 keys (1 of each group); query 6 sees 7 (subject 1, others 2 each)
    assert head["subject"] == pytest.approx((1 / 4 + 1 / 7) / 2)
    for g in ("stems", "separators", "other pronouns"):
        assert head[g] == pytest.approx((1 / 4 + 2 / 7) / 2)
    assert 0.0 <= m["top1"] <= 1.0


def test_masses_sum_to_one_for_every_head():
    torch.manual_seed(0)
    cfg = agreement.model_config(agreement.PROFILES["micro"], DATA.vocab.size)
    m = agreement.measure(LanguageModel(cfg).eval(), DATA)
    assert len(m["heads"]) == cfg.n_layer * cfg.n_head
    for h in m["heads"]:
        assert sum(h[g] for g in agreement.GROUPS) == pytest.approx(1.0, abs=1e-5)


def test_micro_run_through_the_registry(tmp_path):
    env = run_experiment("agreement", "micro", Runner(tmp_path / "w"), tmp_path / "out",
                         seeds=3)
    rec = env["record"]
    assert len(rec["top1"]) == 3 and len(rec["heads"]) == 3
    assert len(rec["probe"]["rows"]) == 8 and rec["probe"]["tokens"][-1] == "he"
    folder = tmp_path / "out" / "agreement"
    assert "majority-form baseline" in (folder / "table.md").read_text()
    assert (folder / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    verdicts = evaluate({"agreement": rec}, agreement.CLAIMS)
    assert len(verdicts) == 3 and all(v["seeds"] == 3 for v in verdicts)
    assert {v["status"] for v in verdicts} <= {"held", "not held", "inconclusive"}
    assert len({s.label for s in agreement.plan(agreement.PROFILES["quick"])}) == 3


def _heads(subject: float, stems: float, n: int = 8) -> list[dict]:
    """Head 1 puts ``subject`` on the subject and ``stems`` on the stems; the rest spread."""
    first = {"block": 1, "head": 1, "subject": subject, "stems": stems,
             "separators": (1 - subject - stems) / 2, "other pronouns": (1 - subject - stems) / 2}
    rest = [{"block": 1 + i // 4, "head": 1 + i % 4, "subject": 0.1, "stems": 0.3,
             "separators": 0.3, "other pronouns": 0.3} for i in range(1, n)]
    return [first, *rest]


def _record(top1=(0.95, 0.96, 0.97), subject=(0.7, 0.72, 0.74), stems=0.1) -> dict:
    return {"agreement": {"baseline": 4 / 7, "top1": list(top1),
                          "heads": [_heads(s, stems) for s in subject]}}


def _status(record: dict) -> dict[str, str]:
    return {v["id"]: v["status"] for v in evaluate(record, agreement.CLAIMS)}


def test_claims_hold_on_the_curriculums_picture():
    assert set(_status(_record()).values()) == {"held"}


@pytest.mark.parametrize(("record", "claim"), [
    (_record(top1=(0.6, 0.62, 0.61)), "agreement.predicts_form"),  # the majority form only
    (_record(subject=(0.3, 0.32, 0.31)), "agreement.subject_head"),
    (_record(subject=(0.9, 0.91, 0.92), stems=0.08), None),  # strong, but others route too
])
def test_claims_fail_when_their_numbers_say_so(record, claim):
    status = _status(record)
    if claim is None:
        assert set(status.values()) == {"held"}
    else:
        assert status[claim] == "not held"
        assert sum(v == "not held" for v in status.values()) == 1


def test_one_head_doing_all_the_routing_is_not_partial():
    record = _record()
    for heads in record["agreement"]["heads"]:
        for h in heads[1:]:
            h.update(subject=0.01, stems=0.01, separators=0.49, **{"other pronouns": 0.49})
    assert _status(record)["agreement.partial_specialisation"] == "not held"
    assert agreement.routing_shares(record["agreement"]["heads"][0])[0] > 0.5
