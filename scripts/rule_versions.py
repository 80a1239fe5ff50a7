"""The ledger of the claims' rules: per claim, every version of its rule (``Claim.statement``:
its parts' names and rules with their thresholds, its premises' rules, what its margins are
over) with the statement's SHA-256. Each experiment's folder keeps its own claims' part of it,
``src/attnlab/experiments/NAME/rules.json``; read together they are one ledger.

    .venv/bin/python scripts/rule_versions.py          # append the versions not yet recorded
    .venv/bin/python scripts/rule_versions.py --check  # exit 1 on any problem (the test's)

The ledger is appended to, never rewritten: a claim whose statement changed must carry the
next version (``claim(..., version=n + 1)``) before this script records it; run with the
same version, it refuses and names the claim. ``tests/test_claims_versions.py`` fails when a
claim's statement is not the one recorded under its version, so a rule changed without its
version (or a version raised without recording it) is caught before a verdict is published
under it. Versions 1 are the rules as the signed-margin verdicts first decided them
(6247f23, 2026-12-01, or the claim's own first commit after it).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ROOT / "src" / "attnlab" / "experiments"
ABOUT = ("Every version of the rules of this experiment's claims (attnlab.kit.claims.Claim."
         "statement) and the SHA-256 of each statement; appended by scripts/rule_versions.py, "
         "never rewritten. A verdict records the version that decided it.")

Rule = tuple[str, int, str]  # (claim id, version, statement)


def digest(statement: str) -> str:
    """The SHA-256 of a statement, in hex."""
    return hashlib.sha256(statement.encode("utf-8")).hexdigest()


def current() -> list[Rule]:
    """(id, version, statement) of every claim of every registered experiment."""
    from attnlab.kit import registry

    return [(c.id, c.version, c.statement) for name in registry.EXPERIMENTS
            for c in registry.load(name).claims]


def file_of(claim_id: str, folders: Path = FOLDERS) -> Path:
    """The ledger file that keeps ``claim_id``: its experiment's (the id's first part)."""
    return folders / claim_id.split(".")[0] / "rules.json"


def load(folders: Path = FOLDERS) -> dict[str, Any]:
    """The ledger, every experiment folder's part of it together."""
    claims: dict[str, Any] = {}
    for path in sorted(folders.glob("*/rules.json")):
        claims.update(json.loads(path.read_text(encoding="utf-8"))["claims"])
    return {"claims": claims}


def record(ledger: dict[str, Any], rules: Iterable[Rule]) -> dict[str, Any]:
    """``ledger`` with every rule not recorded yet appended; a ``ValueError`` naming the
    claims whose statement differs from the one recorded under the same version, or whose
    version is not the next one.

    >>> led = record({"claims": {}}, [("x.a", 1, "part: x > 1")])
    >>> record(led, [("x.a", 1, "part: x > 2")])
    Traceback (most recent call last):
    ...
    ValueError: x.a: its rule changed under version 1 (a changed rule needs version 2)
    """
    claims = {cid: list(entries) for cid, entries in ledger.get("claims", {}).items()}
    refused = []
    for cid, version, text in rules:
        entries = claims.setdefault(cid, [])
        known = next((e for e in entries if e["version"] == version), None)
        if known is not None:
            if known["sha256"] != digest(text):
                latest = max(e["version"] for e in entries)
                refused.append(f"{cid}: its rule changed under version {version} (a changed "
                               f"rule needs version {latest + 1})")
            continue
        expected = max((e["version"] for e in entries), default=0) + 1
        if version != expected:
            refused.append(f"{cid}: version {version} is not the next one ({expected})")
            continue
        entries.append({"version": version, "sha256": digest(text), "rule": text})
    if refused:
        raise ValueError("; ".join(refused))
    return {**ledger, "claims": claims}


def problems(ledger: dict[str, Any], rules: Iterable[Rule]) -> list[str]:
    """Why the claims and the ledger disagree (empty: they agree): a claim's version not
    recorded, its statement not the one recorded under its version, a version older than
    the latest recorded; and in the ledger, versions that do not count 1, 2, …, a hash that
    is not its statement's, or one statement under two versions."""
    out = []
    claims = ledger.get("claims", {})
    for cid, version, text in rules:
        entries = claims.get(cid, [])
        known = next((e for e in entries if e["version"] == version), None)
        latest = max((e["version"] for e in entries), default=0)
        if known is None:
            out.append(f"{cid}: rule version {version} is not recorded in its experiment's "
                       "rules.json (run scripts/rule_versions.py)")
        elif known["sha256"] != digest(text):
            out.append(f"{cid}: its rule is not the one recorded as version {version}: a "
                       f"changed rule needs version {latest + 1} (claim(..., "
                       f"version={latest + 1})), then scripts/rule_versions.py")
        elif version < latest:
            out.append(f"{cid}: version {version} is older than the recorded {latest}")
    for cid, entries in claims.items():
        if [e["version"] for e in entries] != list(range(1, len(entries) + 1)):
            out.append(f"{cid}: recorded versions {[e['version'] for e in entries]} do not "
                       "count 1, 2, …")
        for e in entries:
            if e["sha256"] != digest(e["rule"]):
                out.append(f"{cid}: version {e['version']}'s hash is not its statement's")
        if len({e["sha256"] for e in entries}) != len(entries):
            out.append(f"{cid}: one statement recorded under two versions")
    return out


def write(ledger: dict[str, Any], folders: Path = FOLDERS) -> None:
    """Each experiment's claims into its folder's ``rules.json``."""
    files: dict[Path, dict[str, Any]] = {}
    for cid, entries in ledger["claims"].items():
        files.setdefault(file_of(cid, folders), {})[cid] = entries
    for path, claims in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"about": ABOUT, "claims": claims}, indent=1,
                                   ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    rules = current()
    if argv == ["--check"]:
        found = problems(load(), rules)
        print("\n".join(found) or "every claim's rule is the one recorded under its version",
              file=sys.stderr if found else sys.stdout)
        return 1 if found else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        ledger = record(load(), rules)
    except ValueError as err:
        print(f"not recorded: {err}", file=sys.stderr)
        return 1
    write(ledger)
    print(f"experiments' rules.json: {sum(len(v) for v in ledger['claims'].values())} versions of "
          f"{len(ledger['claims'])} claims")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
