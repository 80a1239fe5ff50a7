"""Write the ``claims`` words of each experiment's ``words.json``: every claim's text, part
names and rules in English (from the claims themselves) beside their Spanish words (from the
words as they stand, or ``--spanish FILE``, a Python file defining ``ES``: claim id -> (text,
{part: (name, rule)})).

    .venv/bin/python scripts/claims_catalogue.py [--spanish FILE]

``tests/test_claims_spanish.py`` fails when the English of the catalogue no longer matches the
claims (a claim reworded, added or removed): run this script then and give the new Spanish.
"""

from __future__ import annotations

import argparse
import json
import runpy
from pathlib import Path

from attnlab.kit import registry


def english(name: str | None = None) -> dict[str, str]:
    """Catalogue key -> English text, from the claims of experiment ``name`` (None: every
    experiment of attnlab's own)."""
    out = {}
    for each in registry.EXPERIMENTS if name is None else [name]:
        for c in registry.load(each).claims:
            out[c.id] = c.text
            for p in c.parts:
                if p.name:
                    out[f"{c.id}/{p.name}/name"] = p.name
                out[f"{c.id}/{p.name}/rule"] = p.rule
    return out


def spanish_from(es: dict) -> dict[str, str]:
    out = {}
    for cid, (text, parts) in es.items():
        out[cid] = text
        for part, (name, rule) in parts.items():
            if part:
                out[f"{cid}/{part}/name"] = name
            out[f"{cid}/{part}/rule"] = rule
    return out


def write(name: str, given: dict[str, str]) -> list[str]:
    """Rewrite experiment ``name``'s claims words; the keys left without Spanish."""
    path = registry.words_file(name)
    assert path is not None, name
    words = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    spanish = {k: v.get("es", "") for k, v in words.get("claims", {}).items()}
    spanish.update(given)
    words["claims"] = {k: {"en": en, "es": spanish.get(k, "")}
                       for k, en in english(name).items()}
    path.write_text(json.dumps(words, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [k for k, v in words["claims"].items() if not v["es"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spanish", type=Path, help="a Python file defining ES")
    args = ap.parse_args()
    given = spanish_from(runpy.run_path(str(args.spanish))["ES"]) if args.spanish else {}
    for name in registry.EXPERIMENTS:
        missing = write(name, given)
        print(f"{name}/words.json" + (f": {len(missing)} claims words without Spanish: "
                                      f"{', '.join(missing)}" if missing else ""))


if __name__ == "__main__":
    main()
