"""The ladder (docs/experiments.md, "The ladder"): row configs and parameter counts by
hand, a micro run, every claim on the textbook's shape, and every part of every claim held,
not held and inconclusive on seeds with real spread."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from claim_cases import CASES, by_id, check_case, check_real_record, margins

from attnlab.experiments import ladder
from attnlab.kit import registry
from attnlab.kit.claims import evaluate
from attnlab.kit.tables import settings_dict
from attnlab.nn.model import LanguageModel
from attnlab.running.context import Context
from attnlab.running.runner import Runner
from attnlab.suite import run_experiment

DATA = Path(
    os.environ.get("ATTNLAB_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
FULL = ladder.PROFILES["full"]


def _params(row: int) -> int:
    return LanguageModel(ladder.row_config(FULL, row)).num_parameters()


def test_parameter_counts_by_hand():
    v, d, t = 1024, 128, 128
    assert _params(1) == v * d + (d * v + v)  # embedding + linear with bias: the bigram
    assert _params(2) == _params(1)  # the mean has no parameters
    assert _params(3) - _params(2) == t * d  # learned positions
    assert _params(4) == _params(3)  # a residual adds nothing
    assert _params(5) - _params(4) == 3 * d * d  # q, k, v without bias, width 128
    assert _params(6) - _params(5) == d * d + d == 16_512  # W_o with bias
    assert _params(7) == _params(5)
    assert _params(8) - _params(6) == 8 * d * d + 5 * d  # d→4d→d with biases
    assert _params(9) - _params(8) == 3 * 2 * d == 768  # two block LNs + the final LN
    assert _params(10) - _params(9) == 12 * d * d + 10 * d  # one more block (no q, k, v biases)
    assert _params(9) == 477_696


def test_rows_change_one_thing_and_keep_the_rest():
    cfg = {row: ladder.row_config(FULL, row) for row in ladder.ROWS}
    base = cfg[1]
    assert (base.mixer, base.position, base.mlp, base.norm) == ("none", "none", False, "none")
    assert not base.tie_weights and base.lm_head_bias and base.dropout == 0
    assert (cfg[2].mixer, cfg[2].residual, cfg[2].position) == ("mean", False, "none")
    assert all(cfg[r].position == "learned" for r in range(3, 11))  # positions stay
    assert cfg[5].replace(mixer="mean") == cfg[4]  # row 5 swaps the mixer only
    assert cfg[5].backend == "auto"  # the fastest correct kernel (sdpa), the model's default
    assert cfg[7] == cfg[5].replace(residual=False)  # the side row
    assert cfg[8] == cfg[6].replace(mlp=True)  # row 8 builds on row 6, not on row 7
    assert cfg[10] == cfg[9].replace(n_layer=2)
    assert ladder.LADDER[7][0] == 5 and ladder.LADDER[8][0] == 6
    assert cfg[5].qk_dim == 128 and cfg[6].qk_dim == 32


def test_bad_row_is_a_value_error():
    with pytest.raises(ValueError, match="rows 1..10"):
        ladder.row_config(FULL, 11)


def test_profiles():
    assert FULL.steps == 3000 and FULL.batch_size == 64 and FULL.lr == 1e-3
    assert FULL.train_tokens is None and FULL.d_model == 128 and FULL.n_ctx == 128
    assert ladder.PROFILES["quick"].overfit_tokens is not None  # overfitting needs small data
    assert "train" in registry.load("ladder").quick_changes


@pytest.mark.skipif(not (DATA / "tinyshakespeare.txt").is_file(), reason="corpus not found")
def test_micro_run_table_figure_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNLAB_DATA", str(DATA))
    runner = Runner(tmp_path / "work")
    env = run_experiment("ladder", "micro", runner, out=tmp_path / "out")
    rows = env["record"]["rows"]
    assert [r["row"] for r in rows] == list(ladder.ROWS)
    micro = ladder.PROFILES["micro"]
    for r in rows:
        assert r["params"] == LanguageModel(ladder.row_config(micro, r["row"])).num_parameters()
        assert all(p > 1 for p in r["held_ppl"] + r["train_ppl"])
    text = (tmp_path / "out" / "ladder" / "table.md").read_text()
    assert all(f"\n| {r} | " in text for r in ladder.ROWS)
    assert "vs row" in text and "row 7" in text
    png = (tmp_path / "out" / "ladder" / "figure.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pair = env["record"]["overfit"]  # micro also trains the small-data pair of rows 9 and 10
    assert [r["row"] for r in pair["rows"]] == [9, 10] and pair["train_tokens"] == 1_000
    assert "Overfitting check" in text
    assert len([p for p in (tmp_path / "work").iterdir() if p.is_dir()]) == 12  # one run each
    runner = Runner(work=tmp_path / "work")
    assert runner.pending(runner.resolve_all(ladder.plan(micro))) == []  # every run finished
    again = ladder.analyse(micro, runner.train(ladder.plan(micro)), Context.of(runner))  # read
    assert json.dumps(again) == json.dumps(env["record"])
    check_real_record(evaluate({"ladder": env["record"]}, ladder.CLAIMS), seeds=1)


# -- claims on synthetic records --------------------------------------------------

# Held-out (and train) perplexities shaped like the textbook's ladder; three seeds each,
# the seed-to-seed noise about 0.3%.
GOOD_HELD = {1: 90.0, 2: 300.0, 3: 290.0, 4: 92.0, 5: 60.0, 6: 55.0, 7: 70.0, 8: 50.0,
             9: 45.0, 10: 48.0}
GOOD_TRAIN = {**GOOD_HELD, 9: 40.0, 10: 35.0}
NOISE = (0.997, 1.0, 1.003)


def _seeds(x: float) -> list[float]:
    return [x * k for k in NOISE]


def _record(held: dict[int, float], train: dict[int, float]) -> dict:
    return _seeds_record({r: _seeds(p) for r, p in held.items()},
                         {r: _seeds(p) for r, p in train.items()})


def _seeds_record(held: dict[int, list[float]], train: dict[int, list[float]]) -> dict:
    """A ladder record from every row's held-out and train perplexity per seed."""
    rows = [{"row": r, "above": ladder.LADDER[r][0], "name": f"row {r}", "params": 1,
             "held_ppl": held[r], "train_ppl": train[r]} for r in ladder.ROWS]
    return {"settings": settings_dict(FULL), "seeds": len(held[1]), "rows": rows,
            "overfit": None}


def _verdicts(held: dict[int, float], train: dict[int, float] | None = None) -> dict[str, str]:
    rec = _record(held, train or held)
    return {v["id"]: v["status"] for v in evaluate({"ladder": rec}, ladder.CLAIMS)}


# The textbook shape below scales every row of a seed alike (NOISE), so each ratio, and
# each margin, is the same in the three seeds: zero spread. Those tests check which way
# each claim's numbers point; the verdict rule on a spread is tested further down.


def test_every_claim_holds_on_the_textbook_shape():
    assert set(_verdicts(GOOD_HELD, GOOD_TRAIN).values()) == {"held"}


@pytest.mark.parametrize(
    ("claim", "changes"),
    [
        ("mean_worse_than_nothing", {2: 150.0, 3: 150.0}),  # only 1.7× worse
        ("positions_barely_help", {3: 200.0}),  # positions help by a third
        ("residual_mean_no_better", {4: 80.0}),  # the mean with residual beats the bigram
        ("head_beats_mean", {5: 85.0, 7: 90.0}),  # only 8% better than the mean
        ("four_heads_beat_one", {6: 61.0}),
        ("replacing_worse", {7: 59.0}),
        ("mlp_and_norm_help", {8: 56.0}),  # the MLP hurts
        ("mlp_and_norm_help", {9: 51.0, 10: 52.0}),  # LayerNorm hurts
        ("two_blocks_overfit", {10: 44.0}),  # two blocks also better held out
    ],
)
def test_each_claim_fails_when_its_numbers_say_so(claim, changes):
    held = {**GOOD_HELD, **changes}
    train = {**GOOD_TRAIN, **{r: p for r, p in changes.items() if r not in (9, 10)}}
    verdicts = _verdicts(held, train)
    assert verdicts[f"ladder.{claim}"] == "not held"
    others = {k: s for k, s in verdicts.items() if k != f"ladder.{claim}"}
    assert set(others.values()) == {"held"}


def test_two_blocks_needs_the_train_side_too():
    verdicts = _verdicts(GOOD_HELD, {**GOOD_TRAIN, 10: 39.0})
    assert verdicts["ladder.two_blocks_overfit"] == "held"
    verdicts = _verdicts(GOOD_HELD, {**GOOD_TRAIN, 10: 41.0})  # fits training text worse
    assert verdicts["ladder.two_blocks_overfit"] == "not held"


def test_claims_pair_rows_by_seed():
    rec = _record(GOOD_HELD, GOOD_TRAIN)
    rows = {r["row"]: r for r in rec["rows"]}
    rows[5]["held_ppl"] = [50.0, 60.0, 70.0]  # a wide spread over seeds ...
    rows[6]["held_ppl"] = [49.0, 58.8, 68.6]  # ... but row 6 is 2% lower in every seed
    verdict = {v["id"]: v for v in evaluate({"ladder": rec}, ladder.CLAIMS)}
    four = verdict["ladder.four_heads_beat_one"]
    assert four["status"] == "held" and four["seeds"] == 3
    assert four["parts"][0]["mean"] == pytest.approx(0.02)
    assert four["parts"][0]["numbers"]["held_row6"] == pytest.approx(58.8)
    rows[6]["held_ppl"] = [49.0, 61.2, 68.6]  # lower in two seeds, higher in one
    verdict = {v["id"]: v for v in evaluate({"ladder": rec}, ladder.CLAIMS)}
    assert verdict["ladder.four_heads_beat_one"]["status"] == "inconclusive"


def test_the_small_data_pair_decides_overfitting_when_present():
    rec = _record(GOOD_HELD, {**GOOD_TRAIN, 10: 41.0})  # the ladder's own pair: no overfit
    pair_rows = [{"row": r, "name": f"row {r}", "params": 1, "held_ppl": _seeds(h),
                  "train_ppl": _seeds(t)} for r, h, t in ((9, 150.0, 40.0), (10, 160.0, 30.0))]
    rec["overfit"] = {"train_tokens": 1000, "steps": 10, "rows": pair_rows}
    verdict = {v["id"]: v for v in evaluate({"ladder": rec}, ladder.CLAIMS)}
    assert verdict["ladder.two_blocks_overfit"]["status"] == "held"
    assert verdict["ladder.two_blocks_overfit"]["parts"][1]["numbers"]["held_row10"] == \
        pytest.approx(160.0)
    pair_rows[1]["held_ppl"] = _seeds(149.0)
    verdict = {v["id"]: v for v in evaluate({"ladder": rec}, ladder.CLAIMS)}
    assert verdict["ladder.two_blocks_overfit"]["status"] == "not held"
    assert "Overfitting check" in ladder.table(rec)


def test_plan_lists_every_row_and_seed_once():
    s = ladder.PROFILES["quick"]
    specs = ladder.plan(s)
    assert len(specs) == (len(ladder.ROWS) + 2) * s.seeds == 36
    assert len({sp.label for sp in specs}) == len(specs)
    assert {sp.config.train.seed for sp in specs} == {0, 1, 2}
    small = [sp for sp in specs if "small data" in sp.label]
    assert {sp.config.data.train_tokens for sp in small} == {s.overfit_tokens}


# -- every part held, not held and inconclusive on seeds with real spread (claim_cases) ---
# Every claim reads one ratio of two rows per seed (train or held-out perplexity, rows
# trained with the same seed), and those ratios form a tree from row 1: a record built from
# them, row by row, sets each part's margins and no other part's. The ladder's claims have
# no premises (nothing to fail but the parts), so there is no premise case to test here.

U = 0.01  # a margin's scale, in the ratio's own unit (× ppl)
PARENT = {2: 1, 3: 2, 4: 1, 5: 4, 6: 5, 7: 5, 8: 6, 9: 8, 10: 9}  # the row each is read over
ROW1 = [88.0, 90.0, 93.0]  # row 1's held-out perplexity per seed: the seeds differ
# (claim id, part name) -> (the ratio its margin reads, the per-seed ratio that gives margin
# m), by hand from each rule
RATIOS = {
    ("ladder.mean_worse_than_nothing", ""): ("held 2/1", lambda m: 2 + m),  # ≥ 2
    # |ratio − 1| ≤ 0.05: positions help a little (the side where they hurt: HURT)
    ("ladder.positions_barely_help", ""): ("held 3/2", lambda m: 1 - (0.05 - m)),
    ("ladder.residual_mean_no_better", ""): ("held 4/1", lambda m: 0.95 + m),  # ≥ 0.95
    ("ladder.head_beats_mean", ""): ("held 5/4", lambda m: 0.90 - m),  # ≤ 0.90
    ("ladder.four_heads_beat_one", ""): ("held 6/5", lambda m: 1 - m),  # < 1
    ("ladder.replacing_worse", ""): ("held 7/5", lambda m: 1 + m),  # > 1
    ("ladder.mlp_and_norm_help", "MLP"): ("held 8/6", lambda m: 1 - m),
    ("ladder.mlp_and_norm_help", "LayerNorm"): ("held 9/8", lambda m: 1 - m),
    ("ladder.two_blocks_overfit", "train"): ("train 10/9", lambda m: 1 - m),
    ("ladder.two_blocks_overfit", "held-out"): ("held 10/9", lambda m: 1 + m),
}
HURT = ("held 3/2", lambda m: 1 + (0.05 - m))  # |ratio − 1| reads both sides


def _spread_record(knob: str = "", ratio: list[float] | None = None,
                   small: bool = False) -> dict:
    """Three seeds, every ratio giving ``held`` margins except ``knob``, set to ``ratio``
    per seed. ``small``: the 10/9 ratios are the small-data pair's, and the ladder's own
    row 10 over row 9 says the opposite (``not held`` margins), which the pair overrides."""
    ratios = {k: [f(m) for m in margins("held", U)] for k, f in RATIOS.values()}
    if knob:
        ratios[knob] = ratio or []
    pair = {k: ratios[k] for k in ("train 10/9", "held 10/9")}
    if small:
        for part in ("train", "held-out"):
            k, f = RATIOS[("ladder.two_blocks_overfit", part)]
            ratios[k] = [f(m) for m in margins("not held", U)]
    held = {1: ROW1}
    for row, above in PARENT.items():  # parents first
        held[row] = [p * r for p, r in zip(held[above], ratios[f"held {row}/{above}"],
                                           strict=True)]
    train = {row: [0.9 * p for p in ps] for row, ps in held.items()}
    train[10] = [p * r for p, r in zip(train[9], ratios["train 10/9"], strict=True)]
    rec = _seeds_record(held, train)
    if small:
        held9, train9 = [150.0, 160.0, 145.0], [40.0, 42.0, 39.0]
        rec["overfit"] = {"train_tokens": 1000, "steps": 10, "rows": [
            {"row": 9, "name": "row 9", "params": 1, "held_ppl": held9, "train_ppl": train9},
            {"row": 10, "name": "row 10", "params": 1,
             "held_ppl": [p * r for p, r in zip(held9, pair["held 10/9"], strict=True)],
             "train_ppl": [p * r for p, r in zip(train9, pair["train 10/9"], strict=True)]}]}
    return rec


def _spread_cases() -> list:
    """Every part on its ratio; positions that hurt; the overfitting parts on the pair."""
    cases = [pytest.param(cid, name, *RATIOS[(cid, name)], False,
                          id=cid.split(".")[1] + (f":{name}" if name else ""))
             for cid, name in RATIOS]
    cases.append(pytest.param("ladder.positions_barely_help", "", *HURT, False,
                              id="positions_barely_help:hurt"))
    cases += [pytest.param("ladder.two_blocks_overfit", name,
                           *RATIOS[("ladder.two_blocks_overfit", name)], True,
                           id=f"two_blocks_overfit:{name}:small data") for name in
              ("train", "held-out")]
    return cases


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("cid", "name", "knob", "ratio", "small"), _spread_cases())
def test_each_part_is_held_not_held_and_inconclusive_as_its_spread_says(cid, name, knob, ratio,
                                                                        small, case):
    wanted = margins(case, U)
    rec = _spread_record(knob, [ratio(m) for m in wanted], small)
    verdicts = by_id(evaluate({"ladder": rec}, ladder.CLAIMS))
    check_case(verdicts[cid], name, case, wanted)
    assert verdicts[cid]["seeds"] == 3
    assert {c for c, v in verdicts.items() if v["status"] != "held"} == \
        (set() if case == "held" else {cid})
