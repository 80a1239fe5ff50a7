"""The extra-seed round: which verdicts call for it, and the suite running it once, through the
runner's cache (tiny real training runs, counted)."""

from __future__ import annotations

import dataclasses
import json
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from attnlab.kit import registry
from attnlab.kit.claims import Margins, Part, Skip, claim
from attnlab.kit.envelope import finished_envelope, identity
from attnlab.kit.extra_seeds import (
    EXTRA_SEEDS,
    check_extra_seeds,
    default_extra_seeds,
    ran_note,
    resolve_extra_seeds,
    rule_text,
    skipped_note,
    triggers,
)
from attnlab.kit.registry import Experiment, seeds_of
from attnlab.nn.model_config import ModelConfig
from attnlab.running.runner import Runner, seeded
from attnlab.suite import Suite, SuiteOutcome, estimate, evaluate_claims, reproduce
from attnlab.train.run_config import DataConfig, RunConfig, TrainConfig

# ---------------------------------------------------------------- the rule on synthetic records

COIN = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0]  # per-seed margins that never clear two SEs
SURE = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0]  # ... that always do


def _margins(values):
    return lambda records: Margins(list(values))


def _raise(records):
    raise KeyError("broken predicate")


def _skip(records):
    raise Skip("cannot apply here")


def _module(name: str, claims: list) -> types.SimpleNamespace:
    return types.SimpleNamespace(claims=claims)


def test_only_an_inconclusive_training_claim_on_three_seeds_calls_for_a_round():
    modules = {
        "a": _module("a", [claim("a.coin", "inconclusive on 3", "a", Part("r", _margins(COIN[:3]))),
                           claim("a.sure", "held", "a", Part("r", _margins(SURE[:3])))]),
        "b": _module("b", [claim("b.sure", "held", "b", Part("r", _margins(SURE[:3]))),
                           claim("b.not", "not held", "b",
                                 Part("r", _margins([-x for x in SURE[:3]]))),
                           claim("b.skip", "skipped", "b", Part("r", _skip)),
                           claim("b.err", "error", "b", Part("r", _raise)),
                           claim("b.once", "untrained", "b", Part("r", _margins([-1.0])),
                                 trained=False),
                           claim("b.missing", "needs c", ("b", "c"), Part("r", _raise))]),
        "c": _module("c", [claim("c.coin2", "inconclusive on 2", "c",
                                 Part("r", _margins(COIN[:2])))]),
    }
    verdicts = evaluate_claims(modules, {"a": {}, "b": {}})  # c has no record: its claims skip
    status = {v["id"]: v["status"] for v in verdicts}
    assert status == {"a.coin": "inconclusive", "a.sure": "held", "b.sure": "held",
                      "b.not": "not held", "b.skip": "skipped", "b.err": "error",
                      "b.once": "not held", "b.missing": "skipped", "c.coin2": "skipped"}
    assert triggers(verdicts, ["a", "b", "c"]) == {"a": ["a.coin"]}  # its experiment only
    assert triggers(verdicts, ["b", "c"]) == {}  # a had its round (or does not train)
    two = evaluate_claims({"c": modules["c"]}, {"c": {}})
    assert [v["status"] for v in two] == ["inconclusive"] and two[0]["seeds"] == 2
    assert triggers(two, ["c"]) == {}  # fewer than 3 seeds: stays inconclusive


def test_notes_say_what_ran_and_why():
    assert ran_note(3, 2, ["x.a", "x.b"])["text"] == \
        "extra round: seeds 3-4 added because x.a, x.b were inconclusive on 3 seeds"
    assert ran_note(3, 1, ["x.a"])["text"] == \
        "extra round: seed 3 added because x.a was inconclusive on 3 seeds"
    assert ran_note(3, 2, ["x.a"])["seeds_added"] == [3, 4]
    assert skipped_note(1, 2)["text"].startswith("no extra round: 1 seed(s), fewer than 3")
    assert skipped_note(3, 0)["text"] == "no extra round: turned off (--extra-seeds 0)"
    assert skipped_note(3, 2)["text"] == \
        "no extra round: no training claim was inconclusive on 3 seeds"
    assert "2 more seed(s)" in rule_text(2) and "turned off" in rule_text(0)
    for bad in (-1, 1001):
        with pytest.raises(ValueError, match=r"--extra-seeds must be a whole number in \[0, 1,"):
            check_extra_seeds(bad)


def test_micro_never_grows_and_a_bigger_plan_retrains_nothing():
    """Every real experiment's micro profile has fewer than 3 seeds (no round there), and its
    plan with more seeds holds every run of the smaller plan (the round reuses them)."""
    runner = Runner(work=Path("unused"), device="cpu")
    for name in registry.EXPERIMENTS:
        mod = registry.load(name)
        micro = mod.settings("micro")
        if seeds_of(micro) is None:
            continue  # trains nothing
        assert seeds_of(micro) < 3
        keys = [{runner.key(runner.resolve(s)) for s in mod.plan(mod.settings("micro", n))}
                for n in (1, 3)]
        if not keys[1]:
            continue  # seeded, but trains in its own analysis (icl_gd): nothing to reuse
        assert keys[0] < keys[1], name


def test_the_estimate_says_it_leaves_the_round_out():
    from attnlab.suite.forecast import Estimate

    est = Estimate("full", 2, "cpu", per_experiment={"x": 60.0}, runs={"x": 3}, wall_s=30.0,
                   extra_seeds=2, seeds={"x": 3})
    assert "(not included: the extra round of 2 seeds" in est.text()
    assert "up to 2/3 more of its training" in est.text()
    assert "not included" in dataclasses.replace(est, runs={}).text()  # nothing pending yet
    assert "it needs at least 3 seeds" in dataclasses.replace(est, seeds={"x": 1}).text()
    assert "--extra-seeds 0" in dataclasses.replace(est, extra_seeds=0).text()


def test_the_estimate_counts_workers_sharing_a_gpu_as_one(monkeypatch, tmp_path):
    import attnlab.running.executors as pool
    import attnlab.suite.forecast as estimate_module
    from attnlab.running.executors import LocalPool

    monkeypatch.setattr(pool, "gpu_count", lambda: 1)
    monkeypatch.setattr(Runner, "resolve_device", lambda self: torch.device("cuda"))
    monkeypatch.setattr(estimate_module, "step_seconds", lambda configs: [0.01] * len(configs))
    runner = Runner(tmp_path, executor=LocalPool(4, "cuda"))
    est = estimate("micro", 3, runner, only=["agreement"])
    assert est.workers == 1 and est.sharing == 3  # 3 pending runs on 4 workers, one GPU
    assert est.wall_s == pytest.approx(sum(est.per_experiment.values()))  # laid on one
    assert "3 workers will share 1 GPU(s); counted as one per GPU" in est.text()
    monkeypatch.setattr(pool, "gpu_count", lambda: 3)
    est = estimate("micro", 3, runner, only=["agreement"])
    assert est.workers == 3 and "share" not in est.text()


# ---------------------------------------------------------------- the suite, end to end

def _tiny(steps: int) -> RunConfig:
    return RunConfig(model=ModelConfig(vocab_size=64, d_model=8, n_ctx=8, n_head=2),
                     train=TrainConfig(steps=steps, batch_size=2, eval_every=0, ckpt_every=0),
                     data=DataConfig(vocab_size=64))


@dataclasses.dataclass(frozen=True)
class Tokens:
    """Token data given directly, as the synthetic languages are."""

    train: np.ndarray = dataclasses.field(default_factory=lambda: np.arange(400) % 64)
    held: np.ndarray = dataclasses.field(default_factory=lambda: np.arange(100) % 64)


@dataclasses.dataclass(frozen=True)
class CoinSettings:
    seeds: int = 3


def fake_experiment(name: str, steps: int, wobbly: bool) -> Experiment:
    """A training experiment of tiny real runs; its claim margins depend on the seeds it has:
    a ``wobbly`` one has a claim that stays inconclusive at any number of seeds."""
    data = Tokens()

    def analyse(settings, results, ctx):
        runs = results.seeds(name)
        return {"seeds": settings.seeds, "runs": [Path(r["run_dir"]).name for r in runs]}

    def per_seed(values):
        return lambda records: Margins(values[:len(records[name]["runs"])])

    def figure(record):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 1.5))
        fig.subplots().plot([0, 1], [1, 2])
        return fig

    claims = [claim(f"{name}.sure", "always clear", name, Part("m > 0", per_seed(SURE)))]
    if wobbly:
        claims.append(claim(f"{name}.coin", "a coin", name, Part("m > 0", per_seed(COIN))))
    return Experiment(
        name=name, title=f"Fake {name}", needs_corpus=False, quick_changes="none",
        profiles={p: CoinSettings() for p in registry.PROFILES},
        plan=lambda s: seeded(name, _tiny(steps), s.seeds, data=data), analyse=analyse,
        table=lambda r: f"| seeds |\n|---:|\n| {r['seeds']} |\n", figure=figure, claims=claims)


def use_fakes(monkeypatch) -> None:
    """Register a wobbly and a steady fake experiment in place of the real ones."""
    fakes = {"wobbly": fake_experiment("wobbly", 2, True),
             "steady": fake_experiment("steady", 3, False)}
    monkeypatch.setattr(registry, "EXPERIMENTS", list(fakes))
    monkeypatch.setattr(registry, "load", lambda name: fakes[name])


def _run(out: Path, work: Path, progress=None, **kw) -> SuiteOutcome:
    """The fakes' suite at quick with the round of 2 (quick's own default is none)."""
    kw.setdefault("extra_seeds", EXTRA_SEEDS)
    return reproduce(Runner(work, "cpu", progress=progress), out, "quick", **kw)


def test_quick_has_no_round_unless_asked_and_says_so(tmp_path, monkeypatch, trained_hashes):
    use_fakes(monkeypatch)
    quick = reproduce(Runner(tmp_path / "work", "cpu"), tmp_path / "out", "quick")
    assert len(trained_hashes) == 6 and quick.extra_round == {}
    assert quick.meta["extra_seeds"] == 0 == default_extra_seeds("quick")
    assert {v["id"]: v["seeds"] for v in quick.verdicts} == \
        {"wobbly.sure": 3, "wobbly.coin": 3, "steady.sure": 3}
    md = (tmp_path / "out" / "report.md").read_text()
    assert rule_text(0, "quick") in md and "`--extra-seeds 2` adds one round" in md
    assert "turned off for this report" not in md
    assert quick.envelopes["wobbly"]["extra_round"]["text"] == \
        "no extra round: none at the quick profile unless asked (--extra-seeds 2); " \
        "wobbly.coin is inconclusive on 3 seeds and would call for one"
    assert quick.envelopes["steady"]["extra_round"]["text"] == \
        "no extra round: none at the quick profile unless asked (--extra-seeds 2)"
    es = reproduce(Runner(tmp_path / "work", "cpu"), tmp_path / "out", "quick", lang="es",
                   report_only=True)
    md = (tmp_path / "out" / "report.md").read_text()
    assert es.meta["extra_seeds"] == 0 and "ninguna en el perfil quick salvo que se pidan" in md
    assert "sin ronda adicional: ninguna en el perfil quick salvo que se pida " \
        "(--extra-seeds 2); wobbly.coin: no concluyente con 3 semillas, pediría una" in md
    assert default_extra_seeds("full") == EXTRA_SEEDS == 2
    assert resolve_extra_seeds(None, "full") == 2 and resolve_extra_seeds(1, "quick") == 1


def test_the_suite_adds_seeds_once_where_a_claim_is_inconclusive(tmp_path, monkeypatch,
                                                                 trained_hashes):
    use_fakes(monkeypatch)
    calls = trained_hashes
    events = []
    first = _run(tmp_path / "out", tmp_path / "work", progress=events.append)
    assert first.ok
    assert len(calls) == 3 + 3 + 2 == len(set(calls))  # seeds 3-4 of wobbly, once each
    env = first.envelopes
    assert env["wobbly"]["seeds"] == 5 and len(env["wobbly"]["record"]["runs"]) == 5
    assert env["wobbly"]["extra_round"]["because"] == ["wobbly.coin"]
    assert env["wobbly"]["planned"]["seeds"] == 3
    assert env["steady"]["seeds"] == 3 and not env["steady"]["extra_round"]["ran"]
    seeds = {v["id"]: (v["status"], v["seeds"]) for v in first.verdicts}
    assert seeds == {"wobbly.sure": ("held", 5), "wobbly.coin": ("inconclusive", 5),
                     "steady.sure": ("held", 3)}  # all of wobbly's claims decided again
    assert first.extra_round == first.extra_round_now == {"wobbly": ["wobbly.coin"]}
    assert [e for e in events if e.get("event") == "extra"][0]["pending"] == 2
    stored = json.loads((tmp_path / "out" / "wobbly" / "result.json").read_text())
    assert stored["extra_round"]["seeds_added"] == [3, 4] and stored["seeds"] == 5
    stored = json.loads((tmp_path / "out" / "steady" / "result.json").read_text())
    assert stored["extra_round"]["text"] == \
        "no extra round: no training claim was inconclusive on 3 seeds"
    md = (tmp_path / "out" / "report.md").read_text()
    assert rule_text(2) in md
    assert "**Seeds:** extra round: seeds 3-4 added because wobbly.coin was inconclusive " \
        "on 3 seeds." in md

    again = _run(tmp_path / "out", tmp_path / "work")  # everything reused, no second round
    assert len(calls) == 8 and again.extra_round_now == {}
    assert all(e["reused"] for e in again.envelopes.values())
    assert again.envelopes["wobbly"]["seeds"] == 5
    assert again.extra_round == {"wobbly": ["wobbly.coin"]}
    assert [v["seeds"] for v in again.verdicts] == [5, 5, 3]

    base = identity("quick", CoinSettings(3))
    assert finished_envelope(tmp_path / "out", "wobbly", base, 2) is not None
    assert finished_envelope(tmp_path / "out", "wobbly", base, 1) is None
    assert finished_envelope(tmp_path / "out", "wobbly",
                             identity("quick", CoinSettings(5)), 2) is None


def test_the_round_grows_the_settings_the_suite_resolved(tmp_path, monkeypatch):
    """Each experiment's settings are resolved once, when the suite is made; the round
    plans from them grown by its seeds (``with_extra_seeds``), so an experiment is planned
    once per round: the wobbly one twice (3 seeds, then 5), the steady one once. Before,
    the round asked for the settings twice more."""
    use_fakes(monkeypatch)
    calls, planned = [], []
    settings = Experiment.settings

    def counted(self, profile, seeds=None):
        calls.append((self.name, profile, seeds))
        return settings(self, profile, seeds)

    def counted_plan(name, plan):
        def plan_it(chosen):
            planned.append((name, chosen.seeds))
            return plan(chosen)
        return plan_it

    fakes = {name: registry.load(name) for name in registry.EXPERIMENTS}
    fakes = {name: dataclasses.replace(exp, plan=counted_plan(name, exp.plan))
             for name, exp in fakes.items()}
    monkeypatch.setattr(registry, "load", lambda name: fakes[name])
    monkeypatch.setattr(Experiment, "settings", counted)
    outcome = _run(tmp_path / "out", tmp_path / "work")
    assert outcome.extra_round_now == {"wobbly": ["wobbly.coin"]}
    assert sorted(call[:2] for call in calls) == [("steady", "quick"), ("wobbly", "quick")]
    assert planned == [("wobbly", 3), ("steady", 3), ("wobbly", 5)]


def test_off_below_three_seeds_and_turned_on_later(tmp_path, monkeypatch, trained_hashes):
    use_fakes(monkeypatch)
    calls = trained_hashes
    off = _run(tmp_path / "out", tmp_path / "work", extra_seeds=0)
    assert len(calls) == 6 and off.extra_round == {}
    assert off.envelopes["wobbly"]["extra_round"]["text"].startswith(
        "no extra round: none at the quick profile unless asked (--extra-seeds 2); wobbly.coin")
    assert rule_text(0, "quick") in (tmp_path / "out" / "report.md").read_text()
    two = _run(tmp_path / "two", tmp_path / "work", seeds=2)  # seeds 0-1: trained already
    assert len(calls) == 6 and two.extra_round == {}
    assert two.envelopes["wobbly"]["extra_round"]["text"].startswith(
        "no extra round: 2 seed(s), fewer than 3")
    on = _run(tmp_path / "out", tmp_path / "work", extra_seeds=1)  # reuses the 3-seed record
    assert on.envelopes["wobbly"]["reused"] is False and on.envelopes["steady"]["reused"]
    assert len(calls) == 7 and on.envelopes["wobbly"]["seeds"] == 4


def test_a_failing_round_fails_its_experiment_only(tmp_path, monkeypatch):
    use_fakes(monkeypatch)
    out = tmp_path / "out"
    first = _run(out, tmp_path / "work", extra_seeds=0)
    experiments = {name: registry.load(name) for name in registry.EXPERIMENTS}
    experiments["wobbly"] = dataclasses.replace(
        experiments["wobbly"], plan=lambda s: (_ for _ in ()).throw(RuntimeError("no plan today")))
    suite = Suite(Runner(tmp_path / "work", "cpu"), out, "quick", None, experiments)
    assert suite.wanted(0) == {}  # both finished: reused, as in a rerun
    due = suite.extra_round(first.verdicts, 2)
    envelopes = suite.envelopes
    assert due == {"wobbly": ["wobbly.coin"]}
    assert envelopes["wobbly"]["status"] == "failed"
    assert envelopes["wobbly"]["reason"] == "extra round: cannot plan: RuntimeError: no plan today"
    assert envelopes["steady"].get("status", "ok") == "ok"
    stored = json.loads((out / "wobbly" / "result.json").read_text())
    assert stored["seeds"] == 3  # the 3-seed record stays: a rerun tries the round again
