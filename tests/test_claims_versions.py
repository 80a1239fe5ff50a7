"""Rule versions: every claim's rule (``Claim.statement``) is the one its experiment's
rules.json records under the claim's version, a changed rule cannot be recorded under its old
version, and every verdict says which version decided it."""

from __future__ import annotations

import dataclasses
import json
import runpy
import subprocess
from pathlib import Path

import pytest

from attnlab.kit import registry
from attnlab.kit.claims import Margins, Part, Premise, claim, decide

ROOT = Path(__file__).resolve().parents[1]
LEDGER = runpy.run_path(str(ROOT / "scripts" / "rule_versions.py"))
digest, record, problems, load, current = (LEDGER[k] for k in
                                           ("digest", "record", "problems", "load", "current"))


def _claims():
    return {c.id: c for name in registry.EXPERIMENTS for c in registry.load(name).claims}


def _rules(claims):
    return [(c.id, c.version, c.statement) for c in claims]


def test_every_claims_rule_is_the_one_recorded_under_its_version():
    assert problems(load(), current()) == []


def test_every_claim_has_a_whole_positive_version():
    for c in _claims().values():
        assert isinstance(c.version, int) and c.version >= 1, c.id


def test_a_rule_changed_without_its_version_fails_and_cannot_be_recorded():
    ledger, claims = load(), _claims()
    c = claims["recurrence.attention_distance_free"]
    part = dataclasses.replace(c.parts[0], rule=c.parts[0].rule.replace("< 0.1", "< 0.2"))
    changed = dataclasses.replace(c, parts=(part,))  # the threshold moved, the version kept
    found = problems(ledger, _rules([changed]))
    assert len(found) == 1 and found[0].startswith("recurrence.attention_distance_free: its "
                                                    "rule is not the one recorded as version 4")
    with pytest.raises(ValueError, match="changed under version 4"):
        record(ledger, _rules([changed]))  # regenerating the ledger refuses it
    bumped = dataclasses.replace(changed, version=5)
    assert problems(ledger, _rules([bumped]))[0].endswith(
        "is not recorded in its experiment's rules.json (run scripts/rule_versions.py)")
    assert problems(record(ledger, _rules([bumped])), _rules([bumped])) == []


@pytest.mark.parametrize("change", ["threshold", "premise", "name", "over", "trained"])
def test_the_statement_is_everything_that_decides_the_verdict(change):
    c = _claims()["recurrence.rnn_falls_to_chance"]
    p0 = c.parts[0]
    other = {
        "threshold": lambda: dataclasses.replace(
            c, parts=(dataclasses.replace(p0, rule=p0.rule.replace("0.1", "0.15")), *c.parts[1:])),
        "premise": lambda: dataclasses.replace(c, premises=()),
        "name": lambda: dataclasses.replace(
            c, parts=(dataclasses.replace(p0, name="drops"), *c.parts[1:])),
        "over": lambda: dataclasses.replace(c, over="rounds"),
        "trained": lambda: dataclasses.replace(c, trained=False),
    }[change]()
    assert other.statement != c.statement
    assert problems(load(), _rules([other])), change


def test_a_version_that_skips_or_goes_back_is_refused():
    ledger = record({"claims": {}}, [("x.a", 1, "part: x > 1\ndecided over seeds")])
    with pytest.raises(ValueError, match="version 3 is not the next one"):
        record(ledger, [("x.a", 3, "part: x > 2\ndecided over seeds")])
    ledger = record(ledger, [("x.a", 2, "part: x > 2\ndecided over seeds")])
    assert problems(ledger, [("x.a", 1, "part: x > 1\ndecided over seeds")]) == [
        "x.a: version 1 is older than the recorded 2"]


def test_a_ledger_entry_rewritten_by_hand_is_caught():
    ledger = json.loads(json.dumps(load()))
    entry = ledger["claims"]["cost.quadratic"][0]
    entry["rule"] += " (edited)"  # its hash no longer its statement's
    assert problems(ledger, []) == ["cost.quadratic: version 1's hash is not its statement's"]
    entry["sha256"] = ledger["claims"]["cost.quadratic"][1]["sha256"]
    entry["rule"] = ledger["claims"]["cost.quadratic"][1]["rule"]
    assert "cost.quadratic: one statement recorded under two versions" in problems(ledger, [])


def test_the_committed_ledger_is_only_appended_to():
    """What HEAD recorded is still recorded, word for word (a rewrite of an old version is
    refused before it is committed); skipped outside a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD", "--",
                                 "src/attnlab/experiments"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git checkout")
    files = [f for f in listed if f.endswith("/rules.json")]
    if not files:
        pytest.skip("no rules.json committed yet")
    now = load()["claims"]
    for name in files:
        head = subprocess.run(["git", "show", f"HEAD:{name}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
        for cid, entries in json.loads(head)["claims"].items():
            assert now.get(cid, [])[:len(entries)] == entries, cid


def test_the_ledger_is_kept_in_each_experiments_folder(tmp_path):
    """Written back, every claim lands in its own experiment's rules.json, and read again the
    ledger is the same."""
    ledger = load()
    LEDGER["write"](ledger, tmp_path)
    assert sorted(p.parent.name for p in tmp_path.glob("*/rules.json")) == sorted(
        {cid.split(".")[0] for cid in ledger["claims"]})
    assert load(tmp_path) == ledger


def test_every_verdict_records_its_version():
    part = Part("x > 0", lambda r: Margins([0.1, 0.2, 0.15]))
    premise = Premise("learned", lambda r: Margins([1.0, 1.0, 1.0]), "never learned")
    assert decide(claim("t.a", "a", "t", part), {"t": {}})["version"] == 1
    assert decide(claim("t.b", "b", "t", part, premises=[premise], version=3),
                  {"t": {}})["version"] == 3
    assert decide(claim("t.c", "c", "t", part, version=2), {})["version"] == 2  # skipped too
